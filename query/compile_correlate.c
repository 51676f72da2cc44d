/*
 * The query compiler's correlation in time (see compile_int.h): a metric
 * named by name (or name@host), checked against the file before the query
 * runs and found per row by gm_metric; the windows of during and within (a
 * path or a phases query, each a materialised CTE) and of between; with's
 * time-weighted mean and max over each phase's window (an event's value at
 * its time), saturated's time at or above a threshold, and within's nearest
 * window, each a column later stages can name.  The SQL functions are
 * funcs.h's.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "query/compile_int.h"

/* ---- metrics ---- */

/* A metric reference "name" or "name@host": registers it for the check
 * before the run; the SQL of its id for a row on host_sql into out. */
int correlate_metric_id(struct cc *c, struct sbuf *out, const struct qnode *n, const char *host_sql,
			int need_capacity, char **display)
{
	if (n->kind != QN_WORD && n->kind != QN_STRING) {
		compile_fail(c, n->pos, n->len, xstrdup("expected a metric name"),
			     xstrdup("e.g. cpu.util or \"gpu0.utilization.gpu\""));
		return -1;
	}
	char *name = xstrdup(n->text), *host = NULL;
	char *at = strrchr(name, '@');
	if (at && at != name && at[1]) {
		*at = '\0';
		host = xstrdup(at + 1);
	}
	struct query_plan *p = c->plan;
	XGROW(p->mrefs, p->nmrefs + 1, p->amrefs);
	struct query_mref *m = &p->mrefs[p->nmrefs++];
	m->name = xstrdup(name);
	m->host = host ? xstrdup(host) : NULL;
	m->pos = n->pos;
	m->len = n->len;
	m->need_capacity = need_capacity;
	if (out) {
		sbuf_adds(out, "gm_metric(");
		compile_bind_text(c, out, name);
		sbuf_adds(out, ", ");
		if (host)
			compile_bind_text(c, out, host);
		else
			compile_bind_null(c, out);
		sbuf_addf(out, ", %s)", host_sql);
	}
	if (display)
		*display = xstrdup(n->text);
	free(name);
	free(host);
	return 0;
}

/* ---- windows ---- */

/* Compiles a window (path or phases sub-query) into a new CTE; returns its
 * number, or -1. */
static int compile_window(struct cc *c, const struct qwindow *w)
{
	struct sbuf body;
	sbuf_init(&body);
	int rc = -1;
	if (w->path) {
		sbuf_adds(&body, "SELECT p.id AS wid, p.start_ns AS w0, p.start_ns + p.dur_ns AS w1"
				 " FROM phases p WHERE ");
		compile_glob(c, &body, "p", w->path->text);
	} else {
		if (w->sub->source != QS_PHASES) {
			compile_fail(c, w->sub->source_pos, 6,
				     xstrdup("a window is a selection of phases"),
				     xstrdup("e.g. during phases kind = step"));
			goto out;
		}
		struct scope sub;
		source_scope_init(&sub, QS_PHASES);
		sub.window_mode = 1;
		int r = compile_select(c, w->sub, &sub, &body);
		source_scope_release(&sub);
		if (r < 0)
			goto out;
	}
	int id = ++c->ncte;
	sbuf_addf(&c->ctes, "%sw%d AS MATERIALIZED (%s)", id > 1 ? ", " : "", id, body.buf);
	rc = id;
out:
	sbuf_release(&body);
	return rc;
}

/* The number of window CTE %d's set (funcs.h's gm_wset): an uncorrelated
 * subquery, which SQLite evaluates once. */
#define WSET_SQL "(SELECT gm_wset(w.wid, w.w0, w.w1) FROM w%d w)"

/* A time literal for between/within: 1 with *sql set (owned). */
static int time_bound(struct cc *c, const struct qnode *n, int relative, char **sql)
{
	struct sbuf sb;
	sbuf_init(&sb);
	if (n->num.kind != QU_TIME && !(n->num.kind == QU_NONE && n->num.is_int)) {
		compile_fail(
		    c, n->pos, n->len, xstrdup("expected a time"),
		    xstrdup("a duration from the trace start (2s, 1.5min) or epoch nanoseconds"));
		sbuf_release(&sb);
		return -1;
	}
	if (relative && n->num.kind == QU_TIME) {
		sbuf_adds(&sb, "(" TSTART_SQL " + ");
		compile_bind_number(c, &sb, &n->num);
		sbuf_addc(&sb, ')');
	} else {
		compile_bind_number(c, &sb, &n->num);
	}
	*sql = sbuf_detach(&sb);
	return 0;
}

/* Restricts s's rows to the window [w0, w1) (SQL expressions, constants
 * here): phases contained, instants inside. */
static void restrict_rows(struct scope *s, const char *w0, const char *w1, struct sbuf *cond)
{
	if (s->src == QS_PHASES)
		sbuf_addf(cond, "p.start_ns >= %s AND p.start_ns + p.dur_ns <= %s", w0, w1);
	else
		sbuf_addf(cond, "%s >= %s AND %s < %s", s->si->t0, w0, s->si->t0, w1);
}

int correlate_during(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src == QS_METRICS && s->windowed) {
		compile_fail(c, st->pos, st->len, xstrdup("metrics take one window"),
			     xstrdup("use a single during or between"));
		return -1;
	}
	int id = compile_window(c, &st->win);
	if (id < 0)
		return -1;
	struct sbuf cond;
	sbuf_init(&cond);
	if (s->src == QS_METRICS) {
		sbuf_addf(&s->from, " JOIN w%d w ON 1", id);
		free(s->w0);
		free(s->w1);
		s->w0 = xstrdup("w.w0");
		s->w1 = xstrdup("w.w1");
		s->windowed = 1;
		s->joined = 1;
		source_add_extra(s, "phase", QC_PHASE, xstrdup("w.wid"));
		source_add_extra(s, "phase.name", QC_TEXT,
				 xstrdup("gm_str((SELECT name_id FROM phases WHERE id = w.wid))"));
	} else {
		/* phases contained in a window, instants inside one: gm_during
		 * (funcs.h) over the windows gm_wset collects once, a binary
		 * search a row where EXISTS scanned them all */
		sbuf_addf(&cond, "gm_during(" WSET_SQL ", %s", id, s->si->t0);
		if (s->src == QS_PHASES)
			sbuf_addf(&cond, ", %s", s->si->t1);
		sbuf_addc(&cond, ')');
		compile_add_where(s, cond.buf);
	}
	sbuf_release(&cond);
	return 0;
}

int correlate_between(struct cc *c, struct scope *s, const struct qstage *st)
{
	char *a = NULL, *b = NULL;
	if (time_bound(c, st->t0, 1, &a) < 0 || time_bound(c, st->t1, 1, &b) < 0) {
		free(a);
		return -1;
	}
	if (s->src == QS_METRICS) {
		if (s->windowed) {
			compile_fail(c, st->pos, st->len, xstrdup("metrics take one window"),
				     xstrdup("use a single during or between"));
			free(a);
			free(b);
			return -1;
		}
		free(s->w0);
		free(s->w1);
		s->w0 = a;
		s->w1 = b;
		s->windowed = 1;
		return 0;
	}
	struct sbuf cond;
	sbuf_init(&cond);
	restrict_rows(s, a, b, &cond);
	compile_add_where(s, cond.buf);
	sbuf_release(&cond);
	free(a);
	free(b);
	return 0;
}

int correlate_within(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src != QS_PHASES && s->src != QS_EVENTS) {
		compile_fail(
		    c, st->pos, st->len,
		    xasprintf("within needs phases or events, not %s", source_words[s->src]), NULL);
		return -1;
	}
	const struct query_number *d = &st->t0->num;
	if (!(d->kind == QU_TIME || (d->kind == QU_NONE && d->is_int)) || d->i < 0) {
		compile_fail(c, st->t0->pos, st->t0->len, xstrdup("expected a distance"),
			     xstrdup("e.g. within 5ms of /demo/train"));
		return -1;
	}
	int id = compile_window(c, &st->win);
	if (id < 0)
		return -1;
	struct sbuf near;
	sbuf_init(&near);
	/* the nearest window by the gap between the row's span and it (0 when
	 * they overlap), the lowest id among equals: gm_near (funcs.h) over the
	 * windows gm_wset collects once */
	sbuf_addf(&near, "gm_near(" WSET_SQL ", %s, %s, ", id, s->si->t0, s->si->t1);
	compile_bind_number(c, &near, d);
	sbuf_adds(&near, s->src == QS_PHASES ? ", p.id)" : ")");
	char *cond = xasprintf("%s IS NOT NULL", near.buf);
	compile_add_where(s, cond);
	free(cond);
	source_add_extra(s, "near", QC_PHASE, sbuf_detach(&near));
	return 0;
}

int correlate_with(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src != QS_PHASES && s->src != QS_EVENTS) {
		compile_fail(c, st->pos, st->len,
			     xasprintf("with needs phases or events, not %s", source_words[s->src]),
			     xstrdup("for metrics, use the fields mean, max and sat"));
		return -1;
	}
	for (size_t i = 0; i < st->nterms; i++) {
		struct sbuf mid;
		char *disp = NULL;
		sbuf_init(&mid);
		if (correlate_metric_id(c, &mid, st->terms[i],
					s->src == QS_PHASES
					    ? PHASE_HOST_SQL
					    : "(SELECT host FROM tracks WHERE id = e.track_id)",
					0, &disp) < 0) {
			sbuf_release(&mid);
			return -1;
		}
		char *name;
		if (s->src == QS_PHASES) {
			name = xasprintf("%s.mean", disp);
			source_add_extra(
			    s, name, QC_MVAL,
			    xasprintf("gm_twmean(%s, p.start_ns, p.start_ns + p.dur_ns)", mid.buf));
			free(name);
			name = xasprintf("%s.max", disp);
			source_add_extra(
			    s, name, QC_MVAL,
			    xasprintf("gm_twmax(%s, p.start_ns, p.start_ns + p.dur_ns)", mid.buf));
		} else {
			name = xasprintf("%s.value", disp);
			source_add_extra(s, name, QC_MVAL,
					 xasprintf("gm_valueat(%s, e.t_ns)", mid.buf));
		}
		free(name);
		/* the unit the values are shown in (query/print.c) */
		name = xasprintf("%s.unit", disp);
		source_add_extra(s, name, QC_TEXT,
				 xasprintf("(SELECT unit FROM metrics WHERE id = %s)", mid.buf));
		free(name);
		free(disp);
		sbuf_release(&mid);
	}
	return 0;
}

int correlate_saturated(struct cc *c, struct scope *s, const struct qstage *st)
{
	if (s->src != QS_PHASES) {
		compile_fail(c, st->pos, st->len,
			     xasprintf("saturated needs phases, not %s", source_words[s->src]),
			     xstrdup("for metrics, use the field sat"));
		return -1;
	}
	struct sbuf sql;
	char *disp = NULL;
	sbuf_init(&sql);
	sbuf_adds(&sql, "gm_satns(");
	if (correlate_metric_id(c, &sql, st->metric, PHASE_HOST_SQL, st->threshold == NULL, &disp) <
	    0) {
		sbuf_release(&sql);
		return -1;
	}
	sbuf_adds(&sql, ", p.start_ns, p.start_ns + p.dur_ns, ");
	if (st->threshold) {
		if (st->threshold->num.kind == QU_TIME) {
			compile_fail(c, st->threshold->pos, st->threshold->len,
				     xstrdup("a threshold is a value of the metric, not a time"),
				     xstrdup("e.g. saturated cpu.util >= 90%"));
			sbuf_release(&sql);
			free(disp);
			return -1;
		}
		compile_bind_number(c, &sql, &st->threshold->num);
	} else {
		sbuf_adds(&sql, "NULL");
	}
	sbuf_addc(&sql, ')');
	char *cond = xasprintf("%s > 0", sql.buf);
	compile_add_where(s, cond);
	free(cond);
	char *name = xasprintf("%s.sat", disp);
	source_add_extra(s, name, QC_DUR, sbuf_detach(&sql));
	free(name);
	free(disp);
	return 0;
}
