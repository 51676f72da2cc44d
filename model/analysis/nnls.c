/*
 * Lawson-Hanson NNLS on the normal equations; see nnls.h for the contract.
 *
 * Notation as in Lawson and Hanson, ch. 23: P is the passive set (the
 * variables free to be positive), Z the rest, held at 0; w = c - G x is the
 * negative gradient of (1/2)||A x - b||^2, and x is optimal when x >= 0,
 * w_j <= 0 on Z and w_j = 0 on P (the KKT conditions).  Each outer step
 * moves the j in Z with the largest w_j into P; the inner loop solves the
 * unconstrained problem on P and, while that solution has a non-positive
 * entry, steps from x towards it as far as feasibility allows and drops
 * the variables that reached 0.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/analysis/nnls.h"
#include "model/util/xalloc.h"

/*
 * A Cholesky pivot of the passive block, over the column's own G_jj, is
 * sin^2 of the angle between column j and the span of the passive columns
 * factored before it.  Below this the column counts as dependent on them
 * (about 3e-6 rad: the normal equations square the condition number, so
 * anything much finer is rounding noise).
 */
#define NNLS_DEPENDENT 1e-11
/* w_j within this many ulps (times k) of the terms it is made of is 0. */
#define NNLS_TOL_ULPS 64.0
/* Lawson and Hanson stop at 3n inner steps; ten times that is generous. */
#define NNLS_ITER_PER_COL 30

/*
 * Factors G[p, p] = L L^T, taking the passive columns p[0..np) in list
 * order; L is lower triangular with row stride NNLS_MAX.  Returns -1, or
 * the position in p of the first column that is dependent on those before
 * it (including a zero column).
 */
static int chol_passive(const double *G, size_t k, const size_t *p, size_t np, double *L)
{
	for (size_t j = 0; j < np; j++) {
		double *lj = L + j * NNLS_MAX;
		const double gjj = G[p[j] * k + p[j]];
		double d = gjj;
		for (size_t m = 0; m < j; m++)
			d -= lj[m] * lj[m];
		if (!(d > NNLS_DEPENDENT * gjj))
			return (int)j;
		lj[j] = sqrt(d);
		for (size_t i = j + 1; i < np; i++) {
			double *li = L + i * NNLS_MAX;
			double s = G[p[i] * k + p[j]];
			for (size_t m = 0; m < j; m++)
				s -= li[m] * lj[m];
			li[j] = s / lj[j];
		}
	}
	return -1;
}

/* z[p[i]] = (G[p, p]^{-1} c[p])_i from the factor L; other z untouched. */
static void chol_solve(const double *L, const double *c, const size_t *p, size_t np, double *z)
{
	double y[NNLS_MAX];

	for (size_t i = 0; i < np; i++) {
		double s = c[p[i]];
		for (size_t m = 0; m < i; m++)
			s -= L[i * NNLS_MAX + m] * y[m];
		y[i] = s / L[i * NNLS_MAX + i];
	}
	for (size_t i = np; i-- > 0;) {
		double s = y[i];
		for (size_t m = i + 1; m < np; m++)
			s -= L[m * NNLS_MAX + i] * y[m];
		y[i] = s / L[i * NNLS_MAX + i];
	}
	for (size_t i = 0; i < np; i++)
		z[p[i]] = y[i];
}

/* Removes position i from the passive list, keeping the order of the rest. */
static void drop(size_t *p, size_t *np, size_t i)
{
	memmove(p + i, p + i + 1, (*np - i - 1) * sizeof(*p));
	(*np)--;
}

/*
 * The j in Z, not rejected, with the largest w_j above its rounding
 * tolerance, or k when there is none (x is then optimal).  The tolerance
 * is per column, relative to the terms of w_j = c_j - sum G_ji x_i, so the
 * test does not change when a column or b is rescaled.
 */
static size_t pick_entering(const double *G, const double *c, size_t k, const double *x,
			    const bool *passive, const bool *rejected)
{
	size_t t = k;
	double best = 0;

	for (size_t j = 0; j < k; j++) {
		if (passive[j] || rejected[j] || !(G[j * k + j] > 0))
			continue;
		double w = c[j], mag = fabs(c[j]);
		for (size_t i = 0; i < k; i++) {
			w -= G[j * k + i] * x[i];
			mag += fabs(G[j * k + i] * x[i]);
		}
		if (w > NNLS_TOL_ULPS * (double)k * DBL_EPSILON * mag && (t == k || w > best)) {
			t = j;
			best = w;
		}
	}
	return t;
}

int nnls_normal(const double *G, const double *c, size_t k, double *x)
{
	double L[NNLS_MAX * NNLS_MAX], z[NNLS_MAX];
	size_t p[NNLS_MAX], np = 0;
	bool passive[NNLS_MAX] = {false}, rejected[NNLS_MAX] = {false};
	size_t iter = 0, limit = NNLS_ITER_PER_COL * k;

	if (k == 0)
		return 0;
	for (size_t i = 0; i < k; i++)
		x[i] = 0;
	if (k > NNLS_MAX)
		return -1;
	for (size_t i = 0; i < k; i++) {
		if (!isfinite(c[i]))
			return -1;
		for (size_t j = 0; j < k; j++)
			if (!isfinite(G[i * k + j]))
				return -1;
	}

	for (;;) {
		size_t t = pick_entering(G, c, k, x, passive, rejected);
		if (t == k)
			return 0;
		if (++iter > limit)
			return -1;
		p[np++] = t;
		passive[t] = true;

		bool entering = true;
		for (;;) {
			int bad = chol_passive(G, k, p, np, L);
			if (bad >= 0) {
				/*
				 * Only t can fail on entry (the columns before it
				 * factor as they did last time); later a failure is
				 * rounding after a removal, and the column's
				 * contribution is in the span of the others.
				 */
				size_t j = p[bad];
				drop(p, &np, (size_t)bad);
				passive[j] = false;
				x[j] = 0;
				if (j == t && entering) {
					rejected[t] = true;
					break;
				}
				if (np == 0)
					break;
				continue;
			}
			chol_solve(L, c, p, np, z);
			if (entering && !(z[t] > 0)) {
				/* w_t > 0 yet z_t <= 0: rounding; L&H's step 6 */
				drop(p, &np, np - 1);
				passive[t] = false;
				rejected[t] = true;
				break;
			}
			entering = false;

			/* the largest step from x towards z that keeps P feasible */
			double alpha = 1;
			size_t out = np;
			for (size_t i = 0; i < np; i++) {
				size_t j = p[i];
				if (z[j] <= 0) {
					/* x_j > 0 on P but for t, and z_t > 0 */
					double den = x[j] - z[j];
					double a = den > 0 ? x[j] / den : 0;
					if (out == np || a < alpha) {
						alpha = a;
						out = i;
					}
				}
			}
			if (out == np) {
				for (size_t i = 0; i < np; i++)
					x[p[i]] = z[p[i]];
				memset(rejected, 0, sizeof(rejected));
				break;
			}
			if (++iter > limit)
				return -1;
			for (size_t i = 0; i < np; i++)
				x[p[i]] += alpha * (z[p[i]] - x[p[i]]);
			x[p[out]] = 0;
			for (size_t i = np; i-- > 0;) {
				if (x[p[i]] <= 0) {
					x[p[i]] = 0;
					passive[p[i]] = false;
					drop(p, &np, i);
				}
			}
			memset(rejected, 0, sizeof(rejected));
			if (np == 0)
				break;
		}
	}
}

void nnls_acc_init(struct nnls_acc *a, size_t k)
{
	a->k = k;
	a->G = xcalloc(k * k, sizeof(*a->G));
	a->c = xcalloc(k, sizeof(*a->c));
	a->bb = 0;
	a->rows = 0;
}

void nnls_acc_add(struct nnls_acc *a, const double *row, double b, double weight)
{
	const size_t k = a->k;

	a->rows++;
	a->bb += weight * b * b;
	for (size_t i = 0; i < k; i++) {
		if (row[i] == 0)
			continue;
		const double wi = weight * row[i];
		double *gi = a->G + i * k;
		a->c[i] += wi * b;
		for (size_t j = 0; j < k; j++)
			gi[j] += wi * row[j];
	}
}

int nnls_acc_solve(const struct nnls_acc *a, double *x)
{
	return nnls_normal(a->G, a->c, a->k, x);
}

double nnls_acc_rss(const struct nnls_acc *a, const double *x)
{
	const size_t k = a->k;
	double r = a->bb;

	for (size_t i = 0; i < k; i++) {
		double gx = 0;
		for (size_t j = 0; j < k; j++)
			gx += a->G[i * k + j] * x[j];
		r += x[i] * (gx - 2 * a->c[i]);
	}
	return r > 0 ? r : 0;
}

void nnls_acc_release(struct nnls_acc *a)
{
	free(a->G);
	free(a->c);
	a->G = NULL;
	a->c = NULL;
	a->k = 0;
	a->rows = 0;
	a->bb = 0;
}
