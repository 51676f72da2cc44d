/*
 * The timeline's lanes: a phase's subtree laid out for a Gantt chart.
 * Each track beneath the phase (a CPU thread, a GPU stream) is a lane;
 * a phase is drawn on its own track's lane, on the row of its nesting
 * depth there (0 when its parent is on another track: a kernel sits on
 * row 0 of its stream although it hangs under a CPU launch call).  The
 * containers (workflow, step, rank, process, thread, stream) are lanes,
 * not bars, and only the first LANES_NEST rows of a lane are drawn (the
 * phases nested deeper are kept, within their ancestors' bars).  Over the
 * limit of phases, the deepest host rows are dropped first, their children
 * (the kernels their launch calls started) hung on the nearest ancestor
 * kept; with only row 0 left, the host phases and containers past the
 * limit are left out.  Device work is never left out: it is kept past the
 * limit.  The layout is linear in the phases read, whatever the limit.
 *
 * The subtree is read once (model/store/subtree.h), at most max_spans
 * phases but for device work;
 * each span knows its parent, its children (by start) and its place in a
 * depth-first numbering, so ancestry is two compares.  Each row lists its
 * spans by start and the latest end so far (a thread's nesting puts
 * overlapping spans on different rows, but one stream's kernels may
 * overlap), so a time seeks by bisection; and
 * its busy time as disjoint intervals with their running sum, so the busy
 * time of any window (a column's shade) is two bisections.
 */
#ifndef GRADEML_LANES_H
#define GRADEML_LANES_H

#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct model;
struct mtrack;

/* Rows of nesting a lane draws. */
#define LANES_NEST 4
/* Phases a timeline reads below its phase by default. */
#define LANES_MAX_SPANS (1u << 20)

struct lane_span {
	int64_t id, start, end;
	int64_t name_id;      /* its name in trace.db's strings */
	int32_t parent;	      /* its parent's index, -1 under the root */
	int32_t row;	      /* its row in lanes.row, -1 when not drawn */
	int32_t lane;	      /* its lane, -1 for a container */
	uint32_t kids, nkids; /* its children: lanes.kids[kids .. kids + nkids), by start */
	uint32_t pre, last;   /* depth-first: its number, and its last descendant's */
	int kind;	      /* enum phase_kind */
};

struct lane {
	int64_t track;		/* 0: phases with no (known) track */
	const struct mtrack *t; /* NULL when unknown */
	uint32_t row, nrows;	/* its rows in lanes.row */
};

struct lane_row {
	uint32_t lane;
	int nest;	 /* 0 .. LANES_NEST - 1 */
	uint32_t *at;	 /* its spans, by start */
	int64_t *maxend; /* maxend[j]: the latest end of at[0 .. j] */
	size_t n;
	/* The row's busy time: its spans' union as disjoint intervals
	 * [u0[j], u1[j]) by start, and ucum[j] the length of those before j
	 * (ucum[nu]: all of it), so the busy time of any window is two
	 * bisections. */
	int64_t *u0, *u1;
	uint64_t *ucum;
	size_t nu;
};

struct lanes {
	struct lane_span *s; /* parents before children */
	size_t n;
	uint32_t *kids;	  /* children lists; the root's: kids[0 .. nroot) */
	uint32_t *by_pre; /* span by depth-first number: a subtree is a range */
	size_t nroot;
	struct lane *lane; /* in display order: by the track's sort index, then id */
	size_t nlanes;
	struct lane_row *row; /* each lane's rows in turn */
	size_t nrows;
	int64_t t0, t1;	  /* the root's window widened to cover every span */
	int64_t left_out; /* phases below the root not kept (over max_spans): n + left_out
			     are all of them */
};

/* Lays out the subtree of phase root_id, read through db (NULL: the
 * model's connection; another thread passes its own); 0, or -1 with *err,
 * also when *cancel (NULL: none) is set while it reads. */
int lanes_build(struct model *m, sqlite3 *db, int64_t root_id, size_t max_spans, atomic_int *cancel,
		struct lanes *out, char **err);
void lanes_release(struct lanes *l);
/* Whether span a is span b or one of its ancestors. */
int lanes_covers(const struct lanes *l, uint32_t a, uint32_t b);
/* On row r: the first span that ends at or after t (row->n when none). */
size_t lanes_seek(const struct lanes *l, size_t r, int64_t t);
/* The time row r was busy within [t0, t1) (ns): its spans' union there,
 * overlaps counted once. */
uint64_t lanes_busy(const struct lanes *l, size_t r, int64_t t0, int64_t t1);
/* Column c of w (0 <= c <= w) over the window [t0, t1]: the time its
 * column starts at (column w: t1), t0 + (t1 - t0) * c / w rounded down. */
int64_t lanes_column_start(int64_t t0, int64_t t1, int c, int w);
/* share[c] for c in [0, w): the part of column c's time, [start of c,
 * start of c + 1), that row r was busy, 0 to 1.  A window of no length
 * has a share of 1 where a span covers t0, else 0. */
void lanes_shade(const struct lanes *l, size_t r, int64_t t0, int64_t t1, int w, double *share);
/* What a window of the lanes holds, as Perfetto's area selection sums it:
 * each lane's busy time there (its top row's union), and by name the time
 * of the phases on the lanes there (those nested past the rows drawn
 * too), each clipped to the window, with how many there were. */
struct lanes_sum_name {
	int64_t name_id;
	uint64_t ns, count;
	int device; /* the first such phase is device work */
};
struct lanes_sum {
	int64_t t0, t1;
	uint64_t *lane_busy;	     /* per lane, in lanes order */
	struct lanes_sum_name *name; /* by time, most first (then by name id) */
	size_t nname;
};

/* Sums the window [t0, t1) into out (lanes_sum_release frees it): a seek
 * per row and a pass over the spans in the window (and those nested below
 * the last row's there), whatever lie outside. */
void lanes_sum(const struct lanes *l, int64_t t0, int64_t t1, struct lanes_sum *out);
void lanes_sum_release(struct lanes_sum *s);
/* Whether kind is device work (kernel, memcpy, memset). */
int lanes_is_device(int kind);

#endif
