/*
 * The curses front end; see term.h.  Each frame the app draws the whole
 * screen into a grid; only the rows that differ from the last frame are
 * handed to curses, and curses sends only the cells that changed, so a key
 * press over SSH costs a few bytes, never a full clear.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include <curses.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/format.h"
#include "tui/term.h"
#include "tui/theme.h"
#include "model/util/xalloc.h"

static volatile sig_atomic_t got_signal;
static int curses_on;

static void restore(void)
{
	if (curses_on) {
		curses_on = 0;
		endwin();
	}
}

/* The loop quits when it sees got_signal; a second signal before it does
 * (the program is stuck) restores the terminal and dies at once. */
static void on_quit_signal(int sig)
{
	if (got_signal) {
		restore();
		signal(sig, SIG_DFL);
		raise(sig);
	}
	got_signal = sig;
}

/* A crash must not leave the terminal raw: restore it, then die as the
 * signal would have killed us. */
static void on_fatal_signal(int sig)
{
	restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_fatal_signal;
	static const int fatal[] = {SIGQUIT, SIGSEGV, SIGBUS,  SIGABRT,
				    SIGFPE,  SIGILL,  SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof(fatal) / sizeof(*fatal); i++)
		sigaction(fatal[i], &sa, NULL);
}

static attr_t role_attr[ROLE_COUNT];

static attr_t style_attrs(unsigned a)
{
	attr_t r = A_NORMAL;
	if (a & THEME_BOLD)
		r |= A_BOLD;
	if (a & THEME_DIM)
		r |= A_DIM;
	if (a & THEME_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & THEME_REVERSE)
		r |= A_REVERSE;
#ifdef A_ITALIC
	if (a & THEME_ITALIC)
		r |= A_ITALIC;
#endif
	return r;
}

static void apply_theme(const struct theme *t, int color)
{
	for (int r = 0; r < ROLE_COUNT; r++) {
		const struct theme_style *s = &t->role[r];
		role_attr[r] = style_attrs(s->attrs);
		if (!color)
			continue;
		/* 8-colour terminals show the bright colours as bold */
		if (COLORS < 16 && s->fg >= 8 && s->fg < 16)
			role_attr[r] |= A_BOLD;
		int fg = theme_fallback_colour(s->fg, COLORS);
		int bg = theme_fallback_colour(s->bg, COLORS);
		if (r + 1 < COLOR_PAIRS && init_pair((short)(r + 1), (short)fg, (short)bg) == OK)
			role_attr[r] |= COLOR_PAIR(r + 1);
	}
}

/* Loads the theme the user asked for; falls back to monochrome. */
static void load_theme(struct app *a, const char *name, int color)
{
	struct theme t;
	char *err = NULL;
	if (!color) {
		theme_monochrome(&t);
	} else if (theme_load(name, &t, &err) < 0) {
		app_message(a, 1, "%s (using monochrome)", err);
		free(err);
		theme_monochrome(&t);
	}
	apply_theme(&t, color);
}

static int map_key(int ch, int is_key)
{
	if (!is_key) {
		if (ch == '\r' || ch == '\n')
			return K_ENTER;
		if (ch == 0x1b)
			return K_ESC;
		if (ch == '\t')
			return K_TAB;
		if (ch == 0x7f || ch == CTRL('h'))
			return K_BACKSPACE;
		return ch;
	}
	switch (ch) {
	case KEY_UP:
		return K_UP;
	case KEY_DOWN:
		return K_DOWN;
	case KEY_LEFT:
		return K_LEFT;
	case KEY_RIGHT:
		return K_RIGHT;
	case KEY_PPAGE:
		return K_PGUP;
	case KEY_NPAGE:
		return K_PGDN;
	case KEY_HOME:
		return K_HOME;
	case KEY_END:
		return K_END;
	case KEY_ENTER:
		return K_ENTER;
	case KEY_BACKSPACE:
		return K_BACKSPACE;
	case KEY_DC:
		return K_DELETE;
	case KEY_BTAB:
		return K_BTAB;
	case KEY_F(1):
		return K_F1;
	case KEY_F(3):
		return K_F3;
	case KEY_F(4):
		return K_F4;
	case KEY_F(6):
		return K_F6;
	case KEY_F(10):
		return K_F10;
	case KEY_RESIZE:
		return K_RESIZE;
	default:
		return -1;
	}
}

/* Hands row y of g to curses as runs of one role. */
static void flush_row(const struct grid *g, int y, char *buf)
{
	int x = 0;
	while (x < g->w) {
		const struct cell *c = grid_at(g, x, y);
		int role = c->role, x0 = x;
		size_t n = 0;
		while (x < g->w && grid_at(g, x, y)->role == role) {
			uint32_t ch = grid_at(g, x, y)->ch;
			if (ch != GRID_WIDE_TAIL)
				n += format_encode(ch, buf + n);
			x++;
		}
		buf[n] = '\0';
		attrset(role_attr[role]);
		mvaddstr(y, x0, buf);
	}
}

static void flush(const struct grid *g, struct grid *last, int all, int cx, int cy)
{
	char *buf = xmalloc((size_t)g->w * 4 + 1); /* a whole row, never split */
	if (all || last->w != g->w || last->h != g->h) {
		grid_resize(last, g->w, g->h);
		clearok(curscr, TRUE);
		all = 1;
	}
	for (int y = 0; y < g->h; y++) {
		size_t off = (size_t)y * (size_t)g->w, len = (size_t)g->w * sizeof(struct cell);
		if (!all && !memcmp(g->cells + off, last->cells + off, len))
			continue;
		flush_row(g, y, buf);
		memcpy(last->cells + off, g->cells + off, len);
	}
	free(buf);
	attrset(A_NORMAL);
	if (cx >= 0) {
		curs_set(1);
		move(cy, cx);
	} else {
		curs_set(0);
	}
	refresh();
}

/* The frame being drawn and the one on the screen, for show_now. */
static struct grid *screen_g, *screen_last;

/* Shows the frame at once: a message before a long wait. */
static void show_now(struct app *a)
{
	app_draw(a, screen_g);
	flush(screen_g, screen_last, 0, a->cur_x, a->cur_y);
}

int term_run(const struct term_opts *o, char **err)
{
	struct model *m = NULL;
	struct app a;
	struct grid g, last;
	if (model_open(o->db, &m, err) < 0)
		return -1;
	char *hist = prompt_history_path();
	int rc = app_init(&a, m, o->ascii, hist, err);
	free(hist);
	if (rc < 0) {
		model_free(m);
		return -1;
	}
	a.rv.max_memory = o->max_memory;
	a.rv.timeout_ns = o->timeout_ns;
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	if (!initscr()) {
		*err = xasprintf("cannot start the terminal (TERM=%s)",
				 getenv("TERM") ? getenv("TERM") : "");
		app_release(&a);
		model_free(m);
		return -1;
	}
	curses_on = 1;
	atexit(restore);
	install_signals();
	cbreak(); /* Ctrl-C is SIGINT (a clean quit), Ctrl-Z suspends */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	timeout(250);
	int color = !o->no_color && has_colors() && start_color() == OK;
	if (color)
		use_default_colors();
	if (o->mouse)
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED,
			  NULL);
	load_theme(&a, o->theme ? o->theme : "default", color);
	grid_init(&g, COLS, LINES, o->ascii);
	grid_init(&last, COLS, LINES, o->ascii);
	screen_g = &g;
	screen_last = &last;
	a.interrupt = &got_signal;
	a.show_now = show_now;
	int all = 1, dirty = 1;
	while (!a.quit) {
		if (got_signal == SIGINT && a.prompt.kind != PROMPT_NONE) {
			/* C-c in a prompt cancels it, as in less and the shells */
			got_signal = 0;
			app_key(&a, K_ESC);
			dirty = 1;
		}
		if (got_signal)
			break;
		if (g.w != COLS || g.h != LINES) {
			grid_resize(&g, COLS, LINES);
			dirty = 1;
		}
		/* redraw only after something happened: idle costs nothing */
		if (dirty || all) {
			app_draw(&a, &g);
			flush(&g, &last, all, a.cur_x, a.cur_y);
			all = dirty = 0;
		}
		wint_t wch;
		int r = get_wch(&wch);
		if (r == ERR) {
			dirty = timeline_poll(&a); /* the timeline's phases arrived */
			continue;
		}
		int key = map_key((int)wch, r == KEY_CODE_YES);
		if (r == KEY_CODE_YES && wch == KEY_MOUSE) {
			MEVENT ev;
			key = -1;
			if (getmouse(&ev) != OK)
				continue;
			if (ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)) {
				app_click(&a, ev.x, ev.y);
				dirty = 1;
				continue;
			}
			if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED))
				key = ev.bstate & BUTTON4_PRESSED ? K_UP : K_DOWN;
		}
		if (key < 0)
			continue;
		app_key(&a, key);
		dirty = 1;
		if (a.redraw) {
			a.redraw = 0;
			all = 1;
		}
		if (a.theme_changed) {
			a.theme_changed = 0;
			load_theme(&a, a.theme, color);
			all = 1;
		}
	}
	restore();
	grid_release(&g);
	grid_release(&last);
	char *fatal = a.fatal;
	a.fatal = NULL;
	app_release(&a);
	model_free(m);
	if (fatal) { /* a broken file: its one line, as for any error */
		*err = fatal;
		return -1;
	}
	if (got_signal) {
		/* die of the signal, as the shell expects, now that the terminal is back */
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	return 0;
}
