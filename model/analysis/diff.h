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
 * Counts and totals are over every rank, thread and stream of a file.  A
 * step row also has its steps' median and the first step's excess over it
 * (its warm-up), and every other row the same of its time per step, so
 * that a change is not read off totals that a slow first step or a
 * different number of steps distort.
 * A name only in A and one only in B that play the same role (diff_role:
 * the same level, the same path above them, the same name once the
 * implementation's class names and a trailing qualifier are set aside) are
 * one renamed row, as DataLoader's single-process and multi-process
 * iterators, or a pageable and a pinned host-to-device copy, are.  The
 * two files are read read-only, one scan of the phases each.  A row names
 * its name path by index: the paths form a tree over the distinct names,
 * so a path costs one entry whatever its depth and the length of its
 * names, and only diff_row_parts and diff_row_name spell it out, cut to
 * DIFF_NAME_MAX bytes.  The caller owns the struct and releases it with
 * diff_release; every string in it is owned by it.
 */
#ifndef GRADEML_DIFF_H
#define GRADEML_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "model/util/sbuf.h"

enum diff_level { DIFF_STEP, DIFF_OP, DIFF_RUNTIME, DIFF_KERNEL, DIFF_NLEVELS };

/* "step", "op", "runtime", "kernel". */
const char *diff_level_name(int level);

/* A deeper name path keeps its innermost names. */
#define DIFF_MAX_PARTS 256
/* The most bytes of a name path diff_row_parts spells out, its names and
 * the separators between them: a longer one keeps its innermost names
 * that fit, the innermost one always.  Real paths are a few hundred bytes
 * (their longest names are C++ signatures of kernels, alone in their path);
 * the bound keeps a row's text from repeating a deep path's long names. */
#define DIFF_NAME_MAX 1024
/* A name longer than this in trace.db (the longest an import stores is
 * 64 KiB and "…"; a hand-made file may hold more) is cut to its first
 * 64 KiB and "…", as the import cuts it. */
#define DIFF_NAME_LONG (65536 + 3)

/* One name in one run: count 0 when the run has none. */
struct diff_side {
	int64_t count, total_ns;
	int64_t first_id; /* the phase of it with the lowest id; 0 when none */
};

/* A name path: the path it extends (0: none) and its innermost name.
 * Path 0 is the empty one, of no name (an empty name is a name); a path's
 * parent has a lower index. */
struct diff_path {
	uint32_t parent, name; /* name: an index into diff.names */
	uint32_t depth;	       /* how many names: 1 but at DIFF_OP; 0 for path 0 */
};

/* A row per step in one run.  A step row (DIFF_STEP): its name's steps,
 * all 0 where it has none.  Any other: its time in each of the run's steps
 * (of every name), 0 in those without it; only its instances beneath a
 * step count.  n is 0 where the run has no steps. */
struct diff_steps {
	int64_t n;	   /* how many steps */
	int64_t median_ns; /* their durations' or times' (diff_median) */
	int64_t first_ns;  /* the first step's: the one with the lowest id */
	/* first_ns less median_ns where the first step took longer and there
	 * are at least 3 steps (with fewer, no median tells warm-up apart) */
	int64_t warmup_ns;
};

struct diff_row {
	int level;     /* enum diff_level */
	uint32_t path; /* an index into diff.paths: A's when renamed */
	/* B's path when this row pairs a name only in A with its renamed
	 * counterpart only in B (diff_role); 0: the row is path's in both */
	uint32_t renamed;
	struct diff_side side[2];
	struct diff_steps steps[2];
};

struct diff_run {
	char *path;
	int64_t makespan_ns; /* from the first workflow's start to the last one's end */
	int64_t workflows;
	int64_t steps;			      /* profiler steps, of every name */
	struct diff_side level[DIFF_NLEVELS]; /* each level's rows summed */
};

/* Rows by level, then, where both runs have steps, by the absolute
 * difference of the medians per step (diff_median_delta), largest first,
 * then by the absolute difference of the totals, largest first, then by
 * name: the bytes of the name path joined with " > " (its
 * innermost DIFF_MAX_PARTS names, not cut to DIFF_NAME_MAX). */
struct diff {
	struct diff_run run[2];
	struct diff_row *rows;
	size_t nrows;
	struct diff_path *paths; /* the rows' name paths and those above them */
	size_t npaths;
	char **names; /* the distinct names */
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

/* The row's name path, outermost first, into parts (room for
 * DIFF_MAX_PARTS; they point into d->names): its innermost names whose
 * lengths and separators (" > ") add up to at most DIFF_NAME_MAX bytes, the
 * innermost one always, at most DIFF_MAX_PARTS of them.  Returns how many;
 * *left_out (NULL: not wanted) says how many names above them were left
 * out. */
size_t diff_row_parts(const struct diff *d, const struct diff_row *r, const char **parts,
		      size_t *left_out);
/* diff_row_parts of B's path of a renamed row (0 without one). */
size_t diff_renamed_parts(const struct diff *d, const struct diff_row *r, const char **parts,
			  size_t *left_out);
/* Appends the row's name: diff_row_parts's names joined with " > ", after
 * "… > " when names were left out, and for a renamed row " -> " and B's
 * innermost name.  With max (0: none), at most max
 * bytes and a cut's "…": a longer name keeps its end after "…",
 * from the first whole UTF-8 character there. */
void diff_row_name(const struct diff *d, const struct diff_row *r, size_t max, struct sbuf *out);

/* The row's difference (run 1 less run 0) and ratio (run 1 over run 0;
 * NAN when run 0 has no time). */
int64_t diff_delta(const struct diff_row *r);
/* The difference of the medians per step (B less A); 0 unless both runs
 * have steps (a step row: both have steps of its name). */
int64_t diff_median_delta(const struct diff_row *r);
double diff_ratio(const struct diff_row *r);

/* The median of v[0..n), which it sorts (0 when n is 0): the middle value, or for
 * an even n the mean of the two middle ones, rounded down. */
int64_t diff_median(int64_t *v, size_t n);

/* A name's role, into out (reset first): the name less a trailing
 * parenthesised qualifier after a space ("Memcpy HtoD (Pinned -> Device)"
 * -> "Memcpy HtoD") and with each class name before a '.' and a member
 * (a word whose first letter after any '_' is a capital:
 * "#_SingleProcessDataLoaderIter.__next__" -> "#*.__next__") as "*".
 * Two names of one role are the same name to the pairing of renamed rows. */
void diff_role(const char *name, struct sbuf *out);

#endif
