/*
 * The headless mode; see headless.h.  With stats, it prints how long the
 * first screen took (open + draw), the latency of every key (dispatch +
 * redraw) as percentiles, and how long the slowest timeline took to read:
 * the figures `make bench` reports.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "model/util/text.h"
#include "tui/app.h"
#include "tui/format.h"
#include "tui/headless.h"
#include "model/util/xalloc.h"

#define SCRIPT_MAX (16 << 20)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

struct run {
	struct app app;
	struct grid grid;
	FILE *out;
	double *lat;
	size_t nlat, alloc;
	int stats;
	size_t nready;	  /* timeline reads waited for */
	double ready_max; /* the longest, from its key on */
};

/* A key's latency is its dispatch and redraw.  A script's screens must not
 * depend on timing, so the timeline's phases, read in the background
 * (tui/timeline.c), are then waited for; how long the slowest took from
 * its key on is a figure of its own, counted whether the read ended before
 * the key's draw (which then took it) or after. */
static void press(struct run *r, int key)
{
	double t = now_ms();
	app_key(&r->app, key);
	int reading = r->app.tl.job != NULL; /* the draw may take it, if done */
	app_draw(&r->app, &r->grid);
	double k = now_ms() - t;
	if (r->stats) {
		XGROW(r->lat, r->nlat + 1, r->alloc);
		r->lat[r->nlat++] = k;
	}
	if (reading) {
		timeline_wait(&r->app);
		app_draw(&r->app, &r->grid);
		double ready = now_ms() - t;
		r->nready++;
		if (ready > r->ready_max)
			r->ready_max = ready;
	}
}

static void dump(struct run *r)
{
	grid_dump(&r->grid, r->out);
}

/* Runs one script line; -1 with *err on a bad line. */
static int script_line(struct run *r, char *s, const char *path, int lineno, char **err)
{
	while (isspace((unsigned char)*s))
		s++;
	s[strcspn(s, "\r\n")] = '\0';
	if (!*s || *s == '#')
		return 0;
	if (!strncmp(s, "type ", 5)) {
		const unsigned char *p = (const unsigned char *)s + 5;
		size_t n = strlen((const char *)p);
		while (n) {
			size_t k = *p < 0x80 ? 1 : text_utf8_seq(p, n);
			if (!k) {
				*err = xasprintf("%s:%d: invalid UTF-8 after 'type'", path, lineno);
				return -1;
			}
			press(r, (int)format_decode(p, k));
			p += k;
			n -= k;
		}
		return 0;
	}
	if (!strcmp(s, "dump")) {
		dump(r);
		return 0;
	}
	int w, h;
	if (sscanf(s, "click %d %d", &w, &h) == 2) {
		app_click(&r->app, w, h);
		app_draw(&r->app, &r->grid);
		return 0;
	}
	if (sscanf(s, "resize %dx%d", &w, &h) == 2) {
		if (w < 1 || h < 1 || w > 1000 || h > 1000) {
			*err = xasprintf("%s:%d: size out of range", path, lineno);
			return -1;
		}
		grid_resize(&r->grid, w, h);
		press(r, K_RESIZE);
		return 0;
	}
	for (char *tok = strtok_r(s, " \t", &s); tok; tok = strtok_r(NULL, " \t", &s)) {
		int key = keys_parse(tok);
		if (key < 0) {
			*err = xasprintf("%s:%d: unknown key '%s'", path, lineno, tok);
			return -1;
		}
		press(r, key);
		if (r->app.quit)
			return 1;
	}
	return 0;
}

static void print_stats(struct run *r, double open_ms)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "headless: first screen %.1f ms\n", open_ms);
	if (r->nlat) {
		qsort(r->lat, r->nlat, sizeof(*r->lat), cmp_double);
		size_t p50 = (r->nlat - 1) / 2, p99 = (size_t)((double)(r->nlat - 1) * 0.99);
		fprintf(stderr, "headless: %zu keys, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
			r->nlat, r->lat[p50], r->lat[p99], r->lat[r->nlat - 1]);
	}
	if (r->nready)
		fprintf(stderr, "headless: %zu timelines read, slowest %.1f ms\n", r->nready,
			r->ready_max);
	fprintf(stderr, "headless: peak RSS %ld KiB\n", ru.ru_maxrss);
}

int headless_run(const struct headless_opts *o, char **err)
{
	struct run r;
	struct model *m = NULL;
	FILE *in = NULL;
	int rc = -1, lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	memset(&r, 0, sizeof(r));
	r.stats = o->stats;
	double t0 = now_ms();
	if (model_open(o->db, &m, err) < 0)
		return -1;
	/* no history: a script's screens must not depend on the user's past */
	if (app_init(&r.app, m, o->ascii, NULL, err) < 0) {
		model_free(m);
		return -1;
	}
	r.app.rv.max_memory = o->max_memory;
	r.app.rv.timeout_ns = o->timeout_ns;
	grid_init(&r.grid, o->w, o->h, o->ascii);
	app_draw(&r.app, &r.grid);
	double open_ms = now_ms() - t0;
	if (r.app.fatal)
		goto broken;
	r.out = !strcmp(o->dump, "-") ? stdout : fopen(o->dump, "w");
	if (!r.out) {
		*err = xasprintf("cannot write '%s'", o->dump);
		goto out;
	}
	if (o->keys) {
		in = !strcmp(o->keys, "-") ? stdin : fopen(o->keys, "r");
		if (!in) {
			*err = xasprintf("cannot read key script '%s'", o->keys);
			goto out;
		}
		ssize_t n;
		size_t total = 0;
		while ((n = getline(&line, &cap, in)) >= 0) {
			lineno++;
			total += (size_t)n;
			if (total > SCRIPT_MAX || memchr(line, '\0', (size_t)n)) {
				*err = xasprintf("%s:%d: not a key script", o->keys, lineno);
				goto out;
			}
			int s = script_line(&r, line, o->keys, lineno, err);
			if (s < 0)
				goto out;
			if (r.app.fatal)
				goto broken;
			if (s > 0)
				break;
		}
	}
	dump(&r);
	if (o->stats)
		print_stats(&r, open_ms);
	rc = 0;
	goto out;
broken: /* the file's phase tree is broken: its one line, no screen */
	*err = r.app.fatal;
	r.app.fatal = NULL;
out:
	free(line);
	if (in && in != stdin)
		fclose(in);
	if (r.out && r.out != stdout && fclose(r.out) != 0 && rc == 0) {
		*err = xasprintf("cannot write '%s'", o->dump);
		rc = -1;
	}
	free(r.lat);
	grid_release(&r.grid);
	app_release(&r.app);
	model_free(m);
	return rc;
}
