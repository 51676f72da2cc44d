/*
 * The explorer's state and its two entry points: app_key (one key press,
 * dispatched through the key table in keys.h) and app_draw (the whole
 * screen into a grid).  Neither touches the terminal: tui/term.c runs them
 * under curses, tui/headless.c from a key script.  Each screen is its own
 * module (tree, timeline, metrics, help) drawing into the grid below the
 * breadcrumb line and above the status line.
 */
#ifndef GRADEML_APP_H
#define GRADEML_APP_H

#include <signal.h>
#include <stdint.h>

#include "model/analysis/analyze.h"
#include "model/analysis/attach.h"
#include "model/analysis/cause.h"
#include "model/analysis/flame.h"
#include "model/view/lanes.h"
#include "model/util/sbuf.h"
#include "model/view/model.h"
#include "model/store/ptree.h"
#include "query/exec.h"
#include "query/print.h"
#include "tui/glyphs.h"
#include "tui/grid.h"
#include "tui/keys.h"
#include "tui/prompt.h"
#include "tui/treeview.h"

enum app_screen {
	SCREEN_TREE,
	SCREEN_TIMELINE,
	SCREEN_METRICS,
	SCREEN_HELP,
	SCREEN_ISSUES,
	SCREEN_RESULTS,
	SCREEN_FLAME,
};

/* Keys a timeline keeps while its phases are read. */
#define TIMELINE_QUEUE 64

/* Timeline state: tree.node's subtree laid out, the window shown, the
 * selected phase. */
struct timeline {
	struct mnode *node; /* whose subtree is drawn; NULL: not set up */
	struct lanes l;
	int64_t t0, t1;		  /* the visible window */
	uint32_t sel;		  /* index into l.s */
	int top;		  /* first row shown */
	struct mnode cur;	  /* the selected phase as read for its name */
	struct timeline_job *job; /* the lanes being read; NULL: none */
	int64_t want;		  /* the phase to select when they are read */
	/* keys typed while they are read, acted on once they are */
	enum action queued[TIMELINE_QUEUE];
	int nqueued;
	int free_scroll; /* the lanes scrolled by hand: the selection may be off screen */
	/* a range: v marks a phase (anchor), v at another sums from the
	 * earlier start to the later end; V sums the window */
	int anchored, ranged;
	uint32_t anchor; /* index into l.s */
	struct lanes_sum sum;
};

/* Metrics screen state. */
struct metrics_view {
	size_t sel, top;
	char *filter;
	/* each series' figures over [win_t0, win_t1), the window of the
	 * phase they were read for (NULL: none read yet); metrics.c owns it */
	struct mwindow *win;
	size_t nwin;
	int64_t win_t0, win_t1;
};

/* Top-issues screen state: the analyses, read when it first opens. */
struct issues_view {
	size_t sel, top;
	int loaded;
	struct analysis an;
	char **paths; /* each issue's phase as a :goto path (NULL: gone) */
};

/* Query results screen state (tui/results.c). */
struct results_view {
	sqlite3 *db; /* read-only, opened by the first query */
	char *query; /* the last query run, as typed; NULL: none yet */
	char *error; /* its error (caret line, hint); NULL: it ran */
	struct query_result r;
	struct query_table t; /* r's cells as display text */
	size_t *order;	      /* the rows shown (filtered, sorted): indexes into r */
	size_t nshown;
	size_t sel, top;  /* positions in order */
	size_t col, left; /* the selected column; the first one drawn */
	int sort_col;	  /* -1: the query's own order */
	int desc;
	char *filter;
	int64_t max_memory; /* what one query may take (query_limits); 0 no limit */
	int64_t timeout_ns; /* how long one query may run, a writer waited for
			     * included (query_limits); 0 no limit */
	/* a :kernels or :ops table: the phase it summarises, whose flame graph
	 * :callers and c read (0: the table is none of them), in device time */
	int64_t callers_root;
	int callers_device;
	int whole; /* w: the selected row's whole name below the table */
};

/* Flame graph screen state (tui/flame.c). */
struct flame_view {
	struct flame fl;
	int built;
	int64_t phase_id; /* whose subtree fl merges */
	enum flame_mode mode;
	uint32_t zoom, sel; /* frames: the one drawn across the width, the selected one */
	int top;	    /* the first level drawn below zoom */
	/* bottom-up (:callers): the frames of one name, shown as a list */
	int in_callers;
	int callers_back; /* the list was opened from the results screen: q returns there */
	char *cname;
	uint32_t *callers;
	size_t ncallers, csel, ctop;
	int whole; /* w: the current frame's whole name below the graph */
};

struct app;

/* Resource attribution as the tree reads it: the file's cache when it is
 * fresh, else computed in memory for files small enough (tui/attr.c). */
#define APP_ATTR_BUCKETS 24 /* the details pane's usage-over-time sparklines */

struct app_attr {
	int state;		/* 0 not yet looked, 1 the cache, 2 computed, -1 none */
	struct attribution all; /* when computed */
	struct attrib_row row;	/* the last row read from the cache */
	int64_t series_for;	/* the phase series is of (0: none yet) */
	int series_ok;
	double series[ATTRIB_NRES * APP_ATTR_BUCKETS];

	/* the GPUs' idle causes (model/analysis/cause.h), read when a row first
	 * needs them: cause_state 0 not yet, 1 read, -1 none to be had */
	int cause_state;
	struct cause_map *causes;
};

/* Whether the file has attribution to show (looks on the first call). */
int app_attr_available(struct app *a);
/* The attribution row of a phase, or NULL (none, or none to be had). */
const struct attrib_row *app_attr(struct app *a, int64_t phase_id);
/* The phase's main bottleneck in at most w columns into buf, or "" when it
 * has none: "gpu 52%", "sw 100%" for software-bound, or where software
 * bounds it and its GPUs idled, the cause: "idle:input 96%" (or shorter
 * to fit, model/analysis/cause.h). */
void app_attr_top(struct app *a, const struct attrib_row *r, int w, char *buf, size_t n);
/* The details pane's two lines on r: resource use as bars, bottlenecks. */
void app_attr_lines(struct app *a, const struct attrib_row *r, struct sbuf *use,
		    struct sbuf *bneck);
/* The details pane's "over time" line: for each resource r uses, its
 * attributed usage over n's window as a sparkline (attrib_series), or why
 * there is none. */
void app_attr_over_time(struct app *a, const struct mnode *n, const struct attrib_row *r,
			struct sbuf *out);
void app_attr_release(struct app_attr *t);

/* Smallest usable terminal. */
#define APP_MIN_W 80
#define APP_MIN_H 20

struct app {
	struct model *m;
	struct tree_view tree;
	enum app_screen screen, back; /* back: where help returns to */
	int details;		      /* details pane shown */
	int details_top;	      /* its first row shown (J/K), for detail_for */
	char *spark;		      /* the tree's sparkline metric (NULL: when rows ran) */
	struct timeline tl;
	struct metrics_view mv;
	struct issues_view iv;
	struct results_view rv;
	struct flame_view fv;
	size_t help_top;
	struct prompt prompt;
	char *search;  /* last search pattern */
	char *message; /* one-line message shown in the status line */
	int msg_error;
	const struct glyphs *g;
	char *theme; /* requested theme name; term.c applies it */
	int theme_changed;
	int quit;
	char *fatal;	       /* why the explorer stopped on a broken file (app_error), or NULL */
	int redraw;	       /* Ctrl-L: the front end repaints everything */
	int w, h;	       /* last drawn size */
	int cur_x, cur_y;      /* where the terminal cursor goes (-1: hidden) */
	int page;	       /* rows of the list last drawn (for PgUp/PgDn) */
	struct mdetail detail; /* of detail_for, for the details pane */
	const struct mnode *detail_for;
	int64_t sib_count, sib_min, sib_mean, sib_p95, sib_max; /* same-named siblings */
	struct mbusy busy[3]; /* the busiest attached resources over detail_for */
	size_t nbusy;
	struct app_attr attr;  /* resource attribution (tui/attr.c) */
	struct imbalance *imb; /* stragglers for the details pane (imb_state 1) */
	size_t nimb;
	int imb_state; /* 0 not yet read, 1 read, -1 none to be had */
	/* Set by a front end that has a terminal (NULL headless): the flag its
	 * SIGINT handler sets, which stops a long query, and a function that
	 * shows the frame at once, before such a wait. */
	volatile sig_atomic_t *interrupt;
	void (*show_now)(struct app *a);
};

/* history: the command history file, or NULL to keep none (headless). */
int app_init(struct app *a, struct model *m, int ascii, const char *history, char **err);
void app_release(struct app *a);
/* Handles one key; sets a->quit when the user quits. */
void app_key(struct app *a, int key);
/* A mouse click at column x, row y of the last frame drawn (--mouse): on
 * the tree, a click on a row selects it. */
void app_click(struct app *a, int x, int y);
void app_draw(struct app *a, struct grid *g);
/* Shows a message in the status line until the next key. */
void app_message(struct app *a, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Gives the status line back to the screen (a key does it too). */
void app_message_clear(struct app *a);
/* A failure of a model call that returned rc with err (taken, may be
 * NULL): in the status line, or, when rc says the file itself is broken
 * (PTREE_LOOP), the explorer stops and the front end reports a->fatal. */
void app_error(struct app *a, int rc, char *err);

/* The stop test of a long operation (query_limits, diff_compute), ctx the
 * app: C-c at the terminal (a->interrupt says SIGINT; never headless).
 * Whoever it stopped clears *a->interrupt, so that the explorer goes on. */
int app_interrupted(void *ctx);
/* The monotonic clock in ns: how long a command took. */
int64_t app_now_ns(void);

/* Moves a list's selection for a movement action (down, up, a page of
 * rows or half of one, first, last) among n rows and scrolls top to keep it shown; 1 when
 * act was one of those. */
int app_list_move(enum action act, size_t *sel, size_t *top, size_t n, size_t rows);

/* The screens (one module each). */
void tree_draw(struct app *a, struct grid *g, int y, int h);
void tree_key(struct app *a, enum action act);
/* The tree's search for a->search below the current level: a fresh one,
 * or the next (dir > 0) or previous match of the last; says "3 of 17". */
void tree_search(struct app *a, int dir, int fresh);
/* Selects the row drawn at screen row y, if any. */
void tree_click(struct app *a, int y);
void timeline_open(struct app *a);
/* Selects child c of the timeline's node, keeping the zoom, and pans to it. */
void timeline_select(struct app *a, const struct mnode *c);
/* Shows the timeline's selected phase in the tree. */
void timeline_leave(struct app *a);
/* 1 when the lanes being read have just arrived (draw again). */
int timeline_poll(struct app *a);
/* Waits for the lanes being read. */
void timeline_wait(struct app *a);
void timeline_release(struct app *a);
void timeline_key(struct app *a, enum action act);
void timeline_draw(struct app *a, struct grid *g, int y, int h);
void metrics_key(struct app *a, enum action act);
void metrics_draw(struct app *a, struct grid *g, int y, int h);
void issues_open(struct app *a);
void issues_key(struct app *a, enum action act);
void issues_draw(struct app *a, struct grid *g, int y, int h);
void issues_release(struct issues_view *v);
/* Whether the ':' line whose first word is line[0..len) is a query: the
 * word is a query source (a bare "metrics" is the metrics screen). */
int results_is_query(const char *line, size_t len);
/* Runs query and shows its result (or its error) on the results screen. */
void results_run(struct app *a, const char *query);
void results_open(struct app *a);
/* Shows r, a result built by hand (taken over), on the results screen
 * under title, as if a query had returned it. */
void results_show(struct app *a, const char *title, struct query_result *r);
/* :kernels, :ops, :api (enum summ_kind, tui/summ.h): the summary of the
 * phase at path, else of the selected one, on the results screen. */
void summ_open(struct app *a, int kind, const char *path);
void results_key(struct app *a, enum action act);
/* Bottom-up from a :kernels or :ops table: the callers of name (empty: the
 * selected row's) in the flame graph of the phase the table summarises. */
void results_callers(struct app *a, const char *name);
void results_draw(struct app *a, struct grid *g, int y, int h);
int results_search(struct app *a, const char *pat, int dir, int *wrapped);
void results_set_filter(struct app *a, const char *pat);
/* Completion candidates for a query (query_complete on the screen's
 * connection). */
size_t results_complete(struct app *a, const char *line, char ***cands, size_t *start);
void results_release(struct results_view *v);
/* Selects the next (dir > 0) or previous series shown that matches pat
 * (name or host), wrapping; 1 found, 0 not. */
int metrics_search(struct app *a, const char *pat, int dir, int *wrapped);
/* Merges the selected phase's subtree (unless it is the one shown); 0, or
 * -1 with the reason in the status line. */
int flame_view_open(struct app *a);
void flame_view_key(struct app *a, enum action act);
void flame_view_draw(struct app *a, struct grid *g, int y, int h);
/* The selected frame's total, self and count on status line y. */
void flame_view_status(struct app *a, struct grid *g, int y);
void flame_view_release(struct flame_view *v);
/* Bottom-up: every path to the frames named name (empty: the selected
 * frame's) in the flame graph, as a list on the flame screen. */
void flame_view_callers(struct app *a, const char *name);
/* The same in the flame graph of phase root_id (merged unless it is the one
 * shown) in mode, q going back to the results screen; 0, or -1 with the
 * reason in the status line (and the screen left as it was). */
int flame_view_callers_at(struct app *a, int64_t root_id, enum flame_mode mode, const char *name);
void help_key(struct app *a, enum action act);
void help_draw(struct app *a, struct grid *g, int y, int h);
/* The i-th ':' command's name, arguments and help; 0 past the end. */
int app_command_info(size_t i, const char **name, const char **args, const char **help);

#endif
