/*
 * What every metric importer (nvidia-smi, sysstat, Prometheus) does the same
 * way: one sources row per file, one metrics row per series (found again by
 * host, resource and name), samples, and diagnostics counted by code with
 * the first example kept.  The caller owns the struct; msource_end writes
 * the counts and the diagnostics and releases what it holds.
 */
#ifndef GRADEML_MSOURCE_H
#define GRADEML_MSOURCE_H

#include <stdint.h>

#include "importers/importer.h"
#include "model/util/strmap.h"

#define MSOURCE_MAX_DIAGS 16

struct msource {
	struct store *st;
	int64_t source_id;
	const char *path;
	const char *host; /* --host, or NULL */
	int64_t samples, dropped;
	struct strmap metrics;			    /* "host\x1fresource\x1fname" -> metric id */
	struct sample_row pend[STORE_SAMPLE_BATCH]; /* samples not yet written */
	size_t npend;
	struct {
		const char *code, *message;
		int64_t count;
		char *example;
	} diag[MSOURCE_MAX_DIAGS];
	int ndiag;
};

/* Adds the sources row of in, format and anchor as named. */
int msource_begin(struct msource *s, struct store *st, struct input *in, const char *format,
		  const char *anchor, const struct import_opts *o, char **err);
/* The same for a source that is no file (a live pull): src as given (its
 * path and host must outlive s). */
int msource_begin_row(struct msource *s, struct store *st, const struct source_row *src,
		      char **err);
/* The id of the series (host may be NULL: --host, else unknown), made on
 * first use with unit, value kind ("instant", "mean", "counter") and
 * capacity (0: unknown). */
int64_t msource_metric(struct msource *s, const char *host, const char *resource, const char *name,
		       const char *unit, const char *value_kind, double capacity, char **err);
int msource_sample(struct msource *s, int64_t metric, int64_t t_ns, double v, char **err);
/* Counts one repair or drop under code (a static string); the first
 * example (any bytes, kept as given) is stored with the message.  dropped:
 * whether a sample was lost. */
void msource_diag(struct msource *s, const char *code, const char *message, const char *example,
		  int dropped);
/* Writes the diagnostics and the source's counts; releases s. */
int msource_end(struct msource *s, char **err);
/* Releases s after a failure (the transaction is rolled back anyway). */
void msource_release(struct msource *s);

#endif
