#!/usr/bin/env bash
# Stragglers on real multi-rank traces, each imported as a user would (one
# --step, every rank's file), against an independent reading of the raw
# files (tests/e2e/straggler.py):
#   dlrm  the 8-rank DLRM step in ../shared/samples (NCCL, kernels on the
#         GPU): rank 7 reaches the first collective last, rank 1 first and
#         waits ~7.6 ms; each rank's window is its spans';
#   gloo  tests/truth/gpu/data/straggler_rank{0,1} (rank 1 does 3x the GEMMs
#         before each all_reduce): rank 1, and rank 0's waits against what the
#         workload measured with its own clocks (truth.json);
#   ddp   tests/data/gpu's two-rank DDP step (gloo; rank 1 reads 1.5x longer
#         sequences): rank 1 calls each of the step's 9 all-reduces last.
# Then: the text report says what the JSON says, and `analyze`'s cache
# gives the same report.
#
# Prints "ok - NAME" / "not ok - NAME (why)" / "skip - NAME (why)", then the
# summary line of tap.sh.  Needs: bash, python3 (json, sqlite3), cmp.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init straggler
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
TRUTH=tests/truth/gpu/data

# check CASE DB FILE...: the JSON report of DB, read by straggler.py
check() {
	local case=$1 db=$2
	shift 2
	if ! "$BIN" report --format json "$db" >"$TMP/$case.json" 2>"$TMP/err"; then
		not_ok "$case: report" "$(head -c 300 "$TMP/err")"
		return
	fi
	"$PY" tests/e2e/straggler.py "$case" "$TMP/$case.json" "$db" "$@" >"$TMP/$case.out"
	local line why
	while IFS=$'\t' read -r line why; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"not_ok "*) not_ok "${line#not_ok }" "$why" ;;
		esac
	done <"$TMP/$case.out"
	[ -s "$TMP/$case.out" ] || not_ok "$case: straggler.py printed nothing"
}

# ---- dlrm: 8 ranks, NCCL ----
ranks=("$SAMPLES"/facebookresearch__param__worker*_step_12*.json)
if [ ! -f "${ranks[0]}" ]; then
	skip "dlrm: stragglers of the 8-rank DLRM step" "no ../shared/samples"
elif ! "$BIN" import -o "$TMP/dlrm.db" --workflow dlrm --step step12 "${ranks[@]}" 2>"$TMP/err"; then
	not_ok "dlrm: import" "$(head -c 300 "$TMP/err")"
else
	check dlrm "$TMP/dlrm.db" "${ranks[@]}"
	# the text says what the JSON says
	"$BIN" report "$TMP/dlrm.db" >"$TMP/dlrm.txt" 2>"$TMP/err"
	want='  /dlrm/step12: rank 7 arrives last at 5 of 8 collectives (NCCL kernels on the GPU); the others wait 45.3 ms in all, rank 1 the longest (11.1 ms)'
	if grep -qxF "$want" "$TMP/dlrm.txt" &&
		grep -q '^ *rank 1 *last at 0 of 8 *waited 11.1 ms$' "$TMP/dlrm.txt"; then
		ok "dlrm: the report's Stragglers section says it in words"
	else
		not_ok "dlrm: the report's Stragglers section" \
			"$(sed -n '/^Stragglers/,/^$/p' "$TMP/dlrm.txt" | head -c 600)"
	fi
	# the analyses' cache gives the same report
	if "$BIN" analyze "$TMP/dlrm.db" >/dev/null 2>"$TMP/err" &&
		"$BIN" report --format json "$TMP/dlrm.db" >"$TMP/dlrm-cached.json" 2>>"$TMP/err" &&
		"$BIN" report "$TMP/dlrm.db" >"$TMP/dlrm-cached.txt" 2>>"$TMP/err" &&
		cmp -s "$TMP/dlrm.json" "$TMP/dlrm-cached.json" &&
		cmp -s "$TMP/dlrm.txt" "$TMP/dlrm-cached.txt"; then
		ok "dlrm: the cache (analyze) reads back the same stragglers"
	else
		not_ok "dlrm: the cache reads back the same" \
			"$(head -c 200 "$TMP/err"; diff "$TMP/dlrm.txt" "$TMP/dlrm-cached.txt" | head -5)"
	fi
fi

# ---- gloo: the truth suite's straggler, measured by the workload ----
if ! "$BIN" import -o "$TMP/gloo.db" --workflow truth --step straggler \
	"$TRUTH"/straggler_rank0.pt.trace.json.gz "$TRUTH"/straggler_rank1.pt.trace.json.gz \
	2>"$TMP/err"; then
	not_ok "gloo: import" "$(head -c 300 "$TMP/err")"
else
	check gloo "$TMP/gloo.db" "$TRUTH"/straggler_rank0.pt.trace.json.gz \
		"$TRUTH"/straggler_rank1.pt.trace.json.gz "$TRUTH"/truth.json
fi

# ---- ddp: tests/data/gpu's two ranks over gloo ----
if ! bash tests/data/gpu/import.sh "$BIN" "$TMP/gpu.db" 2>"$TMP/err"; then
	not_ok "ddp: import" "$(head -c 300 "$TMP/err")"
else
	check ddp "$TMP/gpu.db" tests/data/gpu/ddp_rank0.pt.trace.json.gz \
		tests/data/gpu/ddp_rank1.pt.trace.json.gz
	# the explorer's details pane on each rank says what the report's
	# Stragglers section says
	"$BIN" report "$TMP/gpu.db" >"$TMP/ddp.txt" 2>"$TMP/err"
	printf '%s\n' 'type :goto /gpu/ddp/rank 0' Enter d dump \
		'type :goto /gpu/ddp/rank 1' Enter dump >"$TMP/ddp.keys"
	# (the counts and waits as the report gives them: the capture decides them)
	row() { sed -n "s/^ *rank $1 *last at \([0-9]*\) of [0-9]*  waited \(.*\)\$/\\$2/p" "$TMP/ddp.txt"; }
	k0=$(row 0 1) w0=$(row 0 2) w1=$(row 1 2)
	last=$(sed -n 's|^  /gpu/ddp: rank 1 arrives last at \([0-9]* of [0-9]*\) collectives .*|\1|p' "$TMP/ddp.txt")
	all=$(sed -n 's|^  /gpu/ddp: rank 1 arrives last at .*; the others wait \(.*\) in all, .*|\1|p' "$TMP/ddp.txt")
	if "$BIN" --keys "$TMP/ddp.keys" --dump "$TMP/ddp-pane.txt" --size 160x40 "$TMP/gpu.db" \
		2>"$TMP/err" && [ -n "$w0" ] && [ -n "$w1" ] && [ -n "$last" ] && [ -n "$all" ] &&
		grep -qxF " straggler rank 1 (last at $last collectives); this rank: last at $k0, waited $w0" \
			"$TMP/ddp-pane.txt" &&
		grep -qxF " straggler this rank (last at $last collectives, waited $w1); the others wait $all in all" \
			"$TMP/ddp-pane.txt"; then
		ok "ddp: the details pane of each rank agrees with the report (rank 0 waited $w0)"
	else
		not_ok "ddp: the details pane of each rank agrees with the report" \
			"report '$last' '$k0' '$w0' '$w1' '$all'; pane: $(grep -a straggler "$TMP/ddp-pane.txt" | head -3)"
	fi
fi

summary
