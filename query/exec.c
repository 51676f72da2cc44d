/*
 * Running queries (see exec.h): the read-only connection, the authorizer,
 * the metric check, the result table, and completion.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "model/store/col.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/text.h"
#include "query/exec.h"
#include "query/funcs.h"
#include "query/lexer.h"
#include "query/tempcap.h"
#include "model/util/xalloc.h"

/* ---- limits ---- */

/* A running query's limits, as its progress and busy handlers see them. */
struct guard {
	const struct query_limits *lim;
	int64_t deadline;   /* CLOCK_MONOTONIC ns: the time limit; INT64_MAX none */
	int64_t busy_until; /* how long a writer's lock is waited for */
	enum { GUARD_RUNNING, GUARD_TIME, GUARD_STOP } why;
};

/* Without a time limit a query waits this long for a writer's lock. */
#define GUARD_BUSY_NS (60 * (int64_t)1000000000)

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void guard_init(struct guard *g, const struct query_limits *lim)
{
	int64_t now = mono_ns(), t = lim ? lim->timeout_ns : 0;
	g->lim = lim;
	g->deadline = t > 0 && t < INT64_MAX - now ? now + t : INT64_MAX;
	g->busy_until = t > 0 ? g->deadline : now + GUARD_BUSY_NS;
	g->why = GUARD_RUNNING;
}

/* 1 when the query must stop now (the reason in g->why). */
static int guard_expired(struct guard *g, int64_t until)
{
	if (g->lim && g->lim->stop && g->lim->stop(g->lim->ctx)) {
		g->why = GUARD_STOP;
		return 1;
	}
	int64_t now = mono_ns();
	if (now >= g->deadline)
		g->why = GUARD_TIME;
	return now >= until;
}

/* SQLite's progress handler: a non-zero return interrupts the statement. */
static int guard_progress(void *ctx)
{
	struct guard *g = ctx;
	return guard_expired(g, g->deadline);
}

/* SQLite's busy handler: 1 to try the lock again, 0 to give up. */
static int guard_busy(void *ctx, int tries)
{
	struct guard *g = ctx;
	if (guard_expired(g, g->busy_until))
		return 0;
	sqlite3_sleep(tries < 10 ? 1 : 10);
	return 1;
}

/* The caps a query with a memory limit runs under, and what they replace. */
struct caps {
	int on;
	int64_t max;		      /* the limit: SQLite's memory and the result's */
	int copies;		      /* the result counts this many times (query_limits) */
	int64_t prev_heap, prev_temp; /* the process's caps before */
	int prev_length;	      /* the connection's SQLITE_LIMIT_LENGTH before */
};

/* Caps SQLite's heap and temporary files at lim's memory limit, and any
 * one string or blob at half of it: a value is held twice while it is read
 * (SQLite's and the result's copy), so a longer one could not fit, and
 * SQLite fails it (SQLITE_TOOBIG) before taking its memory. */
static void caps_set(struct caps *c, sqlite3 *db, const struct query_limits *lim)
{
	memset(c, 0, sizeof(*c));
	if (!lim || lim->max_memory <= 0)
		return;
	c->on = 1;
	c->max = lim->max_memory;
	c->copies = lim->result_copies > 1 ? lim->result_copies : 1;
	c->prev_heap = sqlite3_hard_heap_limit64(c->max);
	c->prev_temp = tempcap_set(c->max);
	c->prev_length = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
	if (c->max / 2 < c->prev_length)
		sqlite3_limit(db, SQLITE_LIMIT_LENGTH, (int)(c->max / 2));
}

/* Puts db back as query_open left it, and the caps as they were. */
static void guard_release(sqlite3 *db, const struct caps *c)
{
	sqlite3_progress_handler(db, 0, NULL, NULL);
	sqlite3_busy_handler(db, NULL, NULL);
	if (c->on) {
		sqlite3_hard_heap_limit64(c->prev_heap);
		tempcap_set(c->prev_temp);
		sqlite3_limit(db, SQLITE_LIMIT_LENGTH, c->prev_length);
	}
}

/* Whether the result, holding `held` bytes, may take `more` bytes more
 * while SQLite holds what it holds (the row being read included); SQLite's
 * own cap then comes down to what the result leaves, so that the two
 * together stay within the limit.  The result counts as many times as the
 * caller will hold it. */
static int caps_allow(const struct caps *c, int64_t held, int64_t more)
{
	if (!c->on)
		return 1;
	held *= c->copies;
	more *= c->copies;
	if (held + more + sqlite3_memory_used() > c->max)
		return 0;
	if (more > 0) /* at least 1: 0 would lift the cap */
		sqlite3_hard_heap_limit64(c->max - held - more > 0 ? c->max - held - more : 1);
	return 1;
}

/* "1 GiB", "512 MiB", or bytes: a limit as the user would have typed it. */
static char *size_text(int64_t n)
{
	static const char *const unit[] = {"GiB", "MiB", "KiB"};
	for (int i = 0; i < 3; i++) {
		int64_t u = (int64_t)1 << (30 - 10 * i);
		if (n >= u && n % u == 0)
			return xasprintf("%lld %s", (long long)(n / u), unit[i]);
	}
	return xasprintf("%lld bytes", (long long)n);
}

/* The message for a query that failed while running with rc. */
static char *run_error(sqlite3 *db, const struct guard *g, int rc)
{
	const struct query_limits *lim = g->lim;
	if (g->why == GUARD_STOP)
		return xstrdup("query stopped");
	if (g->why == GUARD_TIME && lim && lim->timeout_ns > 0) {
		char d[32];
		text_duration(d, sizeof(d), lim->timeout_ns);
		return xasprintf("query stopped after %s; raise --timeout", d);
	}
	if ((rc == SQLITE_NOMEM || rc == SQLITE_TOOBIG || (rc == SQLITE_FULL && tempcap_hit())) &&
	    lim && lim->max_memory > 0) {
		char *m = size_text(lim->max_memory);
		char *e =
		    xasprintf("query stopped: it needs more than %s of %s; raise --max-memory", m,
			      rc == SQLITE_FULL ? "temporary files" : "memory");
		free(m);
		return e;
	}
	return xasprintf("query failed: %s", sqlite3_errmsg(db));
}

int query_open(const char *path, const struct query_limits *lim, sqlite3 **db, char **err)
{
	struct guard g;
	*db = NULL;
	/* what store_open accepts, no more (model/store/store.h) */
	int exists = store_check_path(path, NULL, err);
	if (exists <= 0) {
		if (!exists)
			*err = xasprintf("%s: cannot open: %s", path, strerror(ENOENT));
		return -1;
	}
	store_tidy(path); /* a killed import's WAL mode, as store_open does */
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, tempcap_vfs()) !=
	    SQLITE_OK) {
		*err =
		    xasprintf("%s: cannot open: %s", path, *db ? sqlite3_errmsg(*db) : "no memory");
		goto fail;
	}
	guard_init(&g, lim);
	sqlite3_busy_handler(*db, guard_busy, &g);
	char *why = NULL;
	if (sqlite3_exec(*db, "PRAGMA query_only = 1", NULL, NULL, NULL) != SQLITE_OK ||
	    store_check_db(*db, path, &why) < 0) {
		char d[32];
		if (g.why == GUARD_TIME)
			*err = xasprintf("%s: still locked by a writer after %s; raise --timeout",
					 path, text_duration(d, sizeof(d), lim->timeout_ns));
		else if (g.why == GUARD_STOP)
			*err = xasprintf("%s: stopped waiting for a writer", path);
		else if (why) {
			*err = why;
			why = NULL;
		} else
			*err = xasprintf("%s: cannot read: %s", path, sqlite3_errmsg(*db));
		free(why);
		goto fail;
	}
	sqlite3_busy_handler(*db, NULL, NULL);
	/* SQLite's default page cache: a larger one only adds page faults to a
	 * scan the OS cache serves anyway (64 MiB made the top-10 bench 0.99 s
	 * instead of 0.68 s) */
	return 0;
fail:
	sqlite3_close(*db);
	*db = NULL;
	return -1;
}

void query_close(sqlite3 *db)
{
	sqlite3_close(db);
}

/* Functions no query may call, even if a build of SQLite has them. */
static const char *const denied_functions[] = {
    "load_extension", "writefile", "readfile",	       "edit", "fts3_tokenizer",
    "sqlite_dbpage",  "zipfile",   "shell_add_schema", NULL};
/* PRAGMAs that only read: with a table or index name as their argument... */
static const char *const pragma_named[] = {"table_info", "table_xinfo", "index_list",
					   "index_info", "index_xinfo", "foreign_key_list",
					   NULL};
/* ...and with no argument at all (an argument would set them). */
static const char *const pragma_plain[] = {
    "user_version", "application_id",  "schema_version", "page_count",
    "page_size",    "freelist_count",  "database_list",	 "function_list",
    "table_list",   "compile_options", "collation_list", "module_list",
    "pragma_list",  "data_version",    "encoding",	 NULL};

static int in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; s && list[i]; i++)
		if (!strcasecmp(s, list[i]))
			return 1;
	return 0;
}

/* Whether table is a PRAGMA's table-valued form (pragma_table_info) of a
 * PRAGMA the lists above allow. */
static int pragma_table_allowed(const char *table)
{
	if (!table || strncasecmp(table, "pragma_", 7))
		return 1; /* not a pragma's table */
	return in_list(table + 7, pragma_named) || in_list(table + 7, pragma_plain);
}

/* SQLite creates an eponymous virtual table (json_each, pragma_table_info,
 * query/funcs_gaps.c's gm_gaps)
 * on its first use in a connection and, while it does, asks the authorizer
 * for SQLITE_UPDATE on each column of sqlite_master, which a real UPDATE
 * of the schema asks too.  Creating the ones a query may use here, before
 * the authorizer is set, lets it deny every UPDATE.  Only when sql names
 * one: each costs a prepare. */
static void warm_virtual_tables(sqlite3 *db, const char *sql)
{
	static const char *const json[] = {"json_each", "json_tree", "gm_gaps", NULL};
	const char *const *lists[] = {json, pragma_named, pragma_plain};
	if (!strcasestr(sql, "json_") && !strcasestr(sql, "pragma_") && !strcasestr(sql, "gm_gaps"))
		return;
	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; lists[l][i]; i++) {
			char *q = xasprintf("SELECT 1 FROM %s%s", l ? "pragma_" : "", lists[l][i]);
			sqlite3_stmt *st = NULL;
			if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK)
				sqlite3_finalize(st);
			free(q);
		}
}

int query_authorizer(void *unused, int action, const char *a, const char *b, const char *db,
		     const char *trigger)
{
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_READ:
		return pragma_table_allowed(a) ? SQLITE_OK : SQLITE_DENY;
	case SQLITE_FUNCTION:
		return in_list(b, denied_functions) ? SQLITE_DENY : SQLITE_OK;
	case SQLITE_PRAGMA:
		if (in_list(a, pragma_named) || (!b && in_list(a, pragma_plain)))
			return SQLITE_OK;
		return SQLITE_DENY;
	default: /* writes, UPDATE of sqlite_master included: see warm_virtual_tables */
		return SQLITE_DENY;
	}
}

/* Checks the metrics a plan names: each must exist (and have a capacity
 * where saturated needs one). */
static int check_metrics(sqlite3 *db, const struct query_plan *plan, struct query_error *e)
{
	sqlite3_stmt *q = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(db,
			       "SELECT count(*), max(capacity > 0), max(host IS ?2)"
			       " FROM metrics WHERE name = ?1 OR (resource || '.' || name) = ?1",
			       -1, &q, NULL) != SQLITE_OK) {
		query_error_set(e, 0, 1, xasprintf("cannot read metrics: %s", sqlite3_errmsg(db)),
				NULL);
		return -1;
	}
	for (size_t i = 0; i < plan->nmrefs; i++) {
		const struct query_mref *m = &plan->mrefs[i];
		sqlite3_reset(q);
		sqlite3_bind_text(q, 1, m->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, m->host, -1, SQLITE_STATIC);
		if (sqlite3_step(q) != SQLITE_ROW) {
			query_error_set(e, 0, 1,
					xasprintf("cannot read metrics: %s", sqlite3_errmsg(db)),
					NULL);
			goto out;
		}
		if (col_int(q, 0) == 0) {
			/* the closest name, among names and resource.names */
			sqlite3_stmt *all;
			const char **cands = NULL;
			char **own = NULL;
			size_t n = 0, alloc = 0, oalloc = 0;
			if (sqlite3_prepare_v2(
				db,
				"SELECT DISTINCT name FROM metrics UNION"
				" SELECT DISTINCT resource || '.' || name FROM metrics"
				" WHERE resource IS NOT NULL",
				-1, &all, NULL) == SQLITE_OK) {
				while (sqlite3_step(all) == SQLITE_ROW) {
					const char *t = col_text_or_null(all, 0);
					XGROW(own, n + 1, oalloc);
					XGROW(cands, n + 2, alloc);
					own[n] = xstrdup(t ? t : "");
					cands[n] = own[n];
					n++;
				}
				sqlite3_finalize(all);
			}
			const char *sug = NULL;
			if (n) {
				cands[n] = NULL;
				sug = query_suggest(m->name, cands);
			}
			query_error_set(e, m->pos, m->len,
					xasprintf("unknown metric '%s'", m->name),
					sug ? xasprintf("did you mean '%s'?", sug)
					    : xstrdup(n ? "`metrics` lists the metrics of this file"
							: "this file has no metrics"));
			for (size_t k = 0; k < n; k++)
				free(own[k]);
			free(own);
			free(cands);
			goto out;
		}
		if (m->host && col_int(q, 2) != 1) {
			query_error_set(e, m->pos, m->len,
					xasprintf("no metric '%s' on host '%s'", m->name, m->host),
					xstrdup("`metrics | select name, host` lists them"));
			goto out;
		}
		if (m->need_capacity && col_int(q, 1) != 1) {
			query_error_set(
			    e, m->pos, m->len, xasprintf("metric '%s' has no capacity", m->name),
			    xasprintf("give a threshold: saturated %s >= VALUE", m->name));
			goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(q);
	return rc;
}

static void bind_params(sqlite3_stmt *st, const struct query_plan *plan)
{
	for (size_t i = 0; i < plan->nparams; i++) {
		const struct query_param *p = &plan->params[i];
		int k = (int)i + 1;
		switch (p->type) {
		case QP_INT:
			sqlite3_bind_int64(st, k, p->i);
			break;
		case QP_REAL:
			sqlite3_bind_double(st, k, p->r);
			break;
		case QP_TEXT:
			sqlite3_bind_text(st, k, p->s, -1, SQLITE_STATIC);
			break;
		case QP_NULL:
			sqlite3_bind_null(st, k);
			break;
		}
	}
}

static int is_blank(const char *s)
{
	for (; *s; s++) {
		if (*s == '-' && s[1] == '-') { /* a trailing comment */
			while (*s && *s != '\n')
				s++;
			if (!*s)
				break;
			continue;
		}
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != ';')
			return 0;
	}
	return 1;
}

/* The result's strings live in blocks chained through their first word:
 * one allocation per 64 KiB of text, not one per cell. */
struct text_block {
	struct text_block *next;
	size_t used, cap;
	char data[];
};

static char *text_copy(struct query_result *r, const char *s, size_t n)
{
	struct text_block *b = r->text;
	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > 65536 ? n + 1 : 65536;
		struct text_block *nb = xmalloc(sizeof(*nb) + cap);
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		r->text = b = nb;
	}
	char *d = b->data + b->used;
	if (b->used == 0)
		r->text_bytes += sizeof(*b) + b->cap;
	memcpy(d, s, n);
	d[n] = '\0';
	b->used += n + 1;
	return d;
}

char *query_result_text(struct query_result *r, const char *s, size_t n)
{
	return text_copy(r, s, n);
}

/* Texts repeat (names, kinds, paths of siblings): a direct-mapped table of
 * the texts last copied, by hash, lets a repeat share the earlier copy. */
#define TEXT_SEEN 1024

struct text_seen {
	uint64_t hash;
	size_t n;
	const char *s;
};

/* A hash of n bytes, eight at a time: only to pick a slot, which memcmp
 * then checks. */
static uint64_t text_hash(const char *s, size_t n)
{
	const uint64_t k = UINT64_C(0x9e3779b97f4a7c15);
	uint64_t h = n * k, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * k;
	return h ^ (h >> 32);
}

/* The bytes text_copy allocates for n bytes of text: a new block, or none. */
static int64_t text_need(const struct query_result *r, size_t n)
{
	const struct text_block *b = r->text;
	if (b && b->cap - b->used >= n + 1)
		return 0;
	return (int64_t)(sizeof(*b) + (n + 1 > 65536 ? n + 1 : 65536));
}

/* s[0..n) in r, shared with an equal text copied before; NULL when the copy
 * would take r (with its cells of cells_bytes) past the caps. */
static char *text_intern(struct query_result *r, struct text_seen *seen, const char *s, size_t n,
			 const struct caps *c, int64_t cells_bytes)
{
	uint64_t h = text_hash(s, n);
	struct text_seen *e = &seen[h % TEXT_SEEN];
	if (e->s && e->hash == h && e->n == n && !memcmp(e->s, s, n))
		return (char *)e->s;
	if (!caps_allow(c, cells_bytes + (int64_t)r->text_bytes, text_need(r, n)))
		return NULL;
	e->hash = h;
	e->n = n;
	e->s = text_copy(r, s, n);
	return (char *)e->s;
}

void query_result_release(struct query_result *r)
{
	for (size_t i = 0; i < r->ncols; i++)
		free(r->cols[i].name);
	free(r->cols);
	for (struct text_block *b = r->text, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(r->cells);
	memset(r, 0, sizeof(*r));
	r->phase_col = -1;
}

void query_result_init(struct query_result *r, const struct query_column *cols, size_t ncols,
		       size_t nrows)
{
	memset(r, 0, sizeof(*r));
	r->phase_col = -1;
	r->ncols = ncols;
	r->nrows = nrows;
	r->cols = xcalloc(ncols ? ncols : 1, sizeof(*r->cols));
	for (size_t c = 0; c < ncols; c++) {
		r->cols[c].name = xstrdup(cols[c].name);
		r->cols[c].type = cols[c].type;
		if (cols[c].type == QC_PHASE && r->phase_col < 0)
			r->phase_col = (int)c;
	}
	r->cells = xcalloc(nrows * ncols + 1, sizeof(*r->cells));
}

/* Adds the row st holds to out: SQLITE_ROW, or SQLITE_NOMEM when it does
 * not fit the caps (a cell array that doubles counts both arrays while it
 * is copied). */
static int read_row(sqlite3 *db, sqlite3_stmt *st, struct query_result *out, struct text_seen *seen,
		    size_t *alloc, const struct caps *caps)
{
	size_t need = (out->nrows + 1) * out->ncols;
	int64_t cells = (int64_t)(*alloc * sizeof(*out->cells));
	if (need > *alloc) {
		size_t grown = *alloc ? *alloc * 2 : 16;
		while (grown < need)
			grown *= 2;
		if (!caps_allow(caps, cells + (int64_t)out->text_bytes,
				(int64_t)(grown * sizeof(*out->cells))))
			return SQLITE_NOMEM;
		XGROW(out->cells, need, *alloc);
		cells = (int64_t)(*alloc * sizeof(*out->cells));
	}
	struct query_value *row = &out->cells[out->nrows * out->ncols];
	for (size_t i = 0; i < out->ncols; i++) {
		struct query_value *v = &row[i];
		memset(v, 0, sizeof(*v));
		switch (sqlite3_column_type(st, (int)i)) {
		case SQLITE_INTEGER:
			v->type = QP_INT;
			v->i = col_int(st, (int)i);
			break;
		case SQLITE_FLOAT:
			v->type = QP_REAL;
			v->r = col_real(st, (int)i);
			break;
		case SQLITE_NULL:
			v->type = QP_NULL;
			break;
		default: {
			size_t n;
			const char *t = col_text_n(st, (int)i, &n);
			if (!n && sqlite3_errcode(db) == SQLITE_NOMEM)
				return SQLITE_NOMEM; /* SQLite's cap, a blob made text */
			v->type = QP_TEXT;
			v->s = text_intern(out, seen, t, n, caps, cells);
			if (!v->s) {
				v->type = QP_NULL;
				return SQLITE_NOMEM;
			}
		}
		}
	}
	out->nrows++;
	return SQLITE_ROW;
}

int query_run(sqlite3 *db, const char *q, size_t max_rows, const struct query_limits *lim,
	      struct query_result *out, struct query_error *qerr, char **err)
{
	struct query_plan plan;
	struct query_error e = {0};
	struct qfuncs *funcs = NULL;
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	size_t alloc = 0;
	int rc = -1;
	struct text_seen *seen = NULL;
	struct guard guard = {0};
	struct caps caps = {0};
	memset(out, 0, sizeof(*out));
	out->phase_col = -1;
	if (query_compile(q, &plan, &e) < 0)
		goto fail_query;
	guard_init(&guard, lim);
	sqlite3_progress_handler(db, 10000, guard_progress, &guard);
	sqlite3_busy_handler(db, guard_busy, &guard);
	if (!plan.raw && check_metrics(db, &plan, &e) < 0)
		goto fail_plan;
	if (query_funcs_register(db, &funcs, err) < 0)
		goto out;
	if (getenv("GRADEML_QUERY_SQL") && *getenv("GRADEML_QUERY_SQL"))
		fprintf(stderr, "%s\n", plan.sql);
	warm_virtual_tables(db, plan.sql);
	caps_set(&caps, db, lim);
	sqlite3_set_authorizer(db, query_authorizer, NULL);
	int prc = sqlite3_prepare_v2(db, plan.sql, -1, &st, &tail);
	sqlite3_set_authorizer(db, NULL, NULL);
	if (prc == SQLITE_NOMEM || (prc != SQLITE_OK && guard.why != GUARD_RUNNING)) {
		*err = run_error(db, &guard, prc);
		goto out;
	}
	if (prc != SQLITE_OK || !st) {
		if (plan.raw) {
			int off = sqlite3_error_offset(db);
			query_error_set(
			    &e, plan.sql_pos + (off > 0 ? off : 0), 1,
			    xasprintf("sql: %s", st || prc != SQLITE_OK ? sqlite3_errmsg(db)
									: "empty statement"),
			    prc == SQLITE_AUTH ? xstrdup("the sql escape only reads") : NULL);
			goto fail_plan;
		}
		*err = xasprintf("cannot prepare the query: %s", sqlite3_errmsg(db));
		goto out;
	}
	if (tail && !is_blank(tail)) {
		query_error_set(&e, plan.sql_pos + (int)(tail - plan.sql), 1,
				xstrdup("sql: one statement only"), NULL);
		goto fail_plan;
	}
	if (!sqlite3_stmt_readonly(st)) {
		query_error_set(&e, plan.sql_pos, 1, xstrdup("sql: the statement would write"),
				xstrdup("the sql escape only reads"));
		goto fail_plan;
	}
	bind_params(st, &plan);
	out->ncols = (size_t)sqlite3_column_count(st);
	out->cols = xcalloc(out->ncols ? out->ncols : 1, sizeof(*out->cols));
	for (size_t i = 0; i < out->ncols; i++) {
		if (plan.raw) {
			const char *name = sqlite3_column_name(st, (int)i);
			out->cols[i].name = xstrdup(name ? name : "?");
			out->cols[i].type = QC_ANY;
		} else {
			out->cols[i].name = xstrdup(plan.cols[i].name);
			out->cols[i].type = plan.cols[i].type;
		}
	}
	out->phase_col = plan.raw ? -1 : plan.phase_col;
	seen = xcalloc(TEXT_SEEN, sizeof(*seen));
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (max_rows && out->nrows == max_rows) {
			out->truncated = 1;
			break;
		}
		if ((step = read_row(db, st, out, seen, &alloc, &caps)) != SQLITE_ROW)
			break;
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		*err = run_error(db, &guard, step);
		query_result_release(out);
		goto out;
	}
	rc = 0;
	goto out;
fail_plan:
	query_plan_release(&plan);
fail_query:
	*err = query_error_format(q, &e);
	if (qerr)
		*qerr = e;
	else
		query_error_release(&e);
	sqlite3_finalize(st);
	query_funcs_idle(funcs);
	guard_release(db, &caps);
	return -1;
out:
	free(seen);
	sqlite3_finalize(st);
	query_funcs_idle(funcs);
	query_plan_release(&plan);
	query_error_release(&e);
	guard_release(db, &caps);
	return rc;
}

/* ---- completion ---- */

struct cands {
	char **v;
	size_t n, alloc;
	const char *word;
	size_t wlen;
};

static void cand_add(struct cands *c, const char *s, int icase)
{
	if (!s || strlen(s) < c->wlen ||
	    (icase ? strncasecmp(s, c->word, c->wlen) : strncmp(s, c->word, c->wlen)))
		return;
	XGROW(c->v, c->n + 1, c->alloc);
	c->v[c->n++] = xstrdup(s);
}

static void cand_list(struct cands *c, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		cand_add(c, list[i], 1);
}

static void cand_sql(struct cands *c, sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	if (!db || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(q, 1, c->word, (int)c->wlen, SQLITE_STATIC);
	while (sqlite3_step(q) == SQLITE_ROW)
		cand_add(c, col_text(q, 0), 0);
	sqlite3_finalize(q);
}

static int cmp_cand(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int tok_is(const char *text, const struct query_token *t, const char *w)
{
	return t->type == QT_WORD && (size_t)t->len == strlen(w) &&
	       !strncasecmp(text + t->pos, w, (size_t)t->len);
}

size_t query_complete(sqlite3 *db, const char *text, char ***out, size_t *start)
{
	struct query_token toks[256];
	size_t n = 0;
	int pos = 0;
	for (;;) {
		struct query_token t = query_lex_next(text, &pos);
		if (t.type == QT_EOF || t.type == QT_ERROR || n == 256)
			break;
		toks[n++] = t;
	}
	size_t len = strlen(text);
	struct cands c = {0};
	/* the word being typed: the last token when it touches the end */
	int typing = n && (size_t)(toks[n - 1].pos + toks[n - 1].len) == len &&
		     (toks[n - 1].type == QT_WORD || toks[n - 1].type == QT_PATH ||
		      toks[n - 1].type == QT_NUMBER);
	size_t nprev = typing ? n - 1 : n;
	*start = typing ? (size_t)toks[n - 1].pos : len;
	c.word = text + *start;
	c.wlen = len - *start;
	/* the source, the current stage's keyword, the token before */
	int src = -1;
	for (int k = 0; k < QS_NSOURCES; k++)
		if (nprev && tok_is(text, &toks[0], query_sources[k]))
			src = k;
	const struct query_token *prev = nprev ? &toks[nprev - 1] : NULL;
	const struct query_token *stage = NULL;
	for (size_t i = nprev; i-- > 0;)
		if (toks[i].type == QT_PIPE) {
			stage = i + 1 < nprev ? &toks[i + 1] : NULL;
			break;
		}
	static const char *const ops[] = {"and", "or", "not", NULL};
	static const char *const aggs[] = {"count", "sum(", "mean(", "avg(", "min(", "max(",
					   "p50(",  "p90(", "p95(",  "p99(", NULL};
	/* a name, and resource.name where the name does not already start
	 * with its resource (sar's "cpu.util" is not offered as "cpu.cpu.util") */
	const char *metric_sql =
	    "SELECT DISTINCT name FROM metrics UNION SELECT DISTINCT resource || '.' || name"
	    " FROM metrics WHERE resource IS NOT NULL"
	    " AND substr(name, 1, length(resource) + 1) <> resource || '.'";
	if (!prev) {
		cand_list(&c, query_sources);
	} else if (prev->type == QT_PIPE) {
		cand_list(&c, query_stage_words);
	} else if (tok_is(text, prev, "with") || tok_is(text, prev, "saturated") ||
		   (stage && tok_is(text, stage, "with") && prev->type == QT_COMMA) ||
		   (nprev == 1 && (src == QS_METRICS || src == QS_SAMPLES))) {
		cand_sql(&c, db, metric_sql);
		if (nprev == 1 && src >= 0)
			cand_list(&c, query_fields((enum query_source)src));
	} else if (prev->type >= QT_EQ && prev->type <= QT_NMATCH && nprev >= 2 &&
		   tok_is(text, &toks[nprev - 2], "kind") && src == QS_PHASES) {
		for (int k = 1; k < PHASE_KIND_COUNT; k++)
			cand_add(&c, store_kind_name(k), 0);
	} else if (prev->type >= QT_EQ && prev->type <= QT_NMATCH && nprev >= 2 &&
		   tok_is(text, &toks[nprev - 2], "name")) {
		cand_sql(
		    &c, db,
		    src == QS_EVENTS
			? "SELECT DISTINCT s.text FROM strings s JOIN events e ON e.name_id = s.id"
			  " WHERE substr(s.text, 1, length(?1)) = ?1 ORDER BY 1 LIMIT 200"
			: "SELECT text FROM strings WHERE substr(text, 1, length(?1)) = ?1"
			  " ORDER BY 1 LIMIT 200");
	} else if (src >= 0) {
		cand_list(&c, query_fields((enum query_source)src));
		if (stage && (tok_is(text, stage, "stats") || tok_is(text, stage, "top") ||
			      tok_is(text, stage, "sort")))
			cand_list(&c, aggs);
		else if (!stage || tok_is(text, stage, "where"))
			cand_list(&c, ops);
	}
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), cmp_cand);
	size_t k = 0;
	for (size_t i = 0; i < c.n; i++) {
		if (k && !strcmp(c.v[k - 1], c.v[i]))
			free(c.v[i]);
		else
			c.v[k++] = c.v[i];
	}
	*out = c.v;
	return k;
}
