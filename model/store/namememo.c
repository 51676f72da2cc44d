/*
 * Names by id, classified once (see namememo.h): open addressing, kept at
 * most half full.
 */
#include <stdlib.h>

#include "model/store/col.h"
#include "model/store/namememo.h"
#include "model/util/xalloc.h"

static size_t slot_of(const struct namememo *m, int64_t id)
{
	size_t i = (size_t)((uint64_t)id * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->slot[i].name_id && m->slot[i].name_id != id)
		i = (i + 1) & (m->cap - 1);
	return i;
}

int *namememo_put(struct namememo *m, int64_t id, int *created)
{
	if (m->cap) {
		struct namememo_slot *hit = &m->slot[slot_of(m, id)];
		if (hit->name_id == id) {
			*created = 0;
			return &hit->value;
		}
	}
	if (2 * (m->used + 1) > m->cap) {
		struct namememo grown = {.cap = m->cap ? 2 * m->cap : 1024};
		grown.slot = xcalloc(grown.cap, sizeof(*grown.slot));
		for (size_t i = 0; i < m->cap; i++)
			if (m->slot[i].name_id)
				grown.slot[slot_of(&grown, m->slot[i].name_id)] = m->slot[i];
		grown.used = m->used;
		free(m->slot);
		*m = grown;
	}
	struct namememo_slot *s = &m->slot[slot_of(m, id)];
	*s = (struct namememo_slot){id, 0};
	m->used++;
	*created = 1;
	return &s->value;
}

int namememo_get(struct namememo *m, sqlite3_stmt *nameq, int64_t id,
		 int (*classify)(const char *text))
{
	int created, *value = namememo_put(m, id, &created);
	if (!created)
		return *value;
	sqlite3_bind_int64(nameq, 1, id);
	*value = classify(sqlite3_step(nameq) == SQLITE_ROW ? col_text(nameq, 0) : "");
	sqlite3_reset(nameq);
	return *value;
}

void namememo_release(struct namememo *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->used = 0;
}
