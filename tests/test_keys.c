/*
 * The key table: names round-trip, lookups respect screens, and every
 * action has a help text and at least one key (so the help screen lists
 * everything the dispatcher does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include <stdio.h>
#include <stdlib.h>

#include "tui/app.h"
#include "tui/keys.h"

static void names_round_trip(void **state)
{
	static const char *const names[] = {"j",    "Enter", "C-l", "Space", "F1",	  "S-Tab",
					    "PgDn", "Esc",   "?",   "\\",    "Backspace", "F3",
					    "F4",   "F6",    "F10", "C-d",   "C-u"};
	char buf[16];
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		int k = keys_parse(names[i]);
		assert_true(k >= 0);
		assert_string_equal(keys_name(k, buf, sizeof(buf)), names[i]);
	}
	assert_int_equal(keys_parse("\xc3\xa9"), 0xe9);
	assert_int_equal(keys_parse("Nope"), -1);
	assert_int_equal(keys_parse(""), -1);
	assert_int_equal(keys_parse("C-1"), -1);
}

static void lookup_by_screen(void **state)
{
	assert_int_equal(keys_lookup('j', SCR_TREE), A_DOWN);
	assert_int_equal(keys_lookup('h', SCR_TREE), A_BACK);
	assert_int_equal(keys_lookup('h', SCR_TIMELINE), A_PAN_LEFT);
	assert_int_equal(keys_lookup('+', SCR_TREE), A_NONE);
	assert_int_equal(keys_lookup('Q', SCR_HELP), A_QUIT);
	assert_int_equal(keys_lookup(K_F1, SCR_METRICS), A_HELP);
	/* what htop and less users bring */
	assert_int_equal(keys_lookup(CTRL('d'), SCR_TREE), A_HALF_DOWN);
	assert_int_equal(keys_lookup(CTRL('u'), SCR_RESULTS), A_HALF_UP);
	assert_int_equal(keys_lookup(K_F3, SCR_TREE), A_SEARCH);
	assert_int_equal(keys_lookup(K_F4, SCR_METRICS), A_FILTER);
	assert_int_equal(keys_lookup(K_F6, SCR_TREE), A_SORT_PROMPT);
	assert_int_equal(keys_lookup(K_F6, SCR_RESULTS), A_SORT_COL);
	assert_int_equal(keys_lookup(K_F10, SCR_TIMELINE), A_QUIT);
	assert_int_equal(keys_lookup('J', SCR_TREE), A_DETAILS_DOWN);
}

static void every_action_bound_and_documented(void **state)
{
	for (int a = A_NONE + 1; a < A_COUNT; a++) {
		int bound = 0;
		for (size_t i = 0; i < key_binding_count; i++)
			bound |= key_bindings[i].action == (enum action)a;
		assert_true(bound);
		assert_true(strlen(keys_action_help((enum action)a)) > 3);
	}
}

/* No key means two things on one screen. */
static void no_conflicts(void **state)
{
	for (size_t i = 0; i < key_binding_count; i++)
		for (size_t j = i + 1; j < key_binding_count; j++)
			if (key_bindings[i].key == key_bindings[j].key)
				assert_int_equal(key_bindings[i].screens & key_bindings[j].screens,
						 0);
}

/* The tokens of the .B/.BR/.BI lines of one section of the man page, with
 * roff escapes undone, as " tok1 tok2 ... ". */
static char *man_tokens(const char *from, const char *to)
{
	FILE *f = fopen("man/grademl-tui.1", "r");
	assert_non_null(f);
	static char out[65536];
	char line[1024];
	int in = 0;
	size_t n = 0;
	out[n++] = ' ';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, from, strlen(from)))
			in = 1;
		else if (in && !strncmp(line, to, strlen(to)))
			break;
		if (!in || strncmp(line, ".B", 2))
			continue;
		for (char *p = line + 3; *p && n + 2 < sizeof(out); p++) {
			if (p[0] == '\\' && (p[1] == '-' || p[1] == 'e')) {
				out[n++] = p[1] == '-' ? '-' : '\\';
				p++;
			} else if (*p == '"' || *p == ',' || *p == '\n' || *p == ' ') {
				if (out[n - 1] != ' ')
					out[n++] = ' ';
			} else {
				out[n++] = *p;
			}
		}
	}
	fclose(f);
	out[n] = '\0';
	return out;
}

/* man/grademl-tui.1 lists every key and every command. */
static void man_page_lists_everything(void **state)
{
	const char *keys = man_tokens(".SS Keys", ".SS Commands");
	for (size_t i = 0; i < key_binding_count; i++) {
		char name[16], tok[20];
		snprintf(tok, sizeof(tok), " %s ",
			 keys_name(key_bindings[i].key, name, sizeof(name)));
		if (!strstr(keys, tok))
			fail_msg("key '%s' is not in the man page's Keys section", name);
	}
	const char *cmds = man_tokens(".SS Commands", ".SH");
	const char *name, *args, *help;
	for (size_t i = 0; app_command_info(i, &name, &args, &help); i++) {
		char tok[40];
		snprintf(tok, sizeof(tok), " %s ", name);
		if (!strstr(cmds, tok))
			fail_msg("command '%s' is not in the man page's Commands section", name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(names_round_trip),
	    cmocka_unit_test(lookup_by_screen),
	    cmocka_unit_test(every_action_bound_and_documented),
	    cmocka_unit_test(no_conflicts),
	    cmocka_unit_test(man_page_lists_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
