#!/usr/bin/env bash
# End-to-end checks of what bounds a phase and of the figures beside the
# verdict (grademl-tui(1) BOTTLENECKS), against independent computations
# from the raw files (tests/e2e/resources_check.py, tests/truth/cpu/expect.py):
#   a. the demo capture (sar, 1 s): each step's cpu.util mean and peak, its
#      busiest CPU, the share of its time bound by cpu, single-thread, disk,
#      software, with no data; the verdict beside figures that show it;
#   b. the GPU capture (nvidia-smi, 100 ms): utilization.gpu over each
#      step, its traced device work (tests/tools/device_work.py) against the
#      measured "device work" and the est. use of gpu, and the time bound by
#      gpu: while device work ran where a trace covers, while nvidia-smi
#      read 95% or more elsewhere; the GPU truth cases (tests/truth/gpu/data):
#      back-to-back GEMMs are gpu, the idle cases software;
#   c. the CPU truth cases (tests/truth/cpu/data, sar of workloads with a
#      known bottleneck): all cores busy is cpu, one core single-thread,
#      fsync writes disk, sleeping software; and the same windows one level
#      down and two (tests/truth/cpu/nested.py: OTLP spans under a root
#      span, manifest steps nested two deep) get the same figures and
#      verdicts, in the report and the details pane alike;
#   d. a gap: a Spark step imported into sysstat's restart gap (33 minutes
#      without a sample, ../shared/samples) has no data, says so, and no
#      value of the sample before the gap;
#   e. the explorer's details pane and the report show the same measured
#      figures and the same verdict for each step of a, b and c.
# Prints "ok - NAME" / "not ok - NAME (why)" / "skip - NAME (why)", then
# the summary; exits 1 when any check failed.  Needs python3, sqlite3.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
cd "$ROOT"
. "$here/tap.sh"
e2e_init resources
e2e_home
CHECK="python3 $here/resources_check.py"
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}

e2e_need_bin

# run_check NAME CMD...: each line CMD prints becomes a test line
run_check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then :; fi
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		"not ok - "*) not_ok "$name: ${line#not ok - }" ;;
		*) [ -n "$line" ] && not_ok "$name: checker" "$line" ;;
		esac
	done <<<"$out"
}

# pane DB NAME PATH...: the details pane of each PATH (one dump each)
# against the report's Resources lines
pane() {
	local db=$1 name=$2 keys=$TMP/$2.keys
	shift 2
	: >"$keys"
	local first=1
	for p in "$@"; do
		printf '%s\n' "type :goto $p" Enter >>"$keys"
		[ $first = 1 ] && echo d >>"$keys"
		echo dump >>"$keys"
		first=0
	done
	if "$BIN" --keys "$keys" --dump "$TMP/$name.pane" --size 200x40 "$db" 2>"$TMP/err" &&
		"$BIN" report "$db" >"$TMP/$name.txt" 2>>"$TMP/err"; then
		run_check "$name" $CHECK pane "$TMP/$name.pane" "$TMP/$name.txt" "$@"
	else
		not_ok "$name: explorer and report" "$(head -c 300 "$TMP/err")"
	fi
}

# ---- a. the demo capture ----
DEMO=tests/data/demo
demo_db=$TMP/demo.db
if bash "$DEMO/import.sh" "$BIN" "$demo_db" 2>"$TMP/err" &&
	"$BIN" report --format json "$demo_db" >"$TMP/demo.json" 2>>"$TMP/err"; then
	zcat "$DEMO/sysstat.sadf.json.gz" >"$TMP/demo-sadf.json"
	run_check demo $CHECK sadf "$TMP/demo.json" "$TMP/demo-sadf.json" "$DEMO/workflow.jsonl" \
		train=cpu infer=cpu
	pane "$demo_db" demo-pane /demo/train /demo/infer
else
	not_ok "demo: import and report" "$(head -c 300 "$TMP/err")"
fi

# ---- b. the GPU capture ----
GPU=tests/data/gpu
gpu_db=$TMP/gpu.db
if bash "$GPU/import.sh" "$BIN" "$gpu_db" 2>"$TMP/err" &&
	"$BIN" report --format json "$gpu_db" >"$TMP/gpu.json" 2>>"$TMP/err"; then
	run_check gpu $CHECK nvsmi "$TMP/gpu.json" "$GPU/nvsmi.csv.gz" "$GPU/workflow.jsonl" "$GPU" \
		train eval ddp
	pane "$gpu_db" gpu-pane /gpu/train /gpu/eval /gpu/ddp
else
	not_ok "gpu: import and report" "$(head -c 300 "$TMP/err")"
fi

# ---- b2. the GPU truth cases: known by construction (tests/truth/gpu) ----
# compute queues bf16 GEMMs back to back: GPU-bound; input, sync and launch
# leave the GPU idle most of the time: no hardware saturated (why the GPU
# idles is the idle-gpu issue's cause)
TG=tests/truth/gpu/data
if [ ! -f "$TG/truth.json" ]; then
	skip "truth-gpu" "no $TG/truth.json"
else
	tg_db=$TMP/truth-gpu.db
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k, v in d["cases"].items():
    if "start_ns" in v:
        print(json.dumps({"step": k, "start_ns": v["start_ns"], "end_ns": v["end_ns"],
                          "host": d["host"]}))' "$TG/truth.json" >"$TMP/truth-gpu.jsonl"
	tg_host=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["host"])' "$TG/truth.json")
	ok_import=1
	"$BIN" import -o "$tg_db" --workflow gpu-truth "$TMP/truth-gpu.jsonl" 2>"$TMP/err" || ok_import=0
	for c in compute input sync launch; do
		"$BIN" import -o "$tg_db" --workflow gpu-truth --step $c --host "$tg_host" \
			"$TG/$c.pt.trace.json.gz" 2>>"$TMP/err" || ok_import=0
	done
	"$BIN" import -o "$tg_db" --host "$tg_host" "$TG/nvsmi.csv.gz" 2>>"$TMP/err" || ok_import=0
	if [ $ok_import = 1 ] &&
		"$BIN" report --format json "$tg_db" >"$TMP/truth-gpu.json" 2>>"$TMP/err"; then
		run_check truth-gpu $CHECK nvsmi "$TMP/truth-gpu.json" "$TG/nvsmi.csv.gz" \
			"$TMP/truth-gpu.jsonl" "$TG" compute=gpu input=software sync=software \
			launch=software
		pane "$tg_db" truth-gpu-pane /gpu-truth/compute /gpu-truth/input
	else
		not_ok "truth-gpu: import and report" "$(head -c 300 "$TMP/err")"
	fi
fi

# ---- c. the CPU truth cases ----
TRUTH=tests/truth/cpu/data
if [ ! -f "$TRUTH/sadf.json.gz" ]; then
	skip "truth-cpu" "no $TRUTH/sadf.json.gz: run tests/truth/cpu/capture.sh"
else
	t_db=$TMP/truth.db
	if "$BIN" import -o "$t_db" --workflow truth-cpu "$TRUTH/workflow.jsonl" 2>"$TMP/err" &&
		"$BIN" import -o "$t_db" "$TRUTH/sadf.json.gz" 2>>"$TMP/err" &&
		"$BIN" report --format json "$t_db" >"$TMP/truth.json" 2>>"$TMP/err"; then
		run_check truth-cpu $CHECK sadf "$TMP/truth.json" "$TRUTH/sadf.json.gz" \
			"$TRUTH/workflow.jsonl" cores=cpu thread=single-thread disk=disk sleep=software
		pane "$t_db" truth-pane /truth-cpu/cores /truth-cpu/thread /truth-cpu/disk \
			/truth-cpu/sleep
	else
		not_ok "truth-cpu: import and report" "$(head -c 300 "$TMP/err")"
	fi
	# the same windows as OTLP spans (pipeline/CASE) and as nested steps
	# (pipeline/busy|wait/CASE): checked against the flat manifest's windows
	for nest in otlp:nested.otlp.json:pipeline/cores:pipeline/thread:pipeline/disk:pipeline/sleep \
		steps:nested.jsonl:pipeline/busy/cores:pipeline/busy/thread:pipeline/wait/disk:pipeline/wait/sleep; do
		IFS=: read -r name file pc pt pd ps <<<"$nest"
		n_db=$TMP/truth-$name.db
		if "$BIN" import -o "$n_db" --workflow truth-cpu "$TRUTH/$file" 2>"$TMP/err" &&
			"$BIN" import -o "$n_db" "$TRUTH/sadf.json.gz" 2>>"$TMP/err" &&
			"$BIN" report --format json "$n_db" >"$TMP/truth-$name.json" 2>>"$TMP/err"; then
			run_check "truth-cpu-$name" $CHECK sadf "$TMP/truth-$name.json" \
				"$TRUTH/sadf.json.gz" "$TRUTH/workflow.jsonl" \
				cores=/truth-cpu/$pc thread=/truth-cpu/$pt disk=/truth-cpu/$pd \
				sleep=/truth-cpu/$ps cores=cpu thread=single-thread disk=disk sleep=software
			pane "$n_db" "truth-$name-pane" /truth-cpu/$pc /truth-cpu/$pt /truth-cpu/$pd \
				/truth-cpu/$ps
		else
			not_ok "truth-cpu-$name: import and report" "$(head -c 300 "$TMP/err")"
		fi
	done
fi

# ---- d. a gap in the samples ----
SADF=$SAMPLES/sysstat/sysstat__sysstat__expected.sadf-j
SPARK=$SAMPLES/spark-eventlog/NVIDIA__spark-rapids-tools__eventlog-2021-06-15--15-00.gz
if [ ! -f "$SADF" ] || [ ! -f "$SPARK" ]; then
	skip "gap: a step in sysstat's restart gap" "no ../shared/samples"
else
	# sysstat's samples stop at 13:20:49 and start again at 13:54:35 (a
	# restart); the 90 s Spark application is put at 13:33:00, in the gap
	off=$(python3 -c 'import calendar; print(calendar.timegm((2019,4,18,13,33,0))*10**9 - 1623876083370000000)')
	gap_db=$TMP/gap.db
	if "$BIN" import -o "$gap_db" --workflow w --step prep --host SYSSTAT.TEST \
		--time-offset="${off}ns" "$SPARK" 2>"$TMP/err" &&
		"$BIN" import -o "$gap_db" "$SADF" 2>>"$TMP/err" &&
		"$BIN" report "$gap_db" >"$TMP/gap.txt" 2>>"$TMP/err" &&
		"$BIN" report --format json "$gap_db" >"$TMP/gap.json" 2>>"$TMP/err"; then
		got=$(python3 -c '
import json, sys
rows = {r["path"]: r for r in json.load(open(sys.argv[1]))["attribution"]["phases"]}
r = rows.get("/w/prep")
print("none" if r is None else "%.3f %d %d" % (r.get("no_data", -1), len(r["bottlenecks"]),
      len(r.get("measured", []))))
' "$TMP/gap.json" || true)
		if [ "$got" = "1.000 0 0" ] &&
			grep -A3 '^  /w/prep$' "$TMP/gap.txt" | grep -q 'bound by no data 100% of its 1.50 min' &&
			grep -A3 '^  /w/prep$' "$TMP/gap.txt" | grep -q 'measured no sample of its host/device holds during it'; then
			ok "gap: the step in sysstat's restart gap has no data, no verdict, and says so"
		else
			not_ok "gap: the step in sysstat's restart gap has no data" \
				"no_data, bottlenecks, measured: $got; $(grep -A3 '^  /w/prep$' "$TMP/gap.txt" | tr '\n' '|')"
		fi
		# the query language agrees: no value of cpu.util during the step,
		# though the sample before the gap is 12 minutes old
		# (the CSV's first column: the unit's follows it)
		mean=$("$BIN" query "$gap_db" 'metrics cpu.util | during /w/prep | select mean' \
			--format csv 2>"$TMP/err" | tr -d '\r' | tail -n +2 | cut -d, -f1)
		if [ -z "$mean" ] || [ "$mean" = '""' ]; then
			ok "gap: query: no cpu.util value during the step"
		else
			not_ok "gap: query: no cpu.util value during the step" "mean '$mean' $(cat "$TMP/err")"
		fi
	else
		not_ok "gap: import and report" "$(head -c 300 "$TMP/err")"
	fi
	# the same application at 13:20:00, over the samples before the gap:
	# cpu.util at most 28.3% (sadf: 100 - %idle), never saturated, so no cpu
	# verdict, whatever the tasks' attributed use
	off=$(python3 -c 'import calendar; print(calendar.timegm((2019,4,18,13,20,0))*10**9 - 1623876083370000000)')
	over_db=$TMP/over.db
	if "$BIN" import -o "$over_db" --workflow w --step prep --host SYSSTAT.TEST \
		--time-offset="${off}ns" "$SPARK" 2>"$TMP/err" &&
		"$BIN" import -o "$over_db" "$SADF" 2>>"$TMP/err" &&
		"$BIN" report --format json "$over_db" >"$TMP/over.json" 2>>"$TMP/err"; then
		got=$(python3 -c '
import json, sys
rows = {r["path"]: r for r in json.load(open(sys.argv[1]))["attribution"]["phases"]}
bad = [p + ":" + b["resource"] for p, r in rows.items() for b in r["bottlenecks"]
       if b["resource"] in ("cpu", "single-thread")]
first = rows["/w/prep"]["bottlenecks"][0]["resource"] if rows["/w/prep"]["bottlenecks"] else "-"
print(first, " ".join(bad) or "none")
' "$TMP/over.json" || true)
		if [ "$got" = "software none" ]; then
			ok "gap: over sysstat's samples (CPU at 28% or less) the Spark step is software-bound, no stage cpu-bound"
		else
			not_ok "gap: a Spark step over CPU samples of 28% or less is not cpu-bound" "got '$got'"
		fi
	else
		not_ok "gap: import and report (before the gap)" "$(head -c 300 "$TMP/err")"
	fi
fi

summary
