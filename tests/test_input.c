/*
 * Unit tests for importers/input.h: plain, gzip (one member, several, zero
 * padding after the last) and zstd files read back byte for byte; the peek
 * buffer; and the errors for truncated, empty and directory inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "importers/input.h"
#include "model/util/sbuf.h"
#include "tests/testdir.h"
#include "model/util/xalloc.h"

struct fx {
	char dir[256];
	char path[320];
	unsigned char *content; /* the decompressed bytes the file should read as */
	size_t len;
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	if (testdir_make(f->dir, sizeof(f->dir), "input") < 0) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/trace", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	testdir_remove(f->dir);
	free(f->content);
	free(f);
	return 0;
}

/* n bytes of JSON-ish text that compress, with enough variety (a linear
 * congruential counter) that the compressed size grows with n. */
static void make_content(struct fx *f, size_t n)
{
	struct sbuf sb;
	sbuf_init(&sb);
	uint32_t x = 12345;
	while (sb.len < n) {
		x = x * 1103515245u + 12345u;
		sbuf_addf(&sb, "{\"ph\":\"X\",\"ts\":%u,\"dur\":%u},\n", x >> 8, (x >> 20) & 0xff);
	}
	f->len = n;
	f->content = (unsigned char *)sbuf_detach(&sb);
}

static void spit(const char *path, const char *mode, const void *data, size_t n)
{
	FILE *fp = fopen(path, mode);
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

/* Appends one gzip member holding data[0..n) to path (a new file for "wb"). */
static void gzip_member(const char *path, const char *mode, const void *data, size_t n)
{
	gzFile gz = gzopen(path, mode);
	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, data, (unsigned)n), (int)n);
	assert_int_equal(gzclose(gz), Z_OK);
}

/* The zstd frame of data[0..n); *out_len its size. */
static unsigned char *zstd_frame(const void *data, size_t n, size_t *out_len)
{
	size_t cap = ZSTD_compressBound(n);
	unsigned char *z = xmalloc(cap);
	size_t k = ZSTD_compress(z, cap, data, n, 3);
	assert_false(ZSTD_isError(k));
	*out_len = k;
	return z;
}

/* Reads the input to its end in odd-sized pieces; returns the bytes, or NULL
 * with *err set when a read fails. */
static char *read_all(struct input *in, size_t *len, char **err)
{
	struct sbuf sb;
	sbuf_init(&sb);
	char buf[1000];
	ssize_t k;
	while ((k = input_read(in, buf, sizeof(buf), err)) > 0)
		sbuf_add(&sb, buf, (size_t)k);
	if (k < 0) {
		sbuf_release(&sb);
		return NULL;
	}
	*len = sb.len;
	return sbuf_detach(&sb);
}

/* Opens f->path, checks the codec, and that it reads as f->content. */
static void assert_reads_back(struct fx *f, enum input_codec codec)
{
	struct input *in = NULL;
	char *err = NULL;
	if (input_open(f->path, &in, &err) < 0)
		fail_msg("input_open: %s", err);
	assert_int_equal(input_codec(in), codec);
	assert_string_equal(input_path(in), f->path);
	size_t len = 0;
	char *got = read_all(in, &len, &err);
	if (!got)
		fail_msg("input_read: %s", err);
	int same = len == f->len && !memcmp(got, f->content, len);
	free(got);
	if (!same)
		fail_msg("%s: read %zu bytes, want %zu (or different bytes)", f->path, len, f->len);
	/* the end stays the end */
	char c;
	assert_int_equal(input_read(in, &c, 1, &err), 0);
	input_close(in);
}

static void assert_open_fails(const char *path, const char *what)
{
	struct input *in = NULL;
	char *err = NULL;
	assert_int_equal(input_open(path, &in, &err), -1);
	assert_null(in);
	assert_non_null(err);
	int ok = !strncmp(err, path, strlen(path)) && strstr(err, what);
	if (!ok)
		fail_msg("error \"%s\" should start with \"%s\" and mention \"%s\"", err, path,
			 what);
	free(err);
}

static void test_input_plain(void **state)
{
	struct fx *f = *state;
	make_content(f, 10000);
	spit(f->path, "wb", f->content, f->len);
	assert_reads_back(f, INPUT_PLAIN);
	assert_string_equal(input_codec_name(INPUT_PLAIN), "none");
}

static void test_input_gzip(void **state)
{
	struct fx *f = *state;
	make_content(f, 100000);
	gzip_member(f->path, "wb", f->content, f->len);
	assert_reads_back(f, INPUT_GZIP);
	assert_string_equal(input_codec_name(INPUT_GZIP), "gzip");
}

static void test_input_gzip_members(void **state)
{
	struct fx *f = *state;
	make_content(f, 30000);
	gzip_member(f->path, "wb", f->content, 7000);
	gzip_member(f->path, "ab", f->content + 7000, 1);
	gzip_member(f->path, "ab", f->content + 7001, f->len - 7001);
	assert_reads_back(f, INPUT_GZIP);
}

/* Zeros after the last member, as gzip -t accepts: the end, not an error;
 * more zeros than one read of the raw file. */
static void test_input_gzip_zero_padding(void **state)
{
	struct fx *f = *state;
	make_content(f, 5000);
	static const size_t pads[] = {1, 512, 600 * 1024};
	for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); i++) {
		gzip_member(f->path, "wb", f->content, f->len);
		unsigned char *zeros = xcalloc(1, pads[i]);
		spit(f->path, "ab", zeros, pads[i]);
		free(zeros);
		assert_reads_back(f, INPUT_GZIP);
	}
}

static void test_input_zstd(void **state)
{
	struct fx *f = *state;
	make_content(f, 100000);
	size_t zlen;
	unsigned char *z = zstd_frame(f->content, f->len, &zlen);
	spit(f->path, "wb", z, zlen);
	free(z);
	assert_reads_back(f, INPUT_ZSTD);
	assert_string_equal(input_codec_name(INPUT_ZSTD), "zstd");
}

/* Files larger than the decode-ahead ring (4 buffers of 1 MiB): the ring
 * wraps and waits on the reader, and the bytes come back in order; cut
 * short, the reader gets a prefix of the content, then the error; closed
 * while the thread waits on a full ring, it stops. */
static void test_input_decode_ahead(void **state)
{
	struct fx *f = *state;
	make_content(f, 9 << 20);
	gzip_member(f->path, "wb", f->content, f->len);
	assert_reads_back(f, INPUT_GZIP);
	size_t zlen;
	unsigned char *z = zstd_frame(f->content, f->len, &zlen);
	spit(f->path, "wb", z, zlen);
	assert_reads_back(f, INPUT_ZSTD);

	spit(f->path, "wb", z, zlen * 3 / 4);
	struct input *in = NULL;
	char *err = NULL;
	char buf[65536];
	size_t got = 0;
	ssize_t k;
	assert_int_equal(input_open(f->path, &in, &err), 0);
	while ((k = input_read(in, buf, sizeof(buf), &err)) > 0) {
		assert_true(got + (size_t)k <= f->len);
		assert_memory_equal(buf, f->content + got, (size_t)k);
		got += (size_t)k;
	}
	assert_int_equal(k, -1);
	assert_true(got > (4 << 20)); /* past a whole ring */
	if (!strstr(err, "truncated zstd stream"))
		fail_msg("error \"%s\" should say truncated zstd", err);
	free(err);
	err = NULL;
	/* the error stays: a second read says it again */
	assert_int_equal(input_read(in, buf, sizeof(buf), &err), -1);
	free(err);
	input_close(in);

	spit(f->path, "wb", z, zlen);
	assert_int_equal(input_open(f->path, &in, &err), 0);
	assert_true(input_read(in, buf, sizeof(buf), &err) > 0);
	input_close(in); /* the thread waits on a full ring: it must stop */
	free(z);
}

/* A truncated gzip file: the bytes before the cut, then an error. */
static void test_input_gzip_truncated(void **state)
{
	struct fx *f = *state;
	make_content(f, 200000);
	char gz[400];
	snprintf(gz, sizeof(gz), "%s.gz", f->path);
	gzip_member(gz, "wb", f->content, f->len);
	size_t zlen = 0;
	FILE *fp = fopen(gz, "rb");
	assert_non_null(fp);
	unsigned char *z = xmalloc(1 << 20);
	zlen = fread(z, 1, 1 << 20, fp);
	fclose(fp);
	assert_true(zlen > 1000);

	spit(f->path, "wb", z, zlen / 2);
	struct input *in = NULL;
	char *err = NULL;
	assert_int_equal(input_open(f->path, &in, &err), 0);
	size_t n = 0;
	input_peek(in, &n);
	assert_true(n == INPUT_PEEK_MAX);
	size_t len = 0;
	char *got = read_all(in, &len, &err);
	assert_null(got);
	assert_non_null(err);
	if (strncmp(err, f->path, strlen(f->path)) || !strstr(err, "truncated gzip"))
		fail_msg("error \"%s\" should name the file and say truncated gzip", err);
	free(err);
	input_close(in);

	/* cut in the header: nothing decodes, open says why */
	spit(f->path, "wb", z, 6);
	assert_open_fails(f->path, "truncated gzip stream at decompressed byte 0");
	free(z);
}

/* A small zstd file cut short decodes nothing: the error comes at open,
 * not as an unrecognised or empty file. */
static void test_input_zstd_truncated_small(void **state)
{
	struct fx *f = *state;
	make_content(f, 600);
	size_t zlen;
	unsigned char *z = zstd_frame(f->content, f->len, &zlen);
	assert_true(zlen > 8);
	spit(f->path, "wb", z, zlen - 3);
	free(z);
	assert_open_fails(f->path, "truncated zstd stream");
}

static void test_input_empty_and_directory(void **state)
{
	struct fx *f = *state;
	spit(f->path, "wb", "", 0);
	assert_open_fails(f->path, "empty");
	gzip_member(f->path, "wb", "", 0);
	assert_open_fails(f->path, "empty after decompression");
	assert_open_fails(f->dir, "directory");
	char missing[400];
	snprintf(missing, sizeof(missing), "%s/missing", f->dir);
	assert_open_fails(missing, "cannot open");
}

/* Peeking shows the first bytes and consumes nothing. */
static void test_input_peek(void **state)
{
	struct fx *f = *state;
	make_content(f, INPUT_PEEK_MAX + 10000);
	for (int gz = 0; gz < 2; gz++) {
		if (gz)
			gzip_member(f->path, "wb", f->content, f->len);
		else
			spit(f->path, "wb", f->content, f->len);
		struct input *in = NULL;
		char *err = NULL;
		assert_int_equal(input_open(f->path, &in, &err), 0);
		size_t n = 0;
		const unsigned char *p = input_peek(in, &n);
		assert_true(n == INPUT_PEEK_MAX);
		assert_memory_equal(p, f->content, n);
		/* a short read inside the peeked bytes, then the rest */
		char head[10];
		assert_int_equal(input_read(in, head, sizeof(head), &err), (ssize_t)sizeof(head));
		assert_memory_equal(head, f->content, sizeof(head));
		size_t len = 0;
		char *rest = read_all(in, &len, &err);
		assert_non_null(rest);
		assert_true(len == f->len - sizeof(head));
		assert_memory_equal(rest, f->content + sizeof(head), len);
		free(rest);
		input_close(in);
	}

	/* a file smaller than the peek buffer: all of it */
	spit(f->path, "wb", "{\"a\":1}", 7);
	struct input *in = NULL;
	char *err = NULL;
	assert_int_equal(input_open(f->path, &in, &err), 0);
	size_t n = 0;
	const unsigned char *p = input_peek(in, &n);
	assert_true(n == 7);
	assert_memory_equal(p, "{\"a\":1}", 7);
	assert_true(input_file_size(in) == 7);
	input_close(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_input_plain, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_gzip, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_gzip_members, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_gzip_zero_padding, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_zstd, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_decode_ahead, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_gzip_truncated, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_zstd_truncated_small, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_empty_and_directory, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_input_peek, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
