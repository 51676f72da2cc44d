/*
 * The MLPerf logging importer (`:::MLLOG {json}` lines, as written by
 * mlperf_logging): run, init, block, epoch and eval intervals become phases
 * nested run > block > epoch > eval (init under run), every other key an
 * event.  See mlperf.c for how unmatched intervals are repaired.
 */
#ifndef GRADEML_MLPERF_H
#define GRADEML_MLPERF_H

#include "importers/importer.h"

int mlperf_sniff(const unsigned char *buf, size_t len);
int mlperf_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
