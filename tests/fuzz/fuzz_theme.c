/*
 * libFuzzer target for the theme parser (tui/theme.h): each input is a
 * theme file's text.  Any outcome is fine except a crash, a sanitizer
 * report or a leak; a rejected input must come with a message naming the
 * origin, and an accepted one must hold only colours and attributes that
 * the format allows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/theme.h"
#include "model/util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_style(const struct theme_style *s)
{
	unsigned all = THEME_BOLD | THEME_DIM | THEME_UNDERLINE | THEME_REVERSE | THEME_ITALIC;
	if (s->fg < -1 || s->fg > 255 || s->bg < -1 || s->bg > 255 || (s->attrs & ~all))
		abort();
	for (int n = 0; n <= 256; n = n ? n * 2 : 8)
		if (theme_fallback_colour(s->fg, n) >= (n < 256 ? 16 : 256))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct theme t;
	char *err = NULL;
	if (theme_parse((const char *)data, size, "fuzz.theme", &t, &err) < 0) {
		if (!err || strncmp(err, "fuzz.theme:", 11))
			abort(); /* every error names where it is */
		free(err);
		return 0;
	}
	if (err || strcmp(t.name, "fuzz"))
		abort();
	for (int r = 0; r < ROLE_COUNT; r++)
		check_style(&t.role[r]);
	return 0;
}
