/*
 * The critical path screen (`:path`): each workflow's critical path as the
 * analyses cache it (model/analysis/analyze.h's pathrow: its longest phases, and its
 * waiting time) on the query results screen, with what each phase twice as
 * fast would save.  Nothing is recomputed: the rows come from the cache
 * (or one analysis run when there is none), so keys cost what they cost on
 * any result table.
 */
#ifndef GRADEML_PATHVIEW_H
#define GRADEML_PATHVIEW_H

#include "model/analysis/analyze.h"
#include "query/exec.h"

struct app;

/* The path rows of an as a result: per workflow, its phases longest on the
 * path first, its waiting time a row of its own (kind "wait", the workflow
 * its phase, named "(waiting)") where its length falls among them;
 * columns phase, step (the one the phase lies in), on_path, share% (of
 * the makespan), 2x_saves (the makespan less the what-if makespan were the
 * phase twice as fast; NULL where the analysis asked none: a step, rank,
 * process, thread or stream node), bound_by (what bounds the path then,
 * named as lists show it: a kernel's signature shortened, with more where
 * it left out), kind ("run" or "wait"), workflow, id.
 * 0, or -1 (PTREE_LOOP: a parent cycle) with *err. */
int pathview_table(struct store *st, const struct analysis *an, const char *more,
		   struct query_result *r, char **err);
/* `:path`: the table on the results screen; Enter shows a row's phase. */
void pathview_command(struct app *a, const char *arg);

#endif
