/*
 * Two runs compared by name (see diff.h).  Each file is read on a thread
 * of its own, in one scan of its phases in id order, which is parent
 * before child as the nest builder writes them (a span's id is reserved
 * when it opens); a file where some phase comes before its parent is
 * scanned again in depth order.  A run's names, name paths and rows are
 * interned as it is read; the second run's rows are then matched to the
 * first's by their name paths.  A phase that may have operators beneath it
 * (an operator, annotation, runtime call, span or profiler step with
 * children) keeps its name path by id; nothing else is kept per phase.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/diff.h"
#include "model/store/col.h"
#include "model/view/model.h"
#include "model/store/namememo.h"
#include "model/util/nstime.h"
#include "model/util/sbuf.h"
#include "model/store/store.h"
#include "model/util/strmap.h"
#include "model/util/xalloc.h"

#define DIFF_MAX_PARTS 256 /* a deeper name path keeps its innermost names */
#define PATH_SEP       " > "

static const char *const level_names[DIFF_NLEVELS] = {"step", "op", "runtime", "kernel"};

const char *diff_level_name(int level)
{
	return level >= 0 && level < DIFF_NLEVELS ? level_names[level] : "?";
}

/* A name path: its parent path (0: none) and its innermost name. */
struct dpath {
	uint32_t parent, name;
};

struct builder {
	struct strmap names; /* text -> index into d->names */
	size_t anames;
	struct strmap paths; /* (parent, name) -> index into path (0: the empty path) */
	struct dpath *path;
	size_t npaths, apaths;
	struct strmap rows; /* (path, level) -> index into d->rows */
	uint32_t *row_path; /* each row's name path */
	size_t arows, arow_path;
	struct diff *d;
};

/* One run's scan: its memos of names by id and of name paths by phase id. */
struct scan {
	struct builder *b;
	int run;
	sqlite3_stmt *nameq;
	struct namememo plain, steps; /* name id -> name index */
	/* phase id -> name path: an array over the file's ids (dense as the
	 * nest writes them; pages never touched cost nothing), a map when
	 * they are spread too thin for one */
	int64_t id0;
	uint32_t *by_id;
	size_t nby_id;
	struct namememo carriers;
	const char *file;
	int (*stop)(void *ctx); /* diff_compute's; NULL: none */
	void *ctx;
	int stopped; /* stop returned non-zero */
};

#define DIFF_POLL_ROWS 4096 /* phases read between two polls of stop */

/* Whether the caller asked the diff to stop (remembered once it did). */
static int stop_asked(struct scan *sc)
{
	if (!sc->stopped && sc->stop && sc->stop(sc->ctx))
		sc->stopped = 1;
	return sc->stopped;
}

/* SQLite's progress handler: stops a statement (a sort) once asked to. */
static int on_progress(void *arg)
{
	return stop_asked(arg);
}

static uint32_t intern_name(struct builder *b, const char *s, size_t n)
{
	int created;
	struct strmap_ent *e = strmap_put(&b->names, s, n, (int64_t)b->d->nnames, &created);
	if (created) {
		XGROW(b->d->names, b->d->nnames + 1, b->anames);
		b->d->names[b->d->nnames++] = xstrndup(s, n);
	}
	return (uint32_t)e->value;
}

static uint32_t intern_path(struct builder *b, uint32_t parent, uint32_t name)
{
	uint32_t key[2] = {parent, name};
	int created;
	struct strmap_ent *e =
	    strmap_put(&b->paths, (const char *)key, sizeof(key), (int64_t)b->npaths, &created);
	if (created) {
		XGROW(b->path, b->npaths + 1, b->apaths);
		b->path[b->npaths++] = (struct dpath){parent, name};
	}
	return (uint32_t)e->value;
}

static void add(struct builder *b, int run, uint32_t path, int level, int64_t id, int64_t dur)
{
	uint32_t key[2] = {path, (uint32_t)level};
	int created;
	struct strmap_ent *e =
	    strmap_put(&b->rows, (const char *)key, sizeof(key), (int64_t)b->d->nrows, &created);
	struct diff *d = b->d;
	if (created) {
		XGROW(d->rows, d->nrows + 1, b->arows);
		XGROW(b->row_path, d->nrows + 1, b->arow_path);
		memset(&d->rows[d->nrows], 0, sizeof(d->rows[0]));
		d->rows[d->nrows].level = level;
		b->row_path[d->nrows++] = path;
	}
	struct diff_side *s = &d->rows[e->value].side[run];
	if (!s->count || id < s->first_id)
		s->first_id = id;
	s->count++;
	s->total_ns = ns_sum(s->total_ns, dur);
}

/* "ProfilerStep#12" -> "ProfilerStep#*": a name that ends in '#' and
 * digits, the digits merged. */
static size_t step_name(const char *s, struct sbuf *out)
{
	size_t n = strlen(s);
	const char *hash = strrchr(s, '#');
	sbuf_reset(out);
	if (hash && hash[1] && strspn(hash + 1, "0123456789") == strlen(hash + 1)) {
		sbuf_add(out, s, (size_t)(hash - s) + 1);
		sbuf_addc(out, '*');
	} else {
		sbuf_add(out, s, n);
	}
	return out->len;
}

/* The name index of a name id, a step's merged (memoised per run). */
static uint32_t name_of(struct scan *sc, int64_t name_id, int step)
{
	int created = 1, *slot = NULL;
	if (name_id > 0) {
		slot = namememo_put(step ? &sc->steps : &sc->plain, name_id, &created);
		if (!created)
			return (uint32_t)*slot;
	}
	sqlite3_bind_int64(sc->nameq, 1, name_id);
	const char *text = sqlite3_step(sc->nameq) == SQLITE_ROW ? col_text(sc->nameq, 0) : "";
	uint32_t idx;
	if (step) {
		struct sbuf s = SBUF_INIT;
		step_name(text, &s);
		idx = intern_name(sc->b, s.buf ? s.buf : "", s.len);
		sbuf_release(&s);
	} else {
		idx = intern_name(sc->b, text, strlen(text));
	}
	sqlite3_reset(sc->nameq);
	if (slot)
		*slot = (int)idx;
	return idx;
}

#define DIFF_DENSE_IDS ((int64_t)1 << 26) /* the array's most entries: 256 MiB of address space */

static void carriers_init(struct scan *sc, sqlite3 *db)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, "SELECT min(id), max(id) FROM phases", -1, &q, NULL) ==
		SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) == SQLITE_INTEGER) {
		int64_t lo = col_int(q, 0), hi = col_int(q, 1);
		if (lo <= hi && ns_dur(lo, hi) < DIFF_DENSE_IDS) {
			sc->id0 = lo;
			sc->nby_id = (size_t)(hi - lo) + 1;
			sc->by_id = xcalloc(sc->nby_id, sizeof(*sc->by_id));
		}
	}
	sqlite3_finalize(q);
}

static void carriers_release(struct scan *sc)
{
	free(sc->by_id);
	sc->by_id = NULL;
	sc->nby_id = 0;
	namememo_release(&sc->carriers);
}

/* The name path phase id carries (0: none). */
static uint32_t carried(struct scan *sc, int64_t id)
{
	if (sc->by_id)
		return id >= sc->id0 && (uint64_t)(id - sc->id0) < sc->nby_id
			   ? sc->by_id[id - sc->id0]
			   : 0;
	if (id <= 0 || !sc->carriers.cap)
		return 0;
	int created, *v = namememo_put(&sc->carriers, id, &created);
	return created ? 0 : (uint32_t)*v; /* a new entry holds 0: none */
}

static void carry_on(struct scan *sc, int64_t id, uint32_t path)
{
	int created;
	if (sc->by_id) {
		if (id >= sc->id0 && (uint64_t)(id - sc->id0) < sc->nby_id)
			sc->by_id[id - sc->id0] = path;
	} else if (id > 0) {
		*namememo_put(&sc->carriers, id, &created) = (int)path;
	}
}

/* One scan of a run's phases in the given order; *disorder set when a
 * phase came before its parent. */
static int scan_phases(struct scan *sc, sqlite3 *db, const char *order, int *disorder, char **err)
{
	sqlite3_stmt *q = NULL;
	int rc = -1;
	char *sql =
	    xasprintf("SELECT id, parent_id, kind, name_id, dur_ns, child_count"
		      " FROM phases WHERE kind IN (%d, %d, %d, %d, %d, %d, %d, %d) ORDER BY %s",
		      PHASE_PROFILER_STEP, PHASE_OPERATOR, PHASE_ANNOTATION, PHASE_RUNTIME,
		      PHASE_SPAN, PHASE_KERNEL, PHASE_MEMCPY, PHASE_MEMSET, order);
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		goto out;
	struct builder *b = sc->b;
	int step;
	size_t nread = 0;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		if (++nread % DIFF_POLL_ROWS == 0 && stop_asked(sc))
			goto out;
		int64_t id = col_int(q, 0);
		int64_t parent = col_int(q, 1);
		int kind = col_int32(q, 2);
		int64_t name_id = col_int(q, 3);
		int64_t dur = col_int(q, 4);
		int64_t kids = col_int(q, 5);
		dur = dur < 0 ? 0 : dur > MODEL_TIME_MAX ? MODEL_TIME_MAX : dur;
		if (parent > id)
			*disorder = 1;
		uint32_t up = carried(sc, parent), carry = 0;
		switch (kind) {
		case PHASE_PROFILER_STEP:
			carry = intern_path(b, 0, name_of(sc, name_id, 1));
			add(b, sc->run, carry, DIFF_STEP, id, dur);
			break;
		case PHASE_OPERATOR:
		case PHASE_ANNOTATION:
			carry = intern_path(b, up, name_of(sc, name_id, 0));
			add(b, sc->run, carry, DIFF_OP, id, dur);
			break;
		case PHASE_SPAN: /* a Python function: its operators keep their path */
			carry = up;
			break;
		case PHASE_RUNTIME:
			carry = up;
			add(b, sc->run, intern_path(b, 0, name_of(sc, name_id, 0)), DIFF_RUNTIME,
			    id, dur);
			break;
		default: /* device work */
			add(b, sc->run, intern_path(b, 0, name_of(sc, name_id, 0)), DIFF_KERNEL, id,
			    dur);
			continue;
		}
		if (kids > 0 && carry)
			carry_on(sc, id, carry);
	}
	if (step == SQLITE_DONE)
		rc = 0;
out:
	if (rc < 0)
		*err = sc->stopped
			   ? xstrdup("stopped")
			   : xasprintf("%s: cannot read phases: %s", sc->file, sqlite3_errmsg(db));
	sqlite3_finalize(q);
	free(sql);
	return rc;
}

/* A run's figures, all rows of it cleared first (a second scan). */
static void clear_run(struct diff *d, int run)
{
	for (size_t i = 0; i < d->nrows; i++)
		memset(&d->rows[i].side[run], 0, sizeof(d->rows[i].side[run]));
}

static int read_run(struct builder *b, int run, const char *path, int (*stop)(void *ctx), void *ctx,
		    int *stopped, char **err)
{
	struct store *st = NULL;
	struct scan sc = {.b = b, .run = run, .file = path, .stop = stop, .ctx = ctx};
	struct diff_run *r = &b->d->run[run];
	sqlite3_stmt *w = NULL;
	int rc = -1, disorder = 0;
	r->path = xstrdup(path);
	if (store_open(path, STORE_READ, &st, err) < 0)
		return -1;
	sqlite3 *db = store_db(st);
	if (stop)
		sqlite3_progress_handler(db, 10000, on_progress, &sc);
	if (sqlite3_prepare_v2(db, "SELECT text FROM strings WHERE id = ?1", -1, &sc.nameq, NULL) !=
		SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT start_ns, dur_ns FROM phases WHERE parent_id IS NULL",
			       -1, &w, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read phases: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	while (!stop_asked(&sc) && sqlite3_step(w) == SQLITE_ROW) {
		int64_t s = col_int(w, 0), e = ns_end(s, col_int(w, 1));
		t0 = s < t0 ? s : t0;
		t1 = e > t1 ? e : t1;
		r->workflows++;
	}
	r->makespan_ns = r->workflows ? ns_dur(t0, t1) : 0;
	carriers_init(&sc, db);
	if (scan_phases(&sc, db, "id", &disorder, err) < 0)
		goto out;
	if (disorder && !stop_asked(&sc)) {
		clear_run(b->d, run);
		carriers_release(&sc);
		carriers_init(&sc, db);
		if (scan_phases(&sc, db, "depth, id", &disorder, err) < 0)
			goto out;
	}
	if (stop_asked(&sc)) {
		*err = xstrdup("stopped");
		goto out;
	}
	rc = 0;
out:
	*stopped = sc.stopped;
	sqlite3_finalize(w);
	sqlite3_finalize(sc.nameq);
	namememo_release(&sc.plain);
	namememo_release(&sc.steps);
	carriers_release(&sc);
	store_close(st);
	return rc;
}

/* Rows neither run has: left by a scan in id order redone in depth order. */
static void drop_empty(struct builder *b)
{
	struct diff *d = b->d;
	size_t n = 0;
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].side[0].count || d->rows[i].side[1].count) {
			d->rows[n] = d->rows[i];
			b->row_path[n++] = b->row_path[i];
		}
	d->nrows = n;
}

/* Each row's name path as parts and joined. */
static void name_rows(struct builder *b)
{
	struct diff *d = b->d;
	uint32_t chain[DIFF_MAX_PARTS];
	for (size_t i = 0; i < d->nrows; i++) {
		struct diff_row *r = &d->rows[i];
		size_t n = 0;
		for (uint32_t p = b->row_path[i]; p && n < DIFF_MAX_PARTS; p = b->path[p].parent)
			chain[n++] = b->path[p].name;
		r->parts = xcalloc(n ? n : 1, sizeof(*r->parts));
		r->nparts = n;
		struct sbuf s = SBUF_INIT;
		for (size_t k = 0; k < n; k++) {
			r->parts[k] = d->names[chain[n - 1 - k]];
			if (k)
				sbuf_adds(&s, PATH_SEP);
			sbuf_adds(&s, r->parts[k]);
		}
		r->name = sbuf_detach(&s);
	}
}

int64_t diff_delta(const struct diff_row *r)
{
	return r->side[1].total_ns - r->side[0].total_ns;
}

double diff_ratio(const struct diff_row *r)
{
	return r->side[0].total_ns ? (double)r->side[1].total_ns / (double)r->side[0].total_ns
				   : NAN;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	int64_t da = llabs(diff_delta(a)), db = llabs(diff_delta(b));
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* One run read into a diff of its own: its rows, their names and its
 * figures, on a thread of its own. */
struct run_job {
	const char *path;
	int run;
	int (*stop)(void *ctx);
	void *ctx;
	struct diff part;
	int rc, stopped;
	char *err;
};

static void *run_thread(void *arg)
{
	struct run_job *j = arg;
	struct builder bl = {
	    .names = STRMAP_INIT, .paths = STRMAP_INIT, .rows = STRMAP_INIT, .d = &j->part};
	intern_path(&bl, 0, intern_name(&bl, "", 0)); /* path 0: the empty one */
	j->rc = read_run(&bl, j->run, j->path, j->stop, j->ctx, &j->stopped, &j->err);
	if (j->rc == 0) {
		drop_empty(&bl);
		name_rows(&bl);
	}
	strmap_clear(&bl.names);
	strmap_clear(&bl.paths);
	strmap_clear(&bl.rows);
	free(bl.path);
	free(bl.row_path);
	return NULL;
}

/* A row's key: its level, then each part and a NUL (parts hold none), so
 * that ("a > b") and ("a", "b") stay two rows. */
static void row_key(const struct diff_row *r, struct sbuf *k)
{
	sbuf_reset(k);
	sbuf_addc(k, (char)('0' + r->level));
	for (size_t i = 0; i < r->nparts; i++)
		sbuf_add(k, r->parts[i], strlen(r->parts[i]) + 1);
}

/* Run 1's part into d (run 0's): its names, figures and rows, a row of a
 * name d has as that row's second side. */
static void merge(struct diff *d, struct diff *p)
{
	d->names = xrealloc(d->names, (d->nnames + p->nnames + 1) * sizeof(*d->names));
	memcpy(d->names + d->nnames, p->names, p->nnames * sizeof(*p->names));
	d->nnames += p->nnames;
	free(p->names);
	d->run[1] = p->run[1];
	struct strmap keys = STRMAP_INIT;
	struct sbuf k;
	sbuf_init(&k);
	int created;
	for (size_t i = 0; i < d->nrows; i++) {
		row_key(&d->rows[i], &k);
		strmap_put(&keys, k.buf, k.len, (int64_t)i, &created);
	}
	size_t alloc = d->nrows;
	for (size_t i = 0; i < p->nrows; i++) {
		struct diff_row *r = &p->rows[i];
		row_key(r, &k);
		struct strmap_ent *e = strmap_get(&keys, k.buf, k.len);
		if (e) {
			d->rows[e->value].side[1] = r->side[1];
			free(r->parts);
			free(r->name);
		} else {
			XGROW(d->rows, d->nrows + 1, alloc);
			d->rows[d->nrows++] = *r;
		}
	}
	free(p->rows);
	sbuf_release(&k);
	strmap_clear(&keys);
	memset(p, 0, sizeof(*p));
}

int diff_compute(const char *a, const char *b, int (*stop)(void *ctx), void *ctx, struct diff *d,
		 char **err)
{
	struct run_job job[2] = {{.path = a, .run = 0, .stop = stop, .ctx = ctx},
				 {.path = b, .run = 1, .stop = stop, .ctx = ctx}};
	pthread_t th;
	memset(d, 0, sizeof(*d));
	sqlite3_initialize(); /* once, before two threads open connections */
	int threaded = pthread_create(&th, NULL, run_thread, &job[1]) == 0;
	run_thread(&job[0]);
	if (threaded)
		pthread_join(th, NULL);
	else
		run_thread(&job[1]);
	for (int i = 0; i < 2; i++)
		if (job[i].rc < 0 || job[i].stopped) {
			/* a stop wins over the other run's error, which it may have caused */
			int k = job[1 - i].stopped ? 1 - i : i, stopped = job[k].stopped;
			*err = stopped ? xstrdup("stopped") : job[k].err;
			if (!stopped)
				job[k].err = NULL;
			free(job[0].err);
			free(job[1].err);
			diff_release(&job[0].part);
			diff_release(&job[1].part);
			return stopped ? DIFF_STOPPED : -1;
		}
	*d = job[0].part;
	merge(d, &job[1].part);
	for (size_t i = 0; i < d->nrows; i++)
		for (int run = 0; run < 2; run++) {
			struct diff_side *sum = &d->run[run].level[d->rows[i].level];
			sum->count += d->rows[i].side[run].count;
			sum->total_ns = ns_sum(sum->total_ns, d->rows[i].side[run].total_ns);
		}
	qsort(d->rows, d->nrows, sizeof(*d->rows), row_cmp);
	return 0;
}

void diff_release(struct diff *d)
{
	for (int run = 0; run < 2; run++)
		free(d->run[run].path);
	for (size_t i = 0; i < d->nrows; i++) {
		free(d->rows[i].parts);
		free(d->rows[i].name);
	}
	free(d->rows);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	memset(d, 0, sizeof(*d));
}
