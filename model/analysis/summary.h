/*
 * The figures `grademl-tui report` prints, computed from trace.db: the
 * sources and their diagnostics, the operators that took the most total and
 * self time, and each device stream's busy fraction.  The caller owns the
 * struct and releases it with summary_release.
 */
#ifndef GRADEML_SUMMARY_H
#define GRADEML_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "model/view/model.h"

struct summary_diag {
	char *code, *message, *example;
	int64_t count;
};

struct summary_source {
	int64_t id;
	char *path, *format, *compression, *anchor, *host;
	int rank; /* -1: none */
	int64_t size_bytes, phases, events, samples, dropped;
	struct summary_diag *diags;
	size_t ndiags;
};

struct summary_op {
	char *name;
	int64_t count, total_ns, self_ns;
};

/* busy_ns: the union of the stream's device work; window_ns: the stream's
 * own window, its first work's start to its last work's end (the window
 * the GPU breakdown's idle time is a share of); source_window_ns: its
 * source's window; items: its device work (kernels, copies, sets). */
struct summary_stream {
	char *process, *stream;
	int rank;
	int64_t busy_ns, window_ns, source_window_ns, items, track_id;
};

struct summary {
	struct summary_source *sources;
	size_t nsources;
	struct summary_op *by_total, *by_self;
	size_t nby_total, nby_self;
	struct summary_stream *streams;
	size_t nstreams;
};

int summary_load(struct model *m, struct summary *s, int top_n, char **err);
void summary_release(struct summary *s);

#endif
