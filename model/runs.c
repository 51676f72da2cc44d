/*
 * Sorted runs in temporary files and their merge; see runs.h.  Each run has
 * stdio's own buffer (a block, 4 KiB here: the buffers of a 64-way merge
 * stay in cache; 64 KiB ones were no faster on the bench), and the merge
 * keeps one current record per run in a binary heap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/runs.h"
#include "model/xalloc.h"

static int write_failed(FILE *f, char **err)
{
	fclose(f);
	*err = xasprintf("cannot write a temporary sort file (disk full?)");
	return -1;
}

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

int run_write(const struct run_kind *k, void *const *recs, size_t n, struct run *out, char **err)
{
	FILE *f = run_file(err);
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (fwrite(recs[i], k->size(recs[i]), 1, f) != 1)
			return write_failed(f, err);
	if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0)
		return write_failed(f, err);
	out->f = f;
	out->count = n;
	out->gen = 0;
	return 0;
}

void runs_close(struct run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (runs[i].f) {
			fclose(runs[i].f);
			runs[i].f = NULL;
		}
}

/* ---- the merge ---- */

struct reader {
	FILE *f;
	uint64_t left;
	void *cur; /* the current record */
	size_t cur_alloc;
};

/* Reads the next record: 1, 0 at the end of the run, -1 with *err set. */
static int reader_next(const struct run_kind *k, struct reader *rd, char **err)
{
	if (!rd->left)
		return 0;
	if (rd->cur_alloc < k->head) {
		rd->cur = xrealloc(rd->cur, k->head);
		rd->cur_alloc = k->head;
	}
	if (fread(rd->cur, k->head, 1, rd->f) != 1)
		goto bad;
	size_t sz = k->size(rd->cur);
	if (sz > rd->cur_alloc) {
		rd->cur = xrealloc(rd->cur, sz);
		rd->cur_alloc = sz;
	}
	if (sz > k->head && fread((char *)rd->cur + k->head, sz - k->head, 1, rd->f) != 1)
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

/* Merges runs[0..n) into sink and closes them. */
static int merge(const struct run_kind *k, struct run *runs, size_t n, run_sink sink, void *arg,
		 char **err)
{
	struct reader *rd = xcalloc(n ? n : 1, sizeof(*rd));
	struct reader **heap = xcalloc(n ? n : 1, sizeof(*heap));
	size_t hn = 0;
	int rc = -1;
	for (size_t i = 0; i < n; i++) {
		rd[i].f = runs[i].f;
		rd[i].left = runs[i].count;
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
	runs_close(runs, n);
	free(rd);
	free(heap);
	return rc;
}

struct round {
	const struct run_kind *k;
	struct run out;
	char **err;
};

static int sink_write(void *arg, const void *rec)
{
	struct round *r = arg;
	if (fwrite(rec, r->k->size(rec), 1, r->out.f) != 1) {
		*r->err = xasprintf("cannot write a temporary sort file (disk full?)");
		return -1;
	}
	r->out.count++;
	return 0;
}

/* Merges runs[0..m) into one new run *out (closing them, error or not). */
static int merge_to_run(const struct run_kind *k, struct run *runs, size_t m, struct run *out,
			char **err)
{
	struct round r = {k, {run_file(err), 0, 0}, err};
	if (!r.out.f) {
		runs_close(runs, m);
		return -1;
	}
	if (merge(k, runs, m, sink_write, &r, err) < 0) {
		fclose(r.out.f);
		return -1;
	}
	if (fflush(r.out.f) != 0 || fseek(r.out.f, 0, SEEK_SET) != 0)
		return write_failed(r.out.f, err);
	*out = r.out;
	return 0;
}

int runs_add(const struct run_kind *k, struct run **runs, size_t *n, size_t *alloc, struct run r,
	     char **err)
{
	XGROW(*runs, *n + 1, *alloc);
	r.gen = 0;
	(*runs)[(*n)++] = r;
	/* generations never grow along the list, so the last RUNS_FANIN are of
	 * one generation when the first of them is of the last one's */
	while (*n >= RUNS_FANIN && (*runs)[*n - RUNS_FANIN].gen == (*runs)[*n - 1].gen) {
		struct run *last = *runs + *n - RUNS_FANIN;
		unsigned gen = last->gen + 1;
		*n -= RUNS_FANIN;
		if (merge_to_run(k, last, RUNS_FANIN, &(*runs)[*n], err) < 0)
			return -1;
		(*runs)[(*n)++].gen = gen;
	}
	return 0;
}

int runs_merge(const struct run_kind *k, struct run *runs, size_t *n, run_sink sink, void *arg,
	       char **err)
{
	/* the oldest runs first, into one new run, until one merge does it */
	while (*n > RUNS_FANIN) {
		size_t m = *n - RUNS_FANIN + 1 < RUNS_FANIN ? *n - RUNS_FANIN + 1 : RUNS_FANIN;
		struct run out;
		if (merge_to_run(k, runs, m, &out, err) < 0) {
			runs_close(runs + m, *n - m);
			*n = 0;
			return -1;
		}
		memmove(runs, runs + m, (*n - m) * sizeof(*runs));
		*n -= m;
		runs[(*n)++] = out;
	}
	size_t all = *n;
	*n = 0;
	return merge(k, runs, all, sink, arg, err);
}

/* ---- the run buffer ---- */

void run_buffer_init(struct run_buffer *b, const struct run_kind *k, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->k = k;
	b->cap = cap ? cap : 1;
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
	struct run r;
	if (run_write(b->k, b->order, b->n, &r, err) < 0)
		return -1;
	b->n = 0;
	return runs_add(b->k, &b->runs, &b->nruns, &b->runs_alloc, r, err);
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
	if (buffer_sort(b, b->nruns > 0 && b->n > 0, err) < 0) /* no empty run */
		return -1;
	if (b->nruns)
		return runs_merge(b->k, b->runs, &b->nruns, sink, arg, err);
	size_t n = b->n;
	b->n = 0;
	for (size_t i = 0; i < n; i++)
		if (sink(arg, b->v + i * b->k->head) < 0)
			return -1;
	return 0;
}

void run_buffer_release(struct run_buffer *b)
{
	runs_close(b->runs, b->nruns);
	free(b->runs);
	free(b->v);
	free(b->order);
	memset(b, 0, sizeof(*b));
}
