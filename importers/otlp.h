/*
 * The OTLP/JSON trace importer (format "otlp"): an ExportTraceServiceRequest
 * ({"resourceSpans": [...]}) as written by the OpenTelemetry collector's
 * file exporter or an SDK's JSON exporter, or several of them one a line.
 * Root spans become steps, their descendants span phases beneath them.  See
 * otlp.c for the rules; metrics and logs exports are refused.
 */
#ifndef GRADEML_OTLP_H
#define GRADEML_OTLP_H

#include "importers/importer.h"

/* The most decompressed bytes read: the export is parsed whole. */
#define OTLP_MAX_BYTES ((size_t)64 << 20)

int otlp_sniff(const unsigned char *buf, size_t len);
int otlp_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
