/*
 * The nvidia-smi CSV importer: `nvidia-smi --query-gpu=timestamp,... --format=csv`
 * (with or without nounits, -l or -lms sampling), one row per GPU per sample,
 * into per-GPU metric series.  See nvsmi.c for the columns it reads and the
 * meaning of what it stores.
 */
#ifndef GRADEML_NVSMI_H
#define GRADEML_NVSMI_H

#include "importers/importer.h"

int nvsmi_sniff(const unsigned char *buf, size_t len);
int nvsmi_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
