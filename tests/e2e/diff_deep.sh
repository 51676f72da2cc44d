#!/usr/bin/env bash
# End-to-end tests of `grademl-tui diff` and the explorer's `:diff` on name
# paths that are deep and long (issue 26, item 3).  The diff matches
# operators by their name path, and the paths of 500 leaves under 100
# nested names of 64 KiB are 3.2 GB once joined; the diff must hold each
# path once, by index, and spell out only a cut end of it.  On traces
# written by tests/tools/make_deep_names.py, each imported twice (every
# duration x1 into A, x2 into B):
#
#   a. the issue's trace (100 nested names of 64 KiB, each ending in an
#      escape sequence, 500 leaves: 6.6 MB): `diff` as text and as JSON and
#      `:diff` headless each exit 0 within 100 MB peak RSS; all 601
#      operators are rows; the JSON keeps each long name whole and cuts
#      the paths above it as the man page says (a leaf: its own name, 100
#      names left out); the text and the screen show the escape as text
#      and no text row runs past the name column;
#   b. scaling: 100 nested names of 4 KiB (one name, repeated) over 500
#      leaves against 1000 over 5000, ten times the trace and deeper than
#      the 256 names a path keeps: for the text and the JSON the peak RSS
#      at 10x at most 2x the 1x one's, for `:diff`, whose table holds its
#      rows, 2.5x (and within 100 MB), the time (the best of three runs)
#      at most 25x.
#
# Every run has a 60 s timeout and a 2 GiB address-space limit, so that a
# diff that joins the paths as strings fails at once and alone on a shared
# machine.  A sanitizer's build (make SANITIZE=1) runs without the limit,
# which AddressSanitizer cannot start under, and its memory is not judged
# (its quarantine keeps what was freed): there the runs must end well and
# the time scale.  Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME
# (why)", then "N passed, M failed[, K skipped]"; exits 1 when any check
# failed.  Needs: bash 5 (EPOCHREALTIME), python3, /usr/bin/time, timeout.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init diff_deep
e2e_home
e2e_need_bin
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3
GEN=$ROOT/tests/tools/make_deep_names.py
MAX_KB=$((100 * 1024))
SAN=0
grep -qa __asan_init "$BIN" && SAN=1

if [ ! -x /usr/bin/time ] || ! command -v timeout >/dev/null || [ -z "${EPOCHREALTIME:-}" ]; then
	skip "deep name paths" "needs /usr/bin/time, timeout and bash 5"
	summary
	exit 0
fi

# pair NAME GENERATOR-ARGS...: NAME-a.db (durations x1) and NAME-b.db (x2)
# in TMP; fails with a line.
pair() {
	local name=$1 run
	shift
	for run in a:1 b:2; do
		if ! "$PY" "$GEN" "$@" --scale "${run#*:}" -o "$TMP/$name.json" ||
			! "$BIN" import -o "$TMP/$name-${run%:*}.db" "$TMP/$name.json" >/dev/null \
				2>"$TMP/err"; then
			not_ok "$name: the trace" "$(head -c 300 "$TMP/err")"
			return 1
		fi
	done
	rm -f "$TMP/$name.json"
}

# run OUT CMD...: CMD in TMP under the caps, its stdout in TMP/OUT; sets rc,
# secs (wall) and kb (peak RSS, KiB).
run() {
	local out=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	(
		cd "$TMP" || exit 1
		[ $SAN = 1 ] || ulimit -v $((2 << 20))
		exec /usr/bin/time -f %M -o "$TMP/rss" timeout 60 "$@"
	) >"$TMP/$out" 2>"$TMP/err"
	rc=$?
	t1=$EPOCHREALTIME
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	kb=$(tail -n 1 "$TMP/rss" 2>/dev/null)
	case $kb in '' | *[!0-9]*) kb=0 ;; esac
}

# within NAME: rc 0 and kb within MAX_KB, said as a line; 0 when so.
within() {
	if [ $SAN = 1 ] && [ "$rc" = 0 ]; then
		ok "$1: exit 0 ($((kb / 1024)) MiB, not judged under a sanitizer), $secs s"
		return 0
	fi
	if [ "$rc" = 0 ] && [ "$kb" -gt 0 ] && [ "$kb" -le $MAX_KB ]; then
		ok "$1: exit 0, peak RSS $((kb / 1024)) MiB <= 100 MiB, $secs s"
		return 0
	fi
	not_ok "$1" "exit $rc, peak RSS $((kb / 1024)) MiB, $secs s: $(head -c 200 "$TMP/err")"
	return 1
}

# ---- a. the issue's trace ----

if pair deep --depth 100 --leaves 500 --escape; then
	run deep.txt "$BIN" diff deep-a.db deep-b.db --limit 0
	if within "deep: diff (text)"; then
		long=$(awk 'length > 200' "$TMP/deep.txt" | wc -l)
		if grep -qF '601 names, 0 added, 0 removed' "$TMP/deep.txt" &&
			[ "$(grep -c '^ *1 *1 ' "$TMP/deep.txt")" = 601 ] && [ "$long" = 0 ] &&
			! grep -q $'\x1b' "$TMP/deep.txt" && grep -qF 'nnnn\e[31m' "$TMP/deep.txt"; then
			ok "deep: the text has all 601 rows, each within the name column, the escape as text"
		else
			not_ok "deep: text rows" "$long rows past 200 bytes: $(grep -F 'names,' "$TMP/deep.txt" |
				head -c 300 | cat -v)"
		fi
	fi
	run deep.json "$BIN" diff deep-a.db deep-b.db --format json
	if within "deep: diff --format json"; then
		why=$("$PY" - "$TMP/deep.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
op = d["levels"][1]
rows = op["rows"]
bad = []
if op["names"] != 601 or len(rows) != 601:
    bad.append("%d names, %d rows" % (op["names"], len(rows)))
leaves = [r for r in rows if r["path"][-1].startswith("leaf_")]
longs = [r for r in rows if r["path"][-1].startswith("level")]
if len(leaves) != 500 or len(longs) != 100:
    bad.append("%d leaves, %d long names" % (len(leaves), len(longs)))
for r in leaves:
    if (len(r["path"]) != 1 or r.get("path_left_out") != 100
            or r["name"] != "\u2026 > " + r["path"][0]):
        bad.append("leaf %r: %r, %r left out" % (r["name"][:40], r["path"], r.get("path_left_out")))
for r in longs:
    level = int(r["path"][0][5:r["path"][0].index(":")])
    want = ("\u2026 > " if level else "") + r["path"][0]
    if (len(r["path"]) != 1 or len(r["path"][0]) != 65536 or r["name"] != want
            or not r["path"][0].endswith("\x1b[31m") or r.get("path_left_out", 0) != level):
        bad.append("level %d: %d names, the first %d long, %r left out"
                   % (level, len(r["path"]), len(r["path"][0]), r.get("path_left_out")))
for r in rows:
    if r["b"]["total_ns"] != 2 * r["a"]["total_ns"] or r["diff_ns"] != r["a"]["total_ns"]:
        bad.append("%r: %r against %r" % (r["name"][:40], r["a"], r["b"]))
print("; ".join(bad[:3]))
EOF
		)
		if [ -z "$why" ]; then
			ok "deep: the JSON has all 601 rows; long names whole, the paths above them cut and counted"
		else
			not_ok "deep: JSON rows" "$why"
		fi
	fi
	printf 'type :diff deep-b.db\nEnter\ndump\n' >"$TMP/deep.keys"
	run deep.screen "$BIN" --keys deep.keys --dump deep-screen.txt --size 80x24 deep-a.db
	if within "deep: :diff headless"; then
		if grep -qF ':diff deep-b.db: makespan' "$TMP/deep-screen.txt" &&
			grep -qE ' 601 rows *$' "$TMP/deep-screen.txt" &&
			! grep -q $'\x1b' "$TMP/deep-screen.txt" &&
			grep -qF 'nnnn\e[31m' "$TMP/deep-screen.txt"; then
			ok "deep: :diff shows 601 rows, the escape as text"
		else
			not_ok "deep: :diff screen" "$(head -n 4 "$TMP/deep-screen.txt" | cut -c1-80 |
				tr '\n' '|' | cat -v)"
		fi
	fi
fi

# ---- b. scaling: 1x against 10x ----

# best N OUT CMD...: run N times; secs the least, kb the most.
best() {
	local n=$1 i best_secs="" best_kb=0 worst_rc=0
	shift
	for ((i = 0; i < n; i++)); do
		run "$@"
		[ "$rc" = 0 ] || worst_rc=$rc
		[ "$kb" -gt "$best_kb" ] && best_kb=$kb
		if [ -z "$best_secs" ] || awk -v a="$secs" -v b="$best_secs" 'BEGIN { exit !(a < b) }'; then
			best_secs=$secs
		fi
		[ "$rc" = 0 ] || break
	done
	rc=$worst_rc secs=$best_secs kb=$best_kb
}

if pair x1 --depth 100 --leaves 500 --same-name --name-bytes 4096 &&
	pair x10 --depth 1000 --leaves 5000 --same-name --name-bytes 4096; then
	printf 'type :diff x1-b.db\nEnter\ndump\n' >"$TMP/x1.keys"
	printf 'type :diff x10-b.db\nEnter\ndump\n' >"$TMP/x10.keys"
	for what in text json tui; do
		declare -A fig=()
		for x in x1 x10; do
			case $what in
			text) best 3 "$x.out" "$BIN" diff "$x-a.db" "$x-b.db" --limit 0 ;;
			json) best 3 "$x.out" "$BIN" diff "$x-a.db" "$x-b.db" --format json ;;
			tui) best 3 "$x.out" "$BIN" --keys "$x.keys" --dump "$x-screen.txt" --size 80x24 \
				"$x-a.db" ;;
			esac
			fig[$x]="$rc $secs $kb"
		done
		read -r rc1 s1 kb1 <<<"${fig[x1]}"
		read -r rc10 s10 kb10 <<<"${fig[x10]}"
		if [ "$rc1" != 0 ] || [ "$rc10" != 0 ]; then
			not_ok "scaling, $what" "exit $rc1 at 1x, $rc10 at 10x: $(head -c 200 "$TMP/err")"
			continue
		fi
		line="peak RSS $((kb1 / 1024)) -> $((kb10 / 1024)) MiB, time $s1 -> $s10 s"
		[ $SAN = 0 ] || line="$line (memory not judged under a sanitizer)"
		# the explorer's table holds every row it shows (up to 100,000) and
		# so grows with them, 1.9x here before the per-step columns; the
		# text and the JSON stream theirs
		limit=$((2 * kb1))
		[ "$what" = tui ] && limit=$((5 * kb1 / 2))
		if { [ $SAN = 1 ] || { [ "$kb10" -le "$limit" ] && [ "$kb10" -le $MAX_KB ]; }; } &&
			awk -v a="$s1" -v b="$s10" 'BEGIN { exit !(b <= 25 * a) }'; then
			ok "scaling, $what: 10x the trace, $line"
		else
			not_ok "scaling, $what" "10x the trace: $line (at most $((limit * 10 / kb1 / 10)).$((limit * 10 / kb1 % 10))x the memory, 25x the time)"
		fi
	done
fi

summary
