/*
 * A streaming JSON cutter for documents too large to parse whole (sadf -j
 * recordings, Prometheus results).  It reads the input once, knowing JSON's
 * strings, scalars and nesting but building nothing, and:
 *   - cuts out each object element of the arrays the caller chooses and
 *     hands it to jansson (memory is bounded by the largest element);
 *   - reports each scalar member of the objects outside those elements
 *     (a host's "nodename", an envelope's "status").
 * It checks the document's shape as it goes: brackets, strings, one value,
 * nothing after it; errors name the file and the byte.
 *
 * Depths: the top-level value's container is depth 0; jcut_key(j, d) is the
 * key that opened the container at depth d ("" for the top level or an
 * array element).
 */
#ifndef GRADEML_JCUT_H
#define GRADEML_JCUT_H

#include <jansson.h>
#include <stdint.h>

#include "importers/input.h"

#define JCUT_DEPTH 64
#define JCUT_KEY   32 /* keys are compared cut to this many bytes */

struct jcut;

struct jcut_ops {
	/* Whether to cut the object elements of the array at depth d. */
	int (*cut)(void *arg, const struct jcut *j, int d);
	/* One cut element (jcut frees it after); 0, or -1 with *err. */
	int (*element)(void *arg, json_t *e, char **err);
	/* A scalar member key: text of the object at depth d (strings with
	 * their escapes undone for \" \\ \/, others kept as written; cut
	 * to 200 bytes); NULL when not wanted. */
	void (*scalar)(void *arg, const struct jcut *j, int d, const char *key, const char *text,
		       int is_string);
	const char *element_name; /* "a sample", "a series": for messages */
	size_t element_max;	  /* bytes */
	/* Optional, tried before element: one cut element's text (the
	 * callee may write into it); 0, -1 with *err, or 1 to decline, when
	 * the text must still be the element's and goes to jansson and
	 * element as without it. */
	int (*element_text)(void *arg, char *text, size_t len, char **err);
};

/* Runs over the whole input; 0, or -1 with *err ("file: at byte N: ...").
 * *top is set to '{' or '[' (the top-level value) when one was read. */
int jcut_run(struct input *in, const struct jcut_ops *ops, void *arg, int *top, char **err);
/* The key that opened the container at depth d, or "". */
const char *jcut_key(const struct jcut *j, int d);
/* 1 when the container at depth d is an array. */
int jcut_is_array(const struct jcut *j, int d);

#endif
