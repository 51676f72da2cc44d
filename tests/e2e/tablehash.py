#!/usr/bin/env python3
"""One line per table of a trace.db: its name and the SHA-256 of its
schema and rows.  Rows are read in rowid order (the order the store wrote
them), or sorted by every column for a table without rowids; values are
hashed by type and exact value (repr of a float round-trips), so two files
that hash the same hold the same tables row for row.  SQLite's internal
tables (sqlite_*) are left out, and so are the wall-clock times an import
stamps (meta's created_at, updated_at and analyzed_at, sources.imported_at):
each must read as a UTC time, and is hashed as "(time)"; and meta's
tool_version (the VERSION file's), hashed as "(version)".

    python3 tests/e2e/tablehash.py trace.db
"""
import hashlib
import sqlite3
import re
import sys

CLOCK = re.compile(rb"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")


def unclock(row, at):
    """row with its value at index at, a wall-clock time, as "(time)"."""
    if not isinstance(row[at], bytes) or not CLOCK.match(row[at]):
        sys.exit("tablehash.py: %r is not a UTC time" % (row[at],))
    return row[:at] + (b"(time)",) + row[at + 1:]


def main():
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    db.text_factory = bytes
    tables = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
        " AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    for name, sql in tables:
        h = hashlib.sha256(sql)
        q = 'SELECT * FROM "%s"' % name.decode()
        if b"WITHOUT ROWID" in sql.upper():
            cols = db.execute(q + " LIMIT 0").description
            q += " ORDER BY " + ", ".join(str(i + 1) for i in range(len(cols)))
        else:
            q += " ORDER BY rowid"
        cur = db.execute(q)
        cols = [d[0] for d in cur.description]
        n = 0
        for row in cur:
            if name == b"meta" and row[0] in (b"created_at", b"updated_at", b"analyzed_at"):
                row = unclock(row, 1)
            elif name == b"meta" and row[0] == b"tool_version":
                row = (row[0], b"(version)")
            elif name == b"sources":
                row = unclock(row, cols.index("imported_at"))
            h.update(repr(tuple((type(v).__name__, v) for v in row)).encode())
            h.update(b"\n")
            n += 1
        print("%s %d %s" % (name.decode(), n, h.hexdigest()))
    # indexes and views are schema too
    h = hashlib.sha256()
    for row in db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"
                          " WHERE type != 'table' ORDER BY type, name"):
        h.update(repr(row).encode())
    print("(schema) - %s" % h.hexdigest())


if __name__ == "__main__":
    main()
