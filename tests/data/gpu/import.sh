#!/usr/bin/env bash
# Imports the GPU capture into one trace.db: the manifest's workflow and
# steps, each Kineto trace under its step (absolute times: no offset), the
# two DDP ranks under one step, and nvidia-smi's rows on the same host.
# Run from the repository root:  bash tests/data/gpu/import.sh BIN DB
set -euo pipefail
bin=$1 db=$2
dir=tests/data/gpu
host=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["host"])' \
	"$dir/workflow.jsonl")
"$bin" import -o "$db" --workflow gpu "$dir/workflow.jsonl"
for step in train eval; do
	"$bin" import -o "$db" --workflow gpu --step $step --host "$host" "$dir/$step.pt.trace.json.gz"
done
"$bin" import -o "$db" --workflow gpu --step ddp --host "$host" "$dir"/ddp_rank*.pt.trace.json.gz
"$bin" import -o "$db" --host "$host" "$dir/nvsmi.csv.gz"
