/*
 * A phase's subtree, read once, parents before their children.  Two ways
 * to read it: depth first through the parent index (a seek per phase with
 * children: fine for thousands), and one pass over the phases table in id
 * order from the root (a phase is in the subtree when its parent is; an
 * array by id holds each parent's value), which reads millions a second
 * but crosses the phases after the root that are not in its subtree.  A
 * walk starts depth first and, past a number of rows, starts over with the
 * pass; the caller's restart function hears of it.
 */
#ifndef GRADEML_SUBTREE_H
#define GRADEML_SUBTREE_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/* The deepest level below the root a walk reads (deeper is an error). */
#define SUBTREE_MAX_DEPTH 1024
/* Rows a walk reads depth first (a seek each) before the pass takes over:
 * a small subtree is read at once, a large one in a pass. */
#define SUBTREE_DFS_ROWS 20000
/* What a visit returns to end the walk at once (subtree_walk returns 2). */
#define SUBTREE_STOP INT32_MIN

/* Which columns a walk reads beyond id, kind, dur_ns and child_count. */
enum subtree_cols {
	SUBTREE_SUMS,	     /* name_id, self_ns, device_ns */
	SUBTREE_TIMES,	     /* start_ns, track_id */
	SUBTREE_TIMES_NAMES, /* start_ns, track_id, name_id */
};

/* One phase; the columns not read are 0. */
struct subtree_row {
	int64_t id, name_id, track_id;
	int kind;  /* enum phase_kind */
	int depth; /* levels below the root: 0 for the root */
	int64_t start_ns, dur_ns, self_ns, device_ns, child_count;
};

struct subtree_visitor {
	/* Called once per phase with what it returned for the phase's parent
	 * (-1 for the root); returns what the phase's children get (above
	 * INT32_MIN + 1), or SUBTREE_STOP. */
	int32_t (*visit)(void *arg, const struct subtree_row *r, int32_t parent);
	/* Every phase visited so far will be visited again. */
	void (*restart)(void *arg);
	void *arg;
	enum subtree_cols cols;
};

/* Walks the subtree of phase root_id in db (the file at path, for
 * messages), depth first for at most dfs_rows
 * rows (SIZE_MAX: all), then in one id-order pass; the levels above a
 * profiler step (whole traces) go straight to the pass unless dfs_rows is
 * SIZE_MAX.  Root 0 is the virtual parent of the phases that have none,
 * read in one pass.  0 done, 2 stopped by a visit, -1 with *err (no phase
 * root_id is an error too). */
int subtree_walk(sqlite3 *db, const char *path, int64_t root_id, size_t dfs_rows,
		 const struct subtree_visitor *v, char **err);

#endif
