/*
 * Flame graphs: a phase's subtree merged by name path into a calling-context
 * tree.  Phases whose names, from the root down, are the same path become
 * one frame; a name that differs from another only in a trailing "#N"
 * (ProfilerStep#12, ProfilerStep#13) is the same name, so all profiler
 * steps of a thread merge into one frame.  Each frame sums its phases'
 * host time (dur_ns, and self_ns: host time not covered by children) and
 * the device time of the GPU work beneath them, and counts them.  The
 * profiler's bookkeeping (store_is_bookkeeping) and what lies under it
 * make no frame, unless the root is bookkeeping itself.
 *
 * The subtree is read once, streaming through the parent index (one
 * statement per depth), so memory is the frames', not the phases': at most
 * FLAME_MAX_FRAMES frames; phases that would need more are left out and
 * counted.  The flame owns its frames and names until flame_release.
 */
#ifndef GRADEML_FLAME_H
#define GRADEML_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/subtree.h"

struct model;

#define FLAME_MAX_FRAMES (1 << 20)
/* The deepest level below the root a flame reads (a deeper tree is an error). */
#define FLAME_MAX_DEPTH SUBTREE_MAX_DEPTH

enum flame_mode { FLAME_HOST, FLAME_DEVICE };

struct flame_frame {
	const char *name;	/* the merged name: "ProfilerStep#*" when several #N merged */
	int32_t parent;		/* -1 for the root (frame 0) */
	int32_t depth;		/* 0 for the root */
	uint32_t kids, nkids;	/* its children: fl->kids[kids .. kids + nkids) */
	int kind;		/* enum phase_kind of its first phase */
	int64_t first_id;	/* its first phase, in the order read */
	int64_t count;		/* phases merged */
	int64_t host_ns;	/* sum of their durations (device work counts none) */
	int64_t self_ns;	/* sum of their host self times */
	int64_t device_ns;	/* device time of the GPU work in their subtrees */
	int64_t device_self_ns; /* of that, the work they are themselves */
	int64_t kids_host_ns, kids_device_ns; /* its children's totals, summed */
};

struct flame {
	struct flame_frame *f; /* f[0] the root; a parent before its children */
	size_t n;
	uint32_t *kids;		/* children, each frame's sorted widest first */
	int64_t phases;		/* phases merged */
	int64_t left_out;	/* phases not merged: the frame limit was reached */
	enum flame_mode sorted; /* the mode kids are sorted for */
	char **names;		/* the frames' names, owned */
	size_t nnames;
};

/* Merges the subtree of phase root_id; 0, or -1 with *err (no phase
 * root_id is an error too).  Children are sorted for FLAME_HOST. */
int flame_build(struct model *m, int64_t root_id, struct flame *out, char **err);
/* Rows flame_build reads depth first before one pass in id order takes
 * over (model/store/subtree.h). */
#define FLAME_DFS_ROWS SUBTREE_DFS_ROWS
/* flame_build with that limit dfs_rows (SIZE_MAX: never the pass; tests
 * force each way).  Where the file breaks the pass's premise (a child's id
 * below its parent's), the depth-first walk reads the whole subtree. */
int flame_build_walk(struct model *m, int64_t root_id, size_t dfs_rows, struct flame *out,
		     char **err);
void flame_release(struct flame *fl);
/* A frame's total and self time in mode. */
int64_t flame_total(const struct flame_frame *f, enum flame_mode mode);
int64_t flame_self(const struct flame_frame *f, enum flame_mode mode);
/* Sorts every frame's children widest first in mode (ties by name). */
void flame_sort(struct flame *fl, enum flame_mode mode);
/* Frame i's child k (in the sorted order). */
static inline uint32_t flame_kid(const struct flame *fl, uint32_t i, uint32_t k)
{
	return fl->kids[fl->f[i].kids + k];
}
/* Bottom-up: the frames named name (names compare as merged: any #N, or
 * #*), one per path that leads to it, largest total in mode first, into
 * *out (the caller frees it; NULL when none); returns how many. */
size_t flame_named(const struct flame *fl, const char *name, enum flame_mode mode, uint32_t **out);
/* Whether frame i lies below another frame of the same name (recursion:
 * its time is in that one's too). */
int flame_nested(const struct flame *fl, uint32_t i);
/* The frame whose path of names from the root is path[0..n) (path[0] the
 * root's), or -1; names compare as merged ("ProfilerStep#*" or any #N). */
int32_t flame_find(const struct flame *fl, const char *const *path, size_t n);

#endif
