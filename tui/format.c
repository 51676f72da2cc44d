/*
 * Display formatting and sanitising; see format.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "model/util/cxxname.h"
#include "model/util/text.h"
#include "tui/format.h"
#include "model/util/xalloc.h"

const char *format_duration(char *buf, size_t n, int64_t ns)
{
	return text_duration(buf, n, ns);
}

const char *format_instant(char *buf, size_t n, int64_t ns, int64_t res)
{
	static const struct {
		double ns;
		const char *name;
	} units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
	double v = ns < 0 ? -(double)ns : (double)ns;
	format_duration(buf, n, ns);
	if (res <= 0 || v < 1e3 || (double)res * 100 >= v)
		return buf; /* three digits tell them apart */
	size_t u = v >= 1e9 ? 0 : v >= 1e6 ? 1 : 2;
	/* a last digit of at most half of res */
	int d = (int)ceil(log10(2 * units[u].ns / (double)res));
	int most = (int)log10(units[u].ns); /* down to 1 ns */
	if (d < 2)
		d = 2;
	snprintf(buf, n, "%s%.*f %s", ns < 0 ? "-" : "", d < most ? d : most, v / units[u].ns,
		 units[u].name);
	return buf;
}

const char *format_bytes(char *buf, size_t n, int64_t bytes)
{
	return text_bytes(buf, n, bytes);
}

const char *format_value(char *buf, size_t n, double v, const char *unit)
{
	return text_metric(buf, n, v, unit);
}

uint32_t format_decode(const unsigned char *p, size_t k)
{
	if (k == 1)
		return p[0];
	uint32_t cp = p[0] & (0xff >> (k + 1));
	for (size_t i = 1; i < k; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* Characters that reorder or break lines: shown as escapes (Trojan Source). */
static int is_spoofing(uint32_t cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
	       cp == 0x200f || cp == 0x061c || cp == 0x2028 || cp == 0x2029;
}

void format_sanitize(struct sbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	while (n) {
		unsigned char c = *p;
		size_t k = c < 0x80 ? 1 : text_utf8_seq(p, n);
		if (c == 0x1b) {
			sbuf_adds(out, "\\e");
		} else if (c < 0x20 || c == 0x7f) {
			sbuf_addf(out, "\\x%02x", c);
		} else if (!k) {
			sbuf_addf(out, "\\x%02x", c); /* invalid UTF-8: one byte at a time */
			k = 1;
		} else if (k == 2 && c == 0xc2 && p[1] < 0xa0) {
			sbuf_addf(out, "\\u%04x", p[1]); /* a C1 control such as CSI */
		} else if ((k == 2 || k == 3) && is_spoofing(format_decode(p, k))) {
			sbuf_addf(out, "\\u{%04x}", (unsigned)format_decode(p, k));
		} else {
			sbuf_add(out, p, k);
		}
		p += k;
		n -= k;
	}
}

/* Display columns of one code point: 0 (combining), 1, or 2 (wide). */
static int format_cp_width(uint32_t cp)
{
	if ((cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x200b && cp <= 0x200f) ||
	    (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0x20d0 && cp <= 0x20ff))
		return 0;
	if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) ||
	    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
	    (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
	    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
	    (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd))
		return 2;
	return 1;
}

size_t format_next(const unsigned char *p, size_t n, uint32_t *cp, int *w)
{
	size_t k = *p < 0x80 ? 1 : text_utf8_seq(p, n);
	if (!k) {
		k = 1; /* not expected after format_sanitize: one byte, one column */
		*cp = *p;
		*w = 1;
		return k;
	}
	*cp = k == 1 ? *p : format_decode(p, k);
	*w = k == 1 ? 1 : format_cp_width(*cp);
	return k;
}

void format_fit(struct sbuf *out, const char *s, int cols, int pad)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	int used = 0;
	while (n) {
		uint32_t cp;
		int w;
		size_t k = format_next(p, n, &cp, &w);
		if (used + w > cols)
			break;
		sbuf_add(out, p, k);
		used += w;
		p += k;
		n -= k;
	}
	while (pad && used++ < cols)
		sbuf_addc(out, ' ');
}

size_t format_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int format_width(const char *s)
{
	struct sbuf clean = SBUF_INIT;
	format_sanitize(&clean, s);
	const unsigned char *p = (const unsigned char *)clean.buf;
	size_t n = clean.len;
	int cols = 0;
	while (n) {
		uint32_t cp;
		int w;
		size_t k = format_next(p, n, &cp, &w);
		cols += w;
		p += k;
		n -= k;
	}
	sbuf_release(&clean);
	return cols;
}

const char *format_left_cut(struct sbuf *s, int cols, const char *more)
{
	if (format_width(s->buf) <= cols)
		return s->buf;
	const unsigned char *p = (const unsigned char *)s->buf;
	size_t n = s->len;
	int need = format_width(s->buf) - cols + format_width(more);
	while (need > 0 && n) {
		uint32_t cp;
		int w;
		size_t k = format_next(p, n, &cp, &w);
		need -= w;
		p += k;
		n -= k;
	}
	struct sbuf out = SBUF_INIT;
	sbuf_adds(&out, more);
	sbuf_add(&out, p, n);
	sbuf_release(s);
	*s = out;
	return s->buf;
}

void format_name(struct sbuf *out, const char *name, int cxx, const char *more)
{
	cxxname_short(out, name, cxx ? 0 : CXXNAME_LEVELS - 1, more);
}

int format_term_cols(int fd)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *env = getenv("COLUMNS");
	int64_t n;
	if (env && text_parse_int64(env, strlen(env), &n) == 0 && n > 0 && n < 100000)
		return (int)n;
	return 80;
}

/* The bytes of sanitised s that its last cols display columns start at. */
static size_t tail_start(const char *s, int cols)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), at = 0;
	int skip = format_width(s) - cols;
	while (skip > 0 && at < n) {
		uint32_t cp;
		int w;
		at += format_next(p + at, n - at, &cp, &w);
		skip -= w;
	}
	return at;
}

/* Sanitised s (wider than cols) cut to head columns, more, and its last
 * cols - head - width(more) columns. */
static char *cut_middle(const char *s, int cols, int head, const char *more)
{
	struct sbuf out = SBUF_INIT;
	int tail = cols - format_width(more) - head;
	format_fit(&out, s, head, 0);
	sbuf_adds(&out, more);
	if (tail > 0)
		sbuf_adds(&out, s + tail_start(s, tail));
	return sbuf_detach(&out);
}

/* Where a cut of s to cols would start its tail by default: its last word
 * when that leaves at least half the room to the head. */
static int default_head(const char *s, int cols, int mw)
{
	const char *word = NULL;
	for (const char *p = s; *p; p++)
		if (strchr(".:/ ", *p) && p[1])
			word = p + 1;
	int room = cols - mw, tail = word ? format_width(word) : 0;
	if (tail > room / 2)
		tail = room / 2;
	return room - tail;
}

/* s cut to cols: its first head columns, the cut mark, then as much as
 * fits from byte from on (a window where s differs from another text),
 * ending in the cut mark where s goes on. */
static char *cut_window(const char *s, int cols, int head, size_t from, const char *more)
{
	struct sbuf out = SBUF_INIT;
	int mw = format_width(more), room = cols - head - mw;
	format_fit(&out, s, head, 0);
	sbuf_adds(&out, more);
	if (format_width(s + from) <= room) {
		sbuf_adds(&out, s + from);
	} else {
		format_fit(&out, s + from, room - mw, 0);
		sbuf_adds(&out, more);
	}
	return sbuf_detach(&out);
}

/* The bytes s and t share from their start, backed up to the start of a
 * character. */
static size_t common_head(const char *s, const char *t)
{
	size_t k = 0;
	while (s[k] && s[k] == t[k])
		k++;
	while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return k;
}

struct cut_ent {
	const char *shown, *whole; /* whole: the text sanitised, uncut */
	size_t i;
};

static int cmp_cut_whole(const void *x, const void *y)
{
	const struct cut_ent *a = x, *b = y;
	return strcmp(a->whole, b->whole);
}

/* Twin runs longer than this skip the search for a cut that parts them
 * (a run's texts times the line's heads) and go to the windows below. */
#define TWIN_SEARCH_MAX 64

static int cmp_cut_ent(const void *x, const void *y)
{
	const struct cut_ent *a = x, *b = y;
	int c = strcmp(a->shown, b->shown);
	return c ? c : (a->i > b->i) - (a->i < b->i);
}

char **format_cut_distinct(const char *const *texts, size_t n, int cols, const char *more)
{
	char **san = xcalloc(n ? n : 1, sizeof(*san)), **out = xcalloc(n ? n : 1, sizeof(*out));
	struct cut_ent *ent = xcalloc(n ? n : 1, sizeof(*ent));
	int mw = format_width(more);
	for (size_t i = 0; i < n; i++) {
		struct sbuf sb = SBUF_INIT;
		format_sanitize(&sb, texts[i] ? texts[i] : "");
		san[i] = sbuf_detach(&sb);
		if (format_width(san[i]) <= cols)
			out[i] = xstrdup(san[i]);
		else if (cols <= mw)
			out[i] = xstrdup(cols == mw ? more : "");
		else
			out[i] = cut_middle(san[i], cols, default_head(san[i], cols, mw), more);
	}
	/* Twins: runs of equal shown text from different texts.  Each run's cut
	 * moves (a shorter head, a longer tail) to the first place that parts
	 * them all, else to the one that parts most of them, the rest left to
	 * the next pass; a few passes, as a moved cut may meet another text. */
	for (int pass = 0; pass < 8 && cols > mw; pass++) {
		int moved = 0;
		for (size_t i = 0; i < n; i++)
			ent[i] = (struct cut_ent){out[i], san[i], i};
		qsort(ent, n, sizeof(*ent), cmp_cut_ent);
		for (size_t a = 0, b; a < n; a = b) {
			int twins = 0;
			for (b = a + 1; b < n && !strcmp(ent[b].shown, ent[a].shown); b++)
				twins |= strcmp(san[ent[b].i], san[ent[a].i]) != 0;
			if (!twins || b - a > TWIN_SEARCH_MAX)
				continue;
			char **best = NULL;
			size_t best_parted = 0;
			for (int head = cols - mw; head >= 0 && best_parted < b - a; head--) {
				char **try = xcalloc(b - a, sizeof(*try));
				size_t parted = 0; /* texts no other text of the run reads as */
				for (size_t k = a; k < b; k++)
					try[k - a] =
					    format_width(san[ent[k].i]) <= cols
						? xstrdup(san[ent[k].i])
						: cut_middle(san[ent[k].i], cols, head, more);
				for (size_t k = a; k < b; k++) {
					int alone = 1;
					for (size_t j = a; j < b && alone; j++)
						alone = j == k ||
							!strcmp(san[ent[k].i], san[ent[j].i]) ||
							strcmp(try[k - a], try[j - a]);
					parted += (size_t)alone;
				}
				if (parted > best_parted) {
					char **old = best;
					best = try;
					try = old;
					best_parted = parted;
				}
				if (try) {
					for (size_t k = a; k < b; k++)
						free(try[k - a]);
					free(try);
				}
			}
			if (best) {
				for (size_t k = a; k < b; k++) {
					free(out[ent[k].i]);
					out[ent[k].i] = best[k - a];
				}
				free(best);
				moved = 1;
			}
		}
		if (!moved)
			break;
	}
	/* Texts that share more than any head and tail can show: each shows its
	 * head, then a window from where it parts from its nearest twin (a
	 * neighbour in the run sorted by whole text: the longest common head). */
	for (size_t i = 0; i < n; i++)
		ent[i] = (struct cut_ent){out[i], san[i], i};
	qsort(ent, n, sizeof(*ent), cmp_cut_ent);
	char **fixed = xcalloc(n ? n : 1, sizeof(*fixed));
	int head = (cols - mw) / 3;
	for (size_t a = 0, b; a < n && head > 0 && cols - 2 * mw - head > 2; a = b) {
		for (b = a + 1; b < n && !strcmp(ent[b].shown, ent[a].shown); b++)
			;
		if (b - a < 2)
			continue;
		qsort(ent + a, b - a, sizeof(*ent), cmp_cut_whole);
		for (size_t g = a, h; g < b; g = h) { /* groups of the same whole text */
			for (h = g + 1; h < b && !strcmp(ent[h].whole, ent[g].whole); h++)
				;
			size_t at = 0;
			if (g > a)
				at = common_head(ent[g].whole, ent[g - 1].whole);
			if (h < b) {
				size_t c = common_head(ent[g].whole, ent[h].whole);
				at = c > at ? c : at;
			}
			if (!at)
				continue;
			size_t skip = at > 4 ? at - 4 : 0;
			while (skip && ((unsigned char)ent[g].whole[skip] & 0xc0) == 0x80)
				skip--;
			for (size_t k = g; k < h; k++)
				fixed[ent[k].i] = cut_window(ent[k].whole, cols, head, skip, more);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (fixed[i]) {
			free(out[i]);
			out[i] = fixed[i];
		}
	free(fixed);
	for (size_t i = 0; i < n; i++)
		free(san[i]);
	free(san);
	free(ent);
	return out;
}
