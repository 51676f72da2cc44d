/*
 * Keys and actions.  One table binds keys to actions per screen; the
 * dispatcher (tui/app.c), the help screen and the headless key scripts all
 * read it, so the help can never disagree with what a key does.
 *
 * Key codes are curses-free: a Unicode code point for a typed character,
 * 1..26 for Ctrl-A..Ctrl-Z, and KEY_CODE_BASE + n for named keys.
 */
#ifndef GRADEML_KEYS_H
#define GRADEML_KEYS_H

#include <stddef.h>

#define KEY_CODE_BASE 0x110000
#define CTRL(c)	      ((c)&0x1f)

/* X(name, text used in scripts and help) */
#define NAMED_KEY_LIST(X)                                                                          \
	X(K_UP, "Up")                                                                              \
	X(K_DOWN, "Down")                                                                          \
	X(K_LEFT, "Left")                                                                          \
	X(K_RIGHT, "Right")                                                                        \
	X(K_PGUP, "PgUp")                                                                          \
	X(K_PGDN, "PgDn")                                                                          \
	X(K_HOME, "Home")                                                                          \
	X(K_END, "End")                                                                            \
	X(K_ENTER, "Enter")                                                                        \
	X(K_BACKSPACE, "Backspace")                                                                \
	X(K_ESC, "Esc")                                                                            \
	X(K_TAB, "Tab")                                                                            \
	X(K_BTAB, "S-Tab")                                                                         \
	X(K_DELETE, "Delete")                                                                      \
	X(K_F1, "F1")                                                                              \
	X(K_F3, "F3")                                                                              \
	X(K_F4, "F4")                                                                              \
	X(K_F6, "F6")                                                                              \
	X(K_F10, "F10")                                                                            \
	X(K_RESIZE, "Resize")

#define NAMED_KEY_ENUM(name, text) name,
enum named_key { K_FIRST_ = KEY_CODE_BASE - 1, NAMED_KEY_LIST(NAMED_KEY_ENUM) K_LAST_ };
#undef NAMED_KEY_ENUM

/* The screens a binding applies to (a bit set). */
enum {
	SCR_TREE = 1,
	SCR_TIMELINE = 2,
	SCR_METRICS = 4,
	SCR_HELP = 8,
	SCR_ISSUES = 16,
	SCR_RESULTS = 32,
	SCR_FLAME = 64,
	SCR_ALL = 127,
};

/* X(action, help text) in the order the help screen lists them. */
#define ACTION_LIST(X)                                                                             \
	X(A_DOWN, "move down")                                                                     \
	X(A_UP, "move up")                                                                         \
	X(A_PGDN, "page down")                                                                     \
	X(A_PGUP, "page up")                                                                       \
	X(A_HALF_DOWN, "half a page down")                                                         \
	X(A_HALF_UP, "half a page up")                                                             \
	X(A_HOME, "first row")                                                                     \
	X(A_END, "last row")                                                                       \
	X(A_ENTER, "drill into the selected phase")                                                \
	X(A_BACK, "go up to the parent")                                                           \
	X(A_COSTLIEST, "select the costliest child (longest duration)")                            \
	X(A_SORT_NAME, "sort by name (again: reverse)")                                            \
	X(A_SORT_DUR, "sort by duration (again: reverse)")                                         \
	X(A_SORT_SELF, "sort by self time (again: reverse)")                                       \
	X(A_SORT_COUNT, "sort by child count (again: reverse)")                                    \
	X(A_SORT_START, "sort by start time (again: reverse)")                                     \
	X(A_SORT_PROMPT, "choose the sort column (:sort; Tab lists them)")                         \
	X(A_COL_PREV, "select the column to the left")                                             \
	X(A_COL_NEXT, "select the column to the right")                                            \
	X(A_SORT_COL, "sort by the selected column (again: reverse)")                              \
	X(A_DETAILS, "show or hide the details pane")                                              \
	X(A_DETAILS_DOWN, "scroll the details pane down")                                          \
	X(A_DETAILS_UP, "scroll the details pane up")                                              \
	X(A_TIMELINE, "timeline of this level's subtree, a lane per track")                        \
	X(A_METRICS, "metrics: every series with a sparkline")                                     \
	X(A_ISSUES, "top issues, ranked by the time each would save")                              \
	X(A_FLAME, "flame graph of the selected phase's subtree")                                  \
	X(A_ZOOM_IN, "zoom in")                                                                    \
	X(A_ZOOM_OUT, "zoom out")                                                                  \
	X(A_PAN_LEFT, "pan left")                                                                  \
	X(A_PAN_RIGHT, "pan right")                                                                \
	X(A_ZOOM_RESET, "show the whole window")                                                   \
	X(A_ZOOM_FIT, "zoom to the selected phase")                                                \
	X(A_LANE_DOWN, "scroll the lanes down one lane")                                           \
	X(A_LANE_UP, "scroll the lanes up one lane")                                               \
	X(A_LANE_BUSY, "scroll to the next lane with work in the window")                          \
	X(A_RANGE_MARK, "range: mark the selected phase; at another, sum from one to the other")   \
	X(A_RANGE_WINDOW, "range: sum the window shown by lane and by name (again: clear)")        \
	X(A_INTO, "select the first child of the selected phase")                                  \
	X(A_OUT, "select the parent of the selected phase")                                        \
	X(A_SIB_PREV, "select the frame to the left")                                              \
	X(A_SIB_NEXT, "select the frame to the right")                                             \
	X(A_FLAME_MODE, "widths by host time or by device time")                                   \
	X(A_CALLERS, "callers: every path to the selected frame's or row's name")                  \
	X(A_WHOLE_NAME, "show or hide the whole name of the selected row or frame")                \
	X(A_SEARCH, "search names (the tree: all below this level; smart case, wraps)")            \
	X(A_SEARCH_NEXT, "next match")                                                             \
	X(A_SEARCH_PREV, "previous match")                                                         \
	X(A_FILTER, "filter rows by name (empty: clear)")                                          \
	X(A_PROMPT, "command or query prompt (Tab completes)")                                     \
	X(A_REDRAW, "redraw the screen")                                                           \
	X(A_HELP, "this help")                                                                     \
	X(A_POP, "close this screen; on the tree, go up a level (quit at the top)")                \
	X(A_QUIT, "quit")

#define ACTION_ENUM(name, help) name,
enum action { A_NONE, ACTION_LIST(ACTION_ENUM) A_COUNT };
#undef ACTION_ENUM

struct binding {
	int key;
	unsigned screens;
	enum action action;
};

extern const struct binding key_bindings[];
extern const size_t key_binding_count;

/* The action key has on screen scr, or A_NONE. */
enum action keys_lookup(int key, unsigned scr);
const char *keys_action_help(enum action a);
/* Writes a key's name ("j", "Enter", "C-l", "Space") into buf. */
const char *keys_name(int key, char *buf, size_t n);
/* Parses one key name as keys_name writes it (also any single UTF-8
 * character); returns the key or -1. */
int keys_parse(const char *name);

#endif
