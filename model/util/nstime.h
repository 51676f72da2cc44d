/*
 * Arithmetic on int64 nanosecond times that cannot overflow.  A trace.db
 * may hold any int64 (it is an ordinary SQLite file), so an end computed as
 * start + dur can pass INT64_MAX, and two times can lie more than INT64_MAX
 * apart: their difference is taken in uint64_t, where it always fits.
 */
#ifndef GRADEML_NSTIME_H
#define GRADEML_NSTIME_H

#include <stdint.h>

/* The end of what starts at start and lasts dur (< 0: 0), at most INT64_MAX. */
static inline int64_t ns_end(int64_t start, int64_t dur)
{
	int64_t end;
	return __builtin_add_overflow(start, dur > 0 ? dur : 0, &end) ? INT64_MAX : end;
}

/* b - a, for a <= b. */
static inline uint64_t ns_diff(int64_t a, int64_t b)
{
	return (uint64_t)b - (uint64_t)a;
}

/* b - a for a <= b as a duration, at most INT64_MAX. */
static inline int64_t ns_dur(int64_t a, int64_t b)
{
	uint64_t d = ns_diff(a, b);
	return d > INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* b - a as a double, a and b in either order. */
static inline double ns_span(int64_t a, int64_t b)
{
	return a <= b ? (double)ns_diff(a, b) : -(double)ns_diff(b, a);
}

/* b - a, either order, held within int64. */
static inline int64_t ns_sub(int64_t a, int64_t b)
{
	return a <= b ? ns_dur(a, b) : -ns_dur(b, a);
}

/* a + b, held within int64 (a sum of durations: at most INT64_MAX). */
static inline int64_t ns_sum(int64_t a, int64_t b)
{
	int64_t s;
	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return s;
}

#endif
