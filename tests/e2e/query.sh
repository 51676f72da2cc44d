#!/usr/bin/env bash
# End-to-end tests of `grademl-tui query` ($GRADEML_BIN) on real captures.
#
#   a. every example of man/grademl-query.7 (EXAMPLES) runs on the demo
#      capture (demo.db) or the GPU capture (gpu.db) and its output equals
#      tests/expected/query/NN.txt, NN the example's number;
#   b. csv and json outputs are well formed and agree with each other;
#   c. a bad query exits 2 with the column, a caret line and a hint;
#      the sql escape refuses writes and the file stays byte-identical;
#      control characters from the database never reach the table raw;
#   d. on a terminal (a pseudo-terminal through script(1)) the table fits
#      its width, cut cells end in the cut mark, times read as dates;
#      --wide and --raw undo that; csv and a pipe stay exact.
#
# Prints "ok - NAME" / "not ok - NAME (why)" / "skip - NAME (why)", then a
# summary; exits 1 when any check failed.
#
# GRADEML_E2E_REGEN=1 rewrites tests/expected/query/ from the current
# binary instead of comparing (read the diff before committing it).
# Needs: bash, python3, diff, cmp; script(1) (util-linux) for d.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-query
EXPECTED=$ROOT/tests/expected/query
MAN=$ROOT/man/grademl-query.7
REGEN=${GRADEML_E2E_REGEN:-}

e2e_need_bin

# the two captures, imported as `make demo` and tests/e2e/run.sh do
dbs_ok=1
if ! bash tests/data/demo/import.sh "$BIN" "$TMP/demo.db" >"$TMP/import.log" 2>&1; then
	not_ok "demo capture imports" "$(tail -n 3 "$TMP/import.log" | tr '\n' '|')"
	dbs_ok=0
fi
have_gpu=0
if [ -f tests/data/gpu/import.sh ] &&
	bash tests/data/gpu/import.sh "$BIN" "$TMP/gpu.db" >"$TMP/import-gpu.log" 2>&1; then
	have_gpu=1
fi

# The examples: "NN<TAB>db<TAB>format<TAB>query" from the man page, with the
# roff escapes the examples may use (\- \e \(dq) undone.
python3 - "$MAN" >"$TMP/examples" <<'EOF'
import re, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"^\\&grademl-tui query (demo|gpu)\.db '(.*)'(?: \\-\\-format (\w+))?\s*$", line)
    if not m:
        continue
    n += 1
    q = m.group(2).replace("\\-", "-").replace("\\(dq", '"').replace("\\e", "\\")
    print(f"{n:02d}\t{m.group(1)}\t{m.group(3) or 'table'}\t{q}")
EOF
count=$(wc -l <"$TMP/examples")
if [ "$count" -ge 15 ]; then
	ok "man page has $count examples"
else
	not_ok "man page has at least 15 examples" "found $count"
fi

# a. each example against its golden output
if [ "$dbs_ok" = 1 ]; then
	mkdir -p "$EXPECTED"
	while IFS=$'\t' read -r num db fmt query; do
		name="example $num: $query"
		if [ "$db" = gpu ] && [ "$have_gpu" = 0 ]; then
			skip "$name" "tests/data/gpu not importable here"
			continue
		fi
		out=$TMP/$num.txt
		if ! "$BIN" query "$TMP/$db.db" "$query" --format "$fmt" >"$out" 2>"$TMP/err"; then
			not_ok "$name" "exit $?: $(head -n 3 "$TMP/err" | tr '\n' '|')"
			continue
		fi
		want=$EXPECTED/$num.txt
		if [ "$REGEN" = 1 ]; then
			cp "$out" "$want"
			regenerated
			echo "regenerated - $name"
		elif [ ! -e "$want" ]; then
			not_ok "$name" "no $want; run with GRADEML_E2E_REGEN=1"
		elif diff -u "$want" "$out" >"$TMP/diff" 2>&1; then
			ok "$name"
		else
			not_ok "$name" "differs: $(head -n 12 "$TMP/diff" | tr '\n' '|')"
		fi
	done <"$TMP/examples"
fi

# b. csv and json of one query agree
if [ "$dbs_ok" = 1 ]; then
	q='phases kind = operator | by name | stats count, sum(dur), mean(dur) | top 5 sum(dur)'
	if "$BIN" query "$TMP/demo.db" "$q" --format csv >"$TMP/o.csv" &&
		"$BIN" query "$TMP/demo.db" "$q" --format json >"$TMP/o.json" &&
		python3 - "$TMP/o.csv" "$TMP/o.json" <<'EOF'; then
import csv, json, sys
raw = open(sys.argv[1], newline="").read()
assert raw.endswith("\r\n") and "\n" not in raw.replace("\r\n", ""), "csv lines end in CRLF"
rows = list(csv.DictReader(raw.splitlines()))
objs = json.load(open(sys.argv[2]))
assert len(rows) == len(objs) == 5, (len(rows), len(objs))
for r, o in zip(rows, objs):
    assert list(r) == list(o) == ["name", "count", "sum(dur)", "mean(dur)"], list(o)
    assert r["name"] == o["name"] and int(r["count"]) == o["count"]
    assert int(r["sum(dur)"]) == o["sum(dur)"] and isinstance(o["sum(dur)"], int)
    assert abs(float(r["mean(dur)"]) - o["mean(dur)"]) < 1e-6
EOF
		ok "csv (RFC 4180) and json agree"
	else
		not_ok "csv (RFC 4180) and json agree"
	fi
fi

# c. errors, the read-only escape hatch, sanitising
if [ "$dbs_ok" = 1 ]; then
	"$BIN" query "$TMP/demo.db" 'phases durr > 1ms' >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -s "$TMP/out" ] &&
		grep -q "^grademl-tui: error at column 8: unknown field 'durr'$" "$TMP/err" &&
		grep -q '^         \^\^\^\^$' "$TMP/err" && grep -q "^hint: did you mean 'dur'?$" "$TMP/err"; then
		ok "a bad query: exit 2, column, caret, hint"
	else
		not_ok "a bad query: exit 2, column, caret, hint" "exit $rc: $(tr '\n' '|' <"$TMP/err")"
	fi
	cp "$TMP/demo.db" "$TMP/before.db"
	denied=0
	for q in 'sql DELETE FROM phases' 'sql DROP TABLE phases' 'sql UPDATE phases SET dur_ns = 0' \
		"sql ATTACH DATABASE '$TMP/x.db' AS x" 'sql PRAGMA writable_schema = 1' \
		'sql CREATE TABLE t(x)' 'sql SELECT 1; DELETE FROM phases' \
		"phases name = \"x'; DROP TABLE phases; --\""; do
		"$BIN" query "$TMP/demo.db" "$q" >/dev/null 2>&1
		rc=$?
		case $q in sql*) [ "$rc" = 2 ] && denied=$((denied + 1)) ;; *) [ "$rc" = 0 ] && denied=$((denied + 1)) ;; esac
	done
	if [ "$denied" = 8 ] && cmp -s "$TMP/before.db" "$TMP/demo.db" && [ ! -e "$TMP/x.db" ]; then
		ok "writes through sql are refused; the file is byte-identical"
	else
		not_ok "writes through sql are refused; the file is byte-identical" "$denied of 8 as expected"
	fi
	"$BIN" query "$TMP/demo.db" "sql SELECT char(27) || '[2J' || char(7) || 'x' AS s" >"$TMP/out" 2>&1
	if ! grep -q $'\x1b' "$TMP/out" && ! grep -q $'\x07' "$TMP/out" && grep -q '\\e\[2J' "$TMP/out"; then
		ok "control characters are shown escaped in the table"
	else
		not_ok "control characters are shown escaped in the table" "$(od -c "$TMP/out" | head -n 3 | tr '\n' '|')"
	fi
	"$BIN" query "$TMP/demo.db" 'phases | count' --format yaml >/dev/null 2>&1
	[ $? = 2 ] && ok "an unknown --format is a usage error" || not_ok "an unknown --format is a usage error"
fi

# d. the table on a terminal: script(1) gives the binary a pseudo-terminal
# of 60 columns; its output comes back with CR LF line ends.
tty_run() { # cols out args...
	local cols=$1 out=$2
	shift 2
	LC_ALL=C.UTF-8 script -qec "stty cols $cols; $(printf '%q ' "$BIN" "$@")" /dev/null |
		tr -d '\r' >"$out"
}
if [ "$dbs_ok" = 1 ] && ! command -v script >/dev/null 2>&1; then
	skip "query on a terminal" "no script(1) here"
elif [ "$dbs_ok" = 1 ]; then
	q='phases kind = profiler_step | select id, name, start, dur, path'
	tty_run 60 "$TMP/tty.txt" query "$TMP/demo.db" "$q"
	tty_run 60 "$TMP/wide.txt" query "$TMP/demo.db" "$q" --wide
	tty_run 60 "$TMP/raw.txt" query "$TMP/demo.db" "$q" --raw
	tty_run 60 "$TMP/tty.csv" query "$TMP/demo.db" "$q" --format csv
	"$BIN" query "$TMP/demo.db" "$q" >"$TMP/pipe.txt"
	"$BIN" query "$TMP/demo.db" "$q" --format csv | tr -d '\r' >"$TMP/pipe.csv"
	if python3 - "$TMP/tty.txt" "$TMP/pipe.txt" <<'EOF'; then
import re, sys
tty = open(sys.argv[1], encoding="utf-8").read().splitlines()
pipe = open(sys.argv[2], encoding="utf-8").read().splitlines()
assert len(tty) == 9 and len(pipe) == 8, (len(tty), len(pipe))
assert all(len(l) <= 60 for l in tty), max(map(len, tty))
assert any(len(l) > 60 for l in pipe), "the pipe's lines are wider"
# the first step: its whole name (the name column keeps up to a third of
# the width), its start as a UTC date and time, its duration as before; the
# path, past the width, left out and said so
assert re.search(r"^  9  ProfilerStep#1 +2026-11-22 12:28:19\.793331  50\.3 ms$", tty[1]), tty[1]
assert len({l.split()[1] for l in tty[1:4]}) == 3, tty[1:4]
assert tty[-2] == pipe[-1] == "(6 rows)", (tty[-2], pipe[-1])
assert tty[-1] == "(1 column past the width left out: --wide shows it)", tty[-1]
EOF
		ok "on a terminal the table fits 60 columns, names whole, columns past the width left out and counted, times as dates"
	else
		not_ok "on a terminal the table fits 60 columns, cut cells end in the cut mark, times as dates" "$(head -n 3 "$TMP/tty.txt" | tr '\n' '|')"
	fi
	if grep -q '/demo/train/process CPU functions/thread 1/ProfilerStep#1$' "$TMP/wide.txt" &&
		! grep -q $'\u2026' "$TMP/wide.txt" && grep -q ' 2026-11-22 12:28:19.793331 ' "$TMP/wide.txt"; then
		ok "--wide on a terminal: every cell whole"
	else
		not_ok "--wide on a terminal: every cell whole" "$(head -n 2 "$TMP/wide.txt" | tr '\n' '|')"
	fi
	if python3 -c 'import re, sys
t = open(sys.argv[1], encoding="utf-8").read()
sys.exit(not re.search("^  9  Profil\\S* +1795350499793331000  50300000  /demo/", t, re.M))' \
		"$TMP/raw.txt"; then
		ok "--raw: times and durations in nanoseconds"
	else
		not_ok "--raw: times and durations in nanoseconds" "$(head -n 2 "$TMP/raw.txt" | tr '\n' '|')"
	fi
	if cmp -s "$TMP/tty.csv" "$TMP/pipe.csv" && grep -q ',1795350499793331000,50' "$TMP/pipe.csv"; then
		ok "csv on a terminal: the same raw values as through a pipe"
	else
		not_ok "csv on a terminal: the same raw values as through a pipe" "$(diff "$TMP/pipe.csv" "$TMP/tty.csv" | head -n 4 | tr '\n' '|')"
	fi
	# summary prints as query does: fitted to an 80-column terminal (the
	# kernels' 14 columns do not fit whole), every column to a pipe
	sdb=$TMP/demo.db skind=ops
	[ "$have_gpu" = 1 ] && sdb=$TMP/gpu.db skind=kernels
	tty_run 80 "$TMP/summ-tty.txt" summary "$sdb" "$skind"
	"$BIN" summary "$sdb" "$skind" >"$TMP/summ-pipe.txt"
	if python3 - "$TMP/summ-tty.txt" "$TMP/summ-pipe.txt" <<'EOF'; then
import sys
tty = open(sys.argv[1], encoding="utf-8").read().splitlines()
pipe = open(sys.argv[2], encoding="utf-8").read().splitlines()
assert max(map(len, tty)) <= 80, max(map(len, tty))
assert max(map(len, pipe)) > 80, "the pipe's lines are wider"
assert len(tty) >= len(pipe) > 2, (len(tty), len(pipe))
shown = tty[0].split()
assert shown == pipe[0].split()[:len(shown)], (tty[0], pipe[0])
if len(shown) < len(pipe[0].split()):
    assert tty[-1] == "(%d columns past the width left out: --wide shows them)" % (len(pipe[0].split()) - len(shown)), tty[-1]
EOF
		ok "summary on an 80-column terminal: no line wider than 80"
	else
		not_ok "summary on an 80-column terminal: no line wider than 80" "$(head -n 2 "$TMP/summ-tty.txt" | tr '\n' '|')"
	fi
fi

summary
