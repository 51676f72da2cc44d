/*
 * Resource attribution, step 3 (attrib.c): each metric's demands per phase
 * type, fitted by NNLS over its sample periods (or the user's rules, or a
 * cache's fits), and each period's value upsampled over the mixes of work
 * that ran in it, in GradeML's three passes (attrib.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/attrib.h"
#include "model/analysis/attrib_int.h"
#include "model/analysis/nnls.h"
#include "model/util/nstime.h"
#include "model/util/xalloc.h"

/* ---- fit and upsampling ---- */

static void add_fit(struct run *r, const struct metric *m, int cls_dev, int t)
{
	struct attribution *a = r->out;
	if (m->id == DEVWORK_ID || !a)
		return;
	XGROW(a->fits, a->nfits + 1, r->fit_alloc);
	a->fits[a->nfits++] =
	    (struct attrib_fit){m->id, m->res, attrib_type_names[cls_dev][t], m->exact[t], m->d[t]};
}

/* The user's rule for type t of class dev on resource res, or NULL. */
static const struct attrib_rule *rule_for(const struct attrib_rules *rs, int res, int dev, int t)
{
	for (size_t i = 0; rs && i < rs->n; i++)
		if (rs->v[i].res == res && rs->v[i].dev == dev && rs->v[i].type == t)
			return &rs->v[i];
	return NULL;
}

/* Metric m's demands: Exact(capacity) for device work (kernels, copies,
 * sets) on GPU utilization, else Variable(d) fitted by NNLS over the
 * sample periods; a user's rule replaces either (a fixed demand is known,
 * not fitted). */
void attrib_fit_metric(struct run *r, struct metric *m, int dev, const int *present)
{
	int cols[NTYPES], k = 0, known[NTYPES] = {0};
	for (int t = 0; t < NTYPES; t++) {
		m->exact[t] = 0;
		m->d[t] = 0;
		if (!present[t])
			continue;
		const struct attrib_rule *u = rule_for(r->rules, m->res, dev, t);
		if (u) {
			m->exact[t] = u->rule == ATTRIB_RULE_EXACT;
			if (u->rule == ATTRIB_RULE_NONE)
				continue;
			if (!isnan(u->demand) || m->exact[t]) {
				m->d[t] = isnan(u->demand) ? m->cap : u->demand;
				known[t] = 1;
				continue;
			}
		} else if (m->res == ATTRIB_GPU) {
			/* the GPU is busy while its device work runs */
			m->exact[t] = dev;
			m->d[t] = dev ? m->cap : 0;
			known[t] = dev;
			continue;
		}
		cols[k++] = t;
	}
	if (k) {
		struct nnls_acc acc;
		double row[NTYPES], x[NTYPES];
		nnls_acc_init(&acc, (size_t)k);
		for (size_t j = 0; j + 1 < m->ns; j++) {
			double L = ns_span(m->t[j], m->t[j + 1]), ex = 0;
			if (!(L > 0))
				continue;
			memset(row, 0, sizeof(row));
			for (size_t e = m->off[j]; e < m->off[j + 1]; e++) {
				for (int c = 0; c < k; c++)
					row[c] +=
					    m->len[e] * attrib_key_count(m->key[e], cols[c]) / L;
				for (int t = 0; t < NTYPES; t++)
					if (known[t])
						ex += m->len[e] * attrib_key_count(m->key[e], t) *
						      m->d[t] / L;
			}
			nnls_acc_add(&acc, row, fmax(m->v[j] - ex, 0), 1.0);
		}
		if (nnls_acc_solve(&acc, x) == 0)
			for (int c = 0; c < k; c++)
				m->d[cols[c]] = isfinite(x[c]) && x[c] > 0 ? x[c] : 0;
		nnls_acc_release(&acc);
	}
	for (int t = 0; t < NTYPES; t++)
		if (present[t])
			add_fit(r, m, dev, t);
}

struct bucket {
	double e, v, f, u;
	double order; /* the variable pass's sort key */
	size_t ent;
};

static int by_e(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;
	return x->e < y->e ? 1 : x->e > y->e ? -1 : 0;
}

/* The variable pass goes by demand over room left, largest first. */
static int by_room(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;
	return x->order < y->order ? 1 : x->order > y->order ? -1 : 0;
}

static int by_u(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;
	return x->u < y->u ? 1 : x->u > y->u ? -1 : 0;
}

/* GradeML's upsampling of one sample value over a period's buckets: first
 * to exact demand, then in proportion to variable demand, then spread as
 * background, never past capacity. */
static void upsample(struct bucket *b, size_t n, double value, double cap)
{
	double rest = value, need = 0;
	for (size_t i = 0; i < n; i++) {
		b[i].u = 0;
		need += b[i].e * b[i].f;
	}
	qsort(b, n, sizeof(*b), by_e);
	for (size_t i = 0; i < n && need > 0 && rest > 0; i++) {
		double u = fmin(fmin(rest / need * b[i].e, b[i].e), cap);
		b[i].u = u;
		rest = fmax(rest - u * b[i].f, 0);
		need -= b[i].e * b[i].f;
	}
	if (rest > 0) {
		need = 0;
		for (size_t i = 0; i < n; i++)
			need += b[i].v * b[i].f;
		for (size_t i = 0; i < n; i++) {
			double room = cap - b[i].u;
			b[i].order = !(b[i].v > 0) ? 0 : room > 0 ? b[i].v / room : INFINITY;
		}
		qsort(b, n, sizeof(*b), by_room);
		for (size_t i = 0; i < n && need > 0 && rest > 0; i++) {
			double u = fmin(rest / need * b[i].v, fmax(cap - b[i].u, 0));
			b[i].u += u;
			rest = fmax(rest - u * b[i].f, 0);
			need -= b[i].v * b[i].f;
		}
	}
	if (rest > 0) {
		double left = 0;
		for (size_t i = 0; i < n; i++)
			left += b[i].f;
		qsort(b, n, sizeof(*b), by_u);
		for (size_t i = 0; i < n && left > 0 && rest > 0; i++) {
			double u = fmin(rest / left, fmax(cap - b[i].u, 0));
			b[i].u += u;
			rest = fmax(rest - u * b[i].f, 0);
			left -= b[i].f;
		}
	}
}

void attrib_upsample(size_t n, const double *exact, const double *var, const double *frac,
		     double value, double cap, double *out)
{
	struct bucket *b = xmalloc((n + 1) * sizeof(*b));
	for (size_t i = 0; i < n; i++)
		b[i] = (struct bucket){exact[i], var[i], frac[i], 0, 0, i};
	upsample(b, n, value, cap);
	for (size_t i = 0; i < n; i++)
		out[b[i].ent] = b[i].u;
	free(b);
}

void attrib_upsample_metric(struct metric *m)
{
	struct bucket *b = NULL;
	size_t alloc = 0;
	m->u = xcalloc(m->nent + 1, sizeof(*m->u));
	for (size_t j = 0; j + 1 < m->ns; j++) {
		size_t n = m->off[j + 1] - m->off[j];
		double L = ns_span(m->t[j], m->t[j + 1]);
		if (!n || !(L > 0))
			continue;
		XGROW(b, n, alloc);
		for (size_t i = 0; i < n; i++) {
			size_t e = m->off[j] + i;
			double ex = 0, va = 0;
			for (int t = 0; t < NTYPES; t++) {
				int c = attrib_key_count(m->key[e], t);
				if (m->exact[t])
					ex += c * m->d[t];
				else
					va += c * m->d[t];
			}
			b[i] = (struct bucket){ex, va, m->len[e] / L, 0, 0, e};
		}
		upsample(b, n, fmin(m->v[j], m->cap * 4), m->cap);
		for (size_t i = 0; i < n; i++)
			m->u[b[i].ent] = b[i].u;
	}
	free(b);
}

/* Metric m's demands as fitted before (attrib_compute's or the cache's). */
void attrib_demands_of(struct metric *m, int dev, const struct attrib_fit *fits, size_t nfits)
{
	for (int t = 0; t < NTYPES; t++) {
		m->exact[t] = 0;
		m->d[t] = 0;
		for (size_t i = 0; i < nfits; i++)
			if (fits[i].metric_id == m->id && attrib_type_names[dev][t] &&
			    !strcmp(fits[i].type, attrib_type_names[dev][t])) {
				m->exact[t] = fits[i].exact;
				m->d[t] = isfinite(fits[i].demand) && fits[i].demand > 0
					      ? fits[i].demand
					      : 0;
			}
	}
}
