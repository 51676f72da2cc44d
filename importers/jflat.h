/*
 * A JSON value flattened into one array of nodes, for importers that read
 * many small objects (the samples jcut.c cuts out of a sadf -j file).
 * Building a jansson tree costs a few allocations per value; jflat_parse
 * builds nothing but this array, reused from one object to the next.
 *
 * jflat_parse takes only what it can read exactly as jansson would (ASCII
 * strings without escapes, numbers it converts exactly, no repeated key,
 * objects of at most JFLAT_MEMBERS members) and declines the rest; the
 * caller then parses with jansson, for the same values or the same error,
 * and copies the tree in with jflat_from_json.  Either way the reader sees
 * one shape: members in document order, as json_object_foreach gives them.
 *
 * Node 0 stands for no value, as a NULL json_t * does: jflat_get gives it
 * for a missing member, its type is JF_NONE and it has no members.  The
 * value itself is node 1 (JFLAT_ROOT) and the rest follow in document
 * order: a container's first child is the node after it, and next links
 * siblings (0: none).
 * Strings and keys point into the parsed text (or into the json_t), so
 * they live as long as it does.
 */
#ifndef GRADEML_JFLAT_H
#define GRADEML_JFLAT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define JFLAT_NODES   (1 << 16) /* jflat_parse declines larger values */
#define JFLAT_MEMBERS 64	/* and larger objects (repeated keys are checked pairwise) */

enum jflat_type {
	JF_NONE,
	JF_OBJECT,
	JF_ARRAY,
	JF_STRING,
	JF_INTEGER,
	JF_REAL,
	JF_TRUE,
	JF_FALSE,
	JF_NULL
};

struct jflat_node {
	const char *key;	   /* the member's key; NULL in an array or at the root */
	const char *str;	   /* JF_STRING */
	double num;		   /* JF_INTEGER (converted as json_number_value does), JF_REAL */
	int64_t integer;	   /* JF_INTEGER */
	uint32_t key_len, str_len; /* bytes */
	uint32_t next;		   /* the next sibling, 0 when none */
	uint32_t count;		   /* JF_OBJECT, JF_ARRAY: children */
	unsigned char type;
};

struct jflat {
	struct jflat_node *n;
	size_t len, alloc;
};

#define JFLAT_INIT                                                                                 \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}
#define JFLAT_ROOT 1

/* Parses text[0..len) (a whole JSON value) into f, writing string
 * terminators into text.  0, or 1 when it declines (f and text are then
 * unchanged in meaning: text holds the same JSON). */
int jflat_parse(struct jflat *f, char *text, size_t len);
/* Copies the tree of v into f. */
void jflat_from_json(struct jflat *f, json_t *v);
/* The member of node obj named key, or 0 when none (or obj is not an
 * object). */
uint32_t jflat_get(const struct jflat *f, uint32_t obj, const char *key);
/* The first child of node i, or 0 when none. */
static inline uint32_t jflat_child(const struct jflat *f, uint32_t i)
{
	return f->n[i].count ? i + 1 : 0;
}
void jflat_release(struct jflat *f);

#endif
