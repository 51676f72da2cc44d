/*
 * The one-line editor under the screen, for ':' commands, '/' searches and
 * '\' filters.  Each kind keeps its own history; the command history is
 * saved to a file (the caller chooses it: $XDG_STATE_HOME/grademl-tui/history).
 * Tab asks the caller to complete what is left of the cursor.  Editing is by bytes of UTF-8:
 * the cursor never stops inside a character.
 */
#ifndef GRADEML_PROMPT_H
#define GRADEML_PROMPT_H

#include <stddef.h>

#include "model/util/sbuf.h"

enum prompt_kind { PROMPT_NONE, PROMPT_COMMAND, PROMPT_SEARCH, PROMPT_FILTER, PROMPT_KINDS };

enum prompt_result { PROMPT_EDITING, PROMPT_ACCEPT, PROMPT_CANCEL };

/* Completes line (what was typed); returns a new line to replace it
 * (caller frees) or NULL; may set *hint to a list of candidates (freed by
 * the caller). */
typedef char *(*prompt_complete_fn)(void *ctx, const char *line, char **hint);

struct prompt_history {
	char **lines;
	size_t n, alloc;
};

struct prompt {
	enum prompt_kind kind; /* PROMPT_NONE: closed */
	struct sbuf line;
	size_t cursor; /* byte offset into line */
	size_t browse; /* history position while browsing (n: not) */
	struct prompt_history hist[PROMPT_KINDS];
	char *hist_file; /* command history file, or NULL */
};

void prompt_init(struct prompt *p, const char *hist_file);
void prompt_release(struct prompt *p);
void prompt_open(struct prompt *p, enum prompt_kind kind);
/* Opens the prompt on line with the cursor at byte cursor (at most the end,
 * never inside a character): a query to mend at the column of its error. */
void prompt_reopen(struct prompt *p, enum prompt_kind kind, const char *line, size_t cursor);
/* Handles one key; on ACCEPT the line is in p->line (and in the history);
 * the prompt closes on ACCEPT and CANCEL. */
enum prompt_result prompt_key(struct prompt *p, int key, prompt_complete_fn fn, void *ctx,
			      char **hint);
/* The character that opens this kind: ':', '/' or '\\'. */
char prompt_char(enum prompt_kind kind);
/* The default history file: $XDG_STATE_HOME/grademl-tui/history or
 * ~/.local/state/grademl-tui/history (caller frees; NULL without HOME). */
char *prompt_history_path(void);

#endif
