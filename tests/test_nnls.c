/*
 * Unit tests for model/analysis/nnls.h: small systems solved by hand, degenerate
 * columns (zero, duplicated, scaled, negated), random problems checked
 * against a brute force over every passive set, and the weighted
 * accumulator against A^T W A formed directly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "model/analysis/nnls.h"
#include "model/util/xalloc.h"

#define MAXK 8

/* cmocka's assert_float_equal works in float; this one in double. */
#define assert_near(a, b, tol) check_near((a), (b), (tol), #a, __FILE__, __LINE__)

static void check_near(double a, double b, double tol, const char *what, const char *file, int line)
{
	if (!(fabs(a - b) <= tol)) {
		print_error("%s = %.17g, expected %.17g within %g\n", what, a, b, tol);
		_fail(file, line);
	}
}

/* G = A^T A and c = A^T b for A (m x k, row-major). */
static void normal_eq(const double *A, const double *b, size_t m, size_t k, double *G, double *c)
{
	for (size_t i = 0; i < k; i++) {
		c[i] = 0;
		for (size_t r = 0; r < m; r++)
			c[i] += A[r * k + i] * b[r];
		for (size_t j = 0; j < k; j++) {
			G[i * k + j] = 0;
			for (size_t r = 0; r < m; r++)
				G[i * k + j] += A[r * k + i] * A[r * k + j];
		}
	}
}

/* ||A x - b||^2 from the rows, not from the normal equations. */
static double rss(const double *A, const double *b, size_t m, size_t k, const double *x)
{
	double s = 0;
	for (size_t r = 0; r < m; r++) {
		double e = -b[r];
		for (size_t j = 0; j < k; j++)
			e += A[r * k + j] * x[j];
		s += e * e;
	}
	return s;
}

/* w = c - G x */
static void dual(const double *G, const double *c, size_t k, const double *x, double *w)
{
	for (size_t i = 0; i < k; i++) {
		w[i] = c[i];
		for (size_t j = 0; j < k; j++)
			w[i] -= G[i * k + j] * x[j];
	}
}

/*
 * KKT conditions of min ||A x - b||^2, x >= 0, with tolerance tol on w:
 * x >= 0, w <= tol, and |w_i| <= tol where x_i > 0.
 */
static void assert_kkt(const double *G, const double *c, size_t k, const double *x, double tol)
{
	double w[MAXK];
	dual(G, c, k, x, w);
	for (size_t i = 0; i < k; i++) {
		assert_true(isfinite(x[i]));
		assert_true(x[i] >= 0);
		assert_true(w[i] <= tol);
		if (x[i] > 0)
			assert_true(fabs(w[i]) <= tol);
	}
}

static void test_consistent_positive(void **state)
{
	(void)state;
	/*
	 * A = [[1,0],[0,1],[1,1]], b = A [2,3] = [2,3,5].
	 * G = [[2,1],[1,2]], c = [2+5, 3+5] = [7,8];
	 * G^-1 = (1/3)[[2,-1],[-1,2]], so x = (1/3)[14-8, -7+16] = [2,3].
	 */
	const double A[] = {1, 0, 0, 1, 1, 1}, b[] = {2, 3, 5};
	double G[4], c[2], x[2] = {-1, -1};
	normal_eq(A, b, 3, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_near(x[0], 2, 1e-12);
	assert_near(x[1], 3, 1e-12);
	assert_true(rss(A, b, 3, 2, x) < 1e-20);
}

static void test_negative_clamped(void **state)
{
	(void)state;
	/*
	 * A as above, b = [1,-1,0]: G = [[2,1],[1,2]], c = [1,-1].
	 * Unconstrained: x = (1/3)[2+1, -1-2] = [1,-1], so x2 wants to be
	 * negative.  Clamping x2 = 0 leaves the 1-D problem on column 1:
	 * x1 = c1/G11 = 1/2.  Then w = c - G x = [1 - 1, -1 - 1/2] = [0, -3/2]:
	 * w1 = 0 where x1 > 0 and w2 < 0 where x2 = 0, so [1/2, 0] is the
	 * constrained optimum, with ||Ax-b||^2 = (1/2)^2 + 1 + (1/2)^2 = 3/2
	 * against 2 at x = 0.
	 */
	const double A[] = {1, 0, 0, 1, 1, 1}, b[] = {1, -1, 0};
	double G[4], c[2], x[2], w[2];
	normal_eq(A, b, 3, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_near(x[0], 0.5, 1e-12);
	assert_true(x[1] == 0);
	dual(G, c, 2, x, w);
	assert_near(w[0], 0, 1e-12);
	assert_near(w[1], -1.5, 1e-12);
	assert_kkt(G, c, 2, x, 1e-12);
	assert_near(rss(A, b, 3, 2, x), 1.5, 1e-12);
}

static void test_leaves_passive_set(void **state)
{
	(void)state;
	/*
	 * A = [[1,0,1],[0,1,1],[0,0,1]] (rows): square and invertible.
	 * b = [4,4,1]: unconstrained x3 = b3 = 1, x1 = x2 = 4 - 1 = 3, all
	 * positive, so that is the NNLS answer too, with rss 0.
	 * b = [4,4,-1]: unconstrained x3 = -1, x1 = x2 = 5.  With x3 = 0,
	 * columns 1 and 2 are orthogonal unit vectors: x1 = x2 = 4, and
	 * w3 = c3 - (x1 + x2) = (4+4-1) - 8 = -1 <= 0: optimal, rss = 1.
	 * The path makes column 3 leave the passive set: c = [4,4,7], so x3
	 * enters first at c3/G33 = 7/3; then w1 = 4 - 7/3 > 0 and x1 enters
	 * (x3 = 3/2, x1 = 5/2); then w2 = 4 - 3/2 > 0 and x2 enters, the
	 * unconstrained z3 = -1 stops the step at alpha = 1.5/2.5 and x3 leaves.
	 */
	const double A[] = {1, 0, 1, 0, 1, 1, 0, 0, 1};
	const double b1[] = {4, 4, 1}, b2[] = {4, 4, -1};
	double G[9], c[3], x[3];

	normal_eq(A, b1, 3, 3, G, c);
	assert_int_equal(nnls_normal(G, c, 3, x), 0);
	assert_near(x[0], 3, 1e-12);
	assert_near(x[1], 3, 1e-12);
	assert_near(x[2], 1, 1e-12);

	normal_eq(A, b2, 3, 3, G, c);
	assert_int_equal(nnls_normal(G, c, 3, x), 0);
	assert_near(x[0], 4, 1e-12);
	assert_near(x[1], 4, 1e-12);
	assert_true(x[2] == 0);
	assert_near(rss(A, b2, 3, 3, x), 1, 1e-12);
	assert_kkt(G, c, 3, x, 1e-12);
}

static void test_zero_column(void **state)
{
	(void)state;
	/*
	 * A = [[1,0,0],[2,0,1],[3,0,0]] (column 2 all zero), b = [2,4,6].
	 * Columns 1 and 3 are not orthogonal: G = [[14,0,2],[0,0,0],[2,0,1]],
	 * c = [28,0,4].  b is exactly 2 * column 1, so x = [2,0,0] with rss 0:
	 * w = c - G x = [28 - 28, 0, 4 - 4] = 0.
	 */
	const double A[] = {1, 0, 0, 2, 0, 1, 3, 0, 0}, b[] = {2, 4, 6};
	double G[9], c[3], x[3];
	normal_eq(A, b, 3, 3, G, c);
	assert_int_equal(nnls_normal(G, c, 3, x), 0);
	assert_near(x[0], 2, 1e-12);
	assert_true(x[1] == 0);
	assert_near(x[2], 0, 1e-12);
	assert_true(x[2] >= 0);

	/* A column of zeros alone: G = 0, c = 0, x = 0. */
	const double G0[] = {0}, c0[] = {0};
	double x0 = -1;
	assert_int_equal(nnls_normal(G0, c0, 1, &x0), 0);
	assert_true(x0 == 0);
}

static void test_dependent_columns(void **state)
{
	(void)state;
	/*
	 * Single column a = [1,2,2], b = [1,1,1]: |a|^2 = 9, a^T b = 5, so
	 * x = 5/9 and rss = 3 - 25/9 = 2/9.
	 */
	const double b[] = {1, 1, 1};
	const double one[] = {1, 2, 2};
	double G1[1], c1[1], x1[1];
	normal_eq(one, b, 3, 1, G1, c1);
	assert_int_equal(nnls_normal(G1, c1, 1, x1), 0);
	assert_near(x1[0], 5.0 / 9, 1e-12);

	/* [a, a]: G = 9 [[1,1],[1,1]], c = [5,5]; any x >= 0 with x1 + x2 = 5/9. */
	const double dup[] = {1, 1, 2, 2, 2, 2};
	double G[9], c[3], x[3];
	normal_eq(dup, b, 3, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_true(isfinite(x[0]) && isfinite(x[1]));
	assert_true(x[0] >= 0 && x[1] >= 0);
	assert_near(x[0] + x[1], 5.0 / 9, 1e-12);
	assert_near(rss(dup, b, 3, 2, x), 2.0 / 9, 1e-12);

	/* [a, 2a, a]: optimal when x1 + 2 x2 + x3 = 5/9. */
	const double scaled[] = {1, 2, 1, 2, 4, 2, 2, 4, 2};
	normal_eq(scaled, b, 3, 3, G, c);
	assert_int_equal(nnls_normal(G, c, 3, x), 0);
	for (size_t i = 0; i < 3; i++)
		assert_true(isfinite(x[i]) && x[i] >= 0);
	assert_near(x[0] + 2 * x[1] + x[2], 5.0 / 9, 1e-12);

	/*
	 * [a, -a] (negatively correlated): G = 9 [[1,-1],[-1,1]], c = [5,-5].
	 * Optimal when x1 - x2 = 5/9; at x = [5/9, 0], w = [0, -5 + 5] = 0.
	 */
	const double neg[] = {1, -1, 2, -2, 2, -2};
	normal_eq(neg, b, 3, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_true(isfinite(x[0]) && isfinite(x[1]));
	assert_true(x[0] >= 0 && x[1] >= 0);
	assert_near(x[0] - x[1], 5.0 / 9, 1e-12);
	assert_near(rss(neg, b, 3, 2, x), 2.0 / 9, 1e-12);

	/* [-a] alone: a^T b < 0 wants x < 0, so x = 0 and rss = |b|^2 = 3. */
	const double minus[] = {-1, -2, -2};
	normal_eq(minus, b, 3, 1, G1, c1);
	assert_int_equal(nnls_normal(G1, c1, 1, x1), 0);
	assert_true(x1[0] == 0);
}

static void test_near_dependent(void **state)
{
	(void)state;
	/*
	 * a1 = [1,0], a2 = [0.5,1e-7]: sin^2 of their angle is
	 * 1e-14 / 0.25 = 4e-14, under the solver's 1e-11, so a2 counts as a
	 * copy of a1/2.  b = [1,1]: G = [[1,0.5],[0.5,0.25+1e-14]],
	 * c = [1, 0.5+1e-7].  x1 enters (c1 > c2) at 1; then
	 * w2 = 0.5+1e-7 - 0.5 = 1e-7 > 0, so a2 is tried and refused as
	 * dependent: x = [1,0], rss = 1.  (The exact optimum is x = [0, 2.0000004]
	 * with rss 0.9999996: that 4e-7 is the price of the threshold.)  Without
	 * the guard, G_PP has determinant 1e-14 and x would be ~1e7 or NaN.
	 */
	const double A[] = {1, 0.5, 0, 1e-7}, b[] = {1, 1};
	double G[4], c[2], x[2];
	normal_eq(A, b, 2, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_near(x[0], 1, 1e-12);
	assert_true(x[1] == 0);
	assert_near(rss(A, b, 2, 2, x), 1, 1e-12);
}

static void test_zero_rhs_and_empty(void **state)
{
	(void)state;
	/* b = 0: c = 0, so w = 0 at x = 0, which is optimal with rss 0. */
	const double A[] = {1, 0, 0, 1, 1, 1}, b[] = {0, 0, 0};
	double G[4], c[2], x[2] = {7, 7};
	normal_eq(A, b, 3, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_true(x[0] == 0 && x[1] == 0);

	/* k = 0: nothing to read or write. */
	assert_int_equal(nnls_normal(NULL, NULL, 0, NULL), 0);
	struct nnls_acc acc;
	nnls_acc_init(&acc, 0);
	nnls_acc_add(&acc, NULL, 3, 1);
	assert_int_equal(nnls_acc_solve(&acc, NULL), 0);
	assert_near(nnls_acc_rss(&acc, NULL), 9, 0);
	nnls_acc_release(&acc);
}

static void test_bad_input(void **state)
{
	(void)state;
	double G[] = {1, 0, 0, 1}, c[] = {1, NAN}, x[2] = {5, 5};
	assert_int_equal(nnls_normal(G, c, 2, x), -1);
	assert_true(x[0] == 0 && x[1] == 0);
	c[1] = 1;
	G[1] = INFINITY;
	x[0] = 5;
	assert_int_equal(nnls_normal(G, c, 2, x), -1);
	assert_true(x[0] == 0 && x[1] == 0);

	size_t k = NNLS_MAX + 1;
	double *Gb = xcalloc(k * k, sizeof(*Gb)), *cb = xcalloc(k, sizeof(*cb));
	double *xb = xcalloc(k, sizeof(*xb));
	assert_int_equal(nnls_normal(Gb, cb, k, xb), -1);
	free(Gb);
	free(cb);
	free(xb);
}

/* splitmix64: the same numbers on every platform, unlike rand(). */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1p-53;
}

/*
 * Solves the k x k system M z = v by Gaussian elimination with partial
 * pivoting (independent of the solver's Cholesky).  Returns -1 when a pivot
 * is below rel times the largest entry of M: singular for our purposes.
 */
static int gauss(double *M, double *v, size_t k, double rel)
{
	double big = 0;
	for (size_t i = 0; i < k * k; i++)
		big = fmax(big, fabs(M[i]));
	for (size_t col = 0; col < k; col++) {
		size_t piv = col;
		for (size_t r = col + 1; r < k; r++)
			if (fabs(M[r * k + col]) > fabs(M[piv * k + col]))
				piv = r;
		if (!(fabs(M[piv * k + col]) > rel * big))
			return -1;
		for (size_t j = 0; j < k; j++) {
			double t = M[col * k + j];
			M[col * k + j] = M[piv * k + j];
			M[piv * k + j] = t;
		}
		double t = v[col];
		v[col] = v[piv];
		v[piv] = t;
		for (size_t r = col + 1; r < k; r++) {
			double f = M[r * k + col] / M[col * k + col];
			for (size_t j = col; j < k; j++)
				M[r * k + j] -= f * M[col * k + j];
			v[r] -= f * v[col];
		}
	}
	for (size_t i = k; i-- > 0;) {
		for (size_t j = i + 1; j < k; j++)
			v[i] -= M[i * k + j] * v[j];
		v[i] /= M[i * k + i];
	}
	return 0;
}

/*
 * The NNLS optimum by brute force: for every subset S of the columns,
 * the unconstrained least squares on S; among those with every entry > 0,
 * the least residual (the empty set, x = 0, included).  Subsets whose
 * columns are dependent are skipped: some independent subset does as well.
 * Returns the residual and fills best.
 */
static double brute_force(const double *A, const double *b, size_t m, size_t k, double *best)
{
	double G[MAXK * MAXK], c[MAXK];
	double f_best = rss(A, b, m, k, (double[MAXK]){0});

	normal_eq(A, b, m, k, G, c);
	for (size_t i = 0; i < k; i++)
		best[i] = 0;
	for (unsigned mask = 1; mask < (1u << k); mask++) {
		size_t idx[MAXK], n = 0;
		double M[MAXK * MAXK], v[MAXK], x[MAXK] = {0};
		for (size_t i = 0; i < k; i++)
			if (mask & (1u << i))
				idx[n++] = i;
		for (size_t i = 0; i < n; i++) {
			v[i] = c[idx[i]];
			for (size_t j = 0; j < n; j++)
				M[i * n + j] = G[idx[i] * k + idx[j]];
		}
		if (gauss(M, v, n, 1e-9) < 0)
			continue;
		bool feasible = true;
		for (size_t i = 0; i < n; i++) {
			feasible = feasible && v[i] > 0;
			x[idx[i]] = v[i];
		}
		if (!feasible)
			continue;
		double f = rss(A, b, m, k, x);
		if (f < f_best) {
			f_best = f;
			for (size_t i = 0; i < k; i++)
				best[i] = x[i];
		}
	}
	return f_best;
}

static void test_random_vs_brute_force(void **state)
{
	(void)state;
	/*
	 * 200 x 8, entries in [0,1) like overlap fractions, so the columns are
	 * positively correlated; true x has zeros and one negative entry, and
	 * b has noise, so some bounds are active at the optimum.  Full column
	 * rank, so the optimum is unique and x itself must match.
	 */
	enum { M = 200, K = 8, PROBLEMS = 12 };
	const double truth[K] = {1.5, 0, 2.0, 0, -0.7, 0.3, 0, 4.0};
	uint64_t seed = 20240611;
	double *A = xmalloc(M * K * sizeof(*A)), b[M];
	size_t clamped = 0;

	for (int prob = 0; prob < PROBLEMS; prob++) {
		for (size_t r = 0; r < M; r++) {
			b[r] = 0;
			for (size_t j = 0; j < K; j++) {
				A[r * K + j] = rng_unit(&seed);
				b[r] += A[r * K + j] * truth[j];
			}
			b[r] += 0.5 * (rng_unit(&seed) - 0.5);
		}
		double G[K * K], c[K], x[K], xb[K];
		normal_eq(A, b, M, K, G, c);
		assert_int_equal(nnls_normal(G, c, K, x), 0);
		double fb = brute_force(A, b, M, K, xb);
		double f = rss(A, b, M, K, x);
		double scale = 0;
		for (size_t j = 0; j < K; j++) {
			scale = fmax(scale, fabs(xb[j]));
			clamped += xb[j] == 0;
		}
		for (size_t j = 0; j < K; j++) {
			assert_true(x[j] >= 0);
			assert_true(fabs(x[j] - xb[j]) <= 1e-6 * scale);
			/* the same active set, not merely close values */
			assert_true((x[j] == 0) == (xb[j] == 0));
		}
		assert_true(fabs(f - fb) <= 1e-9 * fb);
		double cmax = 0;
		for (size_t j = 0; j < K; j++)
			cmax = fmax(cmax, fabs(c[j]));
		assert_kkt(G, c, K, x, 1e-9 * cmax);
	}
	/* the test exercised the constraint (the negative truth alone ensures it) */
	assert_true(clamped >= PROBLEMS);
	free(A);
}

static void test_random_rank_deficient(void **state)
{
	(void)state;
	/*
	 * Fewer rows than columns (rank <= 5 with 7 columns), and column 6 a
	 * copy of column 1: the minimiser is not unique, so only the residual
	 * is compared with the brute force.
	 */
	enum { M = 5, K = 7, PROBLEMS = 200 };
	uint64_t seed = 7;
	double A[M * K], b[M], G[K * K], c[K], x[K], xb[K];

	for (int prob = 0; prob < PROBLEMS; prob++) {
		double bb = 0;
		for (size_t r = 0; r < M; r++) {
			for (size_t j = 0; j < K; j++)
				A[r * K + j] = 2 * rng_unit(&seed) - 1;
			A[r * K + 5] = A[r * K + 0];
			b[r] = 2 * rng_unit(&seed) - 1;
			bb += b[r] * b[r];
		}
		normal_eq(A, b, M, K, G, c);
		assert_int_equal(nnls_normal(G, c, K, x), 0);
		double fb = brute_force(A, b, M, K, xb);
		for (size_t j = 0; j < K; j++)
			assert_true(isfinite(x[j]) && x[j] >= 0);
		assert_true(fabs(rss(A, b, M, K, x) - fb) <= 1e-9 * bb);
	}
}

static void test_scale_invariance(void **state)
{
	(void)state;
	/*
	 * Scaling column j by s_j and b by t scales x_j by t / s_j: the
	 * tolerances are relative.  The problem of test_negative_clamped with
	 * columns scaled by 1e-6 and 1e9 and b by 1e12 has the answer
	 * [0.5 * 1e12 / 1e-6, 0] = [5e17, 0].
	 */
	const double A[] = {1e-6, 0, 0, 1e9, 1e-6, 1e9}, b[] = {1e12, -1e12, 0};
	double G[4], c[2], x[2];
	normal_eq(A, b, 3, 2, G, c);
	assert_int_equal(nnls_normal(G, c, 2, x), 0);
	assert_near(x[0] / 5e17, 1, 1e-12);
	assert_true(x[1] == 0);
}

static void test_accumulator(void **state)
{
	(void)state;
	/*
	 * Rows with weights w_r: the accumulator must hold G = A^T W A,
	 * c = A^T W b, bb = b^T W b, which equal the plain normal equations
	 * of the rows scaled by sqrt(w_r).  A weight-0 row counts but adds
	 * nothing; the zero entries exercise the sparse path.
	 */
	enum { M = 6, K = 3 };
	const double A[M * K] = {1, 0, 2, 0, 1, 0, 3, 1, 0, 0, 0, 1, 1, 1, 1, 2, -1, 0};
	const double b[M] = {1, 2, -1, 4, 0.5, 3};
	const double wt[M] = {1, 2, 0.5, 0, 3, 1};
	double As[M * K], bs[M], G[K * K], c[K], x[K], xa[K];
	struct nnls_acc acc;

	nnls_acc_init(&acc, K);
	for (size_t r = 0; r < M; r++) {
		nnls_acc_add(&acc, A + r * K, b[r], wt[r]);
		double s = sqrt(wt[r]);
		for (size_t j = 0; j < K; j++)
			As[r * K + j] = s * A[r * K + j];
		bs[r] = s * b[r];
	}
	normal_eq(As, bs, M, K, G, c);
	assert_int_equal(acc.k, K);
	assert_int_equal(acc.rows, M);
	double bb = 0;
	for (size_t r = 0; r < M; r++)
		bb += bs[r] * bs[r];
	assert_near(acc.bb, bb, 1e-12 * bb);
	for (size_t i = 0; i < K; i++) {
		assert_near(acc.c[i], c[i], 1e-12 * fabs(c[i]) + 1e-15);
		for (size_t j = 0; j < K; j++) {
			assert_near(acc.G[i * K + j], G[i * K + j],
				    1e-12 * fabs(G[i * K + j]) + 1e-15);
			assert_true(acc.G[i * K + j] == acc.G[j * K + i]);
		}
	}
	/* G[0][0] by hand: 1*1 + 0.5*9 + 3*1 + 1*4 = 12.5 (row 4 has weight 0) */
	assert_near(acc.G[0], 12.5, 1e-12);

	assert_int_equal(nnls_acc_solve(&acc, xa), 0);
	assert_int_equal(nnls_normal(G, c, K, x), 0);
	for (size_t j = 0; j < K; j++)
		assert_near(xa[j], x[j], 1e-9 * (1 + fabs(x[j])));
	double direct = rss(As, bs, M, K, xa);
	assert_near(nnls_acc_rss(&acc, xa), direct, 1e-9 * bb);
	/* x = 0 leaves all of b: rss = bb */
	const double zero[K] = {0};
	assert_near(nnls_acc_rss(&acc, zero), acc.bb, 0);
	nnls_acc_release(&acc);
	assert_null(acc.G);
	assert_null(acc.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_consistent_positive),
	    cmocka_unit_test(test_negative_clamped),
	    cmocka_unit_test(test_leaves_passive_set),
	    cmocka_unit_test(test_zero_column),
	    cmocka_unit_test(test_dependent_columns),
	    cmocka_unit_test(test_near_dependent),
	    cmocka_unit_test(test_zero_rhs_and_empty),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_random_vs_brute_force),
	    cmocka_unit_test(test_random_rank_deficient),
	    cmocka_unit_test(test_scale_invariance),
	    cmocka_unit_test(test_accumulator),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
