/*
 * Host aliases for an import: one machine may be "node7" in a sar file,
 * "node7.cluster.local" in a Prometheus instance and "10.0.0.7" in a Spark
 * log.  Aliases are given as --host-alias ALIAS=NAME or in a hosts file:
 * one host a line, its canonical name then its aliases, separated by
 * blanks, '#' starting a comment.  They go to the store, which writes every
 * alias as its canonical name.
 */
#ifndef GRADEML_HOSTS_H
#define GRADEML_HOSTS_H

#include "model/store/store.h"

/* "ALIAS=NAME"; 0, or -1 with *err. */
int hosts_add_alias(struct store *st, const char *spec, char **err);
/* The hosts file at path; 0, or -1 with *err ("file:line: ..."). */
int hosts_load(struct store *st, const char *path, char **err);

#endif
