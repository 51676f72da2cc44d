#!/usr/bin/env bash
# A rank that shares a GPU (grademl-tui(1) BOTTLENECKS): two ranks' Kineto
# traces written by tests/tools/shared_gpu.py, whose device figures are
# known by construction (rank 0's own stream busy 46.5 ms, rank 1's 45 ms of
# one 100 ms step, never at once), checked against the raw traces by
# tests/e2e/shared_gpu_check.py:
#   shared  both on device 0: each rank's GPU figure is its own stream's,
#           its rows and issues say "shared GPU", neither rank is called
#           GPU-bound; the step's is the union (91.5%); the explorer's
#           details pane says what the report says; the analyses' cache
#           (analyze) reads back the same report;
#   own     rank 1 on device 1 (the contrast): the same own figures, and
#           nothing says shared;
#   turns   both on device 0, rank 1's trace 200 ms after rank 0's ended:
#           they took turns, nothing says shared.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then the summary line of
# tap.sh.  Needs: bash, python3 (json), cmp.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init shared_gpu
e2e_need_bin
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3

# run CASE DEVICE0 DEVICE1 [SHIFT_MS]
run() {
	local case=$1
	if ! "$PY" tests/tools/shared_gpu.py "$TMP/$case" "$2" "$3" ${4:-} >/dev/null 2>"$TMP/err"; then
		not_ok "$case: shared_gpu.py" "$(head -c 300 "$TMP/err")"
		return
	fi
	local ranks=("$TMP/$case/rank0.pt.trace.json" "$TMP/$case/rank1.pt.trace.json")
	if ! "$BIN" import -o "$TMP/$case.db" --workflow shared --step train "${ranks[@]}" \
		>/dev/null 2>"$TMP/err" ||
		! "$BIN" report --format json "$TMP/$case.db" >"$TMP/$case.json" 2>"$TMP/err" ||
		! "$BIN" report "$TMP/$case.db" >"$TMP/$case.txt" 2>"$TMP/err"; then
		not_ok "$case: import and report" "$(head -c 300 "$TMP/err")"
		return
	fi
	relay "$case: shared_gpu_check.py" < <("$PY" tests/e2e/shared_gpu_check.py "$case" \
		"$TMP/$case.json" "$TMP/$case.txt" "${ranks[@]}" 2>&1)
}

run shared 0 0
run own 0 1
run turns 0 0 300

# the explorer's details pane on rank 0 says what the report says
want=$(sed -n '/^  \/shared\/train\/rank 0$/,/bound by/s/^      bound by //p' "$TMP/shared.txt")
printf '%s\n' 'type :goto /shared/train/rank 0' Enter d dump >"$TMP/pane.keys"
if [ -n "$want" ] && case $want in *"shared GPU (2 ranks on it), judged on its own"*) true ;; *) false ;; esac &&
	"$BIN" --keys "$TMP/pane.keys" --dump "$TMP/pane.txt" --size 240x40 "$TMP/shared.db" \
		2>"$TMP/err" && grep -qxF " bound by  $want" "$TMP/pane.txt"; then
	ok "shared: the details pane of rank 0 says it as the report does ($want)"
else
	not_ok "shared: the details pane of rank 0 says it as the report does" \
		"report '$want'; pane: $(grep -a 'bound by' "$TMP/pane.txt" 2>/dev/null | head -2)"
fi

# the analyses' cache keeps what the shared GPU's rows say: each format's
# report, after analyze, as it was before
differs=
"$BIN" analyze "$TMP/shared.db" >/dev/null 2>"$TMP/err" || differs="analyze: $(head -c 200 "$TMP/err")"
for fmt in json txt; do
	[ -z "$differs" ] || break
	"$BIN" report --format "${fmt/txt/text}" "$TMP/shared.db" >"$TMP/cached.$fmt" 2>"$TMP/err" &&
		cmp -s "$TMP/shared.$fmt" "$TMP/cached.$fmt" ||
		differs="$fmt: $(head -c 200 "$TMP/err"; diff "$TMP/shared.$fmt" "$TMP/cached.$fmt" | head -5)"
done
if [ -z "$differs" ]; then
	ok "shared: the cache (analyze) reads back the same report"
else
	not_ok "shared: the cache (analyze) reads back the same report" "$differs"
fi

summary
