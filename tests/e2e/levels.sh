#!/usr/bin/env bash
# Every level of the tree gets the same analyses, whatever importer made it
# (model/analysis/level.h): the CPU truth cases' windows as OTLP spans under
# a root span (tests/truth/cpu/data/nested.otlp.json, made by
# tests/truth/cpu/nested.py) with the gloo straggler's two ranks
# (tests/truth/cpu_torch/data) imported under one of the spans (the
# committed nested files must be what nested.py writes):
#   - the report gives each span its Resources entry and its own top issue
#     (the verdict itself is checked by the truth suite, its figures by
#     resources.sh);
#   - :ranks and `summary ranks` at the span that holds the ranks, or at
#     any phase inside one of them, list both ranks; the imbalance among
#     them names the span as its parent;
#   - a summary without rows says why, on standard error and in the
#     explorer's status line: no ranks at or above a span, the ranks held
#     by the parts beneath the root span, no operators beneath a span
#     with nothing traced under it;
#   - the same windows as a manifest's steps nested two deep
#     (nested.jsonl): each step at each depth its Resources entry, and a
#     summary at a nested step says why it has no rows;
#   - the critical path is the same at every level: the four windows as
#     flat manifest steps, as OTLP spans and as steps nested two deep each
#     get the same what-if (each window, twice as fast) and the same
#     critical-path top issue; the parts holding them get none.
# Prints "ok - NAME" / "not ok - NAME (why)" / "skip - NAME (why)", then the
# summary; exits 1 when any check failed.  Needs python3.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
. tests/e2e/tap.sh
e2e_init levels
e2e_home
e2e_need_bin
e2e_need_tools python3

CPU=tests/truth/cpu/data
TORCH=tests/truth/cpu_torch/data

# the committed files are what tests/truth/cpu/nested.py writes
mkdir -p "$TMP/gen"
cp "$CPU/workflow.jsonl" "$TMP/gen/"
if python3 tests/truth/cpu/nested.py "$TMP/gen" 2>"$TMP/err" &&
	cmp -s "$TMP/gen/nested.otlp.json" "$CPU/nested.otlp.json" &&
	cmp -s "$TMP/gen/nested.jsonl" "$CPU/nested.jsonl"; then
	ok "tests/truth/cpu/nested.py writes the committed nested.otlp.json and nested.jsonl"
else
	not_ok "tests/truth/cpu/nested.py writes the committed files" \
		"rerun it and commit its output $(head -c 200 "$TMP/err")"
fi
DB=$TMP/levels.db
W=/levels
if ! "$BIN" import -o "$DB" --workflow levels "$CPU/nested.otlp.json" 2>"$TMP/err" ||
	! "$BIN" import -o "$DB" "$CPU/sadf.json.gz" 2>>"$TMP/err" ||
	! "$BIN" import -o "$DB" --workflow levels --step pipeline/thread \
		"$TORCH/straggler_rank0.pt.trace.json.gz" 2>>"$TMP/err" ||
	! "$BIN" import -o "$DB" --workflow levels --step pipeline/thread \
		"$TORCH/straggler_rank1.pt.trace.json.gz" 2>>"$TMP/err" ||
	! "$BIN" analyze "$DB" >/dev/null 2>>"$TMP/err" ||
	! "$BIN" report "$DB" >"$TMP/report.txt" 2>>"$TMP/err" ||
	! "$BIN" report --format json "$DB" >"$TMP/report.json" 2>>"$TMP/err"; then
	not_ok "import, analyze and report" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi

# ---- the report: each span its Resources entry and its own issue ----
for s in cores thread disk sleep; do
	if grep -A3 "^  $W/pipeline/$s\$" "$TMP/report.txt" | grep -q '^      bound by '; then
		ok "report: span $s has its Resources entry with what bounds it"
	else
		not_ok "report: span $s has its Resources entry" \
			"$(grep -n "pipeline/$s" "$TMP/report.txt" | head -3 | tr '\n' '|')"
	fi
done
got=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
for s in ("cores", "thread", "disk", "sleep"):
    kinds = [i["kind"] for i in doc["top_issues"] if i["path"] == sys.argv[2] + "/pipeline/" + s]
    print(s, ",".join(k for k in kinds if k in ("bottleneck", "software-bound")) or "-")
' "$TMP/report.json" "$W")
while read -r s kinds; do
	if [ "$kinds" != "-" ]; then
		ok "report: span $s has its own top issue ($kinds)"
	else
		not_ok "report: span $s has its own top issue" "none of bottleneck, software-bound"
	fi
done <<<"$got"

# ---- :ranks at the span that holds them ----
# summary NAME WANT_ROWS STDERR_GLOB WHAT PATH: `summary WHAT PATH` prints
# WANT_ROWS rows and a standard error matching STDERR_GLOB ('' empty)
summ() {
	local name=$1 rows=$2 glob=$3 what=$4 path=$5 n
	if ! "$BIN" summary "${DB}" "$what" "$path" --format csv >"$TMP/s.csv" 2>"$TMP/s.err"; then
		not_ok "$name" "exit $?: $(head -c 200 "$TMP/s.err")"
		return
	fi
	n=$(($(wc -l <"$TMP/s.csv") - 1))
	# shellcheck disable=SC2053
	if [ "$n" = "$rows" ] && { [ -z "$glob" ] && [ ! -s "$TMP/s.err" ] ||
		[[ $(cat "$TMP/s.err") == $glob ]]; }; then
		ok "$name"
	else
		not_ok "$name" "$n rows; stderr '$(head -c 200 "$TMP/s.err")'"
	fi
}
summ "summary ranks at the span holding the ranks: both" 2 '' ranks "$W/pipeline/thread"
rank1=$("$BIN" query "$DB" "phases name = 'rank 1' | select path" --format csv 2>/dev/null |
	tail -n +2 | tr -d '"\r')
summ "summary ranks from inside rank 1: the span's two" 2 '' ranks "$rank1"
if grep -q "the 2 ranks of span thread" "$TMP/report.txt"; then
	ok "report: the imbalance among the ranks names the span that holds them"
else
	not_ok "report: the imbalance among the ranks names the span" \
		"$(grep -n 'ranks of' "$TMP/report.txt" | head -2 | tr '\n' '|')"
fi

# ---- no rows, and why ----
summ "summary ranks at the root span: its parts hold theirs, it says" 0 \
	'*no ranks at its level: the parts beneath it hold theirs*' ranks "$W/pipeline"
summ "summary ranks at a span without ranks: none at or above, it says" 0 \
	'*no ranks at or above it*' ranks "$W/pipeline/cores"
summ "summary ops at a span with nothing traced: it says so" 0 \
	'*no operators: a part of the workflow with nothing traced beneath it*' ops "$W/pipeline/cores"
summ "summary kernels at the span with CPU ranks: none among its phases" 0 \
	'*no device work (kernels, copies, sets) among the * phases beneath it*' kernels \
	"$W/pipeline/thread"
# ---- the same at a manifest's steps nested two deep ----
NDB=$TMP/nested.db
if "$BIN" import -o "$NDB" --workflow levels "$CPU/nested.jsonl" 2>"$TMP/err" &&
	"$BIN" import -o "$NDB" "$CPU/sadf.json.gz" 2>>"$TMP/err" &&
	"$BIN" report "$NDB" >"$TMP/nested.txt" 2>>"$TMP/err"; then
	for s in pipeline pipeline/busy pipeline/busy/cores pipeline/busy/thread pipeline/wait \
		pipeline/wait/disk pipeline/wait/sleep; do
		if grep -A3 "^  $W/$s\$" "$TMP/nested.txt" | grep -q '^      bound by '; then
			ok "report: nested step $s has its Resources entry with what bounds it"
		else
			not_ok "report: nested step $s has its Resources entry"
		fi
	done
	DB=$NDB summ "summary api at a nested step with nothing traced: it says so" 0 \
		'*no runtime calls: a part of the workflow with nothing traced beneath it*' api \
		"$W/pipeline/wait/disk"
else
	not_ok "nested steps: import and report" "$(head -c 300 "$TMP/err")"
fi

# ---- the critical path: one rule for a part, whatever importer made it ----
for form in workflow.jsonl nested.otlp.json nested.jsonl; do
	if ! "$BIN" import -o "$TMP/cp-$form.db" "$CPU/$form" 2>"$TMP/err" ||
		! "$BIN" import -o "$TMP/cp-$form.db" "$CPU/sadf.json.gz" 2>>"$TMP/err" ||
		! "$BIN" report --format json "$TMP/cp-$form.db" >"$TMP/cp-$form.json" 2>>"$TMP/err"; then
		not_ok "critical path: import and report $form" "$(head -c 300 "$TMP/err")"
	fi
done
if python3 - "$TMP" >"$TMP/cp.out" 2>&1 <<'PY'; then
import json, sys
forms = ["workflow.jsonl", "nested.otlp.json", "nested.jsonl"]
seen = {}
for form in forms:
    r = json.load(open("%s/cp-%s.json" % (sys.argv[1], form)))
    leaf = {}
    for c in r["critical_path"]:
        name = c["path"].rsplit("/", 1)[1]
        if name in ("cores", "thread", "disk", "sleep"):
            leaf[name] = (c["on_path_ns"], c["whatif_2x_makespan_ns"])
        elif c["whatif_2x_makespan_ns"] is not None:
            sys.exit("%s: %s holds the windows yet has a what-if" % (form, c["path"]))
    issues = [(i["path"].rsplit("/", 1)[1], i["explanation"])
              for i in r["top_issues"] if i["kind"] == "critical-path"]
    if len(leaf) != 4 or any(w is None for _, w in leaf.values()) or not issues:
        sys.exit("%s: windows %s, critical-path issues %s" % (form, leaf, issues))
    seen[form] = (leaf, issues)
    if seen[form] != seen[forms[0]]:
        sys.exit("%s: %s, but %s: %s" % (form, seen[form], forms[0], seen[forms[0]]))
print(seen[forms[0]])
PY
	ok "critical path: flat steps, OTLP spans and nested steps give each window the same what-if and issue"
else
	not_ok "critical path: the same what-ifs at every level" "$(tail -c 400 "$TMP/cp.out")"
fi

printf '%s\n' "type :goto $W/pipeline/cores" Enter "type :ranks" Enter >"$TMP/ranks.keys"
if "$BIN" --keys "$TMP/ranks.keys" --dump "$TMP/ranks.txt" --size 120x24 "$DB" 2>"$TMP/err" &&
	grep -q '0 names in .*: no ranks at or above it' "$TMP/ranks.txt"; then
	ok "explorer: :ranks at a span without ranks says why on the status line"
else
	not_ok "explorer: :ranks at a span without ranks says why" \
		"$(tail -1 "$TMP/ranks.txt" 2>/dev/null) $(head -c 200 "$TMP/err")"
fi

summary
