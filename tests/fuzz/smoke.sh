#!/usr/bin/env bash
# The fuzz smoke run of `make check`: each libFuzzer target (built by
# `make fuzz`) runs for SECS seconds on a copy of its seed corpus in
# tests/fuzz/corpus/NAME.  A crash shows the log's last lines and keeps the
# input; each target is one "ok"/"not ok" line, then "N passed, M failed".
#
#   bash tests/fuzz/smoke.sh BUILD_DIR SECS NAME...     (make fuzz-smoke)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. tests/e2e/tap.sh

dir=$1 secs=$2
shift 2
for t in "$@"; do
	corpus=$(mktemp -d "${TMPDIR:-/tmp}/grademl-fuzz-$t.XXXXXX")
	cp tests/fuzz/corpus/"$t"/* "$corpus"/
	if "$dir/fuzz_$t" -max_total_time="$secs" -max_len=4096 \
		-artifact_prefix="$corpus/" "$corpus" >"$corpus.log" 2>&1; then
		ok "fuzz $t: $(tail -n 1 "$corpus.log")"
		rm -rf "$corpus" "$corpus.log"
	else
		tail -n 40 "$corpus.log"
		not_ok "fuzz $t: the parser survives $secs s" "input kept in $corpus"
	fi
done
summary
