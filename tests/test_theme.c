/*
 * Unit tests for tui/theme.h: the theme file format (colours, attributes,
 * comments, inheritance from normal), every parse error naming its file
 * and line, the fallback of 256-colour values on smaller terminals, the
 * search path, and every theme shipped in themes/ loading cleanly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/testdir.h"
#include "tui/theme.h"
#include "model/util/xalloc.h"

/* The themes/ folder of this checkout, found from this file's own path. */
static void themes_dir(char *buf, size_t n)
{
	char rel[PATH_MAX];
	const char *slash = strrchr(__FILE__, '/');
	int len = slash ? (int)(slash - __FILE__) : 0;
	snprintf(rel, sizeof(rel), "%.*s%s../themes", len, __FILE__, len ? "/" : "");
	if (!realpath(rel, buf))
		fail_msg("cannot find the themes folder at %s (run from the repository root)", rel);
	(void)n;
}

static int parse(const char *text, struct theme *t, char **err)
{
	*err = NULL;
	return theme_parse(text, strlen(text), "t.theme", t, err);
}

static void spit(const char *path, const void *data, size_t n)
{
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

static void assert_style(const struct theme_style *s, int fg, int bg, unsigned attrs)
{
	if (s->fg != fg || s->bg != bg || s->attrs != attrs)
		fail_msg("style fg %d bg %d attrs %#x, expected fg %d bg %d attrs %#x", s->fg,
			 s->bg, s->attrs, fg, bg, attrs);
}

static void test_theme_parse_valid(void **state)
{
	(void)state;
	struct theme t;
	char *err;
	const char *text = "# a comment line\n"
			   "\n"
			   "   \t\n"
			   "normal = white black\n"
			   "title = bright-white default bold   # trailing comment\n"
			   "header\t=\tcolor17 color255 underline reverse\r\n"
			   "selected=yellow blue bold dim underline reverse italic\n"
			   "bar-alt = colour0 bold\n"
			   "spark = BRIGHT-Green\n"
			   "Error = default default\n"
			   "prompt = color007";
	assert_int_equal(parse(text, &t, &err), 0);
	assert_null(err);
	assert_string_equal(t.name, "t");
	assert_style(&t.role[ROLE_NORMAL], 7, 0, 0);
	assert_style(&t.role[ROLE_TITLE], 15, -1, THEME_BOLD);
	assert_style(&t.role[ROLE_HEADER], 17, 255, THEME_UNDERLINE | THEME_REVERSE);
	assert_style(&t.role[ROLE_SELECTED], 3, 4,
		     THEME_BOLD | THEME_DIM | THEME_UNDERLINE | THEME_REVERSE | THEME_ITALIC);
	/* an attribute where BG could be: BG is normal's */
	assert_style(&t.role[ROLE_BAR_ALT], 0, 0, THEME_BOLD);
	assert_style(&t.role[ROLE_SPARK], 10, 0, 0);
	assert_style(&t.role[ROLE_ERROR], -1, -1, 0);
	assert_style(&t.role[ROLE_PROMPT], 7, 0, 0);

	/* every basic name, in order */
	static const char *const names[] = {"black", "red",	"green", "yellow",
					    "blue",  "magenta", "cyan",	 "white"};
	for (int i = 0; i < 8; i++) {
		char line[64];
		snprintf(line, sizeof(line), "normal = %s bright-%s", names[i], names[i]);
		assert_int_equal(parse(line, &t, &err), 0);
		assert_style(&t.role[ROLE_NORMAL], i, 8 + i, 0);
	}

	/* the name comes from the origin's base name */
	assert_int_equal(theme_parse("", 0, "/x/y/dusk.theme", &t, &err), 0);
	assert_string_equal(t.name, "dusk");
	assert_style(&t.role[ROLE_STATUS], -1, -1, 0);
}

static void test_theme_inherit_normal(void **state)
{
	(void)state;
	struct theme t;
	char *err;
	/* normal given last still reaches the roles before it */
	assert_int_equal(parse("bar = green\n"
			       "match = red default\n"
			       "normal = color250 color235 bold\n",
			       &t, &err),
			 0);
	for (int r = 0; r < ROLE_COUNT; r++) {
		if (r == ROLE_BAR)
			assert_style(&t.role[r], 2, 235, 0); /* normal's background only */
		else if (r == ROLE_MATCH)
			assert_style(&t.role[r], 1, -1, 0); /* default is kept */
		else
			assert_style(&t.role[r], 250, 235, THEME_BOLD);
	}
	/* with no normal at all every role is the terminal's default */
	assert_int_equal(parse("# nothing\n", &t, &err), 0);
	for (int r = 0; r < ROLE_COUNT; r++)
		assert_style(&t.role[r], -1, -1, 0);
	/* every role key of grid.h is accepted */
	for (int r = 0; r < ROLE_COUNT; r++) {
		char line[64];
		snprintf(line, sizeof(line), "%s = red", theme_role_key((enum role)r));
		assert_int_equal(parse(line, &t, &err), 0);
		assert_int_equal(t.role[r].fg, 1);
	}
}

struct bad {
	const char *text;
	size_t len; /* 0: strlen */
	const char *msg;
};

static void test_theme_errors(void **state)
{
	(void)state;
	char longline[400];
	snprintf(longline, sizeof(longline), "normal = red # %0300d", 0);
	static const char nul[] = "normal = red\nbar = green\0 blue\n";
	const struct bad cases[] = {
	    {"normal = red\nfoo = red\n", 0, "t.theme:2: unknown role 'foo'"},
	    {"normal = pink", 0, "t.theme:1: unknown colour 'pink'"},
	    {"\n\nnormal = red\ntitle = color256\n", 0,
	     "t.theme:4: colour 'color256' out of range (0..255)"},
	    {"normal = red color99999999999999999999", 0,
	     "t.theme:1: colour 'color99999999999999999999' out of range (0..255)"},
	    {"normal = color", 0, "t.theme:1: unknown colour 'color'"},
	    {"normal = color-1", 0, "t.theme:1: unknown colour 'color-1'"},
	    {"normal = color1x", 0, "t.theme:1: unknown colour 'color1x'"},
	    {"normal = bright-default", 0, "t.theme:1: unknown colour 'bright-default'"},
	    {"normal = red black blink", 0, "t.theme:1: unknown attribute 'blink'"},
	    {"normal = red pink", 0, "t.theme:1: unknown colour or attribute 'pink'"},
	    {"normal = red black bold green", 0,
	     "t.theme:1: unexpected colour 'green' after FG and BG"},
	    {"# ok\nnormal red\n", 0, "t.theme:2: missing '=' after 'normal'"},
	    {"= red", 0, "t.theme:1: missing role before '='"},
	    {"normal title = red", 0, "t.theme:1: unexpected 'title' after the role"},
	    {"selected =   # nothing\n", 0, "t.theme:1: missing colour for 'selected'"},
	    {"bar = red\nnormal = red\nbar = blue\n", 0,
	     "t.theme:3: role 'bar' already set on line 1"},
	    {longline, 0, "t.theme:1: line too long (315 bytes, at most 255)"},
	    {nul, sizeof(nul) - 1, "t.theme:2: NUL byte in the line"},
	    /* trace-like hostile bytes are quoted sanitised */
	    {"normal = \x1b[2J", 0, "t.theme:1: unknown colour '\\e[2J'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct theme t;
		char *err = NULL;
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		if (theme_parse(cases[i].text, len, "t.theme", &t, &err) != -1)
			fail_msg("case %zu (%s) parsed", i, cases[i].msg);
		assert_non_null(err);
		if (strcmp(err, cases[i].msg))
			fail_msg("case %zu: got \"%s\", expected \"%s\"", i, err, cases[i].msg);
		free(err);
	}
	/* a line of exactly the limit is fine, with or without CR */
	char edge[THEME_MAX_LINE + 3];
	memset(edge, ' ', sizeof(edge));
	memcpy(edge, "normal = red", 12);
	edge[THEME_MAX_LINE] = '\r';
	edge[THEME_MAX_LINE + 1] = '\n';
	edge[THEME_MAX_LINE + 2] = '\0';
	struct theme t;
	char *err = NULL;
	assert_int_equal(theme_parse(edge, strlen(edge), "t.theme", &t, &err), 0);
	/* over 64 KiB of text is refused without reading a line */
	size_t big = THEME_MAX_BYTES + 1;
	char *huge = xmalloc(big);
	memset(huge, '\n', big);
	assert_int_equal(theme_parse(huge, big, "t.theme", &t, &err), -1);
	assert_string_equal(err, "t.theme: too large (65537 bytes, at most 65536)");
	free(err);
	assert_int_equal(theme_parse(huge, big - 1, "t.theme", &t, &err), 0);
	free(huge);
}

static void test_theme_fallback(void **state)
{
	(void)state;
	/* the terminal has them: unchanged */
	assert_int_equal(theme_fallback_colour(196, 256), 196);
	assert_int_equal(theme_fallback_colour(9, 16), 9);
	assert_int_equal(theme_fallback_colour(3, 8), 3);
	assert_int_equal(theme_fallback_colour(-1, 256), -1);
	/* 16..255 to the nearest basic colour (xterm's RGB values) */
	assert_int_equal(theme_fallback_colour(196, 16), 9);  /* ff0000 */
	assert_int_equal(theme_fallback_colour(196, 8), 1);   /* red */
	assert_int_equal(theme_fallback_colour(21, 16), 4);   /* 0000ff: 0000ee, not 5c5cff */
	assert_int_equal(theme_fallback_colour(16, 16), 0);   /* black */
	assert_int_equal(theme_fallback_colour(231, 16), 15); /* ffffff */
	assert_int_equal(theme_fallback_colour(231, 8), 7);
	assert_int_equal(theme_fallback_colour(232, 16), 0); /* grey 080808 */
	assert_int_equal(theme_fallback_colour(255, 16), 7); /* grey eeeeee: e5e5e5 */
	assert_int_equal(theme_fallback_colour(244, 16), 8); /* grey 808080: 7f7f7f */
	assert_int_equal(theme_fallback_colour(244, 8), 0);  /* 8, then plain */
	assert_int_equal(theme_fallback_colour(226, 8), 3);  /* ffff00: 11, then plain */
	assert_int_equal(theme_fallback_colour(46, 16), 10); /* 00ff00 */
	assert_int_equal(theme_fallback_colour(51, 16), 14); /* 00ffff */
	/* bright colours on an 8-colour terminal */
	assert_int_equal(theme_fallback_colour(12, 8), 4);
	assert_int_equal(theme_fallback_colour(8, 8), 0);
	/* no colour at all, or not a colour */
	assert_int_equal(theme_fallback_colour(4, 0), -1);
	assert_int_equal(theme_fallback_colour(200, 2), -1);
	assert_int_equal(theme_fallback_colour(256, 256), -1);
	assert_int_equal(theme_fallback_colour(-7, 16), -1);
	/* never out of the terminal's range */
	for (int c = -1; c < 256; c++) {
		assert_true(theme_fallback_colour(c, 16) < 16);
		assert_true(theme_fallback_colour(c, 8) < 8);
	}
}

static void test_theme_monochrome_builtin(void **state)
{
	(void)state;
	struct theme t;
	theme_monochrome(&t);
	assert_string_equal(t.name, "monochrome");
	for (int r = 0; r < ROLE_COUNT; r++) {
		assert_int_equal(t.role[r].fg, -1);
		assert_int_equal(t.role[r].bg, -1);
	}
	/* the selection and the status line stand out without colour */
	assert_true(t.role[ROLE_SELECTED].attrs & THEME_REVERSE);
	assert_true(t.role[ROLE_STATUS].attrs & THEME_REVERSE);
	assert_int_equal(t.role[ROLE_NORMAL].attrs, 0);
}

/* Every NAME.theme in themes/ loads by name, and the required ones are there. */
static void test_theme_shipped(void **state)
{
	(void)state;
	char dir[PATH_MAX];
	themes_dir(dir, sizeof(dir));
	assert_int_equal(setenv("GRADEML_THEME_DIR", dir, 1), 0);
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	int count = 0, seen_default = 0, seen_light = 0, seen_mono = 0;
	while ((e = readdir(d))) {
		size_t k = strlen(e->d_name);
		if (k <= 6 || strcmp(e->d_name + k - 6, ".theme"))
			continue;
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(k - 6), e->d_name);
		struct theme t;
		char *err = NULL;
		if (theme_load(name, &t, &err) < 0)
			fail_msg("shipped theme %s: %s", name, err);
		assert_string_equal(t.name, name);
		/* the selected row must look different from the others */
		assert_memory_not_equal(&t.role[ROLE_SELECTED], &t.role[ROLE_NORMAL],
					sizeof(struct theme_style));
		seen_default += !strcmp(name, "default");
		seen_light += !strcmp(name, "light");
		seen_mono += !strcmp(name, "monochrome");
		count++;
	}
	closedir(d);
	assert_true(count >= 4);
	assert_int_equal(seen_default + seen_light + seen_mono, 3);

	/* the monochrome file is the built-in theme */
	struct theme file, builtin;
	char *err = NULL;
	assert_int_equal(theme_load("monochrome", &file, &err), 0);
	theme_monochrome(&builtin);
	for (int r = 0; r < ROLE_COUNT; r++)
		assert_memory_equal(&file.role[r], &builtin.role[r], sizeof(struct theme_style));

	/* they are all offered for completion */
	char **names;
	size_t n = theme_list(&names);
	int listed = 0;
	for (size_t i = 0; i < n; i++) {
		listed += !strcmp(names[i], "default") || !strcmp(names[i], "light") ||
			  !strcmp(names[i], "monochrome") || !strcmp(names[i], "solarized-dark");
		free(names[i]);
	}
	free(names);
	assert_int_equal(listed, 4);
	unsetenv("GRADEML_THEME_DIR");
}

static void test_theme_load_search(void **state)
{
	(void)state;
	char dir[256], path[400];
	struct theme t;
	char *err = NULL;
	assert_int_equal(testdir_make(dir, sizeof(dir), "theme"), 0);
	assert_int_equal(setenv("GRADEML_THEME_DIR", dir, 1), 0);

	/* by name from $GRADEML_THEME_DIR */
	snprintf(path, sizeof(path), "%s/dusk.theme", dir);
	spit(path, "normal = red blue\n", 18);
	assert_int_equal(theme_load("dusk", &t, &err), 0);
	assert_string_equal(t.name, "dusk");
	assert_style(&t.role[ROLE_BAR], 1, 4, 0);

	/* by path */
	snprintf(path, sizeof(path), "%s/by-path.theme", dir);
	spit(path, "bar = green\n", 12);
	assert_int_equal(theme_load(path, &t, &err), 0);
	assert_string_equal(t.name, "by-path");
	assert_int_equal(t.role[ROLE_BAR].fg, 2);

	/* an error in a file names the file and the line */
	snprintf(path, sizeof(path), "%s/bad.theme", dir);
	spit(path, "normal = red\n\ntitle = pink\n", 27);
	assert_int_equal(theme_load("bad", &t, &err), -1);
	char want[600];
	snprintf(want, sizeof(want), "%s:3: unknown colour 'pink'", path);
	assert_string_equal(err, want);
	free(err);

	/* not found: the message lists where it looked, the env dir first */
	assert_int_equal(theme_load("no-such", &t, &err), -1);
	snprintf(want, sizeof(want), "theme 'no-such' not found in %s", dir);
	if (strncmp(err, want, strlen(want)))
		fail_msg("got \"%s\"", err);
	free(err);
	assert_int_equal(theme_load("./no/such.theme", &t, &err), -1);
	assert_non_null(strstr(err, "./no/such.theme: cannot open: "));
	free(err);

	/* too large, checked before reading */
	snprintf(path, sizeof(path), "%s/big.theme", dir);
	char *big = xmalloc(THEME_MAX_BYTES + 1);
	memset(big, '#', THEME_MAX_BYTES + 1);
	spit(path, big, THEME_MAX_BYTES + 1);
	free(big);
	assert_int_equal(theme_load("big", &t, &err), -1);
	snprintf(want, sizeof(want), "%s: too large (65537 bytes, at most 65536)", path);
	assert_string_equal(err, want);
	free(err);

	/* a directory is not a theme */
	snprintf(path, sizeof(path), "%s/odd.theme", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(theme_load("odd", &t, &err), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	assert_string_equal(err, want);
	free(err);

	/* the list: sorted, no hidden files, no other suffixes, monochrome always */
	snprintf(path, sizeof(path), "%s/.hidden.theme", dir);
	spit(path, "", 0);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	spit(path, "", 0);
	char **names;
	size_t n = theme_list(&names);
	assert_true(n >= 6);
	int have_mono = 0, have_hidden = 0, have_notes = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(strcmp(names[i - 1], names[i]) < 0);
		have_mono += !strcmp(names[i], "monochrome");
		have_hidden += strstr(names[i], "hidden") != NULL;
		have_notes += strstr(names[i], "notes") != NULL;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	assert_int_equal(have_mono, 1);
	assert_int_equal(have_hidden + have_notes, 0);

	/* monochrome needs no file (unless a theme dir has one) */
	if (access("/usr/local/share/grademl-tui/themes/monochrome.theme", F_OK) != 0) {
		assert_int_equal(theme_load("monochrome", &t, &err), 0);
		assert_string_equal(t.name, "monochrome");
	}
	assert_int_equal(theme_load("", &t, &err), -1);
	free(err);

	snprintf(path, sizeof(path), "%s/odd.theme", dir);
	rmdir(path);
	testdir_remove(dir);
	unsetenv("GRADEML_THEME_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_theme_parse_valid),
	    cmocka_unit_test(test_theme_inherit_normal),
	    cmocka_unit_test(test_theme_errors),
	    cmocka_unit_test(test_theme_fallback),
	    cmocka_unit_test(test_theme_monochrome_builtin),
	    cmocka_unit_test(test_theme_shipped),
	    cmocka_unit_test(test_theme_load_search),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
