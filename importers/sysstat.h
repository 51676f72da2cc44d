/*
 * sysstat's `sadf -j` JSON: CPU, memory, disk, network and every other
 * activity sar recorded, as metric series of the host that recorded them.
 */
#ifndef GRADEML_SYSSTAT_H
#define GRADEML_SYSSTAT_H

#include "importers/importer.h"

int sysstat_sniff(const unsigned char *buf, size_t len);
int sysstat_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
