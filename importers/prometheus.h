/*
 * Prometheus HTTP API query results (/api/v1/query_range and /api/v1/query:
 * the full {"status", "data"} envelope or a bare "result" array) as metric
 * series keyed by their labels, the `instance` label naming the host.
 * prometheus_read is the same parser for a live pull (importers/promlive.c),
 * which names each series itself.  Both take at most PROM_SERIES_MAX series
 * (a file, or a whole pull), and cut every label to PROM_LABEL_MAX bytes.
 */
#ifndef GRADEML_PROMETHEUS_H
#define GRADEML_PROMETHEUS_H

#include <jansson.h>

#include "importers/importer.h"
#include "importers/msource.h"

#define PROM_SERIES_MAX 10000 /* series a file, a query's answer or a pull stores */
#define PROM_LABEL_MAX	1024  /* bytes of a label's name or value kept */

int prometheus_sniff(const unsigned char *buf, size_t len);
int prometheus_import(struct input *in, struct store *st, const struct import_opts *o, char **err);
/* The host an instance label names: "node1:9100" -> "node1", "[::1]:9090"
 * -> "::1" (a new string). */
char *prometheus_instance_host(const char *instance);
/* labels, every name and value longer than PROM_LABEL_MAX bytes cut to its
 * first bytes (whole characters) and "\xe2\x80\xa6", each cut counted in ms
 * (LONG_STRING): a new reference to labels when nothing is long, else a
 * new object; NULL for NULL. */
json_t *prometheus_cut_labels(struct msource *ms, json_t *labels);

/* How prometheus_read's caller names a series (strings it owns, read at
 * once).  label_resource: the resource is the series' labels but __name__
 * and instance, "k=v,k=v", as for a file (resource is then ignored). */
struct prom_series {
	const char *host, *resource, *name, *unit;
	const char *value_kind; /* NULL: "instant" */
	double capacity;	/* 0: unknown */
	int64_t shift_ns;	/* added to every sample's time */
	int label_resource;
};

struct prom_read_ops {
	/* 1 with *s filled to store the series, 0 to skip it, -1 with *err;
	 * labels is its "metric" object, or NULL */
	int (*series)(void *arg, json_t *labels, struct prom_series *s, char **err);
	/* when set, instead of storing anything: every point of every series;
	 * 0, or -1 with *err */
	int (*point)(void *arg, json_t *labels, int64_t t_ns, double v, char **err);
	void *arg;
};

/* One query's result from in into ms (which the caller began and ends):
 * 0, or -1 with *err ("IN: ..."): not JSON, not an API response, a status
 * other than "success" (the server's error quoted), a resultType other than
 * matrix or vector, more than PROM_SERIES_MAX series in the answer or in
 * ms.  A result without series is no error.  The labels ops see are cut
 * (prometheus_cut_labels). */
int prometheus_read(struct msource *ms, struct input *in, const struct prom_read_ops *ops,
		    char **err);

#endif
