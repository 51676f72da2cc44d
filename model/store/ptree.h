/*
 * Walking up the phase tree of a file that may be broken.  trace.db is an
 * ordinary SQLite file: an edit with sqlite3, or a fault, may leave parent
 * links that loop (phase 2 under 3, 3 under 2), and a walk that follows
 * them until it finds a root would never end.  Every walk up a file's
 * parent links checks each step here (Brent's cycle detection: a walk
 * that loops is stopped within about twice its length, one comparison a
 * step, nothing stored); a walk over parent links already in memory checks
 * them once with ptree_loop.  A loop is an error that names the file and
 * the phase, and functions that meet one return PTREE_LOOP, so that the
 * explorer can tell a broken file from a failure of one view.
 */
#ifndef GRADEML_PTREE_H
#define GRADEML_PTREE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* What a function returns when the file's parent links loop (an error:
 * below 0, like the -1 of other failures). */
#define PTREE_LOOP (-2)

/* One walk: ptree_walk_init with its first id, then ptree_walk_loops with
 * each id it steps to. */
struct ptree_walk {
	int64_t mark; /* where the walk stood at the last power of two */
	uint64_t power, steps;
};

static inline void ptree_walk_init(struct ptree_walk *w, int64_t first)
{
	w->mark = first;
	w->power = 1;
	w->steps = 0;
}

/* 1 when the walk, stepping to next, has come back to a phase it met:
 * the links loop.  A walk that does not loop is never stopped. */
static inline int ptree_walk_loops(struct ptree_walk *w, int64_t next)
{
	if (next == w->mark)
		return 1;
	if (++w->steps == w->power) {
		w->mark = next;
		w->power *= 2;
		w->steps = 0;
	}
	return 0;
}

/* "PATH: phase ID's parents form a loop" (the caller frees it). */
char *ptree_loop_error(const char *path, int64_t id);

/* The chain from phase id up to its root in db (the file path, for
 * errors): (*chain)[0] = id, the last a phase without a parent or whose
 * parent is not in the file; *n = 0 when id is not.  Returns 0, -1 on a
 * SQLite error or PTREE_LOOP, with *err.  The caller frees *chain. */
int ptree_up(sqlite3 *db, const char *path, int64_t id, int64_t **chain, size_t *n, char **err);

/* Parent links in memory: parent[i] the index of i's parent, -1 for none.
 * Returns an index on a loop, or -1 when every chain ends; O(n). */
int64_t ptree_loop(const int32_t *parent, size_t n);

#endif
