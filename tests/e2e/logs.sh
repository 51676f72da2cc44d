#!/usr/bin/env bash
# Training logs as users meet them, on the real logs in ../shared/samples
# (GRADEML_SAMPLES), each skipped when absent:
#
#   a. the MLPerf BERT log (5 KB of shell trace before its first :::MLLOG
#      record) imports without --format, as an MLPerf log;
#   b. the modded-nanogpt log is no MLPerf log (no format sniffed: exit 2,
#      nothing written), and through rules/nanogpt.rules gives one phase per
#      step line with the window tests/e2e/nanogpt_check.py computes from the
#      log's timestamps, a step that spans the log, and every event bound to
#      the phase running at its time.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)" per
# check, then the summary; exits 1 when any check failed.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init logs
e2e_need_bin
LOGS=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/training-log
BERT=$LOGS/microsoft__VirtualClient__Example_bert_real_output.txt
NANO=$LOGS/KellerJordan__modded-nanogpt__1d3bd93b-a69e-4118-aeb8-8184239d7566.txt
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3

# a. sniffed
if [ ! -f "$BERT" ]; then
	skip "mlperf: the BERT log imports without --format" "$BERT absent"
elif ! "$BIN" import -o "$TMP/bert.db" "$BERT" >/dev/null 2>"$TMP/err"; then
	not_ok "mlperf: the BERT log imports without --format" "$(head -c 300 "$TMP/err")"
else
	got=$(sqlite3 "$TMP/bert.db" "SELECT format || ' ' || phases FROM sources")
	if [ "$got" = "mlperf 20" ]; then
		ok "mlperf: the BERT log imports without --format (20 intervals)"
	else
		not_ok "mlperf: the BERT log imports without --format" "got '$got', want 'mlperf 20'"
	fi
fi

# b. the nanoGPT rules
if [ ! -f "$NANO" ]; then
	skip "nanogpt: sniffed as no format" "$NANO absent"
	skip "nanogpt: rules/nanogpt.rules" "$NANO absent"
else
	"$BIN" import -o "$TMP/sniffed.db" "$NANO" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "unrecognised format" "$TMP/err" && [ ! -e "$TMP/sniffed.db" ]; then
		ok "nanogpt: sniffed as no format (exit 2, nothing written)"
	else
		not_ok "nanogpt: sniffed as no format" "exit $rc: $(head -c 300 "$TMP/err")"
	fi
	if ! "$BIN" import -o "$TMP/nano.db" --rules rules/nanogpt.rules "$NANO" >/dev/null \
		2>"$TMP/err"; then
		not_ok "nanogpt: rules/nanogpt.rules" "$(head -c 300 "$TMP/err")"
	else
		while IFS= read -r line; do
			case $line in
			"ok - "*) ok "${line#ok - }" ;;
			"not ok - "*) not_ok "${line#not ok - }" ;;
			*) not_ok "nanogpt: nanogpt_check.py said" "$line" ;;
			esac
		done < <("$PY" tests/e2e/nanogpt_check.py "$NANO" "$TMP/nano.db" 2>&1)
	fi
fi

summary
