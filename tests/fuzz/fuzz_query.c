/*
 * libFuzzer target for the query language: each input is a query, compiled
 * (lexer, parser, compiler) and, when it compiles, run against a small
 * in-memory trace.db with the query functions and the authorizer in place.
 * Any outcome is fine except a crash, a sanitizer report or a leak; a
 * compile error must carry a message and a position inside the query, and
 * the database must keep its rows whatever the query (the sql escape
 * included); a result is printed in every format.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/store/schema.sql.h"
#include "query/compile.h"
#include "query/exec.h"
#include "query/print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *db;

static const char seed_sql[] =
    "INSERT INTO phase_kinds(id, name) VALUES (1,'workflow'),(2,'step'),(8,'operator');"
    "INSERT INTO strings(id, text) VALUES (1,'wf'),(2,'step1'),(3,'aten::mm'),(4,'boom');"
    "INSERT INTO tracks(id, source_id, kind, host) VALUES (1, 1, 'thread', 'h1');"
    "INSERT INTO phases(id, parent_id, kind, name_id, track_id, start_ns, dur_ns, self_ns,"
    " depth) VALUES (1, NULL, 1, 1, NULL, 1000, 10000, 0, 0),"
    " (2, 1, 2, 2, 1, 1000, 8000, 0, 1), (3, 2, 8, 3, 1, 2000, 3000, 3000, 2),"
    " (4, 4, 8, 3, 1, 2000, 3000, 3000, 2);" /* 4: its own parent, a hostile cycle */
    "INSERT INTO metrics(id, host, resource, name, unit, value_kind, capacity)"
    " VALUES (1, 'h1', 'cpu', 'cpu.util', '%', 'mean', 100);"
    "INSERT INTO samples(metric_id, t_ns, value) VALUES (1, 0, 10), (1, 2500, 50),"
    " (1, 4000, 100), (1, 9000, 0);"
    "INSERT INTO events(id, track_id, t_ns, name_id) VALUES (1, 1, 2100, 4);";

static int64_t count_rows(void)
{
	sqlite3_stmt *q;
	int64_t n = -1;
	if (sqlite3_prepare_v2(db,
			       "SELECT (SELECT count(*) FROM phases) + (SELECT count(*) FROM"
			       " samples) + (SELECT count(*) FROM sqlite_master)",
			       -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

/* A result printed in each format, to a file and as to a terminal (the
 * plain hooks: query/ does not depend on tui/). */
static void print_all(const struct query_result *r)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	for (int fmt = QF_TABLE; fmt <= QF_JSON; fmt++)
		for (int terminal = 0; terminal < 2; terminal++) {
			char *err = NULL;
			struct query_print_hooks h = {.cols = terminal ? 40 : 0, .clock = terminal};
			if (query_print(null, r, (enum query_format)fmt, &h, terminal, &err) < 0)
				abort();
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int64_t rows;
	if (!db) {
		if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
		    sqlite3_exec(db, store_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(db, seed_sql, NULL, NULL, NULL) != SQLITE_OK)
			abort();
		rows = count_rows();
	}
	char *q = malloc(size + 1);
	if (!q)
		return 0;
	memcpy(q, data, size);
	q[size] = '\0';
	size_t len = strlen(q); /* the query ends at a NUL, as a C string does */

	struct query_plan plan;
	struct query_error e = {0};
	if (query_compile(q, &plan, &e) == 0) {
		query_plan_release(&plan);
	} else if (!e.msg || e.pos < 0 || (size_t)e.pos > len) {
		abort();
	}
	query_error_release(&e);

	struct query_result r;
	char *err = NULL;
	/* a recursive CTE or a cartesian join must not stall the fuzzer */
	struct query_limits lim = {.timeout_ns = 1000000000, .max_memory = 64 << 20};
	if (query_run(db, q, 1000, &lim, &r, NULL, &err) == 0) {
		print_all(&r);
		query_result_release(&r);
	} else if (!err) {
		abort();
	}
	free(err);
	if (count_rows() != rows)
		abort(); /* a query wrote */
	char **cands;
	size_t start;
	size_t n = query_complete(db, q, &cands, &start);
	if (start > len)
		abort();
	for (size_t i = 0; i < n; i++)
		free(cands[i]);
	free(cands);
	free(q);
	return 0;
}
