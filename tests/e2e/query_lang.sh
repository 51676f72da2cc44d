#!/usr/bin/env bash
# End-to-end tests of the query language's arithmetic, its step field and
# `by source` on the GPU capture's two DDP ranks, imported together, each
# figure against Python over the raw traces (tests/e2e/query_lang_check.py:
# json and gzip only):
#   - `by source | count` over kernels: each source by its file name and
#     rank, with its kernels;
#   - `by source, step | count` over kernels: each profiler step's kernels
#     (those whose launching runtime call lies in the step's window on its
#     thread);
#   - `where step = NAME`: the same count through a condition;
#   - arithmetic: the kernels with `end - start > 0.5 * 21us`, and on the
#     profiler steps `dur` (the raw one), `dur - self` and `self / dur`
#     against the same operations on the dur and self columns.
#
# Prints "ok - NAME" or "not ok - NAME (why)", then "N passed, M failed";
# exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init query_lang
e2e_need_bin
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3
DATA=tests/data/gpu
DB=$TMP/ddp.db

if ! "$BIN" import -o "$DB" --workflow gpu --step ddp "$DATA"/ddp_rank*.pt.trace.json.gz \
	>"$TMP/import.out" 2>&1; then
	not_ok "import" "$(tail -1 "$TMP/import.out")"
	summary
	exit 1
fi

q() {
	"$BIN" query "$DB" "$1" --format json >"$TMP/$2.json" 2>"$TMP/$2.err" ||
		echo "query failed: $1: $(head -1 "$TMP/$2.err")" >"$TMP/$2.json"
}
q 'phases kind = kernel | by source | count' by_source
q 'phases kind = kernel | by source, step | count' by_step
q 'phases kind = kernel step = "ProfilerStep#3" | by source | count' step3
q 'phases kind = kernel | where end - start > 0.5 * 21us | by source | count' long
q 'phases kind = profiler_step | select source.name, name, dur, self, dur - self, self / dur' steps

relay query_lang_check < <("$PY" tests/e2e/query_lang_check.py "$TMP" "$DATA"/ddp_rank*.pt.trace.json.gz 2>&1)
summary
