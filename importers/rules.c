/*
 * The rules file of the "log" importer.  One directive or rule a line;
 * blank lines and lines starting with '#' are ignored; fields are
 * separated by blanks and a pattern is written /REGEX/ (everything from
 * the first '/' to the last one on the line, so '/' needs no escape),
 * optionally followed by the flag i (caseless):
 *
 *   time FORMAT [restarts] [/REGEX/]  how times read; with a pattern, the
 *                               line's time is its group "time"
 *   event NAME /REGEX/          an event per matching line
 *   sample METRIC UNIT /REGEX/  a sample of group "value" (UNIT "-": none)
 *   start PHASE /REGEX/         a phase opens (under the innermost open one)
 *   end PHASE /REGEX/           the innermost open phase so named closes
 *   lap PHASE /REGEX/           the running lap closes as PHASE, the next
 *                               one starts (for logs that print a line as
 *                               each step ends); one lap rule at most
 *
 * FORMAT is iso8601 (2021-12-10 04:02:26,460, 'T' or ' ', '.' or ','
 * fraction, 'Z' or +HH:MM; no zone: UTC), epoch (seconds), epoch_ms,
 * elapsed_s or elapsed_ms (since --time-offset, else 0); restarts, for the
 * elapsed formats only, says that the clock may start again from 0 (a time
 * less than the last one read counts on from it).  A rule's own group
 * "time" wins over the line's; a line with neither takes the last time
 * seen.  NAME, METRIC and PHASE may hold {group}, replaced by the text of
 * that named group.  A rules file from which no time can come (no time
 * pattern and no rule with a "time" group) is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/rules.h"
#include "model/util/xalloc.h"

#define RULES_MAX (1 << 20)
#define FIELDS	  3

static const char *const kinds[] = {"event", "sample", "start", "end", "lap"};
#define NKINDS (int)(sizeof(kinds) / sizeof(kinds[0]))
static const char *const formats[] = {"iso8601", "epoch", "epoch_ms", "elapsed_s", "elapsed_ms"};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The pattern of a line: [p, q) between the first and the last '/'. */
static int compile(const char *path, int lineno, const char *line, size_t len, const char *p,
		   pcre2_code **re, char **err)
{
	const char *end = line + len;
	if (p >= end || *p != '/') {
		*err = xasprintf("%s:%d: column %d: expected /REGEX/", path, lineno,
				 (int)(p - line) + 1);
		return -1;
	}
	const char *q = end;
	while (q > p + 1 && q[-1] != '/')
		q--;
	if (q == p + 1) {
		*err = xasprintf("%s:%d: column %d: unterminated /REGEX/", path, lineno,
				 (int)(p - line) + 1);
		return -1;
	}
	uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	for (const char *f = q; f < end; f++) {
		if (*f == 'i') {
			flags |= PCRE2_CASELESS;
		} else if (!is_blank(*f)) {
			*err = xasprintf("%s:%d: column %d: unknown pattern flag '%c'", path,
					 lineno, (int)(f - line) + 1, *f);
			return -1;
		}
	}
	int code;
	PCRE2_SIZE off;
	*re = pcre2_compile((PCRE2_SPTR)(p + 1), (PCRE2_SIZE)(q - 1 - (p + 1)), flags, &code, &off,
			    NULL);
	if (!*re) {
		PCRE2_UCHAR msg[256];
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		*err = xasprintf("%s:%d: column %d: %s", path, lineno,
				 (int)(p + 1 - line + off) + 1, (char *)msg);
		return -1;
	}
	return 0;
}

static int group(const pcre2_code *re, const char *name)
{
	int n = pcre2_substring_number_from_name(re, (PCRE2_SPTR)name);
	return n > 0 ? n : -1;
}

/* Checks that every {group} of a name template names a group of re. */
static int check_template(const char *path, int lineno, const char *t, const pcre2_code *re,
			  char **err)
{
	for (const char *s = strchr(t, '{'); s; s = strchr(s + 1, '{')) {
		const char *e = strchr(s, '}');
		if (!e)
			break;
		char *g = xstrndup(s + 1, (size_t)(e - s - 1));
		int ok = group(re, g) > 0;
		if (!ok)
			*err = xasprintf("%s:%d: no group '%s' in the pattern", path, lineno, g);
		free(g);
		if (!ok)
			return -1;
	}
	return 0;
}

/* One line: 0 (rule added or nothing), -1 with *err. */
static int parse_line(struct rules *r, const char *path, int lineno, const char *line, size_t len,
		      int *saw_time, char **err)
{
	const char *p = line, *end = line + len, *f[FIELDS + 1];
	size_t fl[FIELDS + 1];
	int nf = 0;
	while (p < end && is_blank(*p))
		p++;
	if (p == end || *p == '#')
		return 0;
	/* fields up to the pattern (or the end of the line) */
	while (p < end && *p != '/' && nf <= FIELDS) {
		f[nf] = p;
		while (p < end && !is_blank(*p))
			p++;
		fl[nf] = (size_t)(p - f[nf]);
		nf++;
		while (p < end && is_blank(*p))
			p++;
	}
	if (!nf) {
		*err = xasprintf("%s:%d: column %d: expected a rule before /REGEX/", path, lineno,
				 (int)(p - line) + 1);
		return -1;
	}
	if (fl[0] == 4 && !memcmp(f[0], "time", 4)) {
		size_t k = 0;
		int restarts = nf == 3 && fl[2] == 8 && !memcmp(f[2], "restarts", 8);
		while ((nf == 2 || restarts) && k < 5 &&
		       !(strlen(formats[k]) == fl[1] && !memcmp(formats[k], f[1], fl[1])))
			k++;
		if ((nf != 2 && !restarts) || k == 5) {
			*err = xasprintf("%s:%d: expected time iso8601|epoch|epoch_ms|elapsed_s|"
					 "elapsed_ms [restarts] [/REGEX/]",
					 path, lineno);
			return -1;
		}
		if (restarts && k != RT_ELAPSED_S && k != RT_ELAPSED_MS) {
			*err = xasprintf("%s:%d: restarts applies to elapsed_s and elapsed_ms only",
					 path, lineno);
			return -1;
		}
		if (*saw_time) {
			*err = xasprintf("%s:%d: a second time directive", path, lineno);
			return -1;
		}
		*saw_time = 1;
		r->time_fmt = (enum rule_time)k;
		r->restarts = restarts;
		if (p == end)
			return 0;
		if (compile(path, lineno, line, len, p, &r->time_re, err) < 0)
			return -1;
		r->time_group = group(r->time_re, "time");
		if (r->time_group < 0) {
			*err = xasprintf("%s:%d: the time pattern has no group (?<time>...)", path,
					 lineno);
			return -1;
		}
		return 0;
	}
	int kind = 0;
	while (kind < NKINDS &&
	       !(strlen(kinds[kind]) == fl[0] && !memcmp(kinds[kind], f[0], fl[0])))
		kind++;
	if (kind == NKINDS) {
		*err =
		    xasprintf("%s:%d: unknown rule '%.*s' (event, sample, start, end, lap, time)",
			      path, lineno, (int)(fl[0] > 40 ? 40 : fl[0]), f[0]);
		return -1;
	}
	if (kind == RULE_LAP && r->has_lap) {
		*err = xasprintf("%s:%d: a second lap rule (one a file: laps follow one another)",
				 path, lineno);
		return -1;
	}
	int want = kind == RULE_SAMPLE ? 3 : 2;
	if (nf != want) {
		*err = xasprintf("%s:%d: expected %s /REGEX/", path, lineno,
				 kind == RULE_SAMPLE ? "sample METRIC UNIT" : "KIND NAME");
		return -1;
	}
	pcre2_code *re;
	if (compile(path, lineno, line, len, p, &re, err) < 0)
		return -1;
	struct rule ru = {.kind = (enum rule_kind)kind,
			  .name = xstrndup(f[1], fl[1]),
			  .re = re,
			  .lineno = lineno,
			  .time_group = group(re, "time"),
			  .value_group = group(re, "value")};
	if (kind == RULE_SAMPLE && !(fl[2] == 1 && f[2][0] == '-'))
		ru.unit = xstrndup(f[2], fl[2]);
	if (kind == RULE_SAMPLE && ru.value_group < 0)
		*err =
		    xasprintf("%s:%d: a sample pattern needs a group (?<value>...)", path, lineno);
	if ((kind == RULE_SAMPLE && ru.value_group < 0) ||
	    check_template(path, lineno, ru.name, re, err) < 0) {
		free(ru.name);
		free(ru.unit);
		pcre2_code_free(re);
		return -1;
	}
	r->v = xrealloc(r->v, (r->n + 1) * sizeof(*r->v));
	r->v[r->n++] = ru;
	r->has_lap |= kind == RULE_LAP;
	return 0;
}

int rules_parse(const char *text, size_t len, const char *path, struct rules **out, char **err)
{
	struct rules *r = xcalloc(1, sizeof(*r));
	int saw_time = 0, lineno = 0, has_time;
	r->time_group = -1;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
		lineno++;
		if (memchr(text + i, '\0', n)) {
			*err = xasprintf("%s:%d: NUL byte (not a text file)", path, lineno);
			goto fail;
		}
		if (parse_line(r, path, lineno, text + i, n, &saw_time, err) < 0)
			goto fail;
		i += n + 1;
	}
	if (!r->n) {
		*err = xasprintf("%s: no rules (event, sample, start, end or lap)", path);
		goto fail;
	}
	has_time = r->time_re != NULL;
	for (size_t i = 0; i < r->n; i++)
		has_time |= r->v[i].time_group > 0;
	if (!has_time) {
		*err = xasprintf("%s: no time: add a `time FORMAT /REGEX/` line or a (?<time>...)"
				 " group to a rule",
				 path);
		goto fail;
	}
	*out = r;
	return 0;
fail:
	rules_free(r);
	return -1;
}

int rules_load(const char *path, struct rules **out, char **err)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		*err = xasprintf("cannot open rules file '%s'", path);
		return -1;
	}
	char *buf = xmalloc(RULES_MAX + 1);
	size_t n = fread(buf, 1, RULES_MAX + 1, fp);
	int bad = ferror(fp);
	fclose(fp);
	int rc = -1;
	if (bad)
		*err = xasprintf("cannot read rules file '%s'", path);
	else if (n > RULES_MAX)
		*err = xasprintf("%s: rules file larger than 1 MiB", path);
	else
		rc = rules_parse(buf, n, path, out, err);
	free(buf);
	return rc;
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].unit);
		pcre2_code_free(r->v[i].re);
	}
	free(r->v);
	pcre2_code_free(r->time_re);
	free(r);
}

/* ---- times ---- */

static int digits(const char **s, const char *end, int n, int64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*s)++) {
		if (*s >= end || **s < '0' || **s > '9')
			return -1;
		*v = *v * 10 + (**s - '0');
	}
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int parse_iso(const char *s, size_t n, int64_t *out)
{
	const char *e = s + n;
	int64_t y, mo, d, h, mi, sec, frac = 0, zone = 0;
	if (digits(&s, e, 4, &y) || s >= e || *s++ != '-' || digits(&s, e, 2, &mo) || s >= e ||
	    *s++ != '-' || digits(&s, e, 2, &d) || s >= e || (*s != 'T' && *s != ' '))
		return -1;
	s++;
	if (digits(&s, e, 2, &h) || s >= e || *s++ != ':' || digits(&s, e, 2, &mi) || s >= e ||
	    *s++ != ':' || digits(&s, e, 2, &sec))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	if (s < e && (*s == '.' || *s == ',')) {
		s++;
		int64_t scale = 100000000;
		if (s >= e || *s < '0' || *s > '9')
			return -1;
		for (; s < e && *s >= '0' && *s <= '9'; s++, scale /= 10)
			frac += (*s - '0') * scale;
	}
	if (s < e && *s == 'Z') {
		s++;
	} else if (s < e && (*s == '+' || *s == '-')) {
		int sign = *s++ == '-' ? -1 : 1;
		int64_t zh, zm;
		if (digits(&s, e, 2, &zh))
			return -1;
		if (s < e && *s == ':')
			s++;
		if (digits(&s, e, 2, &zm))
			return -1;
		zone = sign * (zh * 3600 + zm * 60);
	}
	if (s != e)
		return -1;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - zone;
	if (t < 0 || t > INT64_MAX / 1000000000 - 1)
		return -1;
	*out = t * 1000000000 + frac;
	return 0;
}

int rules_parse_time(enum rule_time fmt, const char *s, size_t n, int64_t *out)
{
	if (fmt == RT_ISO8601)
		return parse_iso(s, n, out);
	char buf[64];
	if (!n || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	double v = strtod(buf, &end);
	if (end != buf + n || !(v >= 0))
		return -1;
	double scale = fmt == RT_EPOCH || fmt == RT_ELAPSED_S ? 1e9 : 1e6;
	if (!(v * scale < 9.2e18))
		return -1;
	*out = (int64_t)(v * scale);
	return 0;
}
