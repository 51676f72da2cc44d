/*
 * Hand-built trace.dbs for the tests of what reads the phase tree (the
 * timeline and its lanes): a writer that opens a file with one source,
 * adds tracks and phases with their times, and commits.  Header-only, like
 * testdir.h; include it after cmocka.h.
 */
#ifndef GRADEML_PHASEFX_H
#define GRADEML_PHASEFX_H

#include <string.h>

#include "model/store/store.h"

struct writer {
	struct store *st;
	int64_t src;
};

/* Opens path for writing, in a transaction, with one Chrome source. */
static inline void writer_open(struct writer *w, const char *path)
{
	char *err = NULL;
	memset(w, 0, sizeof(*w));
	if (store_open(path, STORE_WRITE, &w->st, &err) < 0 || store_begin(w->st, &err) < 0)
		fail_msg("cannot open %s: %s", path, err ? err : "?");
	struct source_row sr = {
	    .path = "t.json", .format = "chrome", .anchor = "epoch", .rank = -1};
	w->src = store_add_source(w->st, &sr, &err);
	assert_true(w->src > 0);
}

static inline void writer_close(struct writer *w)
{
	char *err = NULL;
	if (store_commit(w->st, &err) < 0)
		fail_msg("commit: %s", err ? err : "?");
	store_close(w->st);
}

/* A phase whose self time is its duration; depth as the importers count it. */
static inline int64_t add_phase(struct writer *w, int64_t parent, int kind, const char *name,
				int64_t track, int64_t start, int64_t dur, int64_t nchild,
				int depth)
{
	char *err = NULL;
	int64_t name_id = store_intern(w->st, name, strlen(name), &err);
	assert_true(name_id > 0);
	struct phase_row p = {.id = store_reserve_phase_id(w->st),
			      .parent_id = parent,
			      .kind = kind,
			      .name_id = name_id,
			      .track_id = track,
			      .source_id = w->src,
			      .start_ns = start,
			      .dur_ns = dur,
			      .self_ns = dur,
			      .child_count = nchild,
			      .depth = depth};
	if (store_add_phase(w->st, &p, &err) < 0)
		fail_msg("store_add_phase(%s): %s", name, err ? err : "?");
	return p.id;
}

/* A track of process "1" named (and with the thread id) name. */
static inline int64_t add_track(struct writer *w, const char *kind, const char *name, int64_t sort)
{
	char *err = NULL;
	struct track_row tr = {.source_id = w->src,
			       .kind = kind,
			       .pid = "1",
			       .tid = name,
			       .name = name,
			       .rank = -1,
			       .sort_index = sort};
	int64_t id = store_add_track(w->st, &tr, &err);
	assert_true(id > 0);
	return id;
}

#endif
