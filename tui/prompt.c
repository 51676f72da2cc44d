/*
 * The prompt's line editor and histories; see prompt.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tui/keys.h"
#include "tui/format.h"
#include "tui/prompt.h"
#include "model/util/xalloc.h"

#define HISTORY_MAX 500

static void hist_add(struct prompt_history *h, const char *s)
{
	if (!*s || (h->n && !strcmp(h->lines[h->n - 1], s)))
		return;
	if (h->n == HISTORY_MAX) {
		free(h->lines[0]);
		memmove(h->lines, h->lines + 1, (h->n - 1) * sizeof(*h->lines));
		h->n--;
	}
	XGROW(h->lines, h->n + 1, h->alloc);
	h->lines[h->n++] = xstrdup(s);
}

/* The file only grows (one line appended per command): once it holds
 * twice what is kept, it is written again with the kept lines, through a
 * temporary file renamed over it.  Failures are quiet. */
static void hist_trim(const struct prompt *p)
{
	const struct prompt_history *h = &p->hist[PROMPT_COMMAND];
	char *tmp = xasprintf("%s.tmp", p->hist_file);
	FILE *f = fopen(tmp, "w");
	int ok = f != NULL;
	for (size_t i = 0; ok && i < h->n; i++)
		ok = fprintf(f, "%s\n", h->lines[i]) >= 0;
	if (f && fclose(f) != 0)
		ok = 0;
	if (!ok || rename(tmp, p->hist_file) != 0)
		remove(tmp);
	free(tmp);
}

void prompt_init(struct prompt *p, const char *hist_file)
{
	memset(p, 0, sizeof(*p));
	sbuf_init(&p->line);
	if (!hist_file)
		return;
	p->hist_file = xstrdup(hist_file);
	FILE *f = fopen(hist_file, "r");
	if (!f)
		return;
	char buf[4096];
	size_t lines = 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		hist_add(&p->hist[PROMPT_COMMAND], buf);
		lines++;
	}
	fclose(f);
	if (lines > 2 * HISTORY_MAX)
		hist_trim(p);
}

void prompt_release(struct prompt *p)
{
	for (int k = 0; k < PROMPT_KINDS; k++) {
		for (size_t i = 0; i < p->hist[k].n; i++)
			free(p->hist[k].lines[i]);
		free(p->hist[k].lines);
	}
	sbuf_release(&p->line);
	free(p->hist_file);
	memset(p, 0, sizeof(*p));
}

char *prompt_history_path(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	if (state && *state == '/')
		return xasprintf("%s/grademl-tui/history", state);
	const char *home = getenv("HOME");
	return home && *home ? xasprintf("%s/.local/state/grademl-tui/history", home) : NULL;
}

/* mkdir -p of the directory part of path. */
static void make_parent(const char *path)
{
	char *d = xstrdup(path);
	for (char *s = d + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(d, 0700) < 0 && errno != EEXIST)
			break;
		*s = '/';
	}
	free(d);
}

/* Appends one accepted command to the history file; failures are quiet
 * (a read-only home must not stop the explorer). */
static void hist_save(const struct prompt *p, const char *line)
{
	if (!p->hist_file || strchr(line, '\n'))
		return;
	make_parent(p->hist_file);
	FILE *f = fopen(p->hist_file, "a");
	if (!f)
		return;
	fprintf(f, "%s\n", line);
	fclose(f);
}

void prompt_open(struct prompt *p, enum prompt_kind kind)
{
	p->kind = kind;
	sbuf_reset(&p->line);
	p->cursor = 0;
	p->browse = p->hist[kind].n;
}

void prompt_reopen(struct prompt *p, enum prompt_kind kind, const char *line, size_t cursor)
{
	prompt_open(p, kind);
	sbuf_adds(&p->line, line);
	p->cursor = cursor < p->line.len ? cursor : p->line.len;
	while (p->cursor > 0 && ((unsigned char)p->line.buf[p->cursor] & 0xc0) == 0x80)
		p->cursor--;
}

char prompt_char(enum prompt_kind kind)
{
	return kind == PROMPT_SEARCH ? '/' : kind == PROMPT_FILTER ? '\\' : ':';
}

static void set_line(struct prompt *p, const char *s)
{
	sbuf_reset(&p->line);
	sbuf_adds(&p->line, s);
	p->cursor = p->line.len;
}

static int is_cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

static void insert(struct prompt *p, int key)
{
	char u[4];
	size_t k = format_encode((uint32_t)key, u);
	sbuf_grow(&p->line, k);
	memmove(p->line.buf + p->cursor + k, p->line.buf + p->cursor, p->line.len - p->cursor + 1);
	memcpy(p->line.buf + p->cursor, u, k);
	p->line.len += k;
	p->cursor += k;
}

/* Deletes the bytes [from, to) of the line. */
static void cut(struct prompt *p, size_t from, size_t to)
{
	memmove(p->line.buf + from, p->line.buf + to, p->line.len - to + 1);
	p->line.len -= to - from;
	p->cursor = from;
}

static size_t prev_char(const struct prompt *p, size_t i)
{
	while (i > 0 && is_cont(p->line.buf[--i]))
		;
	return i;
}

static size_t next_char(const struct prompt *p, size_t i)
{
	while (i < p->line.len && is_cont(p->line.buf[++i]))
		;
	return i;
}

enum prompt_result prompt_key(struct prompt *p, int key, prompt_complete_fn fn, void *ctx,
			      char **hint)
{
	struct prompt_history *h = &p->hist[p->kind];
	switch (key) {
	case K_ENTER:
		hist_add(h, p->line.buf);
		if (p->kind == PROMPT_COMMAND)
			hist_save(p, p->line.buf);
		p->kind = PROMPT_NONE;
		return PROMPT_ACCEPT;
	case K_ESC:
	case CTRL('g'):
	case CTRL('c'):
		p->kind = PROMPT_NONE;
		return PROMPT_CANCEL;
	case K_BACKSPACE:
		if (!p->line.len) {
			p->kind = PROMPT_NONE; /* as in vim and less: an empty line closes */
			return PROMPT_CANCEL;
		}
		if (p->cursor)
			cut(p, prev_char(p, p->cursor), p->cursor);
		break;
	case K_DELETE:
	case CTRL('d'):
		if (p->cursor < p->line.len)
			cut(p, p->cursor, next_char(p, p->cursor));
		break;
	case K_LEFT:
	case CTRL('b'):
		p->cursor = prev_char(p, p->cursor);
		break;
	case K_RIGHT:
	case CTRL('f'):
		p->cursor = next_char(p, p->cursor);
		break;
	case K_HOME:
	case CTRL('a'):
		p->cursor = 0;
		break;
	case K_END:
	case CTRL('e'):
		p->cursor = p->line.len;
		break;
	case CTRL('u'):
		cut(p, 0, p->cursor);
		break;
	case CTRL('k'):
		p->line.len = p->cursor;
		p->line.buf[p->cursor] = '\0';
		break;
	case CTRL('w'): {
		size_t i = p->cursor;
		while (i > 0 && p->line.buf[i - 1] == ' ')
			i--;
		while (i > 0 && p->line.buf[i - 1] != ' ')
			i--;
		cut(p, i, p->cursor);
		break;
	}
	case K_UP:
	case CTRL('p'):
		if (p->browse > 0)
			set_line(p, h->lines[--p->browse]);
		break;
	case K_DOWN:
	case CTRL('n'):
		if (p->browse < h->n) {
			p->browse++;
			set_line(p, p->browse < h->n ? h->lines[p->browse] : "");
		}
		break;
	case K_TAB:
		if (fn) {
			/* completes what is left of the cursor; the rest stays */
			char *left = xstrndup(p->line.buf, p->cursor);
			char *s = fn(ctx, left, hint);
			if (s) {
				char *rest = xstrdup(p->line.buf + p->cursor);
				set_line(p, s);
				sbuf_adds(&p->line, rest);
				p->cursor = strlen(s);
				free(rest);
				free(s);
			}
			free(left);
		}
		break;
	default:
		if (key >= 0x20 && key < KEY_CODE_BASE && key != 0x7f &&
		    !(key >= 0x80 && key < 0xa0))
			insert(p, key);
		break;
	}
	return PROMPT_EDITING;
}
