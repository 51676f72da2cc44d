/*
 * Lazy phase tree over trace.db; see model.h.  Nodes come from an arena-like
 * set of blocks so a drill-down allocates little; names are interned in a
 * string map so repeated operator names cost one copy.
 */
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/view/model.h"
#include "model/store/store.h"
#include "model/util/strmap.h"
#include "model/util/xalloc.h"
#include "model/util/search.h"

#define NODE_BLOCK 1024

struct node_block {
	struct node_block *next;
	size_t used;
	struct mnode nodes[NODE_BLOCK];
};

struct model {
	struct store *st;
	sqlite3_stmt *children_q;
	struct mnode root;
	struct node_block *blocks;
	struct strmap names;
	struct mtrack *tracks; /* ordered by id */
	size_t ntracks;
	struct mseries *series; /* loaded by model_series */
	size_t nseries;
	int series_loaded;
	struct mseries **derived; /* model_derived's, each allocated once */
	size_t nderived;
};

static struct mnode *new_node(struct model *m)
{
	if (!m->blocks || m->blocks->used == NODE_BLOCK) {
		struct node_block *b = xcalloc(1, sizeof(*b));
		b->next = m->blocks;
		m->blocks = b;
	}
	return &m->blocks->nodes[m->blocks->used++];
}

const char *model_intern(struct model *m, const unsigned char *s, int n)
{
	if (!s)
		return NULL;
	struct strmap_ent *e = strmap_put(&m->names, (const char *)s, (size_t)n, 0, NULL);
	return e->key;
}

const char *model_intern_col(struct model *m, sqlite3_stmt *q, int i)
{
	const char *s = col_text_or_null(q, i);
	return model_intern(m, (const unsigned char *)s, s ? (int)col_bytes(q, i) : 0);
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

#define NODE_COLS                                                                                  \
	"SELECT p.id, p.kind, n.text, c.text, p.start_ns, p.dur_ns, p.self_ns,"                    \
	" p.device_ns, p.child_count, p.track_id, p.source_id, p.depth"                            \
	" FROM phases p JOIN strings n ON n.id = p.name_id"                                        \
	" LEFT JOIN strings c ON c.id = p.cat_id"

/* A node's fields from a row of NODE_COLS. */
static void node_read(struct model *m, sqlite3_stmt *q, struct mnode *c)
{
	c->id = col_int(q, 0);
	c->kind = col_int32(q, 1);
	c->name = model_intern_col(m, q, 2);
	if (!c->name)
		c->name = "";
	c->category = model_intern_col(m, q, 3);
	c->start_ns = clamp(col_int(q, 4), MODEL_TIME_MIN, MODEL_TIME_MAX);
	c->dur_ns = clamp(col_int(q, 5), 0, MODEL_TIME_MAX);
	c->self_ns = col_int(q, 6);
	c->device_ns = col_int(q, 7);
	c->child_count = col_int(q, 8);
	c->track_id = col_int(q, 9);
	c->source_id = col_int(q, 10);
	c->depth = col_int32(q, 11);
}

int model_phase(struct model *m, int64_t id, struct mnode *out, char **err)
{
	sqlite3 *db = store_db(m->st);
	sqlite3_stmt *q;
	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(db, NODE_COLS " WHERE p.id = ?1", -1, &q, NULL) != SQLITE_OK) {
		*err =
		    xasprintf("%s: cannot read phases: %s", store_path(m->st), sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_int64(q, 1, id);
	int rc = sqlite3_step(q);
	if (rc == SQLITE_ROW)
		node_read(m, q, out);
	sqlite3_finalize(q);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	*err = xasprintf("%s: cannot read phases: %s", store_path(m->st), sqlite3_errmsg(db));
	return -1;
}

int model_cmp_bookkeeping(const struct mnode *a, const struct mnode *b)
{
	return store_is_bookkeeping(a->kind) - store_is_bookkeeping(b->kind);
}

/* Moves the profiler's bookkeeping after n's other children, each part in
 * the order read. */
static void bookkeeping_last(struct mnode *n)
{
	size_t w = 0, nb = 0;
	for (size_t i = 0; i < n->nchildren; i++)
		nb += store_is_bookkeeping(n->children[i]->kind);
	if (!nb || nb == n->nchildren)
		return;
	struct mnode **books = xmalloc(nb * sizeof(*books));
	nb = 0;
	for (size_t i = 0; i < n->nchildren; i++) {
		struct mnode *c = n->children[i];
		if (store_is_bookkeeping(c->kind))
			books[nb++] = c;
		else
			n->children[w++] = c;
	}
	memcpy(n->children + w, books, nb * sizeof(*books));
	free(books);
}

int model_children(struct model *m, struct mnode *n, char **err)
{
	if (n->loaded)
		return 0;
	sqlite3_stmt *q = m->children_q;
	if (n->id)
		sqlite3_bind_int64(q, 1, n->id);
	else
		sqlite3_bind_null(q, 1);
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		struct mnode *c = new_node(m);
		node_read(m, q, c);
		c->parent = n;
		XGROW(n->children, n->nchildren + 1, alloc);
		n->children[n->nchildren++] = c;
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE) {
		*err = xasprintf("%s: cannot read phases: %s", store_path(m->st),
				 sqlite3_errmsg(store_db(m->st)));
		return -1;
	}
	bookkeeping_last(n);
	n->loaded = 1;
	return 0;
}

static int load_tracks(struct model *m, char **err)
{
	sqlite3_stmt *q;
	size_t alloc = 0;
	if (sqlite3_prepare_v2(store_db(m->st),
			       "SELECT id, kind, coalesce(name, ''), host, coalesce(rank, -1),"
			       " coalesce(sort_index, 0)," TRACK_DEVICE_SQL
			       " FROM tracks ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK)
		goto fail;
	while (sqlite3_step(q) == SQLITE_ROW) {
		XGROW(m->tracks, m->ntracks + 1, alloc);
		struct mtrack *t = &m->tracks[m->ntracks++];
		t->id = col_int(q, 0);
		t->kind = model_intern_col(m, q, 1);
		t->name = model_intern_col(m, q, 2);
		t->host = model_intern_col(m, q, 3);
		t->rank = col_int(q, 4);
		t->sort_index = col_int(q, 5);
		t->device = col_int32(q, 6);
		if (!t->kind)
			t->kind = "";
		if (!t->name)
			t->name = "";
	}
	if (sqlite3_finalize(q) != SQLITE_OK)
		goto fail;
	return 0;
fail:
	*err = xasprintf("%s: cannot read tracks: %s", store_path(m->st),
			 sqlite3_errmsg(store_db(m->st)));
	return -1;
}

const struct mtrack *model_track(struct model *m, int64_t id)
{
	size_t lo;
	PARTITION_POINT(lo, m->ntracks, i, m->tracks[i].id < id);
	return lo < m->ntracks && m->tracks[lo].id == id ? &m->tracks[lo] : NULL;
}

int model_open(const char *path, struct model **out, char **err)
{
	struct model *m = xcalloc(1, sizeof(*m));
	if (store_open(path, STORE_READ, &m->st, err) < 0) {
		free(m);
		return -1;
	}
	if (sqlite3_prepare_v2(store_db(m->st),
			       NODE_COLS " WHERE p.parent_id IS ?1 ORDER BY p.start_ns, p.id", -1,
			       &m->children_q, NULL) != SQLITE_OK) {
		*err =
		    xasprintf("%s: cannot read phases: %s", path, sqlite3_errmsg(store_db(m->st)));
		model_free(m);
		return -1;
	}
	m->root.name = "/";
	if (load_tracks(m, err) < 0 || model_children(m, &m->root, err) < 0) {
		model_free(m);
		return -1;
	}
	int64_t s = INT64_MAX, e = INT64_MIN;
	for (size_t i = 0; i < m->root.nchildren; i++) {
		struct mnode *c = m->root.children[i];
		if (c->start_ns < s)
			s = c->start_ns;
		if (c->start_ns + c->dur_ns > e)
			e = c->start_ns + c->dur_ns;
	}
	if (m->root.nchildren) {
		m->root.start_ns = s;
		m->root.dur_ns = e - s;
	}
	m->root.child_count = (int64_t)m->root.nchildren;
	*out = m;
	return 0;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	while (m->blocks) {
		struct node_block *b = m->blocks;
		m->blocks = b->next;
		for (size_t i = 0; i < b->used; i++)
			free(b->nodes[i].children);
		free(b);
	}
	free(m->root.children);
	strmap_clear(&m->names);
	free(m->tracks);
	free(m->series);
	for (size_t i = 0; i < m->nderived; i++)
		free(m->derived[i]);
	free(m->derived);
	sqlite3_finalize(m->children_q);
	store_close(m->st);
	free(m);
}

struct store *model_store(struct model *m)
{
	return m->st;
}

struct mnode *model_root(struct model *m)
{
	return &m->root;
}

static int64_t one_int(struct model *m, const char *sql)
{
	sqlite3_stmt *q;
	int64_t n = 0;
	if (sqlite3_prepare_v2(store_db(m->st), sql, -1, &q, NULL) == SQLITE_OK) {
		if (sqlite3_step(q) == SQLITE_ROW)
			n = col_int(q, 0);
		sqlite3_finalize(q);
	}
	return n;
}

int64_t model_phase_count(struct model *m)
{
	return one_int(m, "SELECT count(*) FROM phases");
}

int64_t model_phase_bound(struct model *m)
{
	return one_int(m, "SELECT coalesce(max(id), 0) FROM phases");
}

const struct mseries *model_derived(struct model *m, const char *name, const char *host,
				    const char *resource, double capacity)
{
	name = model_intern(m, (const unsigned char *)name, (int)strlen(name));
	host = host ? model_intern(m, (const unsigned char *)host, (int)strlen(host)) : NULL;
	resource = model_intern(m, (const unsigned char *)resource, (int)strlen(resource));
	for (size_t i = 0; i < m->nderived; i++) {
		const struct mseries *s = m->derived[i];
		if (s->name == name && s->host == host && s->resource == resource &&
		    s->capacity == capacity)
			return s;
	}
	struct mseries *s = xcalloc(1, sizeof(*s));
	*s = (struct mseries){.name = name,
			      .host = host,
			      .resource = resource,
			      .unit = model_intern(m, (const unsigned char *)"%", 1),
			      .capacity = capacity,
			      .value_kind = "derived",
			      .min = 0,
			      .max = capacity};
	m->derived = xrealloc(m->derived, (m->nderived + 1) * sizeof(*m->derived));
	return m->derived[m->nderived++] = s;
}

struct mseries **model_series_slot(struct model *m, size_t **n, int **loaded)
{
	*n = &m->nseries;
	*loaded = &m->series_loaded;
	return &m->series;
}
