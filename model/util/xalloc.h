/*
 * Allocation that cannot fail: on exhaustion the process reports and exits
 * (status 3), so callers never test for NULL.  Also the printf-style helpers
 * that build owned strings.  Every module includes this header last.
 */
#ifndef GRADEML_XALLOC_H
#define GRADEML_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
/* For arrays of millions, written once: where the system allows, backed by
 * huge pages (one fault per 2 MiB instead of per 4 KiB).  Freed by free. */
void *xmalloc_big(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A newly allocated formatted string; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);

/* Grow *p (holding *alloc elements of size sz) to hold at least n elements. */
#define XGROW(p, n, alloc)                                                                         \
	do {                                                                                       \
		if ((size_t)(n) > (alloc)) {                                                       \
			size_t xg_new_ = (alloc) ? (alloc)*2 : 16;                                 \
			while (xg_new_ < (size_t)(n))                                              \
				xg_new_ *= 2;                                                      \
			(p) = xrealloc((p), xg_new_ * sizeof(*(p)));                               \
			(alloc) = xg_new_;                                                         \
		}                                                                                  \
	} while (0)

#include "model/util/banned.h"

#endif
