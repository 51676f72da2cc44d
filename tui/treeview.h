/*
 * The tree screen's state and logic, without curses: which phase's
 * children are listed, in what order, which row is selected, the filter
 * and the search.  The caller owns the struct; tree_view_release frees what
 * it holds (never the model).  rows[] are the current node's children that
 * pass the filter, sorted, the profiler's bookkeeping after the others
 * (model_cmp_bookkeeping), so that a level's first row, selected when it
 * is shown, is work wherever it has any; sel < nrows unless nrows is 0.
 */
#ifndef GRADEML_TREEVIEW_H
#define GRADEML_TREEVIEW_H

#include <stddef.h>

#include "model/view/model.h"

enum tree_sort { SORT_NAME, SORT_DUR, SORT_SELF, SORT_COUNT, SORT_START };

struct tree_view {
	struct model *m;
	struct mnode *node;
	struct mnode **rows;
	size_t nrows, alloc;
	size_t sel, top;
	enum tree_sort sort;
	int desc;
	char *filter; /* NULL: none */
	/* the last tree_view_find: its pattern, the level it searched below,
	 * the ids it found (in order of start), the one shown */
	char *find_pat;
	int64_t find_root;
	int64_t *hits;
	size_t nhits, hit;
	int hits_more; /* more than TREE_VIEW_FIND_MAX matched */
};

/* Matches tree_view_find keeps at most. */
#define TREE_VIEW_FIND_MAX 100000

/* Shows the first level with more than one row: from the top, down through
 * chains of only children (as tree_view_enter does). */
int tree_view_init(struct tree_view *v, struct model *m, char **err);
void tree_view_release(struct tree_view *v);
struct mnode *tree_view_selected(const struct tree_view *v);
/* Lists n's children and selects sel (or the first row when sel is not
 * among them). */
int tree_view_show(struct tree_view *v, struct mnode *n, struct mnode *sel, char **err);
/* Into the selected row and on through chains of single children that
 * have children, to the first level with more than one row (the levels
 * passed are the breadcrumb's; tree_view_up goes back one at a time); 0
 * when the row has no children (nothing happens). */
int tree_view_enter(struct tree_view *v, char **err);
/* Up to the parent, selecting where we came from; 0 at the root. */
int tree_view_up(struct tree_view *v, char **err);
/* Moves the selection by delta rows, clamped. */
void tree_view_move(struct tree_view *v, long delta);
/* Sorts by s; the same s again flips the order.  Keeps the selection. */
void tree_view_sort(struct tree_view *v, enum tree_sort s);
/* Selects the row with the longest duration, the profiler's bookkeeping
 * only when the selected row is too. */
void tree_view_costliest(struct tree_view *v);
/* Selects the next (dir > 0) or previous row whose name matches pat (smart
 * case: case-sensitive only when pat has an upper-case letter), wrapping.
 * Returns 1 found, 0 none, and sets *wrapped when it went past an end. */
int tree_view_search(struct tree_view *v, const char *pat, int dir, int *wrapped);
/* Searches the whole subtree below the current level (not only its rows)
 * for names matching pat (smart case), in order of start, and shows the
 * first match after the selected row (wrapping) as tree_view_goto shows a
 * phase: its level, it selected.  Returns 1 found, 0 none, -1 with *err. */
int tree_view_find(struct tree_view *v, const char *pat, char **err);
/* The next (dir > 0) or previous match of the last tree_view_find,
 * wrapping (*wrapped set when it went past an end); 0 when there is none. */
int tree_view_find_next(struct tree_view *v, int dir, int *wrapped, char **err);
/* Shows phase id (an id from the file) as tree_view_goto shows a phase;
 * 0 when it is not in the tree. */
int tree_view_show_id(struct tree_view *v, int64_t id, char **err);
/* Shows only rows whose name matches pat (smart case); NULL or "" clears. */
void tree_view_set_filter(struct tree_view *v, const char *pat);
/* Goes to the phase at path ("/workflow/step/..."; names may hold '/'):
 * shows its parent with it selected.  "/" is the top. */
int tree_view_goto(struct tree_view *v, const char *path, char **err);
/* Keeps sel visible in a window of height rows. */
void tree_view_scroll(struct tree_view *v, int height);
/* 1 when name matches pat under smart case. */
int tree_view_match(const char *name, const char *pat);

#endif
