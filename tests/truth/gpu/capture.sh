#!/usr/bin/env bash
# Capture the GPU cases of the truth suite into tests/truth/gpu/data/ (or
# OUT_DIR): tests/truth/gpu/workloads.py runs each case under torch.profiler
# while nvidia-smi logs every GPU each 100 ms.  Needs an NVIDIA GPU,
# nvidia-smi and a CUDA build of PyTorch; a few minutes.  Rerunnable: it
# overwrites.
# Usage: tests/truth/gpu/capture.sh [OUT_DIR [CASE ...]]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../filetable.sh"
out="${1:-$here/data}"
shift || true
py="${PYTHON:-python3}"
# nvidia-smi stamps rows in local time without a zone; grademl-tui reads
# them as UTC, so run the whole capture in UTC
export TZ=UTC PYTHONUNBUFFERED=1

command -v nvidia-smi >/dev/null || { echo "capture.sh: no nvidia-smi" >&2; exit 1; }
"$py" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' ||
	{ echo "capture.sh: $py has no CUDA PyTorch" >&2; exit 1; }

tmp="$(mktemp -d)"
smi_pid=""
cleanup() {
	if [ -n "$smi_pid" ]; then kill "$smi_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

fields=timestamp,index,name,pci.bus_id,pstate,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,power.limit,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,pcie.link.gen.current,pcie.link.width.current
# older drivers lack the PCIe fields: drop them rather than log nothing
nvidia-smi --query-gpu="$fields" --format=csv,noheader >/dev/null 2>&1 ||
	fields=${fields%,pcie.link.gen.current,pcie.link.width.current}
nvidia-smi --query-gpu="$fields" --format=csv -lms 100 >"$tmp/nvsmi.csv" &
smi_pid=$!
sleep 1 # a baseline before the workload

"$py" "$here/workloads.py" "$tmp/work" "$@"

sleep 1 # and after it
kill "$smi_pid" 2>/dev/null || true
wait "$smi_pid" 2>/dev/null || true
smi_pid=""

mkdir -p "$out"
rm -f "$out"/*.gz "$out"/*.json "$out/README.md"
for f in "$tmp"/work/*.pt.trace.json; do
	gzip -9 -n -c "$f" >"$out/$(basename "$f").gz"
done
gzip -9 -n -c "$tmp/nvsmi.csv" >"$out/nvsmi.csv.gz"
cp "$tmp/work/truth.json" "$tmp/work/steps.otlp.json" "$out/"

{
	cat <<EOF
# GPU truth-suite data (real capture)

Captured by \`tests/truth/gpu/capture.sh\` (which runs
\`tests/truth/gpu/workloads.py\`); rerun it on a machine with an NVIDIA GPU
to regenerate every file here.  Each case's construction, and so its
expected verdict, is described in workloads.py; \`truth.json\` holds what
the workload measured itself (CUDA events, host clocks), independent of the
profiler's trace; \`steps.otlp.json\` the cases as OTLP spans under one
root span.

- date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)
- host: $(uname -srm), $(nproc) CPUs
- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
- PyTorch $("$py" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')
- nvidia-smi: \`--query-gpu=$fields --format=csv -lms 100\`, TZ=UTC

EOF
	truth_file_table "$out"
} >"$out/README.md"

ls -l "$out"
