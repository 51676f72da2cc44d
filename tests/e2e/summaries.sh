#!/usr/bin/env bash
# End-to-end tests of the summaries (:kernels, :ops, :api; `grademl-tui
# summary`) on real traces from ../shared/samples: Kineto's worker0 trace
# (kernels, copies and sets on one stream) and HTA's nccl_data (NCCL
# kernels, an autograd thread), each imported alone.
#
#   - every figure of every row (count, total, share, mean, median, min,
#     max, stddev, type, bytes and bandwidth; self and device time of an
#     operator) against tests/e2e/summaries_check.py, an independent
#     computation from the raw JSON (json and gzip only), for one
#     ProfilerStep and for the whole file; each row's first instance is the
#     one of its name that started first;
#   - two places that show one quantity agree: a step's :kernels total is
#     the device work a query sums under its path, and the device time of
#     its runtime calls (what the tree's details pane shows);
#   - the explorer, headless at 200x50: :goto the step, :kernels, :ops and
#     :api show "N rows" for the N names `summary` prints, the largest
#     first; Enter on a row shows its first instance in the tree;
#   - :ranks on PARAM's eight ranks imported as one step: each rank's step
#     time, compute, comm and idle% against the raw JSON, its wait and the
#     straggler mark as the report's imbalance section has them, and the
#     explorer's table;
#   - a name with escape sequences reaches the screen as visible text.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init summaries
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
CHECK=$ROOT/tests/e2e/summaries_check.py
e2e_home

e2e_need_bin
if [ ! -d "$SAMPLES" ]; then
	skip "summaries" "no samples at $SAMPLES"
	summary
	exit 0
fi

# sample NAME FILE STEP THREADPATH: imports FILE and runs every check on
# the ProfilerStep STEP (under THREADPATH) and on the whole file.
sample() {
	local name=$1 trace=$SAMPLES/$2 step=$3 path="$4/$3" db=$TMP/$1.db
	if [ ! -f "$trace" ]; then
		skip "$name" "no $trace"
		return
	fi
	if ! "$BIN" import -o "$db" "$trace" >/dev/null 2>"$TMP/err"; then
		not_ok "$name: import" "$(head -c 300 "$TMP/err")"
		return
	fi
	local kind filter scope
	for kind in kernels ops api; do
		case $kind in
		kernels) filter='(kind = kernel or kind = memcpy or kind = memset)' ;;
		ops) filter='kind = operator' ;;
		api) filter='kind = runtime' ;;
		esac
		for scope in "step:$step" all; do
			local where="" args=("$kind")
			if [ "$scope" != all ]; then
				where="path = \"$path/**\" "
				args+=("$path")
			fi
			if ! "$BIN" summary "$db" "${args[@]}" --format json >"$TMP/s.json" 2>"$TMP/err" ||
				! "$BIN" query "$db" "phases $where$filter | select id, name, start" \
					--format json >"$TMP/p.json" 2>>"$TMP/err"; then
				not_ok "$name: $kind $scope" "$(head -c 300 "$TMP/err")"
				continue
			fi
			if python3 "$CHECK" "$trace" "$scope" "$kind" "$TMP/s.json" "$TMP/p.json" \
				>"$TMP/out" 2>&1; then
				ok "$name: $(tail -n 1 "$TMP/out")"
			else
				not_ok "$name: $kind $scope" "$(head -n 5 "$TMP/out" | tr '\n' '|')"
			fi
		done
	done

	# the step's kernels total, as a query sums it and as its runtime
	# calls' device time
	"$BIN" summary "$db" kernels "$path" --format json >"$TMP/k.json" &&
		"$BIN" query "$db" "phases path = \"$path/**\" (kind = kernel or kind = memcpy or kind = memset) | stats sum(dur)" \
			--format json >"$TMP/q1.json" &&
		"$BIN" query "$db" "phases path = \"$path/**\" kind = runtime | stats sum(device)" \
			--format json >"$TMP/q2.json" 2>"$TMP/err"
	local total q1 q2
	total=$(json "$TMP/k.json" 'sum(r["total"] for r in d)')
	q1=$(json "$TMP/q1.json" 'd[0]["sum(dur)"]')
	q2=$(json "$TMP/q2.json" 'd[0]["sum(device)"]')
	if [ -n "$total" ] && [ "$total" -gt 0 ] && [ "$total" = "$q1" ] && [ "$total" = "$q2" ]; then
		ok "$name: $step's kernels total $total ns = the query's sum = its runtime calls' device time"
	else
		not_ok "$name: $step's kernels total" "summary $total, query $q1, runtime device $q2"
	fi

	# the explorer
	local rows screen
	{
		echo "type :goto $path"
		echo Enter
		for kind in kernels ops api; do
			echo "type :$kind"
			echo Enter
			echo j
			echo k
			echo dump
		done
		echo Enter
		echo dump
	} >"$TMP/s.keys"
	if ! "$BIN" --keys "$TMP/s.keys" --dump "$TMP/dump.txt" --size 200x50 "$db" 2>"$TMP/err"; then
		not_ok "$name: explorer" "$(head -c 300 "$TMP/err")"
		return
	fi
	local i=0
	for kind in kernels ops api; do
		sed -n "$((i * 50 + 1)),$((i * 50 + 50))p" "$TMP/dump.txt" >"$TMP/screen.txt"
		"$BIN" summary "$db" "$kind" "$path" --format json >"$TMP/s.json"
		rows=$(json "$TMP/s.json" 'len(d)')
		local first count
		# the function's name: the table shows a C++ signature shortened
		first=$(json "$TMP/s.json" 'd[0]["name"].split("(")[0].split("<")[0].strip().split(" ")[-1][:30]')
		count=$(json "$TMP/s.json" 'd[0]["count"]')
		if grep -q ":$kind of $step (all beneath it, no step left out) .* $rows rows" "$TMP/screen.txt" &&
			sed -n 4p "$TMP/screen.txt" | grep -qF " $first" &&
			sed -n 4p "$TMP/screen.txt" | grep -qE " $count "; then
			ok "$name: :$kind shows $rows rows, $first first"
		else
			not_ok "$name: :$kind" "$(sed -n '2p;4p' "$TMP/screen.txt" | cut -c1-160 | tr '\n' '|')"
		fi
		i=$((i + 1))
	done
	# Enter on the first :api row: the tree, that call selected
	sed -n "$((i * 50 + 1)),$((i * 50 + 50))p" "$TMP/dump.txt" >"$TMP/screen.txt"
	first=$(json "$TMP/s.json" 'd[0]["name"]')
	if ! grep -q ':api of' "$TMP/screen.txt" && sed 1,2d "$TMP/screen.txt" | grep -qF " $first "; then
		ok "$name: Enter shows $first in the tree"
	else
		not_ok "$name: Enter" "$(head -n 3 "$TMP/screen.txt" | cut -c1-160 | tr '\n' '|')"
	fi
}

sample kineto pytorch__kineto__worker0.1623143089861.pt.trace.json.gz ProfilerStep#6 \
	"/workflow/pytorch__kineto__worker0.1623143089861/rank 0/python (25738) CPU/thread 25738 (python)"
sample nccl facebookresearch__HolisticTraceAnalysis__nccl_data.json.gz ProfilerStep#5 \
	"/workflow/facebookresearch__HolisticTraceAnalysis__nccl_data/rank 0/python3.10 (2910249) CPU/thread 2910249 (pt_main_thread)"

# a NCCL kernel is communication by HTA's rule
if [ -f "$TMP/nccl.db" ] && "$BIN" summary "$TMP/nccl.db" kernels --format json >"$TMP/s.json" &&
	[ "$(json "$TMP/s.json" 'sorted({r["type"] for r in d if r["name"].startswith("nccl")})')" = "['COMM']" ]; then
	ok "nccl: NCCL kernels are COMM"
elif [ -f "$TMP/nccl.db" ]; then
	not_ok "nccl: NCCL kernels are COMM" "$(head -c 300 "$TMP/s.json")"
fi

# :ranks on PARAM's eight ranks of one step: step time, compute, comm and
# idle% against the raw JSON; wait and the straggler as the report's
# imbalance section has them; the explorer's table with the straggler
PARAM=("$SAMPLES"/facebookresearch__param__worker*_step_12.*.pt.trace.json)
if [ ! -f "${PARAM[0]}" ]; then
	skip "ranks" "no PARAM worker traces in $SAMPLES"
elif ! "$BIN" import -o "$TMP/param.db" --workflow w --step s "${PARAM[@]}" >/dev/null 2>"$TMP/err"; then
	not_ok "ranks: import" "$(head -c 300 "$TMP/err")"
else
	"$BIN" summary "$TMP/param.db" ranks /w/s --format json >"$TMP/r.json" 2>"$TMP/err"
	if python3 "$CHECK" ranks "$TMP/r.json" "${PARAM[@]}" >"$TMP/out" 2>&1; then
		ok "param: $(tail -n 1 "$TMP/out")"
	else
		not_ok "param: ranks" "$(head -n 5 "$TMP/out" | tr '\n' '|')"
	fi
	"$BIN" report --format json "$TMP/param.db" >"$TMP/report.json"
	agree=$(python3 - "$TMP/r.json" "$TMP/report.json" <<'EOF'
import json, sys
rows, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
g = [g for g in rep["imbalance"] if g["kind"] == "ranks" and g.get("meets")]
if len(g) != 1:
    print(f"{len(g)} meeting groups in the report")
    sys.exit()
wait = {r["rank_id"]: r["wait_ns"] for r in g[0]["ranks"]}
bad = [r["rank"] for r in rows if r["wait"] != wait.get(r["id"])]
marked = [r["id"] for r in rows if r["straggler"] == "straggler"]
if bad or marked != [g[0]["straggler_id"]]:
    print(f"waits differ for {bad}; marked {marked}, report {g[0]['straggler_id']}")
else:
    print("ok", g[0]["straggler"])
EOF
	)
	case $agree in
	ok*) ok "param: waits and the straggler (${agree#ok }) as the report's imbalance" ;;
	*) not_ok "param: waits and straggler" "$agree" ;;
	esac
	printf 'type :goto /w/s\nEnter\ntype :ranks\nEnter\nj\nk\n' >"$TMP/r.keys"
	"$BIN" --keys "$TMP/r.keys" --dump "$TMP/dump.txt" --size 200x50 "$TMP/param.db" 2>"$TMP/err"
	straggler=$(json "$TMP/r.json" '[r["rank"] for r in d if r["straggler"]][0]')
	if grep -q ":ranks of s .* 8 rows" "$TMP/dump.txt" &&
		grep -E "^ $straggler .*straggler" "$TMP/dump.txt" >/dev/null; then
		ok "param: :ranks shows 8 ranks, $straggler marked"
	else
		not_ok "param: :ranks" "$(sed -n '2,5p' "$TMP/dump.txt" | cut -c1-160 | tr '\n' '|')"
	fi
fi

# a name from the trace that holds escape sequences: shown as visible text,
# no ESC byte on the screen; `summary` to a pipe keeps it exact
printf '%s\n' '{"traceEvents": [' \
	'{"name": "evil\u001b]0;title\u0007 op \u001b[2J", "ph": "X", "cat": "cpu_op", "ts": 0, "dur": 100, "pid": 1, "tid": 1},' \
	'{"name": "child", "ph": "X", "cat": "cpu_op", "ts": 10, "dur": 20, "pid": 1, "tid": 1}' ']}' \
	>"$TMP/hostile.json"
if "$BIN" import -o "$TMP/hostile.db" --workflow w --step s "$TMP/hostile.json" >/dev/null 2>"$TMP/err"; then
	printf 'type :ops /w/s\nEnter\nj\nk\n' >"$TMP/h.keys"
	"$BIN" --keys "$TMP/h.keys" --dump "$TMP/dump.txt" --size 200x50 "$TMP/hostile.db" 2>"$TMP/err"
	if grep -q ":ops of s .* 2 rows" "$TMP/dump.txt" && ! grep -q $'\033' "$TMP/dump.txt" &&
		grep -q 'evil.*op' "$TMP/dump.txt" &&
		"$BIN" summary "$TMP/hostile.db" ops /w/s --format csv | grep -q $'evil\033]0;title\007 op \033\\[2J'; then
		ok "a hostile name: visible on the screen, exact to a pipe"
	else
		not_ok "a hostile name" "$(grep -a evil "$TMP/dump.txt" | cut -c1-120 | cat -v)"
	fi
else
	not_ok "import hostile.json" "$(head -c 300 "$TMP/err")"
fi

# bad usage: exit 2, the first line says what is wrong
"$BIN" summary "$TMP/kineto.db" flops >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 2 ] && head -n 1 "$TMP/err" | grep -q "unknown summary 'flops'"; then
	ok "an unknown summary: exit 2, named"
else
	not_ok "an unknown summary" "exit $rc: $(head -c 200 "$TMP/err")"
fi
"$BIN" summary "$TMP/kineto.db" kernels /workflow/nosuch >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "nosuch" "$TMP/err"; then
	ok "a missing path: exit 2, named"
else
	not_ok "a missing path" "exit $rc: $(head -c 200 "$TMP/err")"
fi

summary
