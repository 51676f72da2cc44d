/*
 * Prometheus HTTP API query results (/api/v1/query_range and /api/v1/query:
 * the full {"status", "data"} envelope or a bare "result" array) as metric
 * series keyed by their labels, the `instance` label naming the host.
 */
#ifndef GRADEML_PROMETHEUS_H
#define GRADEML_PROMETHEUS_H

#include "importers/importer.h"

int prometheus_sniff(const unsigned char *buf, size_t len);
int prometheus_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
