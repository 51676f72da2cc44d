/*
 * HTTP requests for the live pulls (importers/promlive.c), through libcurl:
 * TLS with the system's CAs, a bearer token, timeouts, a bounded retry on
 * 5xx and 429, and the response body handed out as it arrives (http_read),
 * so that memory stays bounded whatever its length.  Requests of one group
 * run side by side: while the caller reads one, the server works on the
 * next, whose body waits (up to HTTP_AHEAD bytes, then in the socket).
 * Every failure is one line that starts with the URL shown (the request's,
 * without user info) and says what failed.  The caller closes each struct
 * http it starts, then frees the group.
 */
#ifndef GRADEML_HTTP_H
#define GRADEML_HTTP_H

#include <stdint.h>
#include <sys/types.h>

#include "model/util/sbuf.h"

#define HTTP_AHEAD (1 << 20) /* bytes of a response received before it is read */

struct http_opts {
	const char *token;	    /* bearer token, or NULL: no Authorization header */
	int64_t connect_timeout_ns; /* 0: libcurl's (300 s) */
	int64_t timeout_ns; /* a deadline for each try, from the first http_wait to the body's
			       end, however slowly it comes; 0: none */
	int tries;	    /* on 5xx and 429, including the first; 0 means 1 */
	int64_t backoff_ns; /* the pause before the second try; doubles after */
};

struct http;
struct http_group;

struct http_group *http_group_new(void);
void http_group_free(struct http_group *g);

/* Sends a request to url (a POST of the form body when form is not NULL,
 * else a GET) in group g and returns at once with *out; -1 with *err when
 * it cannot start.  o and the strings are copied. */
int http_start(struct http_group *g, const char *url, const char *form, const struct http_opts *o,
	       struct http **out, char **err);
/* Waits for the status of h's response.  2xx: 0, and http_read gives the
 * body.  Anything else once the tries are spent (a status, a connection
 * that failed, a timeout): -1 with *err, "URL: HTTP 400: ..." with the
 * server's error when its body gives one (a Prometheus error's errorType
 * and error, else the body's first line). */
int http_wait(struct http *h, char **err);
/* http_start in a group of its own, then http_wait; h closed on failure. */
int http_open(const char *url, const char *form, const struct http_opts *o, struct http **out,
	      char **err);
/* Up to n bytes of the body: the count, 0 at its end, -1 with *err (the
 * deadline passed before the body's end, a lost connection midway, a
 * signal: store_interrupted). */
ssize_t http_read(struct http *h, void *buf, size_t n, char **err);
/* The URL as messages show it. */
const char *http_url(const struct http *h);
void http_close(struct http *h);

/* url without "user:password@" (a copy). */
char *http_shown_url(const char *url);
/* Appends "&key=value" (no '&' first) to a form body, both percent-encoded. */
void http_form_add(struct sbuf *form, const char *key, const char *value);

#endif
