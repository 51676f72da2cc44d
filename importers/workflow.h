/*
 * The workflow manifest importer (format "workflow"): a JSON-lines file a
 * script writes about its own steps, one object a line,
 *
 *   {"step": NAME, "start": T, "end": T, "host": H, "parent": STEP,
 *    "depends_on": [STEP, ...]}
 *
 * ("start_ns"/"end_ns" for "start"/"end"; host, parent and depends_on are
 * optional; T is integer ns since the epoch, an ISO-8601 UTC string, or
 * epoch seconds with a fraction, as time.time() gives them).  It
 * creates the workflow (--workflow) and its steps, which later imports find
 * with --step.  See workflow.c for the rules.  Also the helpers the OTLP
 * importer shares: times, and marking a step with the window its own record
 * declares, which store_refresh_window keeps.
 */
#ifndef GRADEML_WORKFLOW_H
#define GRADEML_WORKFLOW_H

#include <jansson.h>

#include "importers/importer.h"

int workflow_sniff(const unsigned char *buf, size_t len);
int workflow_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

/* A time as ns since the epoch from a JSON integer, a string of digits or
 * an ISO-8601 string ("2026-11-22T12:28:19.155Z", "...+01:00"; UTC when no
 * zone is given), in *ns; 0, or -1 when absent, not a time or out of range
 * (a result at or before the epoch included). */
int workflow_time(json_t *v, int64_t *ns);

/* Merges the JSON object text attrs (or nothing when NULL) into the attrs
 * of phase id, with {"manifest":{"start":start,"end":end}} when end >=
 * start (a window end < start is left out). */
int workflow_mark_step(struct store *st, int64_t id, const char *attrs, int64_t start, int64_t end,
		       char **err);

/* Widens the declared window of step id to cover [start, end] (it keeps
 * any wider one it declares): a step keeps the window of what its importer
 * read that is no phase beneath it (a log's events and samples).  A phase
 * that is no structural node (an OTLP span given as --step) keeps its own
 * recorded window. */
int workflow_widen_step(struct store *st, int64_t id, int64_t start, int64_t end, char **err);

struct strmap;
/* The track of kind "host" of host in source_id, made on first use and
 * kept in tracks (host -> track id); -1 with *err. */
int64_t workflow_host_track(struct store *st, int64_t source_id, struct strmap *tracks,
			    const char *host, char **err);
/* Puts step_id on track_id unless it is on a track already. */
int workflow_step_track(struct store *st, int64_t step_id, int64_t track_id, char **err);

#endif
