#!/usr/bin/env bash
# End-to-end tests of failed and interrupted imports: nothing lost, nothing
# left behind (model/store/store.c says how).
#
#   a. an append into the demo's trace.db that fails part-way: killed with
#      SIGKILL, stopped by SIGTERM, SIGINT or SIGHUP, the disk full (a small
#      tmpfs, as root), a file size limit (ulimit -f): afterwards `report`,
#      `report --format json`, `query` and the explorer (headless) print
#      exactly what they printed before, at once and without an error, on
#      the file and on a plain `cp` of it, and integrity_check says ok;
#   b. a first import stopped by SIGTERM, SIGINT or SIGHUP leaves no hidden
#      .NAME.db.grademl.XXXXXX file; one killed with SIGKILL does, and the next
#      import into that directory removes it; a live import's hidden file
#      survives another import's sweep, and that import still succeeds.
#   c. kill -9 at random moments of an append (half of them once trace.db
#      itself is written: the checkpoint that copies a commit into it) and
#      of analyze: trace.db with what is left beside it passes
#      integrity_check and holds the rows of before or of after, table by
#      table; so does a copy of trace.db alone, unless the kill came after
#      the commit, during its checkpoint: then a -wal holding the commit is
#      left beside it, as the man page says; and once the next command has
#      opened it (report), trace.db alone reads as before or after and the
#      -wal is gone.
#
# Each kill in a and b waits until the import has written some MB (its -wal, journal
# or hidden file has grown, polled every millisecond), not a fixed time, so
# it lands mid-way on a loaded machine too.  Prints "ok - NAME", "not ok - NAME (why)" or
# "skip - NAME (why)", then a summary; exits 1 when any check failed.
# Needs: bash, python3, sqlite3 (the CLI), gzip, cmp.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init interrupt
DEMO=$ROOT/tests/data/demo
KEYS=$ROOT/tests/e2e/keys/drill-3.keys

MNT=""
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

for tool in python3 sqlite3 gzip cmp; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool $tool" "not installed"
		summary
		exit 1
	fi
done
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3

# spawn CMD...: runs CMD in the background with SIGINT and SIGQUIT at their
# defaults (a script's background jobs ignore them); its pid in $!.
spawn() {
	"$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
}

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# hidden DIR NAME: the hidden files of imports into DIR/NAME, one a line.
hidden() {
	ls -A "$1" | grep -E "^\\.$2\\.grademl\\.[A-Za-z0-9]{6}\$"
}

# kill_when_written PID DB BYTES SIG: sends SIG to PID once DB, its -wal and
# -journal and its hidden files hold BYTES more than now; returns 1 when PID
# ended first, 2 when 120 s passed.  Polls every millisecond (a 30 MB
# import writes for a few tens of milliseconds only).
kill_when_written() {
	"$PY" - "$@" <<'EOF'
import os, re, signal, sys, time
pid, db, want, sig = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
d, base = os.path.split(db)
pat = re.compile(r"\.%s\.grademl\.[A-Za-z0-9]{6}$" % re.escape(base))

def written():
    n = 0
    for f in [db, db + "-wal", db + "-journal"] + [
            os.path.join(d, e) for e in os.listdir(d) if pat.match(e)]:
        try:
            n += os.stat(f).st_size
        except OSError:
            pass
    return n

def ended():
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True

want += written()
end = time.monotonic() + 120
while time.monotonic() < end:
    if ended():
        sys.exit(1)
    if written() >= want:
        os.kill(pid, getattr(signal, "SIG" + sig))
        sys.exit(0)
    time.sleep(0.001)
sys.exit(2)
EOF
}

# snapshot DB OUT: what every command prints about DB, into OUT/, run from
# DB's directory so that the path they print is the same for a copy.
# Returns non-zero, with OUT/why, when a command fails or writes to stderr.
snapshot() {
	local dir base out=$2 rc=0
	dir=$(dirname "$1")
	base=$(basename "$1")
	mkdir -p "$out"
	: >"$out/why"
	(
		cd "$dir" || exit 1
		timeout 120 "$BIN" report "$base" >"$out/report.txt" 2>"$out/e1" || echo "report: exit $?" >>"$out/why"
		timeout 120 "$BIN" report --format json "$base" >"$out/report.json" 2>"$out/e2" ||
			echo "report --format json: exit $?" >>"$out/why"
		timeout 120 "$BIN" query "$base" 'phases | by kind | top 20 count' >"$out/query.txt" 2>"$out/e3" ||
			echo "query: exit $?" >>"$out/why"
		timeout 120 "$BIN" --keys "$KEYS" --dump - "$base" >"$out/explorer.txt" 2>"$out/e4" ||
			echo "explorer: exit $?" >>"$out/why"
		sqlite3 -readonly "$base" 'PRAGMA integrity_check' >"$out/integrity.txt" 2>&1
	)
	cat "$out"/e[1-4] >>"$out/why"
	[ "$(cat "$out/integrity.txt")" = ok ] || echo "integrity_check: $(head -c 200 "$out/integrity.txt")" >>"$out/why"
	[ -s "$out/why" ] && rc=1
	return $rc
}

# reads_as_before DB: DB (and then a cp of it taken first) print what the
# demo's trace.db printed before; echoes why not.
reads_as_before() {
	local db=$1 copy=$TMP/copy/$(basename "$1") why="" which f
	rm -rf "$TMP/copy" "$TMP/after"
	mkdir -p "$TMP/copy"
	cp "$db" "$copy"
	for which in file copy; do
		f=$db
		[ "$which" = copy ] && f=$copy
		if ! snapshot "$f" "$TMP/after/$which"; then
			why+="$which: $(head -c 300 "$TMP/after/$which/why" | tr '\n' '|'); "
			continue
		fi
		for out in report.txt report.json query.txt explorer.txt; do
			cmp -s "$TMP/before/$out" "$TMP/after/$which/$out" ||
				why+="$which: $out differs ($(diff "$TMP/before/$out" "$TMP/after/$which/$out" | sed -n 2p | head -c 120)); "
		done
	done
	echo "$why"
}

# left_beside DB: what a failed import may not leave beside DB.
left_beside() {
	local f out=""
	for f in "$1-wal" "$1-shm" "$1-journal"; do
		[ -e "$f" ] && out+="$(basename "$f") "
	done
	[ -n "$(hidden "$(dirname "$1")" "$(basename "$1")")" ] && out+="a hidden file "
	echo "$out"
}

# ---------------------------------------------------------------------------
# inputs: the demo's trace.db and a trace big enough to kill mid-way

if ! bash "$DEMO/import.sh" "$BIN" "$TMP/demo.db" 2>"$TMP/err"; then
	not_ok "the demo's trace.db" "import.sh failed: $(head -c 300 "$TMP/err")"
	summary
	exit 1
fi
BIG=$TMP/big.json
if ! "$PY" tests/bench/make_big_trace.py --mb 30 -o "$BIG" >/dev/null 2>"$TMP/err"; then
	not_ok "a big trace" "make_big_trace.py failed: $(head -c 300 "$TMP/err")"
	summary
	exit 1
fi
mkdir -p "$TMP/base"
cp "$TMP/demo.db" "$TMP/base/t.db"
if ! snapshot "$TMP/base/t.db" "$TMP/before"; then
	not_ok "the demo's trace.db reads" "$(head -c 300 "$TMP/before/why")"
	summary
	exit 1
fi
# how much an append of the big trace adds to the file, and how long it takes
cp "$TMP/demo.db" "$TMP/base/grown.db"
t0=$(date +%s%N)
"$BIN" import -o "$TMP/base/grown.db" "$BIG" 2>/dev/null
APPEND_NS=$(($(date +%s%N) - t0))
GROWTH=$(($(size "$TMP/base/grown.db") - $(size "$TMP/demo.db")))

# ---------------------------------------------------------------------------
# a. an append that fails part-way

# killed_append SIG: appends the big trace to a copy of the demo's trace.db
# and sends SIG once it has written 4 MB.
killed_append() {
	local sig=$1 name="append killed with SIG$1 mid-way" dir=$TMP/a-$1 why="" rc
	mkdir -p "$dir"
	cp "$TMP/demo.db" "$dir/t.db"
	spawn "$BIN" import -o "$dir/t.db" "$BIG" 2>"$dir/err"
	local pid=$!
	kill_when_written "$pid" "$dir/t.db" $((4 << 20)) "$sig"
	rc=$?
	if [ "$rc" != 0 ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		not_ok "$name" "the import $([ "$rc" = 1 ] && echo "ended" || echo "wrote nothing in 120 s") before it could be killed"
		return
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	local want=$(($(kill -l "$sig") + 128))
	[ "$rc" = "$want" ] || why+="exit $rc, want $want (died of SIG$sig); "
	local left
	if [ "$sig" != KILL ]; then
		[ "$(wc -l <"$dir/err")" = 1 ] && grep -q "nothing imported" "$dir/err" ||
			why+="stderr: '$(head -c 200 "$dir/err" | tr '\n' '|')'; "
		left=$(left_beside "$dir/t.db")
		[ -n "$left" ] && why+="left beside: $left; "
	fi
	why+=$(reads_as_before "$dir/t.db")
	left=$(left_beside "$dir/t.db")
	[ -n "$left" ] && why+="still beside after the reads: $left; "
	if [ -z "$why" ]; then
		ok "$name: every command reads as before, a cp of it too"
	else
		not_ok "$name" "${why%; }"
	fi
}
for sig in KILL TERM INT HUP; do
	killed_append "$sig"
done

# failed_append NAME DIR CMD...: CMD, an append into DIR/t.db (a copy of the
# demo's), must fail with exit 2 and one line, and DB read as before.
failed_append() {
	local name=$1 dir=$2 why="" rc
	shift 2
	"$@" 2>"$dir/err"
	rc=$?
	[ "$rc" = 2 ] || why+="exit $rc, want 2; "
	[ "$(wc -l <"$dir/err")" = 1 ] || why+="stderr: '$(head -c 200 "$dir/err" | tr '\n' '|')'; "
	local left
	left=$(left_beside "$dir/t.db")
	[ -n "$left" ] && why+="left beside: $left; "
	why+=$(reads_as_before "$dir/t.db")
	if [ -z "$why" ]; then
		ok "$name: exit 2, every command reads as before, a cp of it too"
	else
		not_ok "$name" "${why%; }"
	fi
}

# RLIMIT_FSIZE: a write past the limit fails (EFBIG) rather than killing
# the import with SIGXFSZ.
dir=$TMP/a-fsize
mkdir -p "$dir"
cp "$TMP/demo.db" "$dir/t.db"
failed_append "append over a file size limit (ulimit -f 4096)" "$dir" \
	bash -c 'ulimit -f 4096 && exec "$@"' - "$BIN" import -o "$dir/t.db" "$BIG"

# A full disk: a tmpfs too small for the -wal, then one where the -wal fits
# but not the room the commit claims for the checkpoint.
MNT=$TMP/mnt
mkdir -p "$MNT"
demo_kb=$(($(size "$TMP/demo.db") / 1024))
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=$((demo_kb + 2048))k tmpfs "$MNT" 2>/dev/null; then
	MNT=""
	skip "append into a full disk (tmpfs)" "cannot mount a tmpfs here (needs root)"
else
	cp "$TMP/demo.db" "$MNT/t.db"
	failed_append "append into a full disk (tmpfs, the -wal does not fit)" "$MNT" \
		"$BIN" import -o "$MNT/t.db" "$BIG"
	umount "$MNT"
	if [ "$GROWTH" -gt $((4 << 20)) ] &&
		mount -t tmpfs -o size=$((demo_kb + GROWTH * 3 / 2 / 1024))k tmpfs "$MNT" 2>/dev/null; then
		cp "$TMP/demo.db" "$MNT/t.db"
		failed_append "append into a disk with room for the -wal, not for the checkpoint" \
			"$MNT" "$BIN" import -o "$MNT/t.db" "$BIG"
		grep -q "cannot grow" "$MNT/err" ||
			not_ok "that disk is found full before the commit" "stderr: $(head -c 200 "$MNT/err")"
		umount "$MNT"
	else
		not_ok "append into a full disk (tmpfs, the -wal fits)" "growth $GROWTH B, or no second mount"
	fi
	MNT=""
fi

# ---------------------------------------------------------------------------
# b. a first import: its hidden file

# killed_create SIG: a first import of the big trace, sent SIG once its
# hidden file holds 2 MB.
killed_create() {
	local sig=$1 dir=$TMP/b-$1 why="" rc
	mkdir -p "$dir"
	spawn "$BIN" import -o "$dir/t.db" "$BIG" 2>"$dir/err"
	local pid=$!
	kill_when_written "$pid" "$dir/t.db" $((2 << 20)) "$sig"
	rc=$?
	if [ "$rc" != 0 ]; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		echo "the import $([ "$rc" = 1 ] && echo ended || echo "wrote nothing in 120 s") before it could be killed; "
		return
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	[ "$rc" = $(($(kill -l "$sig") + 128)) ] || why+="exit $rc; "
	[ -e "$dir/t.db" ] && why+="t.db was created; "
	echo "$why"
}
for sig in TERM INT HUP; do
	why=$(killed_create "$sig")
	left=$(hidden "$TMP/b-$sig" t.db)
	[ -n "$left" ] && why+="left $left"
	if [ -z "$why" ]; then
		ok "first import stopped by SIG$sig: no hidden file left"
	else
		not_ok "first import stopped by SIG$sig" "${why%; }"
	fi
done

why=$(killed_create KILL)
dir=$TMP/b-KILL
stale=$(hidden "$dir" t.db)
[ -n "$stale" ] || why+="no hidden file after kill -9 (nothing to remove); "
"$BIN" import -o "$dir/t.db" "$DEMO/workflow.jsonl" 2>"$dir/err2" || why+="the next import failed: $(head -c 200 "$dir/err2"); "
left=$(hidden "$dir" t.db)
[ -n "$left" ] && why+="the next import left $left; "
[ "$(sqlite3 -readonly "$dir/t.db" 'SELECT count(*) FROM sources' 2>&1)" = 1 ] || why+="t.db does not hold the next import alone; "
if [ -z "$why" ]; then
	ok "first import killed with SIGKILL: the next import removes its hidden file"
else
	not_ok "first import killed with SIGKILL" "${why%; }"
fi

# A live import (waiting on a pipe for its input) keeps its hidden file
# while another import into the same path sweeps the dead one beside it.
dir=$TMP/b-live
mkdir -p "$dir"
mkfifo "$dir/fifo"
why=""
spawn timeout 120 "$BIN" import -o "$dir/t.db" --format chrome "$dir/fifo" 2>"$dir/err"
pid=$!
for ((i = 0; i < 12000; i++)); do
	[ -n "$(hidden "$dir" t.db)" ] && break
	sleep 0.01
done
live=$(hidden "$dir" t.db)
if [ -z "$live" ]; then
	why+="the live import made no hidden file; "
else
	: >"$dir/.t.db.grademl.dEaD00" # as a killed import leaves it: no lock held
	"$BIN" import -o "$dir/t.db" "$dir/missing.json" 2>/dev/null && why+="an import of a missing file succeeded; "
	[ -e "$dir/$live" ] || why+="the live import's $live was removed; "
	[ -e "$dir/.t.db.grademl.dEaD00" ] && why+="the dead .t.db.grademl.dEaD00 was kept; "
fi
gzip -dc "$DEMO/train.pt.trace.json.gz" >"$dir/fifo"
wait "$pid" 2>/dev/null
rc=$?
[ "$rc" = 0 ] || why+="the live import: exit $rc, $(head -c 200 "$dir/err"); "
n=$(sqlite3 -readonly "$dir/t.db" 'SELECT count(*) FROM phases' 2>&1)
[ "$n" -gt 0 ] 2>/dev/null || why+="the live import's t.db: '$n' phases; "
left=$(hidden "$dir" t.db)
[ -n "$left" ] && why+="left $left; "
if [ -z "$why" ]; then
	ok "a live import's hidden file survives another import's sweep, and it commits"
else
	not_ok "a live import's hidden file" "${why%; }"
fi

# ---------------------------------------------------------------------------
# c. kill -9 at any moment, the checkpoint after the commit included

# rows DB: "ok" and each table's row count, or what is wrong with DB (a
# copy: a -wal beside it is read, and may be checkpointed).
rows() {
	"$PY" - "$1" <<'EOF'
import sqlite3, sys
try:
    c = sqlite3.connect(sys.argv[1])
    ic = c.execute("PRAGMA integrity_check").fetchone()[0]
    if ic != "ok":
        print("integrity_check: " + " ".join(ic.split())[:100])
        sys.exit()
    names = [r[0] for r in c.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    print("ok " + " ".join("%s=%d" % (t, c.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0])
                           for t in names))
except Exception as e:
    print("cannot read: %s" % e)
EOF
}

# killed_at_random NAME RUNS WHEN OLD NEW CMD...: RUNS times, CMD on a copy
# of OLD (named @DB@ in CMD) killed with SIGKILL at a random moment: WHEN
# "written", 0 to 30 ms after trace.db itself starts being written once it
# has grown (the checkpoint), else when CMD ends; WHEN a duration in ns,
# uniformly within it.  Each time: the file as left, and a copy of it alone
# unless a -wal was left, read as OLD or NEW; after a report, the file alone
# does and no -wal is left.  The letters say what was seen: o (as before),
# n (as after), w (a copy alone torn, a -wal beside it).
killed_at_random() {
	local name=$1 runs=$2 when=$3 old=$4 new=$5 why="" i dir got seen="" wal
	shift 5
	local want_old want_new
	want_old=$(rows "$old")
	want_new=$(rows "$new")
	for ((i = 0; i < runs; i++)); do
		dir=$TMP/c-$i
		mkdir -p "$dir/copy"
		cp "$old" "$dir/t.db"
		"$PY" - "$when" "$dir/t.db" "${@//@DB@/$dir/t.db}" <<'EOF'
import os, random, signal, subprocess, sys, time
when, db, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
s0 = os.stat(db)
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if when == "written":
    prev = None
    while p.poll() is None:
        s = os.stat(db)
        if (prev and s.st_size > s0.st_size and s.st_size == prev.st_size and
                s.st_mtime_ns != prev.st_mtime_ns):
            time.sleep(random.uniform(0, 0.03))
            break
        prev = s
        time.sleep(0.0002)
else:
    time.sleep(random.uniform(0, int(when) / 1e9))
p.send_signal(signal.SIGKILL)
p.wait()
EOF
		wal=0
		[ -s "$dir/t.db-wal" ] && wal=1
		cp "$dir/t.db" "$dir/copy/t.db"
		got=$(rows "$dir/copy/t.db")
		if [ "$got" = "$want_old" ]; then
			seen+="o"
		elif [ "$got" = "$want_new" ]; then
			seen+="n"
		elif [ $wal = 1 ]; then
			seen+="w"
		else
			why+="run $i, a copy alone, no -wal left: ${got:0:160}; "
		fi
		mkdir -p "$dir/left"
		cp "$dir"/t.db* "$dir/left/"
		got=$(rows "$dir/left/t.db")
		[ "$got" = "$want_old" ] || [ "$got" = "$want_new" ] ||
			why+="run $i, the file as left, with its -wal: ${got:0:160}; "
		"$BIN" report "$dir/t.db" >/dev/null 2>&1
		cp "$dir/t.db" "$dir/copy/t.db"
		got=$(rows "$dir/copy/t.db")
		[ "$got" = "$want_old" ] || [ "$got" = "$want_new" ] ||
			why+="run $i, a copy alone after a report: ${got:0:160}; "
		[ ! -e "$dir/t.db-wal" ] || why+="run $i, the -wal stays after a report; "
		rm -rf "$dir"
	done
	if [ -z "$why" ]; then
		ok "$name: $runs kills; as left, copied alone (or with a -wal left) and after the next open, trace.db reads as before or after ($seen)"
	else
		not_ok "$name" "${why%; }"
	fi
}

killed_at_random "append killed -9 while trace.db is written" 5 written \
	"$TMP/demo.db" "$TMP/base/grown.db" "$BIN" import -o @DB@ "$BIG"
killed_at_random "append killed -9 at a random moment" 5 "$APPEND_NS" \
	"$TMP/demo.db" "$TMP/base/grown.db" "$BIN" import -o @DB@ "$BIG"
cp "$TMP/base/grown.db" "$TMP/base/analyzed.db"
t0=$(date +%s%N)
"$BIN" analyze "$TMP/base/analyzed.db" >/dev/null 2>&1
ANALYZE_NS=$(($(date +%s%N) - t0))
killed_at_random "analyze killed -9 while trace.db is written" 3 written \
	"$TMP/base/grown.db" "$TMP/base/analyzed.db" "$BIN" analyze @DB@
killed_at_random "analyze killed -9 at a random moment" 3 "$ANALYZE_NS" \
	"$TMP/base/grown.db" "$TMP/base/analyzed.db" "$BIN" analyze @DB@

summary
