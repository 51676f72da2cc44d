/*
 * A cap on the temporary files of query connections.  SQLite spills large
 * sorts, groupings, DISTINCTs and materialised sub-queries to temporary
 * files (in SQLITE_TMPDIR or TMPDIR) and has no limit on their size: a
 * runaway query (a cartesian join sorted) fills the disk.  Keeping them in
 * memory instead (temp_store = MEMORY) caps them with the heap limit but
 * makes every large sort two or three times slower (SQLite then sorts
 * record by record in the heap, never in runs).  So query connections open
 * through a VFS of their own, "grademl-tempcap": the default VFS, with
 * every temporary file counted as it grows; a write past the cap fails
 * with SQLITE_FULL, and the statement stops.  The database file itself
 * goes straight to the default VFS.
 */
#ifndef GRADEML_TEMPCAP_H
#define GRADEML_TEMPCAP_H

#include <stdint.h>

/* The VFS's name for sqlite3_open_v2 (registered on the first call), or
 * NULL when it cannot be registered (then open with the default). */
const char *tempcap_vfs(void);
/* Sets the cap, in bytes, on all temporary files of the process's query
 * connections together (0: none); returns the one it replaces. */
int64_t tempcap_set(int64_t bytes);
/* Whether a write failed at the cap since the last tempcap_set. */
int tempcap_hit(void);

#endif
