/*
 * Diagnostic counts; see diag.h.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "importers/diag.h"
#include "model/util/xalloc.h"

void diag_count(struct diag_counts *c, int d, int64_t n, const char *fmt, ...)
{
	c->n[d] += n;
	if (c->example[d] || !fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	c->example[d] = xvasprintf(fmt, ap);
	va_end(ap);
}

int diag_write(const struct diag_counts *c, const struct diag_info *info, int ncodes,
	       struct store *st, int64_t source_id, char **err)
{
	for (int d = 0; d < ncodes; d++)
		if (c->n[d] && store_add_diagnostic(st, source_id, info[d].code, c->n[d],
						    info[d].message, c->example[d], err) < 0)
			return -1;
	return 0;
}

void diag_release(struct diag_counts *c)
{
	for (int d = 0; d < DIAG_MAX; d++) {
		free(c->example[d]);
		c->example[d] = NULL;
	}
}
