/*
 * What a phase is to the analyses, whatever importer made it: the one
 * place that says which phases are parts of the workflow (and so get a
 * Resources line and a bottleneck in the report, an issue of their own,
 * and `:ranks` of the ranks beneath them), which are its iterations, its
 * work, or none of these (a track's container, runtime calls, device
 * work).  A manifest's step, a nested step, an OTLP span, a Spark
 * application, job or stage and a rank are all parts, at any depth: an
 * analysis asks level_of, never a list of kinds.
 */
#ifndef GRADEML_LEVEL_H
#define GRADEML_LEVEL_H

#include <sqlite3.h>
#include <stdint.h>

struct store;

enum phase_level {
	LEVEL_NONE,	 /* a container of tracks, runtime calls, device work */
	LEVEL_WORKFLOW,	 /* the whole run */
	LEVEL_PART,	 /* a part of the workflow, at any depth */
	LEVEL_ITERATION, /* a profiler step */
	LEVEL_WORK,	 /* an operator, annotation, task, a Python function's span */
};

/* The level of a phase of kind (enum phase_kind); on_thread: it lies on a
 * CPU thread's track (a span there is a Python function's, or the
 * profiler's own, not a part of the workflow). */
int level_of(int kind, int on_thread);

/* SQL: 1 when the phase aliased p lies on a thread's track, else 0. */
#define LEVEL_ON_THREAD_SQL(p)                                                                     \
	"coalesce((SELECT t.kind = 'thread' FROM tracks t WHERE t.id = " p ".track_id), 0)"

/* The level of phase id in trace.db (db), LEVEL_NONE when there is none;
 * *kind (when not NULL) its kind, PHASE_NONE when there is none. */
int level_of_phase(sqlite3 *db, int64_t id, int *kind);

#endif
