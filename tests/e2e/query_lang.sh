#!/usr/bin/env bash
# End-to-end tests of the query language's arithmetic, its step field and
# `by source` on the GPU capture's two DDP ranks, imported together, each
# figure against Python over the raw traces (tests/e2e/query_lang_check.py:
# json and gzip only):
#   - `by source | count` over kernels: each source by its file name and
#     rank, with its kernels;
#   - `by source, step | count` over kernels: each profiler step's kernels
#     (those whose launching runtime call lies in the step's window on its
#     thread);
#   - `where step = NAME`: the same count through a condition;
#   - arithmetic: the kernels with `end - start > 0.5 * 21us`, and on the
#     profiler steps `dur` (the raw one), `dur - self` and `self / dur`
#     against the same operations on the dur and self columns.
#   - the gaps source on the H100 train trace and, when ../shared/samples
#     is present, HTA's NCCL sample (two streams): every stream's gaps
#     (start and end, to the nanosecond, in the trace's own time) against
#     tests/tools/hta_reference.py --gaps; per stream and cause the gaps'
#     count and time against the report's idle causes; each gap's op lies
#     on the launching thread and holds the gap's middle; and
#     `gaps | top 10 dur` is the ten longest; in the explorer, Enter on a
#     gap of `:gaps` shows its op in the tree.
#   - the explorer's :spark on the GPU capture (tests/data/gpu/import.sh):
#     every metric as the query language names it (resource.name, and
#     name@host) is accepted, and draws the same cells as its bare name;
#     an unknown host is refused with the accepted forms.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.  Needs:
# bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init query_lang
e2e_need_bin
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3
DATA=tests/data/gpu
DB=$TMP/ddp.db

if ! "$BIN" import -o "$DB" --workflow gpu --step ddp "$DATA"/ddp_rank*.pt.trace.json.gz \
	>"$TMP/import.out" 2>&1; then
	not_ok "import" "$(tail -1 "$TMP/import.out")"
	summary
	exit 1
fi

q() {
	"$BIN" query "$DB" "$1" --format json >"$TMP/$2.json" 2>"$TMP/$2.err" ||
		echo "query failed: $1: $(head -1 "$TMP/$2.err")" >"$TMP/$2.json"
}
q 'phases kind = kernel | by source | count' by_source
q 'phases kind = kernel | by source, step | count' by_step
q 'phases kind = kernel step = "ProfilerStep#3" | by source | count' step3
q 'phases kind = kernel | where end - start > 0.5 * 21us | by source | count' long
q 'phases kind = profiler_step | select source.name, name, dur, self, dur - self, self / dur' steps

relay query_lang_check < <("$PY" tests/e2e/query_lang_check.py "$TMP" "$DATA"/ddp_rank*.pt.trace.json.gz 2>&1)

# gaps TRACE LABEL: the gaps source on TRACE imported alone
gaps() {
	local db=$TMP/$2.db
	if ! "$BIN" import -o "$db" "$1" >"$TMP/import-$2.out" 2>&1; then
		not_ok "$2: import" "$(tail -1 "$TMP/import-$2.out")"
		return
	fi
	DB=$db
	q 'gaps | select track, start, end, cause, thread, op, dur' "$2-gaps"
	q 'gaps | top 10 dur | select track, start, end' "$2-top"
	q 'sql SELECT id, pid, tid, time_offset_ns FROM tracks JOIN (SELECT id AS sid, time_offset_ns FROM sources) ON sid = source_id' "$2-tracks"
	q 'sql SELECT g.start_ns AS g0, g.end_ns AS g1, g.thread_id AS thread, p.track_id AS track, p.start_ns AS p0, p.start_ns + p.dur_ns AS p1 FROM gm_gaps g JOIN phases p ON p.id = g.op_id' "$2-ops"
	"$BIN" report --format json "$db" >"$TMP/$2-report.json" 2>"$TMP/$2-report.err"
	"$PY" tests/tools/hta_reference.py --gaps "$1" >"$TMP/$2-ref.txt" 2>&1
	relay query_lang_check < <("$PY" tests/e2e/query_lang_check.py --gaps "$TMP" "$2" 2>&1)
}
gaps "$DATA/train.pt.trace.json.gz" train
# In the explorer, Enter on a gap shows its op in the tree: the breadcrumb
# is the op's parent's path.
parent=$("$BIN" query "$TMP/train.db" 'gaps | top 1 dur | select op.path' --format csv |
	tail -n +2 | tr -d '\r' | sed 's|/[^/]*$||; s|.*/||')
printf 'type :gaps | top 1 dur\nEnter\nEnter\n' >"$TMP/gaps.keys"
(cd "$TMP" && "$BIN" --keys "$TMP/gaps.keys" --dump "$TMP/gaps-tree.txt" --size 200x24 \
	"$TMP/train.db") </dev/null >/dev/null 2>&1
if [ -n "$parent" ] && head -1 "$TMP/gaps-tree.txt" | grep -q " › $parent *$"; then
	ok "explorer: Enter on :gaps' longest gap shows its op under '$parent'"
else
	not_ok "explorer: Enter on a gap shows its op" "$(head -1 "$TMP/gaps-tree.txt"), wanted '$parent'"
fi
SAMPLE=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace/facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz
if [ -f "$SAMPLE" ]; then
	gaps "$SAMPLE" nccl
else
	skip "gaps on HTA's NCCL sample" "$SAMPLE is absent"
fi
# One explorer run at 120x24 types `:spark REF` for each metric's name, then
# resource.name, name@host and both, and dumps each screen (24 lines).
GPU_DB=$TMP/gpu.db
# screen K FILE: line 2 (the header) and the rows' sparklines (the last 12
# columns of lines 3 to 6) of the K-th screen
screen() {
	sed -n "$((24 * $1 + 2)),$((24 * $1 + 6))p" "$2" | sed 's/ *$//' |
		sed -n '1p;2,5s/.*\(.\{12\}\)$/\1/p'
}
if ! bash "$DATA/import.sh" "$BIN" "$GPU_DB" >"$TMP/import-gpu.out" 2>&1; then
	not_ok ":spark: GPU capture imports" "$(tail -1 "$TMP/import-gpu.out")"
else
	"$BIN" query "$GPU_DB" 'metrics | select resource, name, host' --format csv |
		tail -n +2 | tr -d '\r' >"$TMP/metrics.csv"
	: >"$TMP/spark.keys"
	while IFS=, read -r res name host; do
		for ref in "$name" "$res.$name" "$name@$host" "$res.$name@$host"; do
			printf 'type :spark %s\nEnter\ndump\n' "$ref" >>"$TMP/spark.keys"
		done
	done <"$TMP/metrics.csv"
	printf 'type :spark utilization.gpu@no-such-host\nEnter\n' >>"$TMP/spark.keys"
	(cd "$TMP" && "$BIN" --keys "$TMP/spark.keys" --dump "$TMP/spark.txt" --size 120x24 \
		"$GPU_DB") </dev/null >"$TMP/spark.err" 2>&1
	n=0 k=0 bad=""
	while IFS=, read -r res name host; do
		n=$((n + 1))
		bare=$(screen $k "$TMP/spark.txt" | tail -n +2)
		for ref in "$name" "$res.$name" "$name@$host" "$res.$name@$host"; do
			shot=$(screen $k "$TMP/spark.txt")
			k=$((k + 1))
			if grep -q 'no metric series' <<<"$shot" || [ "$(tail -n +2 <<<"$shot")" != "$bare" ] ||
				[ -z "$(tr -d ' \n' <<<"$bare")" ] || ! head -1 <<<"$shot" | grep -qF "${ref:0:10}"; then
				bad="$bad $ref"
			fi
		done
	done <"$TMP/metrics.csv"
	if [ "$n" -gt 0 ] && [ -z "$bad" ]; then
		ok ":spark: each of $n metrics as resource.name, name@host and both, drawn as its name"
	else
		not_ok ":spark: metrics as the query language names them" "of $n:${bad:- none}"
	fi
	if grep -q "no metric series named 'utilization.gpu@no-such-host' (NAME or RESOURCE.NAME\[@HOST\]" \
		"$TMP/spark.txt"; then
		ok ":spark: an unknown host is refused, naming the accepted forms"
	else
		not_ok ":spark: an unknown host is refused" "$(tail -1 "$TMP/spark.txt")"
	fi
fi
summary
