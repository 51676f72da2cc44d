/*
 * Phase levels (level.h): one table from phase kind to what the phase is
 * to the analyses.  A span is the one kind whose level depends on where it
 * lies: an OTLP span (on a host's track, or none) is a part of the
 * workflow, a span on a CPU thread (a Chrome trace's Python function) is
 * work.
 */
#include "model/analysis/level.h"
#include "model/store/col.h"
#include "model/store/store.h"

static const unsigned char levels[PHASE_KIND_COUNT] = {
    [PHASE_WORKFLOW] = LEVEL_WORKFLOW, [PHASE_STEP] = LEVEL_PART,
    [PHASE_RANK] = LEVEL_PART,	       [PHASE_APPLICATION] = LEVEL_PART,
    [PHASE_JOB] = LEVEL_PART,	       [PHASE_STAGE] = LEVEL_PART,
    [PHASE_SPAN] = LEVEL_PART,	       [PHASE_PROFILER_STEP] = LEVEL_ITERATION,
    [PHASE_OPERATOR] = LEVEL_WORK,     [PHASE_ANNOTATION] = LEVEL_WORK,
    [PHASE_TASK] = LEVEL_WORK,
};

int level_of(int kind, int on_thread)
{
	if (kind <= PHASE_NONE || kind >= PHASE_KIND_COUNT)
		return LEVEL_NONE;
	if (kind == PHASE_SPAN && on_thread)
		return LEVEL_WORK;
	return levels[kind];
}

int level_of_phase(sqlite3 *db, int64_t id, int *kind)
{
	sqlite3_stmt *q;
	int level = LEVEL_NONE, k = PHASE_NONE;
	if (sqlite3_prepare_v2(
		db, "SELECT p.kind, " LEVEL_ON_THREAD_SQL("p") " FROM phases p WHERE p.id = ?1", -1,
		&q, NULL) != SQLITE_OK)
		return LEVEL_NONE;
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW) {
		k = col_int32(q, 0);
		level = level_of(k, col_int32(q, 1));
	}
	sqlite3_finalize(q);
	if (kind)
		*kind = k;
	return level;
}
