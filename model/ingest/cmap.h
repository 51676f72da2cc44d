/*
 * A map from correlation ids to 64-bit values whose memory is bounded: the
 * nest builder's launch map, which must know every correlation id of
 * device work in a source until its device tracks have been read (5 M ids
 * in a 10 GiB trace).
 *
 * Ids live in an open-addressing table in memory, which doubles up to
 * max_bytes (at least 16 KiB; the old and the new table together while it
 * doubles, half as much again); ids added once it is full go to a table in
 * a private temporary SQLite database (a file in $SQLITE_TMPDIR, $TMPDIR,
 * /var/tmp, /usr/tmp or /tmp, deleted when closed, when SQLite is built
 * with SQLITE_TEMP_STORE 0 or 1 as Debian's is; in memory with 2 or 3),
 * read and written through a 2 MiB page cache.  Ids arrive nearly in
 * order (each track's launches and kernels follow time, and so their
 * correlation ids), so the disk table is read mostly where it was last
 * read.  An id is in one place or the other, never both.
 */
#ifndef GRADEML_CMAP_H
#define GRADEML_CMAP_H

#include <stddef.h>
#include <stdint.h>

struct cmap;

/* How cmap_add folds a delta into a value (0 for an id not yet in the
 * map); the result must not depend on the order of the deltas. */
typedef uint64_t (*cmap_combine)(uint64_t v, uint64_t delta);

/* combine may be NULL when cmap_add is not used. */
struct cmap *cmap_new(size_t max_bytes, cmap_combine combine);
/* 1 and *v when id is in the map, 0 (*v untouched) when not, -1 when the
 * disk table failed (cmap_error says why; it fails from then on).  id is
 * not 0. */
int cmap_get(struct cmap *m, int64_t id, uint64_t *v);
/* Sets id's value; 0, or -1 when the disk table failed. */
int cmap_put(struct cmap *m, int64_t id, uint64_t v);
/* Folds delta into id's value: at once when id is in memory or there is
 * room for it there, else later, by cmap_settle (sorted by id first, so
 * that the disk table is written in order rather than read and written
 * once for each delta).  Until then cmap_get may miss those deltas. */
int cmap_add(struct cmap *m, int64_t id, uint64_t delta);
/* Folds every delta cmap_add deferred into the disk table. */
int cmap_settle(struct cmap *m);
/* A hint that id will be wanted soon. */
void cmap_prefetch(const struct cmap *m, int64_t id);
/* Why the last -1 came back. */
const char *cmap_error(const struct cmap *m);
/* Ids kept on disk; for tests. */
uint64_t cmap_on_disk(const struct cmap *m);
void cmap_free(struct cmap *m);

#endif
