#!/usr/bin/env bash
# End-to-end tests of the annotations summary (`summary annotations`,
# the explorer's :annotations; grademl-tui(1), Summaries): user
# annotations by name, their host time, the device time of the work
# launched inside them and their GPU side.
#
#   - every figure of every row (count, total, self, device, mean, min,
#     max, stddev, gpu count, gpu time, first) against
#     tests/e2e/summaries_check.py, an independent computation from the
#     raw JSON, for the whole file and for one ProfilerStep: on the GPU
#     captures in the repository (the starved DataLoader, the training
#     step with its optimizer on both sides, the gloo straggler) and on the
#     samples in ../shared/samples with annotations (skipped without them);
#   - the starved DataLoader's enumerate(DataLoader)#...__next__ is the
#     first row, with the total of its events in the raw trace;
#   - the explorer, headless at 80x23 and 200x50: :annotations PATH shows
#     "N rows" for the N names `summary` prints, and each row visible on
#     the screen reads as `summary`'s table row does (name, count, times);
#   - a trace without annotations: no rows, and why, exit 0.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init annotations
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
CHECK=$ROOT/tests/e2e/summaries_check.py
e2e_home
e2e_need_bin

# figures NAME TRACE DB SCOPE [PATH]: summary annotations of PATH (none:
# the file) against the raw trace; SCOPE "all" or "step:NAME".
figures() {
	local name=$1 trace=$2 db=$3 scope=$4 where="" args=(annotations)
	if [ $# -gt 4 ]; then
		where="path = \"$5/**\" "
		args+=("$5")
	fi
	if ! "$BIN" summary "$db" "${args[@]}" --format json >"$TMP/s.json" 2>"$TMP/err" ||
		! "$BIN" query "$db" "phases $where(kind = annotation or kind = gpu_annotation) | select id, name, start" \
			--format json >"$TMP/p.json" 2>>"$TMP/err"; then
		not_ok "$name: annotations $scope" "$(head -c 300 "$TMP/err")"
		return
	fi
	if python3 "$CHECK" "$trace" "$scope" annotations "$TMP/s.json" "$TMP/p.json" >"$TMP/out" 2>&1; then
		ok "$name: $(tail -n 1 "$TMP/out")"
	else
		not_ok "$name: annotations $scope" "$(head -n 5 "$TMP/out" | tr '\n' '|')"
	fi
}

# screen NAME DB PATH SIZE: :annotations PATH in the explorer at SIZE
# against `summary annotations DB PATH`: its row count in the title, and
# each row on the screen as the table prints it (cut cells end in an
# ellipsis; what shows of them is where the table's cell starts).
screen() {
	local name=$1 db=$2 path=$3 size=$4
	printf 'type :annotations %s\nEnter\n' "$path" >"$TMP/a.keys"
	if ! "$BIN" --keys "$TMP/a.keys" --dump "$TMP/dump.txt" --size "$size" "$db" 2>"$TMP/err" ||
		! "$BIN" summary "$db" annotations "$path" >"$TMP/table.txt" 2>>"$TMP/err"; then
		not_ok "$name: :annotations at $size" "$(head -c 300 "$TMP/err")"
		return
	fi
	local said
	said=$(python3 - "$TMP/dump.txt" "$TMP/table.txt" "${size#*x}" <<'EOF'
import re, sys
screen = open(sys.argv[1], encoding="utf-8").read().split("\n")
table = open(sys.argv[2], encoding="utf-8").read().split("\n")
height = int(sys.argv[3])
rows = [re.split(r"\s{2,}", l.strip()) for l in table[1:] if l.strip() and not l.startswith("(")]
n = len(rows)
title = screen[1]
if not re.search(r":annotations of .* %d rows?\s*$" % n, title):
    sys.exit(f"title {title.strip()[:120]!r}, {n} rows in the table")
shown = 0
for i, want in enumerate(rows):
    if 3 + i >= height - 2:
        break
    got = re.split(r"\s{2,}", screen[3 + i].strip())
    if len(got) < 3:
        sys.exit(f"row {i}: {screen[3 + i].strip()[:120]!r}")
    for j, cell in enumerate(got):
        # a cut cell keeps a head and, where it was cut in the middle, a tail
        mark = "\u2026" if "\u2026" in cell else "~" if cell.endswith("~") else None
        head, tail = cell.split(mark, 1) if mark else (cell, None)
        fits = j < len(want) and (want[j] == cell if mark is None else
                                  want[j].startswith(head.rstrip()) and want[j].endswith(tail))
        if not fits:
            sys.exit(f"row {i} cell {j}: {cell!r} on the screen, {want[j] if j < len(want) else None!r} in the table")
    shown += 1
print(f"{n} rows, {shown} on the screen as the table has them")
EOF
	)
	if [ $? = 0 ]; then
		ok "$name: :annotations at $size: $said"
	else
		not_ok "$name: :annotations at $size" "$said"
	fi
}

# capture NAME TRACE TOP [STEP]: imports TRACE alone and checks the file,
# the ProfilerStep at path STEP when given, and the explorer on TOP (the
# step the import made).
capture() {
	local name=$1 trace=$2 top=$3 db=$TMP/$1.db
	if [ ! -f "$trace" ]; then
		skip "$name" "no $trace"
		return 1
	fi
	if ! "$BIN" import -o "$db" "$trace" >/dev/null 2>"$TMP/err"; then
		not_ok "$name: import" "$(head -c 300 "$TMP/err")"
		return 1
	fi
	figures "$name" "$trace" "$db" all
	[ $# -gt 3 ] && figures "$name" "$trace" "$db" "step:${4##*/}" "$4"
	screen "$name" "$db" "$top" 80x23
	screen "$name" "$db" "$top" 200x50
}

GPU=tests/truth/gpu/data
capture input "$GPU/input.pt.trace.json.gz" /workflow/input \
	"/workflow/input/python3 (554) CPU/thread 554 (python3)/ProfilerStep#3"

# the starved DataLoader: its item first, with its events' total
dl=$(python3 - "$GPU/input.pt.trace.json.gz" <<'EOF'
import gzip, json, sys
from decimal import Decimal
evs = json.load(gzip.open(sys.argv[1], "rt"), parse_float=Decimal)["traceEvents"]
dl = [e for e in evs if e.get("ph") == "X" and e["name"].startswith("enumerate(DataLoader)#")]
print(len({e["name"] for e in dl}), dl[0]["name"], len(dl), int(sum(e["dur"] for e in dl) * 1000))
EOF
)
read -r names dl_name dl_count dl_total <<<"$dl"
"$BIN" summary "$TMP/input.db" annotations /workflow/input --format json >"$TMP/s.json" 2>"$TMP/err"
got=$(json "$TMP/s.json" '" ".join(str(d[0][k]) for k in ("name", "count", "total"))' 2>>"$TMP/err")
if [ "$names" = 1 ] && [ "$got" = "$dl_name $dl_count $dl_total" ]; then
	ok "input: $dl_name first, $dl_count instances, $dl_total ns as in the raw trace"
else
	not_ok "input: the DataLoader's item" "summary '$got', raw trace '$dl' $(head -c 200 "$TMP/err")"
fi

capture train tests/data/gpu/train.pt.trace.json.gz /workflow/train \
	"/workflow/train/python3 (473) CPU/thread 473 (python3)/ProfilerStep#3"
capture straggler "$GPU/straggler_rank0.pt.trace.json.gz" /workflow/straggler_rank0 \
	"/workflow/straggler_rank0/rank 0/python3 (588) CPU/thread 588 (python3)/ProfilerStep#3"

if [ ! -d "$SAMPLES" ]; then
	skip "samples" "no samples at $SAMPLES"
else
	w=/workflow/facebookresearch__HolisticTraceAnalysis__
	capture nccl "$SAMPLES/facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz" "${w}nccl_data" \
		"${w}nccl_data/rank 0/python3.10 (2910249) CPU/thread 2910249 (pt_main_thread)/ProfilerStep#5"
	capture gpu_annotated "$SAMPLES/facebookresearch__HolisticTraceAnalysis__step_based_trace_2543932.json.gz" \
		"${w}step_based_trace_2543932"
	capture control "$SAMPLES/facebookresearch__HolisticTraceAnalysis__control.json.gz" "${w}control" \
		"${w}control/rank 3/python3.8 (3113936) CPU/thread 3113936 (python3.8)/ProfilerStep#1010"
	capture gloo "$SAMPLES/facebookresearch__HolisticTraceAnalysis__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz" \
		"${w}rank-34.Jul_15_10_52_41.1074" \
		"${w}rank-34.Jul_15_10_52_41.1074/rank 34/pyper:trainer:8:2 (1074) CPU/thread 1074 (pt_main_thread)/ProfilerStep#551"
fi

# no annotations: no rows, why on standard error, exit 0
printf '%s\n' '{"traceEvents": [' \
	'{"name": "aten::mm", "ph": "X", "cat": "cpu_op", "ts": 0, "dur": 100, "pid": 1, "tid": 1}' ']}' \
	>"$TMP/plain.json"
if "$BIN" import -o "$TMP/plain.db" --workflow w --step s "$TMP/plain.json" >/dev/null 2>"$TMP/err" &&
	"$BIN" summary "$TMP/plain.db" annotations /w/s --format json >"$TMP/s.json" 2>"$TMP/err" &&
	[ "$(json "$TMP/s.json" 'len(d)')" = 0 ] && grep -q "no annotations among the" "$TMP/err"; then
	ok "no annotations: no rows, and why ($(head -n 1 "$TMP/err"))"
else
	not_ok "no annotations" "$(head -c 300 "$TMP/err")"
fi

summary
