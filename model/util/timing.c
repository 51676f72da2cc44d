/*
 * Stage timings; see timing.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/util/timing.h"

/* The resident set now and at its peak, in KiB, from /proc (0 elsewhere). */
static void rss_kib(long *now, long *peak)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	*now = *peak = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			*now = atol(line + 6);
		else if (!strncmp(line, "VmHWM:", 6))
			*peak = atol(line + 6);
	}
	fclose(f);
}

void timing_mark(const char *stage)
{
	static int on = -1;
	static struct timespec last;
	if (on < 0) {
		const char *e = getenv("GRADEML_TIMING");
		on = e && *e;
		clock_gettime(CLOCK_MONOTONIC, &last);
	}
	if (!on)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!stage) {
		last = now;
		return;
	}
	double s = (double)(now.tv_sec - last.tv_sec) + (double)(now.tv_nsec - last.tv_nsec) / 1e9;
	long rss, peak;
	rss_kib(&rss, &peak);
	fprintf(stderr, "timing: %7.3f s  %-28s rss %4ld MiB, peak %4ld MiB\n", s, stage, rss >> 10,
		peak >> 10);
	last = now;
}
