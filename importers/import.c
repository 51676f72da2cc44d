/*
 * One `grademl-tui import` run: open the store, begin the transaction, run
 * the importer of each file, commit; on any failure, a signal's included
 * (store_interrupt), roll everything back so trace.db is exactly as it was.  Also the workflow/step
 * nodes every source hangs under.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importers/hosts.h"
#include "importers/importer.h"
#include "model/sbuf.h"
#include "model/text.h"
#include "model/timing.h"
#include "model/xalloc.h"

/* The step named name under parent (depth of the new node: depth), made
 * when missing; its id, or -1. */
static int64_t step_under(struct store *st, int64_t parent, const char *name, int depth, char **err)
{
	int64_t id = store_find_child(st, parent, PHASE_STEP, name, err);
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
	/* --step a/b/c nests steps; a name from a file is one step whatever
	 * it holds */
	if (!o->step || strcmp(step_name, o->step) || !strchr(step, '/')) {
		rc = step_under(st, wf_id, step, 1, err);
		goto out;
	}
	rc = wf_id;
	int depth = 1;
	for (char *save = NULL, *part = strtok_r(step, "/", &save); part && rc >= 0;
	     part = strtok_r(NULL, "/", &save))
		rc = step_under(st, rc, part, depth++, err);
	if (rc == wf_id) {
		*err = xasprintf("--step '%s' names no step", o->step);
		rc = -1;
	}
out:
	free(wf);
	free(step);
	return rc;
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

/* Importers place a source's nodes below a top-level step (depth 1); under
 * --step a/b/c they sit deeper by the extra levels, so the source's rows
 * just written are shifted.  Names come from the file, so only the levels
 * of --step count. */
static int nest_depths(struct store *st, const struct import_opts *o, char **err)
{
	int extra = -1;
	for (const char *p = o->step ? o->step : ""; *p;) {
		p += strspn(p, "/");
		if (*p)
			extra++;
		p += strcspn(p, "/");
	}
	if (extra <= 0)
		return 0;
	char *sql = xasprintf("UPDATE phases SET depth = depth + %d WHERE kind <> %d AND"
			      " source_id = (SELECT max(id) FROM sources)",
			      extra, PHASE_STEP);
	int rc = store_exec(st, sql, err);
	free(sql);
	return rc;
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
	/* the host goes into trace.db text as given: valid UTF-8 once, for
	 * every importer (workflow and step names are repaired where they are
	 * interned, import_step_node) */
	o.host = host = text_utf8_dup(o.host);
	if (!o.group_step && npaths > 1)
		o.group_step = group = group_step_name(paths, npaths);
	if (store_begin(st, err) < 0)
		goto out;
	if (o.hosts_file && hosts_load(st, o.hosts_file, err) < 0)
		goto out;
	for (size_t i = 0; i < o.nhost_aliases; i++)
		if (hosts_add_alias(st, o.host_aliases[i], err) < 0)
			goto out;
	for (size_t i = 0; i < npaths; i++) {
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
		if (imp->run(in, st, &o, err) < 0 || nest_depths(st, &o, err) < 0) {
			name_file(err, input_path(in));
			goto out;
		}
		input_close(in);
		in = NULL;
	}
	timing_mark("import");
	if (store_commit(st, err) < 0)
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
