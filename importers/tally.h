/*
 * What the running import has read so far, for the import command's
 * progress line (tui/progress.h): the bytes of the file being read (as on
 * disk: compressed bytes for compressed input), the events read in all
 * files, which file and which stage.  Process-wide, as one process runs one
 * import at a time; counting costs a relaxed atomic add, so the importers
 * count whether anyone reads or not, and any thread may take a snapshot.
 * An event is what the format calls one: a trace event, a line of a log, a
 * row of a CSV.
 */
#ifndef GRADEML_TALLY_H
#define GRADEML_TALLY_H

#include <stddef.h>
#include <stdint.h>

enum tally_stage {
	TALLY_READ,   /* reading file tally.file */
	TALLY_PULL,   /* the live Prometheus pull */
	TALLY_COMMIT, /* after the files: checks, indexes, the commit */
};

struct tally {
	uint64_t bytes;	 /* of the current file */
	uint64_t events; /* of every file so far */
	size_t file;	 /* index of the current file among the import's */
	int64_t file_ns; /* when it began: CLOCK_MONOTONIC nanoseconds */
	enum tally_stage stage;
};

/* Counted by input.c as it reads a file, and by the importers. */
void tally_bytes(uint64_t n);
void tally_events(uint64_t n);
/* import.c: file i begins (its bytes count from 0), or another stage. */
void tally_file(size_t i);
void tally_stage(enum tally_stage s);
/* A snapshot, from any thread; its fields may be a moment apart. */
void tally_get(struct tally *t);

#endif
