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
	/* held to the scale before the conversion: a value far outside it (a
	 * hostile sample) is no int */
	double x = (v - lo) / (hi - lo) * 7.0 + 0.5;
	return g->spark[x >= 7 ? 7 : x >= 0 ? (int)x : 0];
}
