/*
 * One `grademl-tui import` run: open the store, begin the transaction, run
 * the importer of each file, commit; on any failure, a signal's included
 * (store_interrupt), roll everything back so trace.db is exactly as it was.  Also the workflow/step
 * nodes every source hangs under: --step PATH names a phase below the
 * workflow by the names of its levels (a first level naming the workflow
 * itself is skipped), found whatever its kind (a manifest step, an OTLP
 * span) and made a step where none is; a source imported under one that ran
 * on a known host and naming no host itself takes that host.  And the rank
 * a trace's file name says, for traces that name none (importers/chrome.c).
 * A live Prometheus pull (--prometheus) comes after the files, in the same
 * transaction, so that it finds the window of a manifest imported with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "importers/hosts.h"
#include "importers/importer.h"
#include "importers/promlive.h"
#include "importers/tally.h"
#include "model/store/col.h"
#include "model/util/sbuf.h"
#include "model/util/text.h"
#include "model/util/timing.h"
#include "model/util/xalloc.h"

/* The step named name under parent (depth of the new node: depth), made
 * when missing; with any, a phase of any kind so named when there is no
 * such step.  Its id, or -1. */
static int64_t step_under(struct store *st, int64_t parent, const char *name, int depth, int any,
			  char **err)
{
	int64_t id = store_find_child(st, parent, PHASE_STEP, name, err);
	if (!id && any)
		id = store_find_child(st, parent, 0, name, err);
	if (id)
		return id;
	struct phase_row r = {.id = store_reserve_phase_id(st),
			      .parent_id = parent,
			      .kind = PHASE_STEP,
			      .depth = depth};
	r.name_id = store_intern(st, name, strlen(name), err);
	if (r.name_id < 0 || store_add_phase(st, &r, err) < 0)
		return -1;
	return r.id;
}

int64_t import_step_node(struct store *st, const struct import_opts *o, const char *step_name,
			 char **err)
{
	char *wf = text_utf8_dup(o->workflow ? o->workflow : "workflow");
	char *step = text_utf8_dup(step_name);
	int64_t rc = -1;
	int64_t wf_id = store_find_child(st, 0, PHASE_WORKFLOW, wf, err);
	if (wf_id < 0)
		goto out;
	if (!wf_id) {
		struct phase_row r = {.id = store_reserve_phase_id(st), .kind = PHASE_WORKFLOW};
		r.name_id = store_intern(st, wf, strlen(wf), err);
		if (r.name_id < 0 || store_add_phase(st, &r, err) < 0)
			goto out;
		wf_id = r.id;
	}
	/* --step a/b/c is a path; a name from a file is one step whatever it
	 * holds */
	if (!o->step || strcmp(step_name, o->step)) {
		rc = step_under(st, wf_id, step, 1, 0, err);
		goto out;
	}
	char *parts[64], *save = NULL;
	size_t n = 0;
	for (char *part = strtok_r(step, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		if (n == sizeof(parts) / sizeof(*parts)) {
			*err = xasprintf("--step '%s': more than %zu levels", o->step, n);
			goto out;
		}
		parts[n++] = part;
	}
	size_t first = 0;
	if (n > 1 && !strcmp(parts[0], wf)) {
		/* "/workflow/step/...", as the explorer writes paths */
		int64_t own = store_find_child(st, wf_id, 0, parts[0], err);
		if (own < 0)
			goto out;
		first = !own;
	}
	rc = wf_id;
	for (size_t i = first; i < n && rc >= 0; i++)
		rc = step_under(st, rc, parts[i], (int)(i - first) + 1, 1, err);
	if (rc == wf_id) {
		*err = xasprintf("--step '%s' names no step", o->step);
		rc = -1;
	}
out:
	free(wf);
	free(step);
	return rc;
}

static int name_alnum(char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* Whether the n bytes at s spell word, case aside. */
static int name_is(const char *s, size_t n, const char *word)
{
	if (strlen(word) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((s[i] | 0x20) != word[i])
			return 0;
	return 1;
}

int import_rank_of_name(const char *path, int *rank, int *other)
{
	static const char *const keys[] = {"rank", "worker"};
	const char *b = input_base_name(path);
	size_t n = strlen(b);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && name_alnum(b[i - 1]))
			continue; /* a word starts here, or nothing does */
		for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
			size_t kl = strlen(keys[k]), j = i + kl, d;
			if (j > n || !name_is(b + i, kl, keys[k]))
				continue;
			/* the word before: "local" makes a node's rank, not the job's */
			size_t w = i ? i - 1 : 0, w0 = w;
			while (w0 && name_alnum(b[w0 - 1]))
				w0--;
			if (i && name_is(b + w0, w - w0, "local"))
				continue;
			if (j < n && (b[j] == '-' || b[j] == '_'))
				j++;
			for (d = j; d < n && b[d] >= '0' && b[d] <= '9'; d++)
				;
			if (d == j || d - j > 9 || (d < n && name_alnum(b[d])))
				continue;
			int r = atoi(b + j);
			if (!found) {
				*rank = r;
				found = 1;
			} else if (r != *rank) {
				*other = r;
				return -1;
			}
		}
	}
	return found;
}

/* The common prefix of the files' base names, for a step shared by ranks. */
static char *group_step_name(char *const *paths, size_t n)
{
	const char *first = input_base_name(paths[0]);
	size_t len = strlen(first);
	for (size_t i = 1; i < n; i++) {
		const char *b = input_base_name(paths[i]);
		size_t k = 0;
		while (k < len && b[k] == first[k])
			k++;
		len = k;
	}
	while (len && strchr("0123456789._-", first[len - 1]))
		len--;
	return len ? xstrndup(first, len) : xstrdup("ranks");
}

/* Every error of a file's import names the file: those raised below the
 * importer (a sort file that cannot be made, the store) do not know it. */
static void name_file(char **err, const char *path)
{
	size_t n = strlen(path);
	if (!*err || (strncmp(*err, path, n) == 0 && (*err)[n] == ':'))
		return;
	char *e = xasprintf("%s: %s", path, *err);
	free(*err);
	*err = e;
}

/* One int64 from a query with up to two int64 parameters; *out 0 when no
 * row.  0, or -1 with *err. */
static int query_int(struct store *st, const char *sql, int64_t a, int64_t b, int64_t *out,
		     char **err)
{
	sqlite3_stmt *q;
	*out = 0;
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL) != SQLITE_OK)
		goto fail;
	if (sqlite3_bind_parameter_count(q) >= 1)
		sqlite3_bind_int64(q, 1, a);
	if (sqlite3_bind_parameter_count(q) >= 2)
		sqlite3_bind_int64(q, 2, b);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		*out = col_int(q, 0);
	sqlite3_finalize(q);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
fail:
	*err =
	    xasprintf("%s: cannot read phases: %s", store_path(st), sqlite3_errmsg(store_db(st)));
	return -1;
}

/* Importers place a source's nodes below a top-level step (depth 1); under
 * --step PATH they sit below the phase it names, deeper by its depth less
 * one, so the source's rows just written are shifted.  Names come from the
 * file, so only the levels of --step count. */
static int nest_depths(struct store *st, const struct import_opts *o, int64_t target, char **err)
{
	int64_t depth;
	if (!o->step ||
	    query_int(st, "SELECT depth FROM phases WHERE id = ?1", target, 0, &depth, err) < 0)
		return o->step ? -1 : 0;
	if (depth <= 1)
		return 0;
	char *sql = xasprintf("UPDATE phases SET depth = depth + %lld WHERE kind <> %d AND"
			      " source_id = (SELECT max(id) FROM sources)",
			      (long long)depth - 1, PHASE_STEP);
	int rc = store_exec(st, sql, err);
	free(sql);
	return rc;
}

/* The host of phase id: its track's, else its attrs' "host" (an OTLP span's
 * host.name), else its nearest ancestor's; NULL when none names one. */
static char *phase_host(struct store *st, int64_t id, char **err)
{
	sqlite3_stmt *q;
	char *host = NULL;
	if (sqlite3_prepare_v2(
		store_db(st),
		"WITH RECURSIVE up(id, d) AS (SELECT ?1, 0 UNION ALL SELECT p.parent_id, up.d + 1"
		" FROM phases p JOIN up ON p.id = up.id WHERE p.parent_id IS NOT NULL AND"
		" up.d < 256) SELECT h FROM (SELECT up.d, coalesce((SELECT host FROM tracks"
		" WHERE id = p.track_id), CASE WHEN json_valid(p.attrs) THEN"
		" json_extract(p.attrs, '$.host') END) AS h FROM up JOIN phases p ON"
		" p.id = up.id) WHERE typeof(h) = 'text' ORDER BY d LIMIT 1",
		-1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read phases: %s", store_path(st),
				 sqlite3_errmsg(store_db(st)));
		return NULL;
	}
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW)
		host = col_strdup(q, 0);
	sqlite3_finalize(q);
	return host;
}

/* The source just imported under target, when it names no host, takes
 * the host target ran on: its row, its tracks and its metrics. */
static int inherit_host(struct store *st, const struct import_opts *o, int64_t target, char **err)
{
	if (!o->step || o->host)
		return 0;
	char *e = NULL, *host = phase_host(st, target, &e);
	if (!host) {
		free(e);
		return 0;
	}
	int rc = 0;
	static const char *const sql[] = {
	    "UPDATE sources SET host = ?1 WHERE id = (SELECT max(id) FROM sources) AND host IS "
	    "NULL",
	    "UPDATE tracks SET host = ?1 WHERE source_id = (SELECT max(id) FROM sources) AND"
	    " host IS NULL",
	    "UPDATE metrics SET host = ?1 WHERE source_id = (SELECT max(id) FROM sources) AND"
	    " host IS NULL"};
	for (size_t i = 0; i < sizeof(sql) / sizeof(*sql) && !rc; i++) {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(store_db(st), sql[i], -1, &q, NULL) != SQLITE_OK) {
			rc = -1;
			break;
		}
		sqlite3_bind_text(q, 1, host, -1, SQLITE_STATIC);
		rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
		sqlite3_finalize(q);
	}
	if (rc < 0)
		*err = xasprintf("%s: cannot set the host of a source: %s", store_path(st),
				 sqlite3_errmsg(store_db(st)));
	free(host);
	return rc;
}

/* Windows farther apart than this under one workflow are worth a word. */
#define FAR_APART_NS ((int64_t)30 * 86400 * 1000000000)

/* A node of a workflow's upper levels: workflow, steps, spans, ranks and
 * the nodes under them, down to a trace's process nodes. */
struct upper {
	int64_t id, parent, root, source, start, end;
	int kind, inner; /* inner: it has an upper node under it */
};

static int by_root_start(const void *a, const void *b)
{
	const struct upper *x = a, *y = b;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_id(const void *a, const void *b)
{
	const struct upper *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void utc(char *buf, size_t n, int64_t ns)
{
	time_t s = (time_t)(ns / 1000000000 - (ns % 1000000000 < 0));
	struct tm tm;
	if (!gmtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "%lld ns", (long long)ns);
}

/* After the run's files: under each workflow, the innermost of its upper
 * nodes (a trace's process or rank node, a step or span with nothing
 * traced beneath) sorted by start; where the next begins more than
 * FAR_APART_NS after all before it ended, and one side came in this run
 * (id >= first), a FAR_APART diagnostic on that side's source (the run's
 * last source when it has none): a relative trace anchored nowhere lands
 * in 1970 and stretches its workflow over decades. */
static int far_apart(struct store *st, int64_t first, char **err)
{
	static const char sql[] =
	    "WITH RECURSIVE u(id, parent, root, kind) AS (SELECT id, 0, id, kind FROM phases"
	    " WHERE parent_id IS NULL AND kind = ?1 UNION ALL SELECT p.id, u.id, u.root, p.kind"
	    " FROM phases p JOIN u ON p.parent_id = u.id WHERE u.kind IN (?1, ?2, ?3, ?4)"
	    " AND p.kind <> ?5)"
	    " SELECT u.id, u.parent, u.root, coalesce(p.source_id, 0), p.start_ns,"
	    " p.start_ns + p.dur_ns, u.kind FROM u JOIN phases p ON p.id = u.id";
	sqlite3_stmt *q;
	struct upper *v = NULL;
	size_t n = 0, alloc = 0;
	int rc = -1;
	if (store_index_now(st, err) < 0)
		return -1;
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int(q, 1, PHASE_WORKFLOW);
	sqlite3_bind_int(q, 2, PHASE_STEP);
	sqlite3_bind_int(q, 3, PHASE_SPAN);
	sqlite3_bind_int(q, 4, PHASE_RANK);
	sqlite3_bind_int(q, 5, PHASE_GPU_ANNOTATION);
	int r;
	while ((r = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(v, n + 1, alloc);
		v[n++] =
		    (struct upper){col_int(q, 0), col_int(q, 1), col_int(q, 2),	  col_int(q, 3),
				   col_int(q, 4), col_int(q, 5), col_int32(q, 6), 0};
	}
	sqlite3_finalize(q);
	if (r != SQLITE_DONE)
		goto fail;
	rc = 0;
	if (!n)
		goto out;
	rc = -1;
	qsort(v, n, sizeof(*v), by_id);
	for (size_t i = 0; i < n; i++) {
		struct upper key = {.id = v[i].parent}, *up;
		if (v[i].parent && (up = bsearch(&key, v, n, sizeof(*v), by_id)))
			up->inner = 1;
	}
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (!v[i].inner && v[i].kind != PHASE_WORKFLOW && v[i].end > v[i].start)
			v[w++] = v[i];
	qsort(v, w, sizeof(*v), by_root_start);
	for (size_t i = 1, last = 0; i < w; i++) {
		if (v[i].root != v[last].root) {
			last = i;
			continue;
		}
		const struct upper *a = &v[last], *b = &v[i];
		if (b->start - a->end > FAR_APART_NS && (a->id >= first || b->id >= first)) {
			const struct upper *mine = b->id >= first ? b : a;
			int64_t src = mine->source;
			if (!src &&
			    query_int(st, "SELECT max(id) FROM sources", 0, 0, &src, err) < 0)
				goto out;
			char ta[32], tb[32];
			utc(ta, sizeof(ta), a->end);
			utc(tb, sizeof(tb), b->start);
			struct sbuf ex = SBUF_INIT;
			sbuf_init(&ex);
			char *na = store_phase_name(st, a->id, 80),
			     *nb = store_phase_name(st, b->id, 80);
			sbuf_addf(&ex,
				  "'%s' ends %s, then nothing until '%s' begins %s (%lld days)", na,
				  ta, nb, tb,
				  (long long)((b->start - a->end) / ((int64_t)86400 * 1000000000)));
			free(na);
			free(nb);
			int d = store_add_diagnostic(
			    st, src, "FAR_APART", 1,
			    "phases of one workflow lie more than 30 days apart: a trace with"
			    " relative times anchored nowhere? (--time-offset, or --step onto a"
			    " phase with a window)",
			    ex.buf, err);
			sbuf_release(&ex);
			if (d < 0)
				goto out;
		}
		if (b->end > a->end)
			last = i;
	}
	rc = 0;
	goto out;
fail:
	*err =
	    xasprintf("%s: cannot read phases: %s", store_path(st), sqlite3_errmsg(store_db(st)));
out:
	free(v);
	return rc;
}

/* The run's last source, when another of its sources since first_src has
 * its rank: they share one step, where two rank nodes of one number are
 * two captures of one rank (or two jobs), not two ranks that meet. */
static int repeated_rank(struct store *st, int64_t first_src, char **err)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT me.id, me.rank, s.path FROM sources me JOIN sources s"
			       " ON s.rank = me.rank AND s.id >= ?1 AND s.id < me.id"
			       " WHERE me.id = (SELECT max(id) FROM sources) ORDER BY s.id LIMIT 1",
			       -1, &q, NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read sources: %s", store_path(st),
				 sqlite3_errmsg(store_db(st)));
		return -1;
	}
	sqlite3_bind_int64(q, 1, first_src);
	int rc = 0;
	if (sqlite3_step(q) == SQLITE_ROW) {
		char *ex = xasprintf("rank %d, as %s", col_int32(q, 1), col_text(q, 2));
		rc = store_add_diagnostic(st, col_int(q, 0), "RANK_REPEATED", 1,
					  "another trace of this import has the same rank: two"
					  " captures of one rank share its step (import them"
					  " under different --step)",
					  ex, err);
		free(ex);
	}
	sqlite3_finalize(q);
	return rc < 0 ? -1 : 0;
}

/* The diagnostics a user is told of on stderr, whatever the output: data
 * lost at the end of a file, or placed where it may mislead. */
static const char *const notable_codes[] = {
    "TRUNCATED",     "UNCLOSED_ARRAY",	  "NO_DEVICE_WORK",	 "FAR_APART",
    "RANK_REPEATED", "RANK_NAME_DIFFERS", "RANK_NAME_AMBIGUOUS", "RANK_UNALIGNED",
};

static int notable(const char *code)
{
	for (size_t i = 0; i < sizeof(notable_codes) / sizeof(*notable_codes); i++)
		if (!strcmp(code, notable_codes[i]))
			return 1;
	return 0;
}

void import_summary_release(struct import_summary *s)
{
	for (size_t i = 0; i < s->nnotes; i++) {
		free(s->notes[i].path);
		free(s->notes[i].code);
		free(s->notes[i].message);
		free(s->notes[i].example);
	}
	free(s->notes);
	memset(s, 0, sizeof(*s));
}

/* The import's summary (importer.h) from its sources, those from id
 * first_src on, before the commit.  0, or -1 with *err. */
static int summarize(struct store *st, int64_t first_src, struct import_summary *s, char **err)
{
	static const char counts[] =
	    "SELECT count(*), coalesce(sum(phases), 0), coalesce(sum(events), 0),"
	    " coalesce(sum(samples), 0), (SELECT count(*) FROM diagnostics WHERE"
	    " source_id >= ?1) FROM sources WHERE id >= ?1";
	static const char notes[] = "SELECT s.path, d.code, d.message, d.example, d.count FROM"
				    " diagnostics d JOIN sources s ON s.id = d.source_id WHERE"
				    " d.source_id >= ?1 ORDER BY d.id";
	sqlite3_stmt *q = NULL;
	size_t alloc = 0;
	int rc = -1, r;
	import_summary_release(s);
	if (sqlite3_prepare_v2(store_db(st), counts, -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, first_src);
	if (sqlite3_step(q) != SQLITE_ROW)
		goto fail;
	*s = (struct import_summary){
	    col_int(q, 0), col_int(q, 1), col_int(q, 2), col_int(q, 3), col_int(q, 4), NULL, 0};
	sqlite3_finalize(q);
	if (sqlite3_prepare_v2(store_db(st), notes, -1, &q, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(q, 1, first_src);
	while ((r = sqlite3_step(q)) == SQLITE_ROW) {
		if (!notable(col_text(q, 1)))
			continue;
		XGROW(s->notes, s->nnotes + 1, alloc);
		s->notes[s->nnotes++] =
		    (struct import_note){col_strdup(q, 0), col_strdup(q, 1), col_strdup(q, 2),
					 col_strdup_or_null(q, 3), col_int(q, 4)};
	}
	if (r != SQLITE_DONE)
		goto fail;
	rc = 0;
	goto out;
fail:
	*err = xasprintf("%s: cannot read the import's sources: %s", store_path(st),
			 sqlite3_errmsg(store_db(st)));
out:
	sqlite3_finalize(q);
	return rc;
}

/* After a file's import under --step: its depths, its host. */
static int place_source(struct store *st, const struct import_opts *o, char **err)
{
	if (!o->step)
		return 0;
	int64_t target = import_step_node(st, o, o->step, err);
	if (target < 0 || nest_depths(st, o, target, err) < 0 ||
	    inherit_host(st, o, target, err) < 0)
		return -1;
	return 0;
}

int import_files(const char *db_path, char *const *paths, size_t npaths, const char *format,
		 const struct import_opts *opts, char **err)
{
	struct store *st;
	timing_mark(NULL);
	if (store_open(db_path, STORE_WRITE, &st, err) < 0)
		return -1;
	int rc = import_to_store(st, paths, npaths, format, opts, err);
	store_close(st);
	if (rc < 0 && store_interrupted()) {
		/* whatever failed first, the signal is why */
		free(*err);
		*err = xasprintf("%s: import stopped by a signal (%s); nothing imported", db_path,
				 strsignal(store_interrupted()));
	}
	return rc;
}

int import_to_store(struct store *st, char *const *paths, size_t npaths, const char *format,
		    const struct import_opts *opts, char **err)
{
	struct input *in = NULL;
	const struct importer *forced = NULL;
	struct import_opts o = *opts;
	char *host = NULL, *group = NULL;
	int rc = -1;
	if (format && !(forced = importer_find(format))) {
		*err = xasprintf("unknown format '%s' (try: grademl-tui import --list-formats)",
				 format);
		goto out;
	}
	if (o.has_rank && npaths != 1) {
		*err = xasprintf("--rank %d names the rank of one trace; this import has %zu files"
				 " (import each on its own)",
				 o.rank, npaths);
		goto out;
	}
	/* the host goes into trace.db text as given: valid UTF-8 once, for
	 * every importer (workflow and step names are repaired where they are
	 * interned, import_step_node) */
	o.host = host = text_utf8_dup(o.host);
	if (!o.group_step && npaths > 1)
		o.group_step = group = group_step_name(paths, npaths);
	if (store_begin(st, err) < 0)
		goto out;
	int64_t first = store_next_phase_id(st), first_src;
	if (query_int(st, "SELECT coalesce(max(id), 0) + 1 FROM sources", 0, 0, &first_src, err) <
	    0)
		goto out;
	if (o.hosts_file && hosts_load(st, o.hosts_file, err) < 0)
		goto out;
	for (size_t i = 0; i < o.nhost_aliases; i++)
		if (hosts_add_alias(st, o.host_aliases[i], err) < 0)
			goto out;
	for (size_t i = 0; i < npaths; i++) {
		tally_file(i);
		if (input_open(paths[i], &in, err) < 0)
			goto out;
		const struct importer *imp = forced;
		if (!imp) {
			size_t n;
			const unsigned char *peek = input_peek(in, &n);
			imp = importer_sniff(peek, n);
			if (!imp) {
				*err =
				    xasprintf("%s: unrecognised format at byte 0 (not a trace this"
					      " version reads; --format forces one)",
					      paths[i]);
				goto out;
			}
		}
		if (o.has_rank && strcmp(imp->name, "chrome")) {
			*err = xasprintf("%s: --rank applies to a Chrome trace, not to a %s file",
					 paths[i], imp->name);
			goto out;
		}
		if (imp->run(in, st, &o, err) < 0 || place_source(st, &o, err) < 0 ||
		    repeated_rank(st, first_src, err) < 0) {
			name_file(err, input_path(in));
			goto out;
		}
		input_close(in);
		in = NULL;
	}
	tally_stage(TALLY_PULL);
	if (o.prometheus && promlive_pull(st, &o, err) < 0)
		goto out;
	timing_mark("import");
	tally_stage(TALLY_COMMIT);
	if (far_apart(st, first, err) < 0 ||
	    (o.summary && summarize(st, first_src, o.summary, err) < 0) ||
	    store_commit(st, err) < 0)
		goto out;
	rc = 0;
out:
	input_close(in);
	if (rc < 0)
		store_rollback(st);
	free(host);
	free(group);
	return rc;
}
