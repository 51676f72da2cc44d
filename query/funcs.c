/*
 * SQL functions for compiled queries (see funcs.h): PCRE2 regexp, phase
 * paths, metric lookup, and time-weighted statistics of a metric over a
 * window, answered from series loaded once per connection.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <math.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/nstime.h"
#include "model/store/ptree.h"
#include "model/store/sample.h"
#include "model/util/sbuf.h"
#include "query/funcs.h"
#include "model/util/xalloc.h"

#define NREGEX	16
#define NSERIES 8
#define NMEMO	8
/* What an interned-text cache may hold; past either, lookups go to the
 * table uncached (the texts already handed out as SQLITE_STATIC stay). */
#define ITEXT_MAX_ENTRIES (1u << 20)
#define ITEXT_MAX_BYTES	  ((size_t)64 << 20)

struct regex_slot {
	char *pattern;
	pcre2_code *re;
	pcre2_match_data *md;
};

/* One metric's samples, sorted by time, with what windows need. */
struct series {
	int64_t id;
	size_t n;
	int64_t *t;
	double *v;
	int64_t *e;	 /* e[i]: where sample i stops holding (model/store/sample.h) */
	int64_t lone;	 /* a series of one sample (no period): it holds for no time */
	double *area;	 /* area[i]: integral of the step function over [t[0], t[i]) */
	double *cov;	 /* cov[i]: the time a sample holds over [t[0], t[i]) */
	double *seg;	 /* max segment tree over v: seg[n + i] = v[i] */
	double capacity; /* NAN: unknown */
	double sat_thr;	 /* threshold sat[] was built for */
	int64_t *sat;	 /* sat[i]: ns over [t[0], t[i]) a value >= sat_thr holds */
	unsigned long used;
};

struct metric_ent {
	int64_t id;
	char *name, *full, *host; /* full: "resource.name" */
};

struct memo {
	char *name, *host, *phost;
	int64_t id; /* 0: none */
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

struct itext {
	const char *sql; /* SELECT text WHERE id = ?1 */
	sqlite3_stmt *q;
	struct itext_ent *v;
	size_t cap, n, bytes; /* cap: 0 or a power of two */
};

/* One within stage's windows, sorted by start (then id). */
struct wwin {
	int64_t wid, w0, w1;
};

struct wset {
	struct wwin *v;
	size_t n, alloc;
	int64_t maxlen; /* the longest window's w1 - w0, at least 0 */
};

struct qfuncs {
	sqlite3 *db;
	struct itext strs, kinds;
	struct wset **wsets; /* by the compiler's window number */
	size_t nwsets;
	struct rkey *rkeys; /* gm_running's events, sorted by (t, track) */
	size_t nrkeys;
	int running_loaded;
	sqlite3_stmt *running_track_q, *running_any_q;
	struct regex_slot rx[NREGEX];
	size_t rx_next;
	struct series *ser[NSERIES];
	unsigned long clock;
	struct metric_ent *metrics;
	size_t nmetrics;
	int metrics_loaded;
	struct memo memo[NMEMO];
	size_t memo_next;
	struct path_ent *paths;
	size_t paths_cap, paths_n;
	sqlite3_stmt *path_q;
};

static void series_free(struct series *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->v);
	free(s->e);
	free(s->area);
	free(s->cov);
	free(s->seg);
	free(s->sat);
	free(s);
}

static void itext_release(struct itext *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].text);
	free(t->v);
	sqlite3_finalize(t->q);
}

static void wset_free(struct wset *w)
{
	if (w) {
		free(w->v);
		free(w);
	}
}

static void qfuncs_free(void *p)
{
	struct qfuncs *f = p;
	for (size_t i = 0; i < f->nwsets; i++)
		wset_free(f->wsets[i]);
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
		series_free(f->ser[i]);
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

static uint64_t hash64(int64_t x)
{
	uint64_t h = (uint64_t)x * UINT64_C(0x9e3779b97f4a7c15);
	return h ^ (h >> 29);
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
		const char *text = (const char *)sqlite3_column_text(t->q, 0);
		int len = sqlite3_column_bytes(t->q, 0);
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
		sqlite3_bind_int64(f->path_q, 1, cur);
		int step = sqlite3_step(f->path_q);
		if (step != SQLITE_ROW) {
			sqlite3_reset(f->path_q);
			rc = step == SQLITE_DONE ? 1 : -1;
			break;
		}
		const char *name = (const char *)sqlite3_column_text(f->path_q, 1);
		XGROW(chain, n + 1, alloc);
		XGROW(names, n + 1, nalloc);
		chain[n] = cur;
		names[n] = xstrdup(name ? name : "");
		n++;
		cur = sqlite3_column_int64(f->path_q, 0);
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
	if (rc == PTREE_LOOP) {
		char *e = ptree_loop_error(sqlite3_db_filename(f->db, "main"), id);
		sqlite3_result_error(ctx, e, -1);
		free(e);
	} else if (rc < 0) {
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
	} else if (rc == 0) {
		sqlite3_result_text(ctx, sb.buf, (int)sb.len, SQLITE_TRANSIENT);
	}
	sbuf_release(&sb);
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
		const char *name = (const char *)sqlite3_column_text(q, 1);
		const char *res = (const char *)sqlite3_column_text(q, 2);
		const char *host = (const char *)sqlite3_column_text(q, 3);
		m->id = sqlite3_column_int64(q, 0);
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

/* ---- series ---- */

/* t - t0 as a double, exact where the difference fits 53 bits (as
 * model/view/series.c: hostile times may be 2^64 ns apart). */
static double since(int64_t t, int64_t t0)
{
	int64_t d;
	if (!__builtin_sub_overflow(t, t0, &d))
		return (double)d;
	return (double)t - (double)t0;
}

static struct series *series_get(struct qfuncs *f, int64_t id, char **err)
{
	struct series *s = NULL;
	size_t victim = 0;
	for (size_t i = 0; i < NSERIES; i++) {
		if (f->ser[i] && f->ser[i]->id == id) {
			f->ser[i]->used = ++f->clock;
			return f->ser[i];
		}
		if (!f->ser[i] || (f->ser[victim] && f->ser[i]->used < f->ser[victim]->used))
			victim = i;
	}
	sqlite3_stmt *q = NULL;
	s = xcalloc(1, sizeof(*s));
	s->id = id;
	s->capacity = NAN;
	s->sat_thr = NAN;
	if (sqlite3_prepare_v2(f->db, "SELECT capacity, value_kind FROM metrics WHERE id = ?1", -1,
			       &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, id);
	char *kind = NULL;
	if (sqlite3_step(q) == SQLITE_ROW) {
		if (sqlite3_column_type(q, 0) != SQLITE_NULL && sqlite3_column_double(q, 0) > 0)
			s->capacity = sqlite3_column_double(q, 0);
		if (sqlite3_column_text(q, 1))
			kind = xstrdup((const char *)sqlite3_column_text(q, 1));
	}
	sqlite3_finalize(q);
	if (sqlite3_prepare_v2(f->db,
			       "SELECT t_ns, value FROM samples WHERE metric_id = ?1 ORDER BY t_ns",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, id);
	size_t at = 0, av = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(s->t, s->n + 1, at);
		XGROW(s->v, s->n + 1, av);
		s->t[s->n] = sqlite3_column_int64(q, 0);
		s->v[s->n] = sqlite3_column_double(q, 1);
		s->n++;
	}
	sqlite3_finalize(q);
	q = NULL;
	if (rc != SQLITE_DONE) {
		free(kind);
		goto fail;
	}
	/* each sample holds until the next or its hold (model/store/sample.h) */
	int64_t period = sample_period(s->t, s->n), hold = sample_hold(period, kind);
	free(kind);
	s->lone = !period;
	s->e = xmalloc((s->n + 1) * sizeof(int64_t));
	s->area = xmalloc((s->n + 1) * sizeof(double));
	s->cov = xmalloc((s->n + 1) * sizeof(double));
	s->area[0] = s->cov[0] = 0;
	for (size_t i = 0; i < s->n; i++) {
		s->e[i] =
		    sample_until(s->t[i], i + 1 < s->n ? s->t[i + 1] : INT64_MAX, period, hold);
		s->area[i + 1] = s->area[i] + s->v[i] * since(s->e[i], s->t[i]);
		s->cov[i + 1] = s->cov[i] + since(s->e[i], s->t[i]);
	}
	s->seg = xmalloc((2 * s->n + 1) * sizeof(double));
	for (size_t i = 0; i < s->n; i++)
		s->seg[s->n + i] = s->v[i];
	for (size_t i = s->n - 1; i >= 1 && s->n > 1; i--)
		s->seg[i] = fmax(s->seg[2 * i], s->seg[2 * i + 1]);
	series_free(f->ser[victim]);
	f->ser[victim] = s;
	s->used = ++f->clock;
	return s;
fail:
	*err = xasprintf("cannot read samples: %s", sqlite3_errmsg(f->db));
	sqlite3_finalize(q);
	series_free(s);
	return NULL;
}

/* The last index with t[i] <= x, or -1. */
static ptrdiff_t last_le(const struct series *s, int64_t x)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->t[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* The last index with t[i] < x, or -1. */
static ptrdiff_t last_lt(const struct series *s, int64_t x)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->t[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* The integral of the step function from t[0] to x (of the value, or
 * with value 0 of the time a sample holds). */
static double area_to(const struct series *s, const double *pre, int value, int64_t x)
{
	ptrdiff_t k = last_le(s, x);
	if (k < 0)
		return 0;
	int64_t end = x < s->e[k] ? x : s->e[k];
	return pre[k] + (value ? s->v[k] : 1) * (end > s->t[k] ? since(end, s->t[k]) : 0);
}

/* The window [t0, t1) clipped to [t[0], the last sample's end]: 1 when it
 * covers time. */
static int clip(const struct series *s, int64_t t0, int64_t t1, int64_t *a, int64_t *b)
{
	*a = t0 > s->t[0] ? t0 : s->t[0];
	*b = t1 < s->e[s->n - 1] ? t1 : s->e[s->n - 1];
	return *b > *a;
}

/* The mean over the time a sample holds in [t0, t1); 0 with *out set, or
 * 1 when there is none. */
static int window_mean(const struct series *s, int64_t t0, int64_t t1, double *out)
{
	int64_t a, b;
	if (!s->n || t1 <= t0)
		return 1;
	if (clip(s, t0, t1, &a, &b)) {
		double cov = area_to(s, s->cov, 0, b) - area_to(s, s->cov, 0, a);
		if (cov > 0) {
			*out = (area_to(s, s->area, 1, b) - area_to(s, s->area, 1, a)) / cov;
			return 0;
		}
	}
	/* a lone sample holds for no time but marks a window it falls in */
	if (s->lone && s->t[0] >= t0 && s->t[0] < t1) {
		*out = s->v[0];
		return 0;
	}
	return 1;
}

static double seg_max(const struct series *s, size_t l, size_t r) /* [l, r] */
{
	double m = -INFINITY;
	for (l += s->n, r += s->n + 1; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			m = fmax(m, s->seg[l++]);
		if (r & 1)
			m = fmax(m, s->seg[--r]);
	}
	return m;
}

static struct series *arg_series(sqlite3_context *ctx, sqlite3_value **argv, int nargs)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	for (int i = 0; i < nargs; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return NULL;
	char *err = NULL;
	struct series *s = series_get(f, sqlite3_value_int64(argv[0]), &err);
	if (!s) {
		sqlite3_result_error(ctx, err, -1);
		free(err);
	}
	return s;
}

static void fn_twmean(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 3);
	double m;
	if (s && !window_mean(s, sqlite3_value_int64(argv[1]), sqlite3_value_int64(argv[2]), &m))
		sqlite3_result_double(ctx, m);
}

static void fn_twmax(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 3);
	double m;
	if (!s)
		return;
	int64_t t0 = sqlite3_value_int64(argv[1]), t1 = sqlite3_value_int64(argv[2]);
	if (window_mean(s, t0, t1, &m))
		return;
	ptrdiff_t k0 = last_le(s, t0), k1 = last_lt(s, t1);
	if (k0 < 0 || (s->e[k0] <= t0 && !s->lone))
		k0++;
	if (k1 < k0)
		return;
	sqlite3_result_double(ctx, seg_max(s, (size_t)k0, (size_t)k1));
}

static void fn_valueat(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 2);
	if (!s || !s->n)
		return;
	int64_t t = sqlite3_value_int64(argv[1]);
	ptrdiff_t k = last_le(s, t);
	if (k >= 0 && (s->e[k] > t || (s->lone && s->t[k] == t)))
		sqlite3_result_double(ctx, s->v[k]);
}

static int64_t sat_to(const struct series *s, int64_t x)
{
	ptrdiff_t k = last_le(s, x);
	if (k < 0)
		return 0;
	int64_t end = x < s->e[k] ? x : s->e[k];
	return s->sat[k] + (s->v[k] >= s->sat_thr && end > s->t[k] ? ns_dur(s->t[k], end) : 0);
}

static void fn_satns(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct series *s = arg_series(ctx, argv, 3);
	if (!s)
		return;
	double thr = sqlite3_value_type(argv[3]) == SQLITE_NULL ? 0.95 * s->capacity
								: sqlite3_value_double(argv[3]);
	if (isnan(thr)) {
		sqlite3_result_error(ctx,
				     "the metric has no capacity: give a threshold"
				     " (saturated METRIC >= VALUE)",
				     -1);
		return;
	}
	if (!s->n) {
		sqlite3_result_int64(ctx, 0);
		return;
	}
	if (!s->sat || s->sat_thr != thr) {
		free(s->sat);
		s->sat = xmalloc((s->n + 1) * sizeof(int64_t));
		s->sat_thr = thr;
		s->sat[0] = 0;
		for (size_t i = 1; i <= s->n; i++)
			s->sat[i] =
			    ns_sum(s->sat[i - 1],
				   s->v[i - 1] >= thr ? ns_dur(s->t[i - 1], s->e[i - 1]) : 0);
	}
	int64_t a, b, t0 = sqlite3_value_int64(argv[1]), t1 = sqlite3_value_int64(argv[2]);
	sqlite3_result_int64(ctx,
			     t1 > t0 && clip(s, t0, t1, &a, &b) ? sat_to(s, b) - sat_to(s, a) : 0);
}

/* ---- gm_hagg: GROUP BY through a hash table ----
 *
 * gm_hagg(spec, key, x1, x2, ...): an aggregate that groups rows by an
 * integer key (or NULL) in a hash table and returns the groups as JSON,
 * [[key, a1, a2, ...], ...], for json_each.  spec has one letter per
 * aggregate: c count(*), C count(x), s sum, n min, x max, a avg.  SQLite
 * groups by sorting every row; with few groups over millions of rows
 * hashing is several times faster (the top-10 budget of issue 6). */

struct hagg_cell {
	int64_t i; /* sum of integers, integer min/max, or count */
	double d;  /* sum of reals or real min/max */
	int64_t n; /* non-NULL values */
	int real;  /* d holds the value (a real was seen, or an int sum overflowed) */
};

struct hagg {
	char spec[32];
	size_t naggs;
	size_t cap, n;
	int64_t *keys;
	unsigned char *used;	 /* 1: key, 2: the NULL key's slot is keys[cap] */
	struct hagg_cell *cells; /* (cap + 1) x naggs */
};

static size_t hagg_find(struct hagg *h, int64_t key, int isnull)
{
	if (isnull)
		return h->cap;
	size_t mask = h->cap - 1;
	for (size_t i = hash64(key) & mask;; i = (i + 1) & mask)
		if (!h->used[i] || h->keys[i] == key)
			return i;
}

static void hagg_grow(struct hagg *h)
{
	struct hagg old = *h;
	h->cap = old.cap ? old.cap * 2 : 64;
	h->keys = xcalloc(h->cap + 1, sizeof(int64_t));
	h->used = xcalloc(h->cap + 1, 1);
	h->cells = xcalloc((h->cap + 1) * h->naggs, sizeof(struct hagg_cell));
	for (size_t i = 0; i < old.cap; i++)
		if (old.used[i]) {
			size_t k = hagg_find(h, old.keys[i], 0);
			h->used[k] = 1;
			h->keys[k] = old.keys[i];
			memcpy(&h->cells[k * h->naggs], &old.cells[i * h->naggs],
			       h->naggs * sizeof(struct hagg_cell));
		}
	if (old.cap && old.used[old.cap]) {
		h->used[h->cap] = 2;
		memcpy(&h->cells[h->cap * h->naggs], &old.cells[old.cap * h->naggs],
		       h->naggs * sizeof(struct hagg_cell));
	}
	free(old.keys);
	free(old.used);
	free(old.cells);
}

static void hagg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct hagg **hp = sqlite3_aggregate_context(ctx, sizeof(*hp));
	if (!hp) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	struct hagg *h = *hp;
	if (!h) {
		const char *spec = (const char *)sqlite3_value_text(argv[0]);
		size_t n = spec ? strlen(spec) : 0;
		if (!n || n >= sizeof(h->spec) || n != (size_t)argc - 2) {
			sqlite3_result_error(ctx, "gm_hagg: bad spec", -1);
			return;
		}
		h = *hp = xcalloc(1, sizeof(*h));
		memcpy(h->spec, spec, n);
		h->naggs = n;
		hagg_grow(h);
	}
	int isnull = sqlite3_value_type(argv[1]) == SQLITE_NULL;
	int64_t key = sqlite3_value_int64(argv[1]);
	size_t k = hagg_find(h, key, isnull);
	if (!h->used[k]) {
		if (!isnull && (h->n + 1) * 2 > h->cap) {
			hagg_grow(h);
			k = hagg_find(h, key, 0);
		}
		h->used[k] = isnull ? 2 : 1;
		h->keys[k] = key;
		h->n += !isnull;
	}
	struct hagg_cell *c = &h->cells[k * h->naggs];
	for (size_t a = 0; a < h->naggs; a++, c++) {
		sqlite3_value *v = argv[a + 2];
		int t = sqlite3_value_type(v);
		if (h->spec[a] == 'c') {
			c->n++;
			continue;
		}
		if (t == SQLITE_NULL)
			continue;
		int isint = t == SQLITE_INTEGER;
		int64_t iv = isint ? sqlite3_value_int64(v) : 0;
		double dv = sqlite3_value_double(v);
		switch (h->spec[a]) {
		case 'C':
			break;
		case 's':
		case 'a':
			if (!c->real && (!isint || __builtin_add_overflow(c->i, iv, &c->i))) {
				c->real = 1;
				c->d = (double)c->i;
				c->d += dv;
			} else if (c->real) {
				c->d += dv;
			}
			break;
		case 'n':
		case 'x': {
			double cur = c->real ? c->d : (double)c->i;
			int better = !c->n || (h->spec[a] == 'n' ? dv < cur : dv > cur);
			if (better) {
				c->real = !isint;
				c->i = iv;
				c->d = dv;
			}
			break;
		}
		}
		c->n++;
	}
}

static void hagg_value(struct sbuf *out, const struct hagg_cell *c, char op)
{
	if (op == 'c' || op == 'C') {
		sbuf_addf(out, "%lld", (long long)c->n);
	} else if (!c->n) {
		sbuf_adds(out, "null");
	} else if (op == 'a' || c->real) {
		/* a real stays a real through JSON: 3000 would read back as an integer */
		double d = op == 'a' ? (c->real ? c->d : (double)c->i) / (double)c->n : c->d;
		if (!isfinite(d)) {
			sbuf_adds(out, "null");
			return;
		}
		size_t at = out->len;
		sbuf_addf(out, "%.17g", d);
		if (!strpbrk(out->buf + at, ".e"))
			sbuf_adds(out, ".0");
	} else {
		sbuf_addf(out, "%lld", (long long)c->i);
	}
}

static void hagg_final(sqlite3_context *ctx)
{
	struct hagg **hp = sqlite3_aggregate_context(ctx, 0);
	struct hagg *h = hp ? *hp : NULL;
	struct sbuf sb;
	sbuf_init(&sb);
	sbuf_addc(&sb, '[');
	int first = 1;
	for (size_t k = 0; h && k <= h->cap; k++) {
		if (!h->used[k])
			continue;
		sbuf_adds(&sb, first ? "[" : ",[");
		first = 0;
		if (h->used[k] == 2)
			sbuf_adds(&sb, "null");
		else
			sbuf_addf(&sb, "%lld", (long long)h->keys[k]);
		for (size_t a = 0; a < h->naggs; a++) {
			sbuf_addc(&sb, ',');
			hagg_value(&sb, &h->cells[k * h->naggs + a], h->spec[a]);
		}
		sbuf_addc(&sb, ']');
	}
	sbuf_addc(&sb, ']');
	sqlite3_result_text(ctx, sb.buf, (int)sb.len, SQLITE_TRANSIENT);
	sbuf_release(&sb);
	if (h) {
		free(h->keys);
		free(h->used);
		free(h->cells);
		free(h);
	}
}

/* ---- gm_pct ---- */

struct pct_acc {
	double *v;
	size_t n, alloc;
	double p;
};

static void pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct pct_acc *a = sqlite3_aggregate_context(ctx, sizeof(*a));
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	XGROW(a->v, a->n + 1, a->alloc);
	a->v[a->n++] = sqlite3_value_double(argv[0]);
	a->p = sqlite3_value_double(argv[1]);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static void pct_final(sqlite3_context *ctx)
{
	struct pct_acc *a = sqlite3_aggregate_context(ctx, 0);
	if (!a || !a->n) {
		if (a)
			free(a->v);
		return;
	}
	qsort(a->v, a->n, sizeof(double), cmp_double);
	double p = a->p < 0 ? 0 : a->p > 100 ? 100 : a->p;
	double rank = p / 100.0 * (double)(a->n - 1);
	size_t lo = (size_t)floor(rank), hi = lo + 1 < a->n ? lo + 1 : lo;
	double r = a->v[lo] + (a->v[hi] - a->v[lo]) * (rank - (double)lo);
	sqlite3_result_double(ctx, r);
	free(a->v);
}

/* ---- gm_wset, gm_near ----
 *
 * within's nearest window.  gm_wset(wid, w0, w1), an aggregate over a
 * window CTE, keeps the windows as a set and returns its number; the
 * compiler passes it, as an uncorrelated subquery (which SQLite evaluates
 * once), to gm_near(set, t0, t1, d[, self]) per row: the window with the
 * least gap max(w0 - t1, t0 - w1, 0) <= d, the lowest wid among equals,
 * other than self; NULL when none or when an argument is NULL, as the SQL
 * it replaces (which cost O(windows^2) a row: minutes for 230 windows).
 * A window with a NULL bound is never near anything. */

struct wset_acc {
	struct wset *w;
};

static void wset_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct wset_acc *a = sqlite3_aggregate_context(ctx, sizeof(*a));
	if (!a) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!a->w)
		a->w = xcalloc(1, sizeof(*a->w));
	for (int i = 0; i < 3; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	struct wset *w = a->w;
	XGROW(w->v, w->n + 1, w->alloc);
	w->v[w->n++] = (struct wwin){sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]),
				     sqlite3_value_int64(argv[2])};
}

static int cmp_wwin(const void *x, const void *y)
{
	const struct wwin *a = x, *b = y;
	if (a->w0 != b->w0)
		return a->w0 < b->w0 ? -1 : 1;
	return (a->wid > b->wid) - (a->wid < b->wid);
}

static void wset_final(sqlite3_context *ctx)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	struct wset_acc *a = sqlite3_aggregate_context(ctx, 0);
	struct wset *w = a && a->w ? a->w : xcalloc(1, sizeof(*w));
	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), cmp_wwin);
	for (size_t i = 0; i < w->n; i++) {
		int64_t len;
		if (__builtin_sub_overflow(w->v[i].w1, w->v[i].w0, &len))
			len = w->v[i].w1 > w->v[i].w0 ? INT64_MAX : 0;
		if (len > w->maxlen)
			w->maxlen = len;
	}
	/* the same set as the last one (the WHERE and the column each ask
	 * for it): share it */
	struct wset *last = f->nwsets ? f->wsets[f->nwsets - 1] : NULL;
	if (last && last->n == w->n && last->maxlen == w->maxlen &&
	    (!w->n || !memcmp(last->v, w->v, w->n * sizeof(*w->v)))) {
		wset_free(w);
		sqlite3_result_int64(ctx, (int64_t)f->nwsets - 1);
		return;
	}
	f->wsets = xrealloc(f->wsets, (f->nwsets + 1) * sizeof(*f->wsets));
	f->wsets[f->nwsets++] = w;
	sqlite3_result_int64(ctx, (int64_t)f->nwsets - 1);
}

__extension__ typedef __int128 i128;

static void fn_near(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	int64_t k = sqlite3_value_int64(argv[0]);
	if (k < 0 || (uint64_t)k >= f->nwsets) {
		sqlite3_result_error(ctx, "gm_near: no such window set", -1);
		return;
	}
	const struct wset *w = f->wsets[k];
	i128 t0 = sqlite3_value_int64(argv[1]), t1 = sqlite3_value_int64(argv[2]);
	i128 d = sqlite3_value_int64(argv[3]);
	int has_self = argc > 4;
	int64_t self = has_self ? sqlite3_value_int64(argv[4]) : 0;
	/* gap <= d needs w0 <= t1 + d and w1 >= t0 - d, so w0 >= t0 - d - maxlen */
	i128 lo = t0 - d - w->maxlen, hi = t1 + d;
	size_t a = 0, b = w->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if ((i128)w->v[m].w0 < lo)
			a = m + 1;
		else
			b = m;
	}
	const struct wwin *best = NULL;
	i128 best_gap = 0;
	for (size_t i = a; i < w->n && (i128)w->v[i].w0 <= hi; i++) {
		const struct wwin *x = &w->v[i];
		if (has_self && x->wid == self)
			continue;
		i128 g = (i128)x->w0 - t1, g2 = t0 - (i128)x->w1;
		if (g2 > g)
			g = g2;
		if (g < 0)
			g = 0;
		if (g > d)
			continue;
		if (!best || g < best_gap || (g == best_gap && x->wid < best->wid)) {
			best = x;
			best_gap = g;
		}
	}
	if (best)
		sqlite3_result_int64(ctx, best->wid);
}

/* ---- gm_running ----
 *
 * The phase running at an event without a phase_id: among the phases on
 * its track that contain its time, the deepest (then the latest start),
 * else the same among all phases.  As SQL that is two scans of phases per
 * event (no index serves it); here the first call collects the (track, t)
 * of every such event, and one scan of phases in id order answers them
 * all: a phase updates the events inside it, so among equals the lowest
 * id wins, as SQLite's ORDER BY ... LIMIT 1 over the same scan.  A call
 * for another (track, t), or a file whose values are not integers, runs
 * the SQL. */

#define RUNNING_TRACK_SQL                                                                          \
	"SELECT q.id FROM phases q WHERE q.track_id = ?1 AND q.start_ns <= ?2"                     \
	" AND q.start_ns + q.dur_ns > ?2 ORDER BY q.depth DESC, q.start_ns DESC LIMIT 1"
#define RUNNING_ANY_SQL                                                                            \
	"SELECT q.id FROM phases q WHERE q.start_ns <= ?1 AND q.start_ns + q.dur_ns > ?1"          \
	" ORDER BY q.depth DESC, q.start_ns DESC LIMIT 1"

struct rbest {
	int64_t id, depth, start;
	int found;
};

struct rkey {
	int64_t t, track;
	int has_track;
	struct rbest on_track, any;
};

static int cmp_rkey(const struct rkey *a, int64_t t, int has_track, int64_t track)
{
	if (a->t != t)
		return a->t < t ? -1 : 1;
	if (a->has_track != has_track)
		return a->has_track < has_track ? -1 : 1;
	return (a->track > track) - (a->track < track);
}

static int cmp_rkey_q(const void *x, const void *y)
{
	const struct rkey *b = y;
	return cmp_rkey(x, b->t, b->has_track, b->track);
}

static void rbest_offer(struct rbest *b, int64_t id, int64_t depth, int64_t start)
{
	if (!b->found || depth > b->depth || (depth == b->depth && start > b->start)) {
		b->id = id;
		b->depth = depth;
		b->start = start;
		b->found = 1;
	}
}

/* Builds f->rkeys; 0, 1 when the file needs the SQL, -1 on an error. */
static int running_load(struct qfuncs *f)
{
	sqlite3_stmt *q = NULL;
	size_t alloc = 0;
	int rc = -1, step;
	if (sqlite3_prepare_v2(f->db,
			       "SELECT DISTINCT track_id, t_ns FROM events WHERE phase_id IS NULL",
			       -1, &q, NULL) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int tt = sqlite3_column_type(q, 0);
		if (sqlite3_column_type(q, 1) != SQLITE_INTEGER ||
		    (tt != SQLITE_INTEGER && tt != SQLITE_NULL)) {
			rc = 1;
			goto out;
		}
		XGROW(f->rkeys, f->nrkeys + 1, alloc);
		struct rkey *k = &f->rkeys[f->nrkeys++];
		memset(k, 0, sizeof(*k));
		k->t = sqlite3_column_int64(q, 1);
		k->has_track = tt == SQLITE_INTEGER;
		k->track = k->has_track ? sqlite3_column_int64(q, 0) : 0;
	}
	if (step != SQLITE_DONE)
		goto out;
	sqlite3_finalize(q);
	q = NULL;
	if (!f->nrkeys) {
		rc = 0;
		goto out;
	}
	qsort(f->rkeys, f->nrkeys, sizeof(*f->rkeys), cmp_rkey_q);
	if (sqlite3_prepare_v2(
		f->db, "SELECT id, track_id, start_ns, dur_ns, depth FROM phases ORDER BY id", -1,
		&q, NULL) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int tt = sqlite3_column_type(q, 1);
		if (sqlite3_column_type(q, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 2) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 3) != SQLITE_INTEGER ||
		    sqlite3_column_type(q, 4) != SQLITE_INTEGER ||
		    (tt != SQLITE_INTEGER && tt != SQLITE_NULL)) {
			rc = 1;
			goto out;
		}
		int64_t id = sqlite3_column_int64(q, 0), track = sqlite3_column_int64(q, 1);
		int64_t start = sqlite3_column_int64(q, 2), dur = sqlite3_column_int64(q, 3);
		int64_t depth = sqlite3_column_int64(q, 4), end;
		int open_end = 0; /* start + dur beyond int64: SQLite's real sum exceeds any t */
		if (__builtin_add_overflow(start, dur, &end)) {
			if (dur < 0)
				continue;
			open_end = 1;
		}
		size_t a = 0, b = f->nrkeys;
		while (a < b) {
			size_t m = a + (b - a) / 2;
			if (f->rkeys[m].t < start)
				a = m + 1;
			else
				b = m;
		}
		for (size_t i = a; i < f->nrkeys && (open_end || f->rkeys[i].t < end); i++) {
			struct rkey *k = &f->rkeys[i];
			rbest_offer(&k->any, id, depth, start);
			if (k->has_track && tt == SQLITE_INTEGER && k->track == track)
				rbest_offer(&k->on_track, id, depth, start);
		}
	}
	rc = step == SQLITE_DONE ? 0 : -1;
out:
	sqlite3_finalize(q);
	if (rc != 0) {
		free(f->rkeys);
		f->rkeys = NULL;
		f->nrkeys = 0;
	}
	return rc;
}

/* One of the two SQL lookups into *id; 1 found, 0 not, -1 on an error. */
static int running_sql(struct qfuncs *f, sqlite3_stmt **q, const char *sql, sqlite3_value *track,
		       sqlite3_value *t, int64_t *id)
{
	if (!*q && sqlite3_prepare_v2(f->db, sql, -1, q, NULL) != SQLITE_OK)
		return -1;
	if (track)
		sqlite3_bind_value(*q, 1, track);
	sqlite3_bind_value(*q, track ? 2 : 1, t);
	int step = sqlite3_step(*q);
	int found = step == SQLITE_ROW && sqlite3_column_type(*q, 0) != SQLITE_NULL;
	if (found)
		*id = sqlite3_column_int64(*q, 0);
	sqlite3_reset(*q);
	return step == SQLITE_ROW || step == SQLITE_DONE ? found : -1;
}

static void fn_running(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct qfuncs *f = sqlite3_user_data(ctx);
	int tt = sqlite3_value_type(argv[0]), ty = sqlite3_value_type(argv[1]);
	if (!f->running_loaded) {
		f->running_loaded = 1;
		if (running_load(f) < 0) {
			sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
			return;
		}
	}
	if (ty == SQLITE_INTEGER && (tt == SQLITE_INTEGER || tt == SQLITE_NULL) && f->nrkeys) {
		struct rkey key = {.t = sqlite3_value_int64(argv[1]),
				   .has_track = tt == SQLITE_INTEGER,
				   .track =
				       tt == SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) : 0};
		const struct rkey *k =
		    bsearch(&key, f->rkeys, f->nrkeys, sizeof(*f->rkeys), cmp_rkey_q);
		if (k) {
			const struct rbest *b = k->on_track.found ? &k->on_track : &k->any;
			if (b->found)
				sqlite3_result_int64(ctx, b->id);
			return;
		}
	}
	int64_t id;
	int r = running_sql(f, &f->running_track_q, RUNNING_TRACK_SQL, argv[0], argv[1], &id);
	if (r == 0)
		r = running_sql(f, &f->running_any_q, RUNNING_ANY_SQL, NULL, argv[1], &id);
	if (r < 0)
		sqlite3_result_error(ctx, sqlite3_errmsg(f->db), -1);
	else if (r == 1)
		sqlite3_result_int64(ctx, id);
}

void query_funcs_idle(struct qfuncs *f)
{
	if (f) {
		sqlite3_finalize(f->path_q);
		f->path_q = NULL;
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
	static const struct {
		const char *name;
		int nargs;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} table[] = {
	    {"regexp", 2, fn_regexp},	   {"gm_path", 1, fn_path},   {"gm_metric", 3, fn_metric},
	    {"gm_twmean", 3, fn_twmean},   {"gm_twmax", 3, fn_twmax}, {"gm_satns", 4, fn_satns},
	    {"gm_valueat", 2, fn_valueat}, {"gm_str", 1, fn_str},     {"gm_kind", 1, fn_kind},
	    {"gm_running", 2, fn_running},
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
						hagg_step, hagg_final, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "gm_wset", 3, SQLITE_UTF8, f, NULL, wset_step,
						wset_final, NULL);
	for (int n = 4; rc == SQLITE_OK && n <= 5; n++)
		rc = sqlite3_create_function_v2(db, "gm_near", n, SQLITE_UTF8, f, fn_near, NULL,
						NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "gm_pct", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
						NULL, NULL, pct_step, pct_final, NULL);
	if (rc != SQLITE_OK) {
		*err = xasprintf("cannot register query functions: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (out)
		*out = f;
	return 0;
}
