/*
 * The device time beneath every phase of a trace.db (phases.device_ns):
 * the length of the union of the time intervals of the device work (a
 * kernel, a copy, a set: [start_ns, start_ns + dur_ns)) in the phase's
 * subtree, its own included.  Work that overlaps (two streams, a copy
 * beside a kernel) counts once, so a phase's device time never exceeds
 * the span its device work covers.
 *
 * store_commit calls devunion_write once per transaction that added device
 * work: it reads the device work of the whole file in order of start and
 * the phases above it, and writes only the rows whose stored device_ns
 * differs from the union (the importers store a sum, equal to the union
 * wherever nothing beneath overlaps).  A phase with no device work beneath
 * it keeps what its row holds (the importers write 0).
 */
#ifndef GRADEML_DEVUNION_H
#define GRADEML_DEVUNION_H

#include <sqlite3.h>

#include <stddef.h>

/* How many phases devunion_write holds at once (48 bytes each, and their
 * index): past it, phases are let go as devunion.c says, so that its memory
 * (under 30 MiB: these, 4 MiB of cached blocks, and up to 16 MiB of ids
 * noted) does not grow with the file. */
#define DEVUNION_MAX_PHASES ((size_t)1 << 16)

/* Sets the device_ns of every phase of db with device work beneath it to
 * that work's union; 0, or -1 with *err (the caller frees it) when db
 * cannot be read or written. */
int devunion_write(sqlite3 *db, char **err);
/* The same, holding at most about max_phases phases at once (more only
 * while that many are busy at one moment); for tests of the letting go. */
int devunion_write_within(sqlite3 *db, size_t max_phases, char **err);

#endif
