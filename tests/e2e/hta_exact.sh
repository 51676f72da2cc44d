#!/usr/bin/env bash
# End-to-end test of `report --hta`: on every trace of HTA's own samples
# (../shared/samples/chrome-trace/facebookresearch__HolisticTraceAnalysis__*:
# CUDA, NCCL, MTIA, MI250/ROCm, Triton, sampled and step-based traces), each
# imported alone, `report --hta --format json` gives HTA 0.6.1's figures
# exactly, to the nanosecond: its last-step cutoff, its rounding of every
# time to whole microseconds, its kernel types, and every figure of the GPU
# breakdown (items, temporal breakdown, kernel-type unions and mixes,
# overlap, each stream's breakdown and idle split, top kernels), against
# tests/tools/hta_reference.py --hta, an independent reimplementation of
# HTA's formulas from the raw JSON (tests/e2e/hta_exact.py compares).
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init hta_exact
e2e_need_bin
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace

if ! ls "$SAMPLES"/facebookresearch__HolisticTraceAnalysis__* >/dev/null 2>&1; then
	skip "report --hta against HTA's figures" "no HTA samples in $SAMPLES"
else
	for f in "$SAMPLES"/facebookresearch__HolisticTraceAnalysis__*; do
		n=${f##*/facebookresearch__HolisticTraceAnalysis__}
		db=$TMP/${n%%.json*}.db
		if ! "$BIN" import -o "$db" "$f" >/dev/null 2>"$TMP/err"; then
			not_ok "$n: imported" "$(head -n 1 "$TMP/err")"
			continue
		fi
		if ! "$BIN" report --hta --format json "$db" >"$TMP/report.json" 2>"$TMP/err"; then
			not_ok "$n: report --hta" "$(head -n 1 "$TMP/err")"
		elif why=$(python3 tests/e2e/hta_exact.py "$f" "$TMP/report.json" "$db" 2>&1); then
			ok "$n: report --hta gives HTA 0.6.1's GPU breakdown to the nanosecond"
		else
			not_ok "$n: report --hta equals HTA's figures" "$(echo "$why" | head -n 2 | tr '\n' '|')"
		fi
		rm -f "$db"
	done
fi
summary
