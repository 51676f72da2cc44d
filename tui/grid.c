/*
 * The virtual screen; see grid.h.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "tui/format.h"
#include "tui/grid.h"
#include "model/util/xalloc.h"

void grid_init(struct grid *g, int w, int h, int ascii)
{
	memset(g, 0, sizeof(*g));
	g->ascii = ascii;
	grid_resize(g, w, h);
}

void grid_release(struct grid *g)
{
	free(g->cells);
	g->cells = NULL;
	g->w = g->h = 0;
}

void grid_resize(struct grid *g, int w, int h)
{
	if (w < 1)
		w = 1;
	if (h < 1)
		h = 1;
	free(g->cells);
	g->w = w;
	g->h = h;
	g->cells = xcalloc((size_t)w * (size_t)h, sizeof(*g->cells));
	grid_clear(g, ROLE_NORMAL);
}

void grid_clear(struct grid *g, enum role role)
{
	for (int i = 0; i < g->w * g->h; i++)
		g->cells[i] = (struct cell){' ', (uint8_t)role};
}

static struct cell *at(struct grid *g, int x, int y)
{
	return &g->cells[(size_t)y * (size_t)g->w + (size_t)x];
}

const struct cell *grid_at(const struct grid *g, int x, int y)
{
	if (x < 0 || y < 0 || x >= g->w || y >= g->h)
		return NULL;
	return &g->cells[(size_t)y * (size_t)g->w + (size_t)x];
}

/* Overwriting half of a wide character blanks its other half. */
static void unpair(struct grid *g, int x, int y)
{
	struct cell *c = at(g, x, y);
	if (c->ch == GRID_WIDE_TAIL && x > 0)
		at(g, x - 1, y)->ch = ' ';
	else if (x + 1 < g->w && at(g, x + 1, y)->ch == GRID_WIDE_TAIL)
		at(g, x + 1, y)->ch = ' ';
}

void grid_fill(struct grid *g, int x, int y, int n, uint32_t ch, enum role role)
{
	if (y < 0 || y >= g->h)
		return;
	if (x < 0) {
		n += x;
		x = 0;
	}
	if (g->ascii && ch >= 0x80)
		ch = '?';
	for (int i = 0; i < n && x + i < g->w; i++) {
		unpair(g, x + i, y);
		*at(g, x + i, y) = (struct cell){ch, (uint8_t)role};
	}
}

void grid_paint(struct grid *g, int x, int y, int n, enum role role)
{
	if (y < 0 || y >= g->h)
		return;
	for (int i = x < 0 ? -x : 0; i < n && x + i < g->w; i++)
		at(g, x + i, y)->role = (uint8_t)role;
}

int grid_put(struct grid *g, int x, int y, int max, const char *s, enum role role)
{
	if (y < 0 || y >= g->h || x >= g->w || x < 0)
		return 0;
	if (max < 0 || max > g->w - x)
		max = g->w - x;
	struct sbuf clean = SBUF_INIT;
	format_sanitize(&clean, s);
	const unsigned char *p = (const unsigned char *)clean.buf;
	size_t n = clean.len;
	int used = 0;
	while (n) {
		uint32_t cp;
		int w;
		size_t k = format_next(p, n, &cp, &w);
		if (g->ascii && cp >= 0x80) {
			cp = '?';
			w = 1;
		}
		p += k;
		n -= k;
		if (w == 0)
			continue; /* combining marks are dropped rather than misplaced */
		if (used + w > max)
			break;
		unpair(g, x + used, y);
		*at(g, x + used, y) = (struct cell){cp, (uint8_t)role};
		if (w == 2) {
			unpair(g, x + used + 1, y);
			*at(g, x + used + 1, y) = (struct cell){GRID_WIDE_TAIL, (uint8_t)role};
		}
		used += w;
	}
	sbuf_release(&clean);
	return used;
}

int grid_put_cut(struct grid *g, int x, int y, int max, const char *s, const char *more,
		 enum role role)
{
	if (max < 0 || max > g->w - x)
		max = g->w - x;
	int mw = format_width(more);
	if (format_width(s) <= max || max <= mw)
		return grid_put(g, x, y, max, s, role);
	int used = grid_put(g, x, y, max - mw, s, role);
	return used + grid_put(g, x + used, y, mw, more, role);
}

int grid_put_wrapped(struct grid *g, int x, int y, int w, int rows, const char *s, const char *more,
		     enum role role)
{
	struct sbuf clean = SBUF_INIT, line = SBUF_INIT;
	format_sanitize(&clean, s);
	sbuf_init(&line);
	const char *p = clean.buf;
	int used = 0;
	while (*p && used < rows && w > 0) {
		sbuf_reset(&line);
		format_fit(&line, p, w, 0); /* the bytes as they are: line.len of p */
		if (!line.len)		    /* a character wider than the row */
			break;
		p += line.len;
		if (*p && used + 1 == rows) { /* the last row, and more to say */
			sbuf_adds(&line, more);
			grid_put_cut(g, x, y + used, w, line.buf, more, role);
		} else {
			grid_put(g, x, y + used, w, line.buf, role);
		}
		used++;
	}
	sbuf_release(&clean);
	sbuf_release(&line);
	return used;
}

int grid_put_pane(struct grid *g, int end, int most, const char *title, const char *s,
		  const char *more)
{
	int w = g->w - 2, need = (format_width(s) + w - 1) / (w > 0 ? w : 1) + 1;
	if (need > most)
		need = most;
	if (need < 2 || w < 1)
		return 0;
	int y = end - need;
	grid_fill(g, 0, y, g->w, ' ', ROLE_HEADER);
	grid_put(g, 1, y, w, title, ROLE_HEADER);
	for (int k = 1; k < need; k++)
		grid_fill(g, 0, y + k, g->w, ' ', ROLE_NORMAL);
	grid_put_wrapped(g, 1, y + 1, w, need - 1, s, more, ROLE_NORMAL);
	return need;
}

void grid_row_text(const struct grid *g, int y, char *buf, size_t n)
{
	size_t len = 0, keep = 0;
	if (!n)
		return;
	for (int x = 0; y >= 0 && y < g->h && x < g->w; x++) {
		uint32_t ch = g->cells[(size_t)y * (size_t)g->w + (size_t)x].ch;
		if (ch == GRID_WIDE_TAIL)
			continue;
		char u[4];
		size_t k = format_encode(ch, u);
		if (len + k >= n)
			break;
		memcpy(buf + len, u, k);
		len += k;
		if (ch != ' ')
			keep = len;
	}
	buf[keep] = '\0';
}

void grid_dump(const struct grid *g, FILE *f)
{
	size_t n = (size_t)g->w * 4 + 1;
	char *line = xmalloc(n);
	for (int y = 0; y < g->h; y++) {
		grid_row_text(g, y, line, n);
		fprintf(f, "%s\n", line);
	}
	free(line);
}
