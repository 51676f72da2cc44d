#!/usr/bin/env bash
# The explorer without a terminal: `grademl-tui --keys SCRIPT --dump FILE`
# on the bundled demo capture (imported as `make demo` does) and on a small
# generated Chrome trace with a counter track and a hostile phase name.
#
# Each tests/e2e/keys/NAME.keys runs at 80x24 and its dump (every `dump` in
# the script, then the final screen) must equal tests/expected/tui/NAME.txt
# (diff -u).  On top of the comparisons, checks that do not depend on the
# expected files: the screens are 80x24, search wraps, a 60x20 terminal is
# "too small" and 80x24 recovers, 80x23 and 80x20 are usable, 80x19 too small, `:save` writes the dump's text, --ascii and
# a non-UTF-8 locale give only ASCII bytes, an escape sequence in a phase name
# shows as visible text and no ESC byte reaches the dump, and bad usage (an
# unknown key, --size 0x0, a file that is not a trace.db) exits 2 with one line.
# On HTA's nccl_data sample (skipped without ../shared/samples): the
# profiler's bookkeeping is listed last and never selected, so `:kernels` at
# open lists kernels; a trace.db from before its kind opens.
#
# Prints "ok - NAME" / "not ok - NAME (why)" per check, then "N passed, M
# failed[, K regenerated]"; exits 1 when any check failed.
#
#   bash tests/e2e/tui_headless.sh                  (from anywhere)
#   GRADEML_BIN=build/san/grademl-tui bash tests/e2e/tui_headless.sh
#   GRADEML_E2E_REGEN=1 bash tests/e2e/tui_headless.sh   rewrites the expected
#       screens from the current binary (read the diff before committing).
# Needs: bash, python3, sqlite3 (the CLI), diff, cmp, grep.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT"
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init tui-headless
KEYS=$here/keys
EXPECTED=$ROOT/tests/expected/tui
REGEN=${GRADEML_E2E_REGEN:-}

# The prompt keeps a command history under $XDG_STATE_HOME (else ~/.local/state):
# keep it out of the real home, and start every run without one.
export HOME=$TMP/home XDG_STATE_HOME=$TMP/state
mkdir -p "$HOME" "$TMP/work"
export LC_ALL=C.UTF-8
unset NO_COLOR

e2e_need_bin
for tool in python3 sqlite3 diff cmp grep; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool $tool" "not installed"
		summary || exit 1
	fi
done

# ---- the databases ----

DEMO_DB=$TMP/demo.db
# The same import as `make demo`, with the same relative paths, so the
# details pane names the same source files.
if ! bash tests/data/demo/import.sh "$BIN" "$DEMO_DB" 2>"$TMP/err"; then
	not_ok "import the demo capture" "$(head -c 300 "$TMP/err")"
	summary || exit 1
fi

# A phase whose name holds OSC 0 (set the window title, ended by BEL) and
# CSI 2 J (erase the screen), with one child, and a counter track "mem".
FIX_DB=$TMP/fixture.db
cat >"$TMP/work/hostile.json" <<'EOF'
{"traceEvents": [
 {"name": "evil\u001b]0;title\u0007 name \u001b[2J end", "ph": "X", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
 {"name": "child", "ph": "X", "ts": 10, "dur": 20, "pid": 1, "tid": 1},
 {"name": "mem", "ph": "C", "ts": 0, "pid": 1, "args": {"bytes": 100}},
 {"name": "mem", "ph": "C", "ts": 50, "pid": 1, "args": {"bytes": 300}},
 {"name": "mem", "ph": "C", "ts": 90, "pid": 1, "args": {"bytes": 200}}
]}
EOF
if ! (cd "$TMP/work" && "$BIN" import -o "$FIX_DB" --workflow fixture --step s hostile.json) 2>"$TMP/err"; then
	not_ok "import hostile.json" "$(head -c 300 "$TMP/err")"
	summary || exit 1
fi

# ---- helpers ----

# run NAME DB [ARGS...]: runs keys/NAME.keys at 80x24 in $TMP/work; the dump
# goes to $TMP/NAME.txt.  Returns non-zero (after reporting) when it fails.
run() {
	local name=$1 db=$2 rc=0
	shift 2
	(cd "$TMP/work" && "$BIN" --keys "$KEYS/$name.keys" --dump "$TMP/$name.txt" \
		--size 80x24 "$@" "$db") >"$TMP/$name.out" 2>"$TMP/$name.err" </dev/null || rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$TMP/$name.err" ]; then
		not_ok "$name: runs" "exit $rc: $(head -c 300 "$TMP/$name.err")"
		return 1
	fi
	return 0
}

# compare NAME: $TMP/NAME.txt equals tests/expected/tui/NAME.txt.
compare() {
	local name=$1 want=$EXPECTED/$1.txt
	if [ "$REGEN" = 1 ]; then
		mkdir -p "$EXPECTED"
		cp "$TMP/$name.txt" "$want"
		regenerated
		echo "regenerated - $name (tests/expected/tui/$name.txt)"
	elif [ ! -e "$want" ]; then
		not_ok "$name: screen equals tests/expected/tui/$name.txt" "missing; run with GRADEML_E2E_REGEN=1"
	elif diff -u "$want" "$TMP/$name.txt" >"$TMP/$name.diff" 2>&1; then
		ok "$name: screen equals tests/expected/tui/$name.txt"
	else
		not_ok "$name: screen equals tests/expected/tui/$name.txt" \
			"diff: $(head -n 16 "$TMP/$name.diff" | tr '\n' '|')"
	fi
}

# screen NAME: run + compare.
screen() {
	local name=$1
	shift
	if run "$name" "$@"; then
		compare "$name"
	fi
}

# has FILE TEXT: FILE holds TEXT (fixed string).
has() {
	grep -qF -- "$2" "$1"
}

# esc_free FILE: FILE holds no ESC byte (0x1b).
esc_free() {
	! LC_ALL=C grep -q $'\x1b' "$1"
}

# ascii_only FILE: every byte of FILE is printable ASCII (or a newline).
ascii_only() {
	! LC_ALL=C grep -q '[^ -~]' "$1"
}

# ---- the screens ----

if run first-screen "$DEMO_DB"; then
	compare first-screen
	lines=$(wc -l <"$TMP/first-screen.txt")
	widest=$(wc -L <"$TMP/first-screen.txt")
	# the top's only row, demo, is passed: its two steps show
	if [ "$lines" -eq 24 ] && [ "$widest" -le 80 ] && head -n 1 "$TMP/first-screen.txt" | grep -q '^grademl-tui › demo$' &&
		grep -q '^+ train ' "$TMP/first-screen.txt" && grep -q '^+ infer ' "$TMP/first-screen.txt"; then
		ok "first-screen: 24 lines of at most 80 columns, opens in the workflow demo"
	else
		not_ok "first-screen: 24 lines of at most 80 columns, opens in the workflow demo" \
			"$lines lines, widest $widest"
	fi
fi

if run drill-3 "$DEMO_DB"; then
	compare drill-3
	crumbs=$(awk 'NR % 24 == 1' "$TMP/drill-3.txt" | tr '\n' '|')
	want='grademl-tui › demo|grademl-tui › demo › train › process CPU functions › thread 1|'
	want+='grademl-tui › demo › train › process CPU functions|grademl-tui › demo › train|grademl-tui › demo|'
	if [ "$crumbs" = "$want" ]; then
		ok "drill-3: Enter passes train's only children to thread 1; h goes back one level at a time"
	else
		not_ok "drill-3: Enter passes train's only children to thread 1; h goes back one level at a time" "breadcrumbs: $crumbs"
	fi
fi

if run sort-flip "$DEMO_DB"; then
	compare sort-flip
	# Rows of the first dump (duration ascending): the first is the shortest.
	first=$(sed -n 3p "$TMP/sort-flip.txt")
	last_step=$(sed -n 3,24p "$TMP/sort-flip.txt" | grep -n 'ProfilerStep#1 ' | cut -d: -f1)
	if has "$TMP/sort-flip.txt" '▲Duration' && [ "${first#  aten::zero_}" != "$first" ] &&
		[ "$last_step" = 8 ]; then
		ok "sort-flip: D again sorts by duration ascending (▲, longest last)"
	else
		not_ok "sort-flip: D again sorts by duration ascending (▲, longest last)" \
			"first row '$first', ProfilerStep#1 at row ${last_step:-none}"
	fi
fi

if run details "$DEMO_DB"; then
	compare details
	if has "$TMP/details.txt" '-- details --' &&
		has "$TMP/details.txt" ' path      /demo/train/process CPU functions/thread 1/ProfilerStep#2'; then
		ok "details: d shows the selected phase's path"
	else
		not_ok "details: d shows the selected phase's path"
	fi
	# attribution computed in memory (the demo has no cache): sar's cpu.util
	# split among the operators; ProfilerStep#2 ran in a second when no CPU
	# reached 95% (the busiest, cpu1, 94%): software-bound, as the measured
	# figures beside it say; a 2 us operator below, too short to keep
	if has "$TMP/details.txt" ' est. use  cpu ████▁ 87%' &&
		has "$TMP/details.txt" ' measured  cpu1.util 94% (peak 94%); cpu.util 68% (peak 68%)' &&
		has "$TMP/details.txt" ' bound by  software 100% of its 24.8 ms' &&
		grep -q '^+ ProfilerStep#2 .* sw 100% ' "$TMP/details.txt" &&
		has "$TMP/details.txt" ' est. use  none: no attributed metric'; then
		ok "details: resource attribution as bars, the bottleneck line and the tree's Bneck column"
	else
		not_ok "details: resource attribution as bars, the bottleneck line and the tree's Bneck column"
	fi
	# its attributed cpu use over its window: 24 buckets, mostly near full
	# (87% on average), as a sparkline
	spark=$(grep -o ' over time cpu [▁▂▃▄▅▆▇█]*  (0..100%)' "$TMP/details.txt" | head -n 1 |
		sed 's/ over time cpu \(.*\)  (0..100%)/\1/')
	if [ "$(printf '%s' "$spark" | wc -m)" = 24 ] &&
		[ "$(printf '%s' "$spark" | grep -o '█' | wc -l)" -ge 12 ]; then
		ok "details: attributed cpu use over the phase's window as a 24-cell sparkline"
	else
		not_ok "details: the usage-over-time sparkline" "got '$spark'"
	fi
fi

if run search "$DEMO_DB"; then
	compare search
	# The dumps: after Enter, N (wrapped to the last), n (wrapped to the
	# first), n n.  36: the operators below process CPU functions whose
	# name holds "zero" in any case, counted with sqlite3 below.
	msgs=$(awk 'NR % 24 == 0' "$TMP/search.txt" | tr '\n' '|')
	crumbs=$(awk 'NR % 24 == 1' "$TMP/search.txt" | sed 's/.*› //' | tr '\n' '|')
	phases=$(grep '^ phase ' "$TMP/search.txt" | awk '{print $2}' | tr '\n' ' ')
	want=$(sqlite3 "$DEMO_DB" "WITH RECURSIVE s(id) AS (SELECT p.id FROM phases_v p JOIN phases_v t
		ON t.id = p.parent_id WHERE p.name = 'process CPU functions' AND t.name = 'train'
		UNION ALL SELECT p.id FROM phases p JOIN s ON p.parent_id = s.id)
		SELECT count(*) FROM s JOIN phases_v v ON v.id = s.id WHERE lower(v.name) LIKE '%zero%'" 2>&1)
	if [ "$msgs" = "1 of $want|search wrapped: $want of $want|search wrapped: 1 of $want|3 of $want|" ] &&
		[ "$crumbs" = "thread 1|ProfilerStep#3|thread 1|ProfilerStep#1|" ] &&
		[ "$phases" = "aten::zeros aten::zero_ aten::zeros aten::zeros " ]; then
		ok "search: / searches the whole subtree in order of start, says 'N of $want', n/N wrap"
	else
		not_ok "search: / searches the whole subtree in order of start, says 'N of $want', n/N wrap" \
			"status lines: $msgs levels: $crumbs selected: $phases"
	fi
fi

if run htop-keys "$DEMO_DB"; then
	compare htop-keys
	# d N: the Nth screen of the dump
	hk() { sed -n "$((($1 - 1) * 24 + 1)),$(($1 * 24))p" "$TMP/htop-keys.txt"; }
	why=''
	[ "$(wc -l <"$TMP/htop-keys.txt")" = $((6 * 24)) ] || why+="not 6 screens; "
	hk 1 | grep -q '^ time .* dur 3.00 us ' || why+="C-d did not move half a page; "
	hk 2 | grep -q '^ time .* dur 92.0 us ' || why+="the click did not select the fourth row; "
	[ "$(hk 3 | tail -n 1)" = ":sort" ] || why+="F6 did not open :sort; "
	{ hk 4 | grep -q '\[filter: step\] .*▼Self' && [ "$(hk 4 | grep -c '^+ ProfilerStep#')" = 3 ]; } ||
		why+="F6 self or F4 step did not sort and filter; "
	[ "$(hk 5 | tail -n 1)" = "27 of 36" ] || why+="F3 did not search; "
	cmp -s <(hk 5 | head -n 23) <(hk 6 | head -n 23) || why+="keys after F10 were read; "
	if [ -z "$why" ]; then
		ok "htop-keys: C-d/C-u half pages, a click selects, F6 sorts, F4 filters, F3 searches, F10 quits"
	else
		not_ok "htop-keys: C-d/C-u, click, F6, F4, F3, F10" "${why%; }"
	fi
fi

if run filter "$DEMO_DB"; then
	compare filter
	first=$(head -n 24 "$TMP/filter.txt")
	if grep -q '\[filter: step\]' <<<"$first" && [ "$(grep -c '^+ ProfilerStep#' <<<"$first")" = 3 ] &&
		! grep -q 'aten::' <<<"$first" && has "$TMP/filter.txt" "no rows match the filter 'nothing-matches-this'" &&
		[ "$(tail -n 24 "$TMP/filter.txt" | grep -c 'aten::')" = 5 ]; then
		ok "filter: \\step keeps the three steps, a miss says so, an empty filter clears"
	else
		not_ok "filter: \\step keeps the three steps, a miss says so, an empty filter clears"
	fi
fi

if run timeline "$DEMO_DB"; then
	compare timeline
	zooms=$(grep -o 'zoom [0-9]*x' "$TMP/timeline.txt" | tr '\n' ' ')
	windows=$(grep -o 'window [^,]*' "$TMP/timeline.txt" | sort -u | wc -l)
	if [ "$zooms" = "zoom 1x zoom 4x zoom 4x zoom 4x zoom 2x zoom 1x " ] && [ "$windows" -ge 5 ] &&
		tail -n 24 "$TMP/timeline.txt" | grep -q '^Name '; then
		ok "timeline: + zooms, h/l pan (the window moves), - and 0 zoom out, q returns"
	else
		not_ok "timeline: + zooms, h/l pan (the window moves), - and 0 zoom out, q returns" \
			"zooms: $zooms; $windows distinct windows"
	fi
fi

if run metrics "$FIX_DB"; then
	compare metrics
	if grep -q '^mem\.bytes  *pid:1  *-  *100  *192  *300  *3 ' "$TMP/metrics.txt"; then
		ok "metrics: the counter track with its min, max and sample count"
	else
		not_ok "metrics: the counter track with its min, max and sample count"
	fi
fi
# The demo's sar capture: CPU utilisation and the rest, on host vm.
if run metrics-demo "$DEMO_DB"; then
	compare metrics-demo
	if grep -q '^usr  *cpu  *vm  *63\.5%  *96%  *23  ' "$TMP/metrics-demo.txt"; then
		ok "metrics-demo: sar's series of host vm are listed, device cpu, values in %"
	else
		not_ok "metrics-demo: sar's series of host vm are listed, device cpu, values in %"
	fi
	# every screen of the list (the first, a page down, the last): no value
	# in exponent form, and no two rows that read the same in name, device
	# and host (sar's cpu-frequency:0, :1 and :all once read as three
	# "cpu-frequency…")
	if python3 - "$TMP/metrics-demo.txt" <<'EOF'; then
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
screens = [lines[i:i + 24] for i in range(0, len(lines) - 23, 24)]
assert len(screens) == 3, len(screens)
seen = {}
for sc in screens:
    assert sc[1].startswith("Name ") and " Device " in sc[1], sc[1]
    for row in sc[2:23]:
        if not row.strip():
            continue
        assert not re.search(r"\de[+-]\d", row), row
        key = tuple(re.split(r"  +", row.strip())[:3])
        assert len(key) == 3, row
        assert seen.get(key, row) == row, (seen.get(key), row)
        seen[key] = row
assert len(seen) >= 40, len(seen)
EOF
		ok "metrics-demo: values without exponents, no two series read the same"
	else
		not_ok "metrics-demo: values without exponents, no two series read the same"
	fi
fi

if run spark "$DEMO_DB"; then
	compare spark
	if grep -q 'Count Bneck    cpu\.util$' "$TMP/spark.txt" && grep -q '^+ infer .*█' "$TMP/spark.txt"; then
		ok "spark: the tree's last column shows cpu.util during each step"
	else
		not_ok "spark: the tree's last column shows cpu.util during each step"
	fi
fi

if run help "$DEMO_DB"; then
	compare help
	missing=''
	for k in 'Enter, l, Right' '/, F3 ' 'Q, F10 '; do
		has "$TMP/help.txt" "$k" || missing+="'$k' "
	done
	if [ -z "$missing" ] && [ "$(head -n 24 "$TMP/help.txt")" != "$(sed -n 25,48p "$TMP/help.txt")" ]; then
		ok "help: lists the keys and scrolls with G"
	else
		not_ok "help: lists the keys and scrolls with G" "missing: $missing"
	fi
fi

if run goto "$DEMO_DB"; then
	compare goto
	if head -n 24 "$TMP/goto.txt" | grep -q '^ phase     ProfilerStep#2 ' &&
		[ "$(tail -n 1 "$TMP/goto.txt")" != "$(sed -n 24p "$TMP/goto.txt")" ]; then
		ok "goto: :goto PATH selects the phase; a bad path leaves a message"
	else
		not_ok "goto: :goto PATH selects the phase; a bad path leaves a message"
	fi
fi

rm -f "$TMP/work/saved.txt"
if run save "$DEMO_DB"; then
	compare save
	if [ ! -e "$TMP/work/saved.txt" ]; then
		not_ok "save: :save FILE writes the screen as the dump does" "no saved.txt"
	elif cmp -s "$TMP/work/saved.txt" <(tail -n 24 "$TMP/save.txt"); then
		ok "save: :save FILE writes the screen as the dump does"
	else
		not_ok "save: :save FILE writes the screen as the dump does" \
			"$(diff <(tail -n 24 "$TMP/save.txt") "$TMP/work/saved.txt" | head -n 6 | tr '\n' '|')"
	fi
fi

if run resize "$DEMO_DB"; then
	compare resize
	small=$(sed -n 1,20p "$TMP/resize.txt")
	if [ "$(wc -l <"$TMP/resize.txt")" = 44 ] && grep -q 'terminal too small' <<<"$small" &&
		[ "$(wc -L <<<"$small")" -le 60 ] &&
		cmp -s <(tail -n 24 "$TMP/resize.txt") <(
			cd "$TMP/work"
			printf 'Enter\n' | "$BIN" --keys - --dump - --size 80x24 "$DEMO_DB"
		); then
		ok "resize: 60x20 says 'terminal too small', 80x24 again shows the same screen"
	else
		not_ok "resize: 60x20 says 'terminal too small', 80x24 again shows the same screen"
	fi
fi

if run fit "$DEMO_DB"; then
	compare fit
	why=''
	[ "$(wc -l <"$TMP/fit.txt")" = $((23 + 20 + 19 + 20)) ] || why+="not 23+20+19+20 lines; "
	sed -n 1,23p "$TMP/fit.txt" | grep -q '^-- details ---' || why+="80x23: no whole details pane; "
	[ "$(sed -n 1,23p "$TMP/fit.txt" | grep -c '^[+ ] [A-Za-z]')" = 8 ] || why+="80x23: not 8 rows; "
	sed -n 24,43p "$TMP/fit.txt" | grep -q '^-- details 1-8 of 11 (J/K) --' || why+="80x20: the pane does not scroll; "
	[ "$(sed -n 24,43p "$TMP/fit.txt" | grep -c '^[+ ] [A-Za-z]')" = 8 ] || why+="80x20: not 8 rows; "
	sed -n 44,62p "$TMP/fit.txt" | grep -q 'terminal too small: 80x19, needs 80x20' || why+="80x19 is not too small; "
	cmp -s <(sed -n 24,43p "$TMP/fit.txt") <(sed -n 63,82p "$TMP/fit.txt") || why+="80x20 again differs; "
	if [ -z "$why" ]; then
		ok "fit: usable at 80x23 and 80x20 (the details pane scrolls), too small at 80x19"
	else
		not_ok "fit: usable at 80x23 and 80x20, too small at 80x19" "${why%; }"
	fi
fi

if run ascii "$DEMO_DB" --ascii; then
	compare ascii
	if ascii_only "$TMP/ascii.txt" && [ "$(wc -l <"$TMP/ascii.txt")" = $((5 * 24)) ]; then
		ok "ascii: --ascii screens hold only ASCII bytes"
	else
		not_ok "ascii: --ascii screens hold only ASCII bytes" \
			"$(LC_ALL=C grep -n '[^ -~]' "$TMP/ascii.txt" | head -n 2 | tr '\n' '|')"
	fi
fi
# A locale that is not UTF-8 draws as --ascii does.
rc=0
(cd "$TMP/work" && LC_ALL=C "$BIN" --keys "$KEYS/ascii.keys" --dump - --size 80x24 "$DEMO_DB") \
	>"$TMP/c-locale.txt" 2>"$TMP/err" || rc=$?
if [ "$rc" = 0 ] && cmp -s "$TMP/c-locale.txt" "$TMP/ascii.txt"; then
	ok "ascii: LC_ALL=C draws the same screens as --ascii"
else
	not_ok "ascii: LC_ALL=C draws the same screens as --ascii" "exit $rc $(head -c 200 "$TMP/err")"
fi

if run hostile "$FIX_DB"; then
	compare hostile
	if esc_free "$TMP/hostile.txt" && ! LC_ALL=C grep -q $'\a' "$TMP/hostile.txt" &&
		has "$TMP/hostile.txt" 'evil\e]0;title\x07 name \e[2J' &&
		has "$TMP/hostile.txt" ' phase     evil\e]0;title\x07 name \e[2J end '; then
		ok "hostile: ESC and BEL in a name show as \\e and \\x07; no ESC or BEL byte in the dump"
	else
		not_ok "hostile: ESC and BEL in a name show as \\e and \\x07; no ESC or BEL byte in the dump"
	fi
fi
rc=0
(cd "$TMP/work" && "$BIN" --ascii --keys "$KEYS/hostile.keys" --dump - --size 80x24 "$FIX_DB") \
	>"$TMP/hostile-ascii.txt" 2>"$TMP/err" || rc=$?
if [ "$rc" = 0 ] && esc_free "$TMP/hostile-ascii.txt" && ascii_only "$TMP/hostile-ascii.txt" &&
	has "$TMP/hostile-ascii.txt" 'evil\e]0;title\x07'; then
	ok "hostile: the same with --ascii, and only ASCII bytes"
else
	not_ok "hostile: the same with --ascii, and only ASCII bytes" "exit $rc"
fi

if run quit-stops "$DEMO_DB"; then
	compare quit-stops
	if [ "$(head -n 1 "$TMP/quit-stops.txt")" = 'grademl-tui › demo › train' ] &&
		[ "$(wc -l <"$TMP/quit-stops.txt")" = 24 ]; then
		ok "quit-stops: Q ends the script and the last screen is dumped"
	else
		not_ok "quit-stops: Q ends the script and the last screen is dumped" \
			"$(head -n 1 "$TMP/quit-stops.txt")"
	fi
fi

# --stats: the lines `make bench` reads (the timeline's read among them).
rc=0
"$BIN" --keys "$KEYS/timeline.keys" --dump /dev/null --size 80x24 --stats "$DEMO_DB" \
	>/dev/null 2>"$TMP/stats" || rc=$?
if [ "$rc" = 0 ] && grep -Eq '^headless: first screen [0-9.]+ ms$' "$TMP/stats" &&
	grep -Eq '^headless: 10 keys, p50 [0-9.]+ ms, p99 [0-9.]+ ms, max [0-9.]+ ms$' "$TMP/stats" &&
	grep -Eq '^headless: 1 timelines read, slowest [0-9.]+ ms$' "$TMP/stats" &&
	grep -Eq '^headless: peak RSS [0-9]+ KiB$' "$TMP/stats" && [ "$(wc -l <"$TMP/stats")" = 4 ]; then
	ok "stats: --stats prints first screen, key percentiles, the timeline's read and peak RSS"
else
	not_ok "stats: --stats prints first screen, key percentiles, the timeline's read and peak RSS" \
		"exit $rc: $(tr '\n' '|' <"$TMP/stats" | head -c 300)"
fi

# ---- bad usage: exit 2 and one line on stderr ----

# bad NAME NEEDLE CMD...: CMD exits 2, its first stderr line starts with
# "grademl-tui: " and holds NEEDLE; ONE_LINE=1 also wants exactly one line.
bad() {
	local name=$1 needle=$2 rc=0 why='' line
	shift 2
	"$@" >"$TMP/bad.out" 2>"$TMP/bad.err" </dev/null || rc=$?
	line=$(head -n 1 "$TMP/bad.err")
	[ "$rc" -eq 2 ] || why+="exit $rc, want 2; "
	case $line in "grademl-tui: "*"$needle"*) ;; *) why+="first line '$line' lacks '$needle'; " ;; esac
	if [ "${ONE_LINE:-1}" = 1 ] && [ "$(wc -l <"$TMP/bad.err")" != 1 ]; then
		why+="stderr is $(wc -l <"$TMP/bad.err") lines, want 1; "
	fi
	[ ! -s "$TMP/bad.out" ] || why+="wrote to stdout; "
	if [ -z "$why" ]; then ok "$name"; else not_ok "$name" "${why%; }"; fi
}

bad "usage: an unknown key in a script exits 2 naming file:line" \
	"$KEYS/unknown-key.keys:3: unknown key 'NoSuchKey'" \
	"$BIN" --keys "$KEYS/unknown-key.keys" --dump - --size 80x24 "$DEMO_DB"
printf 'j\nresize 0x5\n' >"$TMP/bad-resize.keys"
bad "usage: 'resize 0x5' in a script exits 2 naming file:line" "$TMP/bad-resize.keys:2:" \
	"$BIN" --keys "$TMP/bad-resize.keys" --dump /dev/null "$DEMO_DB"
# ---- queries at the ':' prompt ----
cp "$DEMO_DB" "$TMP/demo.db.before-query"
if run query "$DEMO_DB"; then
	compare query
	# seven dumps of 24 lines each
	d() { sed -n "$(($1 * 24 - 23)),$(($1 * 24))p" "$TMP/query.txt"; }
	why=""
	d 1 | grep -q '^ :phases kind = operator | by name | stats count, sum(dur), max(dur) .* 76 rows$' ||
		why+="no query line with 76 rows; "
	d 1 | grep -q '^ name  *count  *sum(dur)  *max(dur)$' || why+="no header; "
	d 2 | grep -q 'sum(dur)[▼v]' || why+="no sort marker on sum(dur); "
	d 2 | sed -n 4p | grep -q 'aten::conv2d' || why+="the largest sum(dur) is not first; "
	# the filter keeps the names holding "backward" in any case, as the CLI counts them
	want=$("$BIN" query "$DEMO_DB" 'phases kind = operator and name ~ "(?i)backward" | by name | stats count' \
		--format csv | tail -n +2 | wc -l)
	d 4 | grep -q " $want of 76 rows, filter .backward." || why+="not $want rows after the filter; "
	d 5 | sed -n 1p | grep -q 'thread 1$' || why+="Enter did not go to the phase's parent; "
	d 5 | grep -q 'ProfilerStep#2' || why+="Enter did not select ProfilerStep#2; "
	d 6 | grep -q "^ error at column 15: unknown phase kind 'opertor'" || why+="no error line; "
	d 6 | grep -q '^                 \^\^\^\^\^\^\^$' || why+="no caret under the column; "
	d 6 | grep -q "did you mean 'operator'" || why+="no hint; "
	d 6 | tail -1 | grep -q '^:phases kind = opertor | count$' || why+="the prompt did not reopen; "
	d 7 | grep -q 'only reads' || why+="a write through sql was not refused; "
	if [ -z "$why" ]; then
		ok "query: table, sort, search, filter, Enter to the tree, errors with a caret"
	else
		not_ok "query: the results screen" "${why%; } (see $TMP/query.txt)"
	fi
fi
if run query-freeze "$DEMO_DB"; then
	# the header and each row keep the name column, then the last column
	hdr=$(sed -n 3p "$TMP/query-freeze.txt")
	rows=$(sed -n 4,8p "$TMP/query-freeze.txt" | grep -c '^ aten::.* [0-9][0-9]*$')
	if printf '%s\n' "$hdr" | grep -q '^ name .* id$' && [ "$rows" = 5 ]; then
		ok "query: scrolled to the last column, the name column stays"
	else
		not_ok "query: scrolled to the last column, the name column stays" \
			"header '$hdr', $rows rows with a name and an id"
	fi
fi
if run query-tab "$DEMO_DB"; then
	compare query-tab
	if tail -1 "$TMP/query-tab.txt" | grep -q '^:phases kind = operator | s$' &&
		tail -2 "$TMP/query-tab.txt" | head -1 | grep -q 'saturated  select  sort  stats'; then
		ok "query: Tab completes sources and kinds, and lists the stage keywords"
	else
		not_ok "query: Tab completion" "$(tail -2 "$TMP/query-tab.txt" | tr '\n' '|')"
	fi
fi
if cmp -s "$DEMO_DB" "$TMP/demo.db.before-query"; then
	ok "query: trace.db is byte-identical after the queries (a DELETE through sql included)"
else
	not_ok "query: trace.db unchanged" "the queries changed $DEMO_DB"
fi

# ---- :whatif K, against the report's own what-if ----
if run whatif "$DEMO_DB"; then
	compare whatif
	# the report's 2x saving for the same operator (its critical path section)
	want=$("$BIN" report "$DEMO_DB" |
		grep -F 'ProfilerStep#1/aten::conv2d/aten::convolution/aten::_convolution/aten::mkldnn_convolution  (twice as fast:' |
		sed 's/.*twice as fast: \(.*\) sooner).*/\1/' || true)
	# train's ProfilerStep#2 (24.8 ms) twice as fast: infer, after train in
	# the same process, starts 12.4 ms sooner
	if [ -n "$want" ] && sed -n 24p "$TMP/whatif.txt" | grep -qF "aten::mkldnn_convolution 2x faster saves $want (" &&
		sed -n 48p "$TMP/whatif.txt" | grep -q '^aten::mkldnn_convolution taking no time saves ' &&
		sed -n 72p "$TMP/whatif.txt" | grep -q '^aten::mkldnn_convolution at 1x changes nothing' &&
		sed -n 96p "$TMP/whatif.txt" | grep -q '^ProfilerStep#2 2x faster saves 12.4 ms ' &&
		sed -n 120p "$TMP/whatif.txt" | grep -q 'saves nothing: not on demo' &&
		sed -n 144p "$TMP/whatif.txt" | grep -q 'whatif needs a speed-up'; then
		ok "whatif: the saving equals the report's ($want); 1x changes nothing; train's steps bound infer; a phase off the path saves nothing"
	else
		not_ok "whatif" "want '$want': $(grep -n 'saves\|whatif' "$TMP/whatif.txt" | tr '\n' '|')"
	fi
fi

# ---- top issues, on the real GPU capture ----
GPU_DB=$TMP/gpu.db
if ! bash tests/data/gpu/import.sh "$BIN" "$GPU_DB" 2>"$TMP/err"; then
	not_ok "import the GPU capture" "$(head -c 300 "$TMP/err")"
elif run issues "$GPU_DB"; then
	compare issues
	# three dumps of 24 lines: the list, the second issue selected, the
	# tree; first prep's what-if (a step nothing traced explains is work
	# on the critical path); no software-bound verdict beside the idle-gpu
	# issues that say why the GPUs idled (the two DDP ranks' GPU, shared)
	if sed -n 2,24p "$TMP/issues.txt" | grep -q '^ *1  critical-path .*/gpu/prep$' &&
		sed -n 2,24p "$TMP/issues.txt" | grep -q '^ *2  idle-gpu (communication) .*ddp/rank 0/python3 (0) GPU 0$' &&
		sed -n 2,24p "$TMP/issues.txt" | grep -Eq '^ *[0-9]+  imbalance .*/gpu/ddp/rank 1$' &&
		! sed -n 2,24p "$TMP/issues.txt" | grep -q 'software-bound' &&
		sed -n 25,48p "$TMP/issues.txt" | grep -q '^ the GPU of rank 0 (shared GPU, 2 ranks on it: idle while none of this rank' &&
		sed -n 49p "$TMP/issues.txt" | grep -q 'gpu › ddp › rank 0$'; then
		ok "issues: ranked list with the why pane; Enter shows the phase in the tree"
	else
		not_ok "issues: list, explanation, Enter jumps" "see $TMP/issues.txt"
	fi
	# metrics alone: no phase, so no issue
	if printf 'i\ndump\n' >"$TMP/work/none.keys" &&
		"$BIN" import -o "$TMP/none.db" tests/data/demo/sysstat.sadf.json.gz 2>"$TMP/err" &&
		"$BIN" --keys "$TMP/work/none.keys" --dump "$TMP/none.txt" --size 80x24 "$TMP/none.db" &&
		grep -q 'No issues found' "$TMP/none.txt"; then
		ok "issues: a file with no phases says no issues were found"
	else
		not_ok "issues: an empty list says so" "$(head -c 300 "$TMP/none.txt")"
	fi
fi

# ---- the profiler's bookkeeping, on HTA's nccl_data sample ----
# Kineto's Spans, Traces and global processes are the profiler's own
# records: at rank 0 they are listed after its processes of work, labelled,
# without a share, and the row selected at open is work, so that :kernels
# there lists kernels.  Skipped without ../shared/samples (or GRADEML_SAMPLES).
NCCL=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace/facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz
if [ ! -e "$NCCL" ]; then
	skip "bookkeeping: HTA's nccl_data sample" "absent: $NCCL"
elif ! "$BIN" import -o "$TMP/nccl.db" "$NCCL" 2>"$TMP/err"; then
	not_ok "import HTA's nccl_data sample" "$(head -c 300 "$TMP/err")"
elif run bookkeeping "$TMP/nccl.db"; then
	rows=$(sed -n 3,22p "$TMP/bookkeeping.txt" | grep '^+ ' || true)
	books=$(printf '%s\n' "$rows" | grep -n -E '\(profiler\)| profiler( |$)' | cut -d: -f1 | tr '\n' ' ' || true)
	nrows=$(printf '%s\n' "$rows" | grep -c . || true)
	if [ "$books" = "$((nrows - 2)) $((nrows - 1)) $nrows " ] && [ "$nrows" -gt 3 ] &&
		! printf '%s\n' "$rows" | grep -E '\(profiler\)| profiler( |$)' | grep -q '%'; then
		ok "bookkeeping: rank 0 lists its three bookkeeping processes last, labelled, without a share"
	else
		not_ok "bookkeeping: rank 0 lists its three bookkeeping processes last, labelled, without a share" \
			"profiler rows at ${books:-none} of $nrows"
	fi
	head2=$(sed -n 26p "$TMP/bookkeeping.txt")
	kernels=$(printf '%s\n' "$head2" | grep -o '[0-9]* rows' | cut -d' ' -f1 || true)
	if [ "${head2#*:kernels of }" != "$head2" ] && [ "${head2#*process Spans}" = "$head2" ] &&
		[ "${kernels:-0}" -gt 0 ] && ! sed -n 25,48p "$TMP/bookkeeping.txt" | grep -q 'No rows'; then
		ok "bookkeeping: :kernels at open is of a process of work and lists its $kernels kernels"
	else
		not_ok "bookkeeping: :kernels at open lists kernels" "$head2"
	fi
	# a trace.db imported before kind 21 (made here by taking it back:
	# the processes, threads and span as they were stored) still opens,
	# its bookkeeping shown as the work it was taken for
	cp "$TMP/nccl.db" "$TMP/nccl-old.db"
	sqlite3 "$TMP/nccl-old.db" "UPDATE phases SET kind = CASE WHEN track_id IS NULL THEN 4
		WHEN id IN (SELECT phase_id FROM tracks) THEN 5 ELSE 16 END WHERE kind = 21;
		DELETE FROM phase_kinds WHERE id = 21"
	if (cd "$TMP/work" && "$BIN" --keys "$KEYS/bookkeeping.keys" --dump "$TMP/bookkeeping-old.txt" \
		--size 80x24 "$TMP/nccl-old.db") >/dev/null 2>"$TMP/bookkeeping-old.err" </dev/null &&
		[ ! -s "$TMP/bookkeeping-old.err" ] && sed -n 3,22p "$TMP/bookkeeping-old.txt" | grep -q '^+ process Spans ' &&
		! grep -q -E '\(profiler\)| profiler( |$)' "$TMP/bookkeeping-old.txt"; then
		ok "bookkeeping: a trace.db from before kind 21 opens, its bookkeeping unmarked"
	else
		not_ok "bookkeeping: a trace.db from before kind 21 opens" "$(head -c 300 "$TMP/bookkeeping-old.err" 2>/dev/null)"
	fi
fi

# ---- units in the tables, sorted by value ----
# :kernels, a query, :path and :diff on the GPU capture: times, bytes and
# bandwidths read with their units (as `summary` and `diff` print them),
# and a sort by such a column orders the values, not the text ("98.7 KB"
# below "151.0 MB", "9.79 us" above "11.9 us").
if [ -s "$GPU_DB" ] && run tables "$GPU_DB"; then
	compare tables
	"$BIN" summary "$GPU_DB" kernels /gpu/train >"$TMP/tables-summary.txt" 2>&1
	(cd "$TMP/work" && "$BIN" diff ../gpu.db ../demo.db) >"$TMP/tables-diff.txt" 2>&1
	if python3 - "$TMP/tables.txt" "$TMP/tables-summary.txt" "$TMP/tables-diff.txt" \
		>"$TMP/tables.why" 2>&1 <<'EOF'; then
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
summary = open(sys.argv[2], encoding="utf-8").read().split("\n")
difftext = open(sys.argv[3], encoding="utf-8").read().split("\n")
sc = [lines[i:i + 24] for i in range(0, 24 * 8, 24)]
DUR = r"(\d+(\.\d+)?) (ns|us|ms|s)"
SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9,
         "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def column(screen, name):
    """The cells of the column headed name, rows 4 to 23 (right-aligned: a
    cell ends where its header, with a sort mark, ends)."""
    m = re.search(r"(?<!\S)" + re.escape(name) + r"[▲▼]?(?=  |$)", screen[2])
    assert m, (name, screen[2])
    cells = []
    for row in screen[3:23]:
        c = re.search(r"(\S+(?: \S+)*)$", row[:m.end()])
        if c:
            cells.append(c.group(1))
    return cells


def ordered(cells, units, desc):
    """The values of cells ("-" last) in order, with a unit each of units."""
    vals = []
    for c in cells:
        if c == "-":
            continue
        m = re.fullmatch(r"([+-]?\d+(?:\.\d+)?) (" + units + ")", c)
        assert m, (c, units)
        vals.append(float(m.group(1)) * SCALE[m.group(2).replace("/s", "")])
    assert vals == sorted(vals, reverse=desc), cells
    assert "-" not in cells[:len(vals)], cells
    return vals


TIME, BYTES, RATE = "ns|us|ms|s", "B|KB|MB|GB|TB", "B/s|KB/s|MB/s|GB/s|TB/s"
# 1: totals and spreads are durations, the largest total first
assert all(re.fullmatch(DUR, c) for c in column(sc[0], "total") + column(sc[1], "stddev"))
ordered(column(sc[0], "total"), TIME, True)
# 2, 3: bytes and GB/s with units, largest first, as `summary` prints them
b, r = column(sc[1], "bytes"), column(sc[2], "GB/s")
ordered(b, BYTES, True)
ordered(r, RATE, True)
assert {c.split()[1] for c in b if c != "-"} >= {"MB", "KB"}, b
assert len({c.split()[1] for c in r if c != "-"}) >= 2, r
dtod = [l for l in summary if l.startswith("Memcpy DtoD")]
assert len(dtod) == 1 and f"  {b[0]}  " in dtod[0] and f"  {r[0]}  " in dtod[0], (b[0], r[0], dtod)
# 4: the smallest total first ("9.79 us" before "11.9 us")
ordered(column(sc[3], "total"), TIME, False)
# 5: a query's instants as dates, its durations as durations
assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+", c)
           for c in column(sc[4], "start")), sc[4][3]
ordered(column(sc[4], "dur"), TIME, True)
# 6: the critical path's times
ordered(column(sc[5], "on_path"), TIME, True)
assert all(c == "-" or re.fullmatch(DUR, c) for c in column(sc[5], "2x_saves"))
# 7: :diff's differences signed and its ratios as `diff` writes them
d, q = column(sc[6], "diff"), column(sc[6], "ratio")
assert all(re.fullmatch(r"[+-]" + DUR, c) or c == "0 ns" for c in d), d
assert all(re.fullmatch(r"\d+\.\d\dx", c) or c == "-" for c in q), q
# the steps' row as the CLI's steps section prints it (the step-median
# table before it has its own columns)
at = next(i for i, l in enumerate(difftext) if l.startswith("steps (profiler steps by name"))
step = [l for l in difftext[at:] if l.endswith(" ProfilerStep#*")][:1]
assert len(step) == 1 and f" {d[0]}   {q[0]} " in step[0], (d[0], q[0], step)
EOF
		ok "tables: times, bytes and GB/s with units, sorted by value; :diff signed, as the CLI prints"
	else
		not_ok "tables: units in the tables, sorted by value" "$(tail -n 3 "$TMP/tables.why" | tr '\n' '|')"
	fi
fi

# ---- bottom-up from the summaries: c and :callers on :kernels and :ops ----
# Each callers list's total and counts against `summary`'s row for the name
# (the frames of a name that is never nested in itself add up to its row).
if [ -s "$GPU_DB" ] && run callers-table "$GPU_DB"; then
	compare callers-table
	"$BIN" summary "$GPU_DB" kernels /gpu/train --format csv >"$TMP/ct-kernels.csv" 2>&1
	"$BIN" summary "$GPU_DB" ops /gpu/train --format csv >"$TMP/ct-ops.csv" 2>&1
	if python3 - "$TMP/callers-table.txt" "$TMP/ct-kernels.csv" "$TMP/ct-ops.csv" \
		>"$TMP/ct.why" 2>&1 <<'EOF'; then
import csv, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
sc = [lines[i:i + 24] for i in range(0, 24 * 4, 24)]
rows = {r["name"]: r for f in sys.argv[2:] for r in csv.DictReader(open(f, encoding="utf-8"))}
SCALE = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def check(screen, name, mode):
    """The list of name's callers in mode: its total is the summary row's,
    its rows' counts add up to the row's count."""
    m = re.match(r"callers of (.*) \((host|device) time\): (\d+) paths?, total ([\d.]+) (\w+)", screen[1])
    assert m and m.group(1) == name and m.group(2) == mode, screen[1]
    total = float(m.group(4)) * SCALE[m.group(5)]
    want = int(rows[name]["total"])
    assert abs(total - want) <= 0.005 * want, (name, total, want)
    counts = [int(re.split(r"  +", l.strip())[3]) for l in screen[3:3 + int(m.group(3))]]
    assert sum(counts) == int(rows[name]["count"]), (name, counts, rows[name]["count"])


check(sc[0], "Memcpy DtoD (Device -> Device)", "device")
assert sc[1][1].startswith(" :kernels of train "), sc[1][1]
check(sc[2], "aten::copy_", "host")
check(sc[3], "aten::mm", "host")
EOF
		ok "callers-table: c on :kernels and :ops rows, :callers NAME on the table: the summary's step, totals as its rows"
	else
		not_ok "callers-table: bottom-up from the summaries" "$(tail -n 3 "$TMP/ct.why" | tr '\n' '|')"
	fi
fi

ONE_LINE=0 bad "usage: --size 0x0 exits 2" "--size" \
	"$BIN" --keys "$KEYS/first-screen.keys" --size 0x0 "$DEMO_DB"
bad "usage: a missing key script exits 2" "$TMP/nope.keys" \
	"$BIN" --keys "$TMP/nope.keys" --dump - "$DEMO_DB"
printf 'this is not a database\n' >"$TMP/not.db"
cp "$TMP/not.db" "$TMP/not.db.orig"
bad "usage: a text file as trace.db exits 2 with one line naming it" "$TMP/not.db" \
	"$BIN" --keys "$KEYS/first-screen.keys" --dump - "$TMP/not.db"
if cmp -s "$TMP/not.db" "$TMP/not.db.orig"; then
	ok "usage: the text file is left as it was"
else
	not_ok "usage: the text file is left as it was"
fi
: >"$TMP/empty.db"
bad "usage: an empty file as trace.db exits 2 with one line naming it" "$TMP/empty.db" \
	"$BIN" --keys "$KEYS/first-screen.keys" --dump - "$TMP/empty.db"
if [ ! -s "$TMP/empty.db" ]; then
	ok "usage: the empty file is left empty"
else
	not_ok "usage: the empty file is left empty" "$(stat -c %s "$TMP/empty.db") bytes now"
fi
bad "usage: a missing trace.db exits 2 with one line naming it" "$TMP/absent.db" \
	"$BIN" --keys "$KEYS/first-screen.keys" --dump - "$TMP/absent.db"
if [ ! -e "$TMP/absent.db" ]; then
	ok "usage: a missing trace.db is not created"
else
	not_ok "usage: a missing trace.db is not created"
fi

summary
