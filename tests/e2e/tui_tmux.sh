#!/usr/bin/env bash
# The explorer in a real terminal: a detached tmux (its own server socket, no
# config) at 80x24 runs `grademl-tui demo.db` under a small wrapper that, once
# the program has exited, prints "GRADEML-DONE rc=N tty=same|changed" (the
# terminal modes from `stty -g` compared with those before the run).  Keys go
# in with send-keys, the screen comes out with capture-pane -p, and every wait
# polls the screen with a timeout, as tmux's own regress/ tests do.
#
#   a. open (past the top's only row, in the demo workflow), drill (past
#      train's only children, to thread 1), back up one level, quit with Q:
#      the marker shows, the alternate screen is off, the terminal modes are
#      as before;
#   b. search below a level (the details pane names the match, the status
#      line says which of how many), and timeline zoom and pan;
#   c. resize the window to 60x20 ("terminal too small") and back to 80x24
#      (the screen recovers), then q pops each level and quits at the top;
#   g. at 80x23 (a 24-line terminal inside tmux), 80x20 (the details pane
#      gives up rows and scrolls) and 80x19 ("terminal too small");
#   h. one session at 80x23 on the GPU capture (tests/data/gpu, with device
#      work): drill to a CPU thread, F (the flame graph: its title, a frame,
#      the figures on row 23), q, t (the timeline: a lane per thread and the
#      stream, the footer), q, :kernels (the table's columns, a kernel of
#      the trace, as many rows as `summary kernels` prints), Esc, :diff with
#      the eval trace imported alone (its header, a matched and a removed
#      row, as many rows as `diff --format json` has names, a status line
#      too long for 80 columns cut with "…"), q, then Q
#      restores the terminal; every screen 23 rows of at most 80 columns,
#      none "too small";
#   d. SIGTERM, and C-c (SIGINT) typed at the terminal, restore it too.
#   f. C-c during a query that would never end stops the query, not the
#      explorer.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then "N passed, M failed";
# exits 1 when any check failed, 0 with a "skipped" line without tmux.
#
#   bash tests/e2e/tui_tmux.sh          (GRADEML_BIN picks the binary)
# Needs: tmux, python3 (the demo import, h's checks), stty, /proc.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT"
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init tui-tmux

if ! command -v tmux >/dev/null 2>&1; then
	echo "skipped: tmux is not installed (Debian: apt-get install tmux)"
	exit 0
fi

SOCK=grademl-tui-test-$$-$RANDOM
tm() {
	tmux -f /dev/null -L "$SOCK" "$@"
}
cleanup() {
	tm kill-server >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT

e2e_need_bin

# The demo database, imported as `make demo` does.
DB=$TMP/demo.db
if ! bash tests/data/demo/import.sh "$BIN" "$DB" 2>"$TMP/err"; then
	not_ok "import the demo capture" "$(head -c 300 "$TMP/err")"
	summary || exit 1
fi

# The wrapper the pane runs.  SIGINT from C-c reaches the whole foreground
# process group: the wrapper catches it (so it survives to print the marker)
# while the explorer, which it execs with default dispositions, gets it too.
mkdir -p "$TMP/home" "$TMP/state"
cat >"$TMP/wrap.sh" <<'EOF'
trap ':' INT TERM
before=$(stty -g)
echo $$ >"$WRAP_PIDFILE"
"$GRADEML_BIN" "$@"
rc=$?
after=$(stty -g)
if [ "$before" = "$after" ]; then tty=same; else tty=changed; fi
printf 'GRADEML-DONE rc=%s tty=%s\n' "$rc" "$tty"
exec sleep 600
EOF

# One idle session for the whole run: killing a test's session must not
# end the server (it exits with its last session), or the next start can
# meet a server on its way out ("server exited unexpectedly").
tm new-session -d -s keepalive -x 80 -y 24 "exec sleep 3600"

# start NAME [ROWS [DB]]: a new 80x24 (80xROWS) session NAME running the
# explorer on the demo db (on DB).
start() {
	local name=$1 db=${3:-$DB}
	rm -f "$TMP/$name.pid"
	tm new-session -d -s "$name" -x 80 -y "${2:-24}" \
		env -i PATH="$PATH" TERM=xterm-256color LANG=C.UTF-8 HOME="$TMP/home" \
		XDG_STATE_HOME="$TMP/state" GRADEML_THEME_DIR="$ROOT/themes" GRADEML_BIN="$BIN" WRAP_PIDFILE="$TMP/$name.pid" \
		bash --noprofile --norc "$TMP/wrap.sh" "$db"
}

# screen NAME: the pane's text now.
screen() {
	tm capture-pane -p -t "$1" 2>/dev/null || true
}

# wait_for NAME TEXT [SECONDS]: polls the pane until it shows TEXT (fixed
# string); returns 1 after SECONDS (default 5), the last screen in $TMP/last.
wait_for() {
	local name=$1 text=$2 limit=${3:-5} i
	for ((i = 0; i < limit * 50; i++)); do
		screen "$name" >"$TMP/last"
		grep -qF -- "$text" "$TMP/last" && return 0
		sleep 0.02
	done
	return 1
}

# wait_gone NAME TEXT [SECONDS]: polls until the pane no longer shows TEXT.
wait_gone() {
	local name=$1 text=$2 limit=${3:-5} i
	for ((i = 0; i < limit * 50; i++)); do
		screen "$name" >"$TMP/last"
		grep -qF -- "$text" "$TMP/last" || return 0
		sleep 0.02
	done
	return 1
}

alt_on() {
	tm display -p -t "$1" '#{alternate_on}'
}

last_screen() {
	grep -v '^$' "$TMP/last" | head -n 8 | tr '\n' '|' | head -c 400
}

# step NAME CHECK TEXT KEYS...: sends KEYS, then waits for TEXT.
step() {
	local name=$1 check=$2 text=$3
	shift 3
	tm send-keys -t "$name" "$@"
	if wait_for "$name" "$text"; then
		ok "$check"
	else
		not_ok "$check" "no '$text' on screen: $(last_screen)"
		return 1
	fi
}

# step_gone NAME CHECK TEXT KEYS...: sends KEYS, then waits for TEXT to go.
step_gone() {
	local name=$1 check=$2 text=$3
	shift 3
	tm send-keys -t "$name" "$@"
	if wait_gone "$name" "$text"; then
		ok "$check"
	else
		not_ok "$check" "'$text' still on screen: $(last_screen)"
		return 1
	fi
}

# restored NAME CHECK RC_WANT: the marker shows (the program exited), with
# exit status RC_WANT and the terminal modes unchanged, the alternate screen
# is off and the explorer's screen is gone.
restored() {
	local name=$1 check=$2 rc_want=$3 why='' alt
	if ! wait_for "$name" "GRADEML-DONE" 5; then
		not_ok "$check" "the program did not exit: $(last_screen)"
		return
	fi
	grep -q "GRADEML-DONE rc=$rc_want " "$TMP/last" || why+="$(grep -o 'GRADEML-DONE rc=[0-9]*' "$TMP/last"), want rc=$rc_want; "
	grep -q 'tty=same' "$TMP/last" || why+="stty modes changed; "
	alt=$(alt_on "$name")
	[ "$alt" = 0 ] || why+="alternate_on is $alt; "
	! grep -qF '?:help' "$TMP/last" || why+="the explorer's screen is still shown; "
	if [ -z "$why" ]; then
		ok "$check ($(grep -o 'rc=[0-9]*' "$TMP/last"))"
	else
		not_ok "$check" "${why%; }"
	fi
}

# The explorer's pid: the wrapper's child, found in /proc (no procps).  The
# parent is the second field after the command name, which may hold spaces.
explorer_pid() {
	local wrapper stat line ppid
	wrapper=$(cat "$TMP/$1.pid" 2>/dev/null) || return 1
	for stat in /proc/[0-9]*/stat; do
		read -r line <"$stat" 2>/dev/null || continue
		read -r _ ppid _ <<<"${line##*) }"
		if [ "$ppid" = "$wrapper" ]; then
			stat=${stat#/proc/}
			echo "${stat%/stat}"
			return 0
		fi
	done
	return 1
}

# expect NAME CHECK TEXT: waits for TEXT without sending keys.
expect() {
	if wait_for "$1" "$3"; then
		ok "$2"
	else
		not_ok "$2" "no '$3' on screen: $(last_screen)"
		return 1
	fi
}

# shows CHECK ERE: the last screen has a row matching ERE.
shows() {
	if grep -qE -- "$2" "$TMP/last"; then
		ok "$1"
	else
		not_ok "$1" "no row matches '$2': $(last_screen)"
		return 1
	fi
}

# fits80x23 NAME CHECK LAST: polls the pane (5 s) until its screen is 23
# rows of at most 80 columns (a wide character counts two), none says "too
# small", and row 23 matches the Python regex LAST; the screen in $TMP/last.
fits80x23() {
	local name=$1 check=$2 why i
	for ((i = 0; i < 100; i++)); do
		screen "$name" >"$TMP/last"
		why=$(python3 - "$TMP/last" "$3" <<'EOF'
import re, sys, unicodedata
rows = open(sys.argv[1], encoding='utf-8').read().split('\n')
if rows[-1] == '':
    rows.pop()
def width(row):
    return sum(2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in row)
why = []
if len(rows) != 23:
    why.append(f'{len(rows)} rows')
wide = [n + 1 for n, row in enumerate(rows) if width(row) > 80]
if wide:
    why.append(f'rows {wide} wider than 80 columns')
if any('too small' in row for row in rows):
    why.append('it says too small')
if rows and not re.search(sys.argv[2], rows[-1]):
    why.append(f'row 23 is {rows[-1][:70]!r}')
print('; '.join(why))
EOF
		) || why="python3 failed"
		[ -z "$why" ] && break
		sleep 0.05
	done
	if [ -z "$why" ]; then
		ok "$check"
	else
		not_ok "$check" "$why"
		return 1
	fi
}

# ---- a. open where the work is, drill, back up one level, Q ----
start a || not_ok "a: tmux starts a session"
if expect a "a: the first screen opens in the demo workflow" "?:help"; then
	alt=$(alt_on a)
	if [ "$alt" = 1 ] && grep -q '^grademl-tui › demo *$' "$TMP/last" && grep -q '^+ train ' "$TMP/last"; then
		ok "a: the explorer runs on the alternate screen, past the top's only row"
	else
		not_ok "a: the explorer runs on the alternate screen, past the top's only row" "alternate_on=$alt: $(last_screen)"
	fi
	step a "a: Enter on train passes its only children to thread 1" \
		"› demo › train › process CPU functions › thread 1" Enter &&
		step_gone a "a: h goes back up one level" "› thread 1" h &&
		tm send-keys -t a Q && restored a "a: Q quits and restores the terminal" 0
fi
tm kill-session -t a 2>/dev/null || true

# ---- b. search and timeline zoom ----
start b || not_ok "b: tmux starts a session"
if expect b "b: the explorer starts" "?:help"; then
	step b "b: down to thread 1" "› thread 1" Enter &&
		step b "b: d opens the details pane" "-- details --" d &&
		step b "b: /ProfilerStep#2 selects it" " phase     ProfilerStep#2 " / ProfilerStep#2 Enter &&
		step b "b: /zero searches below thread 1: the first aten::zeros after ProfilerStep#2's start" \
			"15 of 36" / zero Enter &&
		expect b "b: its start and end read apart" " time      +688.0538 ms .. +688.0548 ms  dur 1.00 us " &&
		step b "b: n moves to the next match" "16 of 36" n &&
		step b "b: t opens the timeline at zoom 1x" "zoom 1x" d t &&
		step b "b: + zooms to 2x" "zoom 2x" + &&
		step b "b: + zooms to 4x" "zoom 4x" + &&
		win=$(grep -o 'window [^,]*' "$TMP/last") &&
		step_gone b "b: l pans right (the window moves)" "$win" l &&
		step b "b: 0 resets the zoom" "zoom 1x" 0 &&
		tm send-keys -t b Q && restored b "b: Q quits and restores the terminal" 0
fi
tm kill-session -t b 2>/dev/null || true

# ---- c. resize to 60x20 and back, q to the top ----
start c || not_ok "c: tmux starts a session"
if expect c "c: the explorer starts" "?:help"; then
	step c "c: Enter goes down to thread 1" "› thread 1" Enter &&
		step_gone c "c: h h goes back up to train" "› process CPU functions" h h &&
		step c "c: 60x20 says 'terminal too small'" "terminal too small: 60x20, needs 80x20" \
			\; resize-window -t c -x 60 -y 20 &&
		step c "c: 80x24 again recovers the screen" "grademl-tui › demo › train" \
			\; resize-window -t c -x 80 -y 24 &&
		step_gone c "c: q pops to demo" "› train" q &&
		step_gone c "c: q pops to the top" "› demo" q &&
		tm send-keys -t c q && restored c "c: q at the top quits and restores the terminal" 0
fi
tm kill-session -t c 2>/dev/null || true

# ---- g. a 24-line terminal inside tmux has 23 rows: 80x23, down to 80x20 ----
start g 23 || not_ok "g: tmux starts an 80x23 session"
if expect g "g: the explorer starts at 80x23, in the demo workflow" "grademl-tui › demo"; then
	step g "g: Enter and d at 80x23: thread 1's rows and the whole details pane" "-- details ---" Enter d &&
		step g "g: 80x20: the pane gives up rows and scrolls (J/K), the list keeps 8" \
			"-- details 1-8 of 11 (J/K) --" \; resize-window -t g -x 80 -y 20 &&
		step g "g: J scrolls the pane" "-- details 2-9 of 11 (J/K) --" J &&
		step g "g: 80x19 is too small" "terminal too small: 80x19, needs 80x20" \
			\; resize-window -t g -x 80 -y 19 &&
		step g "g: 80x23 again shows the whole pane" "-- details ---" \; resize-window -t g -x 80 -y 23 &&
		tm send-keys -t g Q && restored g "g: Q quits and restores the terminal" 0
fi
tm kill-session -t g 2>/dev/null || true

# ---- h. 80x23 on the GPU capture: drill, flame graph, timeline, :kernels, :diff, Q ----
# The screens' row counts come from the command line: `summary kernels` of
# the thread, and the names of `diff --format json` against the eval trace
# imported alone (its operators matched, the DDP and train ones removed).
GDB=$TMP/gpu.db EDB=$TMP/eval.db
THREAD="/gpu/train/python3 (473) CPU/thread 473 (python3)"
if ! bash tests/data/gpu/import.sh "$BIN" "$GDB" >/dev/null 2>"$TMP/err" ||
	! "$BIN" import -o "$EDB" tests/data/gpu/eval.pt.trace.json.gz >/dev/null 2>"$TMP/err"; then
	not_ok "h: import the GPU capture" "$(head -c 300 "$TMP/err")"
elif ! nk=$("$BIN" summary "$GDB" kernels "$THREAD" --format json 2>"$TMP/err" |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)))') ||
	! nd=$("$BIN" diff "$GDB" "$EDB" --format json 2>"$TMP/err" |
		python3 -c 'import json, sys; print(sum(l["names"] for l in json.load(sys.stdin)["levels"]))'); then
	not_ok "h: summary kernels and diff --format json" "$(head -c 300 "$TMP/err")"
else
	start h 23 "$GDB" || not_ok "h: tmux starts an 80x23 session"
	if expect h "h: the explorer starts on the GPU workflow" "grademl-tui › gpu"; then
		size=$(tm display -p -t h '#{window_width}x#{window_height}')
		if [ "$size" = 80x23 ]; then
			ok "h: the window is 80x23"
		else
			not_ok "h: the window is 80x23" "it is $size"
		fi
		step h "h: Enter on train drills in" "grademl-tui › gpu › train" j Enter &&
			shows "h: the breadcrumb and rows of train's level" '^\+ python3 \(473\) CPU +[0-9]' &&
			step h "h: Enter on python3 (473) CPU drills to its threads" \
				"grademl-tui › gpu › train › python3 (473) CPU" Enter &&
			shows "h: the rows of the process's level" '^\+ thread 473 \(python3\) +[0-9]' &&
			step h "h: F opens the flame graph of thread 473" "phases: thread 473 (python3)" F &&
			fits80x23 h "h: the flame graph fits 80x23, the frame's figures on row 23" \
				'^total .*  self .*  count 1  thread 473 \(python3\)$' &&
			shows "h: the flame graph's title" '^host time, [0-9]+ phases: thread 473 \(python3\)$' &&
			shows "h: the profiler steps merged into one frame" '^ProfilerStep#\*' &&
			step h "h: q goes back to the tree" "?:help" q &&
			step h "h: t opens the process's timeline, read in the background" \
				"gpu0 stream 7" t &&
			fits80x23 h "h: the timeline fits 80x23, its keys on row 23" \
				'^\?:help \+/-:zoom f:fit h/l:pan' &&
			shows "h: the main thread has a lane (its name cut with …)" '^thread 473 \(pyth[a-z]*… ' &&
			shows "h: the footer names the selected thread and its device ops" \
				'^thread 473 …  at \+0 for [0-9.]+ ms  [0-9]+ device ops below  zoom 1x' &&
			step h "h: q goes back to the tree" "?:help /:search" q &&
			step h "h: :kernels opens the thread's kernel table" ":kernels of thread 473 (python3)" \
				':kernels' Enter &&
			fits80x23 h "h: the kernel table fits 80x23, its names on row 23" "^$nk names in " &&
			shows "h: the kernel table's columns" '^ name +type +count +total +share%' &&
			shows "h: as many rows as \`summary kernels\` ($nk)" " $nk rows\$" &&
			shows "h: a kernel of the trace, its type" '^ nvjet_sm90_tst_256x128_64x4_1x2_h_bz_co… +COMP +[0-9]+ ' &&
			step h "h: Esc goes back to the tree" "?:help" Escape &&
			step h "h: :diff opens the diff against the eval trace" "step median" ":diff $EDB" Enter &&
			fits80x23 h "h: the diff fits 80x23, its names on row 23 (whole, or cut with …)" \
				"^$nd names, this run A, .*(Enter shows a name in A|…)\$" &&
			shows "h: the diff's columns" '^ level +name +status +diff +ratio' &&
			shows "h: as many rows as \`diff --format json\` has names ($nd)" " $nd rows\$" &&
			shows "h: the profiler steps matched in both runs" '^ step +ProfilerStep#\* +-[0-9.]+ [mu]?s ' &&
			shows "h: an operator only this run has, removed" '^ op +.* removed +-[0-9.]+ [mu]?s ' &&
			step h "h: q goes back to the tree" "?:help" q &&
			tm send-keys -t h Q && restored h "h: Q quits and restores the terminal" 0
	fi
	tm kill-session -t h 2>/dev/null || true
fi

# ---- d. SIGTERM and SIGINT ----
start d || not_ok "d: tmux starts a session"
if expect d "d: the explorer starts (for SIGTERM)" "?:help"; then
	tm send-keys -t d Enter
	wait_for d "› train" || true
	if pid=$(explorer_pid d) && [ -n "$pid" ]; then
		kill -TERM "$pid"
		restored d "d: SIGTERM quits and restores the terminal" "[0-9]*"
	else
		not_ok "d: SIGTERM quits and restores the terminal" "cannot find the explorer's pid"
	fi
fi
tm kill-session -t d 2>/dev/null || true
start e || not_ok "e: tmux starts a session"
if expect e "d: the explorer starts (for C-c)" "?:help"; then
	tm send-keys -t e Enter t
	wait_for e "zoom 1x" || true
	tm send-keys -t e C-c
	restored e "d: C-c (SIGINT) quits and restores the terminal" "[0-9]*"
fi
tm kill-session -t e 2>/dev/null || true

# ---- f. C-c stops a query that would run for ever, and does not quit ----
start f || not_ok "f: tmux starts a session"
if expect f "f: the explorer starts (for a query)" "?:help"; then
	tm send-keys -t f ':sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c' Enter
	if wait_for f "C-c stops it"; then
		ok "f: a long query says it is running and how to stop it"
	else
		not_ok "f: a long query says it is running" "$(last_screen)"
	fi
	step f "f: C-c stops the query" "stopped after" C-c &&
		step f "f: the explorer goes on: q goes back to the tree" "+ train" q &&
		tm send-keys -t f Q && restored f "f: Q then quits and restores the terminal" 0
fi
tm kill-session -t f 2>/dev/null || true

summary
