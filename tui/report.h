/*
 * `grademl-tui report`: where the time went, as text for people or JSON for
 * scripts.  Reads through model/ only.
 */
#ifndef GRADEML_REPORT_H
#define GRADEML_REPORT_H

#include <jansson.h>
#include <stdio.h>

enum report_format { REPORT_TEXT, REPORT_JSON };

/* Writes the report of the trace.db at path; returns 0, or -1 with *err. */
int report_write(FILE *out, const char *path, enum report_format fmt, char **err);

/* How the report is made beyond its defaults. */
struct report_opts {
	int hta; /* the GPU breakdown with HTA 0.6.1's own figures (gpubreak.h, opts.hta) */
};

/* report_write with opts (NULL: the defaults). */
int report_write_opts(FILE *out, const char *path, enum report_format fmt,
		      const struct report_opts *opts, char **err);

/* A JSON string of s (NULL: null), invalid UTF-8 repaired: a name from a
 * trace can always be written. */
json_t *report_json_string(const char *s);

#endif
