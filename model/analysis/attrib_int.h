/*
 * What model/analysis/attrib.c and model/analysis/bottleneck.c share: one
 * attribution run's state (struct run: the phases, the metrics and their
 * periods, the classes with what their bounds are judged on, each kept
 * phase's accumulated use), and the few functions each calls of the other.
 * Internal to the two; callers use attrib.h.
 */
#ifndef GRADEML_ATTRIB_INT_H
#define GRADEML_ATTRIB_INT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "model/analysis/attrib.h"
#include "model/util/spans.h"

struct track;

#define NTYPES 5 /* phase types of a class (attrib.h) */

/* The phases, as parallel arrays in id order. */
struct phases {
	size_t n;
	int64_t *id, *start, *end;
	int32_t *parent, *track; /* indexes; -1 none */
	uint8_t *kind, *leaf;
	int32_t *keep; /* row of a kept phase, or -1 */
	int32_t *up;   /* the nearest kept phase, itself or above, or -1 */
	int32_t *src;  /* its source (phases.source_id; 0 none, or past int32), NULL in
			  attrib_series */
};

/* What a metric is to a class: attributed (and judged), or only judged. */
enum { ROLE_ATTRIB, ROLE_CORE, ROLE_IOWAIT };

enum { OK_HOLDS = 1, OK_TRACED = 2 };

struct metric {
	int64_t id;
	int res, cls, role;
	double cap;
	char *value_kind;
	/* periods [t[j], t[j+1]) of value v[j]; ok[j] 0 where no sample holds,
	 * else OK_HOLDS, with OK_TRACED where the value is device work's */
	int64_t *t;
	double *v;
	uint8_t *ok;
	size_t ns;
	size_t j; /* the period [t[j], t[j+1]) now, ns when before the first */
	int exact[NTYPES];
	double d[NTYPES];
	/* per period: the keys seen and their time, then the upsampled value */
	size_t *off; /* ns + 1 offsets into the entries */
	uint64_t *key;
	double *len, *u;
	size_t nent, aent;
};

/* What was measured of a class over time (bottlenecks): segments
 * [t[i], t[i+1]) with the bounds saturated (bit b < ATTRIB_NBOUND) and
 * whether a judged metric holds a value (bit JUDGE_DATA); pre[b][i] the
 * time with bit b before t[i]. */
#define JUDGE_DATA    ATTRIB_NBOUND
#define JUDGE_TRACED  (ATTRIB_NBOUND + 1) /* a trace's device work measures the GPU */
#define JUDGE_DEVBUSY (ATTRIB_NBOUND + 2) /* ... and some of it runs */
#define JUDGE_NBITS   (ATTRIB_NBOUND + 3)
struct judge {
	int64_t *t;
	uint16_t *bits;
	size_t n;
	int64_t *pre[JUDGE_NBITS];
	/* the software-bound time before t[i] for a set of judged bounds */
	struct {
		unsigned set;
		int64_t *pre;
	} sw[8];
	int nsw;
};

/* A GPU class's device work per source, when several sources give some at
 * once: ranks sharing a GPU (the same host and device id, their windows
 * meeting).  Each source's window (the span of its phases) and its own work
 * as a metric's periods: 1 while some runs, else 0 (OK_TRACED), over that
 * window; no value outside it. */
struct own {
	int64_t source;
	struct span win;
	struct metric m;
};

struct klass {
	const char *host;
	int device;
	int *metrics; /* the attributed ones */
	size_t nmetrics;
	int *judged; /* every metric its bounds are judged on */
	size_t njudged;
	int ncpu;	       /* per-CPU series */
	unsigned mask[NTYPES]; /* resources each type demands */
	struct span *cov;      /* a GPU's: the windows of the traces of its device work */
	size_t ncov;
	struct own *own; /* a shared GPU's: each source's device work (nown >= 2), by source */
	size_t nown;
	struct judge jd;
};

struct acc {
	double use[ATTRIB_NRES];
	double busy[2];
	int64_t cover[2];  /* the time its work covers, host and device */
	int64_t cover_end; /* the last end of its work so far in class cover_cls */
	unsigned mask;
	int32_t cls, last; /* its work's first class and the last one charged; -1 */
	int32_t cover_cls;
};

/* A kept phase whose work ran in more than one class: one pair each. */
struct kcls {
	int32_t keep, cls;
};

struct run {
	sqlite3 *db;
	const char *path;
	char **err;
	struct phases p;
	struct track *tracks;
	size_t ntracks;
	char **hosts;
	size_t nhosts;
	struct metric *m;
	size_t nm;
	struct klass *k;
	size_t nk;
	struct acc *acc;
	size_t nkeep;
	struct kcls *multi;
	size_t nmulti, amulti;
	int32_t *chain; /* charge(): the kept phases charged for a segment */
	size_t achain;
	int judge; /* load what bottlenecks are judged on too */
	struct attribution *out;
	size_t fit_alloc;
	const struct attrib_rules *rules; /* the user's demand rules, or NULL */
	/* attrib_series: the tracks whose host counts (NULL: all), and the
	 * samples wanted: those of the periods that [t0, t1) touches */
	const uint8_t *track_ok;
	int64_t t0, t1;
};

/* What a phase is judged on and its result (struct attrib_row's). */
struct bottleneck_verdict {
	int64_t bneck[ATTRIB_NBOUND], data, free_, traced, devbusy;
	int shared, own; /* struct attrib_row's shared_gpu and own_gpu */
};

/* The first of n elements, stride bytes apart, each starting with its
 * int64 key in ascending order, whose key is >= key. */
size_t attrib_lower_bound(const void *base, size_t n, size_t stride, int64_t key);

/* Periods over the windows cov[0..ncov) from the union of device work
 * w[0..n) (sorted, merged): 1 while some runs, else 0 (OK_TRACED), no value
 * between windows. */
void attrib_devwork_periods(const struct span *cov, size_t ncov, const struct span *w, size_t n,
			    struct metric *out);

/* Each shared GPU class's device work per source (struct own), dev[i] the
 * class phase i's device work measures (-1: none); nothing without the
 * phases' sources. */
void bottleneck_own(struct run *r, const int32_t *dev);
/* Class k's judged metrics as segments with their bounds (struct judge). */
void bottleneck_build(struct run *r, struct klass *k);
void bottleneck_release(struct judge *jd);
void bottleneck_own_release(struct klass *k);
/* Phase i (kept as row k of acc a) judged over its window. */
void bottleneck_judge(struct run *r, size_t i, const struct acc *a, struct bottleneck_verdict *v);

#endif
