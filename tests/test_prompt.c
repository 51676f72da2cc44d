/*
 * The prompt's line editor: editing keys, UTF-8 cursor moves, history
 * browsing and saving, completion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testdir.h"
#include "tui/keys.h"
#include "tui/prompt.h"

static void type(struct prompt *p, const char *s)
{
	for (; *s; s++)
		prompt_key(p, (unsigned char)*s, NULL, NULL, NULL);
}

static void editing(void **state)
{
	struct prompt p;
	prompt_init(&p, NULL);
	prompt_open(&p, PROMPT_COMMAND);
	type(&p, "goto /x");
	prompt_key(&p, K_LEFT, NULL, NULL, NULL);
	prompt_key(&p, K_BACKSPACE, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "goto x");
	prompt_key(&p, CTRL('a'), NULL, NULL, NULL);
	prompt_key(&p, K_DELETE, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "oto x");
	prompt_key(&p, CTRL('e'), NULL, NULL, NULL);
	prompt_key(&p, CTRL('w'), NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "oto ");
	prompt_key(&p, CTRL('u'), NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "");
	/* control characters are not inserted */
	prompt_key(&p, 0x1b - 0x1b + 0x07, NULL, NULL, NULL);
	prompt_key(&p, 0x9b, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "");
	/* multi-byte characters move and delete whole */
	prompt_key(&p, 0xe9, NULL, NULL, NULL);
	prompt_key(&p, 'x', NULL, NULL, NULL);
	prompt_key(&p, K_LEFT, NULL, NULL, NULL);
	prompt_key(&p, K_LEFT, NULL, NULL, NULL);
	assert_int_equal(p.cursor, 0);
	prompt_key(&p, K_DELETE, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "x");
	assert_int_equal(prompt_key(&p, K_ESC, NULL, NULL, NULL), PROMPT_CANCEL);
	assert_int_equal(p.kind, PROMPT_NONE);
	prompt_release(&p);
}

static void history_saved_and_browsed(void **state)
{
	char dir[256], path[300];
	assert_int_equal(testdir_make(dir, sizeof(dir), "prompt"), 0);
	snprintf(path, sizeof(path), "%s/state/history", dir);
	struct prompt p;
	prompt_init(&p, path);
	prompt_open(&p, PROMPT_COMMAND);
	type(&p, "sort self");
	assert_int_equal(prompt_key(&p, K_ENTER, NULL, NULL, NULL), PROMPT_ACCEPT);
	prompt_open(&p, PROMPT_COMMAND);
	type(&p, "goto /a");
	prompt_key(&p, K_ENTER, NULL, NULL, NULL);
	prompt_release(&p);

	prompt_init(&p, path); /* read back from the file */
	prompt_open(&p, PROMPT_COMMAND);
	prompt_key(&p, K_UP, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "goto /a");
	prompt_key(&p, K_UP, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "sort self");
	prompt_key(&p, K_UP, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "sort self");
	prompt_key(&p, K_DOWN, NULL, NULL, NULL);
	prompt_key(&p, K_DOWN, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "");
	/* searches have their own history, not saved to the file */
	prompt_open(&p, PROMPT_SEARCH);
	prompt_key(&p, K_UP, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "");
	prompt_release(&p);
	remove(path);
	snprintf(path, sizeof(path), "%s/state", dir);
	rmdir(path);
	testdir_remove(dir);
}

/* A history file of 1200 lines is cut to the last 500 when read, and the
 * newest line is still the first Up gives. */
static void history_file_trimmed(void **state)
{
	char dir[256], path[300], buf[64];
	assert_int_equal(testdir_make(dir, sizeof(dir), "prompt"), 0);
	snprintf(path, sizeof(path), "%s/history", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 1200; i++)
		fprintf(f, "goto /%d\n", i);
	fclose(f);
	struct prompt p;
	prompt_init(&p, path);
	prompt_open(&p, PROMPT_COMMAND);
	prompt_key(&p, K_UP, NULL, NULL, NULL);
	assert_string_equal(p.line.buf, "goto /1199");
	prompt_release(&p);
	f = fopen(path, "r");
	assert_non_null(f);
	int n = 0;
	while (fgets(buf, sizeof(buf), f))
		if (n++ == 0)
			assert_string_equal(buf, "goto /700\n");
	fclose(f);
	assert_int_equal(n, 500);
	remove(path);
	testdir_remove(dir);
}

static char *complete_abc(void *ctx, const char *line, char **hint)
{
	(void)ctx;
	*hint = strdup("abc abd");
	return !strcmp(line, "a") ? strdup("ab") : NULL;
}

static void completion(void **state)
{
	struct prompt p;
	char *hint = NULL;
	prompt_init(&p, NULL);
	prompt_open(&p, PROMPT_COMMAND);
	type(&p, "a");
	prompt_key(&p, K_TAB, complete_abc, NULL, &hint);
	assert_string_equal(p.line.buf, "ab");
	assert_int_equal(p.cursor, 2);
	assert_string_equal(hint, "abc abd");
	free(hint);
	/* backspace on an empty line closes, as in less and vim */
	prompt_key(&p, CTRL('u'), NULL, NULL, NULL);
	assert_int_equal(prompt_key(&p, K_BACKSPACE, NULL, NULL, NULL), PROMPT_CANCEL);
	prompt_release(&p);
}

/* Tab completes what is left of the cursor and keeps the rest. */
static void completion_mid_line(void **state)
{
	struct prompt p;
	char *hint = NULL;
	prompt_init(&p, NULL);
	prompt_open(&p, PROMPT_COMMAND);
	type(&p, "a | x");
	for (int i = 0; i < 4; i++)
		prompt_key(&p, K_LEFT, NULL, NULL, NULL);
	assert_int_equal(p.cursor, 1);
	prompt_key(&p, K_TAB, complete_abc, NULL, &hint);
	assert_string_equal(p.line.buf, "ab | x");
	assert_int_equal(p.cursor, 2);
	free(hint);
	prompt_release(&p);
}

/* Reopening puts the line back with the cursor where asked, never past the
 * end nor inside a UTF-8 character. */
static void reopen_at_column(void **state)
{
	struct prompt p;
	prompt_init(&p, NULL);
	prompt_reopen(&p, PROMPT_COMMAND, "phases kind = opertor", 14);
	assert_int_equal(p.kind, PROMPT_COMMAND);
	assert_string_equal(p.line.buf, "phases kind = opertor");
	assert_int_equal(p.cursor, 14);
	prompt_reopen(&p, PROMPT_COMMAND, "ab", 99);
	assert_int_equal(p.cursor, 2);
	prompt_reopen(&p, PROMPT_COMMAND,
		      "a\xc3\xa9"
		      "b",
		      2); /* inside the é */
	assert_int_equal(p.cursor, 1);
	prompt_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(editing),
	    cmocka_unit_test(history_saved_and_browsed),
	    cmocka_unit_test(history_file_trimmed),
	    cmocka_unit_test(completion),
	    cmocka_unit_test(completion_mid_line),
	    cmocka_unit_test(reopen_at_column),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
