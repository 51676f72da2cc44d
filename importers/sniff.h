/*
 * Helpers the importers' sniff functions share: where the content of the
 * first bytes starts, past a UTF-8 byte-order mark and JSON whitespace.
 */
#ifndef GRADEML_SNIFF_H
#define GRADEML_SNIFF_H

#include <stddef.h>

/* The index of the first byte at or after i that is not JSON whitespace. */
size_t sniff_skip_space(const unsigned char *b, size_t n, size_t i);
/* The index of the first byte of b[0..n) after a BOM and whitespace. */
size_t sniff_start(const unsigned char *b, size_t n);
/* For JSON-lines formats: when the content starts with '{', 1 and the
 * first line [*start, *end) from it (without its newline); else 0. */
int sniff_json_line(const unsigned char *b, size_t n, size_t *start, size_t *end);

#endif
