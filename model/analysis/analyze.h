/*
 * The analyses of a trace.db and their cache (model/analysis/analyze.c), and the
 * one ranked list of issues they produce (model/analysis/issues.c).
 */
#ifndef GRADEML_ANALYZE_H
#define GRADEML_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis/attrib.h"
#include "model/analysis/gpubreak.h"
#include "model/analysis/imbalance.h"
#include "model/store/store.h"

/* One row of the top-issues list. */
struct issue {
	const char *kind;  /* "bottleneck", "software-bound", "imbalance", "idle-gpu",
			      "copy-bound", "critical-path" (static) */
	const char *cause; /* idle-gpu: idle_cause_name() (model/analysis/idle.h); copy-bound:
			      "pageable" or "copies"; else NULL (static) */
	int64_t phase_id;  /* the phase to look at */
	int64_t impact_ns; /* estimated time the makespan would lose */
	double share;	   /* impact / the duration of its workflow; NAN unknown */
	char *explanation; /* one line for people */
};

/* A phase on a workflow's critical path (model/analysis/critpath.c). */
struct pathrow {
	int64_t root_id; /* the workflow */
	int64_t phase_id;
	int64_t on_path_ns;  /* its time on the path */
	int64_t whatif_ns;   /* the makespan were it twice as fast; -1: structure, not asked */
	int64_t makespan_ns; /* the workflow's, on its path */
	int64_t wait_ns;     /* the path's waiting time (gaps, launches, queues) */
	int64_t bound_id;    /* the what-if's path then waits on it (critpath.h); 0 */
};

struct analysis {
	struct imbalance *imb;
	size_t nimb;
	struct pathrow *path; /* per workflow, its ANALYSIS_PATH_TOP longest phases */
	size_t npath;
	struct issue *issues; /* largest impact first */
	size_t nissues;
	struct attribution attr; /* resource attribution and bottlenecks */
	struct gpubreak gpu;	 /* HTA's GPU breakdowns, default options */
	int cached;		 /* read from trace.db rather than computed */
};

#define ANALYSIS_PATH_TOP 10

/* Computes every analysis from the file. */
int analysis_run(struct store *st, struct analysis *a, char **err);
/* The same with attribution's demand rules given (model/analysis/attrib.h; NULL:
 * the file's meta 'demand_rules'). */
int analysis_run_rules(struct store *st, const char *rules, struct analysis *a, char **err);
/* Checks rules and keeps them as the file's demand rules (meta
 * 'demand_rules'), inside the caller's transaction; "" drops them. */
int analysis_keep_rules(struct store *st, const char *rules, char **err);
/* Replaces the file's cache with a, inside the caller's transaction. */
int analysis_save(struct store *st, const struct analysis *a, char **err);
/* Whether the file's cache (`grademl-tui analyze`) matches its data. */
int analysis_fresh(sqlite3 *db);
/* The cache when it matches the file, else analysis_run. */
int analysis_get(struct store *st, struct analysis *a, char **err);
/* The critical path rows alone (a->path; nothing else filled): the cache's
 * when it matches the file, else each workflow's path computed (the
 * analyses' critical path part, not the rest). */
int analysis_path(struct store *st, struct analysis *a, char **err);
/* The imbalance groups alone (model/analysis/imbalance.h): the cache's when it
 * matches the file, else imbalance_compute (one scan of the phases). */
int analysis_imbalance(struct store *st, struct imbalance **v, size_t *n, char **err);
void analysis_release(struct analysis *a);
/* A phase's name, or "?" when it has none; the caller frees it. */
char *analysis_phase_name(struct store *st, int64_t id);
/* "/workflow/step/.../name" of a phase (for :goto) into *path, NULL when
 * there is no such phase.  0; -1 or PTREE_LOOP (model/store/ptree.h) with *err. */
int analysis_phase_path(struct store *st, int64_t id, char **path, char **err);
/* The path of the part of the workflow (model/analysis/level.h: a step, a
 * rank, a span) that track track_id's node lies under, its nearest, into
 * *path: what names a stream or a rank apart from the others of its kind
 * ("/gpu/ddp/rank 0", where every rank's process reads "python3 (0) GPU
 * 0").  NULL when the track has no node or no part is above it.  0; -1 or
 * PTREE_LOOP with *err. */
int analysis_track_part(struct store *st, int64_t track_id, char **path, char **err);
/* Phase id's device_ns (the union of the device work beneath it, devunion.h)
 * in *ns; 0, or -1 with *err. */
int analysis_phase_device(struct store *st, int64_t id, int64_t *ns, char **err);

/* Builds a->issues from the analyses in a and the GPU breakdowns gpu
 * (model/analysis/issues.c). */
int issues_rank(struct store *st, struct analysis *a, const struct gpubreak *gpu, char **err);

#endif
