/*
 * The Spark event log importer (JSON lines, Spark 2.x and 3.x, plain or
 * rolling eventlog_v2_* parts): application -> job -> stage -> task.  See
 * spark.c for what is read and how gaps are repaired.
 */
#ifndef GRADEML_SPARK_H
#define GRADEML_SPARK_H

#include "importers/importer.h"

int spark_sniff(const unsigned char *buf, size_t len);
int spark_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
