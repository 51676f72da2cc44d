/*
 * Phase id -> a small index (int32): open addressing, or, for the ids of a
 * table scan (increasing, nearly dense), a plain array from base that the
 * caller fills (dense, base, range).  Shared by the critical path
 * (model/analysis/critpath.c) and the summaries (model/analysis/aggr.c).
 */
#ifndef GRADEML_IDMAP_H
#define GRADEML_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	int64_t *key;
	int32_t *val; /* -1: empty */
	size_t mask, used;
	int32_t *dense; /* when set: dense[key - base] for key in [base, base + range) */
	int64_t base;
	size_t range;
};

/* cap: a power of two. */
void idmap_init(struct idmap *mp, size_t cap);
void idmap_release(struct idmap *mp);
/* The value of key, or -1. */
int32_t idmap_get(const struct idmap *mp, int64_t key);
/* Adds key -> val (val >= 0) to a map that is not dense; 0, or -1 when key
 * is there already. */
int idmap_put(struct idmap *mp, int64_t key, int32_t val);

#endif
