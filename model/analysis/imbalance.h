/*
 * Imbalance among concurrent siblings of one type, and stragglers among
 * ranks that meet at collectives (model/analysis/imbalance.c).
 */
#ifndef GRADEML_IMBALANCE_H
#define GRADEML_IMBALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"

/* One rank of a group whose ranks meet at collectives. */
struct imbalance_rank {
	int64_t rank_id; /* its rank node */
	char *name;	 /* the rank node's name, "rank 3" */
	int64_t last;	 /* the matched collectives it reached last */
	int64_t wait_ns; /* its time inside them before the last rank arrived */
};

/* One group of siblings that should take equally long. */
struct imbalance {
	int64_t parent_id;    /* the step (ranks, iteration) or stage (tasks) */
	const char *kind;     /* "ranks", "iteration" or "tasks" */
	char *label;	      /* what the group is, for people */
	int64_t members;      /* how many phases the group has */
	int64_t ideal_ns;     /* their mean duration; meeting: the mean arrival */
	int64_t actual_ns;    /* the longest; meeting: the last arrival */
	int64_t impact_ns;    /* actual - ideal */
	int64_t straggler_id; /* the longest member; meeting: the rank (ranks) or
				 its ProfilerStep#N (iteration) */
	char *straggler;      /* its name; meeting: the rank's name */
	int64_t slow;	      /* members more than 10% over the ideal; meeting:
				 ranks that reached some collective last */
	/* Ranks that meet at collectives (meets non-NULL); arrivals count from
	 * each collective's first arrival and add up over the collectives. */
	const char *meets;	      /* "device" (NCCL kernels) or "host" (c10d ops),
					 NULL: a group measured by durations */
	int64_t collectives;	      /* collectives matched across the ranks */
	int64_t unmatched;	      /* the step's collective calls left unmatched */
	int64_t last;		      /* how many of them the straggler reached last */
	int64_t wait_ns;	      /* the other ranks' waits, added up */
	struct imbalance_rank *ranks; /* the straggler first, then rank order */
	size_t nranks;
};

/* Every group with at least two members and some imbalance, largest
 * impact first; release with imbalance_release. */
int imbalance_compute(struct store *st, struct imbalance **out, size_t *n, char **err);
void imbalance_release(struct imbalance *v, size_t n);
/* The rank other than the straggler that waited longest, or NULL. */
const struct imbalance_rank *imbalance_longest(const struct imbalance *g);
/* What a meeting group (meets non-NULL) measured, in words: "rank 7
 * arrives last at 5 of 8 collectives (NCCL kernels on the GPU); the others
 * wait 45.3 ms in all, rank 1 the longest (11.1 ms)".  The caller frees it;
 * names come from the file, unsanitised. */
char *imbalance_says(const struct imbalance *g);

#endif
