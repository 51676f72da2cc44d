/*
 * A memo of what a name means, by its id in trace.db's strings table: a
 * million phases have a few thousand names, so each name is read and
 * classified once.  The caller gives the classifier and a prepared
 * "SELECT text FROM strings WHERE id = ?1"; the memo owns its table.
 */
#ifndef GRADEML_NAMEMEMO_H
#define GRADEML_NAMEMEMO_H

#include <sqlite3.h>
#include <stdint.h>

struct namememo {
	struct namememo_slot {
		int64_t name_id; /* 0: empty */
		int value;
	} * slot;
	size_t cap, used;
};

#define NAMEMEMO_INIT                                                                              \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* classify(text) for the name id, read through nameq ("" when the id has
 * no text) and remembered. */
int namememo_get(struct namememo *m, sqlite3_stmt *nameq, int64_t id,
		 int (*classify)(const char *text));
/* The value kept for id (not 0), made 0 when missing (*created says
 * which): the memo as a plain map from ids to ints.  The pointer holds
 * until the next put. */
int *namememo_put(struct namememo *m, int64_t id, int *created);
void namememo_release(struct namememo *m);

#endif
