/*
 * Turning model values into display text: durations, percentages, byte
 * sizes, and the sanitising of strings that came from a trace.  Every
 * trace string goes through format_sanitize before it is printed or drawn.
 */
#ifndef GRADEML_FORMAT_H
#define GRADEML_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "model/sbuf.h"

/* "1.23 s", "45.6 ms", "789 us", "12 ns": at most 9 characters. */
const char *format_duration(char *buf, size_t n, int64_t ns);
/* "12.3 MB" etc. */
const char *format_bytes(char *buf, size_t n, int64_t bytes);
/* Appends s with control characters and escape sequences made visible
 * (ESC -> "\e", other C0/C1 and DEL -> "\xNN"), invalid UTF-8 as "\xNN". */
void format_sanitize(struct sbuf *out, const char *s);

#endif
