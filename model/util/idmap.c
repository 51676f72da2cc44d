/*
 * Phase id -> index maps; see idmap.h.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/idmap.h"
#include "model/util/xalloc.h"

static size_t idmap_slot(const struct idmap *mp, int64_t key)
{
	return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 20) & mp->mask;
}

void idmap_init(struct idmap *mp, size_t cap)
{
	mp->mask = cap - 1;
	mp->used = 0;
	mp->dense = NULL;
	mp->base = 0;
	mp->range = 0;
	mp->key = xmalloc(cap * sizeof(*mp->key));
	mp->val = xmalloc(cap * sizeof(*mp->val));
	memset(mp->val, 0xff, cap * sizeof(*mp->val));
}

void idmap_release(struct idmap *mp)
{
	free(mp->key);
	free(mp->val);
	free(mp->dense);
	memset(mp, 0, sizeof(*mp));
}

int32_t idmap_get(const struct idmap *mp, int64_t key)
{
	if (mp->dense) {
		uint64_t off = (uint64_t)key - (uint64_t)mp->base;
		return key >= mp->base && off < mp->range ? mp->dense[off] : -1;
	}
	for (size_t s = idmap_slot(mp, key);; s = (s + 1) & mp->mask) {
		if (mp->val[s] < 0)
			return -1;
		if (mp->key[s] == key)
			return mp->val[s];
	}
}

/* Adds key -> val; 0, or -1 when key is there already. */
int idmap_put(struct idmap *mp, int64_t key, int32_t val)
{
	if ((mp->used + 1) * 2 > mp->mask + 1) {
		struct idmap old = *mp;
		idmap_init(mp, (old.mask + 1) * 2);
		for (size_t s = 0; s <= old.mask; s++)
			if (old.val[s] >= 0)
				idmap_put(mp, old.key[s], old.val[s]);
		idmap_release(&old);
	}
	size_t s = idmap_slot(mp, key);
	for (; mp->val[s] >= 0; s = (s + 1) & mp->mask)
		if (mp->key[s] == key)
			return -1;
	mp->key[s] = key;
	mp->val[s] = val;
	mp->used++;
	return 0;
}
