/*
 * The explorer without a terminal: keys from a script, the screen as text.
 * For tests, for users who want a dump, and for the latency benchmark.
 *
 * Script: one or more whitespace-separated key names a line, as keys.h
 * names them ("j", "Enter", "C-l", "Space", "F1"); '#' starts a comment
 * line; four directives stand alone on their line:
 *	type TEXT	types TEXT (for prompts), each character a key
 *	resize WxH	changes the screen size
 *	click X Y	a mouse click at column X, row Y (as --mouse has it)
 *	dump		writes the screen to the dump file now
 * The final screen is always written at the end.
 */
#ifndef GRADEML_HEADLESS_H
#define GRADEML_HEADLESS_H

#include <stdint.h>

struct headless_opts {
	const char *db;
	const char *keys; /* script file, "-" for stdin, NULL for none */
	const char *dump; /* output file, "-" for stdout */
	int w, h;
	int ascii;
	int stats;	    /* print timings to stderr */
	int64_t max_memory; /* --max-memory: what one query may take; 0 no limit */
	int64_t timeout_ns; /* --timeout: how long one query may run; 0 no limit */
};

/* Returns 0, or -1 with *err set. */
int headless_run(const struct headless_opts *o, char **err);

#endif
