#!/usr/bin/env bash
# Names a user can read and tell apart (issue 28, item 1), on the GPU
# capture in tests/data/gpu (imported as tests/data/gpu/import.sh does):
#   - :kernels of the train step at 80x23 and 200x50, every page: no two
#     rows read the same (each row is a different kernel name), and no C++
#     return type or parameter list is shown;
#   - at 200x50 the table uses the width: the name column grows past the
#     old 40-column cap to what the other columns leave;
#   - the same first page in a real terminal, a detached tmux at 80x23 and
#     200x50 (skipped without tmux);
#   - w shows the selected row's whole name: the pane's text is the name
#     `summary kernels --format json` gives for that row;
#   - c on the first two kernel rows lists the kernel's callers: the
#     operator and runtime call that launched it, against the raw trace's
#     correlation ids (tests/e2e/names_check.py), with the counts adding up
#     to the kernel's instances;
#   - query and summary on a terminal: the name column's rows all differ
#     and none shows a return type;
#   - the text report: no line holds a kernel's whole C++ signature, and
#     the critical path's and top kernels' lines stay under 400 columns.
# Prints "ok - NAME" / "not ok - NAME (why)", then the summary; exits 1
# when any check failed.  Needs: bash, python3; tmux and script(1) for
# their checks.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init names
CHECK=tests/e2e/names_check.py
TRACE=tests/data/gpu/train.pt.trace.json.gz
e2e_need_bin
e2e_home
DB=$TMP/gpu.db
if ! bash tests/data/gpu/import.sh "$BIN" "$DB" >"$TMP/import.err" 2>&1; then
	not_ok "import the GPU capture" "$(head -c 300 "$TMP/import.err")"
	summary
	exit
fi
"$BIN" summary "$DB" kernels /gpu/train --format json >"$TMP/kernels.json" 2>"$TMP/summary.err" ||
	not_ok "summary kernels /gpu/train" "$(head -c 300 "$TMP/summary.err")"

# run NAME SIZE KEYS...: the explorer on the capture (tap.sh's e2e_keys)
run() {
	e2e_keys "$1" "$2" "$DB" "${@:3}"
}

# check ARGS...: names_check.py's "ok - " / "not ok - " lines
check() {
	local before=$((pass + fail))
	relay names_check.py < <(python3 "$CHECK" "$@" 2>&1)
	[ $((pass + fail)) -gt "$before" ] || not_ok "names_check.py printed nothing"
}

# every page of :kernels (64 rows), at both sizes
for size in 80x23 200x50; do
	if run "table-$size" "$size" 'type :kernels /gpu/train' Enter dump \
		PgDn dump PgDn dump PgDn dump; then
		check table "$TMP/table-$size.txt" "${size#*x}" "${size%x*}" "$TMP/kernels.json"
	fi
done

# the same in a real terminal: a detached tmux at 80x23 and 200x50
if ! command -v tmux >/dev/null 2>&1; then
	skip "tmux: :kernels in a terminal" "tmux is not installed"
else
	SOCK=grademl-names-$$-$RANDOM
	trap 'tmux -L "$SOCK" kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT
	for size in 80x23 200x50; do
		w=${size%x*} h=${size#*x} s=names-$w
		tmux -f /dev/null -L "$SOCK" new-session -d -s "$s" -x "$w" -y "$h" \
			env TERM=xterm-256color LANG=C.UTF-8 HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" \
			"$BIN" "$DB"
		sleep 0.5
		tmux -L "$SOCK" send-keys -t "$s" ':' && sleep 0.2 &&
			tmux -L "$SOCK" send-keys -t "$s" -l 'kernels /gpu/train' &&
			tmux -L "$SOCK" send-keys -t "$s" Enter
		for _ in $(seq 100); do
			tmux -L "$SOCK" capture-pane -p -t "$s" >"$TMP/tmux-$w.txt" 2>/dev/null
			grep -q ' 64 rows' "$TMP/tmux-$w.txt" && break
			sleep 0.05
		done
		check table "$TMP/tmux-$w.txt" "$h" "$w" "$TMP/kernels.json" tmux
	done
fi

if run whole 200x50 'type :kernels /gpu/train' Enter j w dump; then
	check whole "$TMP/whole.txt" 50 "$TMP/kernels.json" 1
fi

for row in 0 1; do
	moves=()
	[ "$row" = 1 ] && moves=(j)
	if run "callers-$row" 200x50 'type :kernels /gpu/train' Enter "${moves[@]}" c dump; then
		check callers "$TMP/callers-$row.txt" "$TRACE" "$TMP/kernels.json" "$row"
	fi
done

# query and summary on a terminal (script(1) gives them a pty)
if ! command -v script >/dev/null 2>&1; then
	skip "query and summary on a terminal" "no script(1)"
else
	for cmd in "query $DB 'phases kind = kernel | by name | top 64 sum(dur)'" \
		"summary $DB kernels /gpu/train"; do
		what=${cmd%% *}
		COLUMNS=120 script -qc "$BIN $cmd" /dev/null </dev/null | tr -d '\r' >"$TMP/$what.tty"
		check tty "$TMP/$what.tty" "$what"
	done
fi

if "$BIN" report "$DB" >"$TMP/report.txt" 2>"$TMP/report.err"; then
	check report "$TMP/report.txt" "$TRACE"
else
	not_ok "report" "$(head -c 300 "$TMP/report.err")"
fi

summary
