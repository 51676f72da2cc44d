/*
 * UTF-8 validation and repair (RFC 3629: no overlongs, no surrogates, at
 * most U+10FFFF) and exact decimal time parsing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/util/text.h"
#include "model/util/xalloc.h"

size_t text_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

int text_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		if (p[i] >= 0x20 && p[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = text_utf8_seq(p + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

size_t text_utf8_repair(struct sbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, bad = 0, run = 0;
	while (i < n) {
		size_t k = text_utf8_seq(p + i, n - i);
		if (k) {
			i += k;
			continue;
		}
		sbuf_add(out, s + run, i - run);
		sbuf_add(out, "\xef\xbf\xbd", 3);
		bad++;
		i++;
		run = i;
	}
	sbuf_add(out, s + run, n - run);
	return bad;
}

char *text_utf8_dup(const char *s)
{
	if (!s)
		return NULL;
	struct sbuf sb = SBUF_INIT;
	text_utf8_repair(&sb, s, strlen(s));
	return sbuf_detach(&sb);
}

int text_parse_int64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == n)
		return -1;
	uint64_t v = 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -1;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return -1;
		*out = (int64_t)v;
	}
	return 0;
}

int text_parse_id64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	int base = 10;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == n)
		return -1;
	for (; i < n; i++) {
		unsigned d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / (unsigned)base)
			return -1;
		v = v * (unsigned)base + d;
	}
	*out = v;
	return 0;
}

int text_parse_units(const char *s, size_t n, int64_t unit_ns, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	size_t int_start = i;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	size_t int_end = i, frac_start = i, frac_end = i;
	if (i < n && s[i] == '.') {
		frac_start = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		frac_end = i;
	}
	if (int_end == int_start && frac_end == frac_start)
		return -1;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		char buf[64];
		if (n >= sizeof(buf))
			return -1;
		memcpy(buf, s, n);
		buf[n] = '\0';
		char *end;
		errno = 0;
		double d = strtod(buf, &end);
		if (errno || end != buf + n || !isfinite(d))
			return -1;
		d *= (double)unit_ns;
		if (d >= 9.2e18 || d <= -9.2e18)
			return -1;
		*out = (int64_t)llround(d);
		return 0;
	}
	if (i != n)
		return -1;
	/* the magnitude in uint64, so that -2^63 parses */
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (size_t k = int_start; k < int_end; k++) {
		if (__builtin_mul_overflow(v, 10u, &v) ||
		    __builtin_add_overflow(v, (unsigned)(s[k] - '0'), &v))
			return -1;
	}
	if (__builtin_mul_overflow(v, (uint64_t)unit_ns, &v))
		return -1;
	/* the fraction: digits worth of unit_ns/10, unit_ns/100, ... rounded half up */
	uint64_t scale = (uint64_t)unit_ns, frac = 0;
	size_t k = frac_start;
	for (; k < frac_end && scale >= 10; k++) {
		scale /= 10;
		frac += (uint64_t)(s[k] - '0') * scale;
	}
	if (k < frac_end && s[k] >= '5')
		frac++;
	if (__builtin_add_overflow(v, frac, &v) || v > limit)
		return -1;
	*out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return 0;
}

int text_parse_duration(const char *s, int64_t *out)
{
	static const struct {
		const char *suffix;
		int64_t ns;
	} units[] = {{"ns", 1},		{"us", 1000},
		     {"ms", 1000000},	{"min", 60000000000LL},
		     {"s", 1000000000}, {"h", 3600000000000LL}};
	size_t n = strlen(s);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t k = strlen(units[i].suffix);
		if (n > k && !strcmp(s + n - k, units[i].suffix))
			return text_parse_units(s, n - k, units[i].ns, out);
	}
	return text_parse_units(s, n, 1, out);
}

int text_parse_size(const char *s, int64_t *out)
{
	static const struct {
		const char *suffix;
		int64_t bytes;
	} units[] = {{"KiB", 1LL << 10},
		     {"MiB", 1LL << 20},
		     {"GiB", 1LL << 30},
		     {"TiB", 1LL << 40},
		     {"KB", 1000},
		     {"MB", 1000000},
		     {"GB", 1000000000},
		     {"TB", 1000000000000LL},
		     {"B", 1}};
	size_t n = strlen(s);
	int64_t unit = 1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t k = strlen(units[i].suffix);
		if (n > k && !strcasecmp(s + n - k, units[i].suffix)) {
			n -= k;
			unit = units[i].bytes;
			break;
		}
	}
	if (!memchr(s, '.', n))
		return text_parse_units(s, n, unit, out);
	/* a fraction (of a binary unit too): to the byte, through thousandths */
	int64_t milli;
	if (text_parse_units(s, n, 1000, &milli) < 0 || milli < 0 ||
	    milli / 1000 >= INT64_MAX / unit)
		return -1;
	*out = milli / 1000 * unit + (milli % 1000 * unit + 500) / 1000;
	return 0;
}

/* Three significant digits in the largest unit that keeps the value >= 1. */
static void sig3(char *buf, size_t n, const char *neg, double v, const char *unit)
{
	int prec = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
	snprintf(buf, n, "%s%.*f %s", neg, prec, v, unit);
}

const char *text_duration(char *buf, size_t n, int64_t ns)
{
	/* each unit in ns and where its count, rounded to three significant
	 * digits, reaches the next unit: 999.6 us reads "1.00 ms", 59.96 s
	 * "1.00 min" */
	static const struct {
		double ns, next;
		const char *name;
	} units[] = {{1e3, 999.5, "us"},
		     {1e6, 999.5, "ms"},
		     {1e9, 59.95, "s"},
		     {60e9, 59.95, "min"},
		     {3600e9, INFINITY, "h"}};
	double v = (double)ns;
	const char *neg = "";
	if (v < 0) {
		v = -v;
		neg = "-";
	}
	if (v < 1e3) {
		snprintf(buf, n, "%s%.0f ns", neg, v);
		return buf;
	}
	size_t u = 0;
	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       (v >= units[u + 1].ns || v / units[u].ns >= units[u].next))
		u++;
	sig3(buf, n, neg, v / units[u].ns, units[u].name);
	return buf;
}

const char *text_signed_duration(char *buf, size_t n, int64_t ns)
{
	size_t k = ns > 0 && n > 1;
	if (k)
		buf[0] = '+';
	text_duration(buf + k, n - k, ns);
	return buf;
}

const char *text_bytes(char *buf, size_t n, int64_t bytes)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	double v = (double)bytes;
	int u = 0;
	/* whole bytes up to 999; from a KB on one decimal, so that 999.95 KB
	 * would print as "1000.0 KB": it reads "1.0 MB" */
	while (fabs(v) >= (u ? 999.95 : 1000) && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

/* v in three significant digits without an exponent: whole from 1000 on,
 * up to 9 decimals below 1 (then 0). */
static void plain_number(char *buf, size_t n, double v)
{
	double a = fabs(v);
	int dec = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 0;
	if (a > 0 && a < 1) {
		dec = 2 - (int)floor(log10(a));
		if (dec > 9)
			dec = 9;
	}
	snprintf(buf, n, "%.*f", dec, v);
	/* as %g: "20.3", "96", "0.5", no trailing zeros */
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf) - 1;
		while (*e == '0')
			*e-- = '\0';
		if (*e == '.')
			*e = '\0';
	}
}

/* A byte unit's size in bytes (rate: it ends in "/s"); 0 for none. */
static double byte_unit(const char *unit, int *rate)
{
	static const struct {
		const char *name;
		double bytes;
	} units[] = {{"B", 1},	    {"kB", 1e3},	   {"KB", 1e3},
		     {"KiB", 1024}, {"MB", 1e6},	   {"MiB", 1048576},
		     {"GB", 1e9},   {"GiB", 1073741824.0}, {"bytes", 1}};
	size_t n = strlen(unit);
	*rate = n > 2 && !strcmp(unit + n - 2, "/s");
	if (*rate)
		n -= 2;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n && !strncmp(unit, units[i].name, n))
			return units[i].bytes;
	return 0;
}

const char *text_metric(char *buf, size_t n, double v, const char *unit)
{
	static const struct {
		const char *name;
		double ns;
	} times[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	static const char *const si[] = {"", " k", " M", " G", " T"};
	char num[48];
	int rate;
	if (isnan(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	unit = unit ? unit : "";
	double bytes = byte_unit(unit, &rate);
	if (bytes > 0 && fabs(v * bytes) < 9e18)
		return rate ? text_rate(buf, n, v * bytes)
			    : text_bytes(buf, n, (int64_t)llround(v * bytes));
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (!strcmp(unit, times[i].name) && fabs(v * times[i].ns) < 9e18)
			return text_duration(buf, n, (int64_t)llround(v * times[i].ns));
	int k = 0;
	if (fabs(v) >= 9999.5)
		while (fabs(v) >= 999.5 && k < 4) {
			v /= 1000;
			k++;
		}
	plain_number(num, sizeof(num), v);
	snprintf(buf, n, "%s%s%s%s", num, si[k], *unit && strcmp(unit, "%") ? " " : "", unit);
	return buf;
}

const char *text_rate(char *buf, size_t n, double bytes_per_s)
{
	if (!(fabs(bytes_per_s) < 9e18)) {
		snprintf(buf, n, "-");
		return buf;
	}
	text_bytes(buf, n, llround(bytes_per_s));
	size_t k = strlen(buf);
	snprintf(buf + k, n > k ? n - k : 0, "/s");
	return buf;
}

const char *text_ratio(char *buf, size_t n, double r)
{
	if (isnan(r))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.2fx", r);
	return buf;
}
