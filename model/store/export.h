/*
 * A trace.db written out as Chrome trace JSON (the Trace Event Format),
 * which Perfetto UI and chrome://tracing open and `grademl-tui import`
 * reads back into the same phases: every phase of the file, or of the
 * subtree of one phase.
 *
 * The layout: one process per host and rank (process_name and
 * process_sort_index metadata), and first a "workflow" process for the
 * phases that have no track of their own (the workflows, their steps);
 * each track (a thread, a GPU stream, its annotations, a Spark executor,
 * a host) a thread of its host's process (thread_name), in more than one
 * lane where its phases overlap without nesting, since a viewer nests the
 * complete events of a thread by time.  Phases are complete events ("X",
 * their attrs as args, their category one that the import maps to their
 * kind), edges flow events ("s" and "f" with "bp":"e", the edge's rowid as
 * id; launches in Kineto's category ac2g), instants "i", metric samples
 * counters ("C") of their host's process.  Times are microseconds from
 * baseTimeNanoseconds, with three decimals where they have nanoseconds:
 * exact.  A device call's correlation id becomes the id of the runtime
 * call that launched it (the call's own id), so that the traces of several
 * files stay apart in one.
 *
 * Streamed: phases and edges (by src and by dst) are read in id order by
 * three cursors that advance together, then events, then each series'
 * samples in time order; the text goes out through a buffer, deflated
 * (gzip) when the name ends in ".gz".  Memory does not grow with the file,
 * save for a bit per phase id in a subtree's export and an entry per phase
 * put on a lane past its track's first.  The path is written as
 * model/util/outfile.h says (a regular file built aside and renamed at the
 * end, so that an error, or a signal through outfile_interrupt, leaves it
 * as it was; a device, a FIFO or "-", standard output, written through),
 * never to a terminal.
 */
#ifndef GRADEML_EXPORT_H
#define GRADEML_EXPORT_H

#include <stdint.h>

#include "model/store/store.h"

struct export_stats {
	int64_t phases, flows, instants, samples;
	/* flow ends written at the start of a phase whose children leave it
	 * no moment of its own, where a reader may bind them to a child */
	int64_t unbound;
};

/* Writes the phases of st under root_id (0: every phase) to path.  0, or
 * -1 with *err (one line naming the file); stats may be NULL. */
int export_chrome(struct store *st, int64_t root_id, const char *path, struct export_stats *stats,
		  char **err);

#endif
