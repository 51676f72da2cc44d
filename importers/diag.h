/*
 * The diagnostics table of an importer.  An importer lists its repairs and
 * drops once, as DIAG_LIST(X) of X(CODE, "what it means"); DIAG_TABLE then
 * makes the enum D_CODE... D_COUNT (DIAG_CODES) and the array
 * diag_info[D_COUNT] of codes and messages that go to the diagnostics table
 * (DIAG_INFO); struct diag_counts counts them during the import and
 * writes them at its end.
 */
#ifndef GRADEML_DIAG_H
#define GRADEML_DIAG_H

#include <stdint.h>

#include "model/store/store.h"

struct diag_info {
	const char *code, *message;
};

/* Counts by code and each code's first example, as an import goes. */
#define DIAG_MAX 48
struct diag_counts {
	int64_t n[DIAG_MAX];
	char *example[DIAG_MAX];
};

/* Counts n more under code d; the first example is kept (fmt NULL: none). */
void diag_count(struct diag_counts *c, int d, int64_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Writes each code counted to the source's diagnostics. */
int diag_write(const struct diag_counts *c, const struct diag_info *info, int ncodes,
	       struct store *st, int64_t source_id, char **err);
void diag_release(struct diag_counts *c);

#define DIAG_ENUM_(code, msg) D_##code,
#define DIAG_INFO_(code, msg) [D_##code] = {#code, msg},
#define DIAG_TABLE(list)                                                                           \
	DIAG_CODES(list);                                                                          \
	DIAG_INFO(list)
/* DIAG_TABLE's two halves, for an importer of two files: the enum in the
 * header they share, the array in the one file that writes the table. */
#define DIAG_CODES(list)                                                                           \
	enum diag_code { list(DIAG_ENUM_) D_COUNT };                                               \
	_Static_assert(D_COUNT <= DIAG_MAX, "too many diagnostic codes")
#define DIAG_INFO(list) static const struct diag_info diag_info[D_COUNT] = {list(DIAG_INFO_)}

#endif
