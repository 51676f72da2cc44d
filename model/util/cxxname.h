/*
 * How a name reads in a list: one shortening of C++ signatures for every
 * view (the tree, :kernels, :ops, :api, the flame graph, :callers, query
 * tables, the report's text), as nsys and Perfetto show a kernel by its
 * function's name, not its signature.
 *
 * A C++ signature ("void at::native::f<4, at::native::Op<float> >(int,
 * float*)") reads as its namespace-qualified function name with the
 * return type and the parameters left out and each long template argument
 * list folded to its first word: "at::native::f<Op…>" (the word is the
 * first argument that is a name, its namespaces dropped; a short list of
 * plain words stays whole: "f<float, float, false>").  A name that is not
 * a C++ signature ("aten::mm", "ProfilerStep#3", "jit(train_step)",
 * "ncclKernel_X(ncclDevComm*, ...)" with no namespace, template or return
 * type, "Memcpy HtoD (Pinned -> Device)") stays as it is, trailing blanks
 * cut.  Three levels, each keeping more: 0 the short form above, 1 every
 * template argument whole but compact (namespaces and parameter lists
 * dropped), 2 the name as it is.  cxxname_distinct raises the level of
 * names that would read the same until they part, so two rows never read
 * the same unless their names are the same.
 *
 * Pure text work, no terminal: the output is raw, callers sanitise it.
 * Time is linear in the name's length whatever its brackets.
 */
#ifndef GRADEML_CXXNAME_H
#define GRADEML_CXXNAME_H

#include <stddef.h>

#include "model/util/sbuf.h"

#define CXXNAME_LEVELS 3 /* 0 shortest .. 2 the name whole */

/* Appends name as level (0..2) shows it; more marks what was folded. */
void cxxname_short(struct sbuf *out, const char *name, int level, const char *more);
/* Each of names[0..n) at the lowest level at which it reads unlike every
 * different name among them (equal names read the same), as a new string
 * in the returned array (free each and the array).  NULL names read "". */
char **cxxname_distinct(const char *const *names, size_t n, const char *more);
/* Appends a phase path ("/w/step/thread/aten::mm/void k<...>(...)") with
 * each part at level 0; a '/' inside brackets is no separator. */
void cxxname_path(struct sbuf *out, const char *path, const char *more);

#endif
