/*
 * Sets of time spans (see spans.h).  Every function on sets is one linear
 * walk; the first span a query can touch is found by binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/nstime.h"
#include "model/util/spans.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

void spans_sort(struct span *s, size_t n)
{
	if (n > 1)
		qsort(s, n, sizeof(*s), by_start);
}

size_t spans_merge(struct span *s, size_t n)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && s[i].start <= s[m - 1].end) {
			if (s[i].end > s[m - 1].end)
				s[m - 1].end = s[i].end;
		} else {
			s[m++] = s[i];
		}
	}
	return m;
}

size_t spans_normalize(struct span *s, size_t n)
{
	spans_sort(s, n);
	return spans_merge(s, n);
}

int64_t spans_length(const struct span *s, size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t = ns_sum(t, ns_dur(s[i].start, s[i].end));
	return t;
}

int64_t spans_intersect_length(const struct span *a, size_t na, const struct span *b, size_t nb)
{
	int64_t t = 0;
	size_t i = 0, k = 0;
	while (i < na && k < nb) {
		int64_t lo = a[i].start > b[k].start ? a[i].start : b[k].start;
		int64_t hi = a[i].end < b[k].end ? a[i].end : b[k].end;
		if (hi > lo)
			t = ns_sum(t, ns_dur(lo, hi));
		if (a[i].end < b[k].end)
			i++;
		else
			k++;
	}
	return t;
}

/* The first span of the set that ends after t. */
static size_t first_after(const struct span *s, size_t n, int64_t t)
{
	size_t at;
	PARTITION_POINT(at, n, i, s[i].end <= t);
	return at;
}

int64_t spans_cover(const struct span *s, size_t n, int64_t lo, int64_t hi)
{
	int64_t t = 0;
	for (size_t i = first_after(s, n, lo); i < n && s[i].start < hi; i++) {
		int64_t a = s[i].start > lo ? s[i].start : lo, b = s[i].end < hi ? s[i].end : hi;
		t = ns_sum(t, ns_dur(a, b));
	}
	return t;
}

int spans_open_at(const struct span *s, size_t n, int64_t t)
{
	size_t i = first_after(s, n, t - (t > INT64_MIN));
	return i < n && s[i].start < t && s[i].end >= t;
}

size_t spans_subtract(const struct span *a, size_t na, const struct span *b, size_t nb,
		      struct span **out)
{
	size_t m = 0, alloc = 0, k = 0;
	*out = NULL;
	for (size_t i = 0; i < na; i++) {
		int64_t at = a[i].start;
		while (k < nb && b[k].end <= at)
			k++;
		for (size_t j = k; j < nb && b[j].start < a[i].end; j++) {
			if (b[j].start > at) {
				XGROW(*out, m + 1, alloc);
				(*out)[m++] = (struct span){at, b[j].start};
			}
			if (b[j].end > at)
				at = b[j].end;
		}
		if (at < a[i].end) {
			XGROW(*out, m + 1, alloc);
			(*out)[m++] = (struct span){at, a[i].end};
		}
	}
	return m;
}

size_t spans_union(const struct span *a, size_t na, const struct span *b, size_t nb,
		   struct span **out)
{
	size_t n = na + nb;
	*out = NULL;
	if (!n)
		return 0;
	*out = xmalloc(n * sizeof(**out));
	if (na)
		memcpy(*out, a, na * sizeof(*a));
	if (nb)
		memcpy(*out + na, b, nb * sizeof(*b));
	return spans_normalize(*out, n);
}
