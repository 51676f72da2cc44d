#!/usr/bin/env bash
# Why the GPU idles, and device copies, end to end: the real binary's report
# (--format json) against tests/e2e/idle_check.py, which cuts the idle gaps
# and finds their causes from the raw traces itself (json and gzip only).
#
#   a. the GPU workloads of tests/truth/gpu, each bounded by one cause by
#      construction (workloads.py): input, sync and launch give idle-gpu
#      issues of that cause, compute none, pageable a copy-bound issue with
#      pinned memory advised (and no software-bound verdict beside
#      nvidia-smi's rows), the straggler run communication on rank 0; and
#      their figures agree with what the workloads measured (truth.json);
#   b. the H100 capture of tests/data/gpu (train, eval, two DDP ranks): the
#      figures, and the causes read from its traces (launch for the small
#      models, communication for gloo DDP);
#   c. the 8-rank DLRM step and a Kineto ResNet-50 trace in ../shared/samples
#      (GRADEML_SAMPLES), when present: the figures;
#   d. words that fit the device: the launch-bound workload as CUDA traced
#      it, and as ROCm and MTIA would have (tests/tools/as_runtime.py): the
#      same cause, advising CUDA graphs, HIP graphs, and for an MTIA
#      accelerator no graphs and no GPU; HTA's MTIA and MI250 samples
#      (when present) are told nothing of CUDA, and MTIA nothing of a GPU.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)" per
# check, then the summary; exits 1 when any check failed.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init idle
TRUTH=$ROOT/tests/truth/gpu/data
GPU=$ROOT/tests/data/gpu
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3

# checked NAME CASE DB FILE...: the report of DB checked against FILEs
# (CASE "-": figures only), each line of idle_check.py counted.
checked() {
	local name=$1 case=$2 db=$3 line
	shift 3
	if ! "$BIN" report --format json "$db" >"$TMP/$name.json" 2>"$TMP/err"; then
		not_ok "$name: report" "$(head -c 300 "$TMP/err")"
		return
	fi
	local opt=()
	[ "$case" = - ] || opt=(--case "$case" "$TRUTH/truth.json")
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) not_ok "$name: idle_check.py said" "$line" ;;
		esac
	done < <("$PY" tests/e2e/idle_check.py "${opt[@]}" "$TMP/$name.json" "$@" 2>&1)
}

# imported NAME ARGS...: a fresh DB for NAME from one import; its path.
imported() {
	local name=$1
	shift
	if ! "$BIN" import -o "$TMP/$name.db" "$@" >/dev/null 2>"$TMP/err"; then
		not_ok "$name: import" "$(head -c 300 "$TMP/err")"
		return 1
	fi
	echo "$TMP/$name.db"
}

# a. the truth workloads, on the capture's host beside its nvidia-smi rows
host=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["host"])' \
	"$TRUTH/truth.json")
for case in input sync launch compute pageable; do
	db=$(imported "$case" --host "$host" "$TRUTH/$case.pt.trace.json.gz") || continue
	"$BIN" import -o "$db" --host "$host" "$TRUTH/nvsmi.csv.gz" >/dev/null 2>&1 ||
		not_ok "$case: nvidia-smi rows"
	checked "$case" "$case" "$db" "$TRUTH/$case.pt.trace.json.gz"
done
db=$(imported straggler "$TRUTH"/straggler_rank0.pt.trace.json.gz \
	"$TRUTH"/straggler_rank1.pt.trace.json.gz) &&
	checked straggler straggler "$db" "$TRUTH"/straggler_rank0.pt.trace.json.gz \
		"$TRUTH"/straggler_rank1.pt.trace.json.gz

# b. the H100 capture, as its import script builds it
if bash "$GPU/import.sh" "$BIN" "$TMP/gpu.db" >/dev/null 2>"$TMP/err"; then
	checked gpu - "$TMP/gpu.db" "$GPU"/train.pt.trace.json.gz "$GPU"/eval.pt.trace.json.gz \
		"$GPU"/ddp_rank0.pt.trace.json.gz "$GPU"/ddp_rank1.pt.trace.json.gz
	# the first idle-gpu issue of each trace's GPU, by its path: step/rank
	got=$("$PY" - "$TMP/gpu.json" <<'EOF'
import json, re, sys
seen = {}
for u in json.load(open(sys.argv[1]))["top_issues"]:
    m = re.match(r"/gpu/(\w+)/(?:(rank \d+)/)?", u["path"] or "")
    if u["kind"] == "idle-gpu" and m:
        seen.setdefault(" ".join(x for x in m.groups() if x), u.get("cause"))
print("; ".join("%s %s" % kv for kv in sorted(seen.items())))
EOF
)
	want="ddp rank 0 communication; ddp rank 1 communication; eval launch; train launch"
	[ "$got" = "$want" ] && ok "gpu: the first idle cause of each GPU" ||
		not_ok "gpu: the first idle cause of each GPU" "got '$got', want '$want'"
else
	not_ok "gpu: import.sh" "$(head -c 300 "$TMP/err")"
fi

# wording FILE RUNTIME: the report's issues (JSON) of a trace under
# RUNTIME (cuda, rocm, mtia) in words that fit it, one "ok"/"not ok" line
# per check; RUNTIME-sample: only the words it must not have
wording() {
	"$PY" - "$@" <<'EOF'
import json, sys
path, rt = sys.argv[1], sys.argv[2]
issues = json.load(open(path))["top_issues"]
idle = [u for u in issues if u["kind"] == "idle-gpu"]
first = idle[0]["explanation"] if idle else ""
def check(ok, name, why):
    print(("ok - " if ok else "not ok - ") + name + ("" if ok else " (%s)" % why))
if not rt.endswith("-sample"):
    check(idle and idle[0].get("cause") == "launch", f"{rt}: the first idle cause is launch",
          idle and idle[0].get("cause"))
want = {"cuda": ["the GPU sat idle", "CUDA graphs, torch.compile"],
        "rocm": ["the GPU sat idle", "HIP graphs, torch.compile"],
        "mtia": ["the accelerator sat idle", "Fewer, larger kernels (torch.compile"]}
for w in want.get(rt, []):
    check(w in first, f"{rt}: its launch issue says '{w}'", first[:200])
bad = {"rocm": ["CUDA"], "mtia": ["CUDA", "GPU", "graphs", "cuda"]}
for b in bad.get(rt.replace("-sample", ""), []):
    hit = [u["explanation"][:160] for u in issues if b in u["explanation"]]
    check(not hit, f"{rt}: no issue says '{b}' ({len(issues)} issues)", hit[:1])
EOF
}

# worded NAME RUNTIME DB: wording's lines for DB's report, counted
worded() {
	local line
	if ! "$BIN" report --format json "$3" >"$TMP/$1-words.json" 2>"$TMP/err"; then
		not_ok "$1: report" "$(head -c 300 "$TMP/err")"
		return
	fi
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$1 ${line#ok - }" ;;
		"not ok - "*) not_ok "$1 ${line#not ok - }" ;;
		*) not_ok "$1: wording said" "$line" ;;
		esac
	done < <(wording "$TMP/$1-words.json" "$2" 2>&1)
}

# d. the launch-bound workload under three runtimes
db=$(imported launch-cuda "$TRUTH/launch.pt.trace.json.gz") && worded launch cuda "$db"
for rt in rocm mtia; do
	if ! "$PY" tests/tools/as_runtime.py "$TRUTH/launch.pt.trace.json.gz" $rt \
		"$TMP/launch-$rt.json.gz" 2>"$TMP/err"; then
		not_ok "launch as $rt: as_runtime.py" "$(head -c 300 "$TMP/err")"
		continue
	fi
	db=$(imported launch-$rt "$TMP/launch-$rt.json.gz") && worded launch $rt "$db"
done

# c. real traces of others
if [ ! -d "$SAMPLES" ]; then
	skip "samples: DLRM and ResNet-50 idle causes" "$SAMPLES absent"
else
	param=("$SAMPLES"/facebookresearch__param__worker*_step_12.*.pt.trace.json)
	db=$(imported dlrm "${param[@]}") && checked dlrm - "$db" "${param[@]}"
	rn=$SAMPLES/pytorch__kineto__kineto_resnet50_autograd_api_num_workers_0__worker0.pt.trace.json.gz
	db=$(imported resnet "$rn") && checked resnet - "$db" "$rn"
	for rt in mtia:mtia_inference_rank_0 rocm:mi250_minitoy_train_ROCm6_2_kineto; do
		f=$SAMPLES/facebookresearch__HolisticTraceAnalysis__${rt#*:}.json.gz
		db=$(imported "hta-${rt%%:*}" "$f") && worded hta "${rt%%:*}-sample" "$db"
	done
fi

summary
