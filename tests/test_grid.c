/*
 * The virtual screen: clipping, wide characters, sanitising, ASCII mode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "tui/grid.h"

static void row(const struct grid *g, int y, char *buf)
{
	grid_row_text(g, y, buf, 512);
}

static void put_and_clip(void **state)
{
	struct grid g;
	char buf[512];
	grid_init(&g, 10, 2, 0);
	assert_int_equal(grid_put(&g, 2, 0, -1, "hello world", ROLE_NORMAL), 8);
	row(&g, 0, buf);
	assert_string_equal(buf, "  hello wo");
	assert_int_equal(grid_put(&g, 0, 1, 3, "abcdef", ROLE_TITLE), 3);
	row(&g, 1, buf);
	assert_string_equal(buf, "abc");
	assert_int_equal(grid_at(&g, 2, 1)->role, ROLE_TITLE);
	assert_int_equal(grid_at(&g, 3, 1)->role, ROLE_NORMAL);
	/* outside the grid: nothing, no crash */
	assert_int_equal(grid_put(&g, 0, 2, -1, "x", ROLE_NORMAL), 0);
	assert_int_equal(grid_put(&g, 10, 0, -1, "x", ROLE_NORMAL), 0);
	assert_int_equal(grid_put(&g, -1, 0, -1, "x", ROLE_NORMAL), 0);
	assert_null(grid_at(&g, 10, 0));
	grid_release(&g);
}

/* A cut ends in the mark; what fits is drawn whole. */
static void put_cut_marks(void **state)
{
	struct grid g;
	char buf[512];
	grid_init(&g, 12, 3, 0);
	assert_int_equal(grid_put_cut(&g, 0, 0, 6, "abcdefgh", "\u2026", ROLE_NORMAL), 6);
	row(&g, 0, buf);
	assert_string_equal(buf, "abcde\u2026");
	assert_int_equal(grid_put_cut(&g, 0, 1, 6, "abcdef", "\u2026", ROLE_NORMAL), 6);
	row(&g, 1, buf);
	assert_string_equal(buf, "abcdef");
	/* to the right edge, and a wide character that does not fit */
	assert_int_equal(grid_put_cut(&g, 9, 2, -1, "xy\u4e2d", "~", ROLE_NORMAL), 3);
	row(&g, 2, buf);
	assert_string_equal(buf, "         xy~");
	grid_release(&g);
}

static void escapes_become_text(void **state)
{
	struct grid g;
	char buf[512];
	grid_init(&g, 40, 1, 0);
	grid_put(&g, 0, 0, -1,
		 "a\x1b]0;evil\x07z\xc2\x9b"
		 "2J",
		 ROLE_NORMAL);
	for (int x = 0; x < g.w; x++) {
		uint32_t ch = grid_at(&g, x, 0)->ch;
		assert_true(ch >= 0x20 && ch != 0x7f && !(ch >= 0x80 && ch < 0xa0));
	}
	row(&g, 0, buf);
	assert_string_equal(buf, "a\\e]0;evil\\x07z\\u009b2J");
	grid_release(&g);
}

static void wide_characters(void **state)
{
	struct grid g;
	char buf[512];
	grid_init(&g, 5, 1, 0);
	/* two wide characters take four columns; a third does not fit */
	assert_int_equal(
	    grid_put(&g, 0, 0, -1, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", ROLE_NORMAL), 4);
	assert_int_equal(grid_at(&g, 1, 0)->ch, GRID_WIDE_TAIL);
	row(&g, 0, buf);
	assert_string_equal(buf, "\xe6\x97\xa5\xe6\x9c\xac");
	/* overwriting the tail blanks the head */
	grid_put(&g, 1, 0, 1, "x", ROLE_NORMAL);
	row(&g, 0, buf);
	assert_string_equal(buf, " x\xe6\x9c\xac");
	grid_release(&g);
}

static void ascii_mode(void **state)
{
	struct grid g;
	char buf[512];
	grid_init(&g, 10, 1, 1);
	grid_put(&g, 0, 0, -1,
		 "a\xe2\x96\x81"
		 "b",
		 ROLE_NORMAL);
	grid_fill(&g, 5, 0, 2, 0x2588, ROLE_BAR);
	row(&g, 0, buf);
	assert_string_equal(buf, "a?b  ??");
	grid_release(&g);
}

static void fill_paint_resize(void **state)
{
	struct grid g;
	char buf[512];
	grid_init(&g, 6, 2, 0);
	grid_fill(&g, -2, 0, 4, '#', ROLE_BAR);
	row(&g, 0, buf);
	assert_string_equal(buf, "##");
	grid_paint(&g, 0, 0, 6, ROLE_SELECTED);
	assert_int_equal(grid_at(&g, 5, 0)->role, ROLE_SELECTED);
	assert_int_equal(grid_at(&g, 0, 0)->ch, '#');
	grid_resize(&g, 3, 4);
	assert_int_equal(g.w, 3);
	assert_int_equal(g.h, 4);
	row(&g, 3, buf);
	assert_string_equal(buf, "");
	grid_release(&g);
}

/* A name wrapped onto rows, the last cut with the mark when more is left;
 * a pane is a title row above it, or nothing where two rows do not fit. */
static void wrapped_and_pane(void **state)
{
	(void)state;
	struct grid g;
	char buf[512];
	grid_init(&g, 6, 6, 0);
	assert_int_equal(grid_put_wrapped(&g, 1, 0, 4, 2,
					  "abcd\x1b"
					  "efgh",
					  "~", ROLE_NORMAL),
			 2);
	row(&g, 0, buf);
	assert_string_equal(buf, " abcd");
	row(&g, 1, buf);
	assert_string_equal(buf, " \\ee~"); /* ESC made visible ("\\e"), then cut */
	assert_int_equal(grid_put_wrapped(&g, 0, 2, 6, 3, "xyz", "~", ROLE_NORMAL), 1);
	row(&g, 2, buf);
	assert_string_equal(buf, "xyz");
	grid_clear(&g, ROLE_NORMAL);
	assert_int_equal(grid_put_pane(&g, 6, 3, "T", "0123456789", "~"), 3);
	row(&g, 3, buf);
	assert_string_equal(buf, " T");
	row(&g, 4, buf);
	assert_string_equal(buf, " 0123");
	row(&g, 5, buf);
	assert_string_equal(buf, " 456~");
	assert_int_equal(grid_put_pane(&g, 6, 1, "T", "0123", "~"), 0);
	grid_release(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(put_and_clip),	 cmocka_unit_test(escapes_become_text),
	    cmocka_unit_test(wide_characters),	 cmocka_unit_test(ascii_mode),
	    cmocka_unit_test(fill_paint_resize), cmocka_unit_test(put_cut_marks),
	    cmocka_unit_test(wrapped_and_pane),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
