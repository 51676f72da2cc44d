/*
 * The one place that handles allocation failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/util/xalloc.h"

static void oom(size_t n)
{
	fprintf(stderr, "grademl-tui: out of memory allocating %zu bytes\n", n);
	exit(3);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xmalloc_big(size_t n)
{
	enum { HUGE = 2 << 20 };
	if (n < 4 * (size_t)HUGE)
		return xmalloc(n);
	void *p = NULL;
	size_t len = (n + HUGE - 1) / HUGE * HUGE;
	if (posix_memalign(&p, HUGE, len) != 0 || !p)
		oom(n);
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE); /* a hint: fewer page faults where granted */
#endif
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		n = 0;
	char *s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}
