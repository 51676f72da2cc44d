#!/usr/bin/env bash
# End-to-end tests of the step medians and renamed rows of `grademl-tui
# diff` (grademl-tui(1), DIFF).
#
# On a starved-DataLoader run and its fixed twin (tests/e2e/diff_pair.py
# writes both: single-process DataLoader and pageable copies, 5 steps, the
# first one 40 ms slower; multi-process DataLoader and pinned copies, 8
# steps):
#   - the text's first table after the header is the step medians, and its
#     first row is ProfilerStep#* with the medians, their difference and
#     the warm-up computed here from the raw traces;
#   - the warm-up (the first step's excess over A's median) is shown apart,
#     as its own figure;
#   - the DataLoader iterator and the host-to-device copy each read as one
#     renamed row, neither as added nor as removed;
#   - per step, aten::linear's first-step initialisation is its warm-up,
#     apart, and the rows that changed per step come before it;
#   - every figure of the JSON against tests/e2e/diff_check.py;
#   - `:diff` headless at 80x24: the title leads with the step median.
# On two real captures of tests/truth/gpu/data (input, sync: three steps
# each), the JSON's step medians and rows against diff_check.py too.
#
# Prints "ok - NAME", "not ok - NAME (why)", then "N passed, M failed";
# exits 1 when any check failed.  Needs: bash, python3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init diff_steps
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3
e2e_home
e2e_need_bin

REAL=tests/truth/gpu/data
"$PY" tests/e2e/diff_pair.py "$TMP/a.json" "$TMP/b.json" || not_ok "diff_pair.py"
# each trace alone into $TMP/NAME.db
for t in "a=$TMP/a.json" "b=$TMP/b.json" "input=$REAL/input.pt.trace.json.gz" \
	"sync=$REAL/sync.pt.trace.json.gz"; do
	"$BIN" import -o "$TMP/${t%%=*}.db" "${t#*=}" >/dev/null 2>"$TMP/err" ||
		not_ok "${t%%=*}: import" "$(head -c 300 "$TMP/err")"
done
[ "$fail" = 0 ] || {
	summary
	exit 1
}
A=$TMP/a.db B=$TMP/b.db

# what the raw traces say: each run's step durations, their median, the
# first step's and its excess, as the text prints them
"$PY" - "$TMP/a.json" "$TMP/b.json" >"$TMP/want.txt" <<'EOF'
import json, sys

def fmt(ns):
    """format_duration's three digits."""
    v, unit = abs(ns), "ns"
    for scale, u in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if v >= scale:
            v, unit = v / scale, u
            break
    else:
        return "%s%d ns" % ("-" if ns < 0 else "", v)
    s = "%.0f" % v if v >= 99.95 else "%.1f" % v if v >= 9.995 else "%.2f" % v
    return ("-" if ns < 0 else "") + s + " " + unit

def steps(path):
    ev = json.load(open(path))["traceEvents"]
    st = sorted((e["ts"], round(e["dur"] * 1000)) for e in ev
                if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    d = sorted(x for _, x in st)
    n = len(d)
    med = d[n // 2] if n % 2 else (d[n // 2 - 1] + d[n // 2]) // 2
    first = st[0][1]
    return n, med, first, first - med if n >= 3 and first > med else 0

(na, ma, fa, wa), (nb, mb, fb, wb) = steps(sys.argv[1]), steps(sys.argv[2])
print(na, nb, ma, mb, mb - ma, wa, wb)
print(fmt(ma), fmt(mb), ("+" if mb > ma else "") + fmt(mb - ma), fmt(wa), fmt(wb), sep="|")
EOF
read -r na nb ma mb dm wa wb <"$TMP/want.txt"
IFS='|' read -r fma fmb fdm fwa fwb < <(sed -n 2p "$TMP/want.txt")

"$BIN" diff "$A" "$B" >"$TMP/text.txt" 2>"$TMP/err"
# the line after the header's makespan line and a blank, and the first row
# after the table's own header
lead=$(sed -n '6p' "$TMP/text.txt")
first=$(sed -n '8p' "$TMP/text.txt")
read -r -a f <<<"$first"
if [[ $lead == "step medians "* ]] && [ "${f[0]}" = "$na" ] && [ "${f[1]}" = "$nb" ] &&
	[ "${f[2]} ${f[3]}" = "$fma" ] && [ "${f[4]} ${f[5]}" = "$fmb" ] &&
	[ "${f[6]} ${f[7]}" = "$fdm" ] && [ "${f[*]: -1}" = "ProfilerStep#*" ]; then
	ok "the first row is the step median change: $fma -> $fmb ($fdm), $na and $nb steps"
else
	not_ok "step median first" "want $na $nb $fma $fmb $fdm; got '$lead' / '$first'"
fi
if [ "$wa" -gt 0 ] && [ "$wb" = 0 ] && [ "${f[9]} ${f[10]}" = "$fwa" ] &&
	[ "${f[11]} ${f[12]}" = "$fwb" ]; then
	ok "the first step's excess is shown apart as warm-up: A $fwa, B $fwb"
else
	not_ok "warm-up apart" "want A $fwa B $fwb; got '$first'"
fi

"$BIN" diff "$A" "$B" --format json >"$TMP/pair.json" 2>"$TMP/err"
if "$PY" - "$TMP/pair.json" "$ma" "$mb" "$dm" "$wa" <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
s = d["steps"][0]
want = [int(x) for x in sys.argv[2:]]
sys.exit(not (s["name"] == "ProfilerStep#*" and
              [s["a"]["median_ns"], s["b"]["median_ns"], s["median_diff_ns"],
               s["a"]["warmup_ns"]] == want))
EOF
	ok "the JSON's first step median: A $ma ns, B $mb ns, warm-up $wa ns"
else
	not_ok "JSON step median" "$(head -c 600 "$TMP/pair.json")"
fi

# one renamed row each for the iterator and the copy
"$PY" - "$TMP/pair.json" >"$TMP/renamed.txt" <<'EOF'
import json, sys
lv = {l["level"]: l for l in json.load(open(sys.argv[1]))["levels"]}
for level, word, a, b in (
        ("op", "DataLoaderIter", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
         "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"),
        ("kernel", "Memcpy", "Memcpy HtoD (Pageable -> Device)",
         "Memcpy HtoD (Pinned -> Device)")):
    rows = [r for r in lv[level]["rows"] if word in r["name"]]
    good = (len(rows) == 1 and rows[0]["status"] == "renamed" and rows[0]["path"][-1] == a
            and rows[0]["b_path"][-1] == b and rows[0]["a"]["count"] and rows[0]["b"]["count"]
            and lv[level]["added"] == 0 and lv[level]["removed"] == 0)
    print(level, "ok" if good else "bad", [(r["name"], r["status"]) for r in rows])
EOF
while read -r level verdict rest; do
	if [ "$verdict" = ok ]; then
		ok "$level: the renamed counterpart is one renamed row, none added or removed"
	else
		not_ok "$level: renamed row" "$rest"
	fi
done <"$TMP/renamed.txt"
if grep -qE '^ +5 +8 .* renamed +\.\.\..*_MultiProcessingDataLoaderIter\.__next__$' \
	"$TMP/text.txt"; then
	ok "the text marks the iterator's row renamed"
else
	not_ok "text renamed" "$(grep -i dataloader "$TMP/text.txt" | head -c 300)"
fi

# aten::linear: A's first step's 40 ms of initialisation is its warm-up,
# apart; per step it hardly changed, and rows that changed more lead
"$PY" - "$TMP/a.json" "$TMP/pair.json" >"$TMP/linear.txt" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
v = [round(e["dur"] * 1000) for e in sorted(
    (e for e in ev if e.get("name") == "aten::linear"), key=lambda e: e["ts"])]
s = sorted(v)
med = s[len(s) // 2]
ops = [l for l in json.load(open(sys.argv[2]))["levels"] if l["level"] == "op"][0]["rows"]
i = [r["name"] for r in ops].index("ProfilerStep#* > aten::linear")
per = ops[i]["per_step"]
print(v[0] - med, per["a"]["warmup_ns"], abs(per["median_diff_ns"]), i, ops[0]["status"])
EOF
read -r want got change pos lead <"$TMP/linear.txt"
if [ "$want" -gt 30000000 ] && [ "$got" = "$want" ] && [ "$change" -lt 1000000 ] &&
	[ "$pos" -ge 3 ] && [ "$lead" = renamed ]; then
	ok "aten::linear: A's first-step excess ($want ns) is warm-up apart; per step it moved $change ns, row $((pos + 1)); the iterator leads"
else
	not_ok "aten::linear per step" "want warm-up $want, got $got; change $change; row $pos; first $lead"
fi

relay diff_check.py < <("$PY" tests/e2e/diff_check.py "$TMP/a.json" "$TMP/b.json" \
	"$TMP/pair.json" 2>&1 | sed 's/^\(not \)\{0,1\}ok - /&pair: /')

printf 'type :diff b.db\nEnter\n' >"$TMP/diff.keys"
if (cd "$TMP" && "$BIN" --keys diff.keys --dump screen.txt --size 80x24 a.db) 2>"$TMP/err" &&
	sed -n 2p "$TMP/screen.txt" | grep -qF -- ":diff b.db: step median $fma -> $fmb ("; then
	ok ":diff's title leads with the step median change, $fma -> $fmb"
else
	not_ok ":diff title" "$(sed -n 2p "$TMP/screen.txt" 2>/dev/null) $(head -c 200 "$TMP/err")"
fi

# two real captures, three steps each
if "$BIN" diff "$TMP/input.db" "$TMP/sync.db" --format json >"$TMP/real.json" 2>"$TMP/err"; then
	relay diff_check.py < <("$PY" tests/e2e/diff_check.py "$REAL/input.pt.trace.json.gz" \
		"$REAL/sync.pt.trace.json.gz" "$TMP/real.json" 2>&1 |
		sed 's/^\(not \)\{0,1\}ok - /&real input vs sync: /')
else
	not_ok "real input vs sync" "$(head -c 300 "$TMP/err")"
fi

summary
