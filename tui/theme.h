/*
 * Colour themes: what each cell role (grid.h) looks like.  A theme is a
 * small text file, one role a line (themes/README.md has the format):
 *
 *	# comment
 *	normal   = default default
 *	selected = bright-white blue bold
 *
 * This module only parses and finds theme files and knows the 256-colour
 * palette; it never calls curses.  tui/term.c turns a struct theme into
 * colour pairs, after theme_fallback_colour for terminals with fewer than
 * 256 colours.  A struct theme is plain data the caller owns; nothing here
 * keeps a pointer into it.
 *
 * Colours are numbers: -1 the terminal's default, 0..7 the eight basic
 * colours, 8..15 their bright versions, 16..255 the xterm 256-colour
 * palette (a 6x6x6 cube, then 24 greys).
 */
#ifndef GRADEML_THEME_H
#define GRADEML_THEME_H

#include <stddef.h>

#include "tui/grid.h"

enum {
	THEME_BOLD = 1u << 0,
	THEME_DIM = 1u << 1,
	THEME_UNDERLINE = 1u << 2,
	THEME_REVERSE = 1u << 3,
	THEME_ITALIC = 1u << 4,
};

/* Theme files larger than this are refused. */
#define THEME_MAX_BYTES 65536
/* Longest line of a theme file, in bytes, without its newline. */
#define THEME_MAX_LINE 255

struct theme_style {
	int fg, bg;	/* -1: the terminal's default */
	unsigned attrs; /* THEME_BOLD | THEME_DIM | ... */
};

struct theme {
	char name[64]; /* the file's base name without ".theme" */
	struct theme_style role[ROLE_COUNT];
};

/* Parses a theme from text[0..len) (NUL bytes are an error, not an end).
 * origin names the text in error messages ("themes/x.theme:3: unknown
 * colour 'pink'") and gives t->name.  Roles the text does not mention take
 * normal's style; a role given without a background takes normal's
 * background.  Returns 0, or -1 with *err set (the caller frees it) and t
 * unspecified. */
int theme_parse(const char *text, size_t len, const char *origin, struct theme *t, char **err);

/* Loads a theme by name, or from a path when name contains '/'.  A name is
 * looked up as NAME.theme in, in order: $GRADEML_THEME_DIR, the directory
 * compiled in as GRADEML_THEME_DIR (make install), and "themes" beside the
 * directory that holds the executable (build/grademl-tui finds ./themes).
 * "monochrome" is built in: when no file of that name is found it is
 * theme_monochrome.  Returns 0, or -1 with *err set (it names the
 * directories searched when the theme is not found). */
int theme_load(const char *name, struct theme *t, char **err);

/* The built-in theme for NO_COLOR, --no-color, and when no theme file can
 * be found: terminal default colours, roles told apart by reverse, bold,
 * underline and dim only. */
void theme_monochrome(struct theme *t);

/* The names of the themes theme_load can find (the search path above, plus
 * "monochrome"), sorted, without duplicates.  *names is an array of that
 * many strings; the caller frees each and the array. */
size_t theme_list(char ***names);

/* Colour c as a terminal with ncolors colours can show it: unchanged when
 * it has them; 16..255 become the nearest of the 16 basic colours (by
 * xterm's RGB values), and with fewer than 16 colours a bright colour
 * becomes its plain one (8..15 -> 0..7); -1 (the default) when ncolors < 8
 * or c is not a colour. */
int theme_fallback_colour(int c, int ncolors);

/* The theme key of a role ("bar-alt"), as theme files name it. */
const char *theme_role_key(enum role r);

#endif
