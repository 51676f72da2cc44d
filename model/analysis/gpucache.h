/*
 * The GPU breakdowns' cache in trace.db (schema v4, v5, v6), written by `grademl-tui
 * analyze` with the other analyses (model/analysis/analyze.c) and read back while
 * meta 'analysis_of' matches the file.  Tables, times in ns, one
 * (source_id, rank) per struct gpubreak_rank (rank -1: the trace names
 * none):
 *
 *   gpu_breakdown          the rank's counts, temporal breakdown, the union
 *                          of each kernel type (comm_ns, comp_ns, mem_ns,
 *                          other_ns)
 *                          and the communication overlapped by computation
 *   gpu_breakdown_mix      the time during which exactly the types flagged
 *                          1 in (comm, comp, mem, other) ran; all fifteen
 *                          sets
 *   gpu_breakdown_kernels  the top kernels in the rank's order (seq), type
 *                          by HTA's name, the "others" fold with others = 1
 *   gpu_breakdown_streams  per stream (tracks.id), its temporal breakdown
 *                          and idle gaps by category
 *   gpu_breakdown_causes   per stream, and per rank (track_id 0), its idle
 *                          time and gaps by cause (model/analysis/idle.h), one row
 *                          per cause with gaps
 *   gpu_breakdown_copies   per stream with copies, their count, union and
 *                          bytes, all and from or to pageable memory
 *
 * The round trip is exact: gpucache_load gives back, field by field, the
 * struct gpubreak gpucache_save was given.  The source's path and the
 * stream's name are not stored twice: they are read from sources and
 * tracks, which an import never changes for existing rows.  The cache
 * holds the breakdowns with the default options (gpubreak_default_opts).
 */
#ifndef GRADEML_GPUCACHE_H
#define GRADEML_GPUCACHE_H

#include <sqlite3.h>

#include "model/analysis/gpubreak.h"

/* Replaces the cache tables' rows inside the caller's transaction. */
int gpucache_save(sqlite3 *db, const struct gpubreak *g, char **err);
/* Reads the cache into g (the caller releases it with gpubreak_release);
 * -1 with *err set and g empty on a read error or a row it cannot read. */
int gpucache_load(sqlite3 *db, struct gpubreak *g, char **err);

#endif
