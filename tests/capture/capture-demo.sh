#!/usr/bin/env bash
# Capture the small, real demo data set in tests/data/demo/:
#   a profiled CPU training run and inference run of a small CNN
#   (PyTorch profiler, Chrome trace JSON) while sysstat samples the whole
#   machine every second. Rerunnable: it overwrites the outputs.
# Usage: tests/capture/capture-demo.sh   (Debian 12; root to install deps)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$(cd "$here/.." && pwd)/data/demo"
py=/usr/bin/python3 # Debian's python, which has python3-torch
apt_line="apt-get install -y python3-torch sysstat gzip"

have_deps() {
  [ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null &&
    command -v sadf >/dev/null && command -v gzip >/dev/null &&
    [ -n "$(sadc_path)" ]
}
sadc_path() {
  local p
  for p in /usr/lib/sysstat/sadc /usr/lib64/sa/sadc /usr/lib/sa/sadc; do
    [ -x "$p" ] && { echo "$p"; return; }
  done
}

if ! have_deps; then
  if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    $apt_line
  else
    echo "missing dependencies; as root run: $apt_line" >&2
    exit 1
  fi
fi
sadc="$(sadc_path)"

tmp="$(mktemp -d)"
sadc_pid=""
cleanup() {
  if [ -n "$sadc_pid" ]; then kill "$sadc_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# sysstat collector: 1 s samples of every activity (XALL adds disks,
# interrupts, SNMP, IPv6, power, filesystems) until we stop it.
# (This is what `sar -o FILE 1` runs, but sar's own -S means swap, so the
# collector is called directly to ask for all activities.)
"$sadc" -S XALL 1 "$tmp/sa.bin" &
sadc_pid=$!
sleep 2 # a baseline sample or two before the workload

"$py" "$here/workload.py" "$tmp/work"

sleep 2 # and after it
kill -INT "$sadc_pid" 2>/dev/null || true
wait "$sadc_pid" 2>/dev/null || true
sadc_pid=""

mkdir -p "$out"
rm -f "$out"/*.gz "$out/workflow.jsonl" "$out/README.md"
# -A: every activity in the file (CPU, memory, disk, network, ...), as JSON
sadf -j -- -A "$tmp/sa.bin" | gzip -9 -n >"$out/sysstat.sadf.json.gz"
for t in train infer; do
  gzip -9 -n -c "$tmp/work/$t.pt.trace.json" >"$out/$t.pt.trace.json.gz"
done
cp "$tmp/work/workflow.jsonl" "$out/workflow.jsonl"

"$py" "$here/check_demo.py" "$out" >"$tmp/check.txt"
cat "$tmp/check.txt"

torch_ver="$("$py" -c 'import torch; print(torch.__version__)')"
kineto="$("$py" -c 'import torch; print(torch.autograd.kineto_available())')"
size() { stat -c %s "$out/$1"; }
usize() { gzip -dc "$out/$1" | wc -c; }
{
  cat <<EOF
# Demo data (real capture)

Captured by \`tests/capture/capture-demo.sh\` (which runs
\`tests/capture/workload.py\`); rerun that script to regenerate every file
here. Checked by \`tests/capture/check_demo.py\`.

- date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)
- host: $(uname -srm), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))
- $(lsb_release -ds 2>/dev/null || grep PRETTY_NAME /etc/os-release | cut -d= -f2 | tr -d '"')
- PyTorch $torch_ver (Debian python3-torch), Kineto available: $kineto
- sysstat $(sadf -V 2>&1 | head -1 | awk '{print $3}')
- command: \`$sadc -S XALL 1 sa.bin &\` then
  \`/usr/bin/python3 tests/capture/workload.py OUT\`, then
  \`sadf -j -- -A sa.bin | gzip -9 -n\`

| file | bytes | unzipped | what |
| --- | ---: | ---: | --- |
| train.pt.trace.json.gz | $(size train.pt.trace.json.gz) | $(usize train.pt.trace.json.gz) | PyTorch profiler Chrome trace of a training loop (small CNN, random 1x28x28 data, DataLoader with 1 worker, SGD), CPU activity, \`record_shapes=True\`, \`schedule(wait=1, warmup=1, active=3)\` |
| infer.pt.trace.json.gz | $(size infer.pt.trace.json.gz) | $(usize infer.pt.trace.json.gz) | the same model in eval mode under \`torch.no_grad()\`, same profiler settings |
| sysstat.sadf.json.gz | $(size sysstat.sadf.json.gz) | $(usize sysstat.sadf.json.gz) | sysstat samples (1 s) over the whole capture, \`sadf -j -- -A\` |
| workflow.jsonl | $(size workflow.jsonl) | - | one line per step: step, start_ns, end_ns (wall clock, epoch ns), host, pid, trace, trace_start_us |

Notes for importers:

- Debian's PyTorch is built without Kineto, so \`export_chrome_trace\` writes
  the legacy format: a bare JSON array (no \`traceEvents\` object, no
  \`baseTimeNanoseconds\`), every event \`"ph": "X"\`, \`"pid": "CPU functions"\`,
  empty \`args\` (no shapes, even with \`record_shapes=True\`) and no \`cat\`.
- \`ts\`/\`dur\` are microseconds; \`ts\` is relative to the profiler's trace
  start. That start, in absolute epoch microseconds, is \`trace_start_us\` in
  workflow.jsonl (from \`prof.profiler.kineto_results.trace_start_us()\`), so
  absolute time = trace_start_us + ts.
- sadf timestamps are UTC (\`"utc": 1\`) with one-second resolution; a sample
  stamped T covers (T - interval, T].

Check output at capture time:

\`\`\`
$(cat "$tmp/check.txt")
\`\`\`
EOF
} >"$out/README.md"

ls -l "$out"
echo "total gzipped bytes: $(cat "$out"/*.gz | wc -c)"
