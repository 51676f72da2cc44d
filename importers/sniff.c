/*
 * Sniffing helpers; see sniff.h.
 */
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
