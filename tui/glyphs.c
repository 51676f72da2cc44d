/*
 * Glyph sets; see glyphs.h.
 */
#include <math.h>

#include "tui/glyphs.h"

static const struct glyphs utf8 = {
    {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"},
    "\u2588",
    " \u203a ",
    "\u25b2",
    "\u25bc",
    "\u2026",
};

static const struct glyphs ascii = {
    {"_", ".", ":", "-", "=", "+", "*", "#"}, "#", " > ", "^", "v", "~",
};

const struct glyphs *glyphs_get(int want_ascii)
{
	return want_ascii ? &ascii : &utf8;
}

const char *glyphs_spark(const struct glyphs *g, double v, double lo, double hi)
{
	if (isnan(v))
		return " ";
	if (hi <= lo)
		return g->spark[0];
	int i = (int)((v - lo) / (hi - lo) * 7.0 + 0.5);
	if (i < 0)
		i = 0;
	if (i > 7)
		i = 7;
	return g->spark[i];
}
