/*
 * Spark event logs (one JSON object a line, Spark 2.x and 3.x) into the
 * phase tree: step -> application -> job -> stage attempt -> task attempt.
 *
 * The log is read a line at a time and each line parsed alone (jansson; a
 * line is small except SQL plans, which are skipped unread when longer than
 * LINES_MAX).  Lines whose event is not imported are recognised by their
 * leading {"Event":"..."} and not parsed at all.  Ids are reserved as soon
 * as a phase is announced and its row is written once its end is known:
 * tasks at TaskEnd, stage attempts at StageCompleted, jobs at JobEnd, the
 * application at the end of the file.  Only jobs and stage attempts stay in
 * memory (a few numbers each), never tasks, so memory follows the number of
 * stages, not the size of the log.
 *
 * Times are milliseconds since the epoch (anchor "absolute", or shifted by
 * --time-offset).  A stage attempt hangs under the first job listing it;
 * its parent stages become EDGE_STAGE_PARENT edges from the parent's latest
 * attempt.  Tasks sit on one track per executor ("executor N", host from
 * ExecutorAdded or BlockManagerAdded, else the task's own Host).  Failed and
 * killed attempts are kept, marked in attrs and counted.  Self time of a
 * composite is its duration less the hull (first start to last end) of its
 * children, not their exact union: cheap, and equal to it whenever the
 * children leave no gap between them.
 *
 * A log cut off before ApplicationEnd closes an open stage or job at its
 * last finished child (its start when none finished) and the application
 * at the last event time (TRUNCATED).  The parts events_N_<appid> of a rolling
 * eventlog_v2_<appid> directory, imported in name order in one run or
 * several, continue one application: a part without ApplicationStart finds
 * the application, jobs and stage attempts written by earlier parts by
 * their ids (attrs app_id, job_id, stage_id and attempt) and extends them.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "importers/diag.h"
#include "importers/lines.h"
#include "importers/sniff.h"
#include "importers/spark.h"
#include "model/store/col.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/xalloc.h"

#define DIAG_LIST(X)                                                                               \
	X(BAD_LINE, "lines that are not a JSON object with an \"Event\": skipped")                 \
	X(LONG_LINE, "lines longer than 1 MB (SQL plans) skipped unread")                          \
	X(IGNORED_EVENT, "events of kinds not imported (SQL, environment, metrics, plugins...)")   \
	X(TRUNCATED, "log ends before ApplicationEnd: open jobs and stages closed at their last"   \
		     " finished child, the application at the last event")                         \
	X(ROLLED, "rolling event-log part ends before the application: open jobs and stages"       \
		  " closed at their last finished child (a later part extends them)")              \
	X(UNFINISHED_TASK, "tasks started but never ended: not stored")                            \
	X(FAILED_TASK, "failed task attempts: kept, marked failed")                                \
	X(KILLED_TASK, "killed task attempts: kept, marked killed")                                \
	X(FAILED_STAGE, "failed stage attempts: kept, marked failed")                              \
	X(FAILED_JOB, "failed jobs: kept, marked failed")                                          \
	X(BAD_TIME, "records without a usable time: taken from the enclosing phase")               \
	X(ORPHAN, "stages, tasks or job ends whose job or stage is not in the log: hung under"     \
		  " the application (a job end: ignored)")                                         \
	X(NO_APP_START, "no ApplicationStart: the application is named after the file")            \
	X(DUP_EVENT, "repeated start of a job or stage attempt: ignored")

DIAG_TABLE(DIAG_LIST);

/* A job or a stage attempt: its phase and what its row needs. */
struct node {
	int64_t key;	    /* job id, or stage id */
	int64_t attempt;    /* stages */
	int64_t phase_id;   /* reserved */
	int64_t parent;	    /* index in jobs (stages); -1: the application */
	int64_t start, end; /* ns; 0: unknown */
	int64_t cmin, cmax, children;
	int64_t ntasks;
	char *name, *reason; /* freed once written */
	int failed, open, written;
};

struct executor {
	char *host;
	int64_t track_id, spans;
};

struct sp {
	struct store *st;
	const struct import_opts *o;
	struct input *in;
	char **err;
	struct lines lines;
	int64_t source_id, step_id, app_id;
	int continued; /* the application was written by an earlier part */
	int64_t app_start, app_end, app_cmin, app_cmax, app_children;
	int64_t old_start, old_end, old_children;
	char *app_name, *app_key, *user, *version, *attempt;
	int64_t tmin, tmax; /* of every event time read */
	struct node *jobs, *stages;
	size_t njobs, cjobs, nstages, cstages;
	struct strmap job_by_id, stage_job, stage_by_key, stage_last, exec_by_id;
	struct executor *execs;
	size_t nexecs, cexecs;
	int64_t lines_read, spark_events, phases, task_starts, task_ends;
	struct diag_counts dc;
	sqlite3_stmt *edge;
	struct sbuf attrs, name, key;
};

/* ---- small helpers ---- */

static int64_t jint(json_t *o, const char *k, int64_t dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A time field (ms since the epoch) in ns, with --time-offset; 0: absent
 * or out of range.  Every time read widens the log's span. */
static int64_t jtime(struct sp *p, json_t *o, const char *k)
{
	int64_t ms = jint(o, k, 0), ns;
	if (ms <= 0 || ms > INT64_MAX / 1000000)
		return 0;
	ns = ms * 1000000;
	if (p->o->has_time_offset && __builtin_add_overflow(ns, p->o->time_offset_ns, &ns))
		return 0;
	if (ns <= 0)
		return 0;
	p->tmin = p->tmin && p->tmin < ns ? p->tmin : ns;
	p->tmax = p->tmax > ns ? p->tmax : ns;
	return ns;
}

static void akey(struct sbuf *sb, const char *k)
{
	if (sb->len > 1)
		sbuf_addc(sb, ',');
	sbuf_add_json_string(sb, k, strlen(k));
	sbuf_addc(sb, ':');
}

static void aint(struct sbuf *sb, const char *k, int64_t v)
{
	akey(sb, k);
	sbuf_addf(sb, "%lld", (long long)v);
}

static void astr(struct sbuf *sb, const char *k, const char *v)
{
	if (!v)
		return;
	akey(sb, k);
	size_t n = strlen(v);
	sbuf_add_json_string(sb, v, n > 500 ? 500 : n); /* stack traces: the start */
}

static void atrue(struct sbuf *sb, const char *k)
{
	akey(sb, k);
	sbuf_adds(sb, "true");
}

static void hull(int64_t *cmin, int64_t *cmax, int64_t s, int64_t e)
{
	*cmin = *cmin && *cmin < s ? *cmin : s;
	*cmax = *cmax > e ? *cmax : e;
}

/* dur less the part of it the children's hull covers. */
static int64_t self_of(int64_t start, int64_t end, int64_t cmin, int64_t cmax)
{
	int64_t s = cmin > start ? cmin : start, e = cmax < end ? cmax : end;
	int64_t covered = cmin && e > s ? e - s : 0;
	return end - start - covered;
}

static int write_row(struct sp *p, int64_t id, int64_t parent, int kind, const char *name,
		     int64_t track, int64_t start, int64_t end, int64_t self, int64_t children,
		     int depth)
{
	struct phase_row r = {.id = id,
			      .parent_id = parent,
			      .kind = kind,
			      .track_id = track,
			      .source_id = p->source_id,
			      .start_ns = start,
			      .dur_ns = end - start,
			      .self_ns = self < 0 ? 0 : self,
			      .child_count = children,
			      .depth = depth,
			      .attrs = p->attrs.buf,
			      .attrs_len = p->attrs.len};
	r.name_id = store_intern(p->st, name, strlen(name), p->err);
	if (r.name_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
		return -1;
	p->phases++;
	return 0;
}

static void attrs_begin(struct sp *p)
{
	sbuf_reset(&p->attrs);
	sbuf_addc(&p->attrs, '{');
}

/* ---- finding what earlier parts of a rolling log wrote ---- */

/* The first row of sql (binding the application and the ints a, b) into
 * id, start, end, children; 0 when none, -1 on error. */
static int lookup(struct sp *p, const char *sql, int64_t a, int64_t b, struct node *n)
{
	sqlite3 *db = store_db(p->st);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		*p->err = xasprintf("%s: cannot read trace.db: %s", input_path(p->in),
				    sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_int64(q, 1, p->app_id);
	sqlite3_bind_int64(q, 2, a);
	sqlite3_bind_int64(q, 3, b);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		n->phase_id = col_int(q, 0);
		n->start = col_int(q, 1);
		n->end = n->start + col_int(q, 2);
		n->children = col_int(q, 3);
		n->cmin = n->start;
		n->cmax = n->end;
		if (sqlite3_column_count(q) > 4)
			n->key = col_int(q, 4);
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		*p->err = xasprintf("%s: cannot read trace.db: %s", input_path(p->in),
				    sqlite3_errmsg(db));
		return -1;
	}
	return rc == SQLITE_ROW;
}

/* The app id of a rolling part, from its name events_N_<appid>[.codec]. */
static char *rolling_app_id(const char *path, int64_t *part)
{
	const char *b = input_base_name(path);
	char *end;
	if (strncmp(b, "events_", 7))
		return NULL;
	long long n = strtoll(b + 7, &end, 10);
	if (end == b + 7 || *end != '_' || !end[1])
		return NULL;
	*part = n;
	char *id = xstrdup(end + 1);
	static const char *const ext[] = {".zstd", ".zst", ".gz", ".lz4", ".lzf", ".snappy"};
	for (size_t i = 0; i < sizeof(ext) / sizeof(*ext); i++) {
		size_t k = strlen(ext[i]), m = strlen(id);
		if (m > k && !strcmp(id + m - k, ext[i]))
			id[m - k] = '\0';
	}
	return id;
}

/* The attrs members an earlier part wrote, by which a later part finds its
 * application, jobs and stages: NULL where a row's attrs are not JSON
 * (store.h), so that one damaged row does not fail the import. */
#define APP_ID_SQL    STORE_ATTR_SQL("attrs", "$.app_id")
#define JOB_ID_SQL    STORE_ATTR_SQL("attrs", "$.job_id")
#define STAGE_IDS_SQL "json_each(CASE WHEN json_valid(attrs) THEN attrs END, '$.stage_ids')"
#define STAGE_ID_SQL  STORE_ATTR_SQL("s.attrs", "$.stage_id")
#define ATTEMPT_SQL   STORE_ATTR_SQL("s.attrs", "$.attempt")

/* Continues the application app_key of an earlier part: 1 found, 0 not. */
static int find_app(struct sp *p)
{
	sqlite3 *db = store_db(p->st);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db,
			       "SELECT id, parent_id, start_ns, dur_ns, child_count FROM phases"
			       " WHERE kind = ?1 AND " APP_ID_SQL " = ?2"
			       " ORDER BY id DESC LIMIT 1",
			       -1, &q, NULL) != SQLITE_OK) {
		*p->err = xasprintf("%s: cannot read trace.db: %s", input_path(p->in),
				    sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_int(q, 1, PHASE_APPLICATION);
	sqlite3_bind_text(q, 2, p->app_key, -1, SQLITE_STATIC);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		p->app_id = col_int(q, 0);
		p->step_id = col_int(q, 1);
		p->old_start = col_int(q, 2);
		p->old_end = p->old_start + col_int(q, 3);
		p->old_children = col_int(q, 4);
		p->continued = 1;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		*p->err = xasprintf("%s: cannot read trace.db: %s", input_path(p->in),
				    sqlite3_errmsg(db));
		return -1;
	}
	return rc == SQLITE_ROW;
}

/* ---- the application ---- */

/* Makes sure the application (and its step) exist, as announced by
 * ApplicationStart, or continued from an earlier part, or named after the
 * file. */
static int ensure_app(struct sp *p)
{
	if (p->app_id)
		return 0;
	if (!p->app_name) {
		int64_t part = 0;
		char *id = rolling_app_id(input_path(p->in), &part);
		if (id) {
			free(p->app_key);
			p->app_key = id;
			int r = find_app(p);
			if (r)
				return r < 0 ? -1 : 0;
		}
		diag_count(&p->dc, D_NO_APP_START, 1, "%s", input_base_name(input_path(p->in)));
	}
	const char *step = p->o->step			 ? p->o->step
			   : p->app_name && *p->app_name ? p->app_name
							 : input_base_name(input_path(p->in));
	p->step_id = import_step_node(p->st, p->o, step, p->err);
	if (p->step_id < 0)
		return -1;
	p->app_id = store_reserve_phase_id(p->st);
	return 0;
}

static int write_app(struct sp *p)
{
	int64_t start = p->app_start ? p->app_start : p->app_cmin ? p->app_cmin : p->tmin;
	int64_t end = p->app_end ? p->app_end : p->tmax;
	if (p->continued) {
		start = p->old_start < start || !start ? p->old_start : start;
		end = p->old_end > end ? p->old_end : end;
		return store_update_phase_window(p->st, p->app_id, start, end - start,
						 p->old_children + p->app_children, p->err);
	}
	end = end > start ? end : start;
	attrs_begin(p);
	astr(&p->attrs, "app_id", p->app_key);
	astr(&p->attrs, "attempt", p->attempt);
	astr(&p->attrs, "user", p->user);
	astr(&p->attrs, "spark_version", p->version);
	sbuf_addc(&p->attrs, '}');
	const char *name = p->app_name && *p->app_name ? p->app_name
			   : p->app_key		       ? p->app_key
						       : input_base_name(input_path(p->in));
	return write_row(p, p->app_id, p->step_id, PHASE_APPLICATION, name, 0, start, end,
			 self_of(start, end, p->app_cmin, p->app_cmax), p->app_children, 2);
}

/* ---- jobs and stages ---- */

static struct node *add_node(struct node **v, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	struct node *x = &(*v)[(*n)++];
	memset(x, 0, sizeof(*x));
	return x;
}

static const char *int_key(struct sp *p, int64_t a, int64_t b, int two)
{
	sbuf_reset(&p->key);
	if (two)
		sbuf_addf(&p->key, "%lld.%lld", (long long)a, (long long)b);
	else
		sbuf_addf(&p->key, "%lld", (long long)a);
	return p->key.buf;
}

static struct node *job_of(struct sp *p, int64_t job_id)
{
	const char *k = int_key(p, job_id, 0, 0);
	struct strmap_ent *e = strmap_get(&p->job_by_id, k, strlen(k));
	return e ? &p->jobs[e->value] : NULL;
}

static struct node *stage_of(struct sp *p, int64_t sid, int64_t att)
{
	const char *k = int_key(p, sid, att, 1);
	struct strmap_ent *e = strmap_get(&p->stage_by_key, k, strlen(k));
	return e ? &p->stages[e->value] : NULL;
}

/* A parent (job or application) gains a child written with [s, e]. */
static int add_child(struct sp *p, int64_t parent, int64_t s, int64_t e)
{
	if (parent < 0) {
		p->app_children++;
		hull(&p->app_cmin, &p->app_cmax, s, e);
		return 0;
	}
	struct node *j = &p->jobs[parent];
	j->children++;
	hull(&j->cmin, &j->cmax, s, e);
	if (!j->written)
		return 0;
	return store_update_phase_window(p->st, j->phase_id, j->start, j->end - j->start,
					 j->children, p->err);
}

static int write_job(struct sp *p, struct node *j)
{
	j->open = 0;
	if (!j->start)
		j->start = j->cmin ? j->cmin : j->end;
	if (!j->end || j->end < j->start)
		j->end = j->cmax > j->start ? j->cmax : j->start;
	if (j->written)
		return store_update_phase_window(p->st, j->phase_id, j->start, j->end - j->start,
						 j->children, p->err);
	attrs_begin(p);
	aint(&p->attrs, "job_id", j->key);
	astr(&p->attrs, "result", j->reason);
	if (j->name) {
		akey(&p->attrs, "stage_ids");
		sbuf_adds(&p->attrs, j->name);
	}
	if (j->failed)
		atrue(&p->attrs, "failed");
	sbuf_addc(&p->attrs, '}');
	sbuf_reset(&p->name);
	sbuf_addf(&p->name, "job %lld", (long long)j->key);
	if (write_row(p, j->phase_id, p->app_id, PHASE_JOB, p->name.buf, 0, j->start, j->end,
		      self_of(j->start, j->end, j->cmin, j->cmax), j->children, 3) < 0)
		return -1;
	j->written = 1;
	free(j->reason);
	free(j->name);
	j->reason = j->name = NULL;
	p->app_children++;
	hull(&p->app_cmin, &p->app_cmax, j->start, j->end);
	return 0;
}

static int write_stage(struct sp *p, struct node *s)
{
	s->open = 0;
	if (!s->start)
		s->start = s->cmin ? s->cmin : s->end;
	if (!s->end || s->end < s->start)
		s->end = s->cmax > s->start ? s->cmax : s->start;
	if (s->written)
		return store_update_phase_window(p->st, s->phase_id, s->start, s->end - s->start,
						 s->children, p->err);
	attrs_begin(p);
	aint(&p->attrs, "stage_id", s->key);
	aint(&p->attrs, "attempt", s->attempt);
	aint(&p->attrs, "tasks", s->ntasks);
	if (s->failed) {
		atrue(&p->attrs, "failed");
		astr(&p->attrs, "reason", s->reason);
	}
	sbuf_addc(&p->attrs, '}');
	sbuf_reset(&p->name);
	if (s->attempt)
		sbuf_addf(&p->name, "stage %lld.%lld", (long long)s->key, (long long)s->attempt);
	else
		sbuf_addf(&p->name, "stage %lld", (long long)s->key);
	if (s->name && *s->name)
		sbuf_addf(&p->name, ": %s", s->name);
	int64_t parent = s->parent >= 0 ? p->jobs[s->parent].phase_id : p->app_id;
	int depth = s->parent >= 0 ? 4 : 3;
	if (write_row(p, s->phase_id, parent, PHASE_STAGE, p->name.buf, 0, s->start, s->end,
		      self_of(s->start, s->end, s->cmin, s->cmax), s->children, depth) < 0)
		return -1;
	s->written = 1;
	free(s->name);
	free(s->reason);
	s->name = s->reason = NULL;
	return add_child(p, s->parent, s->start, s->end);
}

/* A job an earlier part wrote, found by cond on its attrs (?2: the int a):
 * kept as written and open, so that its end or new stages extend it. */
static int find_job(struct sp *p, const char *cond, int64_t a, struct node **out)
{
	struct node found = {0};
	char *sql = xasprintf("SELECT id, start_ns, dur_ns, child_count,"
			      " " JOB_ID_SQL " FROM phases"
			      " WHERE parent_id = ?1 AND kind = %d AND %s AND ?3 = 0"
			      " ORDER BY id LIMIT 1",
			      PHASE_JOB, cond);
	int f = lookup(p, sql, a, 0, &found);
	free(sql);
	*out = NULL;
	if (f <= 0)
		return f;
	const char *k = int_key(p, found.key, 0, 0);
	strmap_put(&p->job_by_id, k, strlen(k), (int64_t)p->njobs, NULL);
	struct node *j = add_node(&p->jobs, &p->njobs, &p->cjobs);
	*j = found;
	j->written = 1;
	j->open = 1;
	*out = j;
	return 1;
}

static int job_start(struct sp *p, json_t *ev)
{
	int64_t id = jint(ev, "Job ID", -1);
	if (id < 0) {
		diag_count(&p->dc, D_BAD_LINE, 1, "line %lld: a JobStart without a Job ID",
			   (long long)p->lines.lineno);
		return 0;
	}
	if (ensure_app(p) < 0)
		return -1;
	if (job_of(p, id)) {
		diag_count(&p->dc, D_DUP_EVENT, 1, "line %lld: job %lld",
			   (long long)p->lines.lineno, (long long)id);
		return 0;
	}
	const char *k = int_key(p, id, 0, 0);
	strmap_put(&p->job_by_id, k, strlen(k), (int64_t)p->njobs, NULL);
	struct node *j = add_node(&p->jobs, &p->njobs, &p->cjobs);
	j->key = id;
	j->phase_id = store_reserve_phase_id(p->st);
	j->start = jtime(p, ev, "Submission Time");
	j->open = 1;
	int64_t idx = (int64_t)(j - p->jobs);
	json_t *ids = json_object_get(ev, "Stage IDs"), *v;
	size_t i;
	struct sbuf list = SBUF_INIT;
	sbuf_addc(&list, '[');
	json_array_foreach(ids, i, v)
	{
		if (!json_is_integer(v))
			continue;
		sbuf_addf(&list, "%s%lld", list.len > 1 ? "," : "",
			  (long long)json_integer_value(v));
		k = int_key(p, json_integer_value(v), 0, 0);
		strmap_put(&p->stage_job, k, strlen(k), idx, NULL); /* the first job keeps it */
	}
	sbuf_addc(&list, ']');
	j->name = sbuf_detach(&list);
	return 0;
}

static int job_end(struct sp *p, json_t *ev)
{
	int64_t id = jint(ev, "Job ID", -1);
	if (ensure_app(p) < 0)
		return -1;
	struct node *j = job_of(p, id);
	if (!j && p->continued && find_job(p, JOB_ID_SQL " = ?2", id, &j) < 0)
		return -1;
	if (!j || !j->open) {
		diag_count(&p->dc, D_ORPHAN, 1, "line %lld: end of job %lld, never started",
			   (long long)p->lines.lineno, (long long)id);
		return 0;
	}
	int64_t t = jtime(p, ev, "Completion Time");
	j->end = t ? t : j->end;
	json_t *res = json_object_get(ev, "Job Result");
	const char *r = jstr(res, "Result");
	free(j->reason);
	j->reason = r ? xstrdup(r) : NULL;
	if (r && strcmp(r, "JobSucceeded")) {
		j->failed = 1;
		diag_count(&p->dc, D_FAILED_JOB, 1, "job %lld: %s", (long long)id, r);
	}
	return write_job(p, j);
}

/* The stage attempt of a Stage Info, opened when new. */
static int open_stage(struct sp *p, json_t *info, struct node **out)
{
	int64_t sid = jint(info, "Stage ID", -1), att = jint(info, "Stage Attempt ID", 0);
	*out = NULL;
	if (sid < 0) {
		diag_count(&p->dc, D_BAD_LINE, 1, "line %lld: a Stage Info without a Stage ID",
			   (long long)p->lines.lineno);
		return 0;
	}
	if (ensure_app(p) < 0)
		return -1;
	if ((*out = stage_of(p, sid, att)))
		return 0;
	const char *k = int_key(p, sid, att, 1);
	strmap_put(&p->stage_by_key, k, strlen(k), (int64_t)p->nstages, NULL);
	struct node *s = add_node(&p->stages, &p->nstages, &p->cstages);
	s->key = sid;
	s->attempt = att;
	s->phase_id = store_reserve_phase_id(p->st);
	s->open = 1;
	s->ntasks = jint(info, "Number of Tasks", 0);
	const char *name = jstr(info, "Stage Name");
	s->name = name ? xstrdup(name) : NULL;
	s->start = jtime(p, info, "Submission Time");
	k = int_key(p, sid, 0, 0);
	struct strmap_ent *e = strmap_get(&p->stage_job, k, strlen(k));
	s->parent = e ? e->value : -1;
	struct node *j = NULL;
	if (!e && p->continued) {
		if (find_job(p, "?2 IN (SELECT value FROM " STAGE_IDS_SQL ")", sid, &j) < 0)
			return -1;
		if (j) {
			s->parent = (int64_t)(j - p->jobs);
			k = int_key(p, sid, 0, 0);
			strmap_put(&p->stage_job, k, strlen(k), s->parent, NULL);
		}
	}
	if (!e && !j)
		diag_count(&p->dc, D_ORPHAN, 1, "line %lld: stage %lld in no job",
			   (long long)p->lines.lineno, (long long)sid);
	/* edges from the latest attempt of each parent stage that ran */
	json_t *v;
	size_t i;
	json_array_foreach(json_object_get(info, "Parent IDs"), i, v)
	{
		if (!json_is_integer(v))
			continue;
		k = int_key(p, json_integer_value(v), 0, 0);
		struct strmap_ent *pe = strmap_get(&p->stage_last, k, strlen(k));
		if (!pe)
			continue; /* skipped: its output was reused, it never ran */
		sqlite3_bind_int64(p->edge, 1, p->stages[pe->value].phase_id);
		sqlite3_bind_int64(p->edge, 2, s->phase_id);
		sqlite3_bind_int(p->edge, 3, EDGE_STAGE_PARENT);
		int rc = sqlite3_step(p->edge);
		sqlite3_reset(p->edge);
		if (rc != SQLITE_DONE) {
			*p->err = xasprintf("%s: cannot write an edge: %s", input_path(p->in),
					    sqlite3_errmsg(store_db(p->st)));
			return -1;
		}
	}
	k = int_key(p, sid, 0, 0);
	strmap_put(&p->stage_last, k, strlen(k), 0, NULL)->value = (int64_t)(s - p->stages);
	*out = s;
	return 0;
}

/* A stage attempt an earlier part wrote: found and kept as written. */
static int find_stage(struct sp *p, int64_t sid, int64_t att, struct node **out)
{
	struct node found = {0};
	*out = NULL;
	char *sql = xasprintf("SELECT s.id, s.start_ns, s.dur_ns, s.child_count FROM phases s"
			      " WHERE s.kind = %d AND " STAGE_ID_SQL " = ?2"
			      " AND " ATTEMPT_SQL " = ?3 AND (s.parent_id = ?1"
			      " OR s.parent_id IN (SELECT id FROM phases WHERE parent_id = ?1))"
			      " ORDER BY s.id DESC LIMIT 1",
			      PHASE_STAGE);
	int f = lookup(p, sql, sid, att, &found);
	free(sql);
	if (f <= 0)
		return f;
	const char *k = int_key(p, sid, att, 1);
	strmap_put(&p->stage_by_key, k, strlen(k), (int64_t)p->nstages, NULL);
	struct node *s = add_node(&p->stages, &p->nstages, &p->cstages);
	*s = found;
	s->key = sid;
	s->attempt = att;
	s->parent = -2; /* its parent's counts are the earlier part's */
	s->written = 1;
	s->open = 1;
	*out = s;
	return 1;
}

static int stage_submitted(struct sp *p, json_t *ev)
{
	struct node *s;
	json_t *info = json_object_get(ev, "Stage Info");
	if (open_stage(p, info, &s) < 0)
		return -1;
	if (s && s->written)
		diag_count(&p->dc, D_DUP_EVENT, 1, "line %lld: stage %lld.%lld",
			   (long long)p->lines.lineno, (long long)s->key, (long long)s->attempt);
	return 0;
}

static int stage_completed(struct sp *p, json_t *ev)
{
	json_t *info = json_object_get(ev, "Stage Info");
	int64_t sid = jint(info, "Stage ID", -1), att = jint(info, "Stage Attempt ID", 0);
	struct node *s = NULL;
	if (ensure_app(p) < 0)
		return -1;
	if (sid >= 0 && !stage_of(p, sid, att) && p->continued && find_stage(p, sid, att, &s) < 0)
		return -1;
	if (!s && open_stage(p, info, &s) < 0)
		return -1;
	if (!s)
		return 0;
	if (!s->open) {
		diag_count(&p->dc, D_DUP_EVENT, 1, "line %lld: stage %lld.%lld completed twice",
			   (long long)p->lines.lineno, (long long)sid, (long long)att);
		return 0;
	}
	int64_t t = jtime(p, info, "Submission Time");
	if (t && !s->written)
		s->start = t;
	t = jtime(p, info, "Completion Time");
	s->end = t ? t : s->end;
	const char *why = jstr(info, "Failure Reason");
	if (why) {
		s->failed = 1;
		free(s->reason);
		s->reason = xstrdup(why);
		diag_count(&p->dc, D_FAILED_STAGE, 1, "stage %lld.%lld: %.200s", (long long)sid,
			   (long long)att, why);
	}
	if (s->parent == -2) {
		s->open = 0;
		return store_update_phase_window(p->st, s->phase_id, s->start, s->end - s->start,
						 s->children, p->err);
	}
	return write_stage(p, s);
}

/* ---- executors and tasks ---- */

static struct executor *executor(struct sp *p, const char *id, int make)
{
	struct strmap_ent *e = strmap_get(&p->exec_by_id, id, strlen(id));
	if (e)
		return &p->execs[e->value];
	if (!make)
		return NULL;
	strmap_put(&p->exec_by_id, id, strlen(id), (int64_t)p->nexecs, NULL);
	if (p->nexecs == p->cexecs) {
		p->cexecs = p->cexecs ? p->cexecs * 2 : 16;
		p->execs = xrealloc(p->execs, p->cexecs * sizeof(*p->execs));
	}
	struct executor *x = &p->execs[p->nexecs++];
	memset(x, 0, sizeof(*x));
	return x;
}

static void executor_host(struct sp *p, const char *id, const char *host, int replace)
{
	if (!id || !host)
		return;
	struct executor *x = executor(p, id, 1);
	if (x->host && !replace)
		return;
	free(x->host);
	x->host = xstrdup(host);
}

static int64_t executor_track(struct sp *p, const char *id, const char *task_host)
{
	struct executor *x = executor(p, id, 1);
	if (x->track_id)
		return x->track_id;
	if (!x->host && task_host)
		x->host = xstrdup(task_host);
	sbuf_reset(&p->name);
	sbuf_addf(&p->name, "executor %s", id);
	char *end;
	long long n = strtoll(id, &end, 10);
	struct track_row t = {.source_id = p->source_id,
			      .kind = "executor",
			      .pid = id,
			      .name = p->name.buf,
			      .host = p->o->host ? p->o->host : x->host,
			      .rank = -1,
			      .sort_index = *id && !*end ? n : -1};
	x->track_id = store_add_track(p->st, &t, p->err);
	return x->track_id;
}

static int task_end(struct sp *p, json_t *ev)
{
	json_t *ti = json_object_get(ev, "Task Info");
	json_t *why = json_object_get(ev, "Task End Reason");
	int64_t sid = jint(ev, "Stage ID", -1), att = jint(ev, "Stage Attempt ID", 0);
	p->task_ends++;
	if (!json_is_object(ti)) {
		diag_count(&p->dc, D_BAD_LINE, 1, "line %lld: a TaskEnd without Task Info",
			   (long long)p->lines.lineno);
		return 0;
	}
	if (ensure_app(p) < 0)
		return -1;
	struct node *s = stage_of(p, sid, att);
	if (!s && p->continued && find_stage(p, sid, att, &s) < 0)
		return -1;
	if (!s)
		diag_count(&p->dc, D_ORPHAN, 1,
			   "line %lld: a task of stage %lld.%lld, never submitted",
			   (long long)p->lines.lineno, (long long)sid, (long long)att);
	int64_t start = jtime(p, ti, "Launch Time"), end = jtime(p, ti, "Finish Time");
	if (!start || !end || end < start) {
		diag_count(&p->dc, D_BAD_TIME, 1, "line %lld: task %lld",
			   (long long)p->lines.lineno, (long long)jint(ti, "Task ID", -1));
		int64_t fb = s ? (s->end ? s->end : s->start) : p->tmax;
		start = start ? start : end ? end : fb;
		end = end >= start ? end : start;
	}
	const char *exec = jstr(ti, "Executor ID");
	const char *host = jstr(ti, "Host");
	int64_t track = executor_track(p, exec ? exec : "?", host);
	if (track < 0)
		return -1;
	executor(p, exec ? exec : "?", 0)->spans++;

	const char *reason = jstr(why, "Reason");
	json_t *kf = json_object_get(ti, "Killed"), *ff = json_object_get(ti, "Failed");
	int killed = json_is_true(kf) || (reason && !strcmp(reason, "TaskKilled"));
	int failed = !killed && (json_is_true(ff) || (reason && strcmp(reason, "Success")));
	int64_t index = jint(ti, "Index", -1), attempt = jint(ti, "Attempt", 0);
	attrs_begin(p);
	aint(&p->attrs, "task_id", jint(ti, "Task ID", -1));
	aint(&p->attrs, "index", index);
	aint(&p->attrs, "attempt", attempt);
	astr(&p->attrs, "executor", exec);
	astr(&p->attrs, "host", host);
	astr(&p->attrs, "locality", jstr(ti, "Locality"));
	if (json_is_true(json_object_get(ti, "Speculative")))
		atrue(&p->attrs, "speculative");
	astr(&p->attrs, "reason", reason);
	if (failed)
		atrue(&p->attrs, "failed");
	if (killed)
		atrue(&p->attrs, "killed");
	const char *msg = jstr(why, "Kill Reason")   ? jstr(why, "Kill Reason")
			  : jstr(why, "Description") ? jstr(why, "Description")
						     : jstr(why, "Message");
	if (failed || killed)
		astr(&p->attrs, "error", msg);
	sbuf_addc(&p->attrs, '}');
	if (failed)
		diag_count(&p->dc, D_FAILED_TASK, 1,
			   "task %lld.%lld in stage %lld.%lld: %s%s%.200s", (long long)index,
			   (long long)attempt, (long long)sid, (long long)att,
			   reason ? reason : "?", msg ? ": " : "", msg ? msg : "");
	if (killed)
		diag_count(&p->dc, D_KILLED_TASK, 1, "task %lld.%lld in stage %lld.%lld: %.200s",
			   (long long)index, (long long)attempt, (long long)sid, (long long)att,
			   msg ? msg : "killed");
	sbuf_reset(&p->name);
	sbuf_addf(&p->name, "task %lld.%lld", (long long)index, (long long)attempt);
	int64_t parent = s ? s->phase_id : p->app_id;
	int depth = !s ? 3 : s->parent == -1 ? 4 : 5;
	if (write_row(p, store_reserve_phase_id(p->st), parent, PHASE_TASK, p->name.buf, track,
		      start, end, end - start, 0, depth) < 0)
		return -1;
	if (!s)
		return add_child(p, -1, start, end);
	s->children++;
	hull(&s->cmin, &s->cmax, start, end);
	if (!s->written || s->open)
		return 0;
	/* a task ending after its stage (a killed speculative copy) */
	return store_update_phase_window(p->st, s->phase_id, s->start, s->end - s->start,
					 s->children, p->err);
}

/* ---- events ---- */

static int app_start(struct sp *p, json_t *ev)
{
	const char *name = jstr(ev, "App Name"), *id = jstr(ev, "App ID");
	const char *user = jstr(ev, "User"), *att = jstr(ev, "App Attempt ID");
	if (p->app_id) {
		diag_count(&p->dc, D_DUP_EVENT, 1, "line %lld: a second ApplicationStart",
			   (long long)p->lines.lineno);
		return 0;
	}
	free(p->app_name);
	free(p->app_key);
	p->app_name = xstrdup(name ? name : "");
	p->app_key = id ? xstrdup(id) : NULL;
	p->user = user ? xstrdup(user) : NULL;
	p->attempt = att ? xstrdup(att) : NULL;
	p->app_start = jtime(p, ev, "Timestamp");
	return ensure_app(p);
}

static int event(struct sp *p, const char *name, json_t *ev)
{
	if (!strcmp(name, "SparkListenerTaskEnd"))
		return task_end(p, ev);
	if (!strcmp(name, "SparkListenerStageSubmitted"))
		return stage_submitted(p, ev);
	if (!strcmp(name, "SparkListenerStageCompleted"))
		return stage_completed(p, ev);
	if (!strcmp(name, "SparkListenerJobStart"))
		return job_start(p, ev);
	if (!strcmp(name, "SparkListenerJobEnd"))
		return job_end(p, ev);
	if (!strcmp(name, "SparkListenerApplicationStart"))
		return app_start(p, ev);
	if (!strcmp(name, "SparkListenerApplicationEnd")) {
		p->app_end = jtime(p, ev, "Timestamp");
		return ensure_app(p);
	}
	if (!strcmp(name, "SparkListenerLogStart")) {
		const char *v = jstr(ev, "Spark Version");
		if (v && !p->version)
			p->version = xstrdup(v);
		return 0;
	}
	if (!strcmp(name, "SparkListenerExecutorAdded")) {
		jtime(p, ev, "Timestamp");
		executor_host(p, jstr(ev, "Executor ID"),
			      jstr(json_object_get(ev, "Executor Info"), "Host"), 1);
		return 0;
	}
	if (!strcmp(name, "SparkListenerBlockManagerAdded")) {
		json_t *bm = json_object_get(ev, "Block Manager ID");
		executor_host(p, jstr(bm, "Executor ID"), jstr(bm, "Host"), 0);
		return 0;
	}
	diag_count(&p->dc, D_IGNORED_EVENT, 1, "%s", name);
	return 0;
}

static int imported(const char *name, size_t n)
{
	static const char *const names[] = {
	    "TaskEnd",	     "StageSubmitted",	 "StageCompleted", "JobStart",
	    "JobEnd",	     "ApplicationStart", "ApplicationEnd", "LogStart",
	    "ExecutorAdded", "BlockManagerAdded"};
	if (n < 13 || memcmp(name, "SparkListener", 13))
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strlen(names[i]) == n - 13 && !memcmp(name + 13, names[i], n - 13))
			return 1;
	return 0;
}

static int spark_name(const char *s, size_t n)
{
	return (n >= 13 && !memcmp(s, "SparkListener", 13)) ||
	       (n >= 17 && !memcmp(s, "org.apache.spark.", 17)) ||
	       (n >= 15 && !memcmp(s, "com.databricks.", 15)) || (n >= 3 && !memcmp(s, "DBC", 3));
}

static int line(struct sp *p, char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n)
		return 0; /* a blank line holds no record */
	/* most lines start {"Event":"Name": an event not imported is not parsed */
	static const char lead[] = "{\"Event\":\"";
	if (!strncmp(s + i, lead, sizeof(lead) - 1)) {
		const char *name = s + i + sizeof(lead) - 1;
		const char *q = memchr(name, '"', n - (size_t)(name - s));
		if (q && !memchr(name, '\\', (size_t)(q - name))) {
			size_t len = (size_t)(q - name);
			if (!imported(name, len)) {
				if (len == 22 && !memcmp(name, "SparkListenerTaskStart", 22))
					p->task_starts++;
				else
					diag_count(&p->dc, D_IGNORED_EVENT, 1, "%.*s", (int)len,
						   name);
				p->spark_events += spark_name(name, len);
				return 0;
			}
		}
	}
	json_error_t je;
	json_t *ev = json_loadb(s, n, 0, &je);
	const char *name = json_string_value(json_object_get(ev, "Event"));
	if (!json_is_object(ev) || !name) {
		json_decref(ev);
		goto bad;
	}
	if (!spark_name(name, strlen(name))) {
		diag_count(&p->dc, D_IGNORED_EVENT, 1, "%s", name); /* a listener of a plugin */
		json_decref(ev);
		return 0;
	}
	p->spark_events++;
	int rc =
	    !strcmp(name, "SparkListenerTaskStart") ? (p->task_starts++, 0) : event(p, name, ev);
	json_decref(ev);
	return rc;
bad:
	diag_count(&p->dc, D_BAD_LINE, 1, "line %lld: %.120s", (long long)p->lines.lineno, s);
	return 0;
}

/* ---- the whole file ---- */

/* Closes what the log left open, writes the application, the counts. */
static int finish(struct sp *p)
{
	int64_t part = 0;
	char *rolling = rolling_app_id(input_path(p->in), &part);
	int rolled = rolling != NULL;
	free(rolling);
	if (!p->app_id && ensure_app(p) < 0)
		return -1;
	int64_t open = 0;
	for (size_t i = 0; i < p->nstages; i++) {
		struct node *s = &p->stages[i];
		if (!s->open)
			continue;
		open++;
		/* its last finished task, not the log's last time: executor
		 * events may carry any clock */
		s->end = s->end ? s->end : s->cmax > s->start ? s->cmax : s->start;
		if (s->parent == -2) {
			s->open = 0;
			if (store_update_phase_window(p->st, s->phase_id, s->start,
						      s->end - s->start, s->children, p->err) < 0)
				return -1;
		} else if (write_stage(p, s) < 0) {
			return -1;
		}
	}
	for (size_t i = 0; i < p->njobs; i++) {
		struct node *j = &p->jobs[i];
		if (!j->open)
			continue;
		open++;
		j->end = j->end ? j->end : j->cmax > j->start ? j->cmax : j->start;
		if (write_job(p, j) < 0)
			return -1;
	}
	if (!p->app_end) {
		if (rolled)
			diag_count(&p->dc, D_ROLLED, open, "part %lld: %lld jobs and stages open",
				   (long long)part, (long long)open);
		else
			diag_count(&p->dc, D_TRUNCATED, open + 1,
				   "last event at %lld ms, %lld jobs and stages"
				   " open",
				   (long long)(p->tmax / 1000000), (long long)open);
	}
	if (write_app(p) < 0 || store_refresh_window(p->st, p->step_id, p->err) < 0)
		return -1;
	if (p->task_starts > p->task_ends && !p->continued && (p->app_end || !rolled))
		diag_count(&p->dc, D_UNFINISHED_TASK, p->task_starts - p->task_ends, NULL);
	if (p->lines.skipped_long)
		diag_count(&p->dc, D_LONG_LINE, p->lines.skipped_long, "line %lld",
			   (long long)p->lines.first_long);
	for (size_t i = 0; i < p->nexecs; i++)
		if (p->execs[i].track_id && store_set_track_spans(p->st, p->execs[i].track_id,
								  p->execs[i].spans, p->err) < 0)
			return -1;
	if (diag_write(&p->dc, diag_info, D_COUNT, p->st, p->source_id, p->err) < 0)
		return -1;
	int64_t dropped = p->dc.n[D_BAD_LINE] + p->dc.n[D_LONG_LINE] + p->dc.n[D_UNFINISHED_TASK];
	return store_finish_source(p->st, p->source_id, p->phases, 0, 0, dropped, p->err);
}

static void release(struct sp *p)
{
	for (size_t i = 0; i < p->njobs; i++) {
		free(p->jobs[i].reason);
		free(p->jobs[i].name);
	}
	for (size_t i = 0; i < p->nstages; i++) {
		free(p->stages[i].name);
		free(p->stages[i].reason);
	}
	for (size_t i = 0; i < p->nexecs; i++)
		free(p->execs[i].host);
	diag_release(&p->dc);
	free(p->jobs);
	free(p->stages);
	free(p->execs);
	free(p->app_name);
	free(p->app_key);
	free(p->user);
	free(p->version);
	free(p->attempt);
	strmap_clear(&p->job_by_id);
	strmap_clear(&p->stage_job);
	strmap_clear(&p->stage_by_key);
	strmap_clear(&p->stage_last);
	strmap_clear(&p->exec_by_id);
	sqlite3_finalize(p->edge);
	sbuf_release(&p->attrs);
	sbuf_release(&p->name);
	sbuf_release(&p->key);
	lines_release(&p->lines);
}

int spark_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct sp p;
	memset(&p, 0, sizeof(p));
	p.st = st;
	p.o = o;
	p.in = in;
	p.err = err;
	sbuf_init(&p.attrs);
	sbuf_init(&p.name);
	sbuf_init(&p.key);
	lines_init(&p.lines, in);
	p.lines.skip_long = 1;
	int rc = -1;
	struct source_row src = {.path = input_path(in),
				 .format = "spark",
				 .compression = input_codec_name(input_codec(in)),
				 .anchor = o->has_time_offset ? "time-offset" : "absolute",
				 .size_bytes = (int64_t)input_file_size(in),
				 .time_offset_ns = o->has_time_offset ? o->time_offset_ns : 0,
				 .rank = -1,
				 .host = o->host};
	if ((p.source_id = store_add_source(st, &src, err)) < 0)
		goto out;
	if (sqlite3_prepare_v2(store_db(st),
			       "INSERT INTO edges(src, dst, kind) VALUES (?1, ?2, ?3)", -1, &p.edge,
			       NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot prepare: %s", input_path(in),
				 sqlite3_errmsg(store_db(st)));
		goto out;
	}
	char *s;
	size_t n;
	int r;
	while ((r = lines_next(&p.lines, &s, &n, err)) > 0)
		if (line(&p, s, n) < 0)
			goto out;
	if (r < 0)
		goto out;
	if (!p.spark_events) {
		*err = xasprintf("%s:%lld: not a Spark event log: no line is a SparkListener event",
				 input_path(in), (long long)p.lines.lineno);
		goto out;
	}
	rc = finish(&p);
out:
	release(&p);
	return rc;
}

int spark_sniff(const unsigned char *b, size_t n)
{
	size_t i, end;
	if (!sniff_json_line(b, n, &i, &end))
		return 0;
	static const char key[] = "\"Event\"";
	for (size_t j = i; j + sizeof(key) - 1 <= end; j++) {
		if (memcmp(b + j, key, sizeof(key) - 1))
			continue;
		size_t k = j + sizeof(key) - 1;
		while (k < end && (b[k] == ' ' || b[k] == ':' || b[k] == '\t'))
			k++;
		if (k < end && b[k] == '"' && spark_name((const char *)b + k + 1, end - k - 1))
			return 95;
	}
	return 0;
}
