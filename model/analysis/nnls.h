/*
 * Non-negative least squares for GradeML's resource attribution: per
 * metric, the demand coefficient of each phase type is the x >= 0 that
 * minimises ||A x - b||^2, where A has one row per metric sample period
 * (up to about a million) and one column per phase type (a few dozen).
 * Rows are many and columns few, so callers fold the rows into the normal
 * equations G = A^T A, c = A^T b as they stream them (struct nnls_acc) and
 * the solver works on G and c alone: Lawson and Hanson's active-set method
 * (Solving Least Squares Problems, 1974, ch. 23), with the passive-set
 * subproblem solved by Cholesky on the passive block of G.
 *
 * The answer is exact up to rounding, not regularised: there is no ridge.
 * A column that is zero, or a linear combination of columns already in the
 * passive set (a duplicate, a multiple, a negated copy), or within about
 * 3e-6 rad of their span, is kept at 0 rather than admitted, so rank-deficient G gives a finite,
 * non-negative minimiser; which of several equally good minimisers is returned is then decided by
 * the order in which columns entered, and is deterministic.
 */
#ifndef GRADEML_NNLS_H
#define GRADEML_NNLS_H

#include <stddef.h>

/* The largest k nnls_normal takes; its work arrays live on the stack. */
#define NNLS_MAX 64

/*
 * Solves min ||A x - b||^2 subject to x >= 0, given G = A^T A (k x k,
 * row-major, symmetric positive semi-definite) and c = A^T b (k).  x (k)
 * receives the solution.  Returns 0; or -1 when k > NNLS_MAX or G or c
 * holds a NaN or infinity (x is then all 0), or when the iteration limit
 * was reached (x then holds the last iterate: feasible, and no worse than
 * any before it).  With k == 0 it returns 0 and reads nothing.  Allocates
 * nothing.
 */
int nnls_normal(const double *G, const double *c, size_t k, double *x);

/*
 * The normal equations of a weighted least-squares problem, accumulated a
 * row at a time.  G (k x k, row-major, full and symmetric) and c (k) are
 * owned by the struct; callers may read them, and all fields, between
 * calls.  bb is the weighted sum of b^2, so that the residual of any x is
 * known without the rows (nnls_acc_rss); rows counts the calls to
 * nnls_acc_add.
 */
struct nnls_acc {
	size_t k;
	double *G, *c;
	double bb;
	size_t rows;
};

/* Sets up an empty accumulator for k columns (k <= NNLS_MAX to be solvable). */
void nnls_acc_init(struct nnls_acc *a, size_t k);
/*
 * Adds the row (k values) with right-hand side b and weight >= 0: G +=
 * weight row^T row, c += weight b row, bb += weight b^2.  Zero entries of
 * the row cost nothing, so sparse rows (a sample period overlapping few
 * phase types) are cheap.
 */
void nnls_acc_add(struct nnls_acc *a, const double *row, double b, double weight);
/* nnls_normal on the accumulated G and c; same returns. */
int nnls_acc_solve(const struct nnls_acc *a, double *x);
/*
 * The weighted residual sum of squares sum weight (row x - b)^2 of x over
 * the rows added, from the normal equations: bb - 2 c^T x + x^T G x,
 * clamped at 0 (cancellation can make it slightly negative).
 */
double nnls_acc_rss(const struct nnls_acc *a, const double *x);
/* Frees G and c; the accumulator must be initialised again before reuse. */
void nnls_acc_release(struct nnls_acc *a);

#endif
