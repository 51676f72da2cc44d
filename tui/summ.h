/*
 * The summaries of a phase's subtree as result tables (model/analysis/aggr.h):
 * :kernels, :ops, :api, :annotations and :ranks in the explorer, shown on the query results screen
 * (sort, search, filter, Enter to a row's first instance), and `grademl-tui
 * summary` on the command line, printed as a query result is.
 */
#ifndef GRADEML_SUMM_H
#define GRADEML_SUMM_H

#include <stdint.h>

#include "model/store/store.h"
#include "query/exec.h"

enum summ_kind { SUMM_KERNELS, SUMM_OPS, SUMM_API, SUMM_ANNOTATIONS, SUMM_RANKS, SUMM_NKINDS };

/* "kernels", "ops", "api", "annotations", "ranks" -> the kind; -1 for
 * anything else. */
int summ_parse(const char *name);
const char *summ_name(int kind);
/* What a summary of kernels, ops, api or annotations counts, in words ("all beneath
 * it, no step left out": every phase of its kinds beneath the phase, the
 * last profiler step's included), and as its scope column
 * says it: "subtree" (at the root, the whole trace: the report's GPU
 * streams and top kernels count the same); NULL for SUMM_RANKS, whose
 * figures are the GPU breakdown's, over its own scope. */
const char *summ_scope(int kind);
const char *summ_scope_key(int kind);
/* The summary of root_id's subtree (0: the whole file; SUMM_RANKS: the
 * ranks of the nearest phase, it or one above, that holds ranks) as a
 * result, its first phase column each row's first instance (SUMM_RANKS:
 * the rank); with scoped, all but SUMM_RANKS end with a column "scope",
 * summ_scope_key on every row.  Without rows, *why says why (one line, the
 * caller frees it; else NULL).  0, or -1 (PTREE_LOOP: a parent cycle) with
 * *err. */
int summ_table(struct store *st, int64_t root_id, int kind, int scoped, struct query_result *r,
	       char **why, char **err);

#endif
