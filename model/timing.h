/*
 * Stage timings for finding where an import's time goes: with
 * GRADEML_TIMING set in the environment, timing_mark prints to stderr the
 * wall time since the previous mark and the stage that just ended.
 * Without it, a mark costs one branch.
 */
#ifndef GRADEML_TIMING_H
#define GRADEML_TIMING_H

/* "timing: 1.234 s  parse" for the stage that ends now; NULL starts the
 * clock without printing. */
void timing_mark(const char *stage);

#endif
