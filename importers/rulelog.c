/*
 * Text logs through a rules file (rules.h): each line is tried against
 * every rule in file order and each rule that matches applies, so one line
 * may give several samples.  Events hold the pattern's named groups and the
 * line in attrs and are bound to the phase running: the innermost open
 * one, else the step.  Samples go to one series per metric name (resource
 * "log", value kind "instant").  Phases (kind span, category "log") nest
 * as a stack under the step: a start opens one under the innermost open
 * phase, an end closes the innermost open phase of its name and, counted,
 * those opened inside it.  Phases still open at the end close at the last
 * time seen (counted).
 *
 * Laps are for logs that print a line as each step ends ("step:N/M
 * train_time:Tms"): the lap rule's first lap runs from the log's start
 * (elapsed times: their origin; else the first time seen) and each match
 * closes the running lap, named then, and starts the next.  The running
 * lap is the outermost open phase, so what happens during it (events,
 * phases that start) lies inside it; a lap match closes the phases still
 * open inside it, as an end would.  A lap the log leaves running at its end
 * was no step: it is written as no phase and what it holds moves up to the
 * step (rows rebound in trace.db, once).
 *
 * A match takes its time from its own "time" group, else from the line's
 * time (the time directive's pattern), else from the last time seen; a
 * match before any time is dropped and counted.  With `restarts`, an
 * elapsed time less than the last one read means the clock started again
 * (counted): it and those after it count on from the last time.  The step
 * takes the window of everything the log gave (its declared window, see
 * store_refresh_window), so that a log of events and samples alone has one.
 * Lines no rule matches are counted, not stored.  Memory holds one line and
 * the open phases.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "importers/lines.h"
#include "importers/msource.h"
#include "importers/rulelog.h"
#include "importers/rules.h"
#include "importers/workflow.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

#define MAX_OPEN  1024
#define LINE_KEPT 1000 /* bytes of a line kept in an event's attrs */

#define D_UNMATCHED_LINE "UNMATCHED_LINE"
#define M_UNMATCHED_LINE "lines no rule matches: ignored"
#define D_NO_TIME	 "NO_TIME"
#define M_NO_TIME	 "matches before any time was seen: dropped"
#define D_BAD_TIME	 "BAD_TIME"
#define M_BAD_TIME	 "captured times that do not read in the rules' time format: ignored"
#define D_BAD_VALUE	 "BAD_VALUE"
#define M_BAD_VALUE	 "sample values that are not finite numbers: dropped"
#define D_UNMATCHED_END	 "UNMATCHED_END"
#define M_UNMATCHED_END	 "phase ends with no open phase of that name: skipped"
#define D_UNCLOSED	 "UNCLOSED"
#define M_UNCLOSED	 "phases never ended: closed by an outer end or at the last time seen"
#define D_TOO_DEEP	 "TOO_DEEP"
#define M_TOO_DEEP	 "phase starts beyond 1024 open phases: dropped"
#define D_LONG		 "LONG_LINE"
#define M_LONG		 "lines longer than 1 MB skipped unread"
#define D_RESTART	 "CLOCK_RESTART"
#define M_RESTART                                                                                  \
	"elapsed times less than the last one read (the clock restarted): counted on from it"
#define D_LAP_LEFT "LAP_LEFT_RUNNING"
#define M_LAP_LEFT "a lap still running at the end: no phase, what it held moved to the step"

struct open_phase {
	char *name; /* NULL: the running lap, named when it ends */
	int64_t id, start, children, child_ns, events;
};

struct rl {
	struct store *st;
	const struct import_opts *o;
	const char *path;
	char **err;
	struct rules *rules;
	struct msource ms;
	pcre2_match_data *md;
	int64_t step_id, lineno, last_t, phases, events;
	int any_t;
	int64_t first_t;	    /* the earliest time seen, with any_t */
	int64_t raw_last, raw_base; /* restarts: the last elapsed time read, and
				       what the clock's restarts add to it */
	int any_raw;
	int64_t lap_line; /* the line of the last lap match */
	struct open_phase *open;
	size_t nopen;
	struct sbuf name, attrs, tmp;
};

int rulelog_sniff(const unsigned char *buf, size_t len)
{
	(void)buf;
	(void)len;
	return 0;
}

static void diag(struct rl *p, const char *code, const char *msg, const char *line, size_t n,
		 int dropped)
{
	int i = 0;
	while (i < p->ms.ndiag && strcmp(p->ms.diag[i].code, code))
		i++;
	if (i < p->ms.ndiag) {
		msource_diag(&p->ms, code, msg, NULL, dropped);
		return;
	}
	char *ex = xasprintf("%s:%lld: %.*s", input_base_name(p->path), (long long)p->lineno,
			     (int)(n > 200 ? 200 : n), line);
	msource_diag(&p->ms, code, msg, ex, dropped);
	free(ex);
}

/* Group g of the last match: its text in line, or NULL when it did not
 * take part. */
static const char *grp(struct rl *p, const char *line, int g, size_t *len)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
	if (g <= 0 || (uint32_t)g >= pcre2_get_ovector_count(p->md) || ov[2 * g] == PCRE2_UNSET)
		return NULL;
	*len = ov[2 * g + 1] - ov[2 * g];
	return line + ov[2 * g];
}

/* A captured time in ns (with the clock's restarts and --time-offset); 0
 * or -1. */
static int cap_time(struct rl *p, const char *s, size_t n, const char *line, size_t len, int64_t *t)
{
	int64_t raw, base = p->raw_base;
	if (rules_parse_time(p->rules->time_fmt, s, n, &raw) < 0)
		return -1;
	if (p->rules->restarts && p->any_raw && raw < p->raw_last &&
	    __builtin_add_overflow(base, p->raw_last, &base))
		return -1;
	if (__builtin_add_overflow(raw, base, t) ||
	    (p->o->has_time_offset && __builtin_add_overflow(*t, p->o->time_offset_ns, t)))
		return -1;
	if (base != p->raw_base)
		diag(p, D_RESTART, M_RESTART, line, len, 0);
	p->raw_base = base;
	p->raw_last = raw;
	p->any_raw = 1;
	return 0;
}

/* Pushes an open phase (name NULL: the running lap) starting at t. */
static struct open_phase *push(struct rl *p, char *name, int64_t t)
{
	if (!(p->nopen & (p->nopen - 1)) || !p->nopen)
		p->open = xrealloc(p->open, (p->nopen ? 2 * p->nopen : 1) * sizeof(*p->open));
	struct open_phase *v = &p->open[p->nopen++];
	*v = (struct open_phase){.name = name, .id = store_reserve_phase_id(p->st), .start = t};
	return v;
}

/* A time the log gave: the first starts the lap; the step covers them all. */
static void seen(struct rl *p, int64_t t)
{
	if (!p->any_t && p->rules->has_lap) {
		int elapsed =
		    p->rules->time_fmt == RT_ELAPSED_S || p->rules->time_fmt == RT_ELAPSED_MS;
		/* the first lap runs from the log's start */
		int64_t origin = p->o->has_time_offset ? p->o->time_offset_ns : 0;
		push(p, NULL, elapsed && origin < t ? origin : t);
	}
	if (!p->any_t || t > p->last_t)
		p->last_t = t;
	if (!p->any_t || t < p->first_t)
		p->first_t = t;
	p->any_t = 1;
}

/* The rule's name with each {group} replaced, as valid UTF-8, in p->name. */
static void expand(struct rl *p, const struct rule *r, const char *line)
{
	sbuf_reset(&p->tmp);
	const char *s = r->name;
	while (*s) {
		const char *b = strchr(s, '{'), *e = b ? strchr(b, '}') : NULL;
		if (!e) {
			sbuf_adds(&p->tmp, s);
			break;
		}
		sbuf_add(&p->tmp, s, (size_t)(b - s));
		char *g = xstrndup(b + 1, (size_t)(e - b - 1));
		size_t n;
		int num = pcre2_substring_number_from_name(r->re, (PCRE2_SPTR)g);
		const char *off = grp(p, line, num, &n);
		if (off)
			sbuf_add(&p->tmp, off, n);
		free(g);
		s = e + 1;
	}
	sbuf_reset(&p->name);
	text_utf8_repair(&p->name, p->tmp.buf ? p->tmp.buf : "", p->tmp.len);
}

static int close_top(struct rl *p, int64_t t)
{
	struct open_phase *v = &p->open[--p->nopen];
	int64_t dur = t > v->start ? t - v->start : 0;
	struct phase_row r = {.id = v->id,
			      .parent_id = p->nopen ? p->open[p->nopen - 1].id : p->step_id,
			      .kind = PHASE_SPAN,
			      .source_id = p->ms.source_id,
			      .start_ns = v->start,
			      .dur_ns = dur,
			      .self_ns = dur > v->child_ns ? dur - v->child_ns : 0,
			      .child_count = v->children,
			      .depth = (int)p->nopen + 2};
	r.name_id = store_intern(p->st, v->name, strlen(v->name), p->err);
	free(v->name);
	if (r.name_id < 0)
		return -1;
	r.cat_id = store_intern(p->st, "log", 3, p->err);
	if (r.cat_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
		return -1;
	if (p->nopen) {
		p->open[p->nopen - 1].children++;
		p->open[p->nopen - 1].child_ns += dur;
	}
	p->phases++;
	return 0;
}

/* Closes the phases open inside open[i], counted as never ended, at t. */
static int close_above(struct rl *p, size_t i, int64_t t)
{
	while (p->nopen > i + 1) {
		diag(p, D_UNCLOSED, M_UNCLOSED, p->open[p->nopen - 1].name,
		     strlen(p->open[p->nopen - 1].name), 0);
		if (close_top(p, t) < 0)
			return -1;
	}
	return 0;
}

/* One statement on ?1 = a (and ?2 = b when it has a second parameter); 0
 * or -1 with *err. */
static int run2(struct rl *p, const char *sql, int64_t a, int64_t b)
{
	sqlite3_stmt *s = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(store_db(p->st), sql, -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, a);
		if (sqlite3_bind_parameter_count(s) > 1)
			sqlite3_bind_int64(s, 2, b);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : -1;
	}
	if (rc < 0)
		*p->err = xasprintf("%s: cannot move a lap's rows to the step: %s",
				    store_path(p->st), sqlite3_errmsg(store_db(p->st)));
	sqlite3_finalize(s);
	return rc;
}

/* The running lap (on top) is no phase: its events and phases, written
 * under its id, move to the step, their subtree one level up. */
static int drop_lap(struct rl *p)
{
	struct open_phase *v = &p->open[--p->nopen];
	if (v->events || v->children) {
		char *ex = xasprintf("%s: after line %lld, %lld events and %lld phases",
				     input_base_name(p->path), (long long)p->lap_line,
				     (long long)v->events, (long long)v->children);
		msource_diag(&p->ms, D_LAP_LEFT, M_LAP_LEFT, ex, 0);
		free(ex);
	}
	if (v->events &&
	    run2(p, "UPDATE events SET phase_id = ?2 WHERE phase_id = ?1", v->id, p->step_id) < 0)
		return -1;
	if (v->children && (run2(p,
				 "UPDATE phases SET depth = depth - 1 WHERE id IN (WITH RECURSIVE"
				 " sub(id) AS (SELECT id FROM phases WHERE parent_id = ?1 UNION ALL"
				 " SELECT c.id FROM phases c JOIN sub ON c.parent_id = sub.id)"
				 " SELECT id FROM sub)",
				 v->id, 0) < 0 ||
			    run2(p, "UPDATE phases SET parent_id = ?2 WHERE parent_id = ?1", v->id,
				 p->step_id) < 0))
		return -1;
	return 0;
}

static int add_event(struct rl *p, const struct rule *r, int64_t t, const char *line, size_t n)
{
	uint32_t count, size;
	PCRE2_SPTR table;
	pcre2_pattern_info(r->re, PCRE2_INFO_NAMECOUNT, &count);
	pcre2_pattern_info(r->re, PCRE2_INFO_NAMEENTRYSIZE, &size);
	pcre2_pattern_info(r->re, PCRE2_INFO_NAMETABLE, &table);
	sbuf_reset(&p->attrs);
	sbuf_addc(&p->attrs, '{');
	for (uint32_t i = 0; i < count; i++, table += size) {
		int g = (table[0] << 8) | table[1];
		size_t len;
		const char *off = grp(p, line, g, &len);
		if (!off)
			continue;
		const char *name = (const char *)table + 2;
		sbuf_add_json_string(&p->attrs, name, strlen(name));
		sbuf_addc(&p->attrs, ':');
		sbuf_reset(&p->tmp);
		text_utf8_repair(&p->tmp, off, len);
		sbuf_add_json_string(&p->attrs, p->tmp.buf ? p->tmp.buf : "", p->tmp.len);
		sbuf_addc(&p->attrs, ',');
	}
	sbuf_adds(&p->attrs, "\"line\":");
	sbuf_reset(&p->tmp);
	text_utf8_repair(&p->tmp, line, n > LINE_KEPT ? LINE_KEPT : n);
	sbuf_add_json_string(&p->attrs, p->tmp.buf ? p->tmp.buf : "", p->tmp.len);
	sbuf_addc(&p->attrs, '}');
	int64_t name_id = store_intern(p->st, p->name.buf, p->name.len, p->err);
	struct open_phase *in = p->nopen ? &p->open[p->nopen - 1] : NULL;
	if (name_id < 0 ||
	    store_add_event(p->st, p->ms.source_id, 0, t, name_id, NULL, in ? in->id : p->step_id,
			    p->attrs.buf, p->attrs.len, p->err) < 0)
		return -1;
	if (in)
		in->events++;
	p->events++;
	return 0;
}

static int apply(struct rl *p, const struct rule *r, int64_t t, const char *line, size_t n)
{
	size_t len;
	const char *off;
	expand(p, r, line);
	switch (r->kind) {
	case RULE_EVENT:
		return add_event(p, r, t, line, n);
	case RULE_SAMPLE: {
		off = grp(p, line, r->value_group, &len);
		char buf[64], *end;
		double v = 0;
		if (off && len && len < sizeof(buf)) {
			memcpy(buf, off, len);
			buf[len] = '\0';
			v = strtod(buf, &end);
		}
		/* NaN and infinities too: samples.value is a finite REAL */
		if (!off || !len || len >= sizeof(buf) || end != buf + len || !isfinite(v)) {
			diag(p, D_BAD_VALUE, M_BAD_VALUE, line, n, 1);
			return 0;
		}
		int64_t m =
		    msource_metric(&p->ms, NULL, "log", p->name.buf, r->unit, "instant", 0, p->err);
		return m < 0 ? -1 : msource_sample(&p->ms, m, t, v, p->err);
	}
	case RULE_START:
		if (p->nopen == MAX_OPEN) {
			diag(p, D_TOO_DEEP, M_TOO_DEEP, line, n, 1);
			return 0;
		}
		push(p, sbuf_detach(&p->name), t);
		return 0;
	case RULE_END: {
		size_t i = p->nopen;
		while (i > 0 && (!p->open[i - 1].name || strcmp(p->open[i - 1].name, p->name.buf)))
			i--;
		if (!i) {
			diag(p, D_UNMATCHED_END, M_UNMATCHED_END, line, n, 1);
			return 0;
		}
		if (close_above(p, i - 1, t) < 0)
			return -1;
		return close_top(p, t);
	}
	case RULE_LAP:
		/* the running lap is the outermost open phase (seen() started
		 * the first at the first time) */
		if (close_above(p, 0, t) < 0)
			return -1;
		p->open[0].name = sbuf_detach(&p->name);
		if (close_top(p, t) < 0)
			return -1;
		push(p, NULL, t);
		p->lap_line = p->lineno;
		return 0;
	}
	return 0;
}

static int line(struct rl *p, const char *s, size_t n)
{
	int64_t line_t = 0;
	int has_line_t = 0, matched = 0;
	size_t len;
	const char *off;
	if (p->rules->time_re &&
	    pcre2_match(p->rules->time_re, (PCRE2_SPTR)s, n, 0, 0, p->md, NULL) >= 0 &&
	    (off = grp(p, s, p->rules->time_group, &len))) {
		if (cap_time(p, off, len, s, n, &line_t) == 0) {
			has_line_t = 1;
			seen(p, line_t);
		} else {
			diag(p, D_BAD_TIME, M_BAD_TIME, s, n, 0);
		}
	}
	for (size_t i = 0; i < p->rules->n; i++) {
		const struct rule *r = &p->rules->v[i];
		if (pcre2_match(r->re, (PCRE2_SPTR)s, n, 0, 0, p->md, NULL) < 0)
			continue;
		matched = 1;
		int64_t t = 0;
		int has_t = 0;
		if ((off = grp(p, s, r->time_group, &len))) {
			if (cap_time(p, off, len, s, n, &t) == 0) {
				has_t = 1;
				seen(p, t);
			} else {
				diag(p, D_BAD_TIME, M_BAD_TIME, s, n, 0);
			}
		}
		if (!has_t && has_line_t) {
			t = line_t;
			has_t = 1;
		}
		if (!has_t && p->any_t) {
			t = p->last_t;
			has_t = 1;
		}
		if (!has_t) {
			diag(p, D_NO_TIME, M_NO_TIME, s, n, 1);
			continue;
		}
		if (apply(p, r, t, s, n) < 0)
			return -1;
	}
	if (!matched)
		diag(p, D_UNMATCHED_LINE, M_UNMATCHED_LINE, s, n, 0);
	return 0;
}

int rulelog_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct rl p = {.st = st, .o = o, .path = input_path(in), .err = err};
	struct lines ls;
	int rc = -1, begun = 0;
	lines_init(&ls, in);
	ls.skip_long = 1;
	sbuf_init(&p.name);
	sbuf_init(&p.attrs);
	sbuf_init(&p.tmp);
	if (!o->rules) {
		*err = xasprintf("%s: the log format needs a rules file (--rules FILE)", p.path);
		goto out;
	}
	if (rules_load(o->rules, &p.rules, err) < 0)
		goto out;
	int elapsed = p.rules->time_fmt == RT_ELAPSED_S || p.rules->time_fmt == RT_ELAPSED_MS;
	const char *anchor = o->has_time_offset ? "time-offset" : elapsed ? "relative" : "absolute";
	if (msource_begin(&p.ms, st, in, "log", anchor, o, err) < 0)
		goto out;
	begun = 1;
	p.md = pcre2_match_data_create(64, NULL);
	p.step_id = import_step_node(st, o, o->step ? o->step : input_base_name(p.path), err);
	if (p.step_id < 0)
		goto out;
	char *s;
	size_t n;
	int r;
	while ((r = lines_next(&ls, &s, &n, err)) > 0) {
		p.lineno = ls.lineno;
		if (line(&p, s, n) < 0)
			goto out;
	}
	if (r < 0)
		goto out;
	for (int64_t i = 0; i < ls.skipped_long; i++)
		diag(&p, D_LONG, M_LONG, "", 0, 0);
	/* a running lap is at the bottom, below the phases never ended */
	if (p.nopen && close_above(&p, 0, p.last_t) < 0)
		goto out;
	if (p.nopen && p.open[0].name)
		diag(&p, D_UNCLOSED, M_UNCLOSED, p.open[0].name, strlen(p.open[0].name), 0);
	if (p.nopen && (p.open[0].name ? close_top(&p, p.last_t) : drop_lap(&p)) < 0)
		goto out;
	if (p.any_t && workflow_widen_step(st, p.step_id, p.first_t, p.last_t, err) < 0)
		goto out;
	if (store_refresh_window(st, p.step_id, err) < 0)
		goto out;
	int64_t samples = p.ms.samples, dropped = p.ms.dropped;
	begun = 0;
	if (msource_end(&p.ms, err) < 0 ||
	    store_finish_source(st, p.ms.source_id, p.phases, p.events, samples, dropped, err) < 0)
		goto out;
	rc = 0;
out:
	if (begun)
		msource_release(&p.ms);
	for (size_t i = 0; i < p.nopen; i++)
		free(p.open[i].name);
	free(p.open);
	pcre2_match_data_free(p.md);
	rules_free(p.rules);
	sbuf_release(&p.name);
	sbuf_release(&p.attrs);
	sbuf_release(&p.tmp);
	lines_release(&ls);
	return rc;
}
