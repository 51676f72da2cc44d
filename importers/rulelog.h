/*
 * The "log" importer: any text log read through a rules file (struct
 * import_opts.rules; see rules.h for the format) into events, metric
 * samples and phases under the step.  It never sniffs: --format log or a
 * rules file chooses it.
 */
#ifndef GRADEML_RULELOG_H
#define GRADEML_RULELOG_H

#include "importers/importer.h"

int rulelog_sniff(const unsigned char *buf, size_t len);
int rulelog_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
