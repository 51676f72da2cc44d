/*
 * The Chrome trace event format importer (PyTorch/Kineto, autograd profiler,
 * TensorFlow, JAX).  See chrome.c for what is read and how it is repaired.
 */
#ifndef GRADEML_CHROME_H
#define GRADEML_CHROME_H

#include "importers/importer.h"

int chrome_sniff(const unsigned char *buf, size_t len);
int chrome_import(struct input *in, struct store *st, const struct import_opts *o, char **err);

#endif
