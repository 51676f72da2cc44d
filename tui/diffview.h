/*
 * The difference of two runs (model/analysis/diff.h) for people and scripts:
 * `grademl-tui diff A.db B.db` as text or JSON, and the explorer's
 * `:diff OTHER.db`, which shows it on the query results screen.
 */
#ifndef GRADEML_DIFFVIEW_H
#define GRADEML_DIFFVIEW_H

#include <stddef.h>
#include <stdio.h>

#include "tui/report.h"

struct app;

/* Compares a with b and writes the difference to out: at most limit rows
 * of each level (0: all).  0; -1 with *err (nothing written then). */
int diffview_write(FILE *out, const char *a, const char *b, enum report_format fmt, size_t limit,
		   char **err);
/* `:diff OTHER.db`: the open file (A) against OTHER.db (B) on the results
 * screen; Enter shows a row's first phase in A. */
void diffview_command(struct app *a, const char *arg);

#endif
