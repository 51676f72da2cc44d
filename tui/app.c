/*
 * The explorer's frame and dispatcher; see app.h.  A frame is the
 * breadcrumb line, the current screen, and the status line (the prompt
 * while one is open, else a message, else key hints).
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/analysis/critpath.h"
#include "model/util/outfile.h"
#include "model/util/sbuf.h"
#include "query/parse.h"
#include "tui/app.h"
#include "tui/diffview.h"
#include "tui/format.h"
#include "tui/pathview.h"
#include "tui/summ.h"
#include "tui/theme.h"
#include "model/util/xalloc.h"

int app_init(struct app *a, struct model *m, int ascii, const char *history, char **err)
{
	memset(a, 0, sizeof(*a));
	a->m = m;
	a->g = glyphs_get(ascii);
	a->cur_x = a->cur_y = -1;
	prompt_init(&a->prompt, history);
	return tree_view_init(&a->tree, m, err);
}

void app_release(struct app *a)
{
	model_detail_release(&a->detail);
	tree_view_release(&a->tree);
	prompt_release(&a->prompt);
	free(a->mv.filter);
	free(a->mv.win);
	issues_release(&a->iv);
	results_release(&a->rv);
	flame_view_release(&a->fv);
	timeline_release(a);
	app_attr_release(&a->attr);
	imbalance_release(a->imb, a->nimb);
	free(a->search);
	free(a->message);
	free(a->fatal);
	free(a->theme);
	free(a->spark);
	memset(a, 0, sizeof(*a));
}

void app_message(struct app *a, int error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	struct sbuf sb = SBUF_INIT;
	char buf[512];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sbuf_adds(&sb, buf);
	free(a->message);
	a->message = sbuf_detach(&sb);
	a->msg_error = error;
}

void app_message_clear(struct app *a)
{
	free(a->message);
	a->message = NULL;
}

void app_error(struct app *a, int rc, char *err)
{
	if (rc == PTREE_LOOP) {
		if (!a->fatal)
			a->fatal = err ? err : xstrdup("the phase tree is broken");
		else
			free(err);
		a->quit = 1;
		return;
	}
	app_message(a, 1, "%s", err ? err : "unknown error");
	free(err);
}

static void fail(struct app *a, char *err)
{
	app_error(a, -1, err);
}

int app_interrupted(void *ctx)
{
	const struct app *a = ctx;
	return a->interrupt && *a->interrupt == SIGINT;
}

int64_t app_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int app_list_move(enum action act, size_t *sel, size_t *top, size_t n, size_t rows)
{
	size_t last = n ? n - 1 : 0;
	switch (act) {
	case A_DOWN:
		*sel += *sel < last;
		break;
	case A_UP:
		*sel -= *sel > 0;
		break;
	case A_PGDN:
		*sel = *sel + rows < last ? *sel + rows : last;
		break;
	case A_PGUP:
		*sel = *sel > rows ? *sel - rows : 0;
		break;
	case A_HALF_DOWN:
		return app_list_move(A_PGDN, sel, top, n, rows > 1 ? rows / 2 : 1);
	case A_HALF_UP:
		return app_list_move(A_PGUP, sel, top, n, rows > 1 ? rows / 2 : 1);
	case A_HOME:
		*sel = 0;
		break;
	case A_END:
		*sel = last;
		break;
	default:
		return 0;
	}
	if (*sel < *top)
		*top = *sel;
	if (*sel >= *top + rows)
		*top = *sel - rows + 1;
	return 1;
}

/* ---- search and filter (per screen) ---- */

/* fresh: the pattern was just typed (else n or N). */
static void search(struct app *a, int dir, int fresh)
{
	if (!a->search || !*a->search) {
		app_message(a, 1, "no search yet: type / to search");
		return;
	}
	int found = 0, wrapped = 0;
	if (a->screen == SCREEN_TREE) {
		tree_search(a, dir, fresh);
		return;
	} else if (a->screen == SCREEN_TIMELINE) {
		found = tree_view_search(&a->tree, a->search, dir, &wrapped);
		if (found && a->screen == SCREEN_TIMELINE)
			timeline_select(a, tree_view_selected(&a->tree));
	} else if (a->screen == SCREEN_METRICS) {
		found = metrics_search(a, a->search, dir, &wrapped);
	} else if (a->screen == SCREEN_RESULTS) {
		found = results_search(a, a->search, dir, &wrapped);
	} else {
		return;
	}
	if (!found)
		app_message(a, 1, "pattern not found: %s", a->search);
	else if (wrapped)
		app_message(a, 0, "search wrapped");
}

static void set_filter(struct app *a, const char *pat)
{
	if (a->screen == SCREEN_METRICS) {
		free(a->mv.filter);
		a->mv.filter = *pat ? xstrdup(pat) : NULL;
		a->mv.sel = a->mv.top = 0;
		return;
	}
	if (a->screen == SCREEN_RESULTS) {
		results_set_filter(a, pat);
		return;
	}
	tree_view_set_filter(&a->tree, pat);
	if (*pat && !a->tree.nrows)
		app_message(a, 1, "no rows match the filter '%s'", pat);
}

/* "a, b or c": the names starting with name[0..len) of n names. */
static void list_matches(struct sbuf *sb, const char *const *names, size_t n, const char *name,
			 size_t len)
{
	size_t k = 0, total = 0;
	for (size_t i = 0; i < n; i++)
		total += !strncmp(names[i], name, len);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(names[i], name, len))
			continue;
		sbuf_adds(sb, k == 0 ? "" : k + 1 == total ? " or " : ", ");
		sbuf_adds(sb, names[i]);
		k++;
	}
}

/* ---- ':' commands: one table, as tmux's cmd_entry ---- */

struct command {
	const char *name;
	const char *args; /* for help and completion */
	const char *help;
	void (*run)(struct app *a, const char *arg); /* NULL: opens screen */
	enum app_screen screen;
};

static void cmd_goto(struct app *a, const char *arg)
{
	char *err = NULL;
	if (!*arg) {
		app_message(a, 1, "goto needs a path, e.g. :goto /workflow/step");
		return;
	}
	if (tree_view_goto(&a->tree, arg, &err) < 0)
		fail(a, err);
	else if (a->screen != SCREEN_TREE)
		a->screen = SCREEN_TREE;
}

static const char *const sort_names[] = {"name", "duration", "self", "count", "start"};

static void cmd_sort(struct app *a, const char *arg)
{
	size_t n = sizeof(sort_names) / sizeof(*sort_names), hits = 0, hit = 0;
	for (size_t i = 0; i < n && *arg; i++) {
		if (!strcmp(sort_names[i], arg)) {
			hits = 1;
			hit = i;
			break;
		}
		if (!strncmp(sort_names[i], arg, strlen(arg))) {
			hits++;
			hit = i;
		}
	}
	if (hits == 1) {
		tree_view_sort(&a->tree, (enum tree_sort)hit);
	} else if (hits > 1) {
		struct sbuf sb = SBUF_INIT;
		list_matches(&sb, sort_names, n, arg, strlen(arg));
		app_message(a, 1, "'%s' is ambiguous: %s", arg, sb.buf);
		sbuf_release(&sb);
	} else {
		app_message(a, 1, "sort by name, duration, self, count or start, not '%s'", arg);
	}
}

static void cmd_theme(struct app *a, const char *arg)
{
	struct theme t;
	char *err = NULL;
	if (theme_load(arg, &t, &err) < 0) {
		fail(a, err);
		return;
	}
	free(a->theme);
	a->theme = xstrdup(arg);
	a->theme_changed = 1;
}

/* ':save FILE' writes the screen as text to FILE as model/util/outfile.h
 * says; a FIFO that nothing reads is an error, not a frozen explorer. */
static void cmd_save(struct app *a, const char *arg)
{
	if (!*arg) {
		app_message(a, 1, "save needs a file name");
		return;
	}
	struct outfile o;
	char *err = NULL, *text = NULL;
	size_t len = 0;
	if (outfile_open(&o, arg, OUTFILE_NONBLOCK, &err) < 0) {
		fail(a, err);
		return;
	}
	FILE *mem = open_memstream(&text, &len);
	if (mem) {
		struct grid g;
		grid_init(&g, a->w > 0 ? a->w : APP_MIN_W, a->h > 0 ? a->h : APP_MIN_H, 0);
		app_draw(a, &g);
		grid_dump(&g, mem);
		grid_release(&g);
	}
	int ok = mem && fclose(mem) == 0;
	if (!ok)
		err = xasprintf("cannot write '%s': out of memory", arg);
	else if (outfile_write(&o, text, len, &err) < 0)
		ok = 0;
	free(text);
	if (outfile_close(&o, ok, &err) < 0)
		fail(a, err);
	else
		app_message(a, 0, "saved the screen to %s", arg);
}

/* ':spark METRIC' shows the metric in the tree's last column, during each
 * row, METRIC named as queries name it (mseries_named); ':spark' alone goes
 * back to when the rows ran. */
static void cmd_spark(struct app *a, const char *arg)
{
	const struct mseries *s;
	size_t n;
	char *err = NULL;
	free(a->spark);
	a->spark = NULL;
	if (!*arg)
		return;
	if (model_series(a->m, &s, &n, &err) < 0) {
		fail(a, err);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (mseries_named(&s[i], arg, NULL)) {
			a->spark = xstrdup(arg);
			return;
		}
	}
	app_message(a, 1,
		    "no metric series named '%s' (NAME or RESOURCE.NAME[@HOST]; Tab lists them; m "
		    "shows them all)",
		    arg);
}

/* A name as :whatif's message shows it: shortened as lists show it and cut
 * to cols columns, so that the message's end (what then bounds the path)
 * is on the line whatever the names; the caller frees it. */
static char *whatif_name(const char *name, int cxx, int cols, const char *more)
{
	struct sbuf sb = SBUF_INIT, cut = SBUF_INIT;
	format_name(&sb, name, cxx, more);
	if (format_width(sb.buf) > cols) {
		format_fit(&cut, sb.buf, cols - format_width(more), 0);
		sbuf_adds(&cut, more);
		sbuf_release(&sb);
		return cut.buf;
	}
	return sb.buf;
}

/* What bounds a what-if's path: the phase's name and, when it ran on a
 * track other than the selected phase's, "on" the track (and its rank),
 * each cut to cols columns. */
static char *whatif_bound(struct app *a, const struct critpath_whatif *r, int64_t own_track,
			  int cols)
{
	char *full = analysis_phase_name(model_store(a->m), r->bound_id), *s;
	char *name = whatif_name(full, 1, cols, a->g->more);
	free(full);
	const struct mtrack *t = r->bound_track_id && r->bound_track_id != own_track
				     ? model_track(a->m, r->bound_track_id)
				     : NULL;
	char *track = t ? whatif_name(t->name, 0, cols, a->g->more) : NULL;
	if (t && t->rank >= 0)
		s = xasprintf("%s on rank %lld's %s", name, (long long)t->rank, track);
	else if (t)
		s = xasprintf("%s on %s", name, track);
	else
		s = xstrdup(name);
	free(track);
	free(name);
	return s;
}

/* :whatif's message for phase n of workflow w made k times faster (how),
 * the replay's result r, each name cut to cols columns; the caller frees
 * it. */
static char *whatif_text(struct app *a, const struct mnode *n, const struct mnode *w, double k,
			 const char *how, const struct critpath_whatif *r, int cols)
{
	char was[32], saved[32], lost[32], *s;
	int64_t gain = r->observed_ns - r->makespan_ns;
	double pct = r->observed_ns > 0 ? 100.0 * (double)gain / (double)r->observed_ns : 0.0;
	format_duration(was, sizeof(was), r->observed_ns);
	format_duration(saved, sizeof(saved), gain < 0 ? -gain : gain);
	char *nname = whatif_name(n->name, n->kind == PHASE_KERNEL, cols, a->g->more);
	char *wname = whatif_name(w->name, 0, cols, a->g->more);
	if (k == 1) {
		s = xasprintf("%s at 1x changes nothing: %s's %s as observed", nname, wname, was);
	} else if (!r->shrink_ns) {
		s = xasprintf("%s %s saves nothing: not on %s's critical path", nname, how, wname);
	} else if (gain < 0) {
		s = xasprintf("%s %s adds %s (%.2f%%) to %s's %s", nname, how, saved, -pct, wname,
			      was);
	} else if (r->bound_id) {
		char *b = whatif_bound(a, r, n->track_id, cols);
		format_duration(lost, sizeof(lost), r->loss_ns);
		if (gain)
			s = xasprintf(
			    "%s %s saves %s (%.2f%%) of %s's %s, not %s: then %s bounds the"
			    " path",
			    nname, how, saved, pct, wname, was, lost, b);
		else
			s = xasprintf(
			    "%s %s saves nothing of %s's %s, not %s: %s bounds the path as"
			    " well",
			    nname, how, wname, was, lost, b);
		free(b);
	} else {
		s = xasprintf("%s %s saves %s (%.2f%%) of %s's %s", nname, how, saved, pct, wname,
			      was);
	}
	free(nname);
	free(wname);
	return s;
}

/* ':whatif K': the makespan of the selected phase's workflow were the
 * phase K times faster (K may be "inf": were it free), by replaying the
 * critical path's DAG (model/analysis/critpath.h); where it saves less than its
 * time on the path would, what then bounds the path.  Names are shown as
 * lists show them; where the message is wider than the screen, each is cut
 * to a share of the line, so that its end is on it. */
static void cmd_whatif(struct app *a, const char *arg)
{
	const struct mnode *n = tree_view_selected(&a->tree), *w = n;
	char *end, *err = NULL;
	double k = strtod(arg, &end);
	if (end != arg && (*end == 'x' || *end == 'X'))
		end++;
	if (!*arg || end == arg || *end || !(k > 0)) {
		app_message(a, 1, "whatif needs a speed-up K > 0, e.g. :whatif 2 (or inf)");
		return;
	}
	if (!n || !n->parent) {
		app_message(a, 1, "whatif: select a phase first");
		return;
	}
	while (w->parent && w->parent->parent)
		w = w->parent;
	struct store *st = model_store(a->m);
	if (a->show_now) {
		app_message(a, 0, "replaying %s's critical path ...", w->name);
		a->show_now(a);
	}
	struct critpath_whatif r;
	int rc = critpath_whatif(st, w->id, n->id, k, &r, &err);
	if (rc < 0) {
		app_error(a, rc, err);
		return;
	}
	char how[32];
	if (isinf(k))
		snprintf(how, sizeof(how), "taking no time");
	else if (k < 1)
		snprintf(how, sizeof(how), "%gx as fast", k);
	else
		snprintf(how, sizeof(how), "%gx faster", k);
	int width = a->w > 0 ? a->w : APP_MIN_W;
	char *msg = whatif_text(a, n, w, k, how, &r, INT_MAX);
	if (format_width(msg) > width - 1) {
		int cols = (width - 80) / 3; /* the longest message's words and figures */
		free(msg);
		msg = whatif_text(a, n, w, k, how, &r, cols < 12 ? 12 : cols);
	}
	app_message(a, 0, "%s", msg);
	free(msg);
}

static void cmd_callers(struct app *a, const char *arg)
{
	if (a->screen == SCREEN_RESULTS && a->rv.callers_root)
		results_callers(a, arg);
	else
		flame_view_callers(a, arg);
}

static void cmd_kernels(struct app *a, const char *arg)
{
	summ_open(a, SUMM_KERNELS, arg);
}

static void cmd_ops(struct app *a, const char *arg)
{
	summ_open(a, SUMM_OPS, arg);
}

static void cmd_api(struct app *a, const char *arg)
{
	summ_open(a, SUMM_API, arg);
}

static void cmd_annotations(struct app *a, const char *arg)
{
	summ_open(a, SUMM_ANNOTATIONS, arg);
}

static void cmd_ranks(struct app *a, const char *arg)
{
	summ_open(a, SUMM_RANKS, arg);
}

static void cmd_quit(struct app *a, const char *arg)
{
	a->quit = 1;
}

static const struct command commands[] = {
    {"goto", "PATH", "show the phase at PATH (/workflow/step/...)", cmd_goto, SCREEN_TREE},
    {"sort", "name|duration|self|count|start", "sort the tree (again: reverse)", cmd_sort,
     SCREEN_TREE},
    {"theme", "NAME", "switch to the theme NAME", cmd_theme, SCREEN_TREE},
    {"spark", "[METRIC]", "show METRIC during each row in the tree (none: when rows ran)",
     cmd_spark, SCREEN_TREE},
    {"save", "FILE", "write the screen as text to FILE", cmd_save, SCREEN_TREE},
    {"whatif", "K", "the time saved were the selected phase K times faster", cmd_whatif,
     SCREEN_TREE},
    {"diff", "OTHER.db", "OTHER.db against this run, by name", diffview_command, SCREEN_RESULTS},
    {"tree", "", "show the tree", NULL, SCREEN_TREE},
    {"timeline", "", "show the timeline", NULL, SCREEN_TIMELINE},
    {"metrics", "", "show the metrics", NULL, SCREEN_METRICS},
    {"issues", "", "show the top issues", NULL, SCREEN_ISSUES},
    {"results", "", "show the last query's results again", NULL, SCREEN_RESULTS},
    {"flame", "", "flame graph of the selected phase's subtree", NULL, SCREEN_FLAME},
    {"callers", "[NAME]", "every path to NAME (flame, :kernels, :ops)", cmd_callers, SCREEN_FLAME},
    {"help", "", "show the help", NULL, SCREEN_HELP},
    {"kernels", "[PATH]", "device work by name under the selection", cmd_kernels, SCREEN_RESULTS},
    {"ops", "[PATH]", "operators by name under the selection", cmd_ops, SCREEN_RESULTS},
    {"api", "[PATH]", "runtime calls by name under the selection", cmd_api, SCREEN_RESULTS},
    {"annotations", "[PATH]", "user annotations by name under the selection", cmd_annotations,
     SCREEN_RESULTS},
    {"ranks", "[PATH]", "the ranks of the selection's step", cmd_ranks, SCREEN_RESULTS},
    {"path", "", "each workflow's critical path, 2x what-ifs", pathview_command, SCREEN_RESULTS},
    {"quit", "", "quit", cmd_quit, SCREEN_TREE},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

int app_command_info(size_t i, const char **name, const char **args, const char **help)
{
	if (i >= NCOMMANDS)
		return 0;
	*name = commands[i].name;
	*args = commands[i].args;
	*help = commands[i].help;
	return 1;
}

/* The command name[0..len) names, exactly or as the prefix of just one;
 * NULL otherwise, with *matches counting the commands it is a prefix of. */
static const struct command *find_command(const char *name, size_t len, int *matches)
{
	const struct command *hit = NULL;
	*matches = 0;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strlen(commands[i].name) == len && !strncmp(commands[i].name, name, len)) {
			*matches = 1;
			return &commands[i];
		}
		if (len && !strncmp(commands[i].name, name, len)) {
			hit = &commands[i];
			(*matches)++;
		}
	}
	return *matches == 1 ? hit : NULL;
}

static void open_screen(struct app *a, enum app_screen s)
{
	if (s == SCREEN_HELP) {
		if (a->screen != SCREEN_HELP)
			a->back = a->screen;
		a->help_top = 0;
	} else if (s == SCREEN_TIMELINE) {
		timeline_open(a);
	} else if (s == SCREEN_ISSUES) {
		issues_open(a);
	} else if (s == SCREEN_RESULTS) {
		results_open(a);
	} else if (s == SCREEN_FLAME && flame_view_open(a) < 0) {
		return;
	}
	a->screen = s;
}

/* Runs one ':' command line (without the ':'). */
static void app_command(struct app *a, const char *line)
{
	while (*line == ' ')
		line++;
	size_t len = strcspn(line, " ");
	if (!len)
		return;
	if (results_is_query(line, len)) {
		results_run(a, line);
		return;
	}
	int matches;
	const struct command *c = find_command(line, len, &matches);
	if (!c && matches > 1) {
		const char *names[NCOMMANDS];
		struct sbuf sb = SBUF_INIT;
		for (size_t i = 0; i < NCOMMANDS; i++)
			names[i] = commands[i].name;
		list_matches(&sb, names, NCOMMANDS, line, len);
		app_message(a, 1, "'%.*s' is ambiguous: %s", (int)len, line, sb.buf);
		sbuf_release(&sb);
		return;
	}
	if (!c) {
		app_message(a, 1, "unknown command '%.*s' (Tab lists them)", (int)len, line);
		return;
	}
	const char *arg = line + len;
	while (*arg == ' ')
		arg++;
	if (c->run)
		c->run(a, arg);
	else
		open_screen(a, c->screen);
}

/* ---- Tab completion ---- */

/* The longest common prefix of cands, as a new line with head before it. */
static char *complete_from(const char *head, const char *typed, char **cands, size_t n,
			   const char *suffix, char **hint)
{
	size_t tl = strlen(typed), common = 0;
	char **hits = xcalloc(n + 1, sizeof(*hits));
	size_t nh = 0;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(cands[i], typed, tl))
			hits[nh++] = cands[i];
	char *out = NULL;
	if (nh) {
		common = strlen(hits[0]);
		for (size_t i = 1; i < nh; i++) {
			size_t k = 0;
			while (k < common && hits[i][k] == hits[0][k])
				k++;
			common = k;
		}
		out = xasprintf("%s%.*s%s", head, (int)common, hits[0], nh == 1 ? suffix : "");
	}
	if (nh > 1) {
		struct sbuf sb = SBUF_INIT;
		for (size_t i = 0; i < nh && sb.len < 400; i++) {
			sbuf_adds(&sb, i ? "  " : "");
			sbuf_adds(&sb, hits[i]);
		}
		*hint = sbuf_detach(&sb);
	}
	free(hits);
	return out;
}

/* The child of n named by the start of p up to a '/' (the longest such
 * name, as names may hold '/'), or NULL; *len is the name's length. */
static struct mnode *child_before_slash(struct mnode *n, const char *p, size_t *len)
{
	struct mnode *best = NULL;
	*len = 0;
	for (size_t i = 0; i < n->nchildren; i++) {
		size_t k = strlen(n->children[i]->name);
		if (k > *len && !strncmp(p, n->children[i]->name, k) && p[k] == '/') {
			best = n->children[i];
			*len = k;
		}
	}
	return best;
}

/* Completes the last component of path among the children of the phase
 * the components before it name. */
static char *complete_path(struct app *a, const char *head, const char *path, char **hint)
{
	struct mnode *n = model_root(a->m), *c;
	const char *p = path;
	char *err = NULL;
	size_t len;
	for (;;) {
		while (*p == '/')
			p++;
		if (model_children(a->m, n, &err) < 0) {
			free(err);
			return NULL;
		}
		if (!(c = child_before_slash(n, p, &len)))
			break;
		n = c;
		p += len;
	}
	char **names = xcalloc(n->nchildren + 1, sizeof(*names));
	for (size_t i = 0; i < n->nchildren; i++)
		names[i] = (char *)n->children[i]->name;
	char *prefix = xasprintf("%s%.*s", head, (int)(p - path), path);
	char *out = complete_from(prefix, p, names, n->nchildren, "/", hint);
	free(prefix);
	free(names);
	return out;
}

static const struct command *find_command_exact(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Completes the word of a query that ends line (query_complete). */
static char *complete_query(struct app *a, const char *line, char **hint)
{
	char **cands = NULL;
	size_t start = 0, n = results_complete(a, line, &cands, &start);
	char *head = xstrndup(line, start);
	char *out = n ? complete_from(head, line + start, cands, n, n == 1 ? " " : "", hint) : NULL;
	for (size_t i = 0; i < n; i++)
		free(cands[i]);
	free(cands);
	free(head);
	return out;
}

static char *complete(void *ctx, const char *line, char **hint)
{
	struct app *a = ctx;
	const char *sp = strchr(line, ' ');
	if (a->prompt.kind != PROMPT_COMMAND)
		return NULL;
	if (!sp) {
		/* the commands, then the query sources that are not also one */
		char *names[NCOMMANDS + 8];
		size_t n = 0;
		for (size_t i = 0; i < NCOMMANDS; i++)
			names[n++] = (char *)commands[i].name;
		for (size_t i = 0; query_sources[i] && n < NCOMMANDS + 8; i++)
			if (!find_command_exact(query_sources[i]))
				names[n++] = (char *)query_sources[i];
		qsort(names, n, sizeof(*names), cmp_str);
		return complete_from("", line, names, n, " ", hint);
	}
	if (results_is_query(line, (size_t)(sp - line)))
		return complete_query(a, line, hint);
	int matches;
	const struct command *c = find_command(line, (size_t)(sp - line), &matches);
	const char *arg = sp + 1;
	char *head = xasprintf("%.*s", (int)(arg - line), line);
	char *out = NULL;
	if (c && (c->run == cmd_goto || c->run == cmd_kernels || c->run == cmd_ops ||
		  c->run == cmd_api || c->run == cmd_annotations || c->run == cmd_ranks)) {
		out = complete_path(a, head, *arg ? arg : "/", hint);
	} else if (c && c->run == cmd_sort) {
		out = complete_from(head, arg, (char **)sort_names, 5, "", hint);
	} else if (c && c->run == cmd_spark) {
		const struct mseries *ms;
		size_t n;
		char *err = NULL;
		if (model_series(a->m, &ms, &n, &err) == 0) {
			/* each name, and resource.name as queries write it */
			char **names = xcalloc(2 * n + 1, sizeof(*names));
			size_t k = 0;
			for (size_t i = 0; i < n; i++) {
				names[k++] = xstrdup(ms[i].name);
				if (ms[i].resource)
					names[k++] = xasprintf("%s.%s", ms[i].resource, ms[i].name);
			}
			out = complete_from(head, arg, names, k, "", hint);
			for (size_t i = 0; i < k; i++)
				free(names[i]);
			free(names);
		}
		free(err);
	} else if (c && c->run == cmd_theme) {
		char **names;
		size_t n = theme_list(&names);
		out = complete_from(head, arg, names, n, "", hint);
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
	}
	free(head);
	return out;
}

/* ---- keys ---- */

static unsigned screen_bit(enum app_screen s)
{
	static const unsigned bits[] = {SCR_TREE,   SCR_TIMELINE, SCR_METRICS, SCR_HELP,
					SCR_ISSUES, SCR_RESULTS,  SCR_FLAME};
	return bits[s];
}

static void prompt_done(struct app *a, enum prompt_kind kind)
{
	const char *line = a->prompt.line.buf;
	if (kind == PROMPT_COMMAND) {
		app_command(a, line);
	} else if (kind == PROMPT_SEARCH) {
		if (*line) {
			free(a->search);
			a->search = xstrdup(line);
		}
		search(a, 1, 1);
	} else if (kind == PROMPT_FILTER) {
		set_filter(a, line);
	}
}

void app_key(struct app *a, int key)
{
	app_message_clear(a);
	if (key == K_RESIZE)
		return;
	if (a->prompt.kind != PROMPT_NONE) {
		enum prompt_kind kind = a->prompt.kind;
		char *hint = NULL;
		enum prompt_result r = prompt_key(&a->prompt, key, complete, a, &hint);
		if (hint) {
			app_message(a, 0, "%s", hint);
			free(hint);
		}
		if (r == PROMPT_ACCEPT)
			prompt_done(a, kind);
		return;
	}
	enum action act = keys_lookup(key, screen_bit(a->screen));
	switch (act) {
	case A_NONE: {
		char name[16];
		if (key != K_RESIZE)
			app_message(a, 1, "%s: no such key here (? for help)",
				    keys_name(key, name, sizeof(name)));
		return;
	}
	case A_QUIT:
		a->quit = 1;
		return;
	case A_REDRAW:
		a->redraw = 1;
		return;
	case A_HELP:
		open_screen(a, SCREEN_HELP);
		return;
	case A_PROMPT:
		prompt_open(&a->prompt, PROMPT_COMMAND);
		return;
	case A_SEARCH:
		prompt_open(&a->prompt, PROMPT_SEARCH);
		return;
	case A_FILTER:
		prompt_open(&a->prompt, PROMPT_FILTER);
		return;
	case A_SORT_PROMPT:
		prompt_reopen(&a->prompt, PROMPT_COMMAND, "sort ", 5);
		return;
	case A_SEARCH_NEXT:
		search(a, 1, 0);
		return;
	case A_SEARCH_PREV:
		search(a, -1, 0);
		return;
	case A_TIMELINE:
		open_screen(a, SCREEN_TIMELINE);
		return;
	case A_METRICS:
		open_screen(a, SCREEN_METRICS);
		return;
	case A_ISSUES:
		open_screen(a, SCREEN_ISSUES);
		return;
	case A_FLAME:
		open_screen(a, SCREEN_FLAME);
		return;
	case A_POP:
		if (a->screen == SCREEN_HELP)
			a->screen = a->back;
		else if (a->screen == SCREEN_FLAME && a->fv.in_callers) {
			/* back to the table the list came from, else to the graph */
			if (a->fv.callers_back)
				a->screen = SCREEN_RESULTS;
			a->fv.in_callers = a->fv.callers_back = 0;
		} else if (a->screen == SCREEN_TIMELINE) {
			timeline_leave(a);
			a->screen = SCREEN_TREE;
		} else if (a->screen != SCREEN_TREE)
			a->screen = SCREEN_TREE;
		else
			tree_key(a, act);
		return;
	default:
		break;
	}
	switch (a->screen) {
	case SCREEN_TREE:
		tree_key(a, act);
		break;
	case SCREEN_TIMELINE:
		timeline_key(a, act);
		break;
	case SCREEN_METRICS:
		metrics_key(a, act);
		break;
	case SCREEN_ISSUES:
		issues_key(a, act);
		break;
	case SCREEN_RESULTS:
		results_key(a, act);
		break;
	case SCREEN_HELP:
		help_key(a, act);
		break;
	case SCREEN_FLAME:
		flame_view_key(a, act);
		break;
	}
}

void app_click(struct app *a, int x, int y)
{
	app_message_clear(a);
	if (a->prompt.kind == PROMPT_NONE && a->screen == SCREEN_TREE)
		tree_click(a, y);
}

/* ---- the frame ---- */

/* The levels of the breadcrumb, innermost first, each name formatted only
 * when the line needs it. */
struct crumbs {
	const struct mnode *node[256];
	struct sbuf name[256];
	int width[256], made[256];
	int n;
	const char *more;
};

static int crumb_width(struct crumbs *c, int i)
{
	if (!c->made[i]) {
		c->name[i] = (struct sbuf)SBUF_INIT;
		format_name(&c->name[i], c->node[i]->name, c->node[i]->kind == PHASE_KERNEL,
			    c->more);
		c->width[i] = format_width(c->name[i].buf);
		c->made[i] = 1;
	}
	return c->width[i];
}

/* Appends level i's name, cut to cols columns (cols < 0: whole) and ending
 * in the cut mark where it is cut. */
static void crumb_add(struct sbuf *out, struct crumbs *c, int i, int cols)
{
	int wmore = format_width(c->more);
	if (cols < 0 || crumb_width(c, i) <= cols) {
		sbuf_adds(out, c->name[i].buf);
		return;
	}
	format_fit(out, c->name[i].buf, cols > wmore ? cols - wmore : 0, 0);
	sbuf_adds(out, c->more);
}

/* The path from the workflow down to the current level.  When it does not
 * fit, the levels in the middle give way: the first two (the workflow and
 * its step) and as many of the innermost as fit stay, two at least, with
 * the cut mark between.  When even those do not fit, each is cut to an
 * equal share of half the line and the innermost, where the user is, keeps
 * the rest.  Only the levels shown are formatted, whatever the depth. */
static void draw_breadcrumb(struct app *a, struct grid *g)
{
	struct crumbs c = {.more = a->g->more};
	int cols = g->w - 1;
	for (const struct mnode *p = a->tree.node; p && p->parent && c.n < 256; p = p->parent)
		c.node[c.n++] = p;
	grid_fill(g, 0, 0, g->w, ' ', ROLE_BREADCRUMB);
	const char *top = "grademl-tui", *crumb = a->g->crumb;
	int wmore = format_width(c.more), wcrumb = format_width(crumb);
	int n = c.n, width = format_width(top), k = 0;
	while (k < n && width <= cols)
		width += wcrumb + crumb_width(&c, k++);
	struct sbuf sb = SBUF_INIT;
	if (width <= cols) {
		sbuf_adds(&sb, top);
		for (int i = n - 1; i >= 0; i--) {
			sbuf_adds(&sb, crumb);
			crumb_add(&sb, &c, i, -1);
		}
	} else {
		int head = n < 2 ? n : 2; /* levels n - 1 and n - 2 */
		int tail = n - head < 2 ? n - head : 2;
		width = 0;
		for (int i = n - head; i < n; i++)
			width += crumb_width(&c, i) + (i < n - 1 ? wcrumb : 0);
		for (int i = 0; i < tail; i++)
			width += wcrumb + crumb_width(&c, i);
		int gap = wcrumb + wmore; /* the cut mark where levels are left out */
		while (tail < n - head && width + gap + wcrumb + crumb_width(&c, tail) <= cols)
			width += wcrumb + crumb_width(&c, tail++);
		if (tail == n - head)
			gap = 0;
		int shown = head + tail, squeeze = width + gap > cols;
		int each = shown > 1 ? (cols / 2 - (shown - 1) * wcrumb - gap) / (shown - 1) : cols;
		if (each < wmore + 1)
			each = wmore + 1;
		for (int i = n - 1; i >= n - head; i--) {
			if (i < n - 1)
				sbuf_adds(&sb, crumb);
			crumb_add(&sb, &c, i, squeeze && i > 0 ? each : -1);
		}
		if (gap) {
			sbuf_adds(&sb, crumb);
			sbuf_adds(&sb, c.more);
		}
		for (int i = tail - 1; i >= 0; i--) {
			sbuf_adds(&sb, crumb);
			crumb_add(&sb, &c, i, squeeze && i > 0 ? each : -1);
		}
	}
	grid_put_cut(g, 0, 0, cols, sb.buf, c.more, ROLE_BREADCRUMB);
	sbuf_release(&sb);
	for (int i = 0; i < n; i++)
		if (c.made[i])
			sbuf_release(&c.name[i]);
}

static void draw_status(struct app *a, struct grid *g)
{
	int y = g->h - 1;
	grid_fill(g, 0, y, g->w, ' ', ROLE_STATUS);
	a->cur_x = a->cur_y = -1;
	if (a->prompt.kind != PROMPT_NONE) {
		/* a message while typing (completions, an error to mend) goes
		 * on the line above, over the screen's last row */
		if (a->message)
			grid_put_cut(g, 0, y - 1, g->w, a->message, a->g->more,
				     a->msg_error ? ROLE_ERROR : ROLE_STATUS);
		char lead[2] = {prompt_char(a->prompt.kind), 0};
		grid_put(g, 0, y, 1, lead, ROLE_PROMPT);
		/* show the end of a long line */
		struct sbuf head = SBUF_INIT;
		sbuf_add(&head, a->prompt.line.buf, a->prompt.cursor);
		int cx = format_width(head.buf);
		int shift = cx > g->w - 2 ? cx - (g->w - 2) : 0, skipped = 0;
		const unsigned char *p = (const unsigned char *)a->prompt.line.buf;
		size_t n = a->prompt.line.len;
		while (skipped < shift && n) {
			uint32_t cp;
			int w;
			size_t k = format_next(p, n, &cp, &w);
			skipped += w;
			p += k;
			n -= k;
		}
		grid_put(g, 1, y, g->w - 1, (const char *)p, ROLE_PROMPT);
		a->cur_x = 1 + cx - skipped;
		a->cur_y = y;
		sbuf_release(&head);
		return;
	}
	if (a->message) {
		grid_put_cut(g, 0, y, g->w, a->message, a->g->more,
			     a->msg_error ? ROLE_ERROR : ROLE_STATUS);
		return;
	}
	if (a->screen == SCREEN_FLAME && a->fv.built) {
		flame_view_status(a, g, y);
		return;
	}
	static const char *const hints[] = {
	    [SCREEN_TREE] = "?:help /:search \\:filter ::command d:details t:timeline m:metrics "
			    "q:up Q:quit",
	    [SCREEN_TIMELINE] = "?:help +/-:zoom f:fit h/l:pan j/k:select ]/[:in/out "
				"Enter:drill q:back",
	    [SCREEN_METRICS] = "?:help /:search \\:filter j/k:move q:back Q:quit",
	    [SCREEN_HELP] = "j/k:scroll q:back Q:quit",
	    [SCREEN_ISSUES] = "?:help j/k:move Enter:show in the tree m:metrics q:back Q:quit",
	    [SCREEN_RESULTS] = "?:help j/k:move h/l:column s:sort /:search \\:filter "
			       "Enter:in the tree q:back",
	    [SCREEN_FLAME] = "?:help Enter/h:zoom in/out j/k/Left/Right:move d:host/device q:back",
	};
	grid_put(g, 0, y, g->w, hints[a->screen], ROLE_STATUS);
}

void app_draw(struct app *a, struct grid *g)
{
	a->w = g->w;
	a->h = g->h;
	grid_clear(g, ROLE_NORMAL);
	if (g->w < APP_MIN_W || g->h < APP_MIN_H) {
		char msg[96];
		snprintf(msg, sizeof(msg), "terminal too small: %dx%d, needs %dx%d", g->w, g->h,
			 APP_MIN_W, APP_MIN_H);
		grid_put(g, 0, g->h / 2, g->w, msg, ROLE_ERROR);
		a->cur_x = a->cur_y = -1;
		return;
	}
	draw_breadcrumb(a, g);
	int y = 1, h = g->h - 2;
	switch (a->screen) {
	case SCREEN_TREE:
		tree_draw(a, g, y, h);
		break;
	case SCREEN_TIMELINE:
		timeline_draw(a, g, y, h);
		break;
	case SCREEN_METRICS:
		metrics_draw(a, g, y, h);
		break;
	case SCREEN_ISSUES:
		issues_draw(a, g, y, h);
		break;
	case SCREEN_RESULTS:
		results_draw(a, g, y, h);
		break;
	case SCREEN_HELP:
		help_draw(a, g, y, h);
		break;
	case SCREEN_FLAME:
		flame_view_draw(a, g, y, h);
		break;
	}
	draw_status(a, g);
}
