/*
 * The virtual screen every view draws into: a grid of cells, each one code
 * point and a role (what the cell shows; the theme maps roles to colours).
 * Only tui/term.c turns a grid into curses calls; the headless mode and the
 * tests read the grid as text with grid_dump.  So every view is testable
 * without a terminal, as tmux's capture-pane reads its grid.
 *
 * Text reaches the grid through grid_put, which sanitises it (format.h):
 * no control character or escape sequence from a trace can get into a cell.
 * A wide character takes two cells; the second holds GRID_WIDE_TAIL.
 */
#ifndef GRADEML_GRID_H
#define GRADEML_GRID_H

#include <stdint.h>
#include <stdio.h>

/* X(name, theme key): the roles a cell can have. */
#define ROLE_LIST(X)                                                                               \
	X(ROLE_NORMAL, "normal")                                                                   \
	X(ROLE_TITLE, "title")                                                                     \
	X(ROLE_HEADER, "header")                                                                   \
	X(ROLE_SORTED, "sorted")                                                                   \
	X(ROLE_SELECTED, "selected")                                                               \
	X(ROLE_BREADCRUMB, "breadcrumb")                                                           \
	X(ROLE_STATUS, "status")                                                                   \
	X(ROLE_DIM, "dim")                                                                         \
	X(ROLE_MATCH, "match")                                                                     \
	X(ROLE_BAR, "bar")                                                                         \
	X(ROLE_BAR_ALT, "bar-alt")                                                                 \
	X(ROLE_SPARK, "spark")                                                                     \
	X(ROLE_LABEL, "label")                                                                     \
	X(ROLE_ERROR, "error")                                                                     \
	X(ROLE_FILTER, "filter")                                                                   \
	X(ROLE_PROMPT, "prompt")                                                                   \
	X(ROLE_FLAME, "flame")                                                                     \
	X(ROLE_FLAME_ALT, "flame-alt")

#define ROLE_ENUM(name, key) name,
enum role { ROLE_LIST(ROLE_ENUM) ROLE_COUNT };
#undef ROLE_ENUM

#define GRID_WIDE_TAIL 0xffffffffu

struct cell {
	uint32_t ch;
	uint8_t role;
};

struct grid {
	int w, h;
	int ascii; /* only ASCII reaches the cells; others become '?' */
	struct cell *cells;
};

void grid_init(struct grid *g, int w, int h, int ascii);
void grid_release(struct grid *g);
void grid_resize(struct grid *g, int w, int h);
/* Every cell a space of role. */
void grid_clear(struct grid *g, enum role role);
/* Fills columns [x, x + n) of row y with code point ch (clipped). */
void grid_fill(struct grid *g, int x, int y, int n, uint32_t ch, enum role role);
/* Draws s (any bytes: it is sanitised here) from column x of row y, at most
 * max columns (max < 0: to the right edge).  Returns the columns used. */
int grid_put(struct grid *g, int x, int y, int max, const char *s, enum role role);
/* As grid_put, but text wider than max is cut one mark short and ends in
 * more (the glyph set's "…"), so a cut never passes for the whole. */
int grid_put_cut(struct grid *g, int x, int y, int max, const char *s, const char *more,
		 enum role role);
/* Draws s (sanitised here) from column x of row y on, w columns a row,
 * wrapped onto at most rows rows, the last one cut with more when s needs
 * more.  Returns the rows used. */
int grid_put_wrapped(struct grid *g, int x, int y, int w, int rows, const char *s, const char *more,
		     enum role role);
/* A pane across the width whose last row is end - 1: a title row, then s
 * wrapped (grid_put_wrapped), at most most rows in all.  Returns the rows
 * it takes: 0 when fewer than two fit. */
int grid_put_pane(struct grid *g, int end, int most, const char *title, const char *s,
		  const char *more);
/* Sets the role of columns [x, x + n) of row y, keeping their text. */
void grid_paint(struct grid *g, int x, int y, int n, enum role role);
const struct cell *grid_at(const struct grid *g, int x, int y);
/* Row y as UTF-8 text without trailing spaces, into buf (NUL-terminated). */
void grid_row_text(const struct grid *g, int y, char *buf, size_t n);
/* All rows, one line each. */
void grid_dump(const struct grid *g, FILE *f);

#endif
