/*
 * The flame graph's merge; see flame.h.  The subtree is read by
 * subtree_walk (model/store/subtree.h), and each phase row looked up twice in hash tables: its name
 * id to a merged name (the strings table is read once per distinct name), and (parent frame, merged
 * name) to its frame.  Device time is summed up the frames at the end from the device work's own
 * time: a frame's width must be its children's added up, which a phase's device_ns (the union of
 * the work beneath it, where overlapping work counts once) is not.
 */
#include <stdlib.h>
#include <string.h>

#include "model/analysis/flame.h"
#include "model/store/col.h"
#include "model/view/model.h"
#include "model/util/nstime.h"
#include "model/store/store.h"
#include "model/util/strmap.h"
#include "model/store/subtree.h"
#include "model/util/xalloc.h"

struct mname {
	char *name; /* the first name read with this merged name */
	char *star; /* "base#*", made when a frame merges two of its #N */
};

/* Open addressing from a 64-bit key to an int32 value; key 0 (an empty
 * slot's) lives beside the table. */
struct i64map {
	uint64_t *key;
	int32_t *val;
	size_t cap, n;
	int has_zero;
	int32_t zero;
};

struct walk {
	sqlite3 *db;
	sqlite3_stmt *name_q;
	struct i64map ids;    /* name_id + 1 -> merged name */
	struct i64map frames; /* (parent + 2) << 32 | merged name -> frame */
	struct strmap bases;  /* merged name's base -> index */
	struct mname *names;
	size_t nnames, anames;
	int64_t *first_name; /* per frame: the name id it was made for */
	size_t aframes;
	struct flame *fl;
	int root_books; /* the root is the profiler's bookkeeping: its own kept */
};

/* What merge gives the profiler's bookkeeping below a root of work, and
 * the phases under it: no frame, and not counted as left out. */
#define NOT_WORK (-3)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int32_t *i64map_slot(struct i64map *h, uint64_t key, int *found)
{
	if (!key) {
		*found = h->has_zero;
		h->has_zero = 1;
		return &h->zero;
	}
	if ((h->n + 1) * 2 > h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 1024;
		uint64_t *k = xcalloc(cap, sizeof(*k));
		int32_t *v = xmalloc(cap * sizeof(*v));
		for (size_t i = 0; i < h->cap; i++) {
			if (!h->key[i])
				continue;
			size_t j = mix(h->key[i]) & (cap - 1);
			while (k[j])
				j = (j + 1) & (cap - 1);
			k[j] = h->key[i];
			v[j] = h->val[i];
		}
		free(h->key);
		free(h->val);
		h->key = k;
		h->val = v;
		h->cap = cap;
	}
	size_t j = mix(key) & (h->cap - 1);
	while (h->key[j] && h->key[j] != key)
		j = (j + 1) & (h->cap - 1);
	*found = h->key[j] == key;
	if (!*found) {
		h->key[j] = key;
		h->n++;
	}
	return &h->val[j];
}

static void i64map_release(struct i64map *h)
{
	free(h->key);
	free(h->val);
	memset(h, 0, sizeof(*h));
}

/* The length of s's base: up to and including a '#' that only digits (or
 * a '*') follow to the end; the whole of s when none. */
static size_t name_base(const char *s, size_t len, int *numbered)
{
	size_t i = len;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == len && i > 0 && s[i - 1] == '*')
		i--;
	*numbered = i < len && i > 0 && s[i - 1] == '#';
	return *numbered ? i : len;
}

/* The merged name of name id (an index into w->names). */
static int32_t merged_name(struct walk *w, int64_t name_id)
{
	int found;
	int32_t *v = i64map_slot(&w->ids, (uint64_t)name_id + 1, &found);
	if (found)
		return *v;
	sqlite3_bind_int64(w->name_q, 1, name_id);
	const char *text = "";
	size_t len = 0;
	if (sqlite3_step(w->name_q) == SQLITE_ROW)
		text = col_text_n(w->name_q, 0, &len);
	int numbered, created;
	size_t base = name_base(text, len, &numbered);
	struct strmap_ent *e = strmap_put(&w->bases, text, base, (int64_t)w->nnames, &created);
	if (created) {
		XGROW(w->names, w->nnames + 1, w->anames);
		w->names[w->nnames].name = xstrndup(text, len);
		w->names[w->nnames].star = NULL;
		w->nnames++;
	}
	sqlite3_reset(w->name_q);
	return *v = (int32_t)e->value;
}

/* The child frame of parent for merged name k (made when new), or -1 when
 * the frame limit is reached. */
static int32_t child_frame(struct walk *w, int32_t parent, int32_t k, int64_t name_id,
			   const struct mnode *row)
{
	struct flame *fl = w->fl;
	int found;
	uint64_t key = ((uint64_t)(uint32_t)(parent + 2) << 32) | (uint32_t)k; /* never 0 */
	int32_t *v = i64map_slot(&w->frames, key, &found);
	if (found && *v < 0)
		return -1;
	if (found) {
		if (w->first_name[*v] != name_id && fl->f[*v].name == w->names[k].name) {
			struct mname *nm = &w->names[k];
			if (!nm->star) {
				int numbered;
				size_t b = name_base(nm->name, strlen(nm->name), &numbered);
				nm->star = xasprintf("%.*s*", (int)b, nm->name);
			}
			fl->f[*v].name = nm->star;
		}
		return *v;
	}
	if (fl->n >= FLAME_MAX_FRAMES) {
		*v = -1; /* and so for every later phase of this path */
		return -1;
	}
	size_t had = w->aframes;
	XGROW(fl->f, fl->n + 1, w->aframes);
	if (w->aframes != had)
		w->first_name = xrealloc(w->first_name, w->aframes * sizeof(*w->first_name));
	struct flame_frame *f = &fl->f[fl->n];
	memset(f, 0, sizeof(*f));
	f->name = w->names[k].name;
	f->parent = parent;
	f->depth = parent < 0 ? 0 : fl->f[parent].depth + 1;
	f->kind = row->kind;
	f->first_id = row->id;
	w->first_name[fl->n] = name_id;
	return *v = (int32_t)fl->n++;
}

static int is_device_work(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET;
}

/* Host time: what ran on a host track (device work and a stream's window
 * count none). */
static int is_host(int kind)
{
	return !is_device_work(kind) && kind != PHASE_STREAM && kind != PHASE_GPU_ANNOTATION;
}

static void frame_add(struct flame_frame *f, const struct mnode *r)
{
	f->count++;
	if (is_host(r->kind)) {
		f->host_ns = ns_sum(f->host_ns, r->dur_ns > 0 ? r->dur_ns : 0);
		f->self_ns = ns_sum(f->self_ns, r->self_ns > 0 ? r->self_ns : 0);
	}
	if (is_device_work(r->kind)) {
		int64_t d = r->device_ns > 0 ? r->device_ns : r->dur_ns > 0 ? r->dur_ns : 0;
		f->device_self_ns = ns_sum(f->device_self_ns, d);
	}
}

/* Starts over: no frames, no phases. */
static void restart(void *arg)
{
	struct walk *w = arg;
	w->fl->n = 0;
	w->fl->phases = w->fl->left_out = 0;
	i64map_release(&w->frames);
}

/* Merges phase r under frame parent (-2: the parent was left out, -1: r is
 * the root, NOT_WORK: bookkeeping); returns its frame, or -2 when it is left
 * out. */
static int32_t merge(void *arg, const struct subtree_row *r, int32_t parent)
{
	struct walk *w = arg;
	if (parent == -1)
		w->root_books = store_is_bookkeeping(r->kind);
	if (parent == NOT_WORK || (parent != -1 && !w->root_books && store_is_bookkeeping(r->kind)))
		return NOT_WORK;
	struct mnode n = {.id = r->id,
			  .kind = r->kind,
			  .dur_ns = r->dur_ns,
			  .self_ns = r->self_ns,
			  .device_ns = r->device_ns};
	int32_t f =
	    parent < -1 ? -1 : child_frame(w, parent, merged_name(w, r->name_id), r->name_id, &n);
	if (f < 0) {
		w->fl->left_out++;
		return -2;
	}
	frame_add(&w->fl->f[f], &n);
	w->fl->phases++;
	return f;
}

/* Device totals up the tree and each frame's children, in one array. */
static void finish(struct flame *fl)
{
	for (size_t i = 0; i < fl->n; i++)
		fl->f[i].device_ns = fl->f[i].device_self_ns;
	for (size_t i = fl->n; i-- > 1;) {
		struct flame_frame *p = &fl->f[fl->f[i].parent];
		p->device_ns = ns_sum(p->device_ns, fl->f[i].device_ns);
		p->kids_device_ns = ns_sum(p->kids_device_ns, fl->f[i].device_ns);
		p->kids_host_ns = ns_sum(p->kids_host_ns, fl->f[i].host_ns);
		p->nkids++;
	}
	uint32_t at = 0;
	for (size_t i = 0; i < fl->n; i++) {
		fl->f[i].kids = at;
		at += fl->f[i].nkids;
		fl->f[i].nkids = 0;
	}
	fl->kids = xmalloc((fl->n ? fl->n : 1) * sizeof(*fl->kids));
	for (size_t i = 1; i < fl->n; i++) {
		struct flame_frame *p = &fl->f[fl->f[i].parent];
		fl->kids[p->kids + p->nkids++] = (uint32_t)i;
	}
}

int flame_build_walk(struct model *m, int64_t root_id, size_t dfs_rows, struct flame *out,
		     char **err)
{
	struct walk w = {.db = store_db(model_store(m)), .fl = out};
	struct subtree_visitor v = {merge, restart, &w, SUBTREE_SUMS};
	memset(out, 0, sizeof(*out));
	int rc = -1;
	if (sqlite3_prepare_v2(w.db, "SELECT text FROM strings WHERE id = ?1", -1, &w.name_q,
			       NULL) != SQLITE_OK) {
		*err = xasprintf("%s: cannot read names: %s", store_path(model_store(m)),
				 sqlite3_errmsg(w.db));
		goto out;
	}
	if (subtree_walk(w.db, store_path(model_store(m)), root_id, dfs_rows, &v, err) < 0)
		goto out;
	finish(out);
	/* the names move to the flame */
	out->names = xmalloc((w.nnames ? w.nnames : 1) * 2 * sizeof(*out->names));
	for (size_t i = 0; i < w.nnames; i++) {
		out->names[out->nnames++] = w.names[i].name;
		if (w.names[i].star)
			out->names[out->nnames++] = w.names[i].star;
	}
	w.nnames = 0;
	flame_sort(out, FLAME_HOST);
	rc = 0;
out:
	sqlite3_finalize(w.name_q);
	i64map_release(&w.ids);
	i64map_release(&w.frames);
	strmap_clear(&w.bases);
	for (size_t i = 0; i < w.nnames; i++) {
		free(w.names[i].name);
		free(w.names[i].star);
	}
	free(w.names);
	free(w.first_name);
	if (rc < 0)
		flame_release(out);
	return rc;
}

int flame_build(struct model *m, int64_t root_id, struct flame *out, char **err)
{
	return flame_build_walk(m, root_id, FLAME_DFS_ROWS, out, err);
}

void flame_release(struct flame *fl)
{
	for (size_t i = 0; i < fl->nnames; i++)
		free(fl->names[i]);
	free(fl->names);
	free(fl->f);
	free(fl->kids);
	memset(fl, 0, sizeof(*fl));
}

int64_t flame_total(const struct flame_frame *f, enum flame_mode mode)
{
	return mode == FLAME_DEVICE ? f->device_ns : f->host_ns;
}

int64_t flame_self(const struct flame_frame *f, enum flame_mode mode)
{
	return mode == FLAME_DEVICE ? f->device_self_ns : f->self_ns;
}

static const struct flame *sort_fl;
static enum flame_mode sort_mode;

static int cmp_kid(const void *pa, const void *pb)
{
	const struct flame_frame *a = &sort_fl->f[*(const uint32_t *)pa];
	const struct flame_frame *b = &sort_fl->f[*(const uint32_t *)pb];
	int64_t ta = flame_total(a, sort_mode), tb = flame_total(b, sort_mode);
	if (ta != tb)
		return ta > tb ? -1 : 1;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

void flame_sort(struct flame *fl, enum flame_mode mode)
{
	sort_fl = fl;
	sort_mode = mode;
	for (size_t i = 0; i < fl->n; i++)
		if (fl->f[i].nkids > 1)
			qsort(fl->kids + fl->f[i].kids, fl->f[i].nkids, sizeof(*fl->kids), cmp_kid);
	fl->sorted = mode;
}

/* Whether names a and b merge. */
static int same_name(const char *a, const char *b)
{
	int na, nb;
	size_t la = name_base(a, strlen(a), &na), lb = name_base(b, strlen(b), &nb);
	return na == nb && la == lb && !memcmp(a, b, la) && (na || !strcmp(a, b));
}

size_t flame_named(const struct flame *fl, const char *name, enum flame_mode mode, uint32_t **out)
{
	size_t n = 0, alloc = 0;
	*out = NULL;
	for (size_t i = 0; i < fl->n; i++)
		if (same_name(fl->f[i].name, name)) {
			XGROW(*out, n + 1, alloc);
			(*out)[n++] = (uint32_t)i;
		}
	sort_fl = fl;
	sort_mode = mode;
	if (n > 1)
		qsort(*out, n, sizeof(**out), cmp_kid);
	return n;
}

int flame_nested(const struct flame *fl, uint32_t i)
{
	for (int32_t p = fl->f[i].parent; p >= 0; p = fl->f[p].parent)
		if (same_name(fl->f[p].name, fl->f[i].name))
			return 1;
	return 0;
}

int32_t flame_find(const struct flame *fl, const char *const *path, size_t n)
{
	if (!fl->n || !n || !same_name(fl->f[0].name, path[0]))
		return -1;
	uint32_t at = 0;
	for (size_t d = 1; d < n; d++) {
		const struct flame_frame *f = &fl->f[at];
		uint32_t k = 0;
		while (k < f->nkids && !same_name(fl->f[flame_kid(fl, at, k)].name, path[d]))
			k++;
		if (k == f->nkids)
			return -1;
		at = flame_kid(fl, at, k);
	}
	return (int32_t)at;
}
