/*
 * Stage timings for finding where an import's time goes: with
 * GRADEML_TIMING set in the environment, timing_mark prints to stderr the
 * wall time since the previous mark, the stage that just ended and the
 * resident set size (now and its peak so far).
 * Without it, a mark costs one branch.
 */
#ifndef GRADEML_TIMING_H
#define GRADEML_TIMING_H

/* "timing: 1.234 s  parse  rss 80 MiB, peak 90 MiB" for the stage that ends now; NULL starts the
 * clock without printing. */
void timing_mark(const char *stage);

#endif
