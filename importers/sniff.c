/*
 * Sniffing helpers; see sniff.h.
 */
#include <string.h>

#include "importers/sniff.h"

size_t sniff_skip_space(const unsigned char *b, size_t n, size_t i)
{
	while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
		i++;
	return i;
}

size_t sniff_start(const unsigned char *b, size_t n)
{
	size_t i = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
	return sniff_skip_space(b, n, i);
}

int sniff_json_line(const unsigned char *b, size_t n, size_t *start, size_t *end)
{
	size_t i = sniff_start(b, n);
	if (i == n || b[i] != '{')
		return 0;
	const unsigned char *nl = memchr(b + i, '\n', n - i);
	*start = i;
	*end = nl ? (size_t)(nl - b) : n;
	return 1;
}
