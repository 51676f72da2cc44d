/*
 * Tree screen logic; see treeview.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/col.h"
#include "model/store/ptree.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"
#include "tui/treeview.h"

int tree_view_match(const char *name, const char *pat)
{
	if (!pat || !*pat)
		return 1;
	for (const char *p = pat; *p; p++)
		if (isupper((unsigned char)*p))
			return strstr(name, pat) != NULL;
	return strcasestr(name, pat) != NULL;
}

static enum tree_sort sort_key;
static int sort_desc;

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct mnode *a = *(struct mnode *const *)pa, *b = *(struct mnode *const *)pb;
	int c = model_cmp_bookkeeping(a, b); /* last, either way round */
	if (c)
		return c;
	switch (sort_key) {
	case SORT_NAME:
		c = strcmp(a->name, b->name);
		break;
	case SORT_DUR:
		c = cmp_i64(a->dur_ns, b->dur_ns);
		break;
	case SORT_SELF:
		c = cmp_i64(a->self_ns, b->self_ns);
		break;
	case SORT_COUNT:
		c = cmp_i64(a->child_count, b->child_count);
		break;
	case SORT_START:
		c = cmp_i64(a->start_ns, b->start_ns);
		break;
	}
	if (sort_desc)
		c = -c;
	if (!c)
		c = cmp_i64(a->start_ns, b->start_ns);
	return c ? c : cmp_i64(a->id, b->id);
}

/* Rebuilds rows from the node's children; keeps keep selected if listed. */
static void rebuild(struct tree_view *v, const struct mnode *keep)
{
	v->nrows = 0;
	for (size_t i = 0; i < v->node->nchildren; i++) {
		struct mnode *c = v->node->children[i];
		if (!tree_view_match(c->name, v->filter))
			continue;
		XGROW(v->rows, v->nrows + 1, v->alloc);
		v->rows[v->nrows++] = c;
	}
	sort_key = v->sort;
	sort_desc = v->desc;
	if (v->nrows) /* a file of metrics alone has no rows, and rows is NULL */
		qsort(v->rows, v->nrows, sizeof(*v->rows), cmp_rows);
	v->sel = 0;
	for (size_t i = 0; keep && i < v->nrows; i++)
		if (v->rows[i] == keep)
			v->sel = i;
	v->top = 0;
}

/* From the node shown, down through every child that is its parent's only
 * one and has children of its own, to the first level with more than one
 * row (or a lone leaf): only the chain's children are loaded.  A chain that
 * comes back to a phase (one that is its own parent) is PTREE_LOOP. */
static int descend(struct tree_view *v, char **err)
{
	struct mnode *n = v->node;
	struct ptree_walk w;
	ptree_walk_init(&w, n->id);
	while (n->nchildren == 1 && n->children[0]->child_count > 0) {
		struct mnode *c = n->children[0];
		if (ptree_walk_loops(&w, c->id)) {
			*err = ptree_loop_error(store_path(model_store(v->m)), c->id);
			return PTREE_LOOP;
		}
		if (model_children(v->m, c, err) < 0)
			return -1;
		if (!c->nchildren)
			break;
		n = c;
	}
	return n == v->node ? 0 : tree_view_show(v, n, NULL, err);
}

int tree_view_init(struct tree_view *v, struct model *m, char **err)
{
	memset(v, 0, sizeof(*v));
	v->m = m;
	v->sort = SORT_DUR;
	v->desc = 1;
	if (tree_view_show(v, model_root(m), NULL, err) < 0)
		return -1;
	return descend(v, err);
}

void tree_view_release(struct tree_view *v)
{
	free(v->rows);
	free(v->filter);
	free(v->find_pat);
	free(v->hits);
	memset(v, 0, sizeof(*v));
}

struct mnode *tree_view_selected(const struct tree_view *v)
{
	return v->nrows ? v->rows[v->sel] : NULL;
}

int tree_view_show(struct tree_view *v, struct mnode *n, struct mnode *sel, char **err)
{
	if (model_children(v->m, n, err) < 0)
		return -1;
	v->node = n;
	rebuild(v, sel);
	return 0;
}

int tree_view_enter(struct tree_view *v, char **err)
{
	struct mnode *s = tree_view_selected(v);
	if (!s || !s->child_count)
		return 0;
	if (model_children(v->m, s, err) < 0)
		return -1;
	free(v->filter); /* a filter belongs to the level it was set on */
	v->filter = NULL;
	if (tree_view_show(v, s, NULL, err) < 0)
		return -1;
	int rc = descend(v, err);
	return rc < 0 ? rc : 1;
}

int tree_view_up(struct tree_view *v, char **err)
{
	struct mnode *from = v->node;
	if (!from->parent)
		return 0;
	if (model_children(v->m, from->parent, err) < 0)
		return -1;
	free(v->filter);
	v->filter = NULL;
	return tree_view_show(v, from->parent, from, err) < 0 ? -1 : 1;
}

void tree_view_move(struct tree_view *v, long delta)
{
	if (!v->nrows)
		return;
	long s = (long)v->sel + delta;
	if (s < 0)
		s = 0;
	if (s >= (long)v->nrows)
		s = (long)v->nrows - 1;
	v->sel = (size_t)s;
}

void tree_view_sort(struct tree_view *v, enum tree_sort s)
{
	if (v->sort == s)
		v->desc = !v->desc;
	else {
		v->sort = s;
		v->desc = s != SORT_NAME && s != SORT_START; /* biggest first */
	}
	rebuild(v, tree_view_selected(v));
}

void tree_view_costliest(struct tree_view *v)
{
	for (size_t i = 0; i < v->nrows; i++) {
		int c = model_cmp_bookkeeping(v->rows[i], v->rows[v->sel]);
		if (c < 0 || (!c && v->rows[i]->dur_ns > v->rows[v->sel]->dur_ns))
			v->sel = i;
	}
}

int tree_view_search(struct tree_view *v, const char *pat, int dir, int *wrapped)
{
	*wrapped = 0;
	if (!v->nrows || !pat || !*pat)
		return 0;
	size_t n = v->nrows, i = v->sel;
	for (size_t step = 1; step <= n; step++) {
		size_t j = dir > 0 ? (i + step) % n : (i + n - step % n) % n;
		if (tree_view_match(v->rows[j]->name, pat)) {
			*wrapped = dir > 0 ? j <= i : j >= i;
			v->sel = j;
			return 1;
		}
	}
	return 0;
}

int tree_view_show_id(struct tree_view *v, int64_t id, char **err)
{
	struct store *st = model_store(v->m);
	int64_t *chain = NULL;
	size_t n = 0;
	int rc = ptree_up(store_db(st), store_path(st), id, &chain, &n, err);
	struct mnode *node = model_root(v->m), *hit = NULL;
	/* down from the top along the chain, loading each level on the way */
	for (size_t k = n; rc == 0 && k-- > 0; node = hit) {
		if ((rc = model_children(v->m, node, err)) < 0)
			break;
		hit = NULL;
		for (size_t i = 0; i < node->nchildren && !hit; i++)
			if (node->children[i]->id == chain[k])
				hit = node->children[i];
		if (!hit)
			break;
	}
	free(chain);
	if (rc < 0 || !hit)
		return rc;
	free(v->filter);
	v->filter = NULL;
	return tree_view_show(v, hit->parent, hit, err) < 0 ? -1 : 1;
}

/* Which phases are below the level searched, as far as found out: an
 * open-addressing set of ids, each marked in or out. */
struct below {
	int64_t root;
	int64_t *ids;
	signed char *in;
	size_t cap, n;
	sqlite3_stmt *parent_q;
};

static size_t below_slot(const struct below *b, int64_t id)
{
	size_t i = (size_t)((uint64_t)id * 0x9e3779b97f4a7c15ull >> 20) & (b->cap - 1);
	while (b->in[i] >= 0 && b->ids[i] != id)
		i = (i + 1) & (b->cap - 1);
	return i;
}

static void below_put(struct below *b, int64_t id, int in)
{
	if (2 * (b->n + 1) > b->cap) {
		struct below old = *b;
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->ids = xmalloc(b->cap * sizeof(*b->ids));
		b->in = xmalloc(b->cap);
		memset(b->in, -1, b->cap);
		b->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.in[i] >= 0)
				below_put(b, old.ids[i], old.in[i]);
		free(old.ids);
		free(old.in);
	}
	size_t i = below_slot(b, id);
	b->n += b->in[i] < 0;
	b->ids[i] = id;
	b->in[i] = (signed char)in;
}

/* 1 when phase parent (a match's parent) is b->root or below it, walking
 * up its parent links until a phase already known; -1 on an error or
 * PTREE_LOOP with *err. */
static int below_is(struct below *b, struct store *st, int64_t parent, char **err)
{
	int64_t chain[64], x = parent;
	size_t n = 0;
	int in = 0;
	struct ptree_walk w;
	ptree_walk_init(&w, x);
	while (x) {
		if (x == b->root) {
			in = 1;
			break;
		}
		size_t i = b->cap ? below_slot(b, x) : 0;
		if (b->cap && b->in[i] >= 0) {
			in = b->in[i];
			break;
		}
		if (n == 64) { /* deep: remember the way so far as it ends */
			int r = below_is(b, st, x, err);
			if (r < 0)
				return r;
			in = r;
			break;
		}
		chain[n++] = x;
		sqlite3_reset(b->parent_q);
		sqlite3_bind_int64(b->parent_q, 1, x);
		int rc = sqlite3_step(b->parent_q);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			*err = xasprintf("%s: cannot search phases: %s", store_path(st),
					 sqlite3_errmsg(store_db(st)));
			return -1;
		}
		x = rc == SQLITE_ROW ? col_int(b->parent_q, 0) : 0;
		if (x && ptree_walk_loops(&w, x)) {
			*err = ptree_loop_error(store_path(st), x);
			return PTREE_LOOP;
		}
	}
	for (size_t k = 0; k < n; k++)
		below_put(b, chain[k], in);
	return in;
}

/* The phases below v->node whose name matches pat (smart case, as
 * tree_view_match: ASCII case folding), in order of start: every phase of
 * a matching name, read in one scan, kept when its parent links lead to
 * v->node (each phase on the way looked up once), at most
 * TREE_VIEW_FIND_MAX of them.  *first: the first after sel. */
static int find_all(struct tree_view *v, const char *pat, const struct mnode *sel, size_t *first,
		    char **err)
{
	int exact = 0;
	for (const char *p = pat; *p; p++)
		exact |= isupper((unsigned char)*p);
	struct store *st = model_store(v->m);
	sqlite3 *db = store_db(st);
	sqlite3_stmt *q = NULL;
	struct below b = {.root = v->node->id};
	/* below the top, or its only row, every phase is: no walk */
	const struct mnode *top = model_root(v->m);
	int all = v->node == top || (v->node->parent == top && top->nchildren == 1);
	char *sql = xasprintf("SELECT id, coalesce(parent_id, 0), start_ns FROM phases"
			      " WHERE name_id IN (SELECT id FROM strings WHERE %s)"
			      " ORDER BY start_ns, id",
			      exact ? "instr(text, ?1) > 0" : "instr(lower(text), lower(?1)) > 0");
	int rc = sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK &&
			 sqlite3_prepare_v2(
			     db, "SELECT coalesce(parent_id, 0) FROM phases WHERE id = ?1", -1,
			     &b.parent_q, NULL) == SQLITE_OK
		     ? 0
		     : -1;
	free(sql);
	size_t alloc = 0;
	v->nhits = 0;
	v->hits_more = 0;
	*first = SIZE_MAX;
	if (rc < 0)
		goto fail;
	sqlite3_bind_text(q, 1, pat, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = col_int(q, 0), start = col_int(q, 2);
		if (!all) {
			int in = below_is(&b, st, col_int(q, 1), err);
			if (in < 0) {
				rc = in;
				goto out;
			}
			if (!in)
				continue;
		}
		if (v->nhits == TREE_VIEW_FIND_MAX) {
			v->hits_more = 1;
			break;
		}
		if (*first == SIZE_MAX && sel &&
		    (start > sel->start_ns || (start == sel->start_ns && id > sel->id)))
			*first = v->nhits;
		XGROW(v->hits, v->nhits + 1, alloc);
		v->hits[v->nhits++] = id;
	}
	if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		rc = 0;
		goto out;
	}
fail:
	*err = xasprintf("%s: cannot search phases: %s", store_path(st), sqlite3_errmsg(db));
	rc = -1;
out:
	if (rc < 0)
		v->nhits = 0;
	sqlite3_finalize(q);
	sqlite3_finalize(b.parent_q);
	free(b.ids);
	free(b.in);
	return rc;
}

/* Shows hit i, or the next one that is in the tree (dir says which way). */
static int show_hit(struct tree_view *v, size_t i, int dir, char **err)
{
	for (size_t k = 0; k < v->nhits; k++) {
		size_t j = dir > 0 ? (i + k) % v->nhits : (i + v->nhits - k) % v->nhits;
		int rc = tree_view_show_id(v, v->hits[j], err);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			v->hit = j;
			return 1;
		}
	}
	return 0;
}

int tree_view_find(struct tree_view *v, const char *pat, char **err)
{
	size_t first;
	free(v->find_pat);
	v->find_pat = xstrdup(pat);
	v->find_root = v->node->id;
	v->nhits = v->hit = 0;
	if (!*pat)
		return 0;
	if (find_all(v, pat, tree_view_selected(v), &first, err) < 0)
		return -1;
	if (!v->nhits)
		return 0;
	return show_hit(v, first < v->nhits ? first : 0, 1, err);
}

int tree_view_find_next(struct tree_view *v, int dir, int *wrapped, char **err)
{
	*wrapped = 0;
	if (!v->nhits)
		return 0;
	size_t i = dir > 0 ? (v->hit + 1) % v->nhits : (v->hit + v->nhits - 1) % v->nhits;
	*wrapped = dir > 0 ? i <= v->hit : i >= v->hit;
	return show_hit(v, i, dir, err);
}

void tree_view_set_filter(struct tree_view *v, const char *pat)
{
	struct mnode *keep = tree_view_selected(v);
	free(v->filter);
	v->filter = pat && *pat ? xstrdup(pat) : NULL;
	rebuild(v, keep);
}

/* Where a path stopped matching: the deepest node reached and the rest. */
struct miss {
	const struct mnode *at;
	const char *rest;
	int depth;
};

/* The phase under n that path p names.  Names repeat (two processes of one
 * trace may share a name), so every child whose name is a prefix of p
 * ending at '/' or the end is tried, in order, until one leads to the
 * whole path; a name's trailing blanks (Kineto's "stream 7 ", which the
 * screens and the report show as "stream 7") may be left out.  NULL when
 * none does (*miss says where it stopped) or on an error (*err set). */
static struct mnode *resolve(struct model *m, struct mnode *n, const char *p, int depth,
			     struct miss *miss, char **err)
{
	if (model_children(m, n, err) < 0)
		return NULL;
	for (size_t i = 0; i < n->nchildren; i++) {
		struct mnode *c = n->children[i];
		size_t k = strlen(c->name);
		while (strncmp(p, c->name, k) || (p[k] != '/' && p[k])) {
			if (!k || c->name[k - 1] != ' ')
				break;
			k--;
		}
		if (strncmp(p, c->name, k) || (p[k] != '/' && p[k]))
			continue;
		const char *rest = p + k + strspn(p + k, "/");
		if (!*rest)
			return c;
		struct mnode *hit = resolve(m, c, rest, depth + 1, miss, err);
		if (hit || *err)
			return hit;
	}
	if (depth >= miss->depth)
		*miss = (struct miss){.at = n, .rest = p, .depth = depth};
	return NULL;
}

int tree_view_goto(struct tree_view *v, const char *path, char **err)
{
	const char *p = path + strspn(path, "/");
	struct mnode *target = NULL;
	if (*p) {
		struct miss miss = {0};
		*err = NULL;
		target = resolve(v->m, model_root(v->m), p, 0, &miss, err);
		if (*err)
			return -1;
		if (!target) {
			*err = xasprintf("no phase '%.*s' under '%s'", (int)strcspn(miss.rest, "/"),
					 miss.rest, miss.at->name);
			return -1;
		}
	}
	free(v->filter);
	v->filter = NULL;
	if (!target)
		return tree_view_show(v, model_root(v->m), NULL, err);
	return tree_view_show(v, target->parent, target, err);
}

void tree_view_scroll(struct tree_view *v, int height)
{
	if (height < 1)
		height = 1;
	if (v->sel < v->top)
		v->top = v->sel;
	if (v->sel >= v->top + (size_t)height)
		v->top = v->sel - (size_t)height + 1;
	if (v->nrows <= (size_t)height)
		v->top = 0;
	else if (v->top > v->nrows - (size_t)height)
		v->top = v->nrows - (size_t)height;
}
