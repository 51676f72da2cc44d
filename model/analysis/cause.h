/*
 * The cause where the verdict is.  A phase whose first bottleneck is
 * software (model/analysis/attrib.h: nothing it demands was saturated) and
 * that holds GPUs that idled says why they idled, with the causes the
 * idle-gpu issues give (model/analysis/issues.c, model/analysis/idle.h),
 * so that the tree's Bneck column, the details pane and the report's
 * Resources section name the cause beside the verdict.
 *
 * The figures are the GPU breakdowns' (model/analysis/gpubreak.h), never
 * computed again: per rank, its GPU's node (the parent of its busiest
 * stream's node, the phase its idle-gpu issues point at), its window and
 * its idle time by cause.  A rank counts for the phases at and above its
 * GPU's node when it has an idle-gpu issue (a cause that held it idle at
 * least CAUSE_ISSUE_SHARE of its window).  A phase's cause is the one with
 * the most idle time over the ranks that count for it; its share is that
 * time over the ranks' windows (the share of its GPUs' time they idled for
 * it).  A phase below a GPU's node (a stream, a profiler step on the host
 * thread) gets none: its figures would be the whole window's, not its own.
 *
 * The caller owns a struct cause_map and frees it with cause_map_free.
 */
#ifndef GRADEML_CAUSE_H
#define GRADEML_CAUSE_H

#include <stddef.h>
#include <stdint.h>

#include "model/analysis/attrib.h"
#include "model/analysis/gpubreak.h"
#include "model/store/store.h"

/* A cause is an idle-gpu issue once it holds a GPU idle this share of its
 * window. */
#define CAUSE_ISSUE_SHARE 0.10

struct cause {
	int cause;	   /* enum idle_cause: the one with the most idle time */
	int64_t ns, gaps;  /* its idle time and gaps, over the GPUs */
	int64_t idle_ns;   /* the GPUs' idle time, all causes */
	int64_t window_ns; /* the GPUs' windows, summed */
	int gpus;	   /* the GPUs (ranks) that count */
	int api;	   /* the largest enum devcall_api among them (its device's name) */
	double share;	   /* ns / window_ns */
};

struct cause_map;

/* The phase rank r's idle-gpu issues point at (the parent of its busiest
 * stream's node, else that node); 0 when it has none. */
int64_t cause_gpu_node(sqlite3 *db, const struct gpubreak_rank *r);
/* 1 when cause c of rank r is an idle-gpu issue, else 0. */
int cause_is_issue(const struct gpubreak_rank *r, int c);

/* Maps g's ranks onto st's phase tree.  Returns 0 with *out set, or -1 or
 * PTREE_LOOP (model/store/ptree.h) with *err. */
int cause_map_build(struct store *st, const struct gpubreak *g, struct cause_map **out, char **err);
/* 1 with *out filled when r's first bottleneck is software and GPUs that
 * count for its phase idled, else 0. */
int cause_of(const struct cause_map *m, const struct attrib_row *r, struct cause *out);
void cause_map_free(struct cause_map *m);

/* The cause's name in at most six columns ("comm" for communication). */
const char *cause_short(int cause);
/* The Bneck column's text in at most w columns: "idle:input 96%", else
 * "input 96%", else "input". */
void cause_column(const struct cause *c, int w, char *buf, size_t n);
/* The words the details pane and the report share, which
 * attrib_bound_text puts beside the software share: "its GPU idled for
 * input 96% of its window: 17.1 ms of 17.8 ms, 1 gap"; "its 2 GPUs idled
 * for input 96% of their windows: ..." for more. */
struct sbuf;
void cause_text(const struct cause *c, struct sbuf *out);
/* attrib_bound_text of r with c's words (NULL: none) beside its software
 * share: "software 100% (its GPU idled for input 96% of its window: ...),
 * gpu 0% of its 52.5 ms". */
void cause_bound_text(const struct attrib_row *r, const struct cause *c, struct sbuf *out);

#endif
