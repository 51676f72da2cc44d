/*
 * The SQL aggregates compiled queries call (see funcs.h) that need no state
 * of the connection: gm_hagg, a GROUP BY on an integer key through a hash
 * table, and gm_pct, a percentile.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "query/funcs_int.h"
#include "model/util/xalloc.h"

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

void gm_hagg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
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

void gm_hagg_final(sqlite3_context *ctx)
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

void gm_pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
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

void gm_pct_final(sqlite3_context *ctx)
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
