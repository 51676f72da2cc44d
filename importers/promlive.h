/*
 * A live pull from a Prometheus server (grademl-tui import --prometheus
 * URL): for the workflow's window in trace.db (or --from/--to) and each of
 * its hosts, the node_exporter, DCGM exporter and nvidia_gpu_exporter
 * series that attribution reads, and any --promql queries, into one
 * metric source of the import's transaction.  See promlive.c for the
 * series and their rules.
 */
#ifndef GRADEML_PROMLIVE_H
#define GRADEML_PROMLIVE_H

#include <stddef.h>
#include <stdint.h>

#include "model/store/store.h"

struct import_opts;

/* The environment variable a token may come from (--prometheus-token-file
 * wins). */
#define PROMLIVE_TOKEN_ENV  "GRADEML_PROMETHEUS_TOKEN"
#define PROMLIVE_TIMEOUT_NS ((int64_t)60 * 1000000000) /* each request, by default */

struct promlive_opts {
	const char *url;	/* the server: http[s]://host:port[/prefix] */
	const char *token_file; /* NULL: PROMLIVE_TOKEN_ENV, else no token */
	int64_t from_ns, to_ns; /* both set, or both 0: the workflow's window */
	int64_t step_ns;	/* 0: the scrape interval */
	int64_t timeout_ns;	/* each request; 0: PROMLIVE_TIMEOUT_NS */
	char *const *queries;	/* --promql QUERY, each named by names[i] */
	char *const *names;
	size_t nqueries;
};

/* Pulls into st, inside the caller's transaction; 0, or -1 with *err, one
 * line that names the URL and what failed (nothing of the pull is then
 * kept: the caller rolls back). */
int promlive_pull(struct store *st, const struct import_opts *o, char **err);

/* A --from/--to time: ISO-8601 (UTC unless it names a zone) or seconds
 * since the epoch with up to nine decimals; 0, or -1. */
int promlive_parse_time(const char *s, int64_t *ns);

#endif
