/*
 * Open-addressing string map with linear probing, a multiply-xorshift hash
 * over 64-bit words, and a load factor kept under one half.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/strmap.h"
#include "model/util/xalloc.h"

/* Eight bytes a step: names of GPU kernels run to hundreds of bytes, and
 * a byte-at-a-time hash of each event's name took 8% of the parse. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	if (n)
		memcpy(&w, s, n);
	/* a full mix last: a product's low bits, which pick the slot, depend
	 * only on the low bits of what was multiplied */
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ h >> 29;
}

static struct strmap_ent *probe(const struct strmap *m, const char *key, size_t len, uint64_t h)
{
	size_t i = h & (m->cap - 1);
	for (;;) {
		struct strmap_ent *e = &m->slot[i];
		if (!e->key || (e->hash == h && e->len == len && !memcmp(e->key, key, len)))
			return e;
		i = (i + 1) & (m->cap - 1);
	}
}

struct strmap_ent *strmap_get(const struct strmap *m, const char *key, size_t len)
{
	if (!m->cap)
		return NULL;
	struct strmap_ent *e = probe(m, key, len, hash_bytes(key, len));
	return e->key ? e : NULL;
}

static void grow(struct strmap *m)
{
	struct strmap g = {xcalloc(m->cap ? m->cap * 2 : 64, sizeof(struct strmap_ent)),
			   m->cap ? m->cap * 2 : 64, m->n};
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key)
			*probe(&g, m->slot[i].key, m->slot[i].len, m->slot[i].hash) = m->slot[i];
	free(m->slot);
	*m = g;
}

struct strmap_ent *strmap_put(struct strmap *m, const char *key, size_t len, int64_t dflt,
			      int *created)
{
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	uint64_t h = hash_bytes(key, len);
	struct strmap_ent *e = probe(m, key, len, h);
	if (created)
		*created = !e->key;
	if (!e->key) {
		e->key = xstrndup(key, len);
		e->len = len;
		e->hash = h;
		e->value = dflt;
		m->n++;
	}
	return e;
}

void strmap_clear(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].key);
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
