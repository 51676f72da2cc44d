/*
 * Builds one source's part of the phase tree from spans that arrive in any
 * order: the importer adds records while it streams its input, then
 * nest_finish sorts them by (track, start, longest first), nests them by time
 * containment on each track (a profiler step ends the spans that end before
 * it: they only opened it), links device work to the call that launched it
 * (by correlation id), binds flow endpoints and instants to the slice that
 * encloses them, and writes phases, events and flow edges through the store.
 *
 * Memory is bounded: records fill an arena of `arena_bytes`; a full arena is
 * sorted and spilled to a temporary file, and nest_finish merges the runs
 * (model/ingest/runs.h).  Flow ends are sorted for pairing the same way, in a
 * buffer of a sixteenth of arena_bytes; phase rows wait for their turn in id
 * order in a sixteenth more (model/ingest/idorder.h); the correlation ids of device
 * work take a table of at most half of arena_bytes in memory (half as much
 * again while it doubles), the rest on disk (model/ingest/cmap.h).
 * Host tracks are processed before device tracks, so every launch is known
 * when its kernels arrive.  A flow end pairs with the latest start of the
 * same key at or before it, so a reused flow id links each pair once.
 *
 * Times given to nest_add are relative to the source's time base; the offset
 * passed to nest_finish makes them epoch nanoseconds.
 */
#ifndef GRADEML_NEST_H
#define GRADEML_NEST_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"

enum nest_role {
	NEST_SPAN = 0,	       /* a duration: becomes a phase */
	NEST_DEVICE = 1,       /* a duration on a device track, parented by its launch (corr) */
	NEST_FLOW_OUT = 2,     /* a point: flow start bound to the enclosing span */
	NEST_FLOW_IN = 3,      /* a point: flow end bound to the enclosing span */
	NEST_INSTANT = 4,      /* a point: becomes an event bound to the enclosing span */
	NEST_FLOW_IN_NEXT = 5, /* a point: flow end bound to the next span that starts at
				* or after it on its track (Chrome's default for "f") */
};

enum nest_flags {
	NEST_FLAT = 1,	     /* do not nest by containment: a child of the track node */
	NEST_LAUNCH = 2,     /* a span whose corr identifies device work it launched */
	NEST_BIND_OUT = 4,   /* a span that is itself the start of flow `flow_id` */
	NEST_BIND_IN = 8,    /* a span that is itself the end of flow `flow_id` */
	NEST_ON_DEVICE = 16, /* the record's track is a device stream: set it on every
			      * record of such a track; those tracks are processed last */
};

struct nest_span {
	uint32_t track; /* index into the tracks given to nest_finish */
	uint8_t role, flags, kind;
	int64_t start, dur;	 /* ns; dur of points is ignored */
	int64_t name_id, cat_id; /* cat_id: the span's category (0: none) */
	int64_t corr;		 /* launch correlation id (NEST_LAUNCH, NEST_DEVICE), 0 none */
	int64_t flow_cat;	 /* flows: the category of the flow; key = (flow_cat, flow_id) */
	uint64_t flow_id;
	const char *attrs;
	size_t attrs_len;
};

/* What nest_finish needs of each track, and what it reports back. */
struct nest_track {
	/* in */
	int64_t track_id;  /* tracks.id */
	int64_t node_id;   /* reserved phase id of the track's node */
	int64_t parent_id; /* the process (or rank) node above it */
	int64_t name_id;
	int kind;  /* PHASE_THREAD, PHASE_STREAM, PHASE_GPU_ANNOTATION (a stream's annotations) */
	int depth; /* depth of the track node */
	/* out: the node's window in epoch ns, whether it had any record, and
	 * how many spans (phases other than the node) it holds.  A stream
	 * counts its device work alone (kernel, memcpy, memset): its window,
	 * its spans, and its node's self time (the window less the union of
	 * that work: its idle time) */
	int64_t start, end;
	int used;
	int64_t spans;
};

struct nest_stats {
	int64_t phases, events, edges;
	int64_t overlaps;	/* spans ending after the span that contains them */
	int64_t unlinked;	/* device spans whose launch was not found */
	int64_t unbound_points; /* flow ends outside any span (instants there are kept, unbound) */
	int64_t lone_flows;	/* flow starts or ends without their partner */
	int64_t span_overflow;	/* spans dropped: their time overflowed int64 after the offset */
	int64_t point_overflow; /* flow ends and instants dropped for the same reason */
};

struct nest;

struct nest *nest_new(size_t arena_bytes);
void nest_free(struct nest *n);
/* Copies the span (and its attrs); fails only when the temp file cannot be written. */
int nest_add(struct nest *n, const struct nest_span *s, char **err);
int nest_finish(struct nest *n, struct store *st, int64_t source_id, struct nest_track *tracks,
		size_t ntracks, int64_t offset_ns, struct nest_stats *stats, char **err);

#endif
