#!/usr/bin/env python3
"""Makes hostile trace.db files: a valid one rebuilt without its
constraints, then with NULL, wrong-typed or dangling values written into one
column of one table at a time, as a file made from scratch by someone else
may hold them (tests/e2e/hostile_db.sh runs every command on each).

  hostile_db.py seed BIN OUT.db
      OUT.db: the demo capture (tests/data/demo, imported as `make demo`
      does) plus a small generated GPU capture of two ranks (kernels,
      copies, collectives, flows, instants, nvidia-smi samples) under two
      more steps, analysed (`BIN analyze`), so that every table of the
      schema holds rows.  Run from the repository root.
  hostile_db.py loosen SEED.db OUT.db
      OUT.db: SEED.db's rows, application id and schema version under the
      same schema less every NOT NULL, UNIQUE and PRIMARY KEY but
      INTEGER PRIMARY KEY (WITHOUT ROWID tables become rowid tables), so
      that any column may hold anything.
  hostile_db.py list LOOSE.db [KIND...]
      Prints "TABLE COLUMN KIND" for each mutant of LOOSE.db: per column
      of every table with rows, one per KIND (default: mixed).  KIND is
      one of those below (every row the same value), "mixed" (row i gets
      the i-th kind, in turn) or "all" (mixed and each kind).
  hostile_db.py mutate LOOSE.db OUT.db TABLE COLUMN KIND
      OUT.db: a copy of LOOSE.db with that mutation applied.
  hostile_db.py many LOOSE.db DIR [KIND...]
      Every mutant of `list` into DIR/NNNN.db, and DIR/index (one line
      "NNNN TABLE COLUMN KIND" each).

The kinds, whatever the column's declared type: null, text ('x'), num
('12abc', text that begins as a number), blob (X'00ff00', bytes with NUL
in them), real (1.5), neg (-1), min and max (the int64 limits), far (an
id that points nowhere, 987654321), empty (''), huge (1e300) and zero (0,
which readers take for "none").  An INTEGER PRIMARY KEY holds distinct
integers only: there "mixed" makes each row's id its negative or one that
points nowhere (which readers must take), and neg, min, max, far and zero
move every id, or the first to 0 (which opening refuses).
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

KINDS = {
    "null": "NULL",
    "text": "'x'",
    "num": "'12abc'",
    "blob": "X'00ff00'",
    "real": "1.5",
    "neg": "-1",
    "min": "-9223372036854775808",
    "max": "9223372036854775807",
    "far": "987654321",
    "empty": "''",
    "huge": "1e300",
    "zero": "0",
}
ORDER = list(KINDS)

# The GPU capture's window: inside the demo's sysstat samples (which end at
# 1795350518 s), after its last step.
T0_NS = 1795350517000000000


def kineto(rank, world, slow):
    """A Kineto trace (times in us from T0) of one rank of a DDP step: two
    profiler steps, each an aten::mm that launches a GEMM, an all-reduce
    whose NCCL kernel waits for the slower rank, and a D2H copy that the
    host waits for; flows tie launches to their kernels."""
    ev = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "python3"}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "main"}},
        {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    ]
    corr = 100 * (rank + 1)
    t = 10.0
    for step in range(2):
        dur = 400.0 * slow
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (step + 1),
                   "pid": 1, "tid": 1, "ts": t, "dur": dur + 300})
        ops = [("aten::mm", "cudaLaunchKernel", "kernel", "sm80_xmma_gemm_bf16", 120 * slow),
               ("nccl:all_reduce", "cudaLaunchKernel", "kernel",
                "ncclKernel_AllReduce_RING_LL_Sum_float", 150),
               ("aten::copy_", "cudaMemcpyAsync", "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)",
                40)]
        s = t + 5
        for op, api, cat, kname, kdur in ops:
            corr += 1
            ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": s,
                       "dur": 60, "args": {"External id": corr}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": 1, "tid": 1,
                       "ts": s + 5, "dur": 20, "args": {"correlation": corr}})
            ks = s + 30
            args = {"device": 0, "stream": 7, "correlation": corr, "External id": corr}
            if cat == "gpu_memcpy":
                args["bytes"] = 4096
            ev.append({"ph": "X", "cat": cat, "name": kname, "pid": 0, "tid": 7, "ts": ks,
                       "dur": kdur, "args": args})
            ev.append({"ph": "s", "id": corr, "pid": 1, "tid": 1, "ts": s + 6, "cat": "ac2g",
                       "name": "ac2g"})
            ev.append({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": ks, "cat": "ac2g",
                       "name": "ac2g", "bp": "e"})
            s = ks + kdur + 5
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1,
                   "tid": 1, "ts": s, "dur": 30})
        ev.append({"ph": "i", "s": "t", "name": "checkpoint", "pid": 1, "tid": 1, "ts": s + 40,
                   "args": {"step": step}})
        ev.append({"ph": "C", "name": "memory", "pid": 1, "ts": s, "args": {"bytes": 1000 * step}})
        t += dur + 400
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "traceEvents": ev}


def write_capture(d):
    """The GPU capture's files in d; returns the import commands' arguments."""
    with open(os.path.join(d, "workflow.jsonl"), "w") as f:
        for i, step in enumerate(("gpu", "ddp")):
            start = T0_NS + i * 200000000
            f.write(json.dumps({"step": step, "start_ns": start, "end_ns": start + 150000000,
                                "host": "vm"}) + "\n")
    runs = [["--workflow", "demo", os.path.join(d, "workflow.jsonl")]]
    for i, (step, ranks) in enumerate((("gpu", 1), ("ddp", 2))):
        files = []
        for r in range(ranks):
            path = os.path.join(d, "%s_rank%d.json" % (step, r))
            with open(path, "w") as f:
                json.dump(kineto(r, ranks, 1.0 + r), f)
            files.append(path)
        off = (T0_NS + i * 200000000) // 1000 + 1000
        runs.append(["--workflow", "demo", "--step", step, "--host", "vm",
                     "--time-offset", "%dus" % off] + files)
    nv = os.path.join(d, "nvsmi.csv")
    with open(nv, "w") as f:
        f.write("timestamp, index, name, utilization.gpu [%], utilization.memory [%],"
                " memory.used [MiB], memory.total [MiB]\n")
        for k in range(40):
            ns = T0_NS + k * 10000000
            sec, frac = divmod(ns, 1000000000)
            stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(sec))
            f.write("%s.%03d, 0, GPU, %d %%, %d %%, 100 MiB, 1000 MiB\n"
                    % (stamp, frac // 1000000, (k * 37) % 100, (k * 11) % 100))
    runs.append(["--host", "vm", nv])
    return runs


def seed(binary, out):
    here = os.getcwd()
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run(["bash", "tests/data/demo/import.sh", binary, out], check=True,
                   stdout=subprocess.DEVNULL)
    env = dict(os.environ, TZ="UTC")
    with tempfile.TemporaryDirectory() as d:
        for args in write_capture(d):
            subprocess.run([binary, "import", "-o", out] + args, check=True, env=env,
                           stdout=subprocess.DEVNULL, cwd=here)
    subprocess.run([binary, "analyze", out], check=True, stdout=subprocess.DEVNULL)


def loose_sql(sql):
    s = sql.replace(" NOT NULL", "").replace(" UNIQUE", "").replace(" TEXT PRIMARY KEY", " TEXT")
    if s.endswith("WITHOUT ROWID"):
        s = s[: s.rindex(", PRIMARY KEY")] + ")"
    return s


def loosen(src, out):
    if os.path.exists(out):
        os.unlink(out)
    a = sqlite3.connect(src)
    objs = a.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                     " ORDER BY type = 'table' DESC, rowid").fetchall()
    app = a.execute("PRAGMA application_id").fetchone()[0]
    ver = a.execute("PRAGMA user_version").fetchone()[0]
    a.close()
    b = sqlite3.connect(out, isolation_level=None)
    b.execute("ATTACH ? AS src", (src,))
    b.execute("BEGIN")
    for kind, name, sql in objs:
        if kind == "table":
            b.execute(loose_sql(sql))
            b.execute('INSERT INTO main."%s" SELECT * FROM src."%s"' % (name, name))
        elif kind == "index" and not name.startswith("sqlite_autoindex"):
            b.execute(sql)
        elif kind == "view":
            b.execute(sql)
    b.execute("COMMIT")
    b.execute("DETACH src")
    b.execute("PRAGMA application_id = %d" % app)
    b.execute("PRAGMA user_version = %d" % ver)
    b.close()


def columns(db):
    """(table, column) of every table with rows, in schema order."""
    c = sqlite3.connect(db)
    out = []
    for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"):
        if not c.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0]:
            continue
        for row in c.execute('PRAGMA table_info("%s")' % t).fetchall():
            out.append((t, row[1], row[5] == 1 and row[2].upper() == "INTEGER"))
    c.close()
    return out


def mutants(db, kinds):
    if not kinds:
        kinds = ["mixed"]
    if "all" in kinds:
        kinds = ["mixed"] + ORDER
    for k in kinds:
        if k not in KINDS and k != "mixed":
            sys.exit("hostile_db.py: unknown kind '%s'" % k)
    out = []
    for t, col, rowid in columns(db):
        for k in kinds:
            # an INTEGER PRIMARY KEY holds integers only
            if rowid and k not in ("neg", "min", "max", "far", "zero", "mixed"):
                continue
            out.append((t, col, k))
    return out


def mutate_conn(c, table, col, kind, rowid):
    if kind == "mixed":
        kinds = ORDER
        case = " ".join("WHEN %d THEN %s" % (i, KINDS[k]) for i, k in enumerate(kinds))
        n = len(kinds)
        if rowid:
            # ids are unique: give each row a distinct hostile id, one
            # that opening takes
            c.execute('UPDATE "%s" SET "%s" = CASE rowid %% 2 WHEN 0 THEN -rowid'
                      ' ELSE 987654321 + rowid END' % (table, col))
            return
        c.execute('UPDATE "%s" SET "%s" = CASE rowid %% %d %s END' % (table, col, n, case))
    elif rowid:
        if kind == "far":
            c.execute('UPDATE "%s" SET "%s" = "%s" + 987654321' % (table, col, col))
        elif kind == "neg":
            c.execute('UPDATE "%s" SET "%s" = -"%s"' % (table, col, col))
        elif kind == "min":
            c.execute('UPDATE "%s" SET "%s" = -9223372036854775807 + rowid' % (table, col))
        elif kind == "max":
            c.execute('UPDATE "%s" SET "%s" = 9223372036854775807 - rowid' % (table, col))
        elif kind == "zero":
            c.execute('UPDATE "%s" SET "%s" = 0 WHERE rowid = (SELECT min(rowid) FROM "%s")'
                      % (table, col, table))
    else:
        c.execute('UPDATE "%s" SET "%s" = %s' % (table, col, KINDS[kind]))


def is_rowid(c, table, col):
    for row in c.execute('PRAGMA table_info("%s")' % table):
        if row[1] == col:
            return row[5] == 1 and row[2].upper() == "INTEGER"
    sys.exit("hostile_db.py: no column %s.%s" % (table, col))


def mutate(src, out, table, col, kind):
    shutil.copyfile(src, out)
    c = sqlite3.connect(out, isolation_level=None)
    mutate_conn(c, table, col, kind, is_rowid(c, table, col))
    c.close()


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd = argv[1]
    if cmd == "seed" and len(argv) == 4:
        seed(argv[2], argv[3])
    elif cmd == "loosen" and len(argv) == 4:
        loosen(argv[2], argv[3])
    elif cmd == "list" and len(argv) >= 3:
        for m in mutants(argv[2], argv[3:]):
            print(" ".join(m))
    elif cmd == "mutate" and len(argv) == 7:
        if argv[6] not in KINDS and argv[6] != "mixed":
            sys.exit("hostile_db.py: unknown kind '%s'" % argv[6])
        mutate(argv[2], argv[3], argv[4], argv[5], argv[6])
    elif cmd == "many" and len(argv) >= 4:
        os.makedirs(argv[3], exist_ok=True)
        with open(os.path.join(argv[3], "index"), "w") as idx:
            for i, (t, col, k) in enumerate(mutants(argv[2], argv[4:])):
                name = "%04d" % i
                mutate(argv[2], os.path.join(argv[3], name + ".db"), t, col, k)
                idx.write("%s %s %s %s\n" % (name, t, col, k))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
