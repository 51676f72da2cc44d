/*
 * Chrome trace JSON out of trace.db; see export.h.  One pass writes the
 * phases: each goes on a lane of its track (its parent's lane when its
 * parent is open there, else the first lane it overlaps nothing on), whose
 * stack of open phases also holds each phase's flow ends until the phase
 * closes: a reader binds a flow end to the innermost slice open at its
 * time, so an end is written at the first moment of its phase that none of
 * the phase's children covers.  Then the events, then the samples.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "model/store/col.h"
#include "model/store/export.h"
#include "model/util/idmap.h"
#include "model/util/nstime.h"
#include "model/util/outfile.h"
#include "model/util/sbuf.h"
#include "model/util/strmap.h"
#include "model/store/subtree.h"
#include "model/util/text.h"
#include "model/util/xalloc.h"

#define OUT_CHUNK      ((size_t)2 << 20) /* text handed to the writer at a time */
#define GZ_LEVEL       1		 /* gzip: a sixth of the time of level 6, 20% larger */
#define LANES_MAX      256		 /* lanes of a track; past them, the last one */
#define NAME_CACHE     4096		 /* strings kept escaped, by id */
#define NAME_CACHE_MAX 4096		 /* the longest escaped string kept */
#define ARGS_DEPTH     64		 /* nesting of an attrs value copied as JSON */

/* ---- the output file (model/util/outfile.h) ---- */

/* The text is made in buf; each OUT_CHUNK of it goes to a writer thread
 * (in wbuf), which deflates and writes it while the next is made. */
struct out {
	struct outfile f;
	int f_on, gz, z_on;
	z_stream z;
	unsigned char *zbuf;
	struct sbuf buf, wbuf;
	pthread_t thread;
	int thread_on;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int full, done; /* wbuf holds text to write; no more will come */
	char *err;	/* the first write error (the writer's, under mu) */
	int broken;	/* the maker has seen err: it stops */
};

/* Writes text out (deflated for .gz); finish ends the stream.  Nothing
 * once *err is set. */
static void out_text(struct out *o, const struct sbuf *text, int finish, char **err)
{
	if (!o->gz) {
		outfile_write(&o->f, text->buf, text->len, err);
		return;
	}
	o->z.next_in = (unsigned char *)text->buf;
	o->z.avail_in = (uInt)text->len;
	int rc;
	do {
		o->z.next_out = o->zbuf;
		o->z.avail_out = (uInt)OUT_CHUNK;
		rc = deflate(&o->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR) {
			*err = xasprintf("cannot write '%s': gzip failed", o->f.path);
			break;
		}
		outfile_write(&o->f, o->zbuf, OUT_CHUNK - o->z.avail_out, err);
	} while (!*err && (o->z.avail_out == 0 || (finish && rc != Z_STREAM_END)));
}

static void *out_thread(void *arg)
{
	struct out *o = arg;
	char *err = NULL;
	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->full && !o->done)
			pthread_cond_wait(&o->cv, &o->mu);
		if (!o->full)
			break;
		pthread_mutex_unlock(&o->mu);
		if (!err)
			out_text(o, &o->wbuf, 0, &err);
		pthread_mutex_lock(&o->mu);
		if (err && !o->err)
			o->err = xstrdup(err);
		o->full = 0;
		pthread_cond_broadcast(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	free(err);
	return NULL;
}

static int out_open(struct out *o, const char *path, char **err)
{
	memset(o, 0, sizeof(*o));
	sbuf_init(&o->buf);
	sbuf_init(&o->wbuf);
	if (outfile_open(&o->f, path, OUTFILE_DASH, err) < 0)
		return -1;
	o->f_on = 1;
	if (!o->f.tmp && isatty(o->f.fd)) {
		*err = xasprintf("cannot write '%s': a terminal (write to a file or a pipe)", path);
		return -1;
	}
	size_t len = strlen(path);
	o->gz = len > 3 && !strcmp(path + len - 3, ".gz");
	if (o->gz) {
		if (deflateInit2(&o->z, GZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
		    Z_OK) {
			*err = xasprintf("cannot write '%s': cannot start gzip", path);
			return -1;
		}
		o->z_on = 1;
		o->zbuf = xmalloc(OUT_CHUNK);
	}
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	if (pthread_create(&o->thread, NULL, out_thread, o) != 0) {
		*err = xasprintf("cannot write '%s': cannot start a thread", path);
		return -1;
	}
	o->thread_on = 1;
	sbuf_grow(&o->buf, OUT_CHUNK + 4096);
	return 0;
}

/* Hands a full buffer to the writer. */
static void out_maybe_flush(struct out *o)
{
	if (o->buf.len < OUT_CHUNK)
		return;
	pthread_mutex_lock(&o->mu);
	while (o->full)
		pthread_cond_wait(&o->cv, &o->mu);
	struct sbuf t = o->wbuf;
	o->wbuf = o->buf;
	o->buf = t;
	sbuf_reset(&o->buf);
	o->full = 1;
	o->broken = o->err != NULL;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

/* Ends the file: the rest written, renamed to its path when ok and every
 * write went well, else removed.  0, or -1 with *err. */
static int out_close(struct out *o, int ok, char **err)
{
	if (o->thread_on) {
		pthread_mutex_lock(&o->mu);
		o->done = 1;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
		pthread_join(o->thread, NULL);
		pthread_mutex_destroy(&o->mu);
		pthread_cond_destroy(&o->cv);
	}
	if (ok && !o->err)
		out_text(o, &o->buf, 1, &o->err);
	int rc = ok && !o->err ? 0 : -1;
	if (o->f_on && outfile_close(&o->f, rc == 0, &o->err) < 0)
		rc = -1;
	if (ok && rc < 0) {
		*err = o->err;
		o->err = NULL;
	}
	if (o->z_on)
		deflateEnd(&o->z);
	free(o->zbuf);
	free(o->err);
	sbuf_release(&o->buf);
	sbuf_release(&o->wbuf);
	return rc;
}

/* ---- JSON text ---- */

/* Appends n bytes to b: inline while b has room, as it mostly has. */
static inline void put_mem(struct sbuf *b, const void *p, size_t n)
{
	if (b->len + n < b->alloc) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
		b->buf[b->len] = '\0';
	} else {
		sbuf_add(b, p, n);
	}
}

static inline void put_c(struct sbuf *b, char c)
{
	put_mem(b, &c, 1);
}

#define PUT_LIT(b, lit) put_mem((b), (lit), sizeof(lit) - 1)

static void put_u64(struct sbuf *b, uint64_t v)
{
	char t[24];
	size_t i = sizeof(t);
	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(b, t + i, sizeof(t) - i);
}

static void put_i64(struct sbuf *b, int64_t v)
{
	if (v < 0) {
		put_c(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

/* ns as microseconds, with the three decimals of its nanoseconds when it
 * has any: "12", "12.345", "-0.005". */
static void put_us(struct sbuf *b, int64_t ns)
{
	uint64_t m = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		put_c(b, '-');
	put_u64(b, m / 1000);
	unsigned f = (unsigned)(m % 1000);
	if (f) {
		char t[4] = {'.', (char)('0' + f / 100), (char)('0' + f / 10 % 10),
			     (char)('0' + f % 10)};
		put_mem(b, t, sizeof(t));
	}
}

/* s as a JSON string literal, invalid UTF-8 (and NUL) repaired first. */
static void put_text(struct sbuf *b, const char *s, size_t n, struct sbuf *tmp)
{
	if (text_utf8_valid(s, n)) {
		sbuf_add_json_string(b, s, n);
		return;
	}
	sbuf_reset(tmp);
	text_utf8_repair(tmp, s, n);
	sbuf_add_json_string(b, tmp->buf, tmp->len);
}

/* A copy of a JSON value (attrs as trace.db keeps them) that any reader
 * takes: strings re-escaped (control characters, invalid UTF-8 and lone
 * surrogates repaired), no blanks; -1 where the text is no JSON. */
struct jin {
	const unsigned char *s;
	size_t n, i;
};

static void j_blank(struct jin *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' ||
			       j->s[j->i] == '\r'))
		j->i++;
}

static int j_hex4(const struct jin *j, size_t at, unsigned *v)
{
	*v = 0;
	if (at + 4 > j->n)
		return -1;
	for (size_t k = at; k < at + 4; k++) {
		unsigned c = j->s[k], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

static int j_string(struct jin *j, struct sbuf *out)
{
	static const char hex[] = "0123456789abcdef";
	j->i++;
	put_c(out, '"');
	for (;;) {
		size_t run = j->i;
		while (j->i < j->n) {
			unsigned char c = j->s[j->i];
			if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f)
				break;
			j->i++;
		}
		put_mem(out, j->s + run, j->i - run);
		if (j->i >= j->n)
			return -1;
		unsigned char c = j->s[j->i];
		if (c == '"') {
			j->i++;
			put_c(out, '"');
			return 0;
		}
		if (c >= 0x7f) {
			size_t k = c == 0x7f ? 1 : text_utf8_seq(j->s + j->i, j->n - j->i);
			if (k) {
				put_mem(out, j->s + j->i, k);
				j->i += k;
			} else {
				PUT_LIT(out, "\xef\xbf\xbd"); /* U+FFFD */
				j->i++;
			}
			continue;
		}
		if (c < 0x20) {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put_mem(out, u, sizeof(u));
			j->i++;
			continue;
		}
		if (j->i + 1 >= j->n)
			return -1;
		unsigned char e = j->s[j->i + 1];
		if (e && strchr("\"\\/bfnrt", e)) {
			put_mem(out, j->s + j->i, 2);
			j->i += 2;
			continue;
		}
		unsigned v, w;
		if (e != 'u' || j_hex4(j, j->i + 2, &v) < 0)
			return -1;
		if (v >= 0xd800 && v < 0xdc00 && j->i + 12 <= j->n && j->s[j->i + 6] == '\\' &&
		    j->s[j->i + 7] == 'u' && !j_hex4(j, j->i + 8, &w) && w >= 0xdc00 &&
		    w < 0xe000) {
			put_mem(out, j->s + j->i, 12);
			j->i += 12;
		} else {
			if (v >= 0xd800 && v < 0xe000) /* a lone surrogate */
				PUT_LIT(out, "\\ufffd");
			else
				put_mem(out, j->s + j->i, 6);
			j->i += 6;
		}
	}
}

static int j_digits(struct jin *j)
{
	size_t a = j->i;
	while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
		j->i++;
	return j->i > a ? 0 : -1;
}

static int j_number(struct jin *j, struct sbuf *out)
{
	size_t a = j->i;
	if (j->i < j->n && j->s[j->i] == '-')
		j->i++;
	if (j->i < j->n && j->s[j->i] == '0')
		j->i++;
	else if (j_digits(j) < 0)
		return -1;
	if (j->i < j->n && j->s[j->i] == '.' && (j->i++, j_digits(j) < 0))
		return -1;
	if (j->i < j->n && (j->s[j->i] | 0x20) == 'e') {
		j->i++;
		if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
			j->i++;
		if (j_digits(j) < 0)
			return -1;
	}
	put_mem(out, j->s + a, j->i - a);
	return 0;
}

static int j_object(struct jin *j, struct sbuf *out, int depth, const char *drop,
		    const char *extra);

static int j_value(struct jin *j, struct sbuf *out, int depth)
{
	static const char *const words[] = {"true", "false", "null"};
	j_blank(j);
	if (j->i >= j->n || depth > ARGS_DEPTH)
		return -1;
	unsigned char c = j->s[j->i];
	if (c == '{')
		return j_object(j, out, depth + 1, NULL, NULL);
	if (c == '"')
		return j_string(j, out);
	if (c == '[') {
		j->i++;
		put_c(out, '[');
		j_blank(j);
		if (j->i < j->n && j->s[j->i] == ']') {
			j->i++;
			put_c(out, ']');
			return 0;
		}
		for (;;) {
			if (j_value(j, out, depth + 1) < 0)
				return -1;
			j_blank(j);
			if (j->i >= j->n)
				return -1;
			c = j->s[j->i++];
			put_c(out, (char)c);
			if (c == ']')
				return 0;
			if (c != ',')
				return -1;
		}
	}
	for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++) {
		size_t k = strlen(words[w]);
		if (c == words[w][0] && j->n - j->i >= k && !memcmp(j->s + j->i, words[w], k)) {
			put_mem(out, words[w], k);
			j->i += k;
			return 0;
		}
	}
	return j_number(j, out);
}

/* An object at j; its member named drop (as written) left out, and the
 * members text extra (NULL: none) added at its end. */
static int j_object(struct jin *j, struct sbuf *out, int depth, const char *drop, const char *extra)
{
	int first = 1;
	j->i++;
	put_c(out, '{');
	j_blank(j);
	if (j->i < j->n && j->s[j->i] == '}')
		j->i++;
	else
		for (;;) {
			size_t mark = out->len;
			j_blank(j);
			if (j->i >= j->n || j->s[j->i] != '"')
				return -1;
			if (!first)
				put_c(out, ',');
			size_t key = out->len;
			if (j_string(j, out) < 0)
				return -1;
			int dropped = drop && out->len - key - 2 == strlen(drop) &&
				      !memcmp(out->buf + key + 1, drop, out->len - key - 2);
			j_blank(j);
			if (j->i >= j->n || j->s[j->i++] != ':')
				return -1;
			put_c(out, ':');
			if (j_value(j, out, depth) < 0)
				return -1;
			if (dropped) {
				out->len = mark;
				out->buf[mark] = '\0';
			} else {
				first = 0;
			}
			j_blank(j);
			if (j->i >= j->n)
				return -1;
			unsigned char c = j->s[j->i++];
			if (c == '}')
				break;
			if (c != ',')
				return -1;
		}
	if (extra) {
		if (!first)
			put_c(out, ',');
		sbuf_adds(out, extra);
	}
	put_c(out, '}');
	return 0;
}

/* attrs (n bytes, NULL: none) as an args object, less its member drop,
 * with the members extra added; attrs that are no JSON object are kept
 * whole as the string member "attrs". */
static void put_args(struct sbuf *out, const char *attrs, size_t n, const char *drop,
		     const char *extra, struct sbuf *tmp)
{
	size_t mark = out->len;
	if (!attrs) {
		sbuf_addf(out, "{%s}", extra ? extra : "");
		return;
	}
	struct jin j = {(const unsigned char *)attrs, n, 0};
	j_blank(&j);
	if (j.i < j.n && j.s[j.i] == '{' && j_object(&j, out, 0, drop, extra) == 0) {
		j_blank(&j);
		if (j.i == j.n)
			return;
	}
	out->len = mark;
	out->buf[mark] = '\0';
	PUT_LIT(out, "{\"attrs\":");
	put_text(out, attrs, n, tmp);
	if (extra)
		sbuf_addf(out, ",%s", extra);
	put_c(out, '}');
}

/* ---- the export ---- */

struct flow_end {
	int64_t edge;
	int kind, dir; /* dir 0: the edge leaves the phase ("s"), 1: it arrives ("f") */
	int64_t from;  /* an arriving edge's source's start: its "f" must not come before */
};

/* A phase open on a lane.  Its moments that none of its children covers
 * are where a reader binds a flow end to it: the first and the last of
 * them are kept. */
struct frame {
	int64_t id, start;
	int64_t nest;	  /* what starts from here on is no longer inside it: its end, or
			     its parent's nest when that comes first (as the import nests) */
	int64_t first;	  /* its first free moment (none: >= nest) */
	int64_t covered;  /* the end of its children so far */
	int64_t last_gap; /* the last free moment before covered (none: < start) */
	size_t ends;	  /* its flow ends: the lane's from this index to the next frame's */
};

struct lane {
	struct frame *f;
	size_t nf, af;
	struct flow_end *e;
	size_t ne, ae;
	int64_t frontier; /* the latest nest of what it has held */
	int64_t tid;
};

struct xtrack {
	char *name;
	size_t proc;
	struct lane *lanes;
	size_t nlanes;
};

struct xproc {
	char *host;   /* NULL: none */
	int64_t rank; /* -1: none */
	int written;  /* its metadata is out */
};

struct name_slot {
	int64_t id; /* 0: empty */
	char *json;
	size_t len;
};

struct exp {
	struct store *st;
	sqlite3 *db;
	const char *dbpath;
	int64_t root, base;
	struct out o;
	struct sbuf tmp, args;
	int first;
	/* the subtree: a bit per phase id (root 0: every phase) */
	uint64_t *member;
	size_t nmember;
	int64_t member_lo, member_hi;
	/* what the file's small tables say */
	struct xtrack *tracks; /* [0]: the phases without a track */
	size_t ntracks;
	struct idmap track_of; /* tracks.id -> index */
	struct idmap nodes;    /* the phase ids of tracks' nodes */
	struct idmap chrome;   /* ids of sources in Chrome trace format */
	struct xproc *procs;   /* [0]: the workflow's */
	size_t nprocs;
	int64_t next_tid;
	struct idmap lane_of; /* phases on a lane past their track's first */
	int64_t lo, hi;	      /* the window of the phases written */
	struct name_slot *names;
	sqlite3_stmt *name_q;
	struct export_stats *stats;
	char **err;
	int failed;
};

static int db_fail(struct exp *x, const char *what)
{
	if (!x->failed)
		*x->err =
		    xasprintf("%s: cannot read %s: %s", x->dbpath, what, sqlite3_errmsg(x->db));
	x->failed = 1;
	return -1;
}

static sqlite3_stmt *prepare(struct exp *x, const char *sql, const char *what)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(x->db, sql, -1, &q, NULL) != SQLITE_OK) {
		db_fail(x, what);
		return NULL;
	}
	return q;
}

static int is_member(const struct exp *x, int64_t id)
{
	if (!x->root)
		return 1;
	uint64_t w = (uint64_t)id >> 6;
	return id >= 0 && w < x->nmember && (x->member[w] >> (id & 63) & 1);
}

static int32_t member_visit(void *arg, const struct subtree_row *r, int32_t parent)
{
	struct exp *x = arg;
	if (r->id < 0)
		return 0;
	size_t w = (size_t)((uint64_t)r->id >> 6);
	if (w >= x->nmember) {
		size_t n = x->nmember ? x->nmember : 1024;
		while (n <= w)
			n *= 2;
		x->member = xrealloc(x->member, n * sizeof(*x->member));
		memset(x->member + x->nmember, 0, (n - x->nmember) * sizeof(*x->member));
		x->nmember = n;
	}
	x->member[w] |= (uint64_t)1 << (r->id & 63);
	x->member_lo = r->id < x->member_lo ? r->id : x->member_lo;
	x->member_hi = r->id > x->member_hi ? r->id : x->member_hi;
	return 0;
}

static void member_restart(void *arg)
{
	struct exp *x = arg;
	if (x->member)
		memset(x->member, 0, x->nmember * sizeof(*x->member));
	x->member_lo = INT64_MAX;
	x->member_hi = INT64_MIN;
}

/* Phases that a process or a thread stands for, not an event of theirs. */
static int is_written(const struct exp *x, int64_t id, int kind)
{
	if (kind == PHASE_RANK || kind == PHASE_PROCESS || kind == PHASE_THREAD ||
	    kind == PHASE_STREAM)
		return 0;
	return is_member(x, id) && idmap_get(&x->nodes, id) < 0;
}

/* The escaped string literal of strings row id ("?" for none). */
static const char *name_json(struct exp *x, int64_t id, size_t *len)
{
	struct name_slot *s = &x->names[(uint64_t)id % NAME_CACHE];
	if (s->id == id && id) {
		*len = s->len;
		return s->json;
	}
	sqlite3_bind_int64(x->name_q, 1, id);
	sbuf_reset(&x->args);
	int rc = sqlite3_step(x->name_q);
	const char *text = rc == SQLITE_ROW ? col_text_or_null(x->name_q, 0) : NULL;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		db_fail(x, "strings");
	if (text)
		put_text(&x->args, text, col_bytes(x->name_q, 0), &x->tmp);
	else
		PUT_LIT(&x->args, "\"?\"");
	sqlite3_reset(x->name_q);
	*len = x->args.len;
	if (x->args.len > NAME_CACHE_MAX)
		return x->args.buf;
	free(s->json);
	s->json = xstrndup(x->args.buf, x->args.len);
	s->len = x->args.len;
	s->id = id;
	return s->json;
}

static void put_name(struct exp *x, int64_t id)
{
	size_t n;
	const char *s = name_json(x, id, &n);
	put_mem(&x->o.buf, s, n);
}

/* Starts an event: {"ph":"P","ts":T with T relative to the base; 0 when
 * t is too far from it to write (the event is left out). */
static int ev_begin(struct exp *x, char ph, int64_t t)
{
	int64_t rel;
	if (__builtin_sub_overflow(t, x->base, &rel))
		return 0;
	out_maybe_flush(&x->o);
	struct sbuf *b = &x->o.buf;
	if (x->first)
		PUT_LIT(b, "\n{\"ph\":\"");
	else
		PUT_LIT(b, ",\n{\"ph\":\"");
	x->first = 0;
	put_c(b, ph);
	PUT_LIT(b, "\",\"ts\":");
	put_us(b, rel);
	return 1;
}

/* key (a literal) and the number v. */
#define PUT_KEY_INT(b, key, v) (PUT_LIT(b, key), put_i64(b, v))

static int64_t proc_pid(size_t proc)
{
	return (int64_t)proc + 1;
}

static void proc_write(struct exp *x, size_t i)
{
	struct xproc *p = &x->procs[i];
	if (p->written)
		return;
	p->written = 1;
	struct sbuf name = SBUF_INIT;
	sbuf_init(&name);
	if (!i)
		PUT_LIT(&name, "workflow");
	else if (p->host)
		sbuf_adds(&name, p->host);
	else if (p->rank < 0)
		PUT_LIT(&name, "unknown host");
	if (i && p->rank >= 0)
		sbuf_addf(&name, "%srank %lld", name.len ? " " : "", (long long)p->rank);
	struct sbuf *b = &x->o.buf;
	ev_begin(x, 'M', x->base);
	PUT_KEY_INT(b, ",\"pid\":", proc_pid(i));
	PUT_LIT(b, ",\"name\":\"process_name\",\"args\":{\"name\":");
	put_text(b, name.buf, name.len, &x->tmp);
	PUT_LIT(b, "}}");
	ev_begin(x, 'M', x->base);
	PUT_KEY_INT(b, ",\"pid\":", proc_pid(i));
	PUT_KEY_INT(b, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":", proc_pid(i));
	PUT_LIT(b, "}}");
	sbuf_release(&name);
}

/* A new lane of track t, its thread named (and its process) in the file. */
static struct lane *lane_new(struct exp *x, struct xtrack *t)
{
	t->lanes = xrealloc(t->lanes, (t->nlanes + 1) * sizeof(*t->lanes));
	struct lane *l = &t->lanes[t->nlanes++];
	memset(l, 0, sizeof(*l));
	l->frontier = INT64_MIN;
	l->tid = x->next_tid++;
	proc_write(x, t->proc);
	struct sbuf *b = &x->o.buf;
	ev_begin(x, 'M', x->base);
	PUT_KEY_INT(b, ",\"pid\":", proc_pid(t->proc));
	PUT_KEY_INT(b, ",\"tid\":", l->tid);
	PUT_LIT(b, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	sbuf_reset(&x->args);
	sbuf_adds(&x->args, t->name);
	if (t->nlanes > 1)
		sbuf_addf(&x->args, " (%zu)", t->nlanes);
	put_text(b, x->args.buf, x->args.len, &x->tmp);
	PUT_LIT(b, "}}");
	return l;
}

static const char *flow_cat(int kind)
{
	return kind == EDGE_LAUNCH   ? "ac2g"
	       : kind == EDGE_FWDBWD ? "fwdbwd"
				     : store_edge_kind_name(kind);
}

static void put_flow(struct exp *x, const struct xtrack *t, const struct lane *l,
		     const struct flow_end *e, int64_t at)
{
	if (!ev_begin(x, e->dir ? 'f' : 's', at))
		return;
	struct sbuf *b = &x->o.buf;
	const char *cat = flow_cat(e->kind);
	PUT_KEY_INT(b, ",\"pid\":", proc_pid(t->proc));
	PUT_KEY_INT(b, ",\"tid\":", l->tid);
	PUT_KEY_INT(b, ",\"id\":", e->edge);
	PUT_LIT(b, ",\"cat\":\"");
	put_mem(b, cat, strlen(cat));
	PUT_LIT(b, "\",\"name\":\"");
	put_mem(b, cat, strlen(cat));
	if (e->dir)
		PUT_LIT(b, "\",\"bp\":\"e\"}");
	else
		PUT_LIT(b, "\"}");
	if (!e->dir && x->stats)
		x->stats->flows++;
}

/* Closes the lane's innermost phase, writing its flow ends: an edge's
 * start at the phase's first free moment, an end there too unless that
 * comes before the edge's source starts (a device's clock a little off
 * the host's), then at its last free moment. */
static void frame_pop(struct exp *x, const struct xtrack *t, struct lane *l)
{
	struct frame *f = &l->f[--l->nf];
	int64_t last = f->covered < f->nest ? f->nest - 1 : f->last_gap;
	for (size_t k = f->ends; k < l->ne; k++) {
		const struct flow_end *e = &l->e[k];
		int64_t at = f->first;
		if (e->dir && (at >= f->nest || at < e->from) && last >= f->start)
			at = last;
		if (at >= f->nest || at < f->start) {
			at = f->start;
			if (x->stats)
				x->stats->unbound++;
		}
		put_flow(x, t, l, e, at);
	}
	l->ne = f->ends;
}

static void frame_push(struct lane *l, int64_t id, int64_t start, int64_t nest)
{
	if (l->nf && start < nest) {
		struct frame *p = &l->f[l->nf - 1];
		if (start <= p->first && nest > p->first)
			p->first = nest;
		if (start > p->covered)
			p->last_gap = start - 1;
		if (nest > p->covered)
			p->covered = nest;
	}
	XGROW(l->f, l->nf + 1, l->af);
	l->f[l->nf++] = (struct frame){id, start, nest, start, start, INT64_MIN, l->ne};
	if (nest > l->frontier)
		l->frontier = nest;
}

/* Puts a phase on a lane of t: its parent's, when the parent is open there
 * and what opened after it has closed (so the phase nests in the parent
 * as the import nested it; one that ends after its parent only where the
 * import nested it so by time, cross); else the first lane where it
 * overlaps nothing, a new one when none. */
static size_t lane_place(struct exp *x, struct xtrack *t, int64_t id, int64_t parent, int64_t start,
			 int64_t end, int cross)
{
	for (size_t li = 0; parent && li < t->nlanes; li++) {
		struct lane *l = &t->lanes[li];
		size_t k = l->nf;
		while (k > 0 && l->f[k - 1].id != parent)
			k--;
		if (!k)
			continue;
		int fits = start >= l->f[k - 1].start && (cross || end <= l->f[k - 1].nest);
		for (size_t a = k; a < l->nf && fits; a++)
			fits = l->f[a].nest <= start;
		if (!fits)
			break;
		while (l->nf > k)
			frame_pop(x, t, l);
		frame_push(l, id, start, end < l->f[k - 1].nest ? end : l->f[k - 1].nest);
		return li;
	}
	for (size_t li = 0; li < t->nlanes; li++) {
		struct lane *l = &t->lanes[li];
		while (l->nf && l->f[l->nf - 1].nest <= start)
			frame_pop(x, t, l);
		if (!l->nf && l->frontier <= start) {
			frame_push(l, id, start, end);
			return li;
		}
	}
	if (t->nlanes < LANES_MAX)
		lane_new(x, t);
	frame_push(&t->lanes[t->nlanes - 1], id, start, end);
	return t->nlanes - 1;
}

static struct xtrack *track_for(struct exp *x, int64_t track_id, int kind)
{
	if (kind == PHASE_WORKFLOW || kind == PHASE_STEP || !track_id)
		return &x->tracks[0];
	int32_t i = idmap_get(&x->track_of, track_id);
	return &x->tracks[i < 0 ? 0 : i];
}

/* The edges of the phases in id order from one end (src or dst): a cursor
 * that the phase pass moves along. */
struct ecur {
	sqlite3_stmt *q;
	int dir, has;
	int64_t at, edge, kind, other, other_kind, other_start;
};

static int ecur_step(struct exp *x, struct ecur *c)
{
	int rc = sqlite3_step(c->q);
	c->has = rc == SQLITE_ROW;
	if (rc == SQLITE_ROW) {
		c->at = col_int(c->q, 0);
		c->edge = col_int(c->q, 1);
		c->kind = col_int(c->q, 2);
		c->other = col_int(c->q, 3);
		c->other_kind = col_int(c->q, 4);
		c->other_start = col_int(c->q, 5);
		return 0;
	}
	return rc == SQLITE_DONE ? 0 : db_fail(x, "edges");
}

static int ecur_open(struct exp *x, struct ecur *c, int dir, int64_t from)
{
	/* CROSS JOIN: the edges' index in the order the phases come */
	static const char *const sql[] = {
	    "SELECT e.src, e.rowid, e.kind, e.dst, p.kind, p.start_ns FROM edges e CROSS JOIN"
	    " phases p ON p.id = e.dst WHERE e.src >= ?1 ORDER BY e.src",
	    "SELECT e.dst, e.rowid, e.kind, e.src, p.kind, p.start_ns FROM edges e CROSS JOIN"
	    " phases p ON p.id = e.src WHERE e.dst >= ?1 ORDER BY e.dst",
	};
	c->dir = dir;
	if (!(c->q = prepare(x, sql[dir], "edges")))
		return -1;
	sqlite3_bind_int64(c->q, 1, from);
	return ecur_step(x, c);
}

/* Moves c to phase id and adds its edges whose other end is written too
 * to the ends of lane l. */
static int ecur_take(struct exp *x, struct ecur *c, int64_t id, struct lane *l)
{
	while (c->has && c->at < id)
		if (ecur_step(x, c) < 0)
			return -1;
	for (; c->has && c->at == id; ecur_step(x, c)) {
		if (c->other == id || !is_written(x, c->other, (int)c->other_kind))
			continue;
		XGROW(l->e, l->ne + 1, l->ae);
		l->e[l->ne++] = (struct flow_end){c->edge, (int)c->kind, c->dir, c->other_start};
	}
	return x->failed ? -1 : 0;
}

/* Categories that the Chrome import maps back to each kind; a kind not
 * here is written under its own name (and reads back as an operator). */
static const char *const kind_cats[PHASE_KIND_COUNT] = {
    [PHASE_PROFILER_STEP] = "cpu_op",
    [PHASE_OPERATOR] = "cpu_op",
    [PHASE_ANNOTATION] = "user_annotation",
    [PHASE_RUNTIME] = "cuda_runtime",
    [PHASE_KERNEL] = "kernel",
    [PHASE_MEMCPY] = "gpu_memcpy",
    [PHASE_MEMSET] = "gpu_memset",
    [PHASE_GPU_ANNOTATION] = "gpu_user_annotation",
    [PHASE_SPAN] = "trace",
};

static int is_device_work(int kind)
{
	return kind == PHASE_KERNEL || kind == PHASE_MEMCPY || kind == PHASE_MEMSET;
}

enum {
	PQ_ID,
	PQ_PARENT,
	PQ_KIND,
	PQ_NAME,
	PQ_CAT,
	PQ_TRACK,
	PQ_SOURCE,
	PQ_START,
	PQ_DUR,
	PQ_ATTRS,
	PQ_PARENT_KIND
};

static void put_phase(struct exp *x, sqlite3_stmt *q, const struct xtrack *t, const struct lane *l)
{
	int64_t id = col_int(q, PQ_ID), dur = col_int(q, PQ_DUR);
	int kind = col_int32(q, PQ_KIND);
	if (!ev_begin(x, 'X', col_int(q, PQ_START)))
		return;
	struct sbuf *b = &x->o.buf;
	PUT_LIT(b, ",\"dur\":");
	put_us(b, dur > 0 ? dur : 0);
	PUT_KEY_INT(b, ",\"pid\":", proc_pid(t->proc));
	PUT_KEY_INT(b, ",\"tid\":", l->tid);
	PUT_LIT(b, ",\"name\":");
	put_name(x, col_int(q, PQ_NAME));
	int64_t cat = col_int(q, PQ_CAT);
	if (idmap_get(&x->chrome, col_int(q, PQ_SOURCE)) < 0) {
		const char *c = kind > 0 && kind < PHASE_KIND_COUNT && kind_cats[kind]
				    ? kind_cats[kind]
				    : store_kind_name(kind);
		sbuf_addf(b, ",\"cat\":\"%s\"", c);
	} else if (cat) {
		PUT_LIT(b, ",\"cat\":");
		put_name(x, cat);
	}
	/* correlation ids: a runtime call's is its own id, its device work's
	 * the call's, so that a reader links them and nothing else */
	char extra[48];
	const char *drop = NULL, *add = NULL;
	if (kind == PHASE_RUNTIME || is_device_work(kind)) {
		int launched =
		    is_device_work(kind) && col_int32(q, PQ_PARENT_KIND) == PHASE_RUNTIME;
		drop = "correlation";
		if (kind == PHASE_RUNTIME || launched) {
			snprintf(extra, sizeof(extra), "\"correlation\":%lld",
				 (long long)(launched ? col_int(q, PQ_PARENT) : id));
			add = extra;
		}
	}
	const char *attrs = col_text_or_null(q, PQ_ATTRS);
	if (attrs || add) {
		PUT_LIT(b, ",\"args\":");
		put_args(b, attrs, col_bytes(q, PQ_ATTRS), drop, add, &x->tmp);
	}
	put_c(b, '}');
	if (x->stats)
		x->stats->phases++;
}

static int phase_pass(struct exp *x)
{
	struct ecur by[2] = {{0}};
	int rc = -1;
	sqlite3_stmt *q = prepare(
	    x,
	    "SELECT p.id, p.parent_id, p.kind, p.name_id, p.cat_id, p.track_id, p.source_id,"
	    " p.start_ns, p.dur_ns, p.attrs, CASE WHEN p.kind IN (?2, ?3, ?4) THEN"
	    " (SELECT q.kind FROM phases q WHERE q.id = p.parent_id) END"
	    " FROM phases p WHERE p.id >= ?1 ORDER BY p.id",
	    "phases");
	int64_t from = x->root ? x->member_lo : INT64_MIN;
	if (!q || ecur_open(x, &by[0], 0, from) < 0 || ecur_open(x, &by[1], 1, from) < 0)
		goto out;
	sqlite3_bind_int64(q, 1, from);
	sqlite3_bind_int(q, 2, PHASE_KERNEL);
	sqlite3_bind_int(q, 3, PHASE_MEMCPY);
	sqlite3_bind_int(q, 4, PHASE_MEMSET);
	int step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = col_int(q, PQ_ID);
		if ((x->root && id > x->member_hi) || x->o.broken || x->failed)
			break;
		int kind = col_int32(q, PQ_KIND);
		/* the profiler's bookkeeping without a track is a process node */
		if (!is_written(x, id, kind) ||
		    (store_is_bookkeeping(kind) && !col_int(q, PQ_TRACK)))
			continue;
		int64_t start = col_int(q, PQ_START), dur = col_int(q, PQ_DUR);
		int64_t end = ns_end(start, dur > 0 ? dur : 0);
		struct xtrack *t = track_for(x, col_int(q, PQ_TRACK), kind);
		int chrome = idmap_get(&x->chrome, col_int(q, PQ_SOURCE)) >= 0;
		size_t li = lane_place(x, t, id, col_int(q, PQ_PARENT), start, end, chrome);
		struct lane *l = &t->lanes[li];
		if (ecur_take(x, &by[0], id, l) < 0 || ecur_take(x, &by[1], id, l) < 0)
			goto out;
		if (li)
			idmap_put(&x->lane_of, id, (int32_t)li);
		x->lo = start < x->lo ? start : x->lo;
		x->hi = end > x->hi ? end : x->hi;
		put_phase(x, q, t, l);
	}
	if ((step != SQLITE_ROW && step != SQLITE_DONE) || x->failed) {
		db_fail(x, "phases");
		goto out;
	}
	for (size_t i = 0; i < x->ntracks; i++)
		for (size_t li = 0; li < x->tracks[i].nlanes; li++)
			while (x->tracks[i].lanes[li].nf)
				frame_pop(x, &x->tracks[i], &x->tracks[i].lanes[li]);
	rc = 0;
out:
	sqlite3_finalize(q);
	sqlite3_finalize(by[0].q);
	sqlite3_finalize(by[1].q);
	return rc;
}

/* Instants, on the lane of the phase they are bound to. */
static int event_pass(struct exp *x)
{
	sqlite3_stmt *q =
	    prepare(x,
		    "SELECT e.t_ns, e.name_id, e.level, e.phase_id, e.attrs,"
		    " CASE WHEN e.track_id IS NULL THEN (SELECT q.track_id FROM phases q"
		    " WHERE q.id = e.phase_id) ELSE e.track_id END,"
		    " CASE WHEN e.track_id IS NULL THEN (SELECT q.kind FROM phases q"
		    " WHERE q.id = e.phase_id) END FROM events e ORDER BY e.id",
		    "events");
	if (!q)
		return -1;
	int step = SQLITE_DONE;
	while (!x->o.broken && !x->failed && (step = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t phase = col_int(q, 3);
		if (x->root && (!phase || !is_member(x, phase)))
			continue;
		struct xtrack *t = track_for(x, col_int(q, 5), col_int32(q, 6));
		int32_t li = phase && x->lane_of.used ? idmap_get(&x->lane_of, phase) : 0;
		if (!t->nlanes)
			lane_new(x, t);
		struct lane *l = &t->lanes[li > 0 && (size_t)li < t->nlanes ? li : 0];
		if (!ev_begin(x, 'i', col_int(q, 0)))
			continue;
		struct sbuf *b = &x->o.buf;
		PUT_KEY_INT(b, ",\"pid\":", proc_pid(t->proc));
		PUT_KEY_INT(b, ",\"tid\":", l->tid);
		PUT_LIT(b, ",\"s\":\"t\",\"name\":");
		put_name(x, col_int(q, 1));
		const char *level = col_text_or_null(q, 2);
		const char *attrs = col_text_or_null(q, 4);
		char *extra = NULL;
		if (level) {
			struct sbuf lv = SBUF_INIT;
			sbuf_init(&lv);
			PUT_LIT(&lv, "\"level\":");
			put_text(&lv, level, strlen(level), &x->tmp);
			extra = sbuf_detach(&lv);
		}
		if (attrs || extra) {
			PUT_LIT(b, ",\"args\":");
			put_args(b, attrs, col_bytes(q, 4), extra ? "level" : NULL, extra, &x->tmp);
		}
		free(extra);
		put_c(b, '}');
		if (x->stats)
			x->stats->instants++;
	}
	sqlite3_finalize(q);
	return (step == SQLITE_DONE || x->o.broken) && !x->failed ? 0 : db_fail(x, "events");
}

static size_t proc_find(const struct exp *x, const char *host, int64_t rank)
{
	for (size_t i = 1; i < x->nprocs; i++)
		if (x->procs[i].rank == rank &&
		    (host ? x->procs[i].host && !strcmp(host, x->procs[i].host)
			  : !x->procs[i].host))
			return i;
	return 0;
}

/* A metric's samples as one counter of its host's process, named after
 * its resource, name and unit ("gpu0 utilization.gpu (%)"), with " #2"
 * and on where that name is taken in the process. */
static int counter_pass(struct exp *x)
{
	sqlite3_stmt *m =
	    prepare(x, "SELECT id, host, resource, name, unit FROM metrics ORDER BY id", "metrics");
	sqlite3_stmt *s = prepare(x,
				  "SELECT t_ns, value FROM samples WHERE metric_id = ?1"
				  " AND t_ns BETWEEN ?2 AND ?3 ORDER BY t_ns",
				  "samples");
	struct strmap taken = STRMAP_INIT;
	struct sbuf name = SBUF_INIT, key = SBUF_INIT, lit = SBUF_INIT;
	sbuf_init(&name);
	sbuf_init(&key);
	sbuf_init(&lit);
	int rc = -1, step = SQLITE_DONE;
	while (m && s && !x->o.broken && (step = sqlite3_step(m)) == SQLITE_ROW) {
		const char *host = col_text_or_null(m, 1);
		const char *res = col_text_or_null(m, 2);
		const char *mn = col_text_or_null(m, 3);
		const char *unit = col_text_or_null(m, 4);
		size_t proc = proc_find(x, host, -1);
		if (x->root) {
			/* a subtree's: the series of the hosts its phases ran on */
			int ran = 0;
			for (size_t i = 1; host && i < x->nprocs && !ran; i++)
				ran = x->procs[i].written && x->procs[i].host &&
				      !strcmp(x->procs[i].host, host);
			if (!ran)
				continue;
		}
		sbuf_reset(&name);
		if (res && *res && strncmp(mn ? mn : "", res, strlen(res)))
			sbuf_addf(&name, "%s ", res);
		sbuf_adds(&name, mn ? mn : "?");
		if (unit && *unit)
			sbuf_addf(&name, " (%s)", unit);
		size_t plain = name.len;
		for (int k = 2;; k++) {
			sbuf_reset(&key);
			sbuf_addf(&key, "%zu\x1f%s", proc, name.buf);
			int created;
			strmap_put(&taken, key.buf, key.len, 0, &created);
			if (created)
				break;
			name.len = plain;
			name.buf[plain] = '\0';
			sbuf_addf(&name, " #%d", k);
		}
		sbuf_reset(&lit);
		put_text(&lit, name.buf, name.len, &x->tmp);
		sqlite3_bind_int64(s, 1, col_int(m, 0));
		sqlite3_bind_int64(s, 2, x->root ? x->lo : INT64_MIN);
		sqlite3_bind_int64(s, 3, x->root ? x->hi : INT64_MAX);
		int ss;
		while ((ss = sqlite3_step(s)) == SQLITE_ROW) {
			double v = col_real(s, 1);
			if (!isfinite(v))
				continue;
			proc_write(x, proc);
			if (!ev_begin(x, 'C', col_int(s, 0)))
				continue;
			struct sbuf *b = &x->o.buf;
			PUT_KEY_INT(b, ",\"pid\":", proc_pid(proc));
			PUT_LIT(b, ",\"name\":");
			put_mem(b, lit.buf, lit.len);
			sbuf_addf(b, ",\"args\":{\"value\":%.17g}}", v);
			if (x->stats)
				x->stats->samples++;
		}
		sqlite3_reset(s);
		if (ss != SQLITE_DONE) {
			db_fail(x, "samples");
			goto out;
		}
	}
	if (step == SQLITE_DONE || x->o.broken)
		rc = 0;
	else if (m && s)
		db_fail(x, "metrics");
out:
	sqlite3_finalize(m);
	sqlite3_finalize(s);
	strmap_clear(&taken);
	sbuf_release(&name);
	sbuf_release(&key);
	sbuf_release(&lit);
	return rc;
}

static int proc_cmp(const void *pa, const void *pb)
{
	const struct xproc *a = pa, *b = pb;
	if (!a->host != !b->host)
		return a->host ? -1 : 1;
	int c = a->host ? strcmp(a->host, b->host) : 0;
	return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* Sources, tracks, their hosts' and ranks' processes, and the hosts of
 * metrics: the small tables, read whole. */
static int load_tables(struct exp *x)
{
	sqlite3_stmt *q = prepare(
	    x, "SELECT host, rank FROM tracks UNION SELECT host, -1 FROM metrics", "tracks");
	if (!q)
		return -1;
	size_t alloc = 0;
	XGROW(x->procs, 1, alloc);
	x->procs[0] = (struct xproc){NULL, -1, 0};
	x->nprocs = 1;
	int step;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		const char *host = col_text_or_null(q, 0);
		int64_t rank = col_null(q, 1) ? -1 : col_int(q, 1);
		if (proc_find(x, host, rank < 0 ? -1 : rank))
			continue;
		XGROW(x->procs, x->nprocs + 1, alloc);
		x->procs[x->nprocs++] =
		    (struct xproc){host ? xstrdup(host) : NULL, rank < 0 ? -1 : rank, 0};
	}
	sqlite3_finalize(q);
	if (step != SQLITE_DONE)
		return db_fail(x, "tracks");
	qsort(x->procs + 1, x->nprocs - 1, sizeof(*x->procs), proc_cmp);
	x->next_tid = (int64_t)x->nprocs + 1;

	if (!(q = prepare(x, "SELECT id, name, host, rank, phase_id FROM tracks ORDER BY id",
			  "tracks")))
		return -1;
	alloc = 0;
	XGROW(x->tracks, 1, alloc);
	memset(&x->tracks[0], 0, sizeof(x->tracks[0]));
	x->tracks[0].name = xstrdup("steps");
	x->ntracks = 1;
	while ((step = sqlite3_step(q)) == SQLITE_ROW) {
		XGROW(x->tracks, x->ntracks + 1, alloc);
		struct xtrack *t = &x->tracks[x->ntracks];
		memset(t, 0, sizeof(*t));
		const char *name = col_text_or_null(q, 1);
		int64_t id = col_int(q, 0);
		t->name = name && *name ? xstrdup(name) : xasprintf("track %lld", (long long)id);
		t->proc = proc_find(x, col_text_or_null(q, 2),
				    col_null(q, 3) || col_int(q, 3) < 0 ? -1 : col_int(q, 3));
		if (!t->proc) {
			free(t->name);
			continue;
		}
		if (!col_null(q, 4))
			idmap_put(&x->nodes, col_int(q, 4), 0);
		idmap_put(&x->track_of, id, (int32_t)x->ntracks++);
	}
	sqlite3_finalize(q);
	if (step != SQLITE_DONE)
		return db_fail(x, "tracks");

	if (!(q = prepare(x, "SELECT id FROM sources WHERE format = 'chrome'", "sources")))
		return -1;
	while ((step = sqlite3_step(q)) == SQLITE_ROW)
		idmap_put(&x->chrome, col_int(q, 0), 1);
	sqlite3_finalize(q);
	return step == SQLITE_DONE ? 0 : db_fail(x, "sources");
}

/* The time the file's times are written from: the whole second at or
 * before the earliest phase (the subtree's root), event or sample. */
static int find_base(struct exp *x)
{
	sqlite3_stmt *q = prepare(
	    x,
	    x->root ? "SELECT start_ns FROM phases WHERE id = ?1"
		    : "SELECT min(t) FROM (SELECT min(start_ns) AS t FROM phases WHERE parent_id"
		      " IS NULL UNION ALL SELECT min(t_ns) FROM events UNION ALL SELECT"
		      " (SELECT min(t_ns) FROM samples WHERE metric_id = m.id) FROM metrics m)",
	    "phases");
	if (!q)
		return -1;
	sqlite3_bind_int64(q, 1, x->root);
	int step = sqlite3_step(q);
	int64_t t = step == SQLITE_ROW ? col_int(q, 0) : 0;
	sqlite3_finalize(q);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return db_fail(x, "phases");
	/* the whole second at or before t, or t when that lies below INT64_MIN */
	int64_t down = t / 1000000000 * 1000000000;
	if (down > t && __builtin_sub_overflow(down, 1000000000, &down))
		down = t;
	x->base = down;
	return 0;
}

static void exp_release(struct exp *x)
{
	for (size_t i = 0; i < x->ntracks; i++) {
		for (size_t l = 0; l < x->tracks[i].nlanes; l++) {
			free(x->tracks[i].lanes[l].f);
			free(x->tracks[i].lanes[l].e);
		}
		free(x->tracks[i].lanes);
		free(x->tracks[i].name);
	}
	free(x->tracks);
	for (size_t i = 0; i < x->nprocs; i++)
		free(x->procs[i].host);
	free(x->procs);
	if (x->names)
		for (size_t i = 0; i < NAME_CACHE; i++)
			free(x->names[i].json);
	free(x->names);
	free(x->member);
	sqlite3_finalize(x->name_q);
	idmap_release(&x->track_of);
	idmap_release(&x->nodes);
	idmap_release(&x->chrome);
	idmap_release(&x->lane_of);
	sbuf_release(&x->tmp);
	sbuf_release(&x->args);
}

int export_chrome(struct store *st, int64_t root_id, const char *path, struct export_stats *stats,
		  char **err)
{
	struct exp x = {.st = st,
			.db = store_db(st),
			.dbpath = store_path(st),
			.root = root_id,
			.first = 1,
			.member_lo = INT64_MAX,
			.member_hi = INT64_MIN,
			.lo = INT64_MAX,
			.hi = INT64_MIN,
			.stats = stats,
			.err = err};
	int rc = -1, opened = 0, txn = 0;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	sbuf_init(&x.tmp);
	sbuf_init(&x.args);
	idmap_init(&x.track_of, 64);
	idmap_init(&x.nodes, 64);
	idmap_init(&x.chrome, 16);
	idmap_init(&x.lane_of, 64);
	x.names = xcalloc(NAME_CACHE, sizeof(*x.names));
	/* one snapshot of the file, whatever an import commits meanwhile */
	if (sqlite3_get_autocommit(x.db)) {
		if (sqlite3_exec(x.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
			db_fail(&x, "the file");
			goto out;
		}
		txn = 1;
	}
	if (root_id) {
		const struct subtree_visitor v = {member_visit, member_restart, &x, SUBTREE_TIMES};
		if (subtree_walk(x.db, x.dbpath, root_id, SUBTREE_DFS_ROWS, &v, err) < 0) {
			x.failed = 1;
			goto out;
		}
	}
	if (!(x.name_q = prepare(&x, "SELECT text FROM strings WHERE id = ?1", "strings")) ||
	    load_tables(&x) < 0 || find_base(&x) < 0)
		goto out;
	struct stat a, b;
	int to_stdout = outfile_is_stdout(path, OUTFILE_DASH);
	if ((to_stdout ? fstat(STDOUT_FILENO, &a) : stat(path, &a)) == 0 &&
	    stat(x.dbpath, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		*err = xasprintf("%s: is the trace.db being exported", path);
		x.failed = 1;
		goto out;
	}
	opened = 1;
	if (out_open(&x.o, path, err) < 0) {
		x.failed = 1;
		goto out;
	}
	PUT_LIT(&x.o.buf, "{\"traceEvents\":[");
	if (phase_pass(&x) < 0 || event_pass(&x) < 0 || counter_pass(&x) < 0)
		goto out;
	PUT_LIT(&x.o.buf, "\n],\"baseTimeNanoseconds\":");
	put_i64(&x.o.buf, x.base);
	PUT_LIT(&x.o.buf, "}\n");
	rc = 0;
out:
	if (opened && out_close(&x.o, rc == 0, err) < 0)
		rc = -1;
	if (txn)
		sqlite3_exec(x.db, "COMMIT", NULL, NULL, NULL);
	exp_release(&x);
	return rc;
}
