/*
 * The help screen, generated from the key table (keys.c) and the command
 * table (app.c): what it lists is what the dispatcher does.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util/sbuf.h"
#include "tui/app.h"
#include "model/util/xalloc.h"

struct help_text {
	char **lines;
	size_t n, alloc;
};

static void add(struct help_text *h, char *s)
{
	XGROW(h->lines, h->n + 1, h->alloc);
	h->lines[h->n++] = s;
}

static const struct {
	unsigned bit;
	const char *title;
} sections[] = {
    {SCR_TREE, "Tree"},		{SCR_TIMELINE, "Timeline"},	{SCR_METRICS, "Metrics"},
    {SCR_ISSUES, "Top issues"}, {SCR_RESULTS, "Query results"}, {SCR_FLAME, "Flame graph"},
};

/* "  j, Down          move down" for each action bound on screen bit. */
static void section(struct help_text *h, unsigned bit, const char *title)
{
	add(h, xasprintf("%s", title));
	for (int act = A_NONE + 1; act < A_COUNT; act++) {
		struct sbuf keys = SBUF_INIT;
		for (size_t i = 0; i < key_binding_count; i++) {
			if (key_bindings[i].action != (enum action)act ||
			    !(key_bindings[i].screens & bit))
				continue;
			char name[16];
			keys_name(key_bindings[i].key, name, sizeof(name));
			sbuf_adds(&keys, keys.len ? ", " : "");
			sbuf_adds(&keys, name);
		}
		if (keys.len)
			add(h,
			    xasprintf("  %-22s %s", keys.buf, keys_action_help((enum action)act)));
		sbuf_release(&keys);
	}
	add(h, xstrdup(""));
}

static void build(struct help_text *h)
{
	for (size_t i = 0; i < sizeof(sections) / sizeof(*sections); i++)
		section(h, sections[i].bit, sections[i].title);
	add(h, xstrdup("Commands (type : then Tab to complete)"));
	const char *name, *args, *text;
	for (size_t i = 0; app_command_info(i, &name, &args, &text); i++) {
		char *cmd = xasprintf("%s %s", name, args);
		add(h, xasprintf("  :%-30s %s", cmd, text));
		free(cmd);
	}
	add(h, xasprintf("  :%-30s %s", "phases|events|metrics|samples",
			 "run a query (man 7 grademl-query)"));
	add(h, xasprintf("  :%-30s %s", "gaps | top 10 dur", "the longest GPU idle gaps, and why"));
	add(h, xasprintf("  :%-30s %s", "sql SELECT ...", "run read-only SQL on trace.db"));
	add(h, xstrdup(""));
	add(h, xstrdup("Prompt: Enter runs, Esc cancels, Up/Down history, Tab completes,"));
	add(h, xstrdup("  C-a/C-e start/end, C-u/C-k cut, C-w delete a word."));
	add(h, xstrdup("Search and filter match names; an upper-case letter makes them"));
	add(h, xstrdup("  case-sensitive."));
}

static void release(struct help_text *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->lines[i]);
	free(h->lines);
}

void help_key(struct app *a, enum action act)
{
	int page = a->page > 1 ? a->page : 1;
	struct help_text h = {0};
	build(&h);
	size_t max = h.n > (size_t)page ? h.n - (size_t)page : 0;
	release(&h);
	long top = (long)a->help_top;
	switch (act) {
	case A_DOWN:
		top++;
		break;
	case A_UP:
		top--;
		break;
	case A_PGDN:
		top += page;
		break;
	case A_PGUP:
		top -= page;
		break;
	case A_HALF_DOWN:
		top += page > 1 ? page / 2 : 1;
		break;
	case A_HALF_UP:
		top -= page > 1 ? page / 2 : 1;
		break;
	case A_HOME:
		top = 0;
		break;
	case A_END:
		top = (long)max;
		break;
	default:
		break;
	}
	a->help_top = top < 0 ? 0 : (size_t)top > max ? max : (size_t)top;
}

void help_draw(struct app *a, struct grid *g, int y, int h)
{
	struct help_text t = {0};
	build(&t);
	a->page = h;
	for (int i = 0; i < h && a->help_top + (size_t)i < t.n; i++) {
		const char *s = t.lines[a->help_top + (size_t)i];
		grid_put(g, 1, y + i, g->w - 2, s, s[0] && s[0] != ' ' ? ROLE_TITLE : ROLE_NORMAL);
	}
	release(&t);
}
