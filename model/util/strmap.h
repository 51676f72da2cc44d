/*
 * A hash map from byte strings to int64 values, for the interning caches
 * and lookup tables of importers.  Keys are copied; the map owns them.
 */
#ifndef GRADEML_STRMAP_H
#define GRADEML_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap_ent {
	char *key; /* NUL-terminated copy; NULL marks an empty slot */
	size_t len;
	uint64_t hash;
	int64_t value;
};

struct strmap {
	struct strmap_ent *slot;
	size_t cap, n;
};

#define STRMAP_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* The entry for key, or NULL. */
struct strmap_ent *strmap_get(const struct strmap *m, const char *key, size_t len);
/* The entry for key, created with value `dflt` when missing; *created tells which. */
struct strmap_ent *strmap_put(struct strmap *m, const char *key, size_t len, int64_t dflt,
			      int *created);
void strmap_clear(struct strmap *m);
/* Iteration: for (size_t i = 0; i < m.cap; i++) if (m.slot[i].key) ... */

#endif
