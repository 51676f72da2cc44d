/*
 * The GPU breakdowns' cache (see gpucache.h for the tables).  Saving is one
 * INSERT per row; loading reads gpu_breakdown in the order of struct
 * gpubreak (source, then rank) and each rank's mixes, kernels and streams
 * by their key.  The column order follows the enums of gpubreak.h (COMM,
 * COMP, MEM, OTHER; host, kernel, other wait), so the loops below bind and read
 * them by index.
 */
#include <stdlib.h>
#include <string.h>

#include "model/analysis/gpucache.h"
#include "model/store/col.h"
#include "model/util/xalloc.h"

enum { RANKS, MIX, KERNELS, STREAMS, CAUSES, COPIES, NSTMTS };

static const char *const insert_sql[NSTMTS] = {
    [RANKS] = "INSERT INTO gpu_breakdown(source_id, rank, items, left_out, cutoff_ns,"
	      " window_ns, idle_ns, compute_ns, noncompute_ns, comm_ns, comp_ns, mem_ns,"
	      " other_ns, overlap_ns)"
	      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [MIX] = "INSERT INTO gpu_breakdown_mix(source_id, rank, comm, comp, mem, other, ns)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [KERNELS] = "INSERT INTO gpu_breakdown_kernels(source_id, rank, seq, type, name, others,"
		" names, count, sum_ns, min_ns, max_ns)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [STREAMS] = "INSERT INTO gpu_breakdown_streams(source_id, rank, track_id, items,"
		" window_ns, idle_ns, compute_ns, noncompute_ns, host_wait_ns, host_wait_gaps,"
		" kernel_wait_ns, kernel_wait_gaps, other_wait_ns, other_wait_gaps)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [CAUSES] = "INSERT INTO gpu_breakdown_causes(source_id, rank, track_id, cause, ns, gaps)"
	       " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [COPIES] =
	"INSERT INTO gpu_breakdown_copies(source_id, rank, track_id, count, ns, bytes,"
	" pageable, pageable_ns, pageable_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
};

/* ?1 and ?2 of every statement below: the rank's key, and ?3 the
 * stream's track id for causes and copies.  The ranks query has none and
 * reads the key itself. */
static const char *const select_sql[NSTMTS] = {
    [RANKS] = "SELECT b.source_id, b.rank, coalesce(s.path, ''), b.items, b.left_out,"
	      " b.cutoff_ns, b.window_ns, b.idle_ns, b.compute_ns, b.noncompute_ns, b.comm_ns,"
	      " b.comp_ns, b.mem_ns, b.other_ns, b.overlap_ns FROM gpu_breakdown b"
	      " LEFT JOIN sources s ON s.id = b.source_id ORDER BY b.source_id, b.rank",
    [MIX] = "SELECT comm, comp, mem, other, ns FROM gpu_breakdown_mix"
	    " WHERE source_id = ?1 AND rank = ?2",
    [KERNELS] = "SELECT type, name, others, names, count, sum_ns, min_ns, max_ns"
		" FROM gpu_breakdown_kernels WHERE source_id = ?1 AND rank = ?2 ORDER BY seq",
    [STREAMS] = "SELECT g.track_id, coalesce(t.name, ''), g.items, g.window_ns, g.idle_ns,"
		" g.compute_ns, g.noncompute_ns, g.host_wait_ns, g.host_wait_gaps,"
		" g.kernel_wait_ns, g.kernel_wait_gaps, g.other_wait_ns, g.other_wait_gaps"
		" FROM gpu_breakdown_streams g LEFT JOIN tracks t ON t.id = g.track_id"
		" WHERE g.source_id = ?1 AND g.rank = ?2 ORDER BY g.track_id",
    [CAUSES] = "SELECT cause, ns, gaps FROM gpu_breakdown_causes"
	       " WHERE source_id = ?1 AND rank = ?2 AND track_id = ?3",
    [COPIES] = "SELECT count, ns, bytes, pageable, pageable_ns, pageable_bytes"
	       " FROM gpu_breakdown_copies WHERE source_id = ?1 AND rank = ?2 AND track_id = ?3",
};

static int prepare_all(sqlite3 *db, const char *const *sql, sqlite3_stmt **s)
{
	for (int i = 0; i < NSTMTS; i++)
		if (sqlite3_prepare_v2(db, sql[i], -1, &s[i], NULL) != SQLITE_OK)
			return -1;
	return 0;
}

static void finalize_all(sqlite3_stmt **s)
{
	for (int i = 0; i < NSTMTS; i++)
		sqlite3_finalize(s[i]);
}

static int step_done(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void bind_key(sqlite3_stmt *s, const struct gpubreak_rank *r)
{
	sqlite3_bind_int64(s, 1, r->source_id);
	sqlite3_bind_int(s, 2, r->rank);
}

/* window, idle, compute, non-compute from parameter i on */
static void bind_temporal(sqlite3_stmt *s, int i, const struct gpubreak_temporal *t)
{
	sqlite3_bind_int64(s, i, t->window_ns);
	sqlite3_bind_int64(s, i + 1, t->idle_ns);
	sqlite3_bind_int64(s, i + 2, t->compute_ns);
	sqlite3_bind_int64(s, i + 3, t->noncompute_ns);
}

/* Idle causes with gaps, of a stream (its track id) or of the rank (0). */
static int save_causes(sqlite3_stmt **s, const struct gpubreak_rank *r, int64_t track,
		       const struct gpubreak_causes *x)
{
	for (int c = 0; c < IDLE_NCAUSES; c++) {
		if (!x->gaps[c])
			continue;
		bind_key(s[CAUSES], r);
		sqlite3_bind_int64(s[CAUSES], 3, track);
		sqlite3_bind_text(s[CAUSES], 4, idle_cause_name(c), -1, SQLITE_STATIC);
		sqlite3_bind_int64(s[CAUSES], 5, x->ns[c]);
		sqlite3_bind_int64(s[CAUSES], 6, x->gaps[c]);
		if (step_done(s[CAUSES]) < 0)
			return -1;
	}
	return 0;
}

/* A stream's idle causes and copies. */
static int save_stream_extras(sqlite3_stmt **s, const struct gpubreak_rank *r,
			      const struct gpubreak_stream *x)
{
	if (save_causes(s, r, x->track_id, &x->cause) < 0)
		return -1;
	const struct gpubreak_copies *k = &x->copies;
	if (!k->count)
		return 0;
	const int64_t v[] = {k->count,	  k->ns,	  k->bytes,
			     k->pageable, k->pageable_ns, k->pageable_bytes};
	bind_key(s[COPIES], r);
	sqlite3_bind_int64(s[COPIES], 3, x->track_id);
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		sqlite3_bind_int64(s[COPIES], 4 + (int)i, v[i]);
	return step_done(s[COPIES]);
}

static int save_rank(sqlite3_stmt **s, const struct gpubreak_rank *r)
{
	bind_key(s[RANKS], r);
	sqlite3_bind_int64(s[RANKS], 3, r->items);
	sqlite3_bind_int64(s[RANKS], 4, r->left_out);
	sqlite3_bind_int64(s[RANKS], 5, r->cutoff_ns);
	bind_temporal(s[RANKS], 6, &r->time);
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		sqlite3_bind_int64(s[RANKS], 10 + t, r->type_ns[t]);
	sqlite3_bind_int64(s[RANKS], 10 + GPUBREAK_NTYPES, r->overlap_ns);
	if (step_done(s[RANKS]) < 0 || save_causes(s, r, 0, &r->cause) < 0)
		return -1;
	for (int mask = 1; mask < 1 << GPUBREAK_NTYPES; mask++) {
		bind_key(s[MIX], r);
		for (int t = 0; t < GPUBREAK_NTYPES; t++)
			sqlite3_bind_int(s[MIX], 3 + t, (mask >> t) & 1);
		sqlite3_bind_int64(s[MIX], 3 + GPUBREAK_NTYPES, r->mix_ns[mask]);
		if (step_done(s[MIX]) < 0)
			return -1;
	}
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct gpubreak_kernel *k = &r->kernels[i];
		bind_key(s[KERNELS], r);
		sqlite3_bind_int64(s[KERNELS], 3, (int64_t)i + 1);
		sqlite3_bind_text(s[KERNELS], 4, gpubreak_type_name(k->type), -1, SQLITE_STATIC);
		sqlite3_bind_text(s[KERNELS], 5, k->name, -1, SQLITE_STATIC);
		sqlite3_bind_int(s[KERNELS], 6, k->others);
		sqlite3_bind_int64(s[KERNELS], 7, k->names);
		sqlite3_bind_int64(s[KERNELS], 8, k->count);
		sqlite3_bind_int64(s[KERNELS], 9, k->sum_ns);
		sqlite3_bind_int64(s[KERNELS], 10, k->min_ns);
		sqlite3_bind_int64(s[KERNELS], 11, k->max_ns);
		if (step_done(s[KERNELS]) < 0)
			return -1;
	}
	for (size_t i = 0; i < r->nstreams; i++) {
		const struct gpubreak_stream *x = &r->streams[i];
		bind_key(s[STREAMS], r);
		sqlite3_bind_int64(s[STREAMS], 3, x->track_id);
		sqlite3_bind_int64(s[STREAMS], 4, x->items);
		bind_temporal(s[STREAMS], 5, &x->time);
		for (int w = 0; w < GPUBREAK_NWAITS; w++) {
			sqlite3_bind_int64(s[STREAMS], 9 + 2 * w, x->idle.ns[w]);
			sqlite3_bind_int64(s[STREAMS], 10 + 2 * w, x->idle.count[w]);
		}
		if (step_done(s[STREAMS]) < 0 || save_stream_extras(s, r, x) < 0)
			return -1;
	}
	return 0;
}

int gpucache_save(sqlite3 *db, const struct gpubreak *g, char **err)
{
	sqlite3_stmt *s[NSTMTS] = {NULL};
	int rc = -1;
	if (sqlite3_exec(db,
			 "DELETE FROM gpu_breakdown; DELETE FROM gpu_breakdown_mix;"
			 " DELETE FROM gpu_breakdown_kernels; DELETE FROM gpu_breakdown_streams;"
			 " DELETE FROM gpu_breakdown_causes; DELETE FROM gpu_breakdown_copies",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    prepare_all(db, insert_sql, s) < 0)
		goto out;
	for (size_t i = 0; i < g->nranks; i++)
		if (save_rank(s, &g->ranks[i]) < 0)
			goto out;
	rc = 0;
out:
	if (rc < 0)
		*err = xasprintf("cannot write the GPU breakdowns: %s", sqlite3_errmsg(db));
	finalize_all(s);
	return rc;
}

static void col_temporal(sqlite3_stmt *q, int i, struct gpubreak_temporal *t)
{
	t->window_ns = col_int(q, i);
	t->idle_ns = col_int(q, i + 1);
	t->compute_ns = col_int(q, i + 2);
	t->noncompute_ns = col_int(q, i + 3);
}

static int type_of(const char *name)
{
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		if (name && !strcmp(name, gpubreak_type_name(t)))
			return t;
	return -1;
}

/* The loaders below return -1 with *bad set when a row makes no sense, and
 * -1 with *bad NULL when SQLite failed. */
static int load_mix(sqlite3_stmt *q, struct gpubreak_rank *r, char **bad)
{
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int mask = 0;
		for (int t = 0; t < GPUBREAK_NTYPES; t++) {
			int64_t on = col_int(q, t);
			if (on != 0 && on != 1) {
				*bad = xstrdup("a type flag that is not 0 or 1");
				return -1;
			}
			mask |= (int)on << t;
		}
		if (!mask) {
			*bad = xstrdup("a mix of no kernel type");
			return -1;
		}
		r->mix_ns[mask] = col_int(q, GPUBREAK_NTYPES);
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

static int load_kernels(sqlite3_stmt *q, struct gpubreak_rank *r, char **bad)
{
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *type = col_text_or_null(q, 0);
		int t = type_of(type);
		if (t < 0) {
			*bad = xasprintf("an unknown kernel type '%s'", type ? type : "");
			return -1;
		}
		XGROW(r->kernels, r->nkernels + 1, alloc);
		r->kernels[r->nkernels++] = (struct gpubreak_kernel){.name = col_strdup(q, 1),
								     .type = t,
								     .others = col_int32(q, 2),
								     .names = col_int(q, 3),
								     .count = col_int(q, 4),
								     .sum_ns = col_int(q, 5),
								     .min_ns = col_int(q, 6),
								     .max_ns = col_int(q, 7)};
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Binds the rank's key and a track id (0: the rank) to s[i]. */
static void bind_track(sqlite3_stmt **s, int i, const struct gpubreak_rank *r, int64_t track)
{
	sqlite3_reset(s[i]);
	bind_key(s[i], r);
	sqlite3_bind_int64(s[i], 3, track);
}

static int load_causes(sqlite3_stmt **s, const struct gpubreak_rank *r, int64_t track,
		       struct gpubreak_causes *x, char **bad)
{
	int rc;
	bind_track(s, CAUSES, r, track);
	while ((rc = sqlite3_step(s[CAUSES])) == SQLITE_ROW) {
		const char *name = col_text_or_null(s[CAUSES], 0);
		int c = idle_cause_of(name);
		if (c < 0) {
			*bad = xasprintf("an unknown idle cause '%s'", name ? name : "");
			return -1;
		}
		x->ns[c] = col_int(s[CAUSES], 1);
		x->gaps[c] = col_int(s[CAUSES], 2);
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

/* A stream's causes and copies. */
static int load_stream_extras(sqlite3_stmt **s, const struct gpubreak_rank *r,
			      struct gpubreak_stream *x, char **bad)
{
	if (load_causes(s, r, x->track_id, &x->cause, bad) < 0)
		return -1;
	bind_track(s, COPIES, r, x->track_id);
	int rc = sqlite3_step(s[COPIES]);
	if (rc == SQLITE_ROW) {
		int64_t *v[] = {&x->copies.count,	&x->copies.ns,
				&x->copies.bytes,	&x->copies.pageable,
				&x->copies.pageable_ns, &x->copies.pageable_bytes};
		for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
			*v[i] = col_int(s[COPIES], (int)i);
		rc = SQLITE_DONE;
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

static int load_streams(sqlite3_stmt **s, struct gpubreak_rank *r, char **bad)
{
	sqlite3_stmt *q = s[STREAMS];
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(r->streams, r->nstreams + 1, alloc);
		struct gpubreak_stream *x = &r->streams[r->nstreams++];
		memset(x, 0, sizeof(*x));
		x->track_id = col_int(q, 0);
		x->name = col_strdup(q, 1);
		x->items = col_int(q, 2);
		col_temporal(q, 3, &x->time);
		for (int w = 0; w < GPUBREAK_NWAITS; w++) {
			x->idle.ns[w] = col_int(q, 7 + 2 * w);
			x->idle.count[w] = col_int(q, 8 + 2 * w);
		}
		if (load_stream_extras(s, r, x, bad) < 0)
			return -1;
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reads the rank at the ranks query's row, then its parts. */
static int load_rank(sqlite3_stmt **s, struct gpubreak_rank *r, char **bad)
{
	sqlite3_stmt *q = s[RANKS];
	r->source_id = col_int(q, 0);
	r->rank = col_int32(q, 1);
	r->source = col_strdup(q, 2);
	r->items = col_int(q, 3);
	r->left_out = col_int(q, 4);
	r->cutoff_ns = col_int(q, 5);
	col_temporal(q, 6, &r->time);
	for (int t = 0; t < GPUBREAK_NTYPES; t++)
		r->type_ns[t] = col_int(q, 10 + t);
	r->comm_ns = r->type_ns[GPUBREAK_COMM];
	r->overlap_ns = col_int(q, 10 + GPUBREAK_NTYPES);
	for (int i = MIX; i <= STREAMS; i++) {
		sqlite3_reset(s[i]);
		bind_key(s[i], r);
	}
	return load_mix(s[MIX], r, bad) < 0 || load_kernels(s[KERNELS], r, bad) < 0 ||
		       load_streams(s, r, bad) < 0 || load_causes(s, r, 0, &r->cause, bad) < 0
		   ? -1
		   : 0;
}

int gpucache_load(sqlite3 *db, struct gpubreak *g, char **err)
{
	sqlite3_stmt *s[NSTMTS] = {NULL};
	char *bad = NULL;
	size_t alloc = 0;
	int rc = -1, step = SQLITE_DONE;
	memset(g, 0, sizeof(*g));
	if (prepare_all(db, select_sql, s) < 0)
		goto out;
	while ((step = sqlite3_step(s[RANKS])) == SQLITE_ROW) {
		XGROW(g->ranks, g->nranks + 1, alloc);
		struct gpubreak_rank *r = &g->ranks[g->nranks++];
		memset(r, 0, sizeof(*r));
		if (load_rank(s, r, &bad) < 0)
			goto out;
	}
	rc = step == SQLITE_DONE ? 0 : -1;
out:
	if (rc < 0) {
		*err =
		    xasprintf("cannot read the GPU breakdowns: %s", bad ? bad : sqlite3_errmsg(db));
		gpubreak_release(g);
	}
	free(bad);
	finalize_all(s);
	return rc;
}
