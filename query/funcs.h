/*
 * The SQL functions compiled queries call, registered on a connection by
 * query_funcs_register.  Their state (caches) belongs to the connection and
 * is freed when the functions are registered again or the connection closes.
 *
 *   regexp(pattern, text)      1/0: PCRE2 match (UTF, JIT), compiled
 *                              patterns cached; `text REGEXP pattern` too.
 *   gm_str(id)                 (SELECT text FROM strings WHERE id = id), from
 *                              a cache: the first miss prepares one lookup,
 *                              each text is read once per registration.
 *   gm_kind(id)                the same over phase_kinds(name).
 *   gm_path(id)                the phase's path "/wf/step/.../name", parents
 *                              cached; NULL for an unknown id.
 *   gm_ns(x)                   x as whole nanoseconds: an integer as it is,
 *                              a real rounded to the nearest and saturated at
 *                              the int64 range; NULL for NULL, NaN or text.
 *   gm_step(id[, parent, kind])  the phase's step: the nearest of it and its
 *                              ancestors that is a part of the workflow or
 *                              an iteration (model/analysis/level.h: a step,
 *                              a rank, a span off threads, a Spark stage, a
 *                              profiler step), ancestors cached; NULL if none;
 *                              with the row's parent and kind, a phase that
 *                              cannot be a step is not read again.
 *   gm_metric(name, host, phost)  the metric id for a reference: name is
 *                              a metric's name or "resource.name"; host, when
 *                              not NULL, must match; among several, the one
 *                              on phost, else the lowest id; NULL if none.
 *   gm_twmean(metric, t0, t1)  time-weighted mean of the series over
 *                              [t0, t1), as model_series_window: a sample
 *                              holds until the next one; the mean is over the
 *                              covered part of the window; the last sample
 *                              holds for no time but is the mean of a window
 *                              that starts at or before it and covers nothing
 *                              else; NULL where the series has no value.
 *   gm_twmax(metric, t0, t1)   the highest value in force over [t0, t1):
 *                              the sample in force at t0 and every one before
 *                              t1; NULL where gm_twmean is NULL.
 *   gm_satns(metric, t0, t1, threshold)  nanoseconds of [t0, t1) during
 *                              which the value in force is >= threshold
 *                              (NULL: 0.95 x the metric's capacity; an error
 *                              when it has none).
 *   gm_valueat(metric, t)      the value in force at t, or NULL.
 *   gm_hagg(spec, key, x...)   aggregate: GROUP BY an integer key through
 *                              a hash table; the groups as JSON text
 *                              [[key, a1, ...], ...] (spec: one letter per
 *                              aggregate, c count(*) C count s sum n min
 *                              x max a avg).
 *   gm_running(track, t)       the phase running at an event that has no
 *                              phase_id: the deepest (then latest-starting,
 *                              then lowest-id) phase on the track containing
 *                              t, else the same among all phases; answered
 *                              for every such event by one scan of phases.
 *   gm_wset(wid, w0, w1)       aggregate: keeps a during or within stage's
 *                              windows as a set (sorted by w0) and returns
 *                              its number; a window with a NULL is left out.
 *   gm_during(set, t0, t1)     1 when a window of the set has w0 <= t0 and
 *                              t1 <= w1, else 0; gm_during(set, t): w0 <= t
 *                              < w1; NULL if an argument is NULL.
 *   gm_near(set, t0, t1, d[, self])  the window of the set with the least
 *                              gap max(w0 - t1, t0 - w1, 0) <= d, the lowest
 *                              wid among equals, not self; NULL if none or
 *                              if an argument is NULL.
 *   gm_gaps                    a virtual table (eponymous: FROM gm_gaps):
 *                              the idle gaps of device streams (source_id,
 *                              rank, track_id, start_ns, end_ns, cause,
 *                              thread_id, op_id), computed on the first scan
 *                              (query/funcs_gaps.c).
 *   gm_pct(x, p)               aggregate: the p-th percentile (0..100) of x,
 *                              linear between closest ranks (numpy's default).
 *
 * Series are loaded whole on first use (sorted by time) with prefix sums of
 * value x time and a max segment tree, so each window costs O(log n); a
 * window set is sorted once and indexed (funcs_window.c), so each row's
 * gm_during or gm_near costs O(log m) for m windows.  Times are taken as
 * integers (sqlite3_value_int64).
 */
#ifndef GRADEML_QUERY_FUNCS_H
#define GRADEML_QUERY_FUNCS_H

#include <sqlite3.h>

struct qfuncs;

/* Registers the functions; *out (may be NULL) is their state, owned by the
 * connection. */
int query_funcs_register(sqlite3 *db, struct qfuncs **out, char **err);
/* Finalises the statements the functions keep between calls (caches stay),
 * so that the connection can close; call it when a query is done. */
void query_funcs_idle(struct qfuncs *f);

/* Compiles pattern to check it; returns 0, or -1 with *offset the byte of
 * the pattern where PCRE2 stopped and *err its message (caller frees). */
int query_regex_check(const char *pattern, int *offset, char **err);

#endif
