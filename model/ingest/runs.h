/*
 * Sorted runs of records and their k-way merge: the external sort behind the
 * nest builder's spans and its flow ends, and the correlation-id map's late
 * counts, which may be larger than the memory an import may use.
 *
 * A record is a fixed header followed by whatever its kind says it carries;
 * struct run_kind tells a record's whole length from its header, and how two
 * records compare.  A set of runs lives in one temporary file, each run a
 * stretch of it written from an array of pointers the caller has already
 * sorted, so a set holds one open file however many runs it has.  The merge
 * reads up to RUNS_FANIN runs at once, each through a buffer of its own
 * (RUNS_READ_BUF bytes, allocated for the merge: 4 MiB at most); past that
 * many it first merges the newest into one, in rounds.
 */
#ifndef GRADEML_RUNS_H
#define GRADEML_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RUNS_FANIN    512	/* runs merged at once; more are merged in rounds */
#define RUNS_READ_BUF (8 << 10) /* bytes read ahead for each run in a merge */

struct run_kind {
	size_t head;				  /* bytes of the fixed header */
	size_t (*size)(const void *rec);	  /* the whole record, from its header */
	int (*cmp)(const void *a, const void *b); /* the order: <0, 0, >0 */
};

struct run {
	uint64_t off, bytes; /* where it lies in the set's file */
	uint64_t count;	     /* records */
};

struct runs {
	const struct run_kind *k;
	FILE *f;      /* a temporary file in $TMPDIR (else /tmp), deleted when
		       * closed; made by the first run */
	uint64_t end; /* bytes written to f */
	struct run *v;
	size_t n, alloc;
};

void runs_init(struct runs *s, const struct run_kind *k);

/* Writes recs[0..n) (in order) as a new run of s; -1 with *err set when the
 * temporary file cannot be made or written, and s is then empty. */
int runs_write(struct runs *s, void *const *recs, size_t n, char **err);

/* Takes each record in order; the record is valid until the call returns. */
typedef int (*run_sink)(void *arg, const void *rec);

/* Merges s's runs into one sorted stream handed to sink (the order of
 * records that compare equal is unspecified: make the order total), and
 * empties s, closing its file, error or not.  -1 with *err set when the
 * file fails, or when sink fails (sink sets *err). */
int runs_merge(struct runs *s, run_sink sink, void *arg, char **err);

/* Empties s and frees its memory. */
void runs_release(struct runs *s);

/* Records of one fixed size (k->head) gathered for one sorted pass: a
 * buffer of cap records is sorted and written as a run each time it fills,
 * and run_buffer_merge hands every record to a sink in order, straight from
 * memory when none was written.  Its memory: cap records and a pointer
 * each, allocated when the first record comes, and the merge's buffers. */
struct run_buffer {
	const struct run_kind *k;
	char *v;
	void **order;
	size_t n, cap;
	struct runs runs;
};

void run_buffer_init(struct run_buffer *b, const struct run_kind *k, size_t cap);
/* Room for one more record, to be filled by the caller; NULL with *err set
 * when the full buffer could not be written. */
void *run_buffer_add(struct run_buffer *b, char **err);
/* Hands every record added so far to sink in order, and empties b; -1 with
 * *err set as runs_merge says. */
int run_buffer_merge(struct run_buffer *b, run_sink sink, void *arg, char **err);
/* Frees b's memory and closes its runs. */
void run_buffer_release(struct run_buffer *b);

#endif
