#!/usr/bin/env bash
# Capture the small, real GPU workflow in tests/data/gpu/ (or OUT_DIR):
#   a CPU prep step, a profiled transformer training step, a profiled
#   evaluation step and a two-rank DDP step (tests/capture/gpu_workload.py),
#   while nvidia-smi logs every GPU each 100 ms.  Needs an NVIDIA GPU,
#   nvidia-smi and a CUDA build of PyTorch.  Rerunnable: it overwrites.
# Usage: tests/capture/capture-gpu.sh [OUT_DIR]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$(cd "$here/.." && pwd)/data/gpu}"
py="${PYTHON:-python3}"
# nvidia-smi stamps rows in local time without a zone; grademl-tui reads
# them as UTC, so run the whole capture in UTC
export TZ=UTC

command -v nvidia-smi >/dev/null || { echo "capture-gpu.sh: no nvidia-smi" >&2; exit 1; }
"$py" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' ||
	{ echo "capture-gpu.sh: $py has no CUDA PyTorch" >&2; exit 1; }

tmp="$(mktemp -d)"
smi_pid=""
cleanup() {
	if [ -n "$smi_pid" ]; then kill "$smi_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

fields=timestamp,index,name,pci.bus_id,pstate,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,power.limit,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu
nvidia-smi --query-gpu="$fields" --format=csv -lms 100 >"$tmp/nvsmi.csv" &
smi_pid=$!
sleep 1 # a baseline before the workload

"$py" "$here/gpu_workload.py" "$tmp/work"

sleep 1 # and after it
kill "$smi_pid" 2>/dev/null || true
wait "$smi_pid" 2>/dev/null || true
smi_pid=""

mkdir -p "$out"
rm -f "$out"/*.gz "$out/workflow.jsonl" "$out/README.md"
for f in "$tmp"/work/*.pt.trace.json; do
	gzip -9 -n -c "$f" >"$out/$(basename "$f").gz"
done
gzip -9 -n -c "$tmp/nvsmi.csv" >"$out/nvsmi.csv.gz"
cp "$tmp/work/workflow.jsonl" "$out/workflow.jsonl"

size() { stat -c %s "$out/$1"; }
usize() { gzip -dc "$out/$1" | wc -c; }
{
	cat <<EOF
# GPU workflow data (real capture)

Captured by \`tests/capture/capture-gpu.sh\` (which runs
\`tests/capture/gpu_workload.py\`); rerun it on a machine with an NVIDIA GPU
to regenerate every file here.

- date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)
- host: $(uname -srm), $(nproc) CPUs
- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
- PyTorch $("$py" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')
- nvidia-smi: \`--query-gpu=$fields --format=csv -lms 100\`, TZ=UTC

| file | bytes | unzipped | what |
| --- | ---: | ---: | --- |
EOF
	for f in "$out"/*.gz; do
		b=$(basename "$f")
		case $b in
		ddp_rank0.*) what="Kineto trace of DDP rank 0 (CPU ops, CUDA runtime, kernels, memcpys, gloo all-reduce, flows, distributedInfo)" ;;
		ddp_rank1.*) what="the same for rank 1 (1.5x longer sequences)" ;;
		eval.*) what="Kineto trace of the eval step" ;;
		nvsmi.*) what="nvidia-smi CSV, one row every 100 ms over the whole capture" ;;
		train.*) what="Kineto trace of the train step: 3 active ProfilerStep#N" ;;
		*) what="" ;;
		esac
		echo "| $b | $(size "$b") | $(usize "$b") | $what |"
	done
	echo "| workflow.jsonl | $(size workflow.jsonl) | - | one line per step: step, start_ns, end_ns (epoch ns), host, gpu, depends_on, trace(s) |"
	cat <<EOF

Steps (gpu_workload.py): prep (CPU only, no trace), train (TinyGPT: 4
pre-norm transformer layers, d=512, vocabulary 8192, batch 16 x 256 tokens,
bf16 autocast, AdamW; the last 6 of the steps profiled with
schedule(wait=1, warmup=1, active=3), CPU and CUDA activity, record_shapes),
eval (the same model, no_grad), ddp (two ranks on the one GPU with gloo;
rank 1 reads 1.5x longer sequences).
EOF
} >"$out/README.md"

ls -l "$out"
echo "total gzipped bytes: $(cat "$out"/*.gz | wc -c)"
