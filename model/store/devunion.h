/*
 * The device time beneath every phase of a trace.db (phases.device_ns):
 * the length of the union of the time intervals of the device work (a
 * kernel, a copy, a set: [start_ns, start_ns + dur_ns)) in the phase's
 * subtree, its own included.  Work that overlaps (two streams, a copy
 * beside a kernel) counts once, so a phase's device time never exceeds
 * the span its device work covers.
 *
 * store_commit calls devunion_write once per transaction that added device
 * work: it reads the whole phases table once and writes only the rows
 * whose stored device_ns differs from the union (the importers store a
 * sum, equal to the union wherever nothing beneath overlaps).
 */
#ifndef GRADEML_DEVUNION_H
#define GRADEML_DEVUNION_H

#include <sqlite3.h>

/* Sets every phase's device_ns of db to its device work's union; 0, or -1
 * with *err (the caller frees it) when db cannot be read or written.
 * Memory: 40 bytes a phase and 24 a piece of device work, freed on return. */
int devunion_write(sqlite3 *db, char **err);

#endif
