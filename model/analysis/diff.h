/*
 * The difference of two runs (`grademl-tui diff A.db B.db`, `:diff`): what
 * each trace.db spent on the same names, as HTA's trace diff compares a
 * control and a test run, matched at four levels:
 *
 *   step     profiler steps by name, their numbers merged (ProfilerStep#*);
 *   op       operators and annotations by name path: the names of the
 *            operators and annotations above one, up to its profiler step
 *            (merged as above) when it has one; runtime calls on the way
 *            add nothing;
 *   runtime  runtime calls by name;
 *   kernel   device work (kernels, copies, sets) by name.
 *
 * Counts and totals are over every rank, thread and stream of a file.  The
 * two files are read read-only, one scan of the phases each.  The caller
 * owns the struct and releases it with diff_release; every string in it is
 * owned by it.
 */
#ifndef GRADEML_DIFF_H
#define GRADEML_DIFF_H

#include <stddef.h>
#include <stdint.h>

enum diff_level { DIFF_STEP, DIFF_OP, DIFF_RUNTIME, DIFF_KERNEL, DIFF_NLEVELS };

/* "step", "op", "runtime", "kernel". */
const char *diff_level_name(int level);

/* One name in one run: count 0 when the run has none. */
struct diff_side {
	int64_t count, total_ns;
	int64_t first_id; /* the phase of it with the lowest id; 0 when none */
};

struct diff_row {
	int level;	    /* enum diff_level */
	const char **parts; /* the name path, outermost first */
	size_t nparts;	    /* 1 but at DIFF_OP */
	char *name;	    /* the parts joined with " > " */
	struct diff_side side[2];
};

struct diff_run {
	char *path;
	int64_t makespan_ns; /* from the first workflow's start to the last one's end */
	int64_t workflows;
	struct diff_side level[DIFF_NLEVELS]; /* each level's rows summed */
};

/* Rows by level, then by the absolute difference of the totals, largest
 * first, then by name (bytes). */
struct diff {
	struct diff_run run[2];
	struct diff_row *rows;
	size_t nrows;
	char **names; /* the distinct names the parts point into */
	size_t nnames;
};

/* What diff_compute returns when stop asked it to. */
#define DIFF_STOPPED (-2)

/* Compares trace.db a (run 0) with b (run 1).  stop (NULL: none) is polled
 * from both reading threads, every few thousand phases and while SQLite
 * works (a sort); once it returns non-zero the reads end and the call
 * returns DIFF_STOPPED with *err "stopped", *d left empty.  0; -1 with *err
 * naming the file at fault. */
int diff_compute(const char *a, const char *b, int (*stop)(void *ctx), void *ctx, struct diff *d,
		 char **err);
void diff_release(struct diff *d);

/* The row's difference (run 1 less run 0) and ratio (run 1 over run 0;
 * NAN when run 0 has no time). */
int64_t diff_delta(const struct diff_row *r);
double diff_ratio(const struct diff_row *r);

#endif
