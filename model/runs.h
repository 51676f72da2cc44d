/*
 * Sorted runs of records in temporary files and their k-way merge: the
 * external sort behind the nest builder's spans and its flow ends, and the
 * correlation-id map's late counts, which may be larger than the memory an
 * import may use.
 *
 * A record is a fixed header followed by whatever its kind says it carries;
 * struct run_kind tells a record's whole length from its header, and how two
 * records compare.  A run is written from an array of pointers the caller
 * has already sorted.  Runs are kept with runs_add, which merges every
 * RUNS_FANIN runs of one generation into one run of the next as soon as
 * they exist (so a list holds fewer than RUNS_FANIN runs per generation,
 * and the open files stay bounded however long the input); runs_merge then
 * reads the rest in rounds of at most RUNS_FANIN files.
 */
#ifndef GRADEML_RUNS_H
#define GRADEML_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RUNS_FANIN 64 /* runs merged at once; more are merged in rounds */

struct run_kind {
	size_t head;				  /* bytes of the fixed header */
	size_t (*size)(const void *rec);	  /* the whole record, from its header */
	int (*cmp)(const void *a, const void *b); /* the order: <0, 0, >0 */
};

struct run {
	FILE *f; /* a temporary file in $TMPDIR (else /tmp), deleted when closed;
		  * positioned at its start */
	uint64_t count;
	unsigned gen; /* 0 for a run written from memory, k + 1 for a merge of
		       * RUNS_FANIN runs of generation k */
};

/* Writes recs[0..n) (in order) as a new run in *out; -1 with *err set when
 * the temporary file cannot be made or written. */
int run_write(const struct run_kind *k, void *const *recs, size_t n, struct run *out, char **err);

/* Appends r (generation 0) to the list runs[0..*n) of room *alloc, then
 * merges its last RUNS_FANIN runs into one while they are all of one
 * generation.  -1 with *err set when a merge fails: the runs it was reading
 * are closed and gone from the list, r included; the others stay. */
int runs_add(const struct run_kind *k, struct run **runs, size_t *n, size_t *alloc, struct run r,
	     char **err);

/* Takes each record in order; the record is valid until the call returns. */
typedef int (*run_sink)(void *arg, const void *rec);

/* Merges runs[0..*n) into one sorted stream handed to sink (the order of
 * records that compare equal is unspecified: make the order total), and
 * closes them: *n is 0 on return, error or not.
 * -1 with *err set when a file fails, or when sink fails (sink sets *err). */
int runs_merge(const struct run_kind *k, struct run *runs, size_t *n, run_sink sink, void *arg,
	       char **err);

/* Closes runs[0..n) without reading them. */
void runs_close(struct run *runs, size_t n);

/* Records of one fixed size (k->head) gathered for one sorted pass: a
 * buffer of cap records is sorted and written as a run each time it fills,
 * and run_buffer_merge hands every record to a sink in order, straight from
 * memory when none was written.  Its memory: cap records and a pointer
 * each, allocated when the first record comes. */
struct run_buffer {
	const struct run_kind *k;
	char *v;
	void **order;
	size_t n, cap;
	struct run *runs;
	size_t nruns, runs_alloc;
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
