/*
 * The schema of trace.db: v1 as one SQL script run when a file is created,
 * then what each later version adds (run on creation, and on an older file
 * by its first write).
 * Keep it in step with man/grademl-tui.1 (TRACE.DB) and bump
 * STORE_SCHEMA_VERSION with a migration in store.c on any change.
 */
#ifndef GRADEML_SCHEMA_SQL_H
#define GRADEML_SCHEMA_SQL_H

static const char store_schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE phase_kinds(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE sources(id INTEGER PRIMARY KEY, path TEXT NOT NULL, format TEXT NOT NULL,"
    " compression TEXT, size_bytes INTEGER, anchor TEXT NOT NULL,"
    " time_offset_ns INTEGER NOT NULL DEFAULT 0, host TEXT, rank INTEGER,"
    " imported_at TEXT NOT NULL, phases INTEGER NOT NULL DEFAULT 0,"
    " events INTEGER NOT NULL DEFAULT 0, samples INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0, attrs TEXT);\n"
    "CREATE TABLE tracks(id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " pid TEXT, tid TEXT, name TEXT, host TEXT, rank INTEGER, sort_index INTEGER,"
    " phase_id INTEGER, spans INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE phases(id INTEGER PRIMARY KEY, parent_id INTEGER, kind INTEGER NOT NULL,"
    " name_id INTEGER NOT NULL, cat_id INTEGER, track_id INTEGER, source_id INTEGER,"
    " start_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL, self_ns INTEGER NOT NULL,"
    " device_ns INTEGER NOT NULL DEFAULT 0, child_count INTEGER NOT NULL DEFAULT 0,"
    " depth INTEGER NOT NULL, attrs TEXT);\n"
    "CREATE INDEX phases_parent ON phases(parent_id, start_ns);\n"
    "CREATE TABLE edges(src INTEGER NOT NULL, dst INTEGER NOT NULL, kind INTEGER NOT NULL);\n"
    "CREATE INDEX edges_src ON edges(src);\n"
    "CREATE INDEX edges_dst ON edges(dst);\n"
    "CREATE TABLE events(id INTEGER PRIMARY KEY, source_id INTEGER, track_id INTEGER,"
    " t_ns INTEGER NOT NULL, name_id INTEGER NOT NULL, level TEXT, phase_id INTEGER,"
    " attrs TEXT);\n"
    "CREATE TABLE metrics(id INTEGER PRIMARY KEY, source_id INTEGER, host TEXT, resource TEXT,"
    " name TEXT NOT NULL, unit TEXT, value_kind TEXT NOT NULL, capacity REAL);\n"
    "CREATE TABLE samples(metric_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
    " value REAL NOT NULL);\n"
    "CREATE INDEX samples_metric ON samples(metric_id, t_ns);\n"
    "CREATE TABLE diagnostics(id INTEGER PRIMARY KEY, source_id INTEGER, code TEXT NOT NULL,"
    " count INTEGER NOT NULL, message TEXT NOT NULL, example TEXT);\n"
    "CREATE VIEW phases_v AS SELECT p.id, p.parent_id, k.name AS kind, n.text AS name,"
    " c.text AS category, p.track_id, p.source_id, p.start_ns, p.start_ns + p.dur_ns AS end_ns,"
    " p.dur_ns, p.self_ns, p.device_ns, p.child_count, p.depth, p.attrs"
    " FROM phases p JOIN phase_kinds k ON k.id = p.kind JOIN strings n ON n.id = p.name_id"
    " LEFT JOIN strings c ON c.id = p.cat_id;\n"
    "CREATE VIEW events_v AS SELECT e.id, e.source_id, e.track_id, e.t_ns, n.text AS name,"
    " e.level, e.phase_id, e.attrs FROM events e JOIN strings n ON n.id = e.name_id;\n";

/* Schema v2 adds the analyses' cache (model/analysis/analyze.c): written whole by
 * `grademl-tui analyze`, valid while meta 'analysis_of' matches the file. */
static const char store_schema_v2_sql[] =
    "CREATE TABLE IF NOT EXISTS imbalance(id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL,"
    " kind TEXT NOT NULL, label TEXT NOT NULL, members INTEGER NOT NULL,"
    " ideal_ns INTEGER NOT NULL, actual_ns INTEGER NOT NULL, impact_ns INTEGER NOT NULL,"
    " straggler_id INTEGER NOT NULL, straggler TEXT NOT NULL, slow INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS issues(id INTEGER PRIMARY KEY, kind TEXT NOT NULL,"
    " phase_id INTEGER NOT NULL, impact_ns INTEGER NOT NULL, share REAL,"
    " explanation TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS critical_path(root_id INTEGER NOT NULL, phase_id INTEGER NOT NULL,"
    " on_path_ns INTEGER NOT NULL, whatif_ns INTEGER, makespan_ns INTEGER NOT NULL);\n";

/* Schema v3 adds resource attribution's cache (model/analysis/attrib.c), written
 * with the other analyses. */
static const char store_schema_v3_sql[] =
    "CREATE TABLE IF NOT EXISTS attribution(phase_id INTEGER NOT NULL, resource TEXT NOT NULL,"
    " usage REAL, busy_ns INTEGER NOT NULL, bneck_ns INTEGER NOT NULL,"
    " PRIMARY KEY (phase_id, resource)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS attribution_fit(metric_id INTEGER NOT NULL,"
    " phase_type TEXT NOT NULL, rule TEXT NOT NULL, demand REAL NOT NULL);\n";

/* Schema v4 adds the GPU breakdowns' cache (model/analysis/gpucache.c), written with
 * the other analyses: one row per (source, rank) of device work, rank -1
 * when the trace names none, and its type mixes, top kernels and streams
 * keyed the same way.  Times in ns. */
static const char store_schema_v4_sql[] =
    "CREATE TABLE IF NOT EXISTS gpu_breakdown(source_id INTEGER NOT NULL, rank INTEGER NOT NULL,"
    " items INTEGER NOT NULL, left_out INTEGER NOT NULL, cutoff_ns INTEGER NOT NULL,"
    " window_ns INTEGER NOT NULL, idle_ns INTEGER NOT NULL, compute_ns INTEGER NOT NULL,"
    " noncompute_ns INTEGER NOT NULL, comm_ns INTEGER NOT NULL, comp_ns INTEGER NOT NULL,"
    " mem_ns INTEGER NOT NULL, overlap_ns INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS gpu_breakdown_mix(source_id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, comm INTEGER NOT NULL, comp INTEGER NOT NULL,"
    " mem INTEGER NOT NULL, ns INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank, comm, comp, mem)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS gpu_breakdown_kernels(source_id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, name TEXT NOT NULL,"
    " others INTEGER NOT NULL, names INTEGER NOT NULL, count INTEGER NOT NULL,"
    " sum_ns INTEGER NOT NULL, min_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank, seq)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS gpu_breakdown_streams(source_id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, track_id INTEGER NOT NULL, items INTEGER NOT NULL,"
    " window_ns INTEGER NOT NULL, idle_ns INTEGER NOT NULL, compute_ns INTEGER NOT NULL,"
    " noncompute_ns INTEGER NOT NULL, host_wait_ns INTEGER NOT NULL,"
    " host_wait_gaps INTEGER NOT NULL, kernel_wait_ns INTEGER NOT NULL,"
    " kernel_wait_gaps INTEGER NOT NULL, other_wait_ns INTEGER NOT NULL,"
    " other_wait_gaps INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank, track_id)) WITHOUT ROWID;\n";

/* Schema v5 adds stragglers among ranks that meet at collectives
 * (model/analysis/imbalance.c): per imbalance group whose ranks meet, where
 * (meets 'device' or 'host'), its matched collectives, the calls left
 * unmatched, how many the straggler reached last and the others' waits;
 * and each rank of such a group (seq 0 the straggler, then rank order).
 * And, per GPU stream of the breakdowns' cache, its idle time by cause
 * (model/analysis/idle.h) and its copies; times in ns. */
static const char store_schema_v5_sql[] =
    "CREATE TABLE IF NOT EXISTS imbalance_meets(imbalance_id INTEGER PRIMARY KEY,"
    " meets TEXT NOT NULL, collectives INTEGER NOT NULL, unmatched INTEGER NOT NULL,"
    " last_at INTEGER NOT NULL, wait_ns INTEGER NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS imbalance_ranks(imbalance_id INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, rank_id INTEGER NOT NULL, name TEXT NOT NULL,"
    " last_at INTEGER NOT NULL, wait_ns INTEGER NOT NULL,"
    " PRIMARY KEY (imbalance_id, seq)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS gpu_breakdown_causes(source_id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, track_id INTEGER NOT NULL, cause TEXT NOT NULL,"
    " ns INTEGER NOT NULL, gaps INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank, track_id, cause)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS gpu_breakdown_copies(source_id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, track_id INTEGER NOT NULL, count INTEGER NOT NULL,"
    " ns INTEGER NOT NULL, bytes INTEGER NOT NULL, pageable INTEGER NOT NULL,"
    " pageable_ns INTEGER NOT NULL, pageable_bytes INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank, track_id)) WITHOUT ROWID;\n";
/* Schema v6 adds HTA's kernel type OTHER to the GPU breakdowns' cache: the
 * union of OTHER work per rank (other_ns), and an other flag in the mixes,
 * whose table is rebuilt with it in its key (its rows are a cache, stale
 * under the analysis version that brings them). */
static const char store_schema_v6_sql[] =
    "DROP TABLE IF EXISTS gpu_breakdown_mix;\n"
    "CREATE TABLE gpu_breakdown_mix(source_id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL, comm INTEGER NOT NULL, comp INTEGER NOT NULL,"
    " mem INTEGER NOT NULL, other INTEGER NOT NULL, ns INTEGER NOT NULL,"
    " PRIMARY KEY (source_id, rank, comm, comp, mem, other)) WITHOUT ROWID;\n";
static const char *const store_schema_v6_columns[][2] = {
    {"gpu_breakdown", "other_ns INTEGER NOT NULL DEFAULT 0"},
    {NULL, NULL},
};

/* Schema v5 also adds columns, each where it is missing: each workflow's
 * critical path row keeps the path's waiting time (wait_ns: gaps,
 * launches, queues; the rest of makespan_ns is work) and, for its what-if,
 * the phase the path then waits on (bound_id, NULL: none); each issue its
 * cause (an idle GPU's: launch, sync, communication, input, host). */
static const char *const store_schema_v5_columns[][2] = {
    {"critical_path", "wait_ns INTEGER"},
    {"critical_path", "bound_id INTEGER"},
    {"issues", "cause TEXT"},
    {NULL, NULL},
};

/* Schema v6 adds no table: phases.device_ns, on launching calls and device
 * work before, is the device time beneath every phase; an older file's is
 * recomputed at its first write (store.c, schema_v6). */

#endif
