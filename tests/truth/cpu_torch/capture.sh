#!/usr/bin/env bash
# Capture the PyTorch CPU cases of the truth suite into
# tests/truth/cpu_torch/data/ (or OUT_DIR): tests/truth/cpu_torch/workloads.py
# runs each case under torch.profiler with Debian's python3-torch.  About
# fifteen seconds; rerunnable: it overwrites.
# Usage: tests/truth/cpu_torch/capture.sh [OUT_DIR [CASE ...]]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../filetable.sh"
out="${1:-$here/data}"
shift || true
py="${PYTHON:-/usr/bin/python3}" # Debian's python, which has python3-torch
export PYTHONUNBUFFERED=1

"$py" -c 'import torch' 2>/dev/null ||
	{ echo "capture.sh: $py has no PyTorch (apt-get install python3-torch)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
load="$(cut -d' ' -f1-3 /proc/loadavg)"
"$py" "$here/workloads.py" "$tmp/work" "$@"

mkdir -p "$out"
rm -f "$out"/*.gz "$out"/*.json "$out"/*.jsonl "$out/README.md"
for f in "$tmp"/work/*.pt.trace.json; do
	gzip -9 -n -c "$f" >"$out/$(basename "$f").gz"
done
cp "$tmp/work/truth.json" "$tmp/work/workflow.jsonl" "$out/"

{
	cat <<EOF
# PyTorch CPU truth-suite data (real capture)

Captured by \`tests/truth/cpu_torch/capture.sh\` (which runs
\`tests/truth/cpu_torch/workloads.py\`); rerun it to regenerate every file
here.  Each case's construction, and so its expected verdict, is described
in workloads.py; \`truth.json\` holds what the workload measured itself
with host clocks (time in the loader, in \`.item()\`, each rank's arrival at
each all_reduce), independent of the profiler's trace;
\`workflow.jsonl\` the cases as steps of a workflow manifest.

Debian's PyTorch has no Kineto: the traces are the legacy format (a bare
JSON array, \`"pid": "CPU functions"\`, no rank, the active steps numbered
ProfilerStep#1..#3) whose \`ts\` counts from \`trace_start_us\` (epoch
microseconds, in truth.json per case and per rank): import each with
\`--time-offset TRACE_START_USus\`.

- date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)
- host: $(uname -srm), $(nproc) CPUs, load average $load at the start
  (the machine was shared: compute times vary, the sleeps and the 1:3
  work ratio do not)
- PyTorch $("$py" -c 'import torch; print(torch.__version__, "Kineto", torch.autograd.kineto_available())')
- command: \`tests/truth/cpu_torch/capture.sh\`

EOF
	truth_file_table "$out"
} >"$out/README.md"

ls -l "$out"
