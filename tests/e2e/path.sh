#!/usr/bin/env bash
# End-to-end tests of the critical path screen (:path) on the project's own
# captures (tests/data/demo and tests/data/gpu, through their import.sh):
#   - every row of the table equals `grademl-tui report --format json`'s
#     critical path (whose figures tests/e2e/figures.sh checks against the
#     raw files): its phase, kind, time on the path, share of the makespan
#     and twice-as-fast saving, the waiting time a row of its own, in the
#     report's order (tests/e2e/path_check.py);
#   - the same screen from the cache `grademl-tui analyze` writes;
#   - Enter on the second row with a what-if shows that very phase in the
#     tree (the details pane's path), and `:whatif 2` there saves what the
#     row says;
#   - :path with an argument is refused with one line.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init path
CHECK=$ROOT/tests/e2e/path_check.py
e2e_home

e2e_need_bin

# screen DB OUT KEYS...: the explorer at 200x50 after :path and KEYS (one
# a line), its last screen in OUT.
screen() {
	local db=$1 out=$2
	shift 2
	{
		printf 'type :path\nEnter\n'
		printf '%s\n' "$@"
	} >"$TMP/k"
	"$BIN" --keys "$TMP/k" --dump "$out" --size 200x50 "$db" 2>"$TMP/err"
}

# check NAME: the checks on the database $TMP/NAME.db.
check() {
	local name=$1 db=$TMP/$1.db pick row path keys
	if ! "$BIN" report "$db" --format json >"$TMP/$name.json" 2>"$TMP/err"; then
		not_ok "$name: report" "$(head -c 300 "$TMP/err")"
		return
	fi
	if ! screen "$db" "$TMP/s.txt"; then
		not_ok "$name: :path" "$(head -c 300 "$TMP/err")"
		return
	fi
	if pick=$(python3 "$CHECK" table "$TMP/$name.json" "$TMP/s.txt"); then
		ok "$name: :path's rows equal the report's critical path"
	else
		not_ok "$name: :path's rows" "$pick"
		return
	fi
	row=${pick%%$'\t'*}
	path=${pick#*$'\t'}
	cp "$TMP/s.txt" "$TMP/computed.txt"
	if "$BIN" analyze "$db" >/dev/null 2>"$TMP/err" && screen "$db" "$TMP/s.txt" &&
		cmp -s "$TMP/s.txt" "$TMP/computed.txt"; then
		ok "$name: :path from the cache equals :path computed"
	else
		not_ok "$name: :path from the cache" "$(head -c 300 "$TMP/err")$(diff "$TMP/computed.txt" "$TMP/s.txt" | head -5 | tr '\n' '|')"
	fi
	keys=()
	for ((i = 0; i < row; i++)); do keys+=(j); done
	if screen "$db" "$TMP/jump.txt" "${keys[@]}" Enter d &&
		screen "$db" "$TMP/whatif.txt" "${keys[@]}" Enter "type :whatif 2" Enter &&
		why=$(python3 "$CHECK" jump "$TMP/$name.json" "$row" "$TMP/jump.txt" "$TMP/whatif.txt"); then
		ok "$name: Enter on row $row shows ${path##*/} in the tree; :whatif 2 there saves what the row says"
	else
		not_ok "$name: Enter and :whatif 2 on row $row" "${why:-$(head -c 300 "$TMP/err")}"
	fi
}

for data in demo gpu; do
	if bash "tests/data/$data/import.sh" "$BIN" "$TMP/$data.db" >/dev/null 2>"$TMP/err"; then
		check "$data"
	else
		not_ok "$data: import" "$(head -c 300 "$TMP/err")"
	fi
done

if [ -f "$TMP/demo.db" ] && screen "$TMP/demo.db" "$TMP/s.txt" "type :path x" Enter &&
	tail -n 1 "$TMP/s.txt" | grep -q '^path takes no argument'; then
	ok "demo: :path x is refused with one line"
else
	not_ok "demo: :path x" "$(tail -n 1 "$TMP/s.txt" 2>/dev/null)"
fi

summary
