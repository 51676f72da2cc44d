#!/usr/bin/env bash
# Runs libFuzzer targets for a while each: `make fuzz-smoke` (in `make
# check`) and `make fuzz-long` call it.
#
#   tests/fuzz/run.sh SECS CORPUS NAME...
#
# Each target $FUZZ_B/fuzz_NAME (default build/fuzz) runs for SECS seconds
# on inputs up to $FUZZ_MAX_LEN bytes (default 4096).  CORPUS "" fuzzes a
# copy of the seeds (tests/fuzz/corpus/NAME) in a temporary directory,
# deleted when the target survives; otherwise CORPUS/NAME is the corpus,
# kept from run to run and seeded with any seed it lacks.  A crash leaves
# its input beside the corpus (crash-*, leak-*, timeout-*) and the log in
# NAME.log there; every target runs, each is one "ok"/"not ok" line, then
# "N passed, M failed", and the exit status is 1 when any failed.
set -u

cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/tap.sh
secs=$1 keep=$2
shift 2
bin=${FUZZ_B:-build/fuzz}
max_len=${FUZZ_MAX_LEN:-4096}
for t in "$@"; do
	if [ -n "$keep" ]; then
		corpus=$keep/$t
		mkdir -p "$corpus" || exit 1
	else
		corpus=$(mktemp -d "${TMPDIR:-/tmp}/grademl-fuzz-$t.XXXXXX") || exit 1
	fi
	for seed in tests/fuzz/corpus/"$t"/*; do
		[ -e "$corpus/${seed##*/}" ] || cp "$seed" "$corpus"/ || exit 1
	done
	log=$corpus.log
	if "$bin/fuzz_$t" -max_total_time="$secs" -max_len="$max_len" \
		-artifact_prefix="$corpus/" "$corpus" >"$log" 2>&1; then
		ok "fuzz $t: survived $secs s: $(grep -E '^#[0-9]+' "$log" | tail -1 |
			grep -oE 'cov: [0-9]+|corp: [^ ]+|exec/s: [0-9]+' | tr '\n' ' ')"
		[ -n "$keep" ] || rm -rf "$corpus" "$log"
	else
		tail -40 "$log"
		not_ok "fuzz $t: survived $secs s" "the input is in $corpus/, the log in $log"
	fi
done
summary
