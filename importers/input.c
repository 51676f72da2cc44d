/*
 * Streaming input with transparent gzip and zstd decompression.  The peek
 * buffer lets the format registry sniff content before an importer reads;
 * reads drain the peek buffer first, then the decoder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "importers/input.h"
#include "model/xalloc.h"

#define RAW_CHUNK (256 * 1024)
#define PEEK_MAX  4096

struct input {
	char *path;
	int fd;
	enum input_codec codec;
	uint64_t size;
	uint64_t decoded; /* decompressed bytes the decoder has produced */
	int eof;
	/* raw (compressed) bytes read from the file but not yet decoded */
	unsigned char *raw;
	size_t raw_len, raw_pos;
	int raw_eof;
	z_stream z;
	ZSTD_DCtx *zd;
	int zstd_frame_open; /* bytes of an unfinished frame were consumed */
	/* peeked decoded bytes, handed out before anything else */
	unsigned char peek[PEEK_MAX];
	size_t peek_len, peek_pos;
	char *peek_err; /* decoding failed past the peeked bytes: read reports it */
};

static char *errf(const struct input *in, const char *what)
{
	return xasprintf("%s: %s", in->path, what);
}

static int fill_raw(struct input *in, char **err)
{
	if (in->raw_pos < in->raw_len || in->raw_eof)
		return 0;
	ssize_t n;
	do
		n = read(in->fd, in->raw, RAW_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		*err = xasprintf("%s: read error: %s", in->path, strerror(errno));
		return -1;
	}
	in->raw_len = (size_t)n;
	in->raw_pos = 0;
	if (n == 0)
		in->raw_eof = 1;
	return 0;
}

/* After a gzip member: another member continues the stream; zero bytes up
 * to the end of the file are padding (tape blocks, preallocated files),
 * which gzip -t accepts too, and end it. */
static int gzip_member_end(struct input *in, char **err)
{
	for (;;) {
		while (in->raw_pos < in->raw_len && in->raw[in->raw_pos] == 0)
			in->raw_pos++;
		if (in->raw_pos < in->raw_len) {
			inflateReset(&in->z);
			return 0;
		}
		if (fill_raw(in, err) < 0)
			return -1;
		if (in->raw_eof) {
			in->eof = 1;
			return 0;
		}
	}
}

/* Decodes into buf without touching the peek buffer. */
static ssize_t decode(struct input *in, unsigned char *buf, size_t n, char **err)
{
	if (in->eof || n == 0)
		return 0;
	for (;;) {
		if (fill_raw(in, err) < 0)
			return -1;
		size_t avail = in->raw_len - in->raw_pos;
		if (in->codec == INPUT_PLAIN) {
			if (in->raw_eof) {
				in->eof = 1;
				return 0;
			}
			size_t k = avail < n ? avail : n;
			memcpy(buf, in->raw + in->raw_pos, k);
			in->raw_pos += k;
			in->decoded += k;
			return (ssize_t)k;
		}
		if (in->codec == INPUT_GZIP) {
			if (in->raw_eof && avail == 0) {
				*err =
				    xasprintf("%s: truncated gzip stream at decompressed byte %llu",
					      in->path, (unsigned long long)in->decoded);
				return -1;
			}
			in->z.next_in = in->raw + in->raw_pos;
			in->z.avail_in = (uInt)avail;
			in->z.next_out = buf;
			in->z.avail_out = (uInt)(n > 1u << 30 ? 1u << 30 : n);
			int rc = inflate(&in->z, Z_NO_FLUSH);
			size_t produced = (size_t)(in->z.next_out - buf);
			in->raw_pos = (size_t)(in->z.next_in - in->raw);
			in->decoded += produced;
			if (rc == Z_STREAM_END) {
				if (gzip_member_end(in, err) < 0)
					return -1;
			} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
				*err = xasprintf(
				    "%s: corrupt gzip data near decompressed byte %llu: %s",
				    in->path, (unsigned long long)in->decoded,
				    in->z.msg ? in->z.msg : "inflate failed");
				return -1;
			}
			if (produced)
				return (ssize_t)produced;
			if (in->eof)
				return 0;
			continue;
		}
		/* zstd */
		if (in->raw_eof && avail == 0) {
			if (in->zstd_frame_open) {
				*err =
				    xasprintf("%s: truncated zstd stream at decompressed byte %llu",
					      in->path, (unsigned long long)in->decoded);
				return -1;
			}
			in->eof = 1;
			return 0;
		}
		ZSTD_inBuffer ib = {in->raw + in->raw_pos, avail, 0};
		ZSTD_outBuffer ob = {buf, n, 0};
		size_t rc = ZSTD_decompressStream(in->zd, &ob, &ib);
		in->raw_pos += ib.pos;
		if (ZSTD_isError(rc)) {
			*err = xasprintf("%s: corrupt zstd data near decompressed byte %llu: %s",
					 in->path, (unsigned long long)in->decoded,
					 ZSTD_getErrorName(rc));
			return -1;
		}
		in->zstd_frame_open = rc != 0;
		in->decoded += ob.pos;
		if (ob.pos)
			return (ssize_t)ob.pos;
	}
}

int input_open(const char *path, struct input **out, char **err)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->path = xstrdup(path);
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		*err = xasprintf("%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(in->fd, &st) < 0) {
		*err = xasprintf("%s: cannot stat: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		*err = errf(in, "is a directory, not a trace file");
		goto fail;
	}
	in->size = (uint64_t)st.st_size;
	in->raw = xmalloc(RAW_CHUNK);
	if (fill_raw(in, err) < 0)
		goto fail;
	if (in->raw_len == 0) {
		*err = errf(in, "empty file");
		goto fail;
	}
	const unsigned char *m = in->raw;
	if (in->raw_len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
		in->codec = INPUT_GZIP;
		if (inflateInit2(&in->z, 15 + 32) != Z_OK) {
			*err = errf(in, "cannot start gzip decoder");
			goto fail;
		}
	} else if (in->raw_len >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f &&
		   m[3] == 0xfd) {
		in->codec = INPUT_ZSTD;
		if (!(in->zd = ZSTD_createDCtx())) {
			*err = errf(in, "cannot start zstd decoder");
			goto fail;
		}
	}
	/* peek: fill what the decoder yields, up to PEEK_MAX */
	while (in->peek_len < PEEK_MAX) {
		ssize_t k = decode(in, in->peek + in->peek_len, PEEK_MAX - in->peek_len, err);
		if (k < 0) {
			if (in->peek_len == 0)
				goto fail; /* nothing to sniff: the decode error is the answer */
			/* the importer gets the bytes before the failure, then the error */
			in->peek_err = *err;
			*err = NULL;
			break;
		}
		if (k == 0)
			break;
		in->peek_len += (size_t)k;
	}
	if (in->peek_len == 0 && in->eof) {
		*err = errf(in, "empty after decompression");
		goto fail;
	}
	*out = in;
	return 0;
fail:
	input_close(in);
	return -1;
}

const unsigned char *input_peek(struct input *in, size_t *len)
{
	*len = in->peek_len;
	return in->peek;
}

ssize_t input_read(struct input *in, void *buf, size_t n, char **err)
{
	if (in->peek_pos < in->peek_len) {
		size_t k = in->peek_len - in->peek_pos;
		if (k > n)
			k = n;
		memcpy(buf, in->peek + in->peek_pos, k);
		in->peek_pos += k;
		return (ssize_t)k;
	}
	if (in->peek_err) {
		*err = xstrdup(in->peek_err);
		return -1;
	}
	return decode(in, buf, n, err);
}

void input_close(struct input *in)
{
	if (!in)
		return;
	if (in->fd >= 0)
		close(in->fd);
	if (in->codec == INPUT_GZIP)
		inflateEnd(&in->z);
	if (in->zd)
		ZSTD_freeDCtx(in->zd);
	free(in->raw);
	free(in->peek_err);
	free(in->path);
	free(in);
}

const char *input_path(const struct input *in)
{
	return in->path;
}

enum input_codec input_codec(const struct input *in)
{
	return in->codec;
}

const char *input_codec_name(enum input_codec c)
{
	return c == INPUT_GZIP ? "gzip" : c == INPUT_ZSTD ? "zstd" : "none";
}

uint64_t input_file_size(const struct input *in)
{
	return in->size;
}

const char *input_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}
