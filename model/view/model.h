/*
 * The in-memory execution model that views walk: a tree of phases loaded
 * lazily from trace.db.  Opening reads only the workflows; a node's children
 * are read (through the phases_parent index) the first time they are asked
 * for, so opening a trace.db of millions of phases is instant.
 *
 * The model owns every node and every name string; pointers stay valid
 * until model_free.  Names are interned: equal names share one string.
 */
#ifndef GRADEML_MODEL_H
#define GRADEML_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* Times and durations as the model hands them out are clamped to these
 * bounds (a hostile trace.db may hold anything), so that any start plus
 * duration, and the difference of any two such, fits in an int64. */
#define MODEL_TIME_MIN (INT64_MIN / 4)
#define MODEL_TIME_MAX (INT64_MAX / 4)

struct mnode {
	int64_t id;
	struct mnode *parent; /* NULL for the root */
	int kind;	      /* enum phase_kind */
	const char *name;     /* never NULL */
	const char *category; /* NULL when none */
	int64_t start_ns, dur_ns, self_ns, device_ns;
	int64_t child_count; /* as stored; children[] holds them once loaded */
	int64_t track_id, source_id;
	int depth;
	int loaded;
	struct mnode **children; /* by start time, the profiler's bookkeeping last */
	size_t nchildren;
};

/* SQL over a tracks row: a GPU stream's device (and that of the lane of
 * its GPU annotations).  Kineto gives GPU work the device index as its pid
 * ("pid": 0, "tid": "stream 7"); any other track, or a pid that is not a
 * small number, has none (-1). */
#define TRACK_DEVICE_SQL                                                                           \
	"(CASE WHEN kind IN ('stream', 'annotation') AND pid GLOB '[0-9]*'"                        \
	" AND pid NOT GLOB '*[^0-9]*'"                                                             \
	" AND length(pid) <= 4 THEN CAST(pid AS INTEGER) ELSE -1 END)"

/* Where phases ran: a thread, a GPU stream, a process.  All tracks are
 * loaded at open (there are few). */
struct mtrack {
	int64_t id;
	const char *kind; /* "thread", "gpu-stream", ... */
	const char *name; /* never NULL */
	const char *host; /* NULL when unknown */
	int64_t rank;	  /* -1 when unknown */
	int64_t sort_index;
	int device; /* a GPU stream's device index; -1 for other tracks */
};

/* What the details pane shows beyond the node itself. */
struct medge {
	int kind;      /* EDGE_FLOW, EDGE_LAUNCH, EDGE_FWDBWD */
	int outgoing;  /* 1: this phase -> other; 0: other -> this phase */
	int64_t other; /* the phase at the other end */
	char *name;    /* its name */
};

struct mdetail {
	char *attrs;  /* JSON text or NULL */
	char *source; /* the file it came from, or NULL */
	struct medge *edges;
	size_t nedges;
	int64_t more_edges; /* edges not loaded beyond the first few */
};

/* One metric series (a row of the metrics table). */
struct mseries {
	int64_t id;
	const char *name, *host, *resource, *unit; /* host, resource, unit may be NULL */
	double capacity;			   /* 0 when unknown */
	const char *value_kind;			   /* "mean", "instant", "counter" */
	int64_t samples;
	int64_t t0, t1;		    /* the first sample, and where the last stops holding */
	int64_t period_ns, hold_ns; /* how long its samples hold (model/store/sample.h) */
	int64_t covered_ns;	    /* of [t0, t1), the time a value holds: t1 - t0 less the gaps */
	double min, mean, max;	    /* mean is time-weighted over covered_ns */
};

struct model;

int model_open(const char *path, struct model **out, char **err);
void model_free(struct model *m);
struct store *model_store(struct model *m);
/* The root: a virtual node whose children are the workflows, already loaded. */
struct mnode *model_root(struct model *m);
/* Phase id as a node of its own, outside the tree (no parent, no
 * children): 1, 0 when there is none, -1 with *err. */
int model_phase(struct model *m, int64_t id, struct mnode *out, char **err);
/* The order of the profiler's bookkeeping (store_is_bookkeeping) among
 * siblings, whatever else they are sorted by: after the others.  Negative
 * when a goes first, 0 when both or neither are bookkeeping. */
int model_cmp_bookkeeping(const struct mnode *a, const struct mnode *b);
/* Loads n's children if not yet loaded. */
int model_children(struct model *m, struct mnode *n, char **err);
/* The track with this id, or NULL. */
const struct mtrack *model_track(struct model *m, int64_t id);
/* Fills d for n; release with model_detail_release. */
int model_detail(struct model *m, const struct mnode *n, struct mdetail *d, char **err);
void model_detail_release(struct mdetail *d);
/* Every metric, with its statistics (read on first call). */
int model_series(struct model *m, const struct mseries **out, size_t *n, char **err);
/* Whether ref names s as the query language names a metric
 * (man grademl-query(7)): its name or "resource.name", either with "@host";
 * *pinned (may be NULL) is 1 when ref names a host. */
int mseries_named(const struct mseries *s, const char *ref, int *pinned);
/* The step-function value of a series averaged over n equal buckets of
 * [t0, t1): out[i] is the time-weighted mean of the time in bucket i that
 * a sample holds (model/store/sample.h), or NAN where none does (before the
 * first sample, after the last, in a gap). */
int model_series_buckets(struct model *m, const struct mseries *s, int64_t t0, int64_t t1,
			 double *out, int n, char **err);
/* A series over [t0, t1): the time-weighted mean of the values that hold
 * there, the highest of them, and how long a value holds there (*covered,
 * may be NULL); mean and max NAN where none does. */
int model_series_window(struct model *m, const struct mseries *s, int64_t t0, int64_t t1,
			double *mean, double *max, int64_t *covered, char **err);
/* A series over [t0, t1), as the metrics screen shows it for a phase: the
 * lowest, time-weighted mean and highest of the values that hold there,
 * how many samples those are, and how long a value holds there; NAN and 0
 * where none does. */
struct mwindow {
	double min, mean, max;
	int64_t samples, covered_ns;
};
int model_series_stats(struct model *m, const struct mseries *s, int64_t t0, int64_t t1,
		       struct mwindow *out, char **err);
/* The scale a sparkline of s is drawn on: 0..capacity when it has one
 * (%, cores, link speed), else its own min..max over the trace. */
void mseries_scale(const struct mseries *s, double *lo, double *hi);
/* That scale as text, its ends as text_metric writes them: "0..100%",
 * "31..78 C", "0..150.8 GB". */
void mseries_scale_text(const struct mseries *s, char *buf, size_t n);
/* For the model's own modules: s[0..n) as a string owned by the model
 * (NULL when s is NULL). */
const char *model_intern(struct model *m, const unsigned char *s, int n);
/* For the model's own modules: column i of q's row as text owned by the
 * model (NULL when it is NULL; model/store/col.h). */
struct sqlite3_stmt;
const char *model_intern_col(struct model *m, struct sqlite3_stmt *q, int i);
/* For the model's own modules: a series that no metric of the file is but
 * a figure derived from it (a GPU's traced device work), owned by the
 * model, the same one for the same arguments; no id, no samples. */
const struct mseries *model_derived(struct model *m, const char *name, const char *host,
				    const char *resource, double capacity);
/* For the model's own modules: where series are cached. */
struct mseries **model_series_slot(struct model *m, size_t **n, int **loaded);
/* Total number of phases in the file (one COUNT query: a scan, 70 ms at
 * 5.6 M phases). */
int64_t model_phase_count(struct model *m);
/* The largest phase id, at least the number of phases (ids are rowids):
 * one B-tree descent, for size thresholds. */
int64_t model_phase_bound(struct model *m);

#endif
