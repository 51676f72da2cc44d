/*
 * What `grademl-tui import` says on stderr.  On a terminal, a progress line
 * redrawn in place a few times a second from the import's counters
 * (importers/tally.h): the file, its bytes read of its size on disk (for
 * compressed input, compressed bytes), the events read, the rate and the
 * time left; erased when the import ends.  Then, on a terminal or not, one
 * line per diagnostic worth a user's attention, and on a terminal one
 * closing line with what the import added.  A pipe thus gets nothing but
 * those diagnostics, so that scripts' output stays clean.
 */
#ifndef GRADEML_PROGRESS_H
#define GRADEML_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "importers/importer.h"

/* Redrawn at most this often. */
#define PROGRESS_PERIOD_NS 250000000

struct progress;
struct sbuf;
struct tally;

/* Appends the progress line for snapshot t of the import of paths[0..n)
 * begun at t0 (CLOCK_MONOTONIC ns), at now, within cols - 1 columns (no
 * "\r", no erase).  While the file's name would get fewer than 16
 * columns, the parts after it are left out in this order: the file's
 * number, the rate, the events, the time left (the bytes and share stay);
 * then the name is cut in the middle (a rank's number ends it) to the room
 * left, and the line cut at the end if it still does not fit. */
void progress_format(struct sbuf *out, const struct tally *t, char *const *paths, size_t n,
		     int64_t t0, int64_t now, int cols, const char *more);

/* The import of paths[0..n) begins: its clock starts, and the line is
 * drawn on fd when fd is a terminal (and the drawing thread starts), a
 * name too long cut in the middle at the mark more. */
struct progress *progress_start(int fd, char *const *paths, size_t n, const char *more);
/* Stops drawing, erases the line, and frees p.  s: the import into db
 * committed; its notable diagnostics go to fd, one line each, sanitised,
 * and on a terminal the closing line (what it added, the time taken). */
void progress_finish(struct progress *p, const char *db, const struct import_summary *s);

#endif
