/*
 * libFuzzer target for hostile rows of trace.db: the input is a list of
 * edits, each written with an UPDATE into one column of one row of a copy of
 * a small valid trace.db, then every reader runs on the copy: the report
 * (text and JSON), the analyses (run and saved, then the report of the saved
 * cache), the summaries, the diff against the valid file, the export, and
 * the explorer headless on keys that open each screen.  Any outcome is fine
 * except a crash, a sanitizer report or a leak, or a failure without a
 * message (a message may quote the file's text, newlines and all: the
 * command line and the explorer show it sanitized, on one line).
 *
 * The valid file is built once per process: a workflow of one step, two
 * ranks of a small generated Kineto capture under it (kernels, a copy, an
 * all-reduce, flows, instants, a counter) and nvidia-smi samples over them,
 * imported and analysed, then copied under the same schema less its NOT
 * NULL, UNIQUE and PRIMARY KEY constraints but INTEGER PRIMARY KEY (WITHOUT
 * ROWID tables become rowid tables), as tests/tools/hostile_db.py loosens
 * one, so that a column may hold anything, as in a file made elsewhere.
 *
 * An input is a sequence of edits of at least four bytes each:
 *	table	one of the file's tables with rows, by name order (byte % n)
 *	column	one of its columns, in declared order (byte % n)
 *	row	one of its rows, in rowid order (byte % n)
 *	kind	what to write (byte % 8), and what it reads after it:
 *		0 NULL; 1 a small integer (1 byte, signed); 2 an integer
 *		(8 bytes, little-endian); 3 a real (8 bytes; NaN reads as
 *		NULL); 4 text and 5 a blob (a length byte % 32, then that many
 *		bytes); 6 the value plus a small integer (1 byte, signed: an id
 *		next to a real one, or pointing nowhere); 7 the same column's
 *		value in another row (1 byte, its row)
 * An edit the file refuses (a UNIQUE or PRIMARY KEY) is skipped.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "importers/importer.h"
#include "model/analysis/analyze.h"
#include "model/store/export.h"
#include "model/store/store.h"
#include "model/util/sbuf.h"
#include "model/view/model.h"
#include "query/exec.h"
#include "query/parse.h"
#include "tui/diffview.h"
#include "tui/headless.h"
#include "tui/report.h"
#include "tui/summ.h"
#include "model/util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EDITS 16
#define T0_NS	  1795350517000000000LL /* the capture's start */

static char dir[64];
static char build_path[128], seed_path[128], work_path[128], out_path[128], keys_path[128];
static unsigned char *seed;
static size_t seed_size;
static FILE *devnull;
static int64_t step_id; /* the step of the two ranks, in the valid file */

struct table {
	char *name;
	char **cols;
	int ncols;
	int64_t rows;
};
static struct table *tables;
static int ntables;

static void remove_dir(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_db: cannot remove %s\n", dir);
	free(cmd);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

/* One rank of a Kineto capture (times in us from the step's start): a
 * profiler step whose three operators each launch device work on stream 7
 * (a GEMM, an all-reduce's NCCL kernel, a device-to-host copy the host then
 * waits for), tied by flows; an instant and a counter.  Rank 1 is slower. */
static void write_rank(const char *path, int rank)
{
	static const char *const ops[][4] = {
	    {"aten::mm", "cudaLaunchKernel", "kernel", "sm80_xmma_gemm_bf16"},
	    {"nccl:all_reduce", "cudaLaunchKernel", "kernel", "ncclKernel_AllReduce_RING_LL_Sum"},
	    {"aten::copy_", "cudaMemcpyAsync", "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)"},
	};
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b,
		  "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"GPU\"}],"
		  "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":%d,\"world_size\":2},"
		  "\"traceEvents\":["
		  "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
		  "\"args\":{\"name\":\"python3\"}},"
		  "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":7,"
		  "\"args\":{\"name\":\"stream 7\"}},"
		  "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\","
		  "\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":%d}",
		  rank, 900 + 400 * rank);
	int s = 15, corr = 100 * (rank + 1);
	for (int i = 0; i < 3; i++, corr++) {
		int kdur = i == 0 ? 120 * (rank + 1) : i == 1 ? 150 : 40, ks = s + 30;
		sbuf_addf(&b,
			  ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,"
			  "\"ts\":%d,\"dur\":60,\"args\":{\"External id\":%d}}"
			  ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"%s\",\"pid\":1,"
			  "\"tid\":1,\"ts\":%d,\"dur\":20,\"args\":{\"correlation\":%d}}"
			  ",{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,"
			  "\"ts\":%d,\"dur\":%d,\"args\":{\"device\":0,\"stream\":7,"
			  "\"correlation\":%d,\"bytes\":4096}}"
			  ",{\"ph\":\"s\",\"id\":%d,\"pid\":1,\"tid\":1,\"ts\":%d,\"cat\":\"ac2g\","
			  "\"name\":\"ac2g\"}"
			  ",{\"ph\":\"f\",\"id\":%d,\"pid\":0,\"tid\":7,\"ts\":%d,\"cat\":\"ac2g\","
			  "\"name\":\"ac2g\",\"bp\":\"e\"}",
			  ops[i][0], s, corr, ops[i][1], s + 5, corr, ops[i][2], ops[i][3], ks,
			  kdur, corr, corr, s + 6, corr, ks);
		s = ks + kdur + 5;
	}
	sbuf_addf(&b,
		  ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaDeviceSynchronize\","
		  "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":30}"
		  ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"checkpoint\",\"pid\":1,\"tid\":1,"
		  "\"ts\":%d,\"args\":{\"step\":1}}"
		  ",{\"ph\":\"C\",\"name\":\"memory\",\"pid\":1,\"ts\":%d,"
		  "\"args\":{\"bytes\":1000}}]}",
		  s, s + 40, s);
	write_file(path, b.buf);
	sbuf_release(&b);
}

/* nvidia-smi's CSV every 10 ms over the capture (its times are UTC here). */
static void write_nvsmi(const char *path)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_adds(&b, "timestamp, index, name, utilization.gpu [%], utilization.memory [%],"
		      " memory.used [MiB], memory.total [MiB]\n");
	for (int k = 0; k < 40; k++) {
		int64_t ns = T0_NS + (int64_t)k * 10000000;
		time_t sec = (time_t)(ns / 1000000000);
		struct tm tm;
		char stamp[32];
		gmtime_r(&sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y/%m/%d %H:%M:%S", &tm);
		sbuf_addf(&b, "%s.%03d, 0, GPU, %d %%, %d %%, 100 MiB, 1000 MiB\n", stamp,
			  (int)(ns / 1000000 % 1000), k * 37 % 100, k * 11 % 100);
	}
	write_file(path, b.buf);
	sbuf_release(&b);
}

static void must(int rc, char *err)
{
	if (rc < 0) {
		fprintf(stderr, "fuzz_db: building the valid trace.db: %s\n", err ? err : "?");
		abort();
	}
}

static void import(const char *path, const struct import_opts *o)
{
	char *err = NULL;
	char *paths[] = {(char *)path};
	must(import_files(build_path, paths, 1, NULL, o, &err), err);
}

/* sql prepared on db; the process aborts when it cannot be. */
static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "fuzz_db: %s: %s\n", sql, sqlite3_errmsg(db));
		abort();
	}
	return q;
}

/* The one integer sql gives on db. */
static int64_t one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = prepare(db, sql);
	if (sqlite3_step(q) != SQLITE_ROW)
		abort();
	int64_t v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "fuzz_db: %s: %s\n", sql, sqlite3_errmsg(db));
		abort();
	}
}

/* s with every "from" replaced by "to". */
static void replace_all(struct sbuf *s, const char *from, const char *to)
{
	struct sbuf out;
	sbuf_init(&out);
	const char *p = s->buf, *hit;
	while ((hit = strstr(p, from))) {
		sbuf_add(&out, p, (size_t)(hit - p));
		sbuf_adds(&out, to);
		p = hit + strlen(from);
	}
	sbuf_adds(&out, p);
	sbuf_release(s);
	*s = out;
}

/* Fills the empty database db with build_path's rows, application id and
 * schema version under its schema loosened. */
static void loosen(sqlite3 *db)
{
	char *sql = xasprintf("ATTACH '%s' AS src", build_path);
	exec_sql(db, sql);
	free(sql);
	sqlite3_stmt *q = prepare(db, "SELECT type, name, sql FROM src.sqlite_master WHERE sql IS"
				      " NOT NULL ORDER BY type = 'table' DESC, rowid");
	exec_sql(db, "BEGIN");
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(q, 0);
		const char *name = (const char *)sqlite3_column_text(q, 1);
		struct sbuf s;
		sbuf_init(&s);
		sbuf_adds(&s, (const char *)sqlite3_column_text(q, 2));
		if (!strcmp(type, "table")) {
			replace_all(&s, " NOT NULL", "");
			replace_all(&s, " UNIQUE", "");
			replace_all(&s, " TEXT PRIMARY KEY", " TEXT");
			char *key = strstr(s.buf, ", PRIMARY KEY (");
			if (key && strstr(s.buf, "WITHOUT ROWID")) {
				s.len = (size_t)(key - s.buf);
				s.buf[s.len] = '\0';
				sbuf_addc(&s, ')');
			}
			exec_sql(db, s.buf);
			char *copy = xasprintf("INSERT INTO main.\"%s\" SELECT * FROM src.\"%s\"",
					       name, name);
			exec_sql(db, copy);
			free(copy);
		} else if (strcmp(type, "index") || strncmp(name, "sqlite_autoindex", 16)) {
			exec_sql(db, s.buf);
		}
		sbuf_release(&s);
	}
	sqlite3_finalize(q);
	exec_sql(db, "COMMIT");
	for (int i = 0; i < 2; i++) {
		const char *pragma = i ? "user_version" : "application_id";
		sql = xasprintf("PRAGMA src.%s", pragma);
		int64_t value = one_int(db, sql);
		free(sql);
		sql = xasprintf("PRAGMA main.%s = %lld", pragma, (long long)value);
		exec_sql(db, sql);
		free(sql);
	}
	exec_sql(db, "DETACH src");
}

/* The valid file at seed_path, its bytes in seed, its tables in tables. */
static void build_seed(void)
{
	char path[160];
	setenv("TZ", "UTC", 1);
	tzset();
	snprintf(path, sizeof(path), "%s/workflow.jsonl", dir);
	char *wf =
	    xasprintf("{\"step\":\"ddp\",\"start_ns\":%lld,\"end_ns\":%lld,\"host\":\"vm\"}\n",
		      (long long)T0_NS, (long long)T0_NS + 150000000);
	write_file(path, wf);
	free(wf);
	import(path, &(struct import_opts){.workflow = "fz"});
	char r0[160], r1[160];
	snprintf(r0, sizeof(r0), "%s/rank0.json", dir);
	snprintf(r1, sizeof(r1), "%s/rank1.json", dir);
	write_rank(r0, 0);
	write_rank(r1, 1);
	char *err = NULL, *ranks[] = {r0, r1};
	struct import_opts o = {.workflow = "fz",
				.step = "ddp",
				.host = "vm",
				.time_offset_ns = T0_NS + 1000000,
				.has_time_offset = 1};
	must(import_files(build_path, ranks, 2, NULL, &o, &err), err);
	snprintf(path, sizeof(path), "%s/nvsmi.csv", dir);
	write_nvsmi(path);
	import(path, &(struct import_opts){.host = "vm"});

	struct store *st;
	struct analysis an;
	must(store_open(build_path, STORE_WRITE, &st, &err), err);
	must(store_begin(st, &err), err);
	must(analysis_run(st, &an, &err), err);
	must(analysis_save(st, &an, &err), err);
	must(store_commit(st, &err), err);
	analysis_release(&an);
	store_close(st);

	sqlite3 *db;
	if (sqlite3_open(seed_path, &db) != SQLITE_OK)
		abort();
	loosen(db);
	sqlite3_stmt *q = prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table'"
				      " AND name NOT LIKE 'sqlite_%' ORDER BY name");
	while (sqlite3_step(q) == SQLITE_ROW) {
		struct table t = {.name = xstrdup((const char *)sqlite3_column_text(q, 0))};
		char *sql = xasprintf("SELECT count(*) FROM \"%s\"", t.name);
		t.rows = one_int(db, sql);
		free(sql);
		sql = xasprintf("SELECT name FROM pragma_table_info('%s')", t.name);
		sqlite3_stmt *c = prepare(db, sql);
		while (sqlite3_step(c) == SQLITE_ROW) {
			t.cols = xrealloc(t.cols, (size_t)(t.ncols + 1) * sizeof(*t.cols));
			t.cols[t.ncols++] = xstrdup((const char *)sqlite3_column_text(c, 0));
		}
		sqlite3_finalize(c);
		free(sql);
		if (!t.rows) {
			for (int i = 0; i < t.ncols; i++)
				free(t.cols[i]);
			free(t.cols);
			free(t.name);
			continue;
		}
		tables = xrealloc(tables, (size_t)(ntables + 1) * sizeof(*tables));
		tables[ntables++] = t;
	}
	sqlite3_finalize(q);
	step_id = one_int(db, "SELECT max(id) FROM phases WHERE kind = 2");
	sqlite3_close(db);

	FILE *f = fopen(seed_path, "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0)
		abort();
	seed_size = (size_t)ftell(f);
	rewind(f);
	seed = xmalloc(seed_size);
	if (fread(seed, 1, seed_size, f) != seed_size)
		abort();
	fclose(f);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/grademl-fuzz-db-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	setenv("TMPDIR", dir, 1);
	setenv("HOME", dir, 1); /* the explorer's prompt history stays here */
	setenv("XDG_STATE_HOME", dir, 1);
	snprintf(build_path, sizeof(build_path), "%s/build.db", dir);
	snprintf(seed_path, sizeof(seed_path), "%s/seed.db", dir);
	snprintf(work_path, sizeof(work_path), "%s/work.db", dir);
	snprintf(out_path, sizeof(out_path), "%s/out.json", dir);
	snprintf(keys_path, sizeof(keys_path), "%s/explore.keys", dir);
	write_file(keys_path, "d\nJ\nt\n+\nq\nF\nEnter\nd\nq\ni\nEnter\nq\nm\nq\n"
			      "type :kernels\nEnter\nc\nq\nq\ntype :ops\nEnter\nc\nq\nq\n"
			      "type :ranks /fz/ddp\nEnter\nq\ntype :path\nEnter\nEnter\nq\n"
			      "type :goto /fz/ddp\nEnter\nEnter\nd\nt\nq\n");
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	build_seed();
}

/* Reads n bytes of the input into out; 0 when it has fewer left. */
static int take(const uint8_t **p, const uint8_t *end, void *out, size_t n)
{
	if ((size_t)(end - *p) < n)
		return 0;
	memcpy(out, *p, n);
	*p += n;
	return 1;
}

/* Applies the input's edits to the database; stops at the first short one. */
static void apply_edits(sqlite3 *db, const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	uint8_t h[4];
	exec_sql(db, "BEGIN");
	for (int e = 0; e < MAX_EDITS && take(&p, end, h, 4); e++) {
		const struct table *t = &tables[h[0] % ntables];
		const char *col = t->cols[h[1] % t->ncols];
		int64_t row = h[2] % t->rows;
		char *sql;
		if (h[3] % 8 == 6)
			sql = xasprintf(
			    "UPDATE \"%s\" SET \"%s\" = \"%s\" + ?1 WHERE rowid ="
			    " (SELECT rowid FROM \"%s\" ORDER BY rowid LIMIT 1 OFFSET ?2)",
			    t->name, col, col, t->name);
		else if (h[3] % 8 == 7)
			sql = xasprintf(
			    "UPDATE \"%s\" SET \"%s\" = (SELECT \"%s\" FROM \"%s\""
			    " ORDER BY rowid LIMIT 1 OFFSET ?1) WHERE rowid ="
			    " (SELECT rowid FROM \"%s\" ORDER BY rowid LIMIT 1 OFFSET ?2)",
			    t->name, col, col, t->name, t->name);
		else
			sql = xasprintf(
			    "UPDATE \"%s\" SET \"%s\" = ?1 WHERE rowid ="
			    " (SELECT rowid FROM \"%s\" ORDER BY rowid LIMIT 1 OFFSET ?2)",
			    t->name, col, t->name);
		sqlite3_stmt *q = prepare(db, sql);
		free(sql);
		sqlite3_bind_int64(q, 2, row);
		int8_t small;
		uint8_t len, other;
		int64_t i64;
		double d;
		char bytes[32];
		int ok = 1;
		switch (h[3] % 8) {
		case 0:
			sqlite3_bind_null(q, 1);
			break;
		case 1:
		case 6:
			if ((ok = take(&p, end, &small, 1)))
				sqlite3_bind_int64(q, 1, small);
			break;
		case 2:
			if ((ok = take(&p, end, &i64, 8)))
				sqlite3_bind_int64(q, 1, i64);
			break;
		case 3:
			if ((ok = take(&p, end, &d, 8)))
				sqlite3_bind_double(q, 1, d);
			break;
		case 4:
		case 5:
			if ((ok = take(&p, end, &len, 1) && take(&p, end, bytes, len % 32u))) {
				if (h[3] % 8 == 4)
					sqlite3_bind_text(q, 1, bytes, len % 32, SQLITE_TRANSIENT);
				else
					sqlite3_bind_blob(q, 1, bytes, len % 32, SQLITE_TRANSIENT);
			}
			break;
		default:
			if ((ok = take(&p, end, &other, 1)))
				sqlite3_bind_int64(q, 1, other % t->rows);
			break;
		}
		if (ok)
			sqlite3_step(q); /* a UNIQUE or PRIMARY KEY may refuse it */
		sqlite3_finalize(q);
		if (!ok)
			break;
	}
	exec_sql(db, "COMMIT");
}

/* A failed reader must say why. */
static void check(int rc, char *err)
{
	if (rc < 0 && (!err || !*err)) {
		fprintf(stderr, "fuzz_db: a failure with the message '%s'\n", err ? err : "(none)");
		abort();
	}
	free(err);
}

static void readers(void)
{
	char *err = NULL;
	check(report_write(devnull, work_path, REPORT_TEXT, &err), err);
	err = NULL;
	check(report_write(devnull, work_path, REPORT_JSON, &err), err);
	err = NULL;
	check(diffview_write(devnull, work_path, seed_path, REPORT_TEXT, 20, &err), err);

	struct model *m;
	err = NULL;
	int rc = model_open(work_path, &m, &err);
	check(rc, err);
	if (rc == 0) {
		for (int kind = 0; kind < SUMM_NKINDS; kind++) {
			struct query_result r;
			char *why = NULL;
			err = NULL;
			rc = summ_table(model_store(m), kind == SUMM_RANKS ? step_id : 0, kind, 1,
					&r, &why, &err);
			if (rc == 0)
				query_result_release(&r);
			free(why);
			check(rc, err);
		}
		struct export_stats es;
		err = NULL;
		check(export_chrome(model_store(m), 0, out_path, &es, &err), err);
		model_free(m);
	}

	static const char *const queries[] = {
	    "phases kind = operator | saturated gpu0.utilization.gpu | by name | top 5 sum(dur)",
	    "phases /fz/ddp/** | select id, name, path, rank, track.name",
	    "events | within 1ms of phases kind = profiler_step | select id, t, phase.name, near",
	    "metrics gpu0.utilization.gpu | during phases kind = step | select phase, mean, sat",
	    "phases kind = kernel | with gpu0.utilization.gpu | by rank | stats count, sum(dur)",
	};
	struct query_limits lim = {.timeout_ns = 1000000000, .max_memory = 64 << 20};
	sqlite3 *db;
	err = NULL;
	rc = query_open(work_path, &lim, &db, &err);
	check(rc, err);
	for (size_t i = 0; rc == 0 && i < sizeof(queries) / sizeof(*queries); i++) {
		struct query_result r;
		struct query_error qe = {0};
		err = NULL;
		if (query_run(db, queries[i], 0, &lim, &r, &qe, &err) == 0)
			query_result_release(&r);
		else if (!qe.msg)
			check(-1, err);
		else
			free(err);
		query_error_release(&qe);
	}
	if (rc == 0)
		query_close(db);

	struct headless_opts o = {.db = work_path,
				  .keys = keys_path,
				  .dump = "/dev/null",
				  .w = 80,
				  .h = 24,
				  .max_memory = 64 << 20};
	err = NULL;
	check(headless_run(&o, &err), err);

	struct store *st;
	err = NULL;
	rc = store_open(work_path, STORE_WRITE, &st, &err);
	check(rc, err);
	if (rc == 0) {
		struct analysis an;
		err = NULL;
		if ((rc = store_begin(st, &err)) == 0) {
			if ((rc = analysis_run(st, &an, &err)) == 0) {
				rc = analysis_save(st, &an, &err);
				analysis_release(&an);
			}
			if (rc == 0)
				rc = store_commit(st, &err);
			else
				store_rollback(st);
		}
		check(rc, err);
		store_close(st);
		err = NULL;
		check(report_write(devnull, work_path, REPORT_TEXT, &err), err);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!seed)
		setup();
	FILE *f = fopen(work_path, "wb");
	if (!f || fwrite(seed, 1, seed_size, f) != seed_size || fclose(f) != 0)
		abort();
	sqlite3 *db;
	if (sqlite3_open(work_path, &db) != SQLITE_OK)
		abort();
	apply_edits(db, data, size);
	sqlite3_close(db);
	readers();
	return 0;
}
