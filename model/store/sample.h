/*
 * How long a metric sample holds (DESIGN.md, data model), one rule for every
 * reader of trace.db's samples: the views (model/view/series.c), attribution and
 * bottlenecks (model/analysis/attrib.c) and the query language (query/funcs_time.c).
 *
 * A sample's value holds from its time until the next sample's, but never
 * longer than the series' hold: across a gap (a sysstat restart, a logger
 * that stopped) there is no value, rather than an old one.  The period of a
 * series is the median spacing of its first SAMPLE_PERIOD_N samples (a
 * bounded read any reader can make, even one that loads a window only).
 *   - interval means (value kind "mean": sysstat, stored at the start of
 *     the interval they describe) hold for their interval, which is the
 *     period; the hold is 1.5 periods, since sar stamps whole seconds and
 *     an interval may read one second long or short;
 *   - instants ("instant": nvidia-smi, Prometheus, counters' rates) hold up
 *     to 3 periods: loggers are late by a period now and then, not by three.
 * The last sample holds one period (a mean's own interval).  A series of
 * one sample has no period: its value holds for no time.  Periods and
 * holds beyond int64 saturate, and a saturated hold bounds nothing.
 */
#ifndef GRADEML_SAMPLE_H
#define GRADEML_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#define SAMPLE_PERIOD_N 1025

/* The median positive spacing of t[0 .. min(n, SAMPLE_PERIOD_N)), sorted
 * ascending; 0 when there is none. */
int64_t sample_period(const int64_t *t, size_t n);
/* The longest a sample of a series of this period and value kind (NULL:
 * instant) holds; 0 when the period is. */
int64_t sample_hold(int64_t period, const char *value_kind);
/* Where the value of a sample at t stops holding: at next (the next
 * sample's time; INT64_MAX when t is the last) or at t + hold, whichever
 * comes first; the last sample holds one period.  Never before t. */
int64_t sample_until(int64_t t, int64_t next, int64_t period, int64_t hold);

#endif
