/*
 * What the files of the attribution share (model/analysis/attrib.c: the
 * lanes, the sweeps and the run; attrib_load.c: reading trace.db;
 * attrib_fit.c: demands and upsampling; attrib_cache.c: the cache;
 * attrib_rules.c: the user's rules; bottleneck.c: the bounds): one
 * attribution run's state (struct run: the phases, the metrics and their
 * periods, the classes with what their bounds are judged on, each kept
 * phase's accumulated use), and the functions each calls of the others.
 * Internal to them; callers use attrib.h.
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

#define INF INT64_MAX

/* Times (model/util/nstime.h): the sweeps keep INF for "no more events", so
 * every time read from trace.db is held below it (work that ends at the
 * last nanosecond of int64 time loses that nanosecond). */
static inline int64_t attrib_time_of(int64_t t)
{
	return t < INF ? t : INF - 1;
}

struct track {
	int64_t id;
	const char *host;	     /* interned in hosts[], NULL unknown */
	int device;		     /* -1: host side */
	int nest;		     /* phases nest by time (a CPU thread) */
	int thread;		     /* a thread's track, not a host's */
	int cls;		     /* class index, -1 none */
	int stream;		     /* a device track: written after the source's host tracks */
	int work;		     /* a stream of device work (not its annotations) */
	int64_t source, spans, node; /* its source, phases and node phase (0 none) */
	int32_t nodeix;		     /* a stream's: its node phase's index, or -1 */
	int64_t w0, w1;		     /* its node's window; w1 <= w0 when none */
	int64_t busy_end;	     /* sweep two: the latest end of its segments so far */
};

/* The id of a GPU's measurement made of its device work alone (no GPU
 * utilization series beside it): never saved, its demands never fitted. */
#define DEVWORK_ID 0

/* The phase type names per class kind: [0] a host's, [1] a GPU's. */
extern const char *const attrib_type_names[2][NTYPES];

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

/* attrib.c: a failure reading trace.db's what (returns -1); the type of a
 * phase of kind on track t (-1: no work of its own); how many phases of
 * type t a key of active counts holds. */
int attrib_fail(struct run *r, const char *what);
int attrib_type_of(int kind, int leaf, const struct track *t);
int attrib_key_count(uint64_t k, int t);

/* attrib_load.c: step 1, reading trace.db into the run. */
int attrib_load_tracks(struct run *r);
int attrib_load_phases(struct run *r);
int attrib_load_metrics(struct run *r);
int32_t attrib_track_index(const struct run *r, int64_t id);
int32_t attrib_phase_index(const struct phases *p, int64_t id);
/* The class of metrics a name measures, or -1 when not attributed. */
int attrib_res_of_metric(const char *resource, const char *name);
void attrib_devwork_cover(struct run *r);
void attrib_devwork_measure(struct run *r);

/* attrib_fit.c: metric m's demands fitted (dev: a GPU's class; present:
 * the types that ran), or as the cache's fits say; its periods upsampled. */
void attrib_fit_metric(struct run *r, struct metric *m, int dev, const int *present);
void attrib_demands_of(struct metric *m, int dev, const struct attrib_fit *fits, size_t nfits);
void attrib_upsample_metric(struct metric *m);

/* attrib_cache.c: the fits the cache keeps, into a. */
int attrib_load_fits(sqlite3 *db, struct attribution *a);

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
