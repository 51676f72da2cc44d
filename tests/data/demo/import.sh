#!/usr/bin/env bash
# Imports the demo capture into one trace.db, each trace under its step and
# anchored at its recorded start (steps.py reads workflow.jsonl).  The one
# way `make demo` and the tests build the demo database; run it from the
# repository root so the stored source paths read tests/data/demo/...
#   bash tests/data/demo/import.sh BIN DB
set -euo pipefail
bin=$1 db=$2
dir=tests/data/demo
steps=$(python3 "$dir/steps.py")
[ -n "$steps" ] || { echo "import.sh: $dir/steps.py listed no steps" >&2; exit 2; }
# the workflow and its steps, with the windows the capture script recorded
"$bin" import -o "$db" --workflow demo "$dir/workflow.jsonl"
while read -r step host start trace; do
	"$bin" import -o "$db" --workflow demo --step "$step" --host "$host" \
		--time-offset "${start}us" "$dir/$trace"
done <<<"$steps"
# sar's view of the same minutes: CPU, memory, disk and network of host vm
"$bin" import -o "$db" "$dir/sysstat.sadf.json.gz"
