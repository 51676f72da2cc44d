/*
 * Unit tests for importers/http.h against a small HTTP server forked on a
 * loopback port (one child per connection): a body read back whole, two
 * requests of a group side by side with bodies past HTTP_AHEAD (the one
 * read second waits paused), the retry on 503 and where it gives up, a
 * Prometheus error's message, a 404's first line, a server too slow for
 * the timeout, a body that trickles or never ends cut off at the
 * deadline, a refused connection, the token header, no compression
 * asked on loopback; and the URL shown
 * without user info, form encoding; the input over an HTTP body
 * (input_open_reader) and prometheus_read naming series on it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "importers/http.h"
#include "importers/input.h"
#include "importers/msource.h"
#include "importers/prometheus.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

#define BIG (3 * HTTP_AHEAD + 12345) /* bytes of /big */

struct srv {
	pid_t pid;
	int port;
	char base[64];
};

static int big_byte(size_t i)
{
	return 'a' + (int)((i * 7 + i / 4096) % 26);
}

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k <= 0)
			return;
		c += k;
		n -= (size_t)k;
	}
}

static void answer(int fd, int status, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, strlen(body));
	send_all(fd, head, (size_t)n);
	send_all(fd, body, strlen(body));
}

/* One connection: nth is its number since the server started. */
static void serve(int fd, int nth)
{
	char req[8192];
	size_t got = 0;
	ssize_t k;
	while (got < sizeof(req) - 1 && (k = read(fd, req + got, sizeof(req) - 1 - got)) > 0) {
		got += (size_t)k;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[got] = '\0';
	char path[256] = "";
	sscanf(req, "%*s %255s", path);
	if (!strcmp(path, "/big")) {
		char head[128];
		int n = snprintf(
		    head, sizeof(head),
		    "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", BIG);
		send_all(fd, head, (size_t)n);
		static char buf[65536];
		for (size_t i = 0; i < BIG;) {
			size_t m = 0;
			for (; m < sizeof(buf) && i < BIG; m++, i++)
				buf[m] = (char)big_byte(i);
			send_all(fd, buf, m);
		}
	} else if (!strcmp(path, "/flaky")) {
		/* connections 0 and 1 fail: the third try passes */
		if (nth < 2)
			answer(
			    fd, 503,
			    "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"x\"}");
		else
			answer(fd, 200, "fine");
	} else if (!strcmp(path, "/e503")) {
		answer(fd, 503,
		       "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"down\"}");
	} else if (!strcmp(path, "/timeout503")) {
		answer(fd, 503,
		       "{\"status\":\"error\",\"errorType\":\"timeout\",\"error\":\"gave up\"}");
	} else if (!strcmp(path, "/e400")) {
		answer(
		    fd, 400,
		    "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}");
	} else if (!strcmp(path, "/e404")) {
		answer(fd, 404, "not here\nsecond line");
	} else if (!strcmp(path, "/trickle") || !strcmp(path, "/flood")) {
		/* a body without end: a byte every 100 ms, or as fast as it
		 * goes; either stops after 5 s (a client without a deadline
		 * then reads to its end) */
		const char head[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
		static char spaces[65536];
		memset(spaces, ' ', sizeof(spaces));
		send_all(fd, head, sizeof(head) - 1);
		struct timespec t0, t, gap = {0, 100000000};
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			if (path[1] == 't') {
				send_all(fd, " ", 1);
				nanosleep(&gap, NULL);
			} else {
				send_all(fd, spaces, sizeof(spaces));
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (t.tv_sec - t0.tv_sec < 5);
	} else if (!strcmp(path, "/slow")) {
		sleep(5);
		answer(fd, 200, "late");
	} else if (!strcmp(path, "/auth")) {
		answer(fd, strstr(req, "\r\nAuthorization: Bearer tok-42\r\n") ? 200 : 401, "auth");
	} else if (!strcmp(path, "/enc")) {
		answer(fd, strcasestr(req, "\r\nAccept-Encoding:") ? 400 : 200, "enc");
	} else if (!strcmp(path, "/prom")) {
		answer(fd, 200,
		       "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
		       "{\"metric\":{\"instance\":\"h1:9100\",\"cpu\":\"3\"},"
		       "\"values\":[[100,\"1\"],[101,\"2\"]]},"
		       "{\"metric\":{\"instance\":\"h2:9100\",\"cpu\":\"4\"},"
		       "\"values\":[[100,\"5\"]]}]}}");
	} else if (!strcmp(path, "/promerr")) {
		answer(fd, 200,
		       "{\"status\":\"error\",\"errorType\":\"execution\",\"error\":\"boom\"}");
	} else {
		answer(fd, 200, "hello");
	}
}

static int srv_setup(void **state)
{
	struct srv *s = xcalloc(1, sizeof(*s));
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 16) < 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &len) < 0)
		return -1;
	s->port = ntohs(a.sin_port);
	snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%d", s->port);
	s->pid = fork();
	if (s->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the test */
		alarm(120);
		signal(SIGCHLD, SIG_IGN); /* no zombies of the connections */
		for (int nth = 0;; nth++) {
			int fd = accept(ls, NULL, NULL);
			if (fd < 0)
				continue;
			if (fork() == 0) {
				close(ls);
				serve(fd, nth);
				close(fd);
				_exit(0);
			}
			close(fd);
		}
	}
	close(ls);
	*state = s;
	return s->pid > 0 ? 0 : -1;
}

static int srv_teardown(void **state)
{
	struct srv *s = *state;
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	free(s);
	return 0;
}

static const struct http_opts quick = {NULL, 2000000000, 2000000000, 3, 10000000};

static char *url(const struct srv *s, const char *path)
{
	return xasprintf("%s%s", s->base, path);
}

/* The whole body of h. */
static size_t read_all(struct http *h, char *out, size_t cap)
{
	size_t got = 0;
	ssize_t k;
	char *err = NULL;
	while ((k = http_read(h, out + got, cap - got, &err)) > 0)
		got += (size_t)k;
	assert_int_equal(k, 0);
	return got;
}

static void body_whole(void **state)
{
	struct srv *s = *state;
	struct http *h;
	char *err = NULL, *u = url(s, "/hello");
	assert_int_equal(http_open(u, "a=b", &quick, &h, &err), 0);
	char buf[64];
	size_t n = read_all(h, buf, sizeof(buf));
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "hello", 5);
	http_close(h);
	free(u);
}

/* Two big bodies in flight: the one read second waited, paused at
 * HTTP_AHEAD, and reads back intact. */
static void group_side_by_side(void **state)
{
	struct srv *s = *state;
	struct http_group *g = http_group_new();
	struct http *h[2];
	char *err = NULL, *u = url(s, "/big");
	for (int i = 0; i < 2; i++)
		assert_int_equal(http_start(g, u, NULL, &quick, &h[i], &err), 0);
	char *buf = xmalloc(BIG + 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(http_wait(h[i], &err), 0);
		assert_int_equal(read_all(h[i], buf, BIG + 1), BIG);
		size_t bad = 0;
		while (bad < BIG && buf[bad] == big_byte(bad))
			bad++;
		assert_int_equal(bad, BIG);
		http_close(h[i]);
	}
	http_group_free(g);
	free(buf);
	free(u);
}

/* fails PATH WANT: http_open fails with err == WANT (the URL's prefix
 * added). */
static void fails(const struct srv *s, const char *path, const struct http_opts *o,
		  const char *want)
{
	struct http *h = NULL;
	char *err = NULL, *u = url(s, path);
	assert_int_equal(http_open(u, NULL, o, &h, &err), -1);
	assert_null(h);
	char *full = xasprintf("%s: %s", u, want);
	assert_string_equal(err, full);
	free(full);
	free(err);
	free(u);
}

static void statuses(void **state)
{
	struct srv *s = *state;
	struct http *h;
	char *err = NULL, *u = url(s, "/flaky");
	assert_int_equal(http_open(u, NULL, &quick, &h, &err), 0);
	http_close(h);
	free(u);
	fails(s, "/e503", &quick, "HTTP 503 (3 tries): unavailable: down");
	struct http_opts once = quick;
	once.tries = 1;
	fails(s, "/e503", &once, "HTTP 503: unavailable: down");
	fails(s, "/timeout503", &quick, "HTTP 503: timeout: gave up"); /* not tried again */
	fails(s, "/e400", &quick, "HTTP 400: bad_data: parse error");
	fails(s, "/e404", &quick, "HTTP 404: not here");
	fails(s, "/auth", &quick, "HTTP 401: auth");
	/* no compression asked of a server on loopback: it would cost more than it saves */
	u = url(s, "/enc");
	assert_int_equal(http_open(u, NULL, &quick, &h, &err), 0);
	http_close(h);
	free(u);
	struct http_opts tok = quick;
	tok.token = "tok-42";
	u = url(s, "/auth");
	assert_int_equal(http_open(u, NULL, &tok, &h, &err), 0);
	http_close(h);
	free(u);
}

static void slow_and_refused(void **state)
{
	struct srv *s = *state;
	struct http_opts short_wait = quick;
	short_wait.timeout_ns = 300000000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	fails(s, "/slow", &short_wait, "timed out: no response within 300 ms");
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 3);
	/* a port nobody listens on: the server's, once it is gone */
	struct http *h = NULL;
	char *err = NULL, *u = xasprintf("http://127.0.0.1:%d/x", s->port);
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	s->pid = fork(); /* srv_teardown's kill finds a process */
	if (s->pid == 0)
		pause();
	assert_int_equal(http_open(u, NULL, &quick, &h, &err), -1);
	char *want = xasprintf("%s: cannot connect:", u);
	assert_true(!strncmp(err, want, strlen(want)));
	free(want);
	free(err);
	free(u);
}

/* A body that trickles a byte every 100 ms, one that floods without end:
 * each read fails once the deadline has passed since the request was
 * first waited for. */
static void deadline(void **state)
{
	struct srv *s = *state;
	struct http_opts half = quick;
	half.timeout_ns = 500000000;
	const char *paths[] = {"/trickle", "/flood"};
	for (int i = 0; i < 2; i++) {
		struct http *h;
		char *err = NULL, *u = url(s, paths[i]), buf[4096];
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_int_equal(http_open(u, NULL, &half, &h, &err), 0);
		ssize_t k;
		while ((k = http_read(h, buf, sizeof(buf), &err)) > 0)
			;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (k != -1)
			fail_msg("%s: read to its end, no deadline", paths[i]);
		char *want = xasprintf("%s: timed out: the answer was not whole within 500 ms", u);
		assert_string_equal(err, want);
		double took = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
		if (took < 0.5 || took > 2.5)
			fail_msg("%s: gave up after %.2f s, the deadline is 0.5 s", paths[i], took);
		free(want);
		free(err);
		http_close(h);
		free(u);
	}
}

static void shown_and_form(void **state)
{
	(void)state;
	char *s = http_shown_url("https://me:secret@prom.example:9090/p?x=@y");
	assert_string_equal(s, "https://prom.example:9090/p?x=@y");
	free(s);
	s = http_shown_url("http://prom:9090/a@b");
	assert_string_equal(s, "http://prom:9090/a@b");
	free(s);
	struct sbuf f;
	sbuf_init(&f);
	http_form_add(&f, "query", "rate(x{a=\"b c\"}[5m]) + 1");
	http_form_add(&f, "match[]", "up");
	assert_string_equal(f.buf, "query=rate%28x%7Ba%3D%22b%20c%22%7D%5B5m%5D%29%20%2B%201"
				   "&match%5B%5D=up");
	sbuf_release(&f);
}

static ssize_t read_http(void *arg, void *buf, size_t n, char **err)
{
	return http_read(arg, buf, n, err);
}

/* A Prometheus answer read over HTTP through input_open_reader into
 * prometheus_read: the caller's names, the shift, a skipped series. */
static int name_series(void *arg, json_t *labels, struct prom_series *s, char **err)
{
	(void)arg;
	(void)err;
	const char *inst = json_string_value(json_object_get(labels, "instance"));
	if (!strcmp(inst, "h2:9100"))
		return 0;
	s->host = "node1";
	s->resource = "cpu3";
	s->name = "cpu3.util";
	s->unit = "%";
	s->value_kind = "mean";
	s->capacity = 100;
	s->shift_ns = -1000000000;
	return 1;
}

static void prometheus_over_http(void **state)
{
	struct srv *s = *state;
	struct store *st;
	char *err = NULL;
	assert_int_equal(store_open(STORE_MEMORY, STORE_WRITE, &st, &err), 0);
	assert_int_equal(store_begin(st, &err), 0);
	struct msource ms;
	struct source_row src = {.path = "live",
				 .format = "prometheus",
				 .anchor = "absolute",
				 .compression = "none",
				 .rank = -1};
	assert_int_equal(msource_begin_row(&ms, st, &src, &err), 0);
	struct prom_read_ops ops = {name_series, NULL, NULL};
	const char *paths[] = {"/prom", "/promerr"};
	for (int i = 0; i < 2; i++) {
		struct http *h;
		struct input *in;
		char *u = url(s, paths[i]);
		assert_int_equal(http_open(u, NULL, &quick, &h, &err), 0);
		assert_int_equal(input_open_reader(u, read_http, h, &in, &err), 0);
		int rc = prometheus_read(&ms, in, &ops, &err);
		if (i == 0) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -1);
			char *want =
			    xasprintf("%s: the query failed: status 'error': execution: boom", u);
			assert_string_equal(err, want);
			free(want);
			free(err);
		}
		input_close(in);
		http_close(h);
		free(u);
	}
	assert_int_equal(msource_end(&ms, &err), 0);
	sqlite3_stmt *q;
	assert_int_equal(
	    sqlite3_prepare_v2(store_db(st),
			       "SELECT m.host || ' ' || m.resource || ' ' || m.name || ' '"
			       " || m.value_kind || ' ' || m.capacity || ' ' ||"
			       " group_concat(s.t_ns || '=' || s.value, ',') FROM metrics m"
			       " JOIN samples s ON s.metric_id = m.id",
			       -1, &q, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0),
			    "node1 cpu3 cpu3.util mean 100.0 99000000000=1.0,100000000000=2.0");
	sqlite3_finalize(q);
	store_close(st);
}

/* input_open_reader over memory: chunks of any size, an error passed on,
 * nothing at all. */
struct mem {
	const char *p;
	size_t n, at, chunk;
	int fail;
};

static ssize_t read_mem(void *arg, void *buf, size_t n, char **err)
{
	struct mem *m = arg;
	if (m->at == m->n && m->fail) {
		*err = xstrdup("mem: the line went down");
		return -1;
	}
	size_t k = m->n - m->at;
	if (k > m->chunk)
		k = m->chunk;
	if (k > n)
		k = n;
	memcpy(buf, m->p + m->at, k);
	m->at += k;
	return (ssize_t)k;
}

static void reader_input(void **state)
{
	(void)state;
	struct mem m = {"abcdefghijklmnopqrstuvwxyz", 26, 0, 3, 0};
	struct input *in;
	char *err = NULL, buf[64];
	assert_int_equal(input_open_reader("mem", read_mem, &m, &in, &err), 0);
	size_t got = 0;
	ssize_t k;
	while ((k = input_read(in, buf + got, sizeof(buf) - got, &err)) > 0)
		got += (size_t)k;
	assert_int_equal(k, 0);
	assert_int_equal(got, 26);
	assert_memory_equal(buf, m.p, 26);
	assert_int_equal(input_file_size(in), 0);
	input_close(in);
	m = (struct mem){"abc", 3, 0, 2, 1};
	assert_int_equal(input_open_reader("mem", read_mem, &m, &in, &err), 0);
	got = 0;
	while ((k = input_read(in, buf + got, sizeof(buf) - got, &err)) > 0)
		got += (size_t)k;
	assert_int_equal(k, -1);
	assert_string_equal(err, "mem: the line went down");
	free(err);
	input_close(in);
	m = (struct mem){"", 0, 0, 1, 0};
	err = NULL;
	assert_int_equal(input_open_reader("http://x/y", read_mem, &m, &in, &err), -1);
	assert_string_equal(err, "http://x/y: empty response");
	free(err);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(body_whole, srv_setup, srv_teardown),
	    cmocka_unit_test_setup_teardown(group_side_by_side, srv_setup, srv_teardown),
	    cmocka_unit_test_setup_teardown(statuses, srv_setup, srv_teardown),
	    cmocka_unit_test_setup_teardown(slow_and_refused, srv_setup, srv_teardown),
	    cmocka_unit_test_setup_teardown(deadline, srv_setup, srv_teardown),
	    cmocka_unit_test_setup_teardown(prometheus_over_http, srv_setup, srv_teardown),
	    cmocka_unit_test(shown_and_form),
	    cmocka_unit_test(reader_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
