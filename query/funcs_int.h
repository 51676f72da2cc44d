/*
 * What the SQL functions' three files share (internal to them; callers use
 * funcs.h): one connection's state, struct qfuncs, and the functions that
 * query_funcs_register in funcs.c registers from the other three.  funcs.c
 * holds the state's lifecycle, the registration and the lookups (regexp,
 * gm_str, gm_kind, gm_path, gm_metric); funcs_time.c what is answered over
 * time (a metric's series over a window, the phase running at an event);
 * funcs_window.c the windows of during and within (gm_wset, gm_during,
 * gm_near); funcs_gaps.c the idle gaps of device streams (the virtual
 * table gm_gaps); funcs_agg.c the aggregates that need no state of the
 * connection (gm_hagg, gm_pct).
 */
#ifndef GRADEML_QUERY_FUNCS_INT_H
#define GRADEML_QUERY_FUNCS_INT_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "model/util/idmap.h"
#include "query/funcs.h"

struct series;
struct wset;
struct gap_row;

#define NREGEX	16
#define NSERIES 8
#define NMEMO	8

struct regex_slot {
	char *pattern;
	pcre2_code *re;
	pcre2_match_data *md;
};

struct memo {
	char *name, *host, *phost;
	int64_t id; /* 0: none */
};

struct itext {
	const char *sql; /* SELECT text WHERE id = ?1 */
	sqlite3_stmt *q;
	struct itext_ent *v;
	size_t cap, n, bytes; /* cap: 0 or a power of two */
};

struct qfuncs {
	sqlite3 *db;
	struct itext strs, kinds;
	struct wset **wsets; /* by the compiler's window number */
	size_t nwsets;
	struct rkey *rkeys; /* gm_running's events, sorted by (t, track) */
	size_t nrkeys;
	int running_loaded;
	sqlite3_stmt *running_track_q, *running_any_q;
	struct regex_slot rx[NREGEX];
	size_t rx_next;
	struct series *ser[NSERIES];
	unsigned long clock;
	struct metric_ent *metrics;
	size_t nmetrics;
	int metrics_loaded;
	struct memo memo[NMEMO];
	size_t memo_next;
	struct path_ent *paths;
	size_t paths_cap, paths_n;
	sqlite3_stmt *path_q;
	struct idmap steps; /* gm_step: an ancestor's id -> index in step_of */
	int64_t *step_of;   /* its step's id, 0: none */
	size_t nstep_of, astep_of;
	sqlite3_stmt *step_q;
	struct gap_row *gaps; /* gm_gaps' rows, once loaded */
	size_t ngaps;
	int gaps_loaded;
	sqlite3_stmt *gap_node_q, *gap_child_q;
};

static inline uint64_t hash64(int64_t x)
{
	uint64_t h = (uint64_t)x * UINT64_C(0x9e3779b97f4a7c15);
	return h ^ (h >> 29);
}

/* ---- funcs_time.c ---- */

void funcs_series_free(struct series *s);
void gm_twmean(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_twmax(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_valueat(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_satns(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_running(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---- funcs_window.c ---- */

void funcs_wset_free(struct wset *w);
void gm_wset_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_wset_final(sqlite3_context *ctx);
void gm_during(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_near(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---- funcs_gaps.c ---- */

int funcs_gaps_register(sqlite3 *db, struct qfuncs *f);
void funcs_gaps_release(struct qfuncs *f);

/* ---- funcs_agg.c ---- */

void gm_hagg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_hagg_final(sqlite3_context *ctx);
void gm_pct_step(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void gm_pct_final(sqlite3_context *ctx);

#endif
