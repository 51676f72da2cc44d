/*
 * How long a metric sample holds: the rule is model/store/sample.h's.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/nstime.h"
#include "model/store/sample.h"

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t sample_period(const int64_t *t, size_t n)
{
	int64_t d[SAMPLE_PERIOD_N];
	size_t k = 0;
	if (n > SAMPLE_PERIOD_N)
		n = SAMPLE_PERIOD_N;
	for (size_t i = 1; i < n; i++)
		if (t[i] > t[i - 1])
			d[k++] = ns_dur(t[i - 1], t[i]);
	if (!k)
		return 0;
	qsort(d, k, sizeof(*d), by_value);
	return d[(k - 1) / 2]; /* the lower median: a spacing that occurred */
}

int64_t sample_hold(int64_t period, const char *value_kind)
{
	int mean = value_kind && !strcmp(value_kind, "mean");
	if (period <= 0)
		return 0;
	if (mean)
		return period > INT64_MAX / 3 * 2 ? INT64_MAX : period + period / 2;
	return period > INT64_MAX / 3 ? INT64_MAX : 3 * period;
}

int64_t sample_until(int64_t t, int64_t next, int64_t period, int64_t hold)
{
	if (next == INT64_MAX)
		return ns_end(t, period);
	/* a hold that saturated (spacings beyond int64) bounds nothing */
	int64_t end = hold > 0 && hold < INT64_MAX ? ns_end(t, hold) : next;
	end = next < end ? next : end;
	return end > t ? end : t;
}
