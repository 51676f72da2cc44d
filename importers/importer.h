/*
 * The importer interface and the import context shared by all formats.
 *
 * An importer has a name, a sniff function (the first decompressed bytes ->
 * confidence 0..100) and a run function that streams one input into the
 * store.  run is called inside the import transaction; on failure it
 * returns -1 with *err set to a one-line message naming the file and the
 * position, and the caller rolls the whole import back.
 */
#ifndef GRADEML_IMPORTER_H
#define GRADEML_IMPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "importers/input.h"
#include "model/store/store.h"

struct promlive_opts;
struct import_summary;

/* Options of one `grademl-tui import` run, shared by every file in it. */
struct import_opts {
	const char *workflow; /* workflow name; NULL: "workflow" */
	const char *step;     /* step name; NULL: derived per file */
	const char *host;     /* host of the sources; NULL: from the file or unknown */
	int64_t time_offset_ns;
	int has_time_offset;
	int rank; /* with has_rank: the rank of the run's one file (--rank) */
	int has_rank;
	const char *group_step;	   /* step shared by ranked traces of this run */
	size_t arena_bytes;	   /* nest arena; 0: the default */
	const char *rules;	   /* rules file of the "log" format, or NULL */
	const char *hosts_file;	   /* host aliases (importers/hosts.h), or NULL */
	char *const *host_aliases; /* "ALIAS=NAME" each */
	size_t nhost_aliases;
	const struct promlive_opts *prometheus; /* a live pull after the files, or NULL */
	int strict; /* --strict: refuse what Perfetto reads beyond JSON (chrome_json.c) */
	struct import_summary *summary; /* filled when the import commits, or NULL */
};

/* What a committed import added, for the import command's closing line:
 * its sources' counts, and its diagnostics worth a user's attention (the
 * input cut inside an event, device tracks without device work, ranks or
 * windows that do not line up; import.c lists the codes), each with the
 * path of its source.  Text as stored: the caller sanitises it. */
struct import_note {
	char *path, *code, *message, *example; /* example may be NULL */
	int64_t count;
};
struct import_summary {
	int64_t sources, phases, events, samples, diagnostics;
	struct import_note *notes;
	size_t nnotes;
};
void import_summary_release(struct import_summary *s);

struct importer {
	const char *name;
	const char *description;
	int (*sniff)(const unsigned char *buf, size_t len);
	int (*run)(struct input *in, struct store *st, const struct import_opts *o, char **err);
};

/* The registry: every importer, a lookup by name, and content sniffing. */
const struct importer *importer_find(const char *name);
const struct importer *importer_sniff(const unsigned char *buf, size_t len);
const struct importer *const *importer_list(void);

/* Imports the files as one transaction into the store at db_path. */
int import_files(const char *db_path, char *const *paths, size_t npaths, const char *format,
		 const struct import_opts *o, char **err);
/* The same into an open store (a path, or STORE_MEMORY), left open: the
 * transaction is committed, or rolled back on failure. */
int import_to_store(struct store *st, char *const *paths, size_t npaths, const char *format,
		    const struct import_opts *o, char **err);

/* The rank a trace's file name says (its base name, case aside): the word
 * "rank" or "worker", not after "local", then an optional '-' or '_' and
 * 1 to 9 digits ending the word ("rank3", "rank-34.Jul...",
 * "inference_rank_1", "worker0_step_12"; not "num_workers_0", "rank3x",
 * "local_rank0").  1 and *rank when it says one (however often), 0 when
 * none, -1 when it says two different ones (*rank and *other). */
int import_rank_of_name(const char *path, int *rank, int *other);

/* Finds or creates the workflow and step nodes a source hangs under. */
int64_t import_step_node(struct store *st, const struct import_opts *o, const char *step_name,
			 char **err);

#endif
