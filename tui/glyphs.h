/*
 * The characters views draw with: UTF-8 block and arrow glyphs in a UTF-8
 * locale, an ASCII set otherwise (or with --ascii).  Views never write a
 * glyph literal; they take it from here.
 */
#ifndef GRADEML_GLYPHS_H
#define GRADEML_GLYPHS_H

struct glyphs {
	const char *spark[8];  /* lowest to highest */
	const char *full;      /* a filled cell (bars, Gantt) */
	const char *crumb;     /* between breadcrumb parts */
	const char *up, *down; /* sort order markers */
	const char *more;      /* text cut here */
};

const struct glyphs *glyphs_get(int ascii);
/* The spark glyph for v in [lo, hi] (lowest when hi <= lo). */
const char *glyphs_spark(const struct glyphs *g, double v, double lo, double hi);

#endif
