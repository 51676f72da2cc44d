/*
 * Binary search over anything sorted, in one line: PARTITION_POINT sets out
 * to the first index i of [0, n) at which `below`, an expression of i that
 * holds for a prefix of the indexes and for none after it, is false (n when
 * it holds throughout).  A lower bound is `v[i] < x`, an upper bound
 * `v[i] <= x`; the last index with v[i] < x is that point less one.
 */
#ifndef GRADEML_SEARCH_H
#define GRADEML_SEARCH_H

#include <stddef.h>

#define PARTITION_POINT(out, n, i, below)                                                          \
	do {                                                                                       \
		size_t lo_ = 0, hi_ = (n);                                                         \
		while (lo_ < hi_) {                                                                \
			size_t i = lo_ + (hi_ - lo_) / 2;                                          \
			if (below)                                                                 \
				lo_ = i + 1;                                                       \
			else                                                                       \
				hi_ = i;                                                           \
		}                                                                                  \
		(out) = lo_;                                                                       \
	} while (0)

#endif
