/*
 * parse_only FILE: the floor for an import's speed.  Streams FILE through
 * input_open (plain, gzip or zstd) into a YAJL parser configured as the
 * chrome importer configures its own, with callbacks that do nothing, and
 * prints the count of decompressed bytes parsed.  tests/bench/run.sh compares
 * the import's wall time with this pass's.
 *
 * Exit 0 on success, 2 (one line on stderr) when the file cannot be read or
 * is not JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <yajl/yajl_parse.h>

#include "importers/input.h"
#include "model/util/xalloc.h"

static int on_null(void *ctx)
{
	(void)ctx;
	return 1;
}

static int on_boolean(void *ctx, int b)
{
	(void)ctx;
	(void)b;
	return 1;
}

/* Numbers arrive as text, as in importers/chrome_json.c: no conversion. */
static int on_number(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	(void)s;
	(void)n;
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
	(void)ctx;
	(void)s;
	(void)n;
	return 1;
}

static int on_start(void *ctx)
{
	(void)ctx;
	return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n)
{
	(void)ctx;
	(void)s;
	(void)n;
	return 1;
}

static int on_end(void *ctx)
{
	(void)ctx;
	return 1;
}

static const yajl_callbacks callbacks = {
    on_null,  on_boolean, NULL,	  NULL,	    on_number, on_string,
    on_start, on_key,	  on_end, on_start, on_end,
};

static int fail(char *msg)
{
	fprintf(stderr, "parse_only: %s\n", msg);
	free(msg);
	return 2;
}

static char *yajl_message(yajl_handle h, const char *path, const unsigned char *chunk, size_t len,
			  uint64_t at)
{
	unsigned char *m = yajl_get_error(h, 0, chunk, len);
	char *line = xasprintf("%s: not JSON at byte %" PRIu64 ": %s", path, at, (const char *)m);
	yajl_free_error(h, m);
	size_t n = 0;
	for (char *c = line; *c; c++, n++)
		if (*c == '\n')
			*c = ' ';
	while (n > 0 && line[n - 1] == ' ')
		line[--n] = '\0';
	return line;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: parse_only FILE\n");
		return 2;
	}
	struct input *in;
	char *err = NULL;
	if (input_open(argv[1], &in, &err) < 0)
		return fail(err);

	yajl_handle h = yajl_alloc(&callbacks, NULL, NULL);
	yajl_config(h, yajl_dont_validate_strings, 1);
	yajl_config(h, yajl_allow_trailing_garbage, 0);

	static unsigned char buf[1 << 16];
	uint64_t total = 0;
	int rc = 0;
	for (;;) {
		ssize_t n = input_read(in, buf, sizeof(buf), &err);
		if (n < 0) {
			rc = fail(err);
			goto out;
		}
		if (n == 0)
			break;
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
			rc = fail(yajl_message(h, argv[1], buf, (size_t)n,
					       total + yajl_get_bytes_consumed(h)));
			goto out;
		}
		total += (uint64_t)n;
	}
	if (yajl_complete_parse(h) != yajl_status_ok) {
		rc = fail(yajl_message(h, argv[1], buf, 0, total));
		goto out;
	}
	printf("%" PRIu64 "\n", total);
out:
	yajl_free(h);
	input_close(in);
	return rc;
}
