/*
 * Display formatting and sanitising; see format.h.
 */
#include <stdio.h>
#include <string.h>

#include "model/text.h"
#include "tui/format.h"
#include "model/xalloc.h"

/* Three significant digits in the largest unit that keeps the value >= 1. */
static void sig3(char *buf, size_t n, const char *neg, double v, const char *unit)
{
	int prec = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
	snprintf(buf, n, "%s%.*f %s", neg, prec, v, unit);
}

const char *format_duration(char *buf, size_t n, int64_t ns)
{
	double v = (double)ns;
	const char *neg = "";
	if (v < 0) {
		v = -v;
		neg = "-";
	}
	if (v >= 3600e9)
		sig3(buf, n, neg, v / 3600e9, "h");
	else if (v >= 60e9)
		sig3(buf, n, neg, v / 60e9, "min");
	else if (v >= 1e9)
		sig3(buf, n, neg, v / 1e9, "s");
	else if (v >= 1e6)
		sig3(buf, n, neg, v / 1e6, "ms");
	else if (v >= 1e3)
		sig3(buf, n, neg, v / 1e3, "us");
	else
		snprintf(buf, n, "%s%.0f ns", neg, v);
	return buf;
}

const char *format_bytes(char *buf, size_t n, int64_t bytes)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double v = (double)bytes;
	int u = 0;
	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

void format_sanitize(struct sbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	while (n) {
		unsigned char c = *p;
		size_t k = c < 0x80 ? 1 : utf8_seq(p, n);
		if (c == 0x1b) {
			sbuf_adds(out, "\\e");
		} else if (c < 0x20 || c == 0x7f) {
			sbuf_addf(out, "\\x%02x", c);
		} else if (!k) {
			sbuf_addf(out, "\\x%02x", c); /* invalid UTF-8: one byte at a time */
			k = 1;
		} else if (k == 2 && c == 0xc2 && p[1] < 0xa0) {
			sbuf_addf(out, "\\u%04x", p[1]); /* a C1 control such as CSI */
		} else {
			sbuf_add(out, p, k);
		}
		p += k ? k : 1;
		n -= k ? k : 1;
	}
}
