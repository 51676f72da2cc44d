/*
 * `grademl-tui report`: where the time went, as text for people or JSON for
 * scripts.  Reads through model/ only.
 */
#ifndef GRADEML_REPORT_H
#define GRADEML_REPORT_H

#include <stdio.h>

enum report_format { REPORT_TEXT, REPORT_JSON };

/* Writes the report of the trace.db at path; returns 0, or -1 with *err. */
int report_write(FILE *out, const char *path, enum report_format fmt, char **err);

#endif
