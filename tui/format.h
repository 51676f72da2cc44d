/*
 * Turning model values into display text: durations, percentages, byte
 * sizes, and the sanitising of strings that came from a trace.  Every
 * trace string goes through format_sanitize before it is printed or drawn.
 */
#ifndef GRADEML_FORMAT_H
#define GRADEML_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "model/util/sbuf.h"

/* "1.23 s", "45.6 ms", "789 us", "12 ns": at most 9 characters. */
const char *format_duration(char *buf, size_t n, int64_t ns);
/* ns as format_duration writes it, with as many more decimals as it takes
 * to tell apart two instants res apart (res > 0): the start and end of a
 * short phase far from the origin ("688.123 ms" .. "688.126 ms"); minutes
 * and hours become seconds then. */
const char *format_instant(char *buf, size_t n, int64_t ns, int64_t res);
/* text_bytes: decimal units, "12.3 MB" etc. */
const char *format_bytes(char *buf, size_t n, int64_t bytes);
/* text_metric (model/util/text.h): a metric's value in its unit, "150.8 GB". */
const char *format_value(char *buf, size_t n, double v, const char *unit);
/* Appends s with everything that could drive or spoof a terminal made
 * visible: ESC as "\e", other C0 controls and DEL as "\xNN", C1 controls
 * (U+0080..U+009F) as "\u00NN", bidi controls (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069) and line/paragraph separators as
 * "\u{NNNN}", invalid UTF-8 (a lone C1 byte too) byte by byte as "\xNN".
 * A literal backslash is kept.  The screens, the report, query tables and
 * every message on stderr go through it. */
void format_sanitize(struct sbuf *out, const char *s);
/* Appends sanitised-for-display text s cut to at most cols display columns
 * (never inside a UTF-8 sequence) and, when pad, padded with spaces to cols. */
void format_fit(struct sbuf *out, const char *s, int cols, int pad);

/* Appends how a phase's name is shown in lists: without trailing blanks
 * (Kineto's "stream 7 "), and with cxx, a C++ signature (a kernel's) as
 * model/util/cxxname.h shortens it at level 0: "void at::native::f<4,
 * at::native::Op<float> >(int, ...)" -> "at::native::f<Op" more ">".  The
 * details pane shows the whole name. */
void format_name(struct sbuf *out, const char *name, int cxx, const char *more);

/* The code point of the k-byte UTF-8 sequence at p (k from text_utf8_seq). */
uint32_t format_decode(const unsigned char *p, size_t k);
/* Writes cp as UTF-8 into out (4 bytes room); returns the bytes written. */
size_t format_encode(uint32_t cp, char *out);
/* s cut from the left to cols columns, starting with more when cut (the
 * end of a path is the part that matters); returns s->buf. */
const char *format_left_cut(struct sbuf *s, int cols, const char *more);
/* The next character of sanitised text p[0..n) (n > 0): returns its byte
 * length and sets its code point and display columns. */
size_t format_next(const unsigned char *p, size_t n, uint32_t *cp, int *w);
/* Display columns s takes once sanitised. */
int format_width(const char *s);
/* Fits each of texts[0..n) into cols display columns, sanitised, as the
 * returned out[i] (free each and the array).  A text that fits stays as it
 * is; a longer one is cut in the middle, "head" more "tail", the tail its
 * last word (after '.', ':', '/' or a blank) where that leaves a head:
 * "cpu-frequency:0.frequency" -> "cpu-freq…frequency".  Texts that differ
 * read differently after the cut wherever cols allows (a cut that makes
 * twins moves along the text until they part). */
char **format_cut_distinct(const char *const *texts, size_t n, int cols, const char *more);
/* The columns of the terminal fd: its size, else $COLUMNS, else 80. */
int format_term_cols(int fd);

#endif
