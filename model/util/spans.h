/*
 * Sets of time spans as sorted arrays of disjoint [start, end) spans: the
 * unions, differences and lengths the GPU breakdowns and the idle-gap
 * causes (model/analysis/gpubreak.c, model/analysis/idle.c) are made of.  Lengths are held
 * within int64 (model/util/nstime.h).
 */
#ifndef GRADEML_SPANS_H
#define GRADEML_SPANS_H

#include <stddef.h>
#include <stdint.h>

struct span {
	int64_t start, end;
};

/* Sorts n spans by start (then end). */
void spans_sort(struct span *s, size_t n);
/* Merges spans sorted by start into disjoint ones (touching spans join, as
 * HTA's merge_kernel_intervals does); returns how many, written over s. */
size_t spans_merge(struct span *s, size_t n);
/* Sorts and merges: any n spans into a set; returns its size. */
size_t spans_normalize(struct span *s, size_t n);
/* The total length of a set. */
int64_t spans_length(const struct span *s, size_t n);
/* The length of the intersection of two sets. */
int64_t spans_intersect_length(const struct span *a, size_t na, const struct span *b, size_t nb);
/* The length of a set within [lo, hi). */
int64_t spans_cover(const struct span *s, size_t n, int64_t lo, int64_t hi);
/* Whether a span of the set starts before t and ends at or after it. */
int spans_open_at(const struct span *s, size_t n, int64_t t);
/* a \ b into *out (a new array the caller frees, NULL when empty); returns
 * its size. */
size_t spans_subtract(const struct span *a, size_t na, const struct span *b, size_t nb,
		      struct span **out);
/* a u b into *out (a new array the caller frees, NULL when empty); returns
 * its size. */
size_t spans_union(const struct span *a, size_t na, const struct span *b, size_t nb,
		   struct span **out);

#endif
