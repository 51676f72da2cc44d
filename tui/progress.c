/*
 * The import command's progress line and closing summary (progress.h).  A
 * thread of its own wakes every PROGRESS_PERIOD_NS, takes a snapshot of the
 * counters and writes the line with one write(2), "\r" first and an erase
 * to the end of the line last, so that nothing is left of a longer line
 * before it; the importing threads never wait for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "importers/tally.h"
#include "model/util/sbuf.h"
#include "model/util/xalloc.h"
#include "tui/format.h"
#include "tui/progress.h"

struct progress {
	int fd;
	char *const *paths;
	size_t n;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int tty, drawing; /* fd is a terminal; the thread draws on it */
	const char *more; /* the cut mark */
	int stop, drawn;
	int64_t t0; /* when the import began */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Bytes on disk of a regular file, else 0 (unknown). */
static uint64_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
}

/* The parts of a file's line after its name, in order, and which of them
 * a narrow terminal drops first (the lowest rank). */
enum { PART_NTH, PART_BYTES, PART_EVENTS, PART_RATE, PART_LEFT, NPARTS };
static const int part_rank[NPARTS] = {
    [PART_NTH] = 0, [PART_RATE] = 1, [PART_EVENTS] = 2, [PART_LEFT] = 3, [PART_BYTES] = 4};

/* The shortest a file name is cut to before parts are dropped. */
#define NAME_MIN 16

/* The parts of the line for reading file t->file, into part[]. */
static void progress_parts(struct sbuf *part, const struct tally *t, const char *path, size_t n,
			   int64_t now)
{
	char a[32], b[32];
	uint64_t size = file_size(path);
	double secs = (double)(now - t->file_ns) / 1e9;
	double rate = secs > 0 ? (double)t->bytes / secs : 0;
	if (n > 1)
		sbuf_addf(&part[PART_NTH], " [%zu/%zu]", t->file + 1, n);
	sbuf_addf(&part[PART_BYTES], ": %s", format_bytes(a, sizeof(a), (int64_t)t->bytes));
	if (size)
		sbuf_addf(&part[PART_BYTES], " of %s (%.0f%%)",
			  format_bytes(b, sizeof(b), (int64_t)size),
			  t->bytes >= size ? 100.0 : 100.0 * (double)t->bytes / (double)size);
	sbuf_addf(&part[PART_EVENTS], ", %llu events read", (unsigned long long)t->events);
	sbuf_addf(&part[PART_RATE], ", %s/s", format_bytes(a, sizeof(a), (int64_t)rate));
	if (size && rate > 0 && t->bytes < size)
		sbuf_addf(&part[PART_LEFT], ", %s left",
			  format_duration(a, sizeof(a),
					  (int64_t)((double)(size - t->bytes) / rate * 1e9)));
}

void progress_format(struct sbuf *out, const struct tally *t, char *const *paths, size_t n,
		     int64_t t0, int64_t now, int cols, const char *more)
{
	char a[32];
	struct sbuf line = SBUF_INIT;
	sbuf_init(&line);
	sbuf_adds(&line, "importing");
	if (t->stage != TALLY_READ || t->file >= n) {
		sbuf_addf(&line, ": %s, %llu events read, %s",
			  t->stage == TALLY_PULL ? "pulling from Prometheus"
						 : "checking, indexing, committing",
			  (unsigned long long)t->events, format_duration(a, sizeof(a), now - t0));
	} else {
		const char *path = paths[t->file], *base = strrchr(path, '/');
		struct sbuf part[NPARTS], name = SBUF_INIT;
		sbuf_init(&name);
		for (int i = 0; i < NPARTS; i++)
			sbuf_init(&part[i]);
		progress_parts(part, t, path, n, now);
		base = base ? base + 1 : path;
		format_sanitize(&name, base);
		int room = cols - 1 - (int)strlen("importing ");
		for (int i = 0; i < NPARTS; i++)
			room -= (int)part[i].len; /* ASCII */
		for (int r = 0;
		     r < part_rank[PART_BYTES] && room < NAME_MIN && room < format_width(name.buf);
		     r++)
			for (int i = 0; i < NPARTS; i++)
				if (part_rank[i] == r) {
					room += (int)part[i].len;
					sbuf_reset(&part[i]);
				}
		char **cut = format_cut_distinct(&base, 1, room > NAME_MIN ? room : NAME_MIN, more);
		sbuf_addf(&line, " %s", cut[0]);
		free(cut[0]);
		free(cut);
		for (int i = 0; i < NPARTS; i++) {
			sbuf_adds(&line, part[i].buf);
			sbuf_release(&part[i]);
		}
		sbuf_release(&name);
	}
	/* the whole line within the terminal, or it wraps and "\r" cannot
	 * take it back */
	format_fit(out, line.buf, cols > 1 ? cols - 1 : 1, 0);
	sbuf_release(&line);
}

static void progress_write(int fd, const char *s, size_t n)
{
	ssize_t w;
	do
		w = write(fd, s, n);
	while (w < 0 && errno == EINTR);
}

static void progress_draw(struct progress *p)
{
	struct tally t;
	struct sbuf line = SBUF_INIT;
	sbuf_init(&line);
	tally_get(&t);
	sbuf_addc(&line, '\r');
	progress_format(&line, &t, p->paths, p->n, p->t0, now_ns(), format_term_cols(p->fd),
			p->more);
	sbuf_adds(&line, "\033[K");
	progress_write(p->fd, line.buf, line.len);
	p->drawn = 1;
	sbuf_release(&line);
}

static void *progress_thread(void *arg)
{
	struct progress *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PROGRESS_PERIOD_NS;
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		while (!p->stop && pthread_cond_timedwait(&p->cv, &p->mu, &until) != ETIMEDOUT)
			;
		if (!p->stop)
			progress_draw(p);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct progress *progress_start(int fd, char *const *paths, size_t n, const char *more)
{
	struct progress *p = xcalloc(1, sizeof(*p));
	p->fd = fd;
	p->paths = paths;
	p->n = n;
	p->t0 = now_ns();
	p->more = more;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->tty = isatty(fd);
	p->drawing = p->tty && pthread_create(&p->th, NULL, progress_thread, p) == 0;
	return p;
}

/* The notable diagnostics, one line each, and on a terminal the closing
 * line. */
static void progress_summary(const struct progress *p, const char *db,
			     const struct import_summary *s)
{
	struct sbuf out = SBUF_INIT, a = SBUF_INIT;
	char d[32];
	sbuf_init(&out);
	sbuf_init(&a);
	for (size_t i = 0; i < s->nnotes; i++) {
		const struct import_note *x = &s->notes[i];
		sbuf_adds(&out, "grademl-tui import: ");
		format_sanitize(&out, x->path);
		sbuf_addf(&out, ": %s: ", x->code);
		format_sanitize(&out, x->message);
		sbuf_addf(&out, " (%lld", (long long)x->count);
		if (x->example) {
			sbuf_adds(&out, ", e.g. ");
			format_sanitize(&out, x->example);
		}
		sbuf_adds(&out, ")\n");
	}
	if (p->tty) {
		format_sanitize(&a, db);
		sbuf_addf(&out,
			  "imported %zu file%s into %s: %lld phases, %lld events, %lld samples,"
			  " %lld diagnostic%s, in %s\n",
			  p->n, p->n == 1 ? "" : "s", a.buf, (long long)s->phases,
			  (long long)s->events, (long long)s->samples, (long long)s->diagnostics,
			  s->diagnostics == 1 ? "" : "s",
			  format_duration(d, sizeof(d), now_ns() - p->t0));
	}
	progress_write(p->fd, out.buf, out.len);
	sbuf_release(&out);
	sbuf_release(&a);
}

void progress_finish(struct progress *p, const char *db, const struct import_summary *s)
{
	if (p->drawing) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
	}
	if (p->drawn)
		progress_write(p->fd, "\r\033[K", 4);
	if (s)
		progress_summary(p, db, s);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
