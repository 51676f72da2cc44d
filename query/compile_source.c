/*
 * The query compiler's sources (see compile_int.h): phases, events,
 * metrics and samples, each with its fields as fixed SQL (a row's track,
 * host, path, a metric's statistics over the scope's window), its FROM
 * clause, its time span and its default columns; the scope a query builds
 * over a source, and the names looked up in it (fields, the columns stages
 * add), with a hint for a name that is none of them.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "query/compile_int.h"

/* A column of the track of the row aliased a (tracks' primary key serves it). */
#define TRACK_SQL(col, a) "(SELECT " col " FROM tracks WHERE id = " a ".track_id)"

/* A source's file name, with its rank when it has one: "rank0.json (rank 0)".
 * The base name is what follows the last '/' (SQLite has no basename). */
#define SOURCE_NAME_SQL(a)                                                                         \
	"(SELECT replace(path, rtrim(path, replace(path, '/', '')), '')"                           \
	" || coalesce(' (rank ' || rank || ')', '') FROM sources WHERE id = " a ".source_id)"

/* A row's file: its id (`by source` shows its name) and its name. */
#define SOURCE_FIELDS(X, a)                                                                        \
	X("source", QC_INT, a ".source_id", NULL, NULL, NULL)                                      \
	X("source.name", QC_TEXT, SOURCE_NAME_SQL(a), NULL, NULL, NULL)

/* The name of a phase's step (gm_step): interned, so that `by step`
 * groups on an integer and `step ~ re` runs once per distinct name. */
#define STEP_ID_SQL	 "gm_step(p.id, p.parent_id, p.kind)"
#define STEP_NAME_ID_SQL "(SELECT name_id FROM phases WHERE id = " STEP_ID_SQL ")"

#define F_STRUCT(n, t, s, ic, it, ix) {n, t, s, ic, it, ix},
#define F_NAME(n, t, s, ic, it, ix)   n,

#define PHASE_FIELDS(X)                                                                            \
	X("id", QC_PHASE, "p.id", NULL, NULL, NULL)                                                \
	X("parent", QC_PHASE, "p.parent_id", NULL, NULL, NULL)                                     \
	X("kind", QC_TEXT, "gm_kind(p.kind)", "p.kind", "phase_kinds", "name")                     \
	X("name", QC_TEXT, "gm_str(p.name_id)", "p.name_id", "strings", "text")                    \
	X("category", QC_TEXT, "gm_str(p.cat_id)", "p.cat_id", "strings", "text")                  \
	X("path", QC_TEXT, "gm_path(p.id)", NULL, NULL, NULL)                                      \
	X("host", QC_TEXT, PHASE_HOST_SQL, NULL, NULL, NULL)                                       \
	X("track", QC_INT, "p.track_id", NULL, NULL, NULL)                                         \
	X("track.name", QC_TEXT, TRACK_SQL("name", "p"), NULL, NULL, NULL)                         \
	X("rank", QC_INT, TRACK_SQL("rank", "p"), NULL, NULL, NULL)                                \
	SOURCE_FIELDS(X, "p")                                                                      \
	X("step", QC_TEXT, "gm_str(" STEP_NAME_ID_SQL ")", STEP_NAME_ID_SQL, "strings", "text")    \
	X("step.id", QC_PHASE, STEP_ID_SQL, NULL, NULL, NULL)                                      \
	X("start", QC_TIME, "p.start_ns", NULL, NULL, NULL)                                        \
	X("end", QC_TIME, "(p.start_ns + p.dur_ns)", NULL, NULL, NULL)                             \
	X("dur", QC_DUR, "p.dur_ns", NULL, NULL, NULL)                                             \
	X("self", QC_DUR, "p.self_ns", NULL, NULL, NULL)                                           \
	X("device", QC_DUR, "p.device_ns", NULL, NULL, NULL)                                       \
	X("children", QC_INT, "p.child_count", NULL, NULL, NULL)                                   \
	X("depth", QC_INT, "p.depth", NULL, NULL, NULL)

#define EVENT_FIELDS(X)                                                                            \
	X("id", QC_INT, "e.id", NULL, NULL, NULL)                                                  \
	X("t", QC_TIME, "e.t_ns", NULL, NULL, NULL)                                                \
	X("name", QC_TEXT, "gm_str(e.name_id)", "e.name_id", "strings", "text")                    \
	X("level", QC_TEXT, "e.level", NULL, NULL, NULL)                                           \
	X("host", QC_TEXT, "(SELECT host FROM tracks WHERE id = e.track_id)", NULL, NULL, NULL)    \
	X("track", QC_INT, "e.track_id", NULL, NULL, NULL)                                         \
	X("track.name", QC_TEXT, TRACK_SQL("name", "e"), NULL, NULL, NULL)                         \
	X("rank", QC_INT, TRACK_SQL("rank", "e"), NULL, NULL, NULL)                                \
	SOURCE_FIELDS(X, "e")                                                                      \
	X("phase", QC_PHASE, RUNNING_SQL, NULL, NULL, NULL)                                        \
	X("phase.name", QC_TEXT,                                                                   \
	  "gm_str((SELECT name_id FROM phases WHERE id = " RUNNING_SQL "))", NULL, NULL, NULL)     \
	X("phase.path", QC_TEXT, "gm_path(" RUNNING_SQL ")", NULL, NULL, NULL)

#define METRIC_FIELDS(X)                                                                           \
	X("id", QC_INT, "m.id", NULL, NULL, NULL)                                                  \
	X("host", QC_TEXT, "m.host", NULL, NULL, NULL)                                             \
	X("resource", QC_TEXT, "m.resource", NULL, NULL, NULL)                                     \
	X("name", QC_TEXT, "m.name", NULL, NULL, NULL)                                             \
	X("unit", QC_TEXT, "m.unit", NULL, NULL, NULL)                                             \
	X("kind", QC_TEXT, "m.value_kind", NULL, NULL, NULL)                                       \
	X("capacity", QC_REAL, "m.capacity", NULL, NULL, NULL)                                     \
	X("samples", QC_INT, "(SELECT count(*) FROM samples WHERE metric_id = m.id)", NULL, NULL,  \
	  NULL)                                                                                    \
	X("first", QC_TIME, "(SELECT min(t_ns) FROM samples WHERE metric_id = m.id)", NULL, NULL,  \
	  NULL)                                                                                    \
	X("last", QC_TIME, "(SELECT max(t_ns) FROM samples WHERE metric_id = m.id)", NULL, NULL,   \
	  NULL)                                                                                    \
	X("mean", QC_MVAL, "gm_twmean(m.id, $W0, $W1)", NULL, NULL, NULL)                          \
	X("max", QC_MVAL, "gm_twmax(m.id, $W0, $W1)", NULL, NULL, NULL)                            \
	X("sat", QC_DUR, "CASE WHEN m.capacity > 0 THEN gm_satns(m.id, $W0, $W1, NULL) END", NULL, \
	  NULL, NULL)

#define SAMPLE_FIELDS(X)                                                                           \
	X("metric", QC_TEXT, "m.name", NULL, NULL, NULL)                                           \
	X("metric_id", QC_INT, "s.metric_id", NULL, NULL, NULL)                                    \
	X("host", QC_TEXT, "m.host", NULL, NULL, NULL)                                             \
	X("resource", QC_TEXT, "m.resource", NULL, NULL, NULL)                                     \
	X("unit", QC_TEXT, "m.unit", NULL, NULL, NULL)                                             \
	X("t", QC_TIME, "s.t_ns", NULL, NULL, NULL)                                                \
	X("value", QC_MVAL, "s.value", NULL, NULL, NULL)

/* The idle gaps of device streams (query/funcs_gaps.c's gm_gaps). */
#define GAP_FIELDS(X)                                                                              \
	X("stream", QC_TEXT, TRACK_SQL("name", "i"), NULL, NULL, NULL)                             \
	X("track", QC_INT, "i.track_id", NULL, NULL, NULL)                                         \
	X("host", QC_TEXT, TRACK_SQL("host", "i"), NULL, NULL, NULL)                               \
	X("rank", QC_INT, "i.rank", NULL, NULL, NULL)                                              \
	SOURCE_FIELDS(X, "i")                                                                      \
	X("start", QC_TIME, "i.start_ns", NULL, NULL, NULL)                                        \
	X("end", QC_TIME, "i.end_ns", NULL, NULL, NULL)                                            \
	X("dur", QC_DUR, "(i.end_ns - i.start_ns)", NULL, NULL, NULL)                              \
	X("cause", QC_TEXT, "i.cause", NULL, NULL, NULL)                                           \
	X("thread", QC_TEXT, "(SELECT name FROM tracks WHERE id = i.thread_id)", NULL, NULL, NULL) \
	X("op", QC_PHASE, "i.op_id", NULL, NULL, NULL)                                             \
	X("op.name", QC_TEXT, "gm_str((SELECT name_id FROM phases WHERE id = i.op_id))", NULL,     \
	  NULL, NULL)                                                                              \
	X("op.path", QC_TEXT, "gm_path(i.op_id)", NULL, NULL, NULL)                                \
	X("step", QC_TEXT, "gm_str((SELECT name_id FROM phases WHERE id = gm_step(i.op_id)))",     \
	  NULL, NULL, NULL)

static const struct field phase_fields[] = {
    PHASE_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field event_fields[] = {
    EVENT_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field metric_fields[] = {
    METRIC_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field sample_fields[] = {
    SAMPLE_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const struct field gap_fields[] = {GAP_FIELDS(F_STRUCT){NULL, 0, NULL, NULL, NULL, NULL}};
static const char *const phase_names[] = {PHASE_FIELDS(F_NAME) NULL};
static const char *const gap_names[] = {GAP_FIELDS(F_NAME) NULL};
static const char *const event_names[] = {EVENT_FIELDS(F_NAME) NULL};
static const char *const metric_names[] = {METRIC_FIELDS(F_NAME) NULL};
static const char *const sample_names[] = {SAMPLE_FIELDS(F_NAME) NULL};

static const struct source_info sources[] = {
    [QS_PHASES] = {phase_fields,
		   phase_names,
		   "phases p",
		   "p.start_ns",
		   "(p.start_ns + p.dur_ns)",
		   {"id", "kind", "name", "dur", "path", NULL}},
    [QS_EVENTS] = {event_fields,
		   event_names,
		   "events e",
		   "e.t_ns",
		   "e.t_ns",
		   {"id", "t", "name", "level", "phase", NULL}},
    [QS_METRICS] = {metric_fields,
		    metric_names,
		    "metrics m",
		    NULL,
		    NULL,
		    {"id", "host", "name", "unit", "samples", "mean", "max", NULL}},
    [QS_SAMPLES] = {sample_fields,
		    sample_names,
		    "samples s JOIN metrics m ON m.id = s.metric_id",
		    "s.t_ns",
		    "s.t_ns",
		    {"metric", "host", "t", "value", NULL}},
    [QS_GAPS] = {gap_fields,
		 gap_names,
		 "gm_gaps i",
		 "i.start_ns",
		 "i.end_ns",
		 {"stream", "rank", "start", "dur", "cause", "op", "op.name", NULL}},
};

const char *const source_words[] = {"phases", "events", "metrics", "samples", "gaps"};

const char *const *query_fields(enum query_source src)
{
	return sources[src].names;
}

void source_scope_init(struct scope *s, enum query_source src)
{
	memset(s, 0, sizeof(*s));
	s->src = src;
	s->si = &sources[src];
	sbuf_init(&s->from);
	sbuf_init(&s->where);
	sbuf_init(&s->having);
	sbuf_init(&s->order);
	sbuf_adds(&s->from, s->si->from);
	s->limit = -1;
	s->w0 = xstrdup("-9223372036854775808");
	s->w1 = xstrdup("9223372036854775807");
}

static void outcols_free(struct outcol *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(o[i].name);
		free(o[i].sql);
		free(o[i].group_sql);
		free(o[i].arg_sql);
	}
	free(o);
}

void source_scope_release(struct scope *s)
{
	sbuf_release(&s->from);
	sbuf_release(&s->where);
	sbuf_release(&s->having);
	sbuf_release(&s->order);
	for (size_t i = 0; i < s->nextras; i++) {
		free(s->extras[i].name);
		free(s->extras[i].sql);
	}
	free(s->extras);
	outcols_free(s->keys, s->nkeys);
	outcols_free(s->aggs, s->naggs);
	outcols_free(s->sel, s->nsel);
	free(s->w0);
	free(s->w1);
}

const struct field *source_field(const struct scope *s, const char *name)
{
	for (const struct field *f = s->si->fields; f->name; f++)
		if (!strcasecmp(f->name, name))
			return f;
	return NULL;
}

const struct extra *source_extra(const struct scope *s, const char *name)
{
	for (size_t i = 0; i < s->nextras; i++)
		if (!strcasecmp(s->extras[i].name, name))
			return &s->extras[i];
	return NULL;
}

/* What a `by` key on field f shows when that is not the value it groups
 * on (a source groups on its id and shows its name), else NULL. */
const char *source_key_shown(const struct scope *s, const struct field *f)
{
	if (f && !strcmp(f->name, "source"))
		return s->src == QS_PHASES   ? SOURCE_NAME_SQL("p")
		       : s->src == QS_EVENTS ? SOURCE_NAME_SQL("e")
		       : s->src == QS_GAPS   ? SOURCE_NAME_SQL("i")
					     : NULL;
	return NULL;
}

/* A field's SQL with the window placeholders filled. */
char *source_field_sql(const struct scope *s, const char *tmpl)
{
	struct sbuf sb;
	sbuf_init(&sb);
	for (const char *p = tmpl; *p;) {
		if (!strncmp(p, "$W0", 3)) {
			sbuf_adds(&sb, s->w0);
			p += 3;
		} else if (!strncmp(p, "$W1", 3)) {
			sbuf_adds(&sb, s->w1);
			p += 3;
		} else {
			sbuf_addc(&sb, *p++);
		}
	}
	return sbuf_detach(&sb);
}

void source_add_extra(struct scope *s, const char *name, enum query_coltype type, char *sql)
{
	XGROW(s->extras, s->nextras + 1, s->aextras);
	s->extras[s->nextras].name = xstrdup(name);
	s->extras[s->nextras].type = type;
	s->extras[s->nextras].sql = sql;
	s->nextras++;
}

/* Fills the hint for an unknown name: the closest field or extra. */
char *source_field_hint(const struct scope *s, const char *name)
{
	const char *cands[128];
	size_t n = 0;
	for (const struct field *f = s->si->fields; f->name && n < 100; f++)
		cands[n++] = f->name;
	for (size_t i = 0; i < s->nextras && n < 127; i++)
		cands[n++] = s->extras[i].name;
	cands[n] = NULL;
	const char *sug = query_suggest(name, cands);
	if (sug)
		return xasprintf("did you mean '%s'?", sug);
	struct sbuf sb;
	sbuf_init(&sb);
	sbuf_addf(&sb, "%s fields:", source_words[s->src]);
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&sb, " %s", cands[i]);
	return sbuf_detach(&sb);
}
