/*
 * Streaming input with transparent gzip and zstd decompression.  The peek
 * buffer lets the format registry sniff content before an importer reads;
 * reads drain the peek buffer first, then the decoder.  A compressed file
 * is decoded ahead on a thread of its own into a few buffers, so that
 * inflating overlaps the importer's parsing (on the 1 GiB bench trace the
 * parse stage is as fast as the inflating); the importer sees the same
 * bytes, and a decoding error after the bytes before it.  The bytes may
 * come from a reader function instead of a file (an HTTP response body).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "importers/input.h"
#include "importers/tally.h"
#include "model/store/store.h"
#include "model/util/xalloc.h"

#define RAW_CHUNK (256 * 1024)
#define AHEAD_N	  4		/* buffers decoded ahead */
#define AHEAD_LEN (1024 * 1024) /* bytes each */

/* The decode-ahead thread's buffers: a ring the thread fills at tail and
 * input_read empties at head.  Full buffers belong to the reader until it
 * releases them, the others to the thread. */
struct ahead {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *buf[AHEAD_N];
	size_t len[AHEAD_N];
	size_t head, count, pos; /* pos: read so far of buf[head] */
	int done, stop;
	char *err; /* the decoder failed after the buffers filled */
};

struct input {
	char *path;
	int fd;		     /* -1 for a reader's stream */
	input_reader reader; /* NULL: read from fd */
	void *reader_arg;
	enum input_codec codec;
	uint64_t size;
	uint64_t decoded; /* decompressed bytes the decoder has produced */
	int eof;
	/* raw (compressed) bytes read from the file but not yet decoded */
	unsigned char *raw;
	size_t raw_len, raw_pos, raw_cap;
	int raw_eof;
	z_stream z;
	ZSTD_DCtx *zd;
	int zstd_frame_open; /* bytes of an unfinished frame were consumed */
	/* peeked decoded bytes, handed out before anything else */
	unsigned char peek[INPUT_PEEK_MAX];
	size_t peek_len, peek_pos;
	char *peek_err;	     /* decoding failed past the peeked bytes: read reports it */
	struct ahead *ahead; /* NULL: read decodes in the caller's thread */
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
	if (in->reader) {
		if ((n = in->reader(in->reader_arg, in->raw, in->raw_cap, err)) < 0)
			return -1;
	} else {
		do
			n = read(in->fd, in->raw, in->raw_cap);
		while (n < 0 && errno == EINTR);
	}
	if (n < 0) {
		*err = xasprintf("%s: read error: %s", in->path, strerror(errno));
		return -1;
	}
	in->raw_len = (size_t)n;
	in->raw_pos = 0;
	if (n == 0)
		in->raw_eof = 1;
	tally_bytes((uint64_t)n);
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

static ssize_t decode(struct input *in, unsigned char *buf, size_t n, char **err);

static void *ahead_thread(void *arg)
{
	struct input *in = arg;
	struct ahead *a = in->ahead;
	for (size_t tail = 0;; tail = (tail + 1) % AHEAD_N) {
		pthread_mutex_lock(&a->mu);
		while (a->count == AHEAD_N && !a->stop)
			pthread_cond_wait(&a->cv, &a->mu);
		int stop = a->stop;
		pthread_mutex_unlock(&a->mu);
		if (stop)
			return NULL;
		size_t len = 0;
		char *err = NULL;
		ssize_t k = 1;
		while (len < AHEAD_LEN &&
		       (k = decode(in, a->buf[tail] + len, AHEAD_LEN - len, &err)) > 0)
			len += (size_t)k;
		pthread_mutex_lock(&a->mu);
		a->len[tail] = len;
		if (len)
			a->count++;
		if (k <= 0) {
			a->done = 1;
			a->err = err;
		}
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (k <= 0)
			return NULL;
	}
}

/* Starts decoding ahead; on failure to start, reads decode in place. */
static void ahead_start(struct input *in)
{
	struct ahead *a = xcalloc(1, sizeof(*a));
	for (int i = 0; i < AHEAD_N; i++)
		a->buf[i] = xmalloc(AHEAD_LEN);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	in->ahead = a;
	if (pthread_create(&a->th, NULL, ahead_thread, in) != 0) {
		in->ahead = NULL;
		for (int i = 0; i < AHEAD_N; i++)
			free(a->buf[i]);
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
	}
}

static ssize_t ahead_read(struct input *in, unsigned char *buf, size_t n, char **err)
{
	struct ahead *a = in->ahead;
	pthread_mutex_lock(&a->mu);
	while (!a->count && !a->done)
		pthread_cond_wait(&a->cv, &a->mu);
	size_t count = a->count;
	pthread_mutex_unlock(&a->mu);
	if (!count) {
		if (!a->err)
			return 0;
		*err = xstrdup(a->err);
		return -1;
	}
	/* buf[head] is the reader's until released */
	size_t k = a->len[a->head] - a->pos;
	if (k > n)
		k = n;
	memcpy(buf, a->buf[a->head] + a->pos, k);
	a->pos += k;
	if (a->pos == a->len[a->head]) {
		pthread_mutex_lock(&a->mu);
		a->head = (a->head + 1) % AHEAD_N;
		a->pos = 0;
		a->count--;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	return (ssize_t)k;
}

static void ahead_stop(struct input *in)
{
	struct ahead *a = in->ahead;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	for (int i = 0; i < AHEAD_N; i++)
		free(a->buf[i]);
	free(a->err);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
	in->ahead = NULL;
}

/* After the source is open: the codec from the first bytes, the peek
 * buffer filled, decoding ahead started for compressed input. */
static int input_start(struct input *in, char **err)
{
	if (fill_raw(in, err) < 0)
		return -1;
	if (in->raw_len == 0) {
		*err = errf(in, in->reader ? "empty response" : "empty file");
		return -1;
	}
	const unsigned char *m = in->raw;
	if (in->raw_len >= 2 && m[0] == 0x1f && m[1] == 0x8b) {
		in->codec = INPUT_GZIP;
		if (inflateInit2(&in->z, 15 + 32) != Z_OK) {
			*err = errf(in, "cannot start gzip decoder");
			return -1;
		}
	} else if (in->raw_len >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f &&
		   m[3] == 0xfd) {
		in->codec = INPUT_ZSTD;
		if (!(in->zd = ZSTD_createDCtx())) {
			*err = errf(in, "cannot start zstd decoder");
			return -1;
		}
	}
	/* peek: fill what the decoder yields, up to INPUT_PEEK_MAX */
	while (in->peek_len < INPUT_PEEK_MAX) {
		ssize_t k = decode(in, in->peek + in->peek_len, INPUT_PEEK_MAX - in->peek_len, err);
		if (k < 0) {
			if (in->peek_len == 0)
				return -1; /* nothing to sniff: the decode error is the answer */
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
		return -1;
	}
	if (in->codec != INPUT_PLAIN && !in->eof && !in->peek_err)
		ahead_start(in);
	return 0;
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
	/* a small file gets a buffer its size (and one byte to see the end) */
	in->raw_cap = S_ISREG(st.st_mode) && st.st_size < RAW_CHUNK - 64 ? (size_t)st.st_size + 64
									 : RAW_CHUNK;
	in->raw = xmalloc(in->raw_cap);
	if (input_start(in, err) < 0)
		goto fail;
	*out = in;
	return 0;
fail:
	input_close(in);
	return -1;
}

int input_open_reader(const char *name, input_reader read, void *arg, struct input **out,
		      char **err)
{
	struct input *in = xcalloc(1, sizeof(*in));
	in->path = xstrdup(name);
	in->fd = -1;
	in->reader = read;
	in->reader_arg = arg;
	in->raw_cap = RAW_CHUNK;
	in->raw = xmalloc(in->raw_cap);
	if (input_start(in, err) < 0) {
		input_close(in);
		return -1;
	}
	*out = in;
	return 0;
}

const unsigned char *input_peek(struct input *in, size_t *len)
{
	*len = in->peek_len;
	return in->peek;
}

ssize_t input_read(struct input *in, void *buf, size_t n, char **err)
{
	if (store_interrupted()) {
		*err = errf(in, "interrupted");
		return -1;
	}
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
	return in->ahead ? ahead_read(in, buf, n, err) : decode(in, buf, n, err);
}

void input_close(struct input *in)
{
	if (!in)
		return;
	if (in->ahead)
		ahead_stop(in);
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

int input_line_at(const char *path, uint64_t at, uint64_t *line, char **err)
{
	struct input *in;
	if (input_open(path, &in, err) < 0)
		return -1;
	unsigned char *buf = xmalloc(RAW_CHUNK);
	uint64_t n = 1, pos = 0;
	int rc = -1;
	while (pos < at) {
		ssize_t k = input_read(in, buf, at - pos < RAW_CHUNK ? at - pos : RAW_CHUNK, err);
		if (k < 0)
			goto out;
		if (k == 0)
			break;
		for (const unsigned char *s = buf, *e = buf + k; (s = memchr(s, '\n', e - s)); s++)
			n++;
		pos += (uint64_t)k;
	}
	*line = n;
	rc = 0;
out:
	free(buf);
	input_close(in);
	return rc;
}

const char *input_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}
