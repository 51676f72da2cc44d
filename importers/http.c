/*
 * HTTP through libcurl; see http.h.  The transfers of a group share one
 * multi handle, driven from the caller's thread: http_wait and http_read
 * pump it only while the transfer they serve has nothing for them, and a
 * transfer holding HTTP_AHEAD bytes not yet read is paused, so a body
 * waits in the socket rather than in memory.  The status is known at the
 * blank line that ends the final response's headers.  The deadline is
 * counted here rather than by libcurl, whose clock would run on while a
 * response waits its turn to be read: it starts when the caller first
 * waits for the request (each try anew) and covers the status and the
 * whole body, however the server spaces its bytes.
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "importers/http.h"
#include "model/store/store.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

#define POLL_MS	      100	    /* between looks at store_interrupted */
#define ERR_BODY_MAX  4096	    /* bytes of an error response kept for its message */
#define RETRY_WAIT_NS 10000000000LL /* the longest pause a Retry-After gets */

struct http_group {
	CURLM *multi;
};

struct http {
	struct http_group *g;
	int own_group;
	CURL *easy;
	struct curl_slist *headers;
	char *url, *shown, *form;
	struct http_opts o;
	unsigned char *buf; /* received, not yet read: buf[pos..len) */
	size_t len, pos, cap;
	int headers_done, done, paused, tries;
	CURLcode result;
	long status;
	int64_t retry_after_ns;
	int64_t deadline_ns; /* the caller's wait ends then; 0: not waited for yet */
	char errbuf[CURL_ERROR_SIZE];
};

static int http_global_ready;

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct http *h = arg;
	size_t k = size * n;
	if (h->pos == h->len)
		h->pos = h->len = 0;
	if (h->len - h->pos >= HTTP_AHEAD) {
		h->paused = 1; /* libcurl hands the same bytes again once resumed */
		return CURL_WRITEFUNC_PAUSE;
	}
	if (h->len + k > h->cap) {
		if (h->pos) { /* what was read makes room first */
			memmove(h->buf, h->buf + h->pos, h->len - h->pos);
			h->len -= h->pos;
			h->pos = 0;
		}
		if (h->len + k > h->cap) {
			h->cap = (h->len + k) * 2;
			h->buf = xrealloc(h->buf, h->cap);
		}
	}
	memcpy(h->buf + h->len, p, k);
	h->len += k;
	return k;
}
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct http *h = arg;
	size_t k = size * n;
	if (k >= 5 && !memcmp(p, "HTTP/", 5)) {
		h->headers_done = 0; /* a new response: after a 1xx */
		h->retry_after_ns = 0;
	} else if (k <= 2 && (p[0] == '\r' || p[0] == '\n')) {
		curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &h->status);
		h->headers_done = h->status >= 200;
	} else if (k > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		char *end;
		long s = strtol(p + 12, &end, 10);
		if (end != p + 12 && s > 0)
			h->retry_after_ns = s < 3600 ? s * 1000000000LL : RETRY_WAIT_NS;
	}
	return k;
}

char *http_shown_url(const char *url)
{
	const char *scheme = strstr(url, "://");
	const char *host = scheme ? scheme + 3 : url;
	size_t authority = strcspn(host, "/?#");
	const char *at = memchr(host, '@', authority);
	if (!at)
		return xstrdup(url);
	return xasprintf("%.*s%s", (int)(host - url), url, at + 1);
}

void http_form_add(struct sbuf *form, const char *key, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *parts[2] = {key, value};
	if (form->len)
		sbuf_addc(form, '&');
	for (int i = 0; i < 2; i++) {
		if (i)
			sbuf_addc(form, '=');
		for (const unsigned char *c = (const unsigned char *)parts[i]; *c; c++) {
			if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			    (*c >= '0' && *c <= '9') || strchr("-._~", *c)) {
				sbuf_addc(form, (char)*c);
			} else {
				sbuf_addc(form, '%');
				sbuf_addc(form, hex[*c >> 4]);
				sbuf_addc(form, hex[*c & 15]);
			}
		}
	}
}

/* Whether url's host is this machine's loopback (127.x.x.x, ::1,
 * localhost). */
static int loopback(const char *url)
{
	const char *host = strstr(url, "://");
	host = host ? host + 3 : url;
	if (*host == '[')
		return !strncmp(host, "[::1]", 5);
	size_t n = strcspn(host, ":/?#");
	return !strncmp(host, "127.", 4) || (n == 9 && !strncasecmp(host, "localhost", 9));
}

static void stop_transfer(struct http *h)
{
	if (h->easy) {
		curl_multi_remove_handle(h->g->multi, h->easy);
		curl_easy_cleanup(h->easy);
		h->easy = NULL;
	}
}

static int start_transfer(struct http *h, char **err)
{
	h->len = h->pos = 0;
	h->headers_done = h->done = h->paused = 0;
	h->status = 0;
	h->retry_after_ns = 0;
	h->result = CURLE_OK;
	h->errbuf[0] = '\0';
	h->deadline_ns = 0;
	if (!(h->easy = curl_easy_init())) {
		*err = xasprintf("%s: cannot start libcurl", h->shown);
		return -1;
	}
	CURL *e = h->easy;
	curl_easy_setopt(e, CURLOPT_URL, h->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)h);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "grademl-tui/" GRADEML_VERSION);
	if (!loopback(h->shown)) /* compressing costs more than it saves there */
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	if (h->o.connect_timeout_ns > 0)
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
				 (long)(h->o.connect_timeout_ns / 1000000));
	if (h->form) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, h->form);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(h->form));
	}
	if (curl_multi_add_handle(h->g->multi, e) != CURLM_OK) {
		*err = xasprintf("%s: cannot start libcurl", h->shown);
		return -1;
	}
	return 0;
}

/* What a transfer that ended badly says: "URL: cannot connect: ...". */
static char *transfer_error(const struct http *h)
{
	const char *what = h->result == CURLE_OPERATION_TIMEDOUT     ? "timed out"
			   : h->result == CURLE_COULDNT_CONNECT	     ? "cannot connect"
			   : h->result == CURLE_COULDNT_RESOLVE_HOST ? "cannot resolve the host"
			   : h->result == CURLE_PEER_FAILED_VERIFICATION
			       ? "the server's TLS certificate does not verify"
			       : "the request failed";
	return xasprintf("%s: %s: %s", h->shown, what,
			 h->errbuf[0] ? h->errbuf : curl_easy_strerror(h->result));
}

static char *timed_out(const struct http *h, const char *what)
{
	char d[32];
	return xasprintf("%s: timed out: %s %s", h->shown, what,
			 text_duration(d, sizeof(d), h->o.timeout_ns));
}

/* Whether h's deadline has passed; the first call starts its clock. */
static int past_deadline(struct http *h)
{
	if (h->o.timeout_ns <= 0)
		return 0;
	int64_t t = now_ns();
	if (!h->deadline_ns)
		h->deadline_ns = t + h->o.timeout_ns;
	return t > h->deadline_ns;
}

/* Runs the group's transfers a little: until something arrives, they end,
 * or POLL_MS pass; waits only while h has nothing (its status, when not
 * reading).  0, or -1 with *err on a signal. */
static int pump(struct http *h, int reading, char **err)
{
	int running, queued;
	if (store_interrupted()) {
		*err = xasprintf("%s: interrupted", h->shown);
		return -1;
	}
	curl_multi_perform(h->g->multi, &running);
	CURLMsg *m;
	while ((m = curl_multi_info_read(h->g->multi, &queued)))
		if (m->msg == CURLMSG_DONE) {
			char *p = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
			struct http *x = (struct http *)(void *)p;
			x->done = 1;
			x->result = m->data.result;
		}
	if (!h->done && (reading ? h->pos == h->len : !h->headers_done))
		curl_multi_poll(h->g->multi, NULL, 0, POLL_MS, NULL);
	return 0;
}

ssize_t http_read(struct http *h, void *buf, size_t n, char **err)
{
	while (h->pos == h->len) {
		if (h->paused) {
			h->paused = 0;
			curl_easy_pause(h->easy, CURLPAUSE_CONT);
			continue;
		}
		if (h->done) {
			if (h->result == CURLE_OK)
				return 0;
			*err = transfer_error(h);
			return -1;
		}
		if (past_deadline(h))
			break;
		if (pump(h, 1, err) < 0)
			return -1;
	}
	/* a body that comes fast but never ends is cut off too */
	if (!h->done && past_deadline(h)) {
		*err = timed_out(h, "the answer was not whole within");
		return -1;
	}
	size_t k = h->len - h->pos < n ? h->len - h->pos : n;
	memcpy(buf, h->buf + h->pos, k);
	h->pos += k;
	return (ssize_t)k;
}

/* The message of an error response: a Prometheus error's "errorType:
 * error", else the body's first line, cut; "" when there is none. */
static char *error_body(struct http *h)
{
	char part[ERR_BODY_MAX];
	size_t got = 0;
	ssize_t k;
	char *e = NULL;
	while (got < sizeof(part) - 1 &&
	       (k = http_read(h, part + got, sizeof(part) - 1 - got, &e)) > 0)
		got += (size_t)k;
	free(e);
	part[got] = '\0';
	json_t *j = json_loadb(part, got, 0, NULL);
	const char *type = json_string_value(json_object_get(j, "errorType"));
	const char *msg = json_string_value(json_object_get(j, "error"));
	char *out;
	if (msg) {
		out = xasprintf("%s%s%s", type ? type : "", type ? ": " : "", msg);
	} else {
		size_t line = strcspn(part, "\r\n");
		out = xasprintf("%.*s", (int)(line < 200 ? line : 200), part);
	}
	json_decref(j);
	return out;
}

static void pause_ns(int64_t ns)
{
	struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	while (nanosleep(&t, &t) < 0 && errno == EINTR && !store_interrupted())
		;
}

struct http_group *http_group_new(void)
{
	if (!http_global_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			return NULL;
		http_global_ready = 1;
	}
	struct http_group *g = xcalloc(1, sizeof(*g));
	if (!(g->multi = curl_multi_init())) {
		free(g);
		return NULL;
	}
	return g;
}

void http_group_free(struct http_group *g)
{
	if (!g)
		return;
	curl_multi_cleanup(g->multi);
	free(g);
}

int http_start(struct http_group *g, const char *url, const char *form, const struct http_opts *o,
	       struct http **out, char **err)
{
	struct http *h = xcalloc(1, sizeof(*h));
	h->url = xstrdup(url);
	h->shown = http_shown_url(url);
	h->form = form ? xstrdup(form) : NULL;
	h->o = *o;
	h->o.token = NULL; /* kept in the header only */
	if (!g) {
		g = http_group_new();
		h->own_group = 1;
	}
	h->g = g;
	h->headers = curl_slist_append(NULL, "Expect:"); /* no 100-continue round trip */
	if (o->token) {
		char *auth = xasprintf("Authorization: Bearer %s", o->token);
		h->headers = curl_slist_append(h->headers, auth);
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	if (form)
		h->headers = curl_slist_append(h->headers,
					       "Content-Type: application/x-www-form-urlencoded");
	if (!g || !h->headers) {
		*err = xasprintf("%s: cannot start libcurl", h->shown);
		goto fail;
	}
	if (start_transfer(h, err) < 0)
		goto fail;
	*out = h;
	return 0;
fail:
	http_close(h);
	return -1;
}

int http_wait(struct http *h, char **err)
{
	int tries = h->o.tries > 0 ? h->o.tries : 1;
	int64_t wait = h->o.backoff_ns;
	for (int t = 1;; t++) {
		while (!h->headers_done && !h->done) {
			if (past_deadline(h)) {
				*err = timed_out(h, "no response within");
				return -1;
			}
			if (pump(h, 0, err) < 0)
				return -1;
		}
		if (!h->headers_done) {
			*err = transfer_error(h);
			return -1;
		}
		if (h->status >= 200 && h->status < 300)
			return 0;
		int retry = (h->status >= 500 || h->status == 429) && t < tries;
		char *why = error_body(h);
		/* a query the server gave up on would time out again */
		if (retry && strncmp(why, "timeout:", 8)) {
			free(why);
			stop_transfer(h);
			int64_t ra = h->retry_after_ns;
			pause_ns(ra > wait ? (ra < RETRY_WAIT_NS ? ra : RETRY_WAIT_NS) : wait);
			wait *= 2;
			if (start_transfer(h, err) < 0)
				return -1;
			continue;
		}
		char tried[32] = "";
		if (t > 1)
			snprintf(tried, sizeof(tried), " (%d tries)", t);
		*err = xasprintf("%s: HTTP %ld%s%s%s", h->shown, h->status, tried, *why ? ": " : "",
				 why);
		free(why);
		return -1;
	}
}

int http_open(const char *url, const char *form, const struct http_opts *o, struct http **out,
	      char **err)
{
	if (http_start(NULL, url, form, o, out, err) < 0)
		return -1;
	if (http_wait(*out, err) == 0)
		return 0;
	http_close(*out);
	*out = NULL;
	return -1;
}

const char *http_url(const struct http *h)
{
	return h->shown;
}

void http_close(struct http *h)
{
	if (!h)
		return;
	if (h->g)
		stop_transfer(h);
	if (h->own_group)
		http_group_free(h->g);
	curl_slist_free_all(h->headers);
	free(h->buf);
	free(h->url);
	free(h->shown);
	free(h->form);
	free(h);
}
