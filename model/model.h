/*
 * The in-memory execution model that views walk: a tree of phases loaded
 * lazily from trace.db.  Opening reads only the workflows; a node's children
 * are read (through the phases_parent index) the first time they are asked
 * for, so opening a trace.db of millions of phases is instant.
 *
 * The model owns every node and every name string; pointers stay valid
 * until model_free.  Names are interned: equal names share one string.
 */
#ifndef GRADEML_MODEL_H
#define GRADEML_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct mnode {
	int64_t id;
	struct mnode *parent; /* NULL for the root */
	int kind;	      /* enum phase_kind */
	const char *name;     /* never NULL */
	const char *category; /* NULL when none */
	int64_t start_ns, dur_ns, self_ns, device_ns;
	int64_t child_count; /* as stored; children[] holds them once loaded */
	int64_t track_id, source_id;
	int depth;
	int loaded;
	struct mnode **children; /* ordered by start time */
	size_t nchildren;
};

struct model;

int model_open(const char *path, struct model **out, char **err);
void model_free(struct model *m);
struct store *model_store(struct model *m);
/* The root: a virtual node whose children are the workflows, already loaded. */
struct mnode *model_root(struct model *m);
/* Loads n's children if not yet loaded. */
int model_children(struct model *m, struct mnode *n, char **err);
/* Total number of phases in the file (one COUNT query). */
int64_t model_phase_count(struct model *m);

#endif
