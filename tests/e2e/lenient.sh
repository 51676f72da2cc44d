#!/usr/bin/env bash
# Chrome traces as Perfetto reads them, end to end with grademl-tui
# ($GRADEML_BIN) on the public sample traces in ../shared/samples/chrome-trace
# (skipped with a reason when absent):
#
#   a. a real trace cut inside an event three fifths in (tests/e2e/cut_trace.py):
#      it imports; phases + dropped count every duration event before the
#      cut and the cut one, as python counts them; the same events closed
#      into a whole file give the same phases; TRUNCATED names the byte and
#      line the file ends at, and `report` shows it;
#   b. under --strict the cut file fails with exit 2, one line naming the
#      file and the byte, and a trace.db that existed reads as before;
#   c. a real trace in the JSON Array Format with a comma before every
#      closing brace and no closing ']': every duration event counted,
#      TRAILING_COMMA and UNCLOSED_ARRAY noted;
#   d. a file that is not a trace, or one cut before its traceEvents, still
#      fails with exit 2 and nothing written.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1 when
# any check failed.  Needs: bash, python3, sqlite3.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-lenient
e2e_home
e2e_need_bin
SAMPLES=$ROOT/../shared/samples/chrome-trace
CUT=("$SAMPLES"/facebookresearch__HolisticTraceAnalysis__mtia_inference_rank_0.json.gz
	"$SAMPLES"/facebookresearch__param__worker0_step_12.1694128201545.pt.trace.json)
for tool in python3 sqlite3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool $tool" "not installed"
		summary
		exit 1
	fi
done
if [ ! -d "$SAMPLES" ]; then
	skip "lenient: samples" "$SAMPLES absent"
	summary
	exit 0
fi

q() {
	sqlite3 "$1" "$2"
}

# expect_refusal NAME WANT DB ARGS...: `import -o DB ARGS` exits 2 with one
# line on stderr holding WANT and nothing on stdout, and DB is as before
# (absent, or the same rows: only SQLite's change counter moves).
expect_refusal() {
	local name=$1 want=$2 db=$3 rc=0 before=absent after=absent
	shift 3
	[ -e "$db" ] && before=$(sqlite3 "$db" .dump | cksum)
	"$BIN" import -o "$db" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	[ -e "$db" ] && after=$(sqlite3 "$db" .dump | cksum)
	if [ "$rc" -ne 2 ]; then
		not_ok "$name" "exit $rc, not 2: $(head -c 200 "$TMP/err")"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -qF -- "$want" "$TMP/err"; then
		not_ok "$name" "stderr is not one line with '$want': $(head -c 300 "$TMP/err")"
	elif [ -s "$TMP/out" ]; then
		not_ok "$name" "wrote to stdout: $(head -c 200 "$TMP/out")"
	elif [ "$before" != "$after" ]; then
		not_ok "$name" "$db changed ($before, now $after)"
	else
		ok "$name"
	fi
}

for src in "${CUT[@]}"; do
	base=${src##*/}
	if [ ! -f "$src" ]; then
		skip "a: $base cut in an event" "absent"
		continue
	fi
	cut=$TMP/cut-${base%.gz}
	closed=$TMP/closed-${base%.gz}
	if ! read -r bytes line want < <(python3 tests/e2e/cut_trace.py cut "$src" "$cut" "$closed"); then
		not_ok "a: $base cut in an event" "cut_trace.py failed"
		continue
	fi
	db=$TMP/cut.db closed_db=$TMP/closed.db
	rm -f "$db" "$closed_db"
	if ! "$BIN" import -o "$db" "$cut" >"$TMP/out" 2>"$TMP/err"; then
		not_ok "a: $base cut in an event imports" "$(head -c 300 "$TMP/err")"
		continue
	fi
	got=$(q "$db" "SELECT phases + dropped FROM sources")
	if [ "$got" = "$want" ]; then
		ok "a: $base cut at byte $bytes: phases + dropped = $got, python's count"
	else
		not_ok "a: $base cut at byte $bytes: phases + dropped" "$got, python counts $want"
	fi
	example="input ends at byte $bytes (line $line) inside an event"
	got=$(q "$db" "SELECT count || ' ' || example FROM diagnostics WHERE code = 'TRUNCATED'")
	if [ "$got" = "1 $example" ]; then
		ok "a: $base: TRUNCATED says '$example'"
	else
		not_ok "a: $base: TRUNCATED" "'$got', want '1 $example'"
	fi
	if "$BIN" import -o "$closed_db" "$closed" >"$TMP/out" 2>"$TMP/err"; then
		a=$(q "$db" "SELECT phases FROM sources") b=$(q "$closed_db" "SELECT phases FROM sources")
		if [ "$a" = "$b" ]; then
			ok "a: $base: the cut file's phases are the closed file's ($a)"
		else
			not_ok "a: $base: the cut file's phases" "$a, the closed file's $b"
		fi
	else
		not_ok "a: $base: the closed file imports" "$(head -c 300 "$TMP/err")"
	fi
	if "$BIN" report "$db" >"$TMP/report" 2>"$TMP/err" &&
		grep -F "TRUNCATED" "$TMP/report" | grep -qF "(e.g. $example)"; then
		ok "a: $base: report shows where the file ends"
	else
		not_ok "a: $base: report shows where the file ends" \
			"$(grep -F TRUNCATED "$TMP/report" | head -c 300)$(head -c 200 "$TMP/err")"
	fi

	rm -f "$TMP/strict.db"
	expect_refusal "b: $base: --strict refuses the cut file, nothing written" \
		"${cut##*/}: truncated JSON (input ends inside a value) at byte $bytes" \
		"$TMP/strict.db" --strict "$cut"
	expect_refusal "b: $base: --strict leaves a trace.db as it was" \
		"${cut##*/}: truncated JSON (input ends inside a value) at byte $bytes" \
		"$closed_db" --strict "$cut"
done

src=${CUT[1]}
if [ ! -f "$src" ]; then
	skip "c: the JSON Array Format unclosed" "${src##*/} absent"
elif ! read -r events want < <(python3 tests/e2e/cut_trace.py array "$src" "$TMP/array.json"); then
	not_ok "c: the JSON Array Format unclosed" "cut_trace.py failed"
elif ! "$BIN" import -o "$TMP/array.db" "$TMP/array.json" >"$TMP/out" 2>"$TMP/err"; then
	not_ok "c: the JSON Array Format unclosed imports" "$(head -c 300 "$TMP/err")"
else
	got=$(q "$TMP/array.db" "SELECT phases + dropped FROM sources")
	commas=$(q "$TMP/array.db" "SELECT coalesce(sum(count), 0) FROM diagnostics
		WHERE code = 'TRAILING_COMMA'")
	unclosed=$(q "$TMP/array.db" "SELECT count(*) FROM diagnostics WHERE code = 'UNCLOSED_ARRAY'")
	if [ "$got" = "$want" ] && [ "$commas" = "$events" ] && [ "$unclosed" = 1 ]; then
		ok "c: the JSON Array Format unclosed, $events trailing commas: phases + dropped = $got"
	else
		not_ok "c: the JSON Array Format unclosed" \
			"phases + dropped $got (want $want), TRAILING_COMMA $commas (want $events), UNCLOSED_ARRAY $unclosed"
	fi
fi

printf 'not a trace at all\n' >"$TMP/text.json"
expect_refusal "d: a text file read as a Chrome trace fails, nothing written" \
	"text.json: malformed JSON at byte" "$TMP/none.db" --format chrome "$TMP/text.json"
src=${CUT[0]}
if [ -f "$src" ]; then
	python3 -c 'import gzip, sys; sys.stdout.buffer.write(gzip.open(sys.argv[1]).read()[:300])' \
		"$src" >"$TMP/head.json"
	expect_refusal "d: a trace cut before its traceEvents fails, nothing written" \
		"head.json: truncated JSON (input ends inside a value) at byte 300" "$TMP/none.db" \
		"$TMP/head.json"
fi

summary
