/*
 * The rule-based log importer and its rules files: each rule kind on a
 * small log (events with their groups, samples, nested phases, an end with
 * no start, a phase never ended, lines without a time, lines no rule
 * matches), sample values that are no finite number, errors of the rules
 * parser with their line and column, a nanoGPT-like log with elapsed
 * times, and the shipped rules files in rules/ against the real logs in
 * ../shared/samples/training-log, whose matching lines are counted
 * independently.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "importers/importer.h"
#include "importers/rules.h"
#include "tests/testdir.h"
#include "tests/skip.h"

#define SAMPLES "../shared/samples/training-log"
#define MS	1000000LL
#define SEC	1000000000LL

struct fx {
	char dir[256], in[300], db[300], rules[300];
	sqlite3 *conn;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (testdir_make(f->dir, sizeof(f->dir), "rulelog") < 0)
		return -1;
	snprintf(f->in, sizeof(f->in), "%s/train.log", f->dir);
	snprintf(f->db, sizeof(f->db), "%s/t.db", f->dir);
	snprintf(f->rules, sizeof(f->rules), "%s/rules.txt", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->conn)
		sqlite3_close(f->conn);
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static void put(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static int import(struct fx *f, const char *log, const char *rules, const struct import_opts *op,
		  char **err)
{
	put(f->in, log);
	if (rules)
		put(f->rules, rules);
	struct import_opts o = op ? *op : (struct import_opts){0};
	o.rules = rules ? f->rules : NULL;
	char *paths[] = {f->in};
	return import_files(f->db, paths, 1, "log", &o, err);
}

static int64_t q_int(struct fx *f, const char *sql)
{
	if (!f->conn)
		assert_int_equal(sqlite3_open(f->db, &f->conn), SQLITE_OK);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(f->conn, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(f->conn));
	int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return v;
}

static double q_real(struct fx *f, const char *sql)
{
	if (!f->conn)
		assert_int_equal(sqlite3_open(f->db, &f->conn), SQLITE_OK);
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_prepare_v2(f->conn, sql, -1, &s, NULL), SQLITE_OK);
	double v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_double(s, 0) : -1;
	sqlite3_finalize(s);
	return v;
}

static const char kinds_rules[] = "# every kind\n"
				  "time iso8601 /^(?<time>\\S+) /\n"
				  "\n"
				  "start {name} /begin (?<name>\\w+)/\n"
				  "end {name} /finish (?<name>\\w+)/\n"
				  "sample loss - /loss=(?<value>\\S+)/\n"
				  "sample tput img/s /throughput (?<value>[0-9.]+)/i\n"
				  "event warn:{what} /WARN (?<what>\\w+) (?<detail>.*)$/\n";

/* 10:00:00 train 10:00:01 epoch1 ... */
static const char kinds_log[] = "no time yet loss=9\n"
				"2024-01-02T10:00:00Z begin train\n"
				"2024-01-02T10:00:01.5Z begin epoch\n"
				"2024-01-02T10:00:02Z loss=2.5 THROUGHPUT 100.5\n"
				"continued line loss=2.25\n"
				"2024-01-02T10:00:03Z WARN slow step 7 took 2s\n"
				"2024-01-02T10:00:04Z finish epoch\n"
				"2024-01-02T10:00:05Z finish nothing\n"
				"2024-01-02T10:00:06Z begin eval\n"
				"2024-01-02T10:00:07Z loss=oops\n"
				"2024-01-02T10:00:09Z finish train\n"
				"a line nobody wants\n";

static void each_kind(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (import(f, kinds_log, kinds_rules, NULL, &err) < 0)
		fail_msg("%s", err);
	const int64_t t0 = 1704189600LL * SEC; /* 2024-01-02T10:00:00Z */
	/* phases: train > epoch, train > eval (closed by train's end) */
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span'"), 3);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'train'"), t0);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'train'"), 9 * SEC);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE name = 'epoch'"),
			 t0 + 1500 * MS);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'epoch'"), 2500 * MS);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE name = 'eval'"), 3 * SEC);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
				  " q.id = p.parent_id WHERE p.name IN ('epoch', 'eval')"
				  " AND q.name = 'train'"),
			 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v p JOIN phases_v q ON"
				  " q.id = p.parent_id WHERE p.name = 'train' AND q.kind = 'step'"
				  " AND q.name = 'train.log'"),
			 1);
	assert_int_equal(q_int(f, "SELECT self_ns FROM phases_v WHERE name = 'train'"),
			 9 * SEC - 5500 * MS);
	/* samples: the continued line takes the last time; the first line
	 * has none yet and "oops" is no number */
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples s JOIN metrics m ON"
				  " m.id = s.metric_id WHERE m.name = 'loss'"),
			 2);
	assert_int_equal(q_int(f, "SELECT t_ns FROM samples s JOIN metrics m ON"
				  " m.id = s.metric_id WHERE m.name = 'loss' AND s.value = 2.25"),
			 t0 + 2 * SEC);
	assert_true(q_real(f, "SELECT value FROM samples s JOIN metrics m ON m.id = s.metric_id"
			      " WHERE m.name = 'tput' AND m.unit = 'img/s'") == 100.5);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics WHERE name = 'loss' AND unit IS"
				  " NULL AND resource = 'log' AND value_kind = 'instant'"),
			 1);
	/* the event: name from its group, groups and line in attrs, bound to
	 * the epoch */
	assert_int_equal(q_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
				  " p.id = e.phase_id WHERE e.name = 'warn:slow' AND"
				  " p.name = 'epoch' AND e.t_ns = 1704189603000000000 AND"
				  " json_extract(e.attrs, '$.detail') = 'step 7 took 2s' AND"
				  " json_extract(e.attrs, '$.line') LIKE '%WARN slow%'"),
			 1);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'NO_TIME'"), 1);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_VALUE'"), 1);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'UNMATCHED_END'"), 1);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'UNCLOSED'"), 1);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'UNMATCHED_LINE'"),
			 1);
	assert_int_equal(q_int(f, "SELECT phases FROM sources WHERE format = 'log'"), 3);
	assert_int_equal(q_int(f, "SELECT events FROM sources"), 1);
	assert_int_equal(q_int(f, "SELECT samples FROM sources"), 3);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 3);
}

/* "nan" read as a number made samples.value NULL and failed the whole
 * import on its NOT NULL constraint (fuzz_rulelog, corpus edge.log). */
static void non_finite_values(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (import(f,
		   "2024-01-02T10:00:00Z loss=nan\n"
		   "2024-01-02T10:00:01Z loss=-NaN\n"
		   "2024-01-02T10:00:02Z loss=inf\n"
		   "2024-01-02T10:00:03Z loss=1e999\n"
		   "2024-01-02T10:00:04Z loss=2.5\n",
		   "time iso8601 /^(?<time>\\S+) /\nsample loss - /loss=(?<value>\\S+)/\n", NULL,
		   &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples"), 1);
	assert_true(q_real(f, "SELECT value FROM samples") == 2.5);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'BAD_VALUE'"), 4);
	assert_int_equal(q_int(f, "SELECT dropped FROM sources"), 4);
}

static void expect_rules_error(const char *text, const char *want)
{
	struct rules *r = NULL;
	char *err = NULL;
	assert_int_equal(rules_parse(text, strlen(text), "rules.txt", &r, &err), -1);
	assert_null(r);
	assert_non_null(err);
	if (strncmp(err, want, strlen(want)))
		fail_msg("got '%s', want '%s...'", err, want);
	free(err);
}

static void rules_errors(void **state)
{
	(void)state;
	/* "event x /" is 9 columns: the pattern starts at column 10 and PCRE2
	 * reports the missing ")" at its end, offset 3 */
	expect_rules_error("# c\ntime epoch\nevent x /a(b/\n",
			   "rules.txt:3: column 13: missing closing parenthesis");
	expect_rules_error("time epoch\nsample m - /(?<time>\\d+) x/\n",
			   "rules.txt:2: a sample pattern needs a group (?<value>...)");
	expect_rules_error("time epoch\nevent {nope} /(?<time>\\d+)/\n",
			   "rules.txt:2: no group 'nope' in the pattern");
	expect_rules_error("event x /abc/\n", "rules.txt: no time");
	expect_rules_error("time iso8601\ntime epoch\n", "rules.txt:2: a second time directive");
	expect_rules_error("time hours\n", "rules.txt:1: expected time");
	expect_rules_error("count x /a/\n", "rules.txt:1: unknown rule 'count'");
	expect_rules_error("event x /a\n", "rules.txt:1: column 9: unterminated /REGEX/");
	expect_rules_error("event x /a/q\n", "rules.txt:1: column 12: unknown pattern flag 'q'");
	expect_rules_error("event /(?<time>a)/\n", "rules.txt:1: expected KIND NAME /REGEX/");
	expect_rules_error("# nothing\n", "rules.txt: no rules");
	expect_rules_error("time epoch /(\\d+)/\nevent x /a/\n",
			   "rules.txt:1: the time pattern has no group");
	expect_rules_error("time elapsed_s\nlap a /a(?<time>\\d+)/\nlap b /b(?<time>\\d+)/\n",
			   "rules.txt:3: a second lap rule");
	expect_rules_error("time epoch restarts\nevent x /(?<time>\\d+)/\n",
			   "rules.txt:1: restarts applies to elapsed_s and elapsed_ms only");
	expect_rules_error("time elapsed_s often\n", "rules.txt:1: expected time");
	struct rules *r = NULL;
	char *err = NULL;
	static const char ok[] = "time elapsed_ms restarts /^(?<time>\\d+) /\nlap s /done/\n";
	if (rules_parse(ok, strlen(ok), "rules.txt", &r, &err) < 0)
		fail_msg("%s", err);
	assert_true(r->restarts && r->has_lap && r->time_fmt == RT_ELAPSED_MS);
	rules_free(r);
}

static void missing_rules_and_bad_pattern(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(import(f, "x\n", NULL, NULL, &err), -1);
	assert_non_null(strstr(err, "needs a rules file (--rules FILE)"));
	free(err);
	err = NULL;
	/* the pattern starts at column 13; PCRE2 stops at its end, offset 10 */
	assert_int_equal(import(f, "x\n", "time epoch\nsample m - /(?<value>[/\n", NULL, &err), -1);
	if (!strstr(err, "rules.txt:2: column 23: missing terminating ]"))
		fail_msg("%s", err);
	free(err);
	assert_int_equal(access(f->db, F_OK), -1);
}

static void times(void **state)
{
	(void)state;
	int64_t t;
	assert_int_equal(rules_parse_time(RT_ISO8601, "1970-01-02 00:00:01,250", 23, &t), 0);
	assert_int_equal(t, 86401250 * MS);
	assert_int_equal(rules_parse_time(RT_ISO8601, "2024-01-02T12:00:00+02:00", 25, &t), 0);
	assert_int_equal(t, 1704189600LL * SEC);
	assert_int_equal(rules_parse_time(RT_ISO8601, "2024-13-02T12:00:00", 19, &t), -1);
	assert_int_equal(rules_parse_time(RT_EPOCH, "1.5", 3, &t), 0);
	assert_int_equal(t, 1500 * MS);
	assert_int_equal(rules_parse_time(RT_EPOCH_MS, "1500", 4, &t), 0);
	assert_int_equal(t, 1500 * MS);
	assert_int_equal(rules_parse_time(RT_ELAPSED_S, "x", 1, &t), -1);
}

/* A log of events alone: its step spans them (it had no time: 0 ns), and
 * an event outside every phase is the step's (it was bound to nothing). */
static void step_spans_its_events(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (import(f,
		   "2024-01-02T10:00:01Z note first\n"
		   "2024-01-02T10:00:02Z begin eval\n"
		   "2024-01-02T10:00:03Z note inside\n"
		   "2024-01-02T10:00:04Z finish eval\n"
		   "2024-01-02T10:00:09Z note last\n",
		   "time iso8601 /^(?<time>\\S+) /\nevent {what} /note (?<what>\\w+)/\n"
		   "start {name} /begin (?<name>\\w+)/\nend {name} /finish (?<name>\\w+)/\n",
		   NULL, &err) < 0)
		fail_msg("%s", err);
	const int64_t t0 = 1704189600LL * SEC;
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'step'"), t0 + SEC);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE kind = 'step'"), 8 * SEC);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE kind = 'workflow'"), 8 * SEC);
	assert_int_equal(q_int(f, "SELECT count(*) FROM events WHERE phase_id IS NULL"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
				  " p.id = e.phase_id WHERE p.kind = 'step' AND e.name IN"
				  " ('first', 'last')"),
			 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
				  " p.id = e.phase_id WHERE e.name = 'inside' AND p.name = 'eval'"),
			 1);
	/* a second import into the step widens it, never narrows it */
	struct import_opts o = {.step = "train.log"};
	if (import(f, "2024-01-02T10:00:05Z note again\n",
		   "time iso8601 /^(?<time>\\S+) /\nevent {what} /note (?<what>\\w+)/\n", &o,
		   &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'step'"), 1);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'step'"), t0 + SEC);
	assert_int_equal(q_int(f, "SELECT dur_ns FROM phases_v WHERE kind = 'step'"), 8 * SEC);
}

/* Laps: each "iter N done" line ends iter:N, which began at the one before
 * (the first at the clock's origin); what happens meanwhile is inside it;
 * the clock restarts once; the lap left running at the end is no phase. */
static void laps(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	if (import(f,
		   "starting\n"
		   "[0.5] note a\n"
		   "[1.0] eval begins\n"
		   "[1.5] eval ends\n"
		   "[2.0] iter 1 done\n"
		   "[3.0] eval begins\n"
		   "[4.0] iter 2 done\n"
		   "[0.5] iter 3 done\n"
		   "[1.0] note b\n"
		   "[1.2] eval begins\n"
		   "[1.5] note c\n",
		   "time elapsed_s restarts /^\\[(?<time>[0-9.]+)\\]/\n"
		   "lap iter:{n} /iter (?<n>\\d+) done/\n"
		   "start eval /eval begins/\nend eval /eval ends/\n"
		   "event note:{what} /note (?<what>\\w+)/\n",
		   NULL, &err) < 0)
		fail_msg("%s", err);
	static const struct {
		const char *name, *parent;
		int64_t start, end, depth;
	} want[] = {
	    {"iter:1", "train.log", 0, 2000 * MS, 2},
	    {"iter:2", "train.log", 2000 * MS, 4000 * MS, 2},
	    /* 0.5 s after the restart, counted on from 4.0 */
	    {"iter:3", "train.log", 4000 * MS, 4500 * MS, 2},
	    {"eval", "iter:1", 1000 * MS, 1500 * MS, 3},
	    /* never ended: closed by the lap's end */
	    {"eval", "iter:2", 3000 * MS, 4000 * MS, 3},
	    /* in the lap left running: the step's, at the last time */
	    {"eval", "train.log", 5200 * MS, 5500 * MS, 2},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char sql[400];
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM phases_v p JOIN phases_v q ON q.id = p.parent_id"
			 " WHERE p.name = '%s' AND q.name = '%s' AND p.start_ns = %lld AND"
			 " p.end_ns = %lld AND p.depth = %lld",
			 want[i].name, want[i].parent, (long long)want[i].start,
			 (long long)want[i].end, (long long)want[i].depth);
		if (q_int(f, sql) != 1)
			fail_msg("no %s under %s [%lld, %lld] at depth %lld", want[i].name,
				 want[i].parent, (long long)want[i].start, (long long)want[i].end,
				 (long long)want[i].depth);
	}
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span'"), 6);
	assert_int_equal(q_int(f, "SELECT phases FROM sources"), 6);
	/* each event bound to the phase running at its time */
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM events_v e JOIN phases_v p ON"
			       " p.id = e.phase_id WHERE (e.name = 'note:a' AND p.name = 'iter:1')"
			       " OR (e.name = 'note:b' AND p.kind = 'step') OR (e.name = 'note:c'"
			       " AND p.name = 'eval' AND p.start_ns = 5200000000)"),
			 3);
	assert_int_equal(q_int(f, "SELECT start_ns FROM phases_v WHERE kind = 'step'"), 0);
	assert_int_equal(q_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'step'"), 5500 * MS);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'CLOCK_RESTART'"), 1);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'UNCLOSED'"), 2);
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'LAP_LEFT_RUNNING'"),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM diagnostics WHERE example LIKE"
				  " 'train.log: after line 8, 1 events and 1 phases'"),
			 1);
}

static const char nanogpt_log[] = "step:0/3 val_loss:10.8258 train_time:0ms step_avg:nanms\n"
				  "step:1/3 train_time:100ms step_avg:nanms\n"
				  "step:2/3 train_time:250ms step_avg:125.00ms\n"
				  "step:3/3 train_time:390ms step_avg:130.00ms\n"
				  "step:3/3 val_loss:3.2785 train_time:400ms step_avg:133.33ms\n"
				  "peak memory consumption: 30000 MiB\n";

static void nanogpt_like(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	FILE *fp = fopen("rules/nanogpt.rules", "r");
	assert_non_null(fp);
	static char rules[8192];
	rules[fread(rules, 1, sizeof(rules) - 1, fp)] = '\0';
	fclose(fp);
	struct import_opts o = {.time_offset_ns = 1000 * SEC, .has_time_offset = 1};
	if (import(f, nanogpt_log, rules, &o, &err) < 0)
		fail_msg("%s", err);
	assert_int_equal(q_int(f,
			       "SELECT count(*) FROM samples s JOIN metrics m ON"
			       " m.id = s.metric_id WHERE m.name = 'step_avg' AND m.unit = 'ms'"),
			 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM samples s JOIN metrics m ON"
				  " m.id = s.metric_id WHERE m.name = 'val_loss'"),
			 2);
	assert_int_equal(q_int(f,
			       "SELECT t_ns FROM samples s JOIN metrics m ON"
			       " m.id = s.metric_id WHERE m.name = 'step_avg' AND s.value = 125"),
			 1000 * SEC + 250 * MS);
	assert_int_equal(q_int(f, "SELECT count(*) FROM events_v WHERE name = 'validation'"), 2);
	assert_int_equal(q_int(f, "SELECT anchor = 'time-offset' FROM sources"), 1);
	/* a step from the step line before it (the first from the offset) */
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span'"), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE (name = 'step:1' AND"
				  " start_ns = 1000000000000 AND dur_ns = 100000000) OR"
				  " (name = 'step:2' AND start_ns = 1000100000000 AND"
				  " dur_ns = 150000000) OR (name = 'step:3' AND"
				  " start_ns = 1000250000000 AND dur_ns = 140000000)"),
			 3);
	/* the first validation in step 1's window, the last after every step */
	assert_int_equal(q_int(f, "SELECT count(*) FROM events_v e JOIN phases_v p ON"
				  " p.id = e.phase_id WHERE (e.t_ns = 1000000000000 AND"
				  " p.name = 'step:1') OR (e.t_ns = 1000400000000 AND"
				  " p.kind = 'step')"),
			 2);
	assert_int_equal(q_int(f, "SELECT end_ns FROM phases_v WHERE kind = 'step'"),
			 1000 * SEC + 400 * MS);
	/* the memory line matches nothing */
	assert_int_equal(q_int(f, "SELECT count FROM diagnostics WHERE code = 'UNMATCHED_LINE'"),
			 1);
}

/* Lines of path starting with the first needle and containing the others,
 * in order. */
static int64_t count_lines(const char *path, const char *const *needles, int *ok)
{
	FILE *fp = fopen(path, "r");
	*ok = fp != NULL;
	if (!fp)
		return 0;
	static char buf[1 << 20];
	int64_t n = 0;
	while (fgets(buf, sizeof(buf), fp)) {
		const char *p = strncmp(buf, needles[0], strlen(needles[0])) ? NULL : buf;
		for (int i = 0; p && needles[i]; i++)
			if ((p = strstr(p, needles[i])))
				p += strlen(needles[i]);
		n += p != NULL;
	}
	fclose(fp);
	return n;
}

static void shipped_rules(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *log, *rules;
		const char *needles[4];
		int64_t phases; /* -1: one per step line */
	} cases[] = {
	    /* step_avg with a number (not "nan") and val_loss lines */
	    {SAMPLES "/KellerJordan__modded-nanogpt__1d3bd93b-a69e-4118-aeb8-8184239d7566.txt",
	     "rules/nanogpt.rules",
	     {"step:", "train_time:", "step_avg:", NULL},
	     -1},
	    {SAMPLES "/microsoft__VirtualClient__sb-exec.log",
	     "rules/superbench.rules",
	     {"[", "Average train time", "step time: ", NULL},
	     14},
	};
	int seen = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ok;
		int64_t want = count_lines(cases[i].log, cases[i].needles, &ok);
		int64_t phases = cases[i].phases;
		if (!ok)
			continue;
		if (i == 0) {
			static const char *const nan[] = {"step:", "step_avg:nanms", NULL};
			static const char *const val[] = {"step:", " val_loss:", NULL};
			static const char *const timed[] = {"step:", " train_time:", NULL};
			want += count_lines(cases[i].log, val, &ok) -
				count_lines(cases[i].log, nan, &ok);
			phases = count_lines(cases[i].log, timed, &ok) -
				 count_lines(cases[i].log, val, &ok);
		}
		if (f->conn)
			sqlite3_close(f->conn);
		f->conn = NULL;
		unlink(f->db);
		char *paths[] = {(char *)cases[i].log}, *err = NULL;
		struct import_opts o = {.rules = cases[i].rules};
		if (import_files(f->db, paths, 1, "log", &o, &err) < 0)
			fail_msg("%s: %s", cases[i].log, err);
		int64_t got = q_int(f, "SELECT count(*) FROM samples");
		if (got != want)
			fail_msg("%s: %lld samples, want %lld", cases[i].log, (long long)got,
				 (long long)want);
		assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span'"),
				 phases);
		assert_int_equal(q_int(f, "SELECT count(*) FROM phases_v WHERE kind = 'span' AND"
					  " dur_ns <= 0"),
				 0);
		assert_int_equal(q_int(f, "SELECT count(*) FROM events WHERE phase_id IS NULL"), 0);
		assert_int_equal(q_int(f, "SELECT count(*) FROM diagnostics WHERE code IN"
					  " ('NO_TIME', 'BAD_TIME', 'BAD_VALUE', 'UNCLOSED',"
					  " 'UNMATCHED_END')"),
				 0);
		print_message("%s: %lld samples\n", cases[i].rules, (long long)got);
		seen++;
	}
	if (!seen)
		skip_because("%s holds none of the logs", SAMPLES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(each_kind, setup, teardown),
	    cmocka_unit_test_setup_teardown(non_finite_values, setup, teardown),
	    cmocka_unit_test(rules_errors),
	    cmocka_unit_test_setup_teardown(missing_rules_and_bad_pattern, setup, teardown),
	    cmocka_unit_test(times),
	    cmocka_unit_test_setup_teardown(step_spans_its_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(laps, setup, teardown),
	    cmocka_unit_test_setup_teardown(nanogpt_like, setup, teardown),
	    cmocka_unit_test_setup_teardown(shipped_rules, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
