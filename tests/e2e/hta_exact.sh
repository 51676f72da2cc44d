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

# One quantity, one scope: on HTA's NCCL sample (its last profiler step
# left out by the breakdown), the default report names each view's scope,
# in text and JSON: the breakdown's work launched before the last step,
# each of its streams' idle share of that stream's own window, and the
# GPU streams section's busy share of each stream's window over the whole
# trace.  The defaults
# agree: the breakdown's top kernels and `summary kernels` both count all
# the device work (the same count and total for ncclKernel_AllReduce as the
# raw JSON's events of that name), and each names that scope in text and
# JSON; `report --hta`'s top kernels keep HTA's cutoff and say so.
f=$SAMPLES/facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz
if [ ! -r "$f" ]; then
	skip "scopes named" "no $f"
elif "$BIN" import -o "$TMP/nccl.db" "$f" >/dev/null 2>"$TMP/err" &&
	"$BIN" report "$TMP/nccl.db" >"$TMP/report.txt" 2>>"$TMP/err" &&
	"$BIN" report --format json "$TMP/nccl.db" >"$TMP/report.json" 2>>"$TMP/err" &&
	"$BIN" report --hta --format json "$TMP/nccl.db" >"$TMP/hta.json" 2>>"$TMP/err" &&
	"$BIN" summary "$TMP/nccl.db" kernels --format json >"$TMP/kernels.json" 2>>"$TMP/err" &&
	"$BIN" summary "$TMP/nccl.db" kernels >"$TMP/kernels.txt" 2>>"$TMP/err"; then
	why=$(python3 - "$TMP/report.json" "$TMP/report.txt" "$f" "$TMP/kernels.json" \
		"$TMP/kernels.txt" "$TMP/hta.json" 2>&1 <<'PY'
import gzip, json, re, sys
r, text = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
g, why = r["gpu_breakdown"], []
# the raw file's kernels named ncclKernel_AllReduce*: count, total in ns
raw = [e for e in json.load(gzip.open(sys.argv[3]))["traceEvents"]
       if e.get("ph") == "X" and e.get("cat") == "kernel"
       and e.get("name", "").startswith("ncclKernel_AllReduce")]
want = (len(raw), sum(round(e["dur"] * 1000) for e in raw))
def allreduce(rows, total):
    hit = [x for x in rows if x["name"].startswith("ncclKernel_AllReduce")]
    return (sum(x["count"] for x in hit), sum(x[total] for x in hit))
summ = json.load(open(sys.argv[4]))
got = allreduce(summ, "total")
if got != want or not summ or any(x.get("scope") != "subtree" for x in summ):
    why.append("summary kernels: AllReduce %s, raw %s, scopes %s"
               % (got, want, sorted({str(x.get("scope")) for x in summ})))
if "scope" not in open(sys.argv[5]).readline().split():
    why.append("the summary's table names no scope")
if not g or g[0].get("top_kernels_scope") != "trace" or allreduce(g[0]["top_kernels"], "sum_ns") != want:
    why.append("top kernels: AllReduce %s over %s, raw %s"
               % (g and allreduce(g[0]["top_kernels"], "sum_ns"), g and g[0].get("top_kernels_scope"), want))
if not re.search(r"top kernel, scope: the whole trace, as summary kernels: ncclKernel_AllReduce\S*"
                 r".*, %d instances, " % want[0], text):
    why.append("no top kernel with its scope in the text")
h = json.load(open(sys.argv[6]))["gpu_breakdown"]
if not h or h[0].get("top_kernels_scope") != "before_last_step" or allreduce(h[0]["top_kernels"], "sum_ns")[0] >= want[0]:
    why.append("--hta's top kernels not before the last step")
if not g or g[0]["scope"] != "before_last_step" or g[0]["left_out"] <= 0:
    why.append("breakdown scope %s" % [(x["scope"], x["left_out"]) for x in g])
if any(x["scope"] != "stream_window" for x in g[0]["streams"] if g):
    why.append("a breakdown stream not over its own window")
if not r["gpu_streams"] or any((x["scope"], x["window"]) != ("trace", "stream")
                               for x in r["gpu_streams"]):
    why.append("gpu_streams scope")
if not re.search(r": %d items, scope: launched before the last profiler step \(%d left out\)"
                 % (g[0]["items"], g[0]["left_out"]), text):
    why.append("no breakdown scope in the text")
if "GPU streams (the whole trace: busy fraction of each stream's window" not in text:
    why.append("no streams scope in the text")
if not re.search(r"items, idle \S+ of its window:", text):
    why.append("no stream window in the text")
print("; ".join(why))
PY
)
	rc=$?
	if [ "$rc" = 0 ] && [ -z "$why" ]; then
		ok "nccl_data: each GPU view names its scope (before the last step, the stream's window, the whole trace); top kernels and summary kernels agree with the raw file by default"
	else
		not_ok "nccl_data: scopes named" "$(echo "$why" | tail -n 1)"
	fi
else
	not_ok "nccl_data: scopes named" "$(head -n 1 "$TMP/err")"
fi
summary
