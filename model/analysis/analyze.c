/*
 * The analyses of one trace.db (resource attribution and bottlenecks,
 * imbalance, the GPU breakdowns, each workflow's critical path, the issues
 * they raise), run together, and their cache in the file (tables
 * attribution, attribution_fit, imbalance, imbalance_meets, imbalance_ranks,
 * issues, critical_path and the
 * gpu_breakdown tables of model/analysis/gpucache.c).  The critical path, then
 * imbalance, run on the caller's connection while a thread with a
 * read-only connection of its own runs the GPU breakdowns, then
 * attribution (whose peak of memory so comes after the critical path's
 * graph is freed): on two cores the analyses take the longer of the two.  `grademl-tui analyze`
 * writes the cache; report and the explorer read it while it matches the file, else compute the
 * analyses in memory. The cache matches while meta 'analysis_of' equals the file's signature: the
 * schema version and the largest phase, source and metric ids, which every import raises.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/analyze.h"
#include "model/analysis/critpath.h"
#include "model/analysis/gpucache.h"
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/store/ptree.h"
#include "model/util/sbuf.h"
#include "model/util/timing.h"
#include "model/util/xalloc.h"

/* What the cached figures mean, raised when an analysis changes them (2:
 * bottlenecks of the phase's window, judged on measured values; 3: a GPU
 * measured by its traced device work; 4: a software-bound saving over the
 * time its work covers, not its threads' and streams' time added up; 5:
 * a what-if for every piece of work among a path's longest phases, not the
 * first alone; 6: HTA's kernel types of 0.6.1, with OTHER, and its DMA as
 * copies; 7: a rank's phases on a shared GPU judged on its own device
 * work, and the sharing noted; 8: the GPU breakdown's top kernels over all
 * the device work, as the summaries). */
#define ANALYSIS_VERSION 8

/* "v<schema> a<analysis> p<max phase id> s<max source id> m<max metric
 * id>" and, when the file has demand rules, " r<rules>"; or NULL.  A cache
 * written by an older schema's or analysis' version does not match, as it
 * may lack what a later one caches (v4: the GPU breakdowns) or mean
 * something else, nor one under other rules. */
static char *signature(sqlite3 *db)
{
	sqlite3_stmt *q;
	char *sig = NULL;
	if (sqlite3_prepare_v2(db,
			       "SELECT 'v' || ?1 || ' a' || ?2"
			       " || ' p' || coalesce((SELECT max(id) FROM phases), 0)"
			       " || ' s' || coalesce((SELECT max(id) FROM sources), 0)"
			       " || ' m' || coalesce((SELECT max(id) FROM metrics), 0)"
			       " || coalesce(' r' || (SELECT value FROM meta"
			       " WHERE key = 'demand_rules'), '')",
			       -1, &q, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int(q, 1, STORE_SCHEMA_VERSION);
	sqlite3_bind_int(q, 2, ANALYSIS_VERSION);
	if (sqlite3_step(q) == SQLITE_ROW)
		sig = col_strdup(q, 0);
	sqlite3_finalize(q);
	return sig;
}

/* Each workflow's critical path: its longest phases, and the makespan were
 * each of them that is work twice as fast (the explorer's :path shows it). */
static int paths(struct store *st, struct analysis *a, char **err)
{
	sqlite3_stmt *q;
	int64_t *roots = NULL;
	size_t n = 0, alloc = 0, palloc = 0;
	if (sqlite3_prepare_v2(
		store_db(st),
		"SELECT id FROM phases WHERE parent_id IS NULL AND dur_ns > 0 ORDER BY id", -1, &q,
		NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read phases: %s", store_path(st),
				 sqlite3_errmsg(store_db(st)));
		return -1;
	}
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(roots, n + 1, alloc);
		roots[n++] = col_int(q, 0);
	}
	sqlite3_finalize(q);
	for (size_t r = 0; r < n; r++) {
		struct critpath cp;
		int rc = critpath_analyze(st, roots[r], 2.0, ANALYSIS_PATH_TOP, &cp, err);
		if (rc < 0) {
			free(roots);
			return rc;
		}
		for (size_t i = 0; i < cp.nphases && i < ANALYSIS_PATH_TOP; i++) {
			XGROW(a->path, a->npath + 1, palloc);
			a->path[a->npath++] = (struct pathrow){roots[r],
							       cp.phases[i].phase_id,
							       cp.phases[i].on_path_ns,
							       cp.phases[i].whatif_ns,
							       cp.makespan_ns,
							       cp.wait_ns,
							       cp.phases[i].bound_id};
		}
		critpath_release(&cp);
	}
	free(roots);
	return 0;
}

/* The analyses that run beside the critical path and imbalance, on a
 * connection of their own: the GPU breakdowns and attribution. */
struct side_job {
	const char *path;
	const char *rules; /* attribution's demand rules; NULL: the file's */
	struct analysis *a;
	char *err;
	int rc;
};

static void *side_thread(void *arg)
{
	struct side_job *j = arg;
	struct store *st = NULL;
	j->rc = -1;
	if (store_open(j->path, STORE_READ, &st, &j->err) < 0)
		return NULL;
	sqlite3_exec(store_db(st), "PRAGMA cache_size = -16384", NULL, NULL, NULL);
	/* attribution last: its peak then comes after the critical path's
	 * graph is freed */
	if (gpubreak_load(st, NULL, &j->a->gpu, &j->err) < 0)
		goto out;
	timing_mark("gpu breakdown (beside)");
	int rc = attrib_compute_rules(store_db(st), j->path, j->rules, &j->a->attr, &j->err);
	if (rc < 0) {
		j->rc = rc;
		goto out;
	}
	timing_mark("attribution (beside)");
	j->rc = 0;
out:
	store_close(st);
	return NULL;
}

int analysis_run(struct store *st, struct analysis *a, char **err)
{
	return analysis_run_rules(st, NULL, a, err);
}

int analysis_run_rules(struct store *st, const char *rules, struct analysis *a, char **err)
{
	struct side_job job = {store_path(st), rules, a, NULL, 0};
	pthread_t th;
	memset(a, 0, sizeof(*a));
	timing_mark(NULL);
	int threaded = pthread_create(&th, NULL, side_thread, &job) == 0;
	if (!threaded)
		side_thread(&job);
	int rc = paths(st, a, err);
	timing_mark("critical path");
	if (rc == 0)
		rc = imbalance_compute(st, &a->imb, &a->nimb, err);
	timing_mark("imbalance");
	if (threaded)
		pthread_join(th, NULL);
	timing_mark("waiting for the others");
	if (rc == 0 && job.rc < 0) {
		*err = job.err;
		job.err = NULL;
		rc = job.rc;
	}
	free(job.err);
	if (rc == 0)
		rc = issues_rank(st, a, &a->gpu, err);
	timing_mark("issues");
	if (rc < 0)
		analysis_release(a);
	return rc;
}

int analysis_keep_rules(struct store *st, const char *rules, char **err)
{
	struct attrib_rules r;
	if (attrib_rules_parse(rules, &r, err) < 0)
		return -1;
	attrib_rules_release(&r);
	sqlite3_stmt *q;
	sqlite3 *db = store_db(st);
	int rc =
	    sqlite3_prepare_v2(db,
			       *rules ? "INSERT OR REPLACE INTO meta VALUES ('demand_rules', ?1)"
				      : "DELETE FROM meta WHERE key = 'demand_rules'",
			       -1, &q, NULL);
	if (rc == SQLITE_OK) {
		if (*rules)
			sqlite3_bind_text(q, 1, rules, -1, SQLITE_STATIC);
		rc = sqlite3_step(q);
		sqlite3_finalize(q);
	}
	if (rc != SQLITE_DONE) {
		*err = xasprintf("%s: cannot keep the demand rules: %s", store_path(st),
				 sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static int step_done(sqlite3 *db, sqlite3_stmt *s, char **err)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc == SQLITE_DONE)
		return 0;
	*err = xasprintf("cannot write the analyses: %s", sqlite3_errmsg(db));
	return -1;
}

int analysis_save(struct store *st, const struct analysis *a, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *imb = NULL, *imm = NULL, *imr = NULL, *iss = NULL, *meta = NULL, *cp = NULL;
	char *sig = signature(db);
	int rc = -1;
	if (!sig) {
		*err = xasprintf("%s: cannot read meta and the largest ids: %s", store_path(st),
				 sqlite3_errmsg(db));
		goto out;
	}
	if (store_exec(
		st,
		"DELETE FROM imbalance; DELETE FROM imbalance_meets;"
		" DELETE FROM imbalance_ranks; DELETE FROM issues; DELETE FROM critical_path",
		err) < 0)
		goto out;
	if (sqlite3_prepare_v2(
		db,
		"INSERT INTO imbalance(id, parent_id, kind, label, members, ideal_ns,"
		" actual_ns, impact_ns, straggler_id, straggler, slow)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
		-1, &imb, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO imbalance_meets(imbalance_id, meets, collectives,"
			       " unmatched, last_at, wait_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			       -1, &imm, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT INTO imbalance_ranks(imbalance_id, seq, rank_id, name,"
			       " last_at, wait_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			       -1, &imr, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		db,
		"INSERT INTO issues(id, kind, phase_id, impact_ns, share, explanation, cause)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		-1, &iss, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "INSERT OR REPLACE INTO meta VALUES ('analysis_of', ?1),"
			       " ('analyzed_at', strftime('%Y-%m-%dT%H:%M:%SZ'))",
			       -1, &meta, NULL) != SQLITE_OK) {
		*err = xasprintf("cannot write the analyses: %s", sqlite3_errmsg(db));
		goto out;
	}
	for (size_t i = 0; i < a->nimb; i++) {
		const struct imbalance *g = &a->imb[i];
		sqlite3_bind_int64(imb, 1, (int64_t)i + 1);
		sqlite3_bind_int64(imb, 2, g->parent_id);
		sqlite3_bind_text(imb, 3, g->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(imb, 4, g->label, -1, SQLITE_STATIC);
		sqlite3_bind_int64(imb, 5, g->members);
		sqlite3_bind_int64(imb, 6, g->ideal_ns);
		sqlite3_bind_int64(imb, 7, g->actual_ns);
		sqlite3_bind_int64(imb, 8, g->impact_ns);
		sqlite3_bind_int64(imb, 9, g->straggler_id);
		sqlite3_bind_text(imb, 10, g->straggler, -1, SQLITE_STATIC);
		sqlite3_bind_int64(imb, 11, g->slow);
		if (step_done(db, imb, err) < 0)
			goto out;
		if (g->meets) {
			sqlite3_bind_int64(imm, 1, (int64_t)i + 1);
			sqlite3_bind_text(imm, 2, g->meets, -1, SQLITE_STATIC);
			sqlite3_bind_int64(imm, 3, g->collectives);
			sqlite3_bind_int64(imm, 4, g->unmatched);
			sqlite3_bind_int64(imm, 5, g->last);
			sqlite3_bind_int64(imm, 6, g->wait_ns);
			if (step_done(db, imm, err) < 0)
				goto out;
		}
		for (size_t k = 0; k < g->nranks; k++) {
			const struct imbalance_rank *r = &g->ranks[k];
			sqlite3_bind_int64(imr, 1, (int64_t)i + 1);
			sqlite3_bind_int64(imr, 2, (int64_t)k);
			sqlite3_bind_int64(imr, 3, r->rank_id);
			sqlite3_bind_text(imr, 4, r->name, -1, SQLITE_STATIC);
			sqlite3_bind_int64(imr, 5, r->last);
			sqlite3_bind_int64(imr, 6, r->wait_ns);
			if (step_done(db, imr, err) < 0)
				goto out;
		}
	}
	for (size_t i = 0; i < a->nissues; i++) {
		const struct issue *u = &a->issues[i];
		sqlite3_bind_int64(iss, 1, (int64_t)i + 1);
		sqlite3_bind_text(iss, 2, u->kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(iss, 3, u->phase_id);
		sqlite3_bind_int64(iss, 4, u->impact_ns);
		if (isnan(u->share))
			sqlite3_bind_null(iss, 5);
		else
			sqlite3_bind_double(iss, 5, u->share);
		sqlite3_bind_text(iss, 6, u->explanation, -1, SQLITE_STATIC);
		if (u->cause)
			sqlite3_bind_text(iss, 7, u->cause, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(iss, 7);
		if (step_done(db, iss, err) < 0)
			goto out;
	}
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO critical_path(root_id, phase_id, on_path_ns, whatif_ns,"
			       " makespan_ns, wait_ns, bound_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
			       " nullif(?7, 0))",
			       -1, &cp, NULL) != SQLITE_OK) {
		*err = xasprintf("cannot write the analyses: %s", sqlite3_errmsg(db));
		goto out;
	}
	for (size_t i = 0; i < a->npath; i++) {
		const struct pathrow *p = &a->path[i];
		sqlite3_bind_int64(cp, 1, p->root_id);
		sqlite3_bind_int64(cp, 2, p->phase_id);
		sqlite3_bind_int64(cp, 3, p->on_path_ns);
		if (p->whatif_ns < 0)
			sqlite3_bind_null(cp, 4);
		else
			sqlite3_bind_int64(cp, 4, p->whatif_ns);
		sqlite3_bind_int64(cp, 5, p->makespan_ns);
		sqlite3_bind_int64(cp, 6, p->wait_ns);
		sqlite3_bind_int64(cp, 7, p->bound_id);
		if (step_done(db, cp, err) < 0)
			goto out;
	}
	if (attrib_save(db, &a->attr, err) < 0 || gpucache_save(db, &a->gpu, err) < 0)
		goto out;
	sqlite3_bind_text(meta, 1, sig, -1, SQLITE_STATIC);
	rc = step_done(db, meta, err);
out:
	sqlite3_finalize(cp);
	sqlite3_finalize(imb);
	sqlite3_finalize(imm);
	sqlite3_finalize(imr);
	sqlite3_finalize(iss);
	sqlite3_finalize(meta);
	free(sig);
	return rc;
}

/* Interns the kinds read back, so struct issue and imbalance keep static
 * kind strings. */
static const char *known_kind(const char *k)
{
	static const char *const kinds[] = {"imbalance",  "idle-gpu",	    "critical-path",
					    "ranks",	  "tasks",	    "iteration",
					    "bottleneck", "software-bound", "copy-bound"};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (k && !strcmp(k, kinds[i]))
			return kinds[i];
	return "other";
}

/* The same for an issue's cause: NULL when none. */
static const char *known_cause(const char *c)
{
	static const char *const copy_causes[] = {"pageable", "copies"};
	int i = idle_cause_of(c);
	if (i >= 0)
		return idle_cause_name(i);
	for (size_t k = 0; k < sizeof(copy_causes) / sizeof(copy_causes[0]); k++)
		if (c && !strcmp(c, copy_causes[k]))
			return copy_causes[k];
	return c ? "other" : NULL;
}

/* imbalance.meets read back: "device", "host" or NULL. */
static const char *known_meets(const char *s)
{
	if (!s)
		return NULL;
	return !strcmp(s, "device") ? "device" : "host";
}

/* Reads imbalance_ranks into the groups v[i], whose cache id is i + 1. */
static int load_ranks(sqlite3 *db, struct imbalance *v, size_t n)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db,
			       "SELECT imbalance_id, rank_id, name, last_at, wait_ns"
			       " FROM imbalance_ranks ORDER BY imbalance_id, seq",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	size_t alloc = 0;
	int64_t cur = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t id = col_int(q, 0);
		if (id < 1 || (size_t)id > n)
			continue;
		struct imbalance *g = &v[id - 1];
		if (id != cur)
			alloc = g->nranks;
		cur = id;
		XGROW(g->ranks, g->nranks + 1, alloc);
		g->ranks[g->nranks++] = (struct imbalance_rank){col_int(q, 1), col_strdup(q, 2),
								col_int(q, 3), col_dur(q, 4)};
	}
	return sqlite3_finalize(q) == SQLITE_OK ? 0 : -1;
}

/* Reads the cache's imbalance groups (imbalance, imbalance_meets,
 * imbalance_ranks: group i has id i + 1) into *v, *n. */
static int load_imbalance(sqlite3 *db, struct imbalance **v, size_t *n)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT i.parent_id, i.kind, i.label, i.members, i.ideal_ns,"
			       " i.actual_ns, i.impact_ns, i.straggler_id, i.straggler, i.slow,"
			       " m.meets, m.collectives, m.unmatched, m.last_at, m.wait_ns"
			       " FROM imbalance i LEFT JOIN imbalance_meets m"
			       " ON m.imbalance_id = i.id ORDER BY i.id",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(*v, *n + 1, alloc);
		(*v)[(*n)++] = (struct imbalance){.parent_id = col_int(q, 0),
						  .kind = known_kind(col_text_or_null(q, 1)),
						  .label = col_strdup(q, 2),
						  .members = col_int(q, 3),
						  .ideal_ns = col_dur(q, 4),
						  .actual_ns = col_dur(q, 5),
						  .impact_ns = col_dur(q, 6),
						  .straggler_id = col_int(q, 7),
						  .straggler = col_strdup(q, 8),
						  .slow = col_int(q, 9),
						  .meets = known_meets(col_text_or_null(q, 10)),
						  .collectives = col_int(q, 11),
						  .unmatched = col_int(q, 12),
						  .last = col_int(q, 13),
						  .wait_ns = col_dur(q, 14)};
	}
	if (sqlite3_finalize(q) != SQLITE_OK)
		return -1;
	return load_ranks(db, *v, *n);
}

int analysis_fresh(sqlite3 *db)
{
	sqlite3_stmt *q;
	char *sig = signature(db);
	int fresh = 0;
	if (sig && sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'analysis_of'", -1,
				      &q, NULL) == SQLITE_OK) {
		fresh = sqlite3_step(q) == SQLITE_ROW && !strcmp(col_text(q, 0), sig);
		sqlite3_finalize(q);
	}
	free(sig);
	return fresh;
}

/* Reads the cache; 1 when it matches the file, 0 when it does not. */
/* The cache's critical_path rows into a->path; -1 on a SQLite error. */
static int load_path(sqlite3 *db, struct analysis *a)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT root_id, phase_id, on_path_ns, coalesce(whatif_ns, -1),"
			       " makespan_ns, coalesce(wait_ns, 0), coalesce(bound_id, 0)"
			       " FROM critical_path ORDER BY rowid",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(a->path, a->npath + 1, alloc);
		a->path[a->npath++] = (struct pathrow){
		    col_int(q, 0), col_int(q, 1),
		    col_dur(q, 2), col_int(q, 3) < 0 ? -1 : col_dur(q, 3), /* -1: none */
		    col_dur(q, 4), col_dur(q, 5),
		    col_int(q, 6)};
	}
	return sqlite3_finalize(q) == SQLITE_OK ? 0 : -1;
}

int analysis_path(struct store *st, struct analysis *a, char **err)
{
	memset(a, 0, sizeof(*a));
	if (!analysis_fresh(store_db(st))) {
		int rc = paths(st, a, err);
		if (rc < 0)
			analysis_release(a);
		return rc;
	}
	if (load_path(store_db(st), a) == 0) {
		a->cached = 1;
		return 0;
	}
	*err = xasprintf("%s: cannot read the analyses: %s", store_path(st),
			 sqlite3_errmsg(store_db(st)));
	analysis_release(a);
	return -1;
}

static int load(struct store *st, struct analysis *a, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q;
	memset(a, 0, sizeof(*a));
	if (!analysis_fresh(db))
		return 0;
	size_t alloc = 0;
	if (load_imbalance(db, &a->imb, &a->nimb) < 0)
		goto fail;
	if (sqlite3_prepare_v2(db,
			       "SELECT kind, phase_id, impact_ns, share, explanation, cause"
			       " FROM issues ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(a->issues, a->nissues + 1, alloc);
		a->issues[a->nissues++] =
		    (struct issue){.kind = known_kind(col_text_or_null(q, 0)),
				   .phase_id = col_int(q, 1),
				   .impact_ns = col_dur(q, 2),
				   .share = col_null(q, 3) ? NAN : col_real(q, 3),
				   .explanation = col_strdup(q, 4),
				   .cause = known_cause(col_text_or_null(q, 5))};
	}
	sqlite3_finalize(q);
	if (load_path(db, a) < 0)
		goto fail;
	if (attrib_load(db, &a->attr, err) < 0 || gpucache_load(db, &a->gpu, err) < 0) {
		analysis_release(a);
		return -1;
	}
	a->cached = 1;
	return 1;
fail:
	*err = xasprintf("%s: cannot read the analyses: %s", store_path(st), sqlite3_errmsg(db));
	analysis_release(a);
	return -1;
}

int analysis_imbalance(struct store *st, struct imbalance **v, size_t *n, char **err)
{
	*v = NULL;
	*n = 0;
	if (!analysis_fresh(store_db(st)))
		return imbalance_compute(st, v, n, err);
	if (load_imbalance(store_db(st), v, n) == 0)
		return 0;
	*err = xasprintf("%s: cannot read the analyses: %s", store_path(st),
			 sqlite3_errmsg(store_db(st)));
	imbalance_release(*v, *n);
	*v = NULL;
	*n = 0;
	return -1;
}

int analysis_get(struct store *st, struct analysis *a, char **err)
{
	int rc = load(st, a, err);
	if (rc < 0)
		return -1;
	return rc ? 0 : analysis_run(st, a, err);
}

void analysis_release(struct analysis *a)
{
	imbalance_release(a->imb, a->nimb);
	for (size_t i = 0; i < a->nissues; i++)
		free(a->issues[i].explanation);
	free(a->issues);
	free(a->path);
	attrib_release(&a->attr);
	gpubreak_release(&a->gpu);
	memset(a, 0, sizeof(*a));
}

int analysis_phase_device(struct store *st, int64_t id, int64_t *ns, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	*ns = 0;
	int rc = sqlite3_prepare_v2(db, "SELECT device_ns FROM phases WHERE id = ?1", -1, &q, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, id);
		rc = sqlite3_step(q);
		*ns = rc == SQLITE_ROW ? col_int(q, 0) : 0;
	}
	sqlite3_finalize(q);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	*err = xasprintf("%s: cannot read phases: %s", store_path(st), sqlite3_errmsg(db));
	return -1;
}

int analysis_phase_path(struct store *st, int64_t id, char **path, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	int64_t *chain = NULL;
	size_t n = 0;
	*path = NULL;
	int rc = ptree_up(db, store_path(st), id, &chain, &n, err);
	if (rc < 0 || !n)
		goto out;
	if (sqlite3_prepare_v2(db,
			       "SELECT n.text FROM phases p JOIN strings n ON n.id = p.name_id"
			       " WHERE p.id = ?1",
			       -1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read phases: %s", store_path(st), sqlite3_errmsg(db));
		rc = -1;
		goto out;
	}
	struct sbuf sb;
	sbuf_init(&sb);
	for (size_t k = n; k-- > 0;) {
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, chain[k]);
		const char *name = sqlite3_step(q) == SQLITE_ROW ? col_text_or_null(q, 0) : NULL;
		sbuf_addf(&sb, "/%s", name ? name : "?");
	}
	*path = sbuf_detach(&sb);
out:
	sqlite3_finalize(q);
	free(chain);
	return rc;
}

int analysis_track_part(struct store *st, int64_t track_id, char **path, char **err)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	int64_t *chain = NULL, node = 0;
	size_t n = 0;
	int rc = -1;
	*path = NULL;
	if (sqlite3_prepare_v2(db, "SELECT phase_id FROM tracks WHERE id = ?1", -1, &q, NULL) !=
	    SQLITE_OK) {
		*err = xasprintf("%s: cannot read tracks: %s", store_path(st), sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_bind_int64(q, 1, track_id);
	if (sqlite3_step(q) == SQLITE_ROW)
		node = col_int(q, 0);
	rc = node > 0 ? ptree_up(db, store_path(st), node, &chain, &n, err) : 0;
	/* chain[0] is the node, chain[n - 1] the root */
	for (size_t k = 0; rc == 0 && k < n; k++) {
		int level = level_of_phase(db, chain[k], NULL);
		if (level == LEVEL_PART || level == LEVEL_WORKFLOW) {
			rc = analysis_phase_path(st, chain[k], path, err);
			break;
		}
	}
out:
	sqlite3_finalize(q);
	free(chain);
	return rc;
}

char *analysis_phase_name(struct store *st, int64_t id)
{
	return store_phase_name(st, id, 0);
}
