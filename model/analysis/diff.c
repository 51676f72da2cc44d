/*
 * Two runs compared by name (see diff.h).  Each file is read on a thread
 * of its own, in one scan of its phases in id order, which is parent
 * before child as the nest builder writes them (a span's id is reserved
 * when it opens); a file where some phase comes before its parent is
 * scanned again in depth order.  A run's names, name paths and rows are
 * interned as it is read: a name's text is hashed and compared when it is
 * first read (and once more when the runs merge), a name path is the pair
 * of its parent path's index and its innermost name's, and a row the pair
 * of its path's index and its level, so that neither depth nor long names
 * cost anything per phase or per row.  The second run's names, then paths,
 * then rows are mapped onto the first's in one pass over each.  A phase that may have operators
 * beneath it (an operator, annotation, runtime call, span or profiler step with children) keeps its
 * name path by id; nothing else is kept per phase.  Only sorting reads a path's names as text, from
 * where two paths part.  A step's duration is kept per step (steps are few) for
 * its name's median; a phase carries, with its name path, the step it is
 * beneath (one index for the pair), and a row's time per step is summed in
 * one table of (row, step) pairs, which only names in steps fill.  Renamed
 * rows are paired once both runs are merged.
 */
#include <ctype.h>
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

#define PATH_SEP     " > "
#define PATH_SEP_LEN 3
#define ELLIPSIS     "\xe2\x80\xa6" /* "…" */
#define ELLIPSIS_LEN 3

static const char *const level_names[DIFF_NLEVELS] = {"step", "op", "runtime", "kernel"};

const char *diff_level_name(int level)
{
	return level >= 0 && level < DIFF_NLEVELS ? level_names[level] : "?";
}

struct builder {
	/* text -> index into d->names; its keys are d->names' strings, owned
	 * by d (builder_release frees the map, not them): a name is kept once */
	struct strmap names;
	size_t anames;
	struct strmap paths; /* (parent, name) -> index into d->paths */
	size_t apaths;
	struct strmap rows; /* (path, level) -> index into d->rows */
	size_t arows;
	struct diff *d;
};

/* One profiler step as read: its row's path, id and duration. */
struct step_dur {
	uint32_t path;
	int64_t id, dur;
};

/* A row's time in one step (1-based, in the order read): the per-step
 * table's entry, empty when step is 0. */
struct step_acc {
	uint32_t row, step;
	int64_t ns;
};

/* What a phase passes to those beneath it: its name path and its step. */
struct context {
	uint32_t path, step;
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
	struct step_dur *durs; /* every profiler step read, for its name's median */
	size_t ndurs, adurs;
	/* what phase ids carry are indices into cx (0: nothing), interned
	 * in cxs, so that a phase costs one index whatever it carries */
	struct context *cx;
	size_t ncx, acx;
	struct strmap cxs;
	struct step_acc *acc; /* (row, step) -> time: open addressing */
	size_t nacc, capacc;
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
		b->d->names[b->d->nnames++] = e->key;
	}
	return (uint32_t)e->value;
}

/* The path of name under parent (0: at the top). */
static uint32_t intern_path(struct builder *b, uint32_t parent, uint32_t name)
{
	struct diff *d = b->d;
	uint32_t key[2] = {parent, name};
	int created;
	struct strmap_ent *e =
	    strmap_put(&b->paths, (const char *)key, sizeof(key), (int64_t)d->npaths, &created);
	if (created) {
		XGROW(d->paths, d->npaths + 1, b->apaths);
		d->paths[d->npaths++] =
		    (struct diff_path){parent, name, d->paths[parent].depth + 1};
	}
	return (uint32_t)e->value;
}

/* The row of path at level, made empty when there is none. */
static size_t row_of(struct builder *b, uint32_t path, int level)
{
	struct diff *d = b->d;
	uint32_t key[2] = {path, (uint32_t)level};
	int created;
	struct strmap_ent *e =
	    strmap_put(&b->rows, (const char *)key, sizeof(key), (int64_t)d->nrows, &created);
	if (created) {
		XGROW(d->rows, d->nrows + 1, b->arows);
		d->rows[d->nrows++] = (struct diff_row){.level = level, .path = path};
	}
	return (size_t)e->value;
}

/* The index of context (path, step); 0 for (0, 0). */
static uint32_t context_of(struct scan *sc, uint32_t path, uint32_t step)
{
	if (!sc->ncx) {
		XGROW(sc->cx, 1, sc->acx);
		sc->cx[sc->ncx++] = (struct context){0, 0};
	}
	if (!path && !step)
		return 0;
	uint32_t key[2] = {path, step};
	int created;
	struct strmap_ent *e =
	    strmap_put(&sc->cxs, (const char *)key, sizeof(key), (int64_t)sc->ncx, &created);
	if (created) {
		XGROW(sc->cx, sc->ncx + 1, sc->acx);
		sc->cx[sc->ncx++] = (struct context){path, step};
	}
	return (uint32_t)e->value;
}

static uint64_t acc_hash(uint32_t row, uint32_t step)
{
	uint64_t h = ((uint64_t)row << 32 | step) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* Adds ns to row's time in step (not 0). */
static void acc_add(struct scan *sc, size_t row, uint32_t step, int64_t ns)
{
	if (2 * (sc->nacc + 1) > sc->capacc) {
		size_t cap = sc->capacc ? 2 * sc->capacc : 1024;
		struct step_acc *t = xcalloc(cap, sizeof(*t)), *old = sc->acc;
		for (size_t i = 0; i < sc->capacc; i++)
			if (old[i].step) {
				size_t k = acc_hash(old[i].row, old[i].step) & (cap - 1);
				while (t[k].step)
					k = (k + 1) & (cap - 1);
				t[k] = old[i];
			}
		free(old);
		sc->acc = t;
		sc->capacc = cap;
	}
	size_t k = acc_hash((uint32_t)row, step) & (sc->capacc - 1);
	while (sc->acc[k].step && (sc->acc[k].row != row || sc->acc[k].step != step))
		k = (k + 1) & (sc->capacc - 1);
	if (!sc->acc[k].step) {
		sc->acc[k] = (struct step_acc){(uint32_t)row, step, 0};
		sc->nacc++;
	}
	sc->acc[k].ns = ns_sum(sc->acc[k].ns, ns);
}

/* One instance of path at level, in step (0: none) when it is not a step. */
static void add(struct scan *sc, uint32_t path, int level, uint32_t step, int64_t id, int64_t dur)
{
	struct builder *b = sc->b;
	size_t i = row_of(b, path, level); /* before d->rows is read: it may move it */
	if (step && level != DIFF_STEP)
		acc_add(sc, i, step, dur);
	struct diff_side *s = &b->d->rows[i].side[sc->run];
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

/* The name index of a name id, a step's merged (memoised per run); a name
 * longer than DIFF_NAME_LONG cut as diff.h says. */
static uint32_t name_of(struct scan *sc, int64_t name_id, int step)
{
	int created = 1, *slot = NULL;
	if (name_id > 0) {
		slot = namememo_put(step ? &sc->steps : &sc->plain, name_id, &created);
		if (!created)
			return (uint32_t)*slot;
	}
	sqlite3_bind_int64(sc->nameq, 1, name_id);
	size_t n = 0;
	const char *text =
	    sqlite3_step(sc->nameq) == SQLITE_ROW ? col_text_n(sc->nameq, 0, &n) : "";
	n = strnlen(text, n);
	struct sbuf cut = SBUF_INIT, s = SBUF_INIT;
	if (n > DIFF_NAME_LONG) {
		n = DIFF_NAME_LONG - ELLIPSIS_LEN;
		while (n && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--; /* not inside a UTF-8 character */
		sbuf_add(&cut, text, n);
		sbuf_adds(&cut, ELLIPSIS);
		text = cut.buf;
		n = cut.len;
	}
	uint32_t idx;
	if (step) {
		step_name(text, &s);
		idx = intern_name(sc->b, s.buf ? s.buf : "", s.len);
	} else {
		idx = intern_name(sc->b, text, n);
	}
	sbuf_release(&s);
	sbuf_release(&cut);
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

/* The context phase id carries (0: none). */
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

static void carry_on(struct scan *sc, int64_t id, uint32_t ctx)
{
	int created;
	if (sc->by_id) {
		if (id >= sc->id0 && (uint64_t)(id - sc->id0) < sc->nby_id)
			sc->by_id[id - sc->id0] = ctx;
	} else if (id > 0) {
		*namememo_put(&sc->carriers, id, &created) = (int)ctx;
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
	sc->ndurs = 0;
	sc->nacc = 0;
	if (sc->acc)
		memset(sc->acc, 0, sc->capacc * sizeof(*sc->acc));
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
		uint32_t up = carried(sc, parent), carry = 0, path;
		struct context c = up < sc->ncx ? sc->cx[up] : (struct context){0, 0};
		switch (kind) {
		case PHASE_PROFILER_STEP:
			path = intern_path(b, 0, name_of(sc, name_id, 1));
			add(sc, path, DIFF_STEP, 0, id, dur);
			XGROW(sc->durs, sc->ndurs + 1, sc->adurs);
			sc->durs[sc->ndurs++] = (struct step_dur){path, id, dur};
			carry = context_of(sc, path, (uint32_t)sc->ndurs);
			break;
		case PHASE_OPERATOR:
		case PHASE_ANNOTATION:
			path = intern_path(b, c.path, name_of(sc, name_id, 0));
			add(sc, path, DIFF_OP, c.step, id, dur);
			carry = context_of(sc, path, c.step);
			break;
		case PHASE_SPAN: /* a Python function: its operators keep their path */
			carry = up;
			break;
		case PHASE_RUNTIME:
			carry = up;
			add(sc, intern_path(b, 0, name_of(sc, name_id, 0)), DIFF_RUNTIME, c.step,
			    id, dur);
			break;
		default: /* device work */
			add(sc, intern_path(b, 0, name_of(sc, name_id, 0)), DIFF_KERNEL, c.step, id,
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

static int int64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	return a < b ? -1 : a > b;
}

int64_t diff_median(int64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), int64_cmp);
	if (n % 2)
		return v[n / 2];
	int64_t a = v[n / 2 - 1], b = v[n / 2];
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2; /* (a + b) / 2 without overflow */
}

static int step_dur_cmp(const void *pa, const void *pb)
{
	const struct step_dur *a = pa, *b = pb;
	if (a->path != b->path)
		return a->path < b->path ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int acc_cmp(const void *pa, const void *pb)
{
	const struct step_acc *a = pa, *b = pb;
	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

/* The median of n values of which the k in v (sorted) are the largest and
 * the rest 0, as diff_median reads them. */
static int64_t median_with_zeros(const int64_t *v, size_t k, size_t n)
{
	size_t zeros = n - k;
#define AT(i) ((i) < zeros ? 0 : v[(i)-zeros])
	if (n % 2)
		return AT(n / 2);
	int64_t a = AT(n / 2 - 1), b = AT(n / 2);
#undef AT
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

/* Every row's time per step but the steps': over each of the run's steps
 * (0 where it has none in one), its median, its time in the first step
 * (first, 1-based) and the excess of that over the median. */
static void row_medians(struct scan *sc, uint32_t first)
{
	struct diff *d = sc->b->d;
	size_t n = 0, nsteps = sc->ndurs;
	for (size_t i = 0; i < sc->capacc; i++)
		if (sc->acc[i].step)
			sc->acc[n++] = sc->acc[i]; /* packed to the front: the table is done */
	if (n) /* acc is NULL in a run that met no row in a step */
		qsort(sc->acc, n, sizeof(*sc->acc), acc_cmp);
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].level != DIFF_STEP)
			d->rows[i].steps[sc->run] = (struct diff_steps){.n = (int64_t)nsteps};
	int64_t *v = xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0, k; i < n; i = k) {
		struct diff_steps *st = &d->rows[sc->acc[i].row].steps[sc->run];
		for (k = i; k < n && sc->acc[k].row == sc->acc[i].row; k++) {
			v[k - i] = sc->acc[k].ns;
			if (sc->acc[k].step == first)
				st->first_ns = sc->acc[k].ns;
		}
		st->median_ns = median_with_zeros(v, k - i, nsteps);
		if (nsteps >= 3 && st->first_ns > st->median_ns)
			st->warmup_ns = st->first_ns - st->median_ns;
	}
	free(v);
	sc->nacc = 0;
	if (sc->acc)
		memset(sc->acc, 0, sc->capacc * sizeof(*sc->acc));
}

/* Each step name's median, first step and warm-up, from the steps read,
 * and every other row's per step. */
static void step_medians(struct scan *sc)
{
	if (!sc->ndurs)
		return;	    /* and durs may be NULL, which qsort must not see */
	uint32_t first = 0; /* the step with the lowest id, as numbered when read */
	for (size_t i = 0; i < sc->ndurs; i++)
		if (sc->durs[i].id < sc->durs[first].id)
			first = (uint32_t)i;
	row_medians(sc, first + 1);
	sc->b->d->run[sc->run].steps = (int64_t)sc->ndurs;
	qsort(sc->durs, sc->ndurs, sizeof(*sc->durs), step_dur_cmp);
	int64_t *v = xcalloc(sc->ndurs, sizeof(*v));
	for (size_t i = 0, k; i < sc->ndurs; i = k) {
		for (k = i; k < sc->ndurs && sc->durs[k].path == sc->durs[i].path; k++)
			v[k - i] = sc->durs[k].dur;
		struct diff_steps st = {.n = (int64_t)(k - i), .first_ns = sc->durs[i].dur};
		st.median_ns = diff_median(v, k - i);
		if (st.n >= 3 && st.first_ns > st.median_ns)
			st.warmup_ns = st.first_ns - st.median_ns;
		sc->b->d->rows[row_of(sc->b, sc->durs[i].path, DIFF_STEP)].steps[sc->run] = st;
	}
	free(v);
}

/* A run's figures, all rows of it cleared first (a second scan). */
static void clear_run(struct diff *d, int run)
{
	for (size_t i = 0; i < d->nrows; i++) {
		memset(&d->rows[i].side[run], 0, sizeof(d->rows[i].side[run]));
		memset(&d->rows[i].steps[run], 0, sizeof(d->rows[i].steps[run]));
	}
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
	step_medians(&sc);
	rc = 0;
out:
	*stopped = sc.stopped;
	sqlite3_finalize(w);
	sqlite3_finalize(sc.nameq);
	namememo_release(&sc.plain);
	namememo_release(&sc.steps);
	carriers_release(&sc);
	free(sc.durs);
	free(sc.cx);
	strmap_clear(&sc.cxs);
	free(sc.acc);
	store_close(st);
	return rc;
}

void diff_role(const char *name, struct sbuf *out)
{
	size_t n = strlen(name);
	sbuf_reset(out);
	if (n && name[n - 1] == ')') { /* a trailing " (...)", its parentheses balanced */
		size_t depth = 0, i = n;
		while (i-- > 0)
			if (name[i] == ')')
				depth++;
			else if (name[i] == '(' && --depth == 0)
				break;
		if (i + 1 > 1 && depth == 0 && name[i - 1] == ' ')
			n = i - 1;
	}
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)name[i];
		unsigned char prev = i ? (unsigned char)name[i - 1] : ' ';
		if (!(isalpha(c) || c == '_') || isalnum(prev) || prev == '_') {
			sbuf_addc(out, (char)c);
			i++;
			continue;
		}
		size_t j = i, k = i; /* a word: [i, j), its first letter at k */
		while (j < n && (isalnum((unsigned char)name[j]) || name[j] == '_'))
			j++;
		while (k < j && name[k] == '_')
			k++;
		if (k < j && isupper((unsigned char)name[k]) && j + 1 < n && name[j] == '.' &&
		    (isalpha((unsigned char)name[j + 1]) || name[j + 1] == '_'))
			sbuf_addc(out, '*'); /* a class name before a member */
		else
			sbuf_add(out, name + i, j - i);
		i = j;
	}
}

/* One role's one-sided rows: the last of each side and how many. */
struct role_rows {
	size_t row[2], n[2];
};

/* Pairs each name only in A (side 0) with the one name only in B of its
 * role, where it is the only one of its role only in A: A's row takes
 * B's figures and path as renamed, and B's row is left empty. */
static void pair_renamed(struct diff *d)
{
	struct strmap roles = STRMAP_INIT;
	struct role_rows *rr = NULL;
	size_t nrr = 0, arr = 0;
	struct sbuf key = SBUF_INIT, role = SBUF_INIT;
	for (size_t i = 0; i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];
		int side = r->side[0].count ? 0 : 1;
		if (r->side[1 - side].count)
			continue; /* in both */
		const struct diff_path *p = &d->paths[r->path];
		uint32_t head[2] = {(uint32_t)r->level, p->parent};
		diff_role(d->names[p->name], &role);
		sbuf_reset(&key);
		sbuf_add(&key, head, sizeof(head));
		sbuf_add(&key, role.buf, role.len);
		int created;
		struct strmap_ent *e = strmap_put(&roles, key.buf, key.len, (int64_t)nrr, &created);
		if (created) {
			XGROW(rr, nrr + 1, arr);
			rr[nrr++] = (struct role_rows){{0, 0}, {0, 0}};
		}
		struct role_rows *x = &rr[e->value];
		x->row[side] = i;
		x->n[side]++;
	}
	for (size_t k = 0; k < nrr; k++) {
		if (rr[k].n[0] != 1 || rr[k].n[1] != 1)
			continue;
		struct diff_row *a = &d->rows[rr[k].row[0]], *b = &d->rows[rr[k].row[1]];
		a->side[1] = b->side[1];
		a->steps[1] = b->steps[1];
		a->renamed = b->path;
		memset(b->side, 0, sizeof(b->side));
	}
	strmap_clear(&roles);
	free(rr);
	sbuf_release(&key);
	sbuf_release(&role);
}

/* Rows neither run has: left by a scan in id order redone in depth order,
 * or by pair_renamed. */
static void drop_empty(struct diff *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].side[0].count || d->rows[i].side[1].count)
			d->rows[n++] = d->rows[i];
	d->nrows = n;
}

/* diff_row_parts of a path. */
static size_t path_parts(const struct diff *d, uint32_t path, const char **parts, size_t *left_out)
{
	size_t n = 0, len = 0;
	for (uint32_t p = path; p && n < DIFF_MAX_PARTS; p = d->paths[p].parent) {
		const char *s = d->names[d->paths[p].name];
		if (n) {
			if (len + PATH_SEP_LEN > DIFF_NAME_MAX)
				break;
			size_t k = strnlen(s, DIFF_NAME_MAX - len - PATH_SEP_LEN + 1);
			if (len + PATH_SEP_LEN + k > DIFF_NAME_MAX)
				break;
			len += PATH_SEP_LEN + k;
		} else {
			len = strnlen(s, DIFF_NAME_MAX + 1); /* the innermost name, kept whole */
		}
		parts[n++] = s;
	}
	for (size_t i = 0; i < n / 2; i++) {
		const char *t = parts[i];
		parts[i] = parts[n - 1 - i];
		parts[n - 1 - i] = t;
	}
	if (left_out)
		*left_out = d->paths[path].depth - n;
	return n;
}

size_t diff_row_parts(const struct diff *d, const struct diff_row *r, const char **parts,
		      size_t *left_out)
{
	return path_parts(d, r->path, parts, left_out);
}

size_t diff_renamed_parts(const struct diff *d, const struct diff_row *r, const char **parts,
			  size_t *left_out)
{
	if (left_out)
		*left_out = 0;
	return r->renamed ? path_parts(d, r->renamed, parts, left_out) : 0;
}

/* Appends s[0..n) less its first *skip bytes, which it uses up. */
static void add_skipping(struct sbuf *out, const char *s, size_t n, size_t *skip)
{
	size_t k = *skip < n ? *skip : n;
	*skip -= k;
	sbuf_add(out, s + k, n - k);
}

#define RENAMED_SEP " -> "

void diff_row_name(const struct diff *d, const struct diff_row *r, size_t max, struct sbuf *out)
{
	/* the pieces of text: "… > ", the names and " > " between them, and
	 * a renamed row's " -> " and B's name */
	const char *piece[2 * DIFF_MAX_PARTS + 2];
	size_t len[2 * DIFF_MAX_PARTS + 2], np = 0, total = 0, skip = 0;
	const char *parts[DIFF_MAX_PARTS];
	size_t left, n = diff_row_parts(d, r, parts, &left);
	if (left)
		piece[np++] = ELLIPSIS PATH_SEP;
	for (size_t k = 0; k < n; k++) {
		if (k)
			piece[np++] = PATH_SEP;
		piece[np++] = parts[k];
	}
	if (r->renamed) {
		piece[np++] = RENAMED_SEP;
		piece[np++] = d->names[d->paths[r->renamed].name];
	}
	for (size_t k = 0; k < np; k++)
		total += len[k] = strlen(piece[k]);
	size_t start = out->len;
	int cut = max && total > max;
	if (cut) { /* only the end is written */
		skip = total - (max > ELLIPSIS_LEN ? max - ELLIPSIS_LEN : 0);
		sbuf_adds(out, ELLIPSIS);
	}
	for (size_t k = 0; k < np; k++)
		add_skipping(out, piece[k], len[k], &skip);
	if (!cut)
		return;
	size_t from = start + ELLIPSIS_LEN, c = from;
	while (c < out->len && ((unsigned char)out->buf[c] & 0xc0) == 0x80)
		c++; /* from the first whole UTF-8 character */
	memmove(out->buf + from, out->buf + c, out->len - c + 1);
	out->len -= c - from;
}

int64_t diff_median_delta(const struct diff_row *r)
{
	return r->steps[0].n && r->steps[1].n ? r->steps[1].median_ns - r->steps[0].median_ns : 0;
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

/* A name path's text, " > " between its names, from some name on: the
 * names are ids[left - 1] (the outermost to come) down to ids[0]. */
struct joined {
	char *const *names;
	const uint32_t *ids;
	size_t left;
	int sep;       /* " > " comes before the next name */
	const char *p; /* what is left of the current name or separator */
	size_t n;
};

/* The next stretch of text (0 bytes at the end). */
static size_t joined_next(struct joined *j)
{
	while (!j->n) {
		if (!j->left)
			return 0;
		if (j->sep) {
			j->p = PATH_SEP;
			j->n = PATH_SEP_LEN;
			j->sep = 0;
		} else {
			j->p = j->names[j->ids[--j->left]];
			j->n = strlen(j->p);
			j->sep = 1;
		}
	}
	return j->n;
}

/* a's text against b's, as strcmp compares strings. */
static int joined_cmp(struct joined *a, struct joined *b)
{
	for (;;) {
		size_t na = joined_next(a), nb = joined_next(b);
		if (!na || !nb)
			return na ? 1 : nb ? -1 : 0;
		size_t k = na < nb ? na : nb;
		int c = memcmp(a->p, b->p, k);
		if (c)
			return c;
		a->p += k, a->n -= k;
		b->p += k, b->n -= k;
	}
}

/* Paths pa and pb as their texts compare, each its innermost DIFF_MAX_PARTS
 * names; the names the two share above where they part are not read. */
static int path_cmp(const struct diff *d, uint32_t pa, uint32_t pb)
{
	const struct diff_path *P = d->paths;
	uint32_t ca[DIFF_MAX_PARTS], cb[DIFF_MAX_PARTS];
	size_t na = 0, nb = 0;
	int sep;
	if (P[pa].depth <= DIFF_MAX_PARTS && P[pb].depth <= DIFF_MAX_PARTS) {
		/* whole paths: up to their last common path */
		for (; P[pa].depth > P[pb].depth; pa = P[pa].parent)
			ca[na++] = P[pa].name;
		for (; P[pb].depth > P[pa].depth; pb = P[pb].parent)
			cb[nb++] = P[pb].name;
		for (; pa != pb; pa = P[pa].parent, pb = P[pb].parent) {
			ca[na++] = P[pa].name;
			cb[nb++] = P[pb].name;
		}
		sep = pa != 0;
	} else {
		for (; pa && na < DIFF_MAX_PARTS; pa = P[pa].parent)
			ca[na++] = P[pa].name;
		for (; pb && nb < DIFF_MAX_PARTS; pb = P[pb].parent)
			cb[nb++] = P[pb].name;
		size_t same = 0;
		while (same < na && same < nb && ca[na - 1 - same] == cb[nb - 1 - same])
			same++;
		na -= same;
		nb -= same;
		sep = same > 0;
	}
	struct joined a = {d->names, ca, na, sep, "", 0}, b = {d->names, cb, nb, sep, "", 0};
	return joined_cmp(&a, &b);
}

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct diff *d = ctx;
	const struct diff_row *a = pa, *b = pb;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if (d->run[0].steps && d->run[1].steps) {
		int64_t ma = llabs(diff_median_delta(a)), mb = llabs(diff_median_delta(b));
		if (ma != mb)
			return ma > mb ? -1 : 1;
	}
	int64_t da = llabs(diff_delta(a)), db = llabs(diff_delta(b));
	if (da != db)
		return da > db ? -1 : 1;
	return a->path == b->path ? 0 : path_cmp(ctx, a->path, b->path);
}

/* One run read into a diff of its own: its rows, names and paths and its
 * figures, on a thread of its own; run 0's builder is kept for the merge. */
struct run_job {
	const char *path;
	int run;
	int (*stop)(void *ctx);
	void *ctx;
	struct diff part;
	struct builder b;
	int rc, stopped;
	char *err;
};

static void builder_release(struct builder *b)
{
	free(b->names.slot); /* not its keys: d->names owns them */
	b->names = (struct strmap)STRMAP_INIT;
	strmap_clear(&b->paths);
	strmap_clear(&b->rows);
}

static void *run_thread(void *arg)
{
	struct run_job *j = arg;
	j->b = (struct builder){
	    .names = STRMAP_INIT, .paths = STRMAP_INIT, .rows = STRMAP_INIT, .d = &j->part};
	/* path 0: the empty one, in no map, so that an empty name has a path */
	XGROW(j->part.paths, 1, j->b.apaths);
	j->part.paths[j->part.npaths++] = (struct diff_path){0, 0, 0};
	j->rc = read_run(&j->b, j->run, j->path, j->stop, j->ctx, &j->stopped, &j->err);
	if (j->run)
		builder_release(&j->b);
	return NULL;
}

/* Run 1's part p into run 0's, b's: p's names, then paths (a parent's
 * before its children), then rows mapped onto b's by index, a row b has
 * taking p's figures as its second side.  p is left empty. */
static void merge(struct builder *b, struct diff *p)
{
	struct diff *d = b->d;
	uint32_t *name_to = xcalloc(p->nnames ? p->nnames : 1, sizeof(*name_to));
	uint32_t *path_to = xcalloc(p->npaths ? p->npaths : 1, sizeof(*path_to));
	for (size_t i = 0; i < p->nnames; i++)
		name_to[i] = intern_name(b, p->names[i], strlen(p->names[i]));
	for (size_t i = 1; i < p->npaths; i++) /* path 0 is the empty one in both */
		path_to[i] = intern_path(b, path_to[p->paths[i].parent], name_to[p->paths[i].name]);
	for (size_t i = 0; i < p->nrows; i++) {
		size_t k = row_of(b, path_to[p->rows[i].path], p->rows[i].level);
		d->rows[k].side[1] = p->rows[i].side[1];
		d->rows[k].steps[1] = p->rows[i].steps[1];
	}
	d->run[1] = p->run[1];
	p->run[1].path = NULL;
	free(name_to);
	free(path_to);
	diff_release(p);
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
			builder_release(&job[0].b);
			diff_release(&job[0].part);
			diff_release(&job[1].part);
			return stopped ? DIFF_STOPPED : -1;
		}
	merge(&job[0].b, &job[1].part);
	builder_release(&job[0].b);
	*d = job[0].part;
	drop_empty(d);
	pair_renamed(d);
	drop_empty(d);
	for (size_t i = 0; i < d->nrows; i++) /* a name a run lacks is 0 in each of its steps */
		for (int run = 0; run < 2; run++)
			if (d->rows[i].level != DIFF_STEP && !d->rows[i].steps[run].n)
				d->rows[i].steps[run].n = d->run[run].steps;
	for (size_t i = 0; i < d->nrows; i++)
		for (int run = 0; run < 2; run++) {
			struct diff_side *sum = &d->run[run].level[d->rows[i].level];
			sum->count += d->rows[i].side[run].count;
			sum->total_ns = ns_sum(sum->total_ns, d->rows[i].side[run].total_ns);
		}
	qsort_r(d->rows, d->nrows, sizeof(*d->rows), row_cmp, d);
	return 0;
}

void diff_release(struct diff *d)
{
	for (int run = 0; run < 2; run++)
		free(d->run[run].path);
	free(d->rows);
	free(d->paths);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	memset(d, 0, sizeof(*d));
}
