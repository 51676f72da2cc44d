/*
 * Rules files of the "log" importer: one rule a line turning the text log
 * lines a PCRE2 pattern matches into events, metric samples, phase starts
 * and ends or laps, and an optional `time` directive for the lines'
 * timestamps.
 * The format is documented in rules.c and in the man page (RULES).  The
 * caller owns the struct rules from rules_parse and frees it with
 * rules_free; the compiled patterns live as long as it.
 */
#ifndef GRADEML_RULES_H
#define GRADEML_RULES_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

enum rule_kind { RULE_EVENT, RULE_SAMPLE, RULE_START, RULE_END, RULE_LAP };

/* How a captured time reads: absolute (ISO-8601, seconds or milliseconds
 * since the epoch) or elapsed since the start (--time-offset, else 0). */
enum rule_time { RT_ISO8601, RT_EPOCH, RT_EPOCH_MS, RT_ELAPSED_S, RT_ELAPSED_MS };

struct rule {
	enum rule_kind kind;
	char *name; /* event, metric or phase name; "{group}" is replaced */
	char *unit; /* samples: the unit, NULL for "-" */
	pcre2_code *re;
	int lineno;
	int value_group; /* samples: the number of group "value" */
	int time_group;	 /* the number of group "time", or -1 */
};

struct rules {
	struct rule *v;
	size_t n;
	enum rule_time time_fmt; /* RT_ISO8601 unless a time directive says */
	int restarts;		 /* elapsed times that go back: the clock restarted */
	pcre2_code *time_re;	 /* the time directive's pattern, or NULL */
	int time_group;
	int has_lap; /* one rule is a lap (at most one is) */
};

/* Parses a rules file's text (path names it in messages: "path:N: ...");
 * 0, or -1 with *err and nothing allocated. */
int rules_parse(const char *text, size_t len, const char *path, struct rules **out, char **err);
/* Reads and parses the rules file at path. */
int rules_load(const char *path, struct rules **out, char **err);
/* Parses a time text as fmt into ns since the epoch (elapsed: since 0). */
int rules_parse_time(enum rule_time fmt, const char *s, size_t n, int64_t *out);
void rules_free(struct rules *r);

#endif
