/*
 * Sorted runs in one temporary file and their merge; see runs.h.  Runs are
 * appended through stdio; the merge reads each with pread into a buffer of
 * its own and keeps one current record per run in a binary heap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ingest/runs.h"
#include "model/util/xalloc.h"

/* A new file in $TMPDIR (else /tmp), unlinked at once: it goes away when
 * closed, whatever happens to the process.  (tmpfile() ignores TMPDIR.) */
static FILE *run_file(char **err)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	char *path = xasprintf("%s/grademl-sort.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		*err = xasprintf("cannot create a temporary file for sorting in '%s': %s", dir,
				 strerror(errno));
		free(path);
		return NULL;
	}
	unlink(path);
	free(path);
	FILE *f = fdopen(fd, "w+");
	if (!f) {
		close(fd);
		*err = xasprintf("cannot create a temporary file for sorting: out of memory");
		return NULL;
	}
	return f;
}

void runs_init(struct runs *s, const struct run_kind *k)
{
	memset(s, 0, sizeof(*s));
	s->k = k;
}

/* Closes the file and forgets every run; the list's memory stays. */
static void runs_empty(struct runs *s)
{
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	s->end = 0;
	s->n = 0;
}

void runs_release(struct runs *s)
{
	runs_empty(s);
	free(s->v);
	s->v = NULL;
	s->alloc = 0;
}

static int write_failed(struct runs *s, char **err)
{
	runs_empty(s);
	*err = xasprintf("cannot write a temporary sort file (disk full?)");
	return -1;
}

int runs_write(struct runs *s, void *const *recs, size_t n, char **err)
{
	if (!s->f && !(s->f = run_file(err))) {
		runs_empty(s);
		return -1;
	}
	struct run r = {s->end, 0, n};
	for (size_t i = 0; i < n; i++) {
		size_t sz = s->k->size(recs[i]);
		if (fwrite(recs[i], sz, 1, s->f) != 1)
			return write_failed(s, err);
		r.bytes += sz;
	}
	s->end += r.bytes;
	XGROW(s->v, s->n + 1, s->alloc);
	s->v[s->n++] = r;
	return 0;
}

/* ---- the merge ---- */

struct reader {
	int fd;
	uint64_t pos, end; /* the stretch of the file not yet read */
	uint64_t left;	   /* records not yet taken */
	char *buf;	   /* RUNS_READ_BUF bytes; [used, have) not yet taken */
	size_t used, have;
	void *cur; /* the current record */
	size_t cur_alloc;
};

/* Copies the run's next len bytes to dst: 0, or -1 when the file ends
 * early or fails. */
static int reader_take(struct reader *rd, char *dst, size_t len)
{
	while (len) {
		if (rd->used == rd->have) {
			size_t want = RUNS_READ_BUF;
			if (want > rd->end - rd->pos)
				want = (size_t)(rd->end - rd->pos);
			ssize_t got;
			do
				got = want ? pread(rd->fd, rd->buf, want, (off_t)rd->pos) : 0;
			while (got < 0 && errno == EINTR);
			if (got <= 0)
				return -1;
			rd->pos += (uint64_t)got;
			rd->used = 0;
			rd->have = (size_t)got;
		}
		size_t m = rd->have - rd->used < len ? rd->have - rd->used : len;
		memcpy(dst, rd->buf + rd->used, m);
		rd->used += m;
		dst += m;
		len -= m;
	}
	return 0;
}

/* Reads the next record: 1, 0 at the end of the run, -1 with *err set. */
static int reader_next(const struct run_kind *k, struct reader *rd, char **err)
{
	if (!rd->left)
		return 0;
	if (rd->cur_alloc < k->head) {
		rd->cur = xrealloc(rd->cur, k->head);
		rd->cur_alloc = k->head;
	}
	if (reader_take(rd, rd->cur, k->head) < 0)
		goto bad;
	size_t sz = k->size(rd->cur);
	if (sz > rd->cur_alloc) {
		rd->cur = xrealloc(rd->cur, sz);
		rd->cur_alloc = sz;
	}
	if (sz > k->head && reader_take(rd, (char *)rd->cur + k->head, sz - k->head) < 0)
		goto bad;
	rd->left--;
	return 1;
bad:
	*err = xasprintf("cannot read back a temporary sort file");
	return -1;
}

static void heap_down(const struct run_kind *k, struct reader **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && k->cmp(h[l]->cur, h[m]->cur) < 0)
			m = l;
		if (l + 1 < n && k->cmp(h[l + 1]->cur, h[m]->cur) < 0)
			m = l + 1;
		if (m == i)
			return;
		struct reader *tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/* Merges the runs v[0..n) of s into sink; s's buffered writes are on the
 * file already. */
static int merge(const struct runs *s, const struct run *v, size_t n, run_sink sink, void *arg,
		 char **err)
{
	const struct run_kind *k = s->k;
	struct reader *rd = xcalloc(n ? n : 1, sizeof(*rd));
	struct reader **heap = xcalloc(n ? n : 1, sizeof(*heap));
	char *bufs = xmalloc((n ? n : 1) * (size_t)RUNS_READ_BUF);
	size_t hn = 0;
	int rc = -1;
	for (size_t i = 0; i < n; i++) {
		rd[i].fd = fileno(s->f);
		rd[i].pos = v[i].off;
		rd[i].end = v[i].off + v[i].bytes;
		rd[i].left = v[i].count;
		rd[i].buf = bufs + i * (size_t)RUNS_READ_BUF;
		int got = reader_next(k, &rd[i], err);
		if (got < 0)
			goto out;
		if (got)
			heap[hn++] = &rd[i];
	}
	for (size_t i = hn; i-- > 0;)
		heap_down(k, heap, hn, i);
	while (hn) {
		if (sink(arg, heap[0]->cur) < 0)
			goto out;
		int got = reader_next(k, heap[0], err);
		if (got < 0)
			goto out;
		if (!got)
			heap[0] = heap[--hn];
		heap_down(k, heap, hn, 0);
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(rd[i].cur);
	free(bufs);
	free(rd);
	free(heap);
	return rc;
}

/* A round's output: a new run appended to the set's file. */
struct round {
	struct runs *s;
	struct run out;
	char **err;
};

static int sink_append(void *arg, const void *rec)
{
	struct round *r = arg;
	size_t sz = r->s->k->size(rec);
	if (fwrite(rec, sz, 1, r->s->f) != 1) {
		*r->err = xasprintf("cannot write a temporary sort file (disk full?)");
		return -1;
	}
	r->out.bytes += sz;
	r->out.count++;
	return 0;
}

int runs_merge(struct runs *s, run_sink sink, void *arg, char **err)
{
	int rc = -1;
	if (s->f && fflush(s->f) != 0) {
		*err = xasprintf("cannot write a temporary sort file (disk full?)");
		goto out;
	}
	/* the newest runs, into one appended to the file and put first in
	 * the list, until one merge takes them all: a later round takes
	 * runs as written, so no record is written more than twice */
	while (s->n > RUNS_FANIN) {
		size_t m = s->n - RUNS_FANIN + 1 < RUNS_FANIN ? s->n - RUNS_FANIN + 1 : RUNS_FANIN;
		struct round r = {s, {s->end, 0, 0}, err};
		if (merge(s, s->v + s->n - m, m, sink_append, &r, err) < 0)
			goto out;
		if (fflush(s->f) != 0) {
			*err = xasprintf("cannot write a temporary sort file (disk full?)");
			goto out;
		}
		s->end += r.out.bytes;
		s->n -= m;
		memmove(s->v + 1, s->v, s->n * sizeof(*s->v));
		s->v[0] = r.out;
		s->n++;
	}
	rc = merge(s, s->v, s->n, sink, arg, err);
out:
	runs_empty(s);
	return rc;
}

/* ---- the run buffer ---- */

void run_buffer_init(struct run_buffer *b, const struct run_kind *k, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->k = k;
	b->cap = cap ? cap : 1;
	runs_init(&b->runs, k);
}

/* Sorts the buffered records; with spill, writes them as a run. */
static int buffer_sort(struct run_buffer *b, int spill, char **err)
{
	size_t size = b->k->head;
	if (b->n)
		qsort(b->v, b->n, size, b->k->cmp);
	if (!spill)
		return 0;
	for (size_t i = 0; i < b->n; i++)
		b->order[i] = b->v + i * size;
	size_t n = b->n;
	b->n = 0;
	return runs_write(&b->runs, b->order, n, err);
}

void *run_buffer_add(struct run_buffer *b, char **err)
{
	if (!b->v) {
		b->v = xmalloc(b->cap * b->k->head);
		b->order = xmalloc(b->cap * sizeof(*b->order));
	}
	if (b->n == b->cap && buffer_sort(b, 1, err) < 0)
		return NULL;
	return b->v + b->n++ * b->k->head;
}

int run_buffer_merge(struct run_buffer *b, run_sink sink, void *arg, char **err)
{
	if (buffer_sort(b, b->runs.n > 0 && b->n > 0, err) < 0) /* no empty run */
		return -1;
	if (b->runs.n)
		return runs_merge(&b->runs, sink, arg, err);
	size_t n = b->n;
	b->n = 0;
	for (size_t i = 0; i < n; i++)
		if (sink(arg, b->v + i * b->k->head) < 0)
			return -1;
	return 0;
}

void run_buffer_release(struct run_buffer *b)
{
	runs_release(&b->runs);
	free(b->v);
	free(b->order);
	memset(b, 0, sizeof(*b));
}
