/*
 * Workflow manifests (JSON lines, one step a line) into the phase tree:
 * workflow -> step [-> nested step].
 *
 * Each line is parsed alone (jansson) and its step kept in memory until the
 * end of the file, since a step may name a parent or a dependency written
 * after it; memory follows the number of steps, which a manifest keeps
 * small.  At the end every step is found or created by name (a step an
 * earlier import made is reused, so a manifest may come before or after the
 * traces of its steps): without "parent" directly under the workflow, with
 * one under its parent's node.  Its attrs get the line's other keys (host,
 * pid, ...) and {"manifest":{"start":NS,"end":NS}}, the window the line
 * declares, which the step keeps whatever is imported under it later
 * (store_refresh_window).  "depends_on" becomes EDGE_STEP_ORDER edges from
 * each dependency to the step, once however often the manifest is
 * imported.  A step's host also becomes a track of kind "host", the step's
 * track.  --time-offset shifts every time.
 *
 * Times are integer ns since the epoch, ISO-8601 strings, or epoch seconds
 * as a JSON number with a fraction (time.time()).
 *
 * Repairs, counted in diagnostics: lines that are not a JSON object with a
 * string "step" are skipped (BAD_LINE); a repeated step name keeps the
 * first line (DUP_STEP); a step without a usable start and end is created
 * without a window (BAD_TIME); an unknown or cyclic parent puts the step
 * under the workflow (BAD_PARENT); an unknown dependency is dropped
 * (BAD_DEPENDENCY).  A file with no step line at all is an error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "importers/diag.h"
#include "importers/lines.h"
#include "importers/sniff.h"
#include "importers/workflow.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/util/xalloc.h"

#define DIAG_LIST(X)                                                                               \
	X(BAD_LINE, "lines that are not a JSON object with a string \"step\": skipped")            \
	X(LONG_LINE, "lines longer than 1 MB: skipped unread")                                     \
	X(DUP_STEP, "steps named again in the same manifest: the first line kept")                 \
	X(BAD_TIME, "steps without a usable start and end (ns integer, ISO-8601 or epoch seconds"  \
		    " with a fraction): no window")                                                \
	X(BAD_PARENT, "steps whose parent is not in the manifest or is their own descendant:"      \
		      " put under the workflow")                                                   \
	X(BAD_DEPENDENCY, "depends_on entries that name no step of the manifest: dropped")

DIAG_TABLE(DIAG_LIST);

struct wstep {
	char *name, *parent, *host;
	char *attrs; /* the line's other keys, compact JSON */
	json_t *deps;
	int64_t start, end; /* end < start: no window */
	int64_t line;
	int64_t id;
	int depth;
	int state; /* 0: not placed, 1: being placed, 2: placed */
};

struct wf {
	struct store *st;
	const struct import_opts *o;
	struct input *in;
	char **err;
	struct lines lines;
	int64_t source_id;
	struct wstep *steps;
	size_t nsteps, csteps;
	struct strmap by_name, host_track;
	int64_t created;
	struct diag_counts dc;
};

/* ---- times ---- */

static int digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++, (*s)++) {
		if (**s < '0' || **s > '9')
			return -1;
		v = v * 10 + (**s - '0');
	}
	*out = v;
	return 0;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant, "chrono-compatible low-level date algorithms"). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int iso_time(const char *s, int64_t *ns)
{
	int y, mo, d, h, mi, sec;
	if (digits(&s, 4, &y) < 0 || *s++ != '-' || digits(&s, 2, &mo) < 0 || *s++ != '-' ||
	    digits(&s, 2, &d) < 0 || (*s != 'T' && *s != 't' && *s != ' '))
		return -1;
	s++;
	if (digits(&s, 2, &h) < 0 || *s++ != ':' || digits(&s, 2, &mi) < 0 || *s++ != ':' ||
	    digits(&s, 2, &sec) < 0)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	int64_t frac = 0;
	if (*s == '.' || *s == ',') {
		s++;
		int n = 0;
		for (; *s >= '0' && *s <= '9'; s++, n++)
			if (n < 9)
				frac = frac * 10 + (*s - '0');
		if (!n)
			return -1;
		for (; n < 9; n++)
			frac *= 10;
	}
	int64_t zone = 0;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1, zh, zm;
		if (digits(&s, 2, &zh) < 0)
			return -1;
		if (*s == ':')
			s++;
		if (digits(&s, 2, &zm) < 0 || zh > 23 || zm > 59)
			return -1;
		zone = sign * (zh * 3600 + zm * 60);
	}
	if (*s)
		return -1;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - zone;
	if (secs <= 0 || secs > INT64_MAX / 1000000000 - 1)
		return -1;
	*ns = secs * 1000000000 + frac;
	return 0;
}

int workflow_time(json_t *v, int64_t *ns)
{
	if (json_is_integer(v)) {
		*ns = (int64_t)json_integer_value(v);
		return *ns > 0 ? 0 : -1;
	}
	const char *s = json_string_value(v);
	if (!s || !*s)
		return -1;
	if (strlen(s) > 4 && s[4] == '-')
		return iso_time(s, ns);
	int64_t t = 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9' || __builtin_mul_overflow(t, 10, &t) ||
		    __builtin_add_overflow(t, *s - '0', &t))
			return -1;
	*ns = t;
	return t > 0 ? 0 : -1;
}

/* A manifest's time: workflow_time's, or epoch seconds as a JSON real,
 * what Python's time.time() writes (a double: about 0.2 us apart today). */
static int manifest_time(json_t *v, int64_t *ns)
{
	if (!json_is_real(v))
		return workflow_time(v, ns);
	double s = json_real_value(v), whole = floor(s);
	if (!(s > 0) || s >= (double)(INT64_MAX / 1000000000 - 1))
		return -1;
	*ns = (int64_t)whole * 1000000000 + (int64_t)llround((s - whole) * 1e9);
	return 0;
}

/* ---- the store ---- */

int workflow_mark_step(struct store *st, int64_t id, const char *attrs, int64_t start, int64_t end,
		       char **err)
{
	json_t *patch = attrs ? json_loads(attrs, 0, NULL) : json_object();
	if (!json_is_object(patch)) {
		json_decref(patch);
		patch = json_object();
	}
	if (end >= start)
		json_object_set_new(
		    patch, "manifest",
		    json_pack("{sIsI}", "start", (json_int_t)start, "end", (json_int_t)end));
	char *text = json_dumps(patch, JSON_COMPACT);
	json_decref(patch);
	sqlite3_stmt *s = NULL;
	int rc = -1;
	if (!text) {
		*err = xasprintf("%s: cannot write the attrs of a step", store_path(st));
		return -1;
	}
	if (sqlite3_prepare_v2(store_db(st),
			       "UPDATE phases SET attrs = json_patch(CASE WHEN json_valid(attrs)"
			       " THEN attrs ELSE '{}' END, ?2) WHERE id = ?1",
			       -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE)
		goto fail;
	rc = 0;
	goto out;
fail:
	*err =
	    xasprintf("%s: cannot update a step: %s", store_path(st), sqlite3_errmsg(store_db(st)));
out:
	sqlite3_finalize(s);
	free(text);
	return rc;
}

int workflow_widen_step(struct store *st, int64_t id, int64_t start, int64_t end, char **err)
{
	int64_t ds, de;
	int d = store_declared_window(st, id, &ds, &de, err);
	if (d < 0 || d == 2) /* a recorded phase (an OTLP span): its own window */
		return d < 0 ? -1 : 0;
	if (d) {
		start = ds < start ? ds : start;
		end = de > end ? de : end;
	}
	return workflow_mark_step(st, id, NULL, start, end, err);
}

/* One statement with two or three int64 parameters; 1 when it returned a
 * row, 0 when none, -1 with *err. */
static int run3(struct wf *p, const char *sql, int64_t a, int64_t b, int64_t c)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(store_db(p->st), sql, -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	if (sqlite3_bind_parameter_count(s) >= 3)
		sqlite3_bind_int64(s, 3, c);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return rc == SQLITE_ROW;
fail:
	*p->err = xasprintf("%s: cannot write steps: %s", input_path(p->in),
			    sqlite3_errmsg(store_db(p->st)));
	return -1;
}

/* ---- lines ---- */

static int line(struct wf *p, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == n)
		return 0;
	json_error_t je;
	json_t *obj = json_loadb(s, n, 0, &je);
	const char *name = json_string_value(json_object_get(obj, "step"));
	if (!json_is_object(obj) || !name || !*name) {
		diag_count(&p->dc, D_BAD_LINE, 1, "line %lld: %.120s", (long long)p->lines.lineno,
			   s);
		json_decref(obj);
		return 0;
	}
	int created;
	struct strmap_ent *e =
	    strmap_put(&p->by_name, name, strlen(name), (int64_t)p->nsteps, &created);
	if (!created) {
		diag_count(&p->dc, D_DUP_STEP, 1, "line %lld: step '%s' (first on line %lld)",
			   (long long)p->lines.lineno, name, (long long)p->steps[e->value].line);
		json_decref(obj);
		return 0;
	}
	XGROW(p->steps, p->nsteps + 1, p->csteps);
	struct wstep *w = &p->steps[p->nsteps++];
	memset(w, 0, sizeof(*w));
	w->name = xstrdup(name);
	w->line = p->lines.lineno;
	json_t *sv = json_object_get(obj, "start"), *ev = json_object_get(obj, "end");
	sv = sv ? sv : json_object_get(obj, "start_ns");
	ev = ev ? ev : json_object_get(obj, "end_ns");
	int64_t off = p->o->has_time_offset ? p->o->time_offset_ns : 0;
	if (manifest_time(sv, &w->start) < 0 || manifest_time(ev, &w->end) < 0 ||
	    w->end < w->start || __builtin_add_overflow(w->start, off, &w->start) ||
	    __builtin_add_overflow(w->end, off, &w->end)) {
		diag_count(&p->dc, D_BAD_TIME, 1, "line %lld: step '%s'", (long long)w->line, name);
		w->start = 1;
		w->end = 0;
	}
	const char *parent = json_string_value(json_object_get(obj, "parent"));
	w->parent = parent && *parent ? xstrdup(parent) : NULL;
	const char *host = json_string_value(json_object_get(obj, "host"));
	w->host = host && *host ? xstrdup(host) : NULL;
	w->deps = json_incref(json_object_get(obj, "depends_on"));
	static const char *const own[] = {"step",   "start",  "end",	    "start_ns",
					  "end_ns", "parent", "depends_on", "manifest"};
	for (size_t k = 0; k < sizeof(own) / sizeof(*own); k++)
		json_object_del(obj, own[k]);
	w->attrs = json_object_size(obj) ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	return 0;
}

/* ---- the tree ---- */

int64_t workflow_host_track(struct store *st, int64_t source_id, struct strmap *tracks,
			    const char *host, char **err)
{
	int created;
	struct strmap_ent *e = strmap_put(tracks, host, strlen(host), 0, &created);
	if (created) {
		struct track_row t = {.source_id = source_id,
				      .kind = "host",
				      .name = host,
				      .host = host,
				      .rank = -1,
				      .sort_index = (int64_t)tracks->n};
		e->value = store_add_track(st, &t, err);
	}
	return e->value;
}

int workflow_step_track(struct store *st, int64_t step_id, int64_t track_id, char **err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(store_db(st),
			       "UPDATE phases SET track_id = ?2 WHERE id = ?1 AND track_id IS NULL",
			       -1, &s, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(s, 1, step_id);
	sqlite3_bind_int64(s, 2, track_id);
	int rc = sqlite3_step(s);
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE)
		return 0;
fail:
	*err =
	    xasprintf("%s: cannot update a step: %s", store_path(st), sqlite3_errmsg(store_db(st)));
	return -1;
}

/* Finds or creates step i, whose parent (if any) is placed. */
static int make_step(struct wf *p, struct wstep *w, const struct wstep *parent)
{
	if (!parent) {
		w->id = import_step_node(p->st, p->o, w->name, p->err);
		w->depth = 1;
		if (w->id < 0)
			return -1;
		w->state = 2;
		return 0;
	}
	w->depth = parent->depth + 1;
	w->id = store_find_child(p->st, parent->id, PHASE_STEP, w->name, p->err);
	if (w->id < 0)
		return -1;
	if (!w->id) {
		struct phase_row r = {.id = store_reserve_phase_id(p->st),
				      .parent_id = parent->id,
				      .kind = PHASE_STEP,
				      .source_id = p->source_id,
				      .depth = w->depth};
		r.name_id = store_intern(p->st, w->name, strlen(w->name), p->err);
		if (r.name_id < 0 || store_add_phase(p->st, &r, p->err) < 0)
			return -1;
		w->id = r.id;
		p->created++;
	}
	w->state = 2;
	return 0;
}

/* Places step i after its chain of parents, without recursion: the chain
 * is walked up to a placed step or a top-level one, then placed down. */
static int place(struct wf *p, size_t i)
{
	size_t *chain = NULL, n = 0, cap = 0;
	int rc = -1;
	size_t j = i;
	for (;;) {
		struct wstep *w = &p->steps[j];
		if (w->state == 2)
			break;
		XGROW(chain, n + 1, cap);
		chain[n++] = j;
		w->state = 1;
		struct strmap_ent *e =
		    w->parent ? strmap_get(&p->by_name, w->parent, strlen(w->parent)) : NULL;
		if (w->parent && (!e || p->steps[e->value].state == 1)) {
			diag_count(&p->dc, D_BAD_PARENT, 1, "line %lld: step '%s', parent '%s'",
				   (long long)w->line, w->name, w->parent);
			free(w->parent);
			w->parent = NULL;
		}
		if (!w->parent)
			break;
		j = (size_t)e->value;
	}
	while (n--) {
		struct wstep *w = &p->steps[chain[n]];
		struct wstep *parent =
		    w->parent
			? &p->steps[strmap_get(&p->by_name, w->parent, strlen(w->parent))->value]
			: NULL;
		if (make_step(p, w, parent) < 0)
			goto out;
	}
	rc = 0;
out:
	free(chain);
	return rc;
}

static int finish_step(struct wf *p, struct wstep *w)
{
	if (workflow_mark_step(p->st, w->id, w->attrs, w->start, w->end, p->err) < 0)
		return -1;
	if (w->host) {
		int64_t t =
		    workflow_host_track(p->st, p->source_id, &p->host_track, w->host, p->err);
		if (t < 0 || workflow_step_track(p->st, w->id, t, p->err) < 0)
			return -1;
	}
	size_t nd = json_array_size(w->deps);
	for (size_t k = 0; k < nd; k++) {
		const char *dep = json_string_value(json_array_get(w->deps, k));
		struct strmap_ent *e = dep ? strmap_get(&p->by_name, dep, strlen(dep)) : NULL;
		if (!e) {
			diag_count(&p->dc, D_BAD_DEPENDENCY, 1,
				   "line %lld: step '%s' depends on '%s'", (long long)w->line,
				   w->name, dep ? dep : "(not a string)");
			continue;
		}
		int64_t src = p->steps[e->value].id;
		int had = run3(p, "SELECT 1 FROM edges WHERE src = ?1 AND dst = ?2 AND kind = ?3",
			       src, w->id, EDGE_STEP_ORDER);
		if (had < 0 ||
		    (!had && run3(p, "INSERT INTO edges(src, dst, kind) VALUES (?1, ?2, ?3)", src,
				  w->id, EDGE_STEP_ORDER) < 0))
			return -1;
	}
	if (w->deps && !json_is_array(w->deps))
		diag_count(&p->dc, D_BAD_DEPENDENCY, 1,
			   "line %lld: step '%s': depends_on is not an array", (long long)w->line,
			   w->name);
	return 0;
}

static int finish(struct wf *p)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (place(p, i) < 0)
			return -1;
	const char *first_host = NULL;
	for (size_t i = 0; i < p->nsteps; i++) {
		if (finish_step(p, &p->steps[i]) < 0)
			return -1;
		first_host = first_host ? first_host : p->steps[i].host;
	}
	for (size_t i = 0; i < p->nsteps; i++)
		if (store_refresh_window(p->st, p->steps[i].id, p->err) < 0)
			return -1;
	if (p->lines.skipped_long) {
		diag_count(&p->dc, D_LONG_LINE, 1, "line %lld", (long long)p->lines.first_long);
		p->dc.n[D_LONG_LINE] = p->lines.skipped_long;
	}
	if (first_host &&
	    store_set_source_anchor(
		p->st, p->source_id, p->o->has_time_offset ? "time-offset" : "absolute",
		p->o->has_time_offset ? p->o->time_offset_ns : 0, -1, first_host, NULL, p->err) < 0)
		return -1;
	if (diag_write(&p->dc, diag_info, D_COUNT, p->st, p->source_id, p->err) < 0)
		return -1;
	return store_finish_source(p->st, p->source_id, (int64_t)p->nsteps, 0, 0,
				   p->dc.n[D_BAD_LINE] + p->dc.n[D_LONG_LINE] + p->dc.n[D_DUP_STEP],
				   p->err);
}

static void release(struct wf *p)
{
	for (size_t i = 0; i < p->nsteps; i++) {
		struct wstep *w = &p->steps[i];
		free(w->name);
		free(w->parent);
		free(w->host);
		free(w->attrs);
		json_decref(w->deps);
	}
	free(p->steps);
	diag_release(&p->dc);
	strmap_clear(&p->by_name);
	strmap_clear(&p->host_track);
	lines_release(&p->lines);
}

int workflow_import(struct input *in, struct store *st, const struct import_opts *o, char **err)
{
	struct wf p;
	memset(&p, 0, sizeof(p));
	p.st = st;
	p.o = o;
	p.in = in;
	p.err = err;
	lines_init(&p.lines, in);
	p.lines.skip_long = 1;
	int rc = -1;
	struct source_row src = {.path = input_path(in),
				 .format = "workflow",
				 .compression = input_codec_name(input_codec(in)),
				 .anchor = o->has_time_offset ? "time-offset" : "absolute",
				 .size_bytes = (int64_t)input_file_size(in),
				 .time_offset_ns = o->has_time_offset ? o->time_offset_ns : 0,
				 .rank = -1,
				 .host = o->host};
	if ((p.source_id = store_add_source(st, &src, err)) < 0)
		goto out;
	char *s;
	size_t n;
	int r;
	while ((r = lines_next(&p.lines, &s, &n, err)) > 0)
		if (line(&p, s, n) < 0)
			goto out;
	if (r < 0)
		goto out;
	if (!p.nsteps) {
		*err = xasprintf("%s:%lld: not a workflow manifest: no line is a JSON object with a"
				 " string \"step\"",
				 input_path(in), (long long)p.lines.lineno);
		goto out;
	}
	rc = finish(&p);
out:
	release(&p);
	return rc;
}

/* The first line: a JSON object with "step" and "start" or "start_ns". */
int workflow_sniff(const unsigned char *b, size_t n)
{
	size_t i, end;
	if (!sniff_json_line(b, n, &i, &end))
		return 0;
	json_t *obj = json_loadb((const char *)b + i, end - i, 0, NULL);
	int score = json_is_string(json_object_get(obj, "step")) &&
			    (json_object_get(obj, "start") || json_object_get(obj, "start_ns"))
			? 90
			: 0;
	json_decref(obj);
	return score;
}
