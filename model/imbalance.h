/*
 * Imbalance among concurrent siblings of one type (model/imbalance.c).
 */
#ifndef GRADEML_IMBALANCE_H
#define GRADEML_IMBALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "model/store.h"

/* One group of siblings that should take equally long. */
struct imbalance {
	int64_t parent_id;     /* the step (ranks, iterations) or stage (tasks) */
	const char *kind;      /* "ranks", "iteration" or "tasks" */
	char *label;	       /* what the group is, for people */
	int64_t members;       /* how many phases the group has */
	int64_t ideal_ns;      /* their mean duration */
	int64_t actual_ns;     /* the longest */
	int64_t impact_ns;     /* actual - ideal */
	int64_t straggler_id;  /* the longest member */
	char *straggler;       /* its name */
	int64_t slow;	       /* members more than 10% over the ideal */
};

/* Every group with at least two members and some imbalance, largest
 * impact first; release with imbalance_release. */
int imbalance_compute(struct store *st, struct imbalance **out, size_t *n, char **err);
void imbalance_release(struct imbalance *v, size_t n);

#endif
