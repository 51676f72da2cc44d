/*
 * SQL functions for compiled queries (see funcs.h): the connection's state
 * (struct qfuncs, funcs_int.h) and its lifecycle, the registration of
 * every function in one table, and the lookups: PCRE2 regexp, interned
 * texts (gm_str, gm_kind), phase paths (gm_path) and metrics by name
 * (gm_metric).  The functions over time are funcs_time.c's, the windows of
 * during and within funcs_window.c's, the aggregates gm_hagg and gm_pct
 * funcs_agg.c's.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/store/store.h"
#include "model/store/ptree.h"
#include "model/util/sbuf.h"
#include "query/funcs_int.h"
#include "model/util/xalloc.h"

/* What an interned-text cache may hold; past either, lookups go to the
 * table uncached (the texts already handed out as SQLITE_STATIC stay). */
#define ITEXT_MAX_ENTRIES (1u << 20)
#define ITEXT_MAX_BYTES	  ((size_t)64 << 20)

struct metric_ent {
	int64_t id;
	char *name, *full, *host; /* full: "resource.name" */
};

/* id -> path of a phase (ancestors only) */
struct path_ent {
	int64_t id; /* 0: empty */
	char *path;
};

/* id -> text of an interned table (strings, phase_kinds), open addressing */
struct itext_ent {
	int64_t id;
	char *text; /* NULL: the table has no such id */
	int len;    /* bytes; -1: NUL-terminated at text[strlen], SQLite's cue
		     * that it need not copy the text to terminate it */
	int used;
};

static void itext_release(struct itext *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].text);
	free(t->v);
	sqlite3_finalize(t->q);
}

static void qfuncs_free(void *p)
{
	struct qfuncs *f = p;
	for (size_t i = 0; i < f->nwsets; i++)
		funcs_wset_free(f->wsets[i]);
	free(f->wsets);
	free(f->rkeys);
	sqlite3_finalize(f->running_track_q);
	sqlite3_finalize(f->running_any_q);
	itext_release(&f->strs);
	itext_release(&f->kinds);
	for (size_t i = 0; i < NREGEX; i++) {
		free(f->rx[i].pattern);
		pcre2_match_data_free(f->rx[i].md);
		pcre2_code_free(f->rx[i].re);
	}
	for (size_t i = 0; i < NSERIES; i++)
		funcs_series_free(f->ser[i]);
	for (size_t i = 0; i < f->nmetrics; i++) {
		free(f->metrics[i].name);
		free(f->metrics[i].full);
		free(f->metrics[i].host);
	}
	free(f->metrics);
	for (size_t i = 0; i < NMEMO; i++) {
		free(f->memo[i].name);
		free(f->memo[i].host);
		free(f->memo[i].phost);
	}
	for (size_t i = 0; i < f->paths_cap; i++)
		free(f->paths[i].path);
	free(f->paths);
	sqlite3_finalize(f->path_q);
	if (f->steps.key)
		idmap_release(&f->steps);
	free(f->step_of);
	sqlite3_finalize(f->step_q);
	funcs_gaps_release(f);
	sqlite3_finalize(f->gap_node_q);
	sqlite3_finalize(f->gap_child_q);
	free(f);
}

/* ---- regexp ---- */

static pcre2_code *compile_re(const char *pattern, int *offset, char **err)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				       PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			msg[0] = '\0';
		if (offset)
			*offset = (int)off;
		if (err)
			*err = xasprintf("invalid regular expression: %s", (char *)msg);
		return NULL;
	}
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
	return re;
}

int query_regex_check(const char *pattern, int *offset, char **err)
{
	pcre2_code *re = compile_re(pattern, offset, err);
	if (!re)
		return -1;
	pcre2_code_free(re);
	return 0;
}

static void fn_regexp(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	const char *pat = (const char *)sqlite3_value_text(argv[0]);
	const char *s = (const char *)sqlite3_value_text(argv[1]);
	if (!pat || !s)
		return;
	int len = sqlite3_value_bytes(argv[1]);
	struct regex_slot *slot = NULL;
	for (size_t i = 0; i < NREGEX; i++)
		if (f->rx[i].pattern && !strcmp(f->rx[i].pattern, pat)) {
			slot = &f->rx[i];
			break;
		}
	if (!slot) {
		char *err = NULL;
		pcre2_code *re = compile_re(pat, NULL, &err);
		if (!re) {
			sqlite3_result_error(ctx, err, -1);
			free(err);
			return;
		}
		slot = &f->rx[f->rx_next++ % NREGEX];
		free(slot->pattern);
		pcre2_match_data_free(slot->md);
		pcre2_code_free(slot->re);
		slot->pattern = xstrdup(pat);
		slot->re = re;
		slot->md = pcre2_match_data_create_from_pattern(re, NULL);
		if (!slot->md) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
	int rc = pcre2_match(slot->re, (PCRE2_SPTR)s, (PCRE2_SIZE)len, 0, 0, slot->md, NULL);
	if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
		sqlite3_result_error(ctx, "regular expression: match failed (too complex?)", -1);
		return;
	}
	sqlite3_result_int(ctx, rc >= 0);
}

/* ---- gm_str, gm_kind ---- */

static struct itext_ent *itext_slot(struct itext *t, int64_t id)
{
	size_t mask = t->cap - 1;
	for (size_t i = hash64(id) & mask;; i = (i + 1) & mask)
		if (!t->v[i].used || t->v[i].id == id)
			return &t->v[i];
}

/* Remembers id's text (NULL: none); returns the entry, or NULL when the
 * cache is full. */
static struct itext_ent *itext_put(struct itext *t, int64_t id, const char *text, int len)
{
	if (t->n >= ITEXT_MAX_ENTRIES || t->bytes + (size_t)len > ITEXT_MAX_BYTES)
		return NULL;
	if ((t->n + 1) * 2 > t->cap) {
		struct itext_ent *old = t->v;
		size_t ocap = t->cap;
		t->cap = ocap ? ocap * 2 : 256;
		t->v = xcalloc(t->cap, sizeof(*t->v));
		for (size_t i = 0; i < ocap; i++)
			if (old[i].used)
				*itext_slot(t, old[i].id) = old[i];
		free(old);
	}
	struct itext_ent *e = itext_slot(t, id);
	e->used = 1;
	e->id = id;
	e->text = NULL;
	e->len = len;
	if (text) { /* len bytes: a text may hold a NUL */
		e->text = xmalloc((size_t)len + 1);
		memcpy(e->text, text, (size_t)len);
		e->text[len] = '\0';
		if (!memchr(text, '\0', (size_t)len))
			e->len = -1;
	}
	t->n++;
	t->bytes += (size_t)len;
	return e;
}

/* The result of (SELECT text FROM table WHERE id = arg), from the cache
 * when arg is an integer.  A cached text is returned SQLITE_STATIC: it
 * lives until the functions are registered again or the connection
 * closes, after the statement that used it is finalised. */
static void itext_lookup(sqlite3_context *ctx, struct qfuncs *f, struct itext *t,
			 sqlite3_value *arg)
{
	int type = sqlite3_value_type(arg);
	int64_t id = sqlite3_value_int64(arg);
	if (type == SQLITE_NULL)
		return;
	if (type == SQLITE_INTEGER && t->cap) {
		struct itext_ent *e = itext_slot(t, id);
		if (e->used) {
			if (e->text)
				sqlite3_result_text(ctx, e->text, e->len, SQLITE_STATIC);
			return;
		}
	}
	if (!t->q && sqlite3_prepare_v2(f->db, t->sql, -1, &t->q, NULL) != SQLITE_OK) {
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
		return;
	}
	sqlite3_bind_value(t->q, 1, arg);
	int step = sqlite3_step(t->q);
	if (step == SQLITE_ROW && sqlite3_column_type(t->q, 0) == SQLITE_TEXT &&
	    type == SQLITE_INTEGER) {
		size_t n;
		const char *text = col_text_n(t->q, 0, &n);
		int len = (int)n;
		struct itext_ent *e = itext_put(t, id, text, len);
		if (e)
			sqlite3_result_text(ctx, e->text, e->len, SQLITE_STATIC);
		else
			sqlite3_result_text(ctx, text, len, SQLITE_TRANSIENT);
	} else if (step == SQLITE_ROW) {
		/* a value of another type (a hostile file), or a key that is
		 * not an integer: as the subquery would, uncached */
		sqlite3_result_value(ctx, sqlite3_column_value(t->q, 0));
	} else if (step == SQLITE_DONE) {
		if (type == SQLITE_INTEGER)
			itext_put(t, id, NULL, 0);
	} else {
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
	}
	sqlite3_reset(t->q);
}

static void fn_str(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	itext_lookup(ctx, f, &f->strs, argv[0]);
}

static void fn_kind(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	itext_lookup(ctx, f, &f->kinds, argv[0]);
}

/* ---- gm_ns ---- */

static void fn_ns(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	switch (sqlite3_value_numeric_type(argv[0])) {
	case SQLITE_INTEGER:
		sqlite3_result_int64(ctx, sqlite3_value_int64(argv[0]));
		return;
	case SQLITE_FLOAT: {
		double v = sqlite3_value_double(argv[0]);
		if (isnan(v))
			sqlite3_result_null(ctx);
		else if (v >= 9223372036854775807.0)
			sqlite3_result_int64(ctx, INT64_MAX);
		else if (v <= -9223372036854775808.0)
			sqlite3_result_int64(ctx, INT64_MIN);
		else
			sqlite3_result_int64(ctx, llround(v));
		return;
	}
	default:
		sqlite3_result_null(ctx);
	}
}

/* ---- gm_path ---- */

static struct path_ent *path_slot(struct qfuncs *f, int64_t id)
{
	if (!f->paths_cap)
		return NULL;
	size_t mask = f->paths_cap - 1;
	for (size_t i = hash64(id) & mask;; i = (i + 1) & mask) {
		if (f->paths[i].id == id || f->paths[i].id == 0)
			return &f->paths[i];
	}
}

static void path_put(struct qfuncs *f, int64_t id, const char *path)
{
	if ((f->paths_n + 1) * 2 > f->paths_cap) {
		size_t ncap = f->paths_cap ? f->paths_cap * 2 : 1024;
		struct path_ent *old = f->paths;
		size_t ocap = f->paths_cap;
		f->paths = xcalloc(ncap, sizeof(*f->paths));
		f->paths_cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].id)
				*path_slot(f, old[i].id) = old[i];
		free(old);
	}
	struct path_ent *e = path_slot(f, id);
	if (e->id)
		return;
	e->id = id;
	e->path = xstrdup(path);
	f->paths_n++;
}

/* Steps q (one phase by id, ?1) for id: 0 with its row (the caller reads
 * it, then resets q), 1 when there is no such phase, -1 on a SQLite error
 * (q reset either way). */
static int phase_row(sqlite3_stmt *q, int64_t id)
{
	sqlite3_bind_int64(q, 1, id);
	int r = sqlite3_step(q);
	if (r == SQLITE_ROW)
		return 0;
	sqlite3_reset(q);
	return r == SQLITE_DONE ? 1 : -1;
}

/* Sets ctx's error when a walk up from id failed (rc < 0: PTREE_LOOP, or
 * SQLite's); 1 when it did. */
static int walk_failed(sqlite3_context *ctx, struct qfuncs *f, int64_t id, int rc)
{
	if (rc == PTREE_LOOP) {
		char *e = ptree_loop_error(sqlite3_db_filename(f->db, "main"), id);
		sqlite3_result_error(ctx, e, -1);
		free(e);
	} else if (rc < 0) {
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
	}
	return rc < 0;
}

/* The path of id into out; 0 when found, 1 when id is unknown, -1 on a
 * SQLite error, PTREE_LOOP when its parents loop.  Ancestors' paths are
 * cached, id's own is not. */
static int phase_path(struct qfuncs *f, int64_t id, struct sbuf *out)
{
	int64_t *chain = NULL;
	char **names = NULL;
	size_t n = 0, alloc = 0, nalloc = 0;
	int rc = 0;
	const char *base = "";
	int64_t cur = id;
	struct ptree_walk up;
	if (!f->path_q && sqlite3_prepare_v2(f->db,
					     "SELECT parent_id, (SELECT text FROM strings"
					     " WHERE id = name_id) FROM phases WHERE id = ?1",
					     -1, &f->path_q, NULL) != SQLITE_OK)
		return -1;
	ptree_walk_init(&up, id);
	while (cur) {
		struct path_ent *e = n ? path_slot(f, cur) : NULL;
		if (e && e->id == cur) {
			base = e->path;
			break;
		}
		if ((rc = phase_row(f->path_q, cur)) != 0)
			break;
		const char *name = col_text_or_null(f->path_q, 1);
		XGROW(chain, n + 1, alloc);
		XGROW(names, n + 1, nalloc);
		chain[n] = cur;
		names[n] = xstrdup(name ? name : "");
		n++;
		cur = col_int(f->path_q, 0);
		sqlite3_reset(f->path_q);
		if (ptree_walk_loops(&up, cur)) {
			rc = PTREE_LOOP;
			break;
		}
	}
	if (rc == 0 && n == 0 && !*base)
		rc = 1;
	if (rc == 0) {
		/* build from the top; cache each ancestor's path on the way */
		sbuf_reset(out);
		sbuf_adds(out, base);
		for (size_t k = n; k-- > 0;) {
			sbuf_addc(out, '/');
			sbuf_adds(out, names[k]);
			if (k > 0)
				path_put(f, chain[k], out->buf);
		}
	}
	for (size_t k = 0; k < n; k++)
		free(names[k]);
	free(names);
	free(chain);
	return rc;
}

static void fn_path(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	struct sbuf sb;
	sbuf_init(&sb);
	int64_t id = sqlite3_value_int64(argv[0]);
	int rc = phase_path(f, id, &sb);
	if (!walk_failed(ctx, f, id, rc) && rc == 0) {
		sqlite3_result_text(ctx, sb.buf, (int)sb.len, SQLITE_TRANSIENT);
	}
	sbuf_release(&sb);
}

/* ---- gm_step ---- */

/* The step of a phase: the nearest of it and its ancestors that is a part
 * of the workflow or an iteration (model/analysis/level.h), 0 when none;
 * -1 on a SQLite error, PTREE_LOOP when the parents loop.  The walk starts
 * at from: the phase itself, or (when the caller knows the phase is no
 * step) its parent.  Ancestors' answers are cached, the phase's own is not
 * (most rows are leaves). */
static int phase_step(struct qfuncs *f, int64_t id, int64_t from, int64_t *step)
{
	int64_t *chain = NULL;
	size_t n = 0, alloc = 0;
	int rc = 0;
	int64_t cur = from;
	int ancestors = from != id; /* every phase met is an ancestor: cached */
	struct ptree_walk up;
	*step = 0;
	if (!f->step_q && sqlite3_prepare_v2(f->db,
					     "SELECT p.parent_id, p.kind, " LEVEL_ON_THREAD_SQL(
						 "p") " FROM phases p WHERE p.id = ?1",
					     -1, &f->step_q, NULL) != SQLITE_OK)
		return -1;
	if (!f->steps.key)
		idmap_init(&f->steps, 1024);
	ptree_walk_init(&up, from);
	while (cur) {
		int32_t k = n || ancestors ? idmap_get(&f->steps, cur) : -1;
		if (k >= 0) {
			*step = f->step_of[k];
			break;
		}
		if ((rc = phase_row(f->step_q, cur)) != 0) {
			rc = rc > 0 ? 0 : -1; /* a missing phase has no step */
			break;
		}
		int level = level_of(col_int32(f->step_q, 1), col_int32(f->step_q, 2));
		int64_t parent = col_int(f->step_q, 0);
		sqlite3_reset(f->step_q);
		if (level == LEVEL_PART || level == LEVEL_ITERATION) {
			*step = cur;
			break;
		}
		XGROW(chain, n + 1, alloc);
		chain[n++] = cur;
		cur = parent;
		if (ptree_walk_loops(&up, cur)) {
			rc = PTREE_LOOP;
			break;
		}
	}
	for (size_t i = ancestors ? 0 : 1; rc == 0 && i < n && f->nstep_of < INT32_MAX; i++) {
		if (idmap_put(&f->steps, chain[i], (int32_t)f->nstep_of) < 0)
			continue;
		XGROW(f->step_of, f->nstep_of + 1, f->astep_of);
		f->step_of[f->nstep_of++] = *step;
	}
	free(chain);
	return rc;
}

/* gm_step(id) or gm_step(id, parent_id, kind): with the row's parent and
 * kind, a phase that cannot be a step is not read again (a span can: its
 * level depends on its track, read with it). */
static void fn_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	int64_t id = sqlite3_value_int64(argv[0]), from = id, step;
	if (argc == 3 && sqlite3_value_type(argv[2]) == SQLITE_INTEGER) {
		int kind = sqlite3_value_int(argv[2]);
		int level = level_of(kind, 0);
		if (kind != PHASE_SPAN && (level == LEVEL_PART || level == LEVEL_ITERATION)) {
			sqlite3_result_int64(ctx, id);
			return;
		}
		if (kind != PHASE_SPAN) {
			if (sqlite3_value_type(argv[1]) == SQLITE_NULL)
				return; /* a root that is no step */
			from = sqlite3_value_int64(argv[1]);
		}
	}
	int rc = phase_step(f, id, from, &step);
	if (!walk_failed(ctx, f, id, rc) && step)
		sqlite3_result_int64(ctx, step);
}

/* ---- metrics ---- */

static int load_metrics(struct qfuncs *f)
{
	sqlite3_stmt *q;
	if (f->metrics_loaded)
		return 0;
	if (sqlite3_prepare_v2(f->db, "SELECT id, name, resource, host FROM metrics ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	size_t alloc = 0;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(f->metrics, f->nmetrics + 1, alloc);
		struct metric_ent *m = &f->metrics[f->nmetrics++];
		const char *name = col_text_or_null(q, 1);
		const char *res = col_text_or_null(q, 2);
		const char *host = col_text_or_null(q, 3);
		m->id = col_int(q, 0);
		m->name = xstrdup(name ? name : "");
		m->full = res ? xasprintf("%s.%s", res, m->name) : xstrdup(m->name);
		m->host = host ? xstrdup(host) : NULL;
	}
	sqlite3_finalize(q);
	f->metrics_loaded = 1;
	return 0;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void fn_metric(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	const char *host = (const char *)sqlite3_value_text(argv[1]);
	const char *phost = (const char *)sqlite3_value_text(argv[2]);
	if (!name)
		return;
	for (size_t i = 0; i < NMEMO; i++) {
		struct memo *m = &f->memo[i];
		if (m->name && !strcmp(m->name, name) && same(m->host, host) &&
		    same(m->phost, phost)) {
			if (m->id)
				sqlite3_result_int64(ctx, m->id);
			return;
		}
	}
	if (load_metrics(f) < 0) {
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
		return;
	}
	int64_t best = 0;
	int best_on_host = 0;
	for (size_t i = 0; i < f->nmetrics; i++) {
		struct metric_ent *m = &f->metrics[i];
		if (strcmp(m->name, name) && strcmp(m->full, name))
			continue;
		if (host && !same(m->host, host))
			continue;
		int on = phost && same(m->host, phost);
		if (!best || (on && !best_on_host)) {
			best = m->id;
			best_on_host = on;
		}
	}
	struct memo *m = &f->memo[f->memo_next++ % NMEMO];
	free(m->name);
	free(m->host);
	free(m->phost);
	m->name = xstrdup(name);
	m->host = host ? xstrdup(host) : NULL;
	m->phost = phost ? xstrdup(phost) : NULL;
	m->id = best;
	if (best)
		sqlite3_result_int64(ctx, best);
}

void query_funcs_idle(struct qfuncs *f)
{
	if (f) {
		sqlite3_finalize(f->path_q);
		f->path_q = NULL;
		sqlite3_finalize(f->step_q);
		f->step_q = NULL;
		sqlite3_finalize(f->gap_node_q);
		f->gap_node_q = NULL;
		sqlite3_finalize(f->gap_child_q);
		f->gap_child_q = NULL;
		sqlite3_finalize(f->strs.q);
		f->strs.q = NULL;
		sqlite3_finalize(f->kinds.q);
		f->kinds.q = NULL;
		sqlite3_finalize(f->running_track_q);
		f->running_track_q = NULL;
		sqlite3_finalize(f->running_any_q);
		f->running_any_q = NULL;
	}
}

int query_funcs_register(sqlite3 *db, struct qfuncs **out, char **err)
{
	struct qfuncs *f = xcalloc(1, sizeof(*f));
	f->db = db;
	f->strs.sql = "SELECT text FROM strings WHERE id = ?1";
	f->kinds.sql = "SELECT name FROM phase_kinds WHERE id = ?1";
	/* fn_*: this file's; gm_*: funcs_time.c's and funcs_agg.c's */
	static const struct {
		const char *name;
		int nargs;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} table[] = {
	    {"regexp", 2, fn_regexp},	   {"gm_path", 1, fn_path},   {"gm_metric", 3, fn_metric},
	    {"gm_twmean", 3, gm_twmean},   {"gm_twmax", 3, gm_twmax}, {"gm_satns", 4, gm_satns},
	    {"gm_valueat", 2, gm_valueat}, {"gm_str", 1, fn_str},     {"gm_kind", 1, fn_kind},
	    {"gm_running", 2, gm_running}, {"gm_ns", 1, fn_ns},	      {"gm_step", 1, fn_step},
	};
	/* regexp owns the state: its destructor runs when it is replaced by
	 * the next registration or the connection closes, after which no
	 * other function of this set is called with the old pointer. */
	int rc = sqlite3_create_function_v2(db, "regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, f,
					    fn_regexp, NULL, NULL, qfuncs_free);
	for (size_t i = 1; rc == SQLITE_OK && i < sizeof(table) / sizeof(table[0]); i++)
		rc = sqlite3_create_function_v2(db, table[i].name, table[i].nargs, SQLITE_UTF8, f,
						table[i].fn, NULL, NULL, NULL);
	for (int n = 3; rc == SQLITE_OK && n <= 3 + 16; n++)
		rc = sqlite3_create_function_v2(db, "gm_hagg", n, SQLITE_UTF8, NULL, NULL,
						gm_hagg_step, gm_hagg_final, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "gm_wset", 3, SQLITE_UTF8, f, NULL,
						gm_wset_step, gm_wset_final, NULL);
	for (int n = 4; rc == SQLITE_OK && n <= 5; n++)
		rc = sqlite3_create_function_v2(db, "gm_near", n, SQLITE_UTF8, f, gm_near, NULL,
						NULL, NULL);
	for (int n = 2; rc == SQLITE_OK && n <= 3; n++)
		rc = sqlite3_create_function_v2(db, "gm_during", n, SQLITE_UTF8, f, gm_during, NULL,
						NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "gm_pct", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
						NULL, NULL, gm_pct_step, gm_pct_final, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "gm_step", 3, SQLITE_UTF8, f, fn_step, NULL,
						NULL, NULL);
	if (rc == SQLITE_OK)
		rc = funcs_gaps_register(db, f);
	if (rc != SQLITE_OK) {
		*err = xasprintf("cannot register query functions: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (out)
		*out = f;
	return 0;
}
