/*
 * Text helpers shared by importers and views: UTF-8 repair, and exact
 * decimal parsing of trace timestamps.
 */
#ifndef GRADEML_TEXT_H
#define GRADEML_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "model/util/sbuf.h"

/* Length (1..4) of the valid UTF-8 sequence at s[0..n), or 0 when it is
 * invalid (RFC 3629: no overlongs, surrogates or values past U+10FFFF) or NUL. */
size_t text_utf8_seq(const unsigned char *s, size_t n);
/* 1 when s[0..n) is valid UTF-8 with no NUL byte. */
int text_utf8_valid(const char *s, size_t n);
/* Appends s to out with every invalid sequence or NUL replaced by U+FFFD;
 * returns the number of replacements. */
size_t text_utf8_repair(struct sbuf *out, const char *s, size_t n);
/* A repaired copy of the string s (NULL stays NULL); the caller frees it. */
char *text_utf8_dup(const char *s);

/* Parses a decimal number of `unit_ns` units (1000 for microseconds) into
 * integer nanoseconds, exactly for plain decimals (no float rounding),
 * through double for exponents.  Leading/trailing blanks are refused.
 * Returns 0, or -1 when the text is not a number or overflows int64. */
int text_parse_units(const char *s, size_t n, int64_t unit_ns, int64_t *out);
/* Strict int64 parse of the whole text; -1 on junk or overflow. */
int text_parse_int64(const char *s, size_t n, int64_t *out);
/* Unsigned 64-bit id, decimal or 0x-hex; -1 on junk. */
int text_parse_id64(const char *s, size_t n, uint64_t *out);

/* ns as three significant digits in the largest unit that keeps the value
 * at least 1 ("24.8 ms", "3.00 s", "90 ns"), a value that would round to
 * the next unit in that one ("1.00 ms" for 999 600 ns); returns buf. */
const char *text_duration(char *buf, size_t n, int64_t ns);
/* text_duration with a '+' before a positive one: a difference ("+1.20
 * ms", "-300 ns", "0 ns"); returns buf. */
const char *text_signed_duration(char *buf, size_t n, int64_t ns);
/* bytes in decimal (SI) units, KB = 1000 B: whole bytes up to 999, then
 * one decimal ("512 B", "12.3 MB", up to TB), a value that would round to
 * 1000.0 of a unit in the next ("1.0 MB" for 999 950 B); returns buf. */
const char *text_bytes(char *buf, size_t n, int64_t bytes);
/* Bytes per second as text_bytes writes bytes, with "/s" ("1.3 GB/s"),
 * out of range (NAN, beyond int64) "-"; returns buf. */
const char *text_rate(char *buf, size_t n, double bytes_per_s);
/* A metric's value v in its unit, never in exponent form: byte units
 * (B, kB, KB, KiB, MB, MiB, GB, GiB, bytes, with or without "/s") as
 * text_bytes writes bytes ("395.8 MB", "1.2 MB/s"), time units (ns, us,
 * ms, s) as text_duration, "%" right after the number ("70.1%"), anything
 * else after a blank ("209 W"); the number with three significant digits,
 * whole up to 9999, then with k, M, G, T ("4.66 k").  NAN: "-".  The one
 * formatter of metric values: the metrics screen, the timeline's and
 * the details pane's scales, and query tables. */
const char *text_metric(char *buf, size_t n, double v, const char *unit);
/* A ratio as "1.61x" (two decimals), NAN as "-"; returns buf. */
const char *text_ratio(char *buf, size_t n, double r);
/* A duration with an optional unit (ns, us, ms, s, min, h; default ns),
 * e.g. "1.5s", "-200ms"; -1 on junk or overflow. */
int text_parse_duration(const char *s, int64_t *out);
/* A size with an optional unit (B, KB, MB, GB, TB by 1000; KiB, MiB, GiB,
 * TiB by 1024; any case; default bytes), e.g. "512MiB", "2GB"; -1 on junk
 * or overflow. */
int text_parse_size(const char *s, int64_t *out);
#endif
