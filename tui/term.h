/*
 * The curses front end: runs the explorer on the terminal.  The only file
 * that calls curses.  The terminal is restored on every exit path: normal
 * return, a fatal error (through atexit), SIGINT, SIGTERM, SIGHUP and
 * crashes.
 */
#ifndef GRADEML_TERM_H
#define GRADEML_TERM_H

#include <stdint.h>

struct term_opts {
	const char *db;
	const char *theme;  /* NULL: "default" */
	int no_color;	    /* --no-color or NO_COLOR */
	int ascii;	    /* --ascii or a non-UTF-8 locale */
	int mouse;	    /* --mouse: the wheel scrolls, a click selects */
	int64_t max_memory; /* --max-memory: what one query may take; 0 no limit */
	int64_t timeout_ns; /* --timeout: how long one query may run; 0 no limit */
};

/* Returns 0, or -1 with *err set (the terminal already restored). */
int term_run(const struct term_opts *o, char **err);

#endif
