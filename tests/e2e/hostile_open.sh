#!/usr/bin/env bash
# End-to-end tests: what is named as trace.db is checked as a whole, the
# same way by every command, before anything trusts it ($GRADEML_BIN):
#
#   a. a FIFO and a directory named as trace.db: report, query, summary,
#      analyze, diff (as A and as B), export, import -o, the explorer
#      (without a terminal, headless, on a terminal) and its :diff refuse
#      it with one line naming it ("is a FIFO", "is a directory"), exit 2,
#      each under a timeout, so that a hang (a FIFO's open waits for a
#      writer) fails; the FIFO stays a FIFO;
#   b. a schema version no grademl-tui reads (6, a future one; -1; 0): the
#      same commands refuse it with one line naming the file and the
#      version, exit 2, and the file is byte-identical after (never
#      rewritten: -1 was taken for an old version and brought to 5);
#   c. a database without its meta table, or with a meta without its
#      columns: analyze (and report, query) say what is wrong, never
#      "unknown error";
#   d. one phase's attrs that are not JSON: the queries that use host (by
#      host, host = NAME, with METRIC, the explorer's :query) give what
#      they give with no attrs on that row, instead of failing whole
#      ("malformed JSON"); a Spark rolling part imports into a database
#      whose application, job or stage attrs are not JSON.
#
# Prints "ok - NAME" / "not ok - NAME (why)" per check, then a summary;
# exits 1 when any check failed.  Needs: bash, python3 (the demo's steps),
# sqlite3 (the CLI), timeout; script (util-linux) for the terminal check.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-hostile-open
e2e_home

e2e_need_bin
e2e_need_tools python3 sqlite3 timeout

# A hang is a failure: no command on the demo takes a second here.
LIMIT=10
DEMO=tests/data/demo
db=$TMP/demo.db
if ! bash "$DEMO/import.sh" "$BIN" "$db" >"$TMP/import.log" 2>&1; then
	not_ok "demo import" "$(tail -1 "$TMP/import.log")"
	summary
	exit 1
fi
: >"$TMP/none.keys"

# refused NAME WHAT CMD...: CMD, stdin empty, ends within LIMIT seconds with
# exit status 2 and one line on stderr that says WHAT.
refused() {
	local name=$1 what=$2
	shift 2
	timeout "$LIMIT" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	local rc=$? lines
	lines=$(wc -l <"$TMP/err")
	if [ "$rc" -eq 124 ]; then
		not_ok "$name" "still running after ${LIMIT}s"
	elif [ "$rc" -ne 2 ]; then
		not_ok "$name" "exit $rc, not 2: $(head -c 200 "$TMP/err")"
	elif [ "$lines" -ne 1 ]; then
		not_ok "$name" "$lines lines on stderr, not 1"
	elif ! grep -qF -- "$what" "$TMP/err"; then
		not_ok "$name" "stderr does not say '$what': $(head -c 200 "$TMP/err")"
	else
		ok "$name"
	fi
}

# every_command LABEL X WHAT: every command that opens a trace.db, on X.
every_command() {
	local label=$1 x=$2 what=$3
	refused "$label: report" "$what" "$BIN" report "$x"
	refused "$label: query" "$what" "$BIN" query "$x" 'phases | count'
	refused "$label: summary" "$what" "$BIN" summary "$x" ops
	refused "$label: analyze" "$what" "$BIN" analyze "$x"
	refused "$label: diff, as A" "$what" "$BIN" diff "$x" "$db"
	refused "$label: diff, as B" "$what" "$BIN" diff "$db" "$x"
	refused "$label: export" "$what" "$BIN" export -o "$TMP/out.json" "$x"
	refused "$label: import -o" "$what" "$BIN" import -o "$x" "$DEMO/workflow.jsonl"
	refused "$label: explorer, no terminal" "$what" "$BIN" "$x"
	refused "$label: explorer, headless" "$what" "$BIN" --keys "$TMP/none.keys" "$x"
	if ! command -v script >/dev/null 2>&1; then
		skip "$label: explorer, on a terminal" "script (util-linux) not installed"
	else
		# script gives it a terminal; its stderr comes back in the typescript
		TERM=xterm timeout "$LIMIT" script -qec "$(printf '%q ' "$BIN" "$x")" /dev/null \
			</dev/null >"$TMP/tty" 2>&1
		local rc=$?
		if [ "$rc" -eq 124 ]; then
			not_ok "$label: explorer, on a terminal" "still running after ${LIMIT}s"
		elif [ "$rc" -ne 2 ] || ! grep -qF -- "$what" "$TMP/tty"; then
			not_ok "$label: explorer, on a terminal" "exit $rc: $(head -c 200 "$TMP/tty")"
		else
			ok "$label: explorer, on a terminal"
		fi
	fi
	printf 'type :diff %s\nEnter\n' "$x" >"$TMP/diff.keys"
	timeout "$LIMIT" "$BIN" --keys "$TMP/diff.keys" --dump "$TMP/diff.txt" "$db" \
		</dev/null >/dev/null 2>"$TMP/err"
	local rc=$?
	if [ "$rc" -eq 124 ]; then
		not_ok "$label: the explorer's :diff" "still running after ${LIMIT}s"
	elif [ "$rc" -ne 0 ] || ! grep -qF -- "$what" "$TMP/diff.txt"; then
		not_ok "$label: the explorer's :diff" "exit $rc, screen: $(tr -s ' \n' ' ' <"$TMP/diff.txt" | head -c 200)"
	else
		ok "$label: the explorer's :diff"
	fi
}

# ---------------------------------------------------------------------------
# a. a FIFO and a directory

fifo=$TMP/fifo.db
mkfifo "$fifo"
every_command "FIFO" "$fifo" "fifo.db: is a FIFO"
if [ -p "$fifo" ]; then
	ok "FIFO: still a FIFO after every command"
else
	not_ok "FIFO: still a FIFO after every command" "it is no FIFO now"
fi
mkdir "$TMP/dir.db"
every_command "directory" "$TMP/dir.db" "dir.db: is a directory"

# ---------------------------------------------------------------------------
# b. schema versions no grademl-tui reads

for v in 7 -1 0; do
	f=$TMP/v$v.db
	cp "$db" "$f"
	sqlite3 "$f" "PRAGMA user_version = $v"
	cp "$f" "$TMP/before.db"
	every_command "version $v" "$f" "version $v"
	if cmp -s "$f" "$TMP/before.db" && [ "$(sqlite3 "$f" 'PRAGMA user_version')" = "$v" ]; then
		ok "version $v: the file is as it was"
	else
		not_ok "version $v: the file is as it was" \
			"user_version now $(sqlite3 "$f" 'PRAGMA user_version'), or its bytes changed"
	fi
done

# ---------------------------------------------------------------------------
# c. a meta table missing, or without its columns

cp "$db" "$TMP/nometa.db"
sqlite3 "$TMP/nometa.db" "DROP TABLE meta"
refused "no meta: analyze says so" "'meta'" "$BIN" analyze "$TMP/nometa.db"
refused "no meta: report says so" "'meta'" "$BIN" report "$TMP/nometa.db"
refused "no meta: query says so" "'meta'" "$BIN" query "$TMP/nometa.db" 'phases | count'
cp "$db" "$TMP/oddmeta.db"
sqlite3 "$TMP/oddmeta.db" "DROP TABLE meta; CREATE TABLE meta(k, v)"
refused "meta without its columns: analyze says so" "meta" "$BIN" analyze "$TMP/oddmeta.db"
if grep -q "unknown error" "$TMP/err"; then
	not_ok "meta without its columns: no 'unknown error'" "$(cat "$TMP/err")"
else
	ok "meta without its columns: no 'unknown error'"
fi

# ---------------------------------------------------------------------------
# d. attrs that are not JSON

# the first phase without a track (the workflow): its host comes from its
# attrs; noattrs.db has none there, bad.db has text that is not JSON
cp "$db" "$TMP/bad.db"
cp "$db" "$TMP/noattrs.db"
first="(SELECT min(id) FROM phases WHERE track_id IS NULL)"
sqlite3 "$TMP/bad.db" "UPDATE phases SET attrs = '{\"host\": no json' WHERE id = $first"
sqlite3 "$TMP/noattrs.db" "UPDATE phases SET attrs = NULL WHERE id = $first"
for q in 'phases | by host | count' 'phases host = vm | count' \
	'phases kind = workflow | with cpu.usr'; do
	"$BIN" query "$TMP/noattrs.db" "$q" --format csv >"$TMP/want" 2>&1
	timeout "$LIMIT" "$BIN" query "$TMP/bad.db" "$q" --format csv >"$TMP/got" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ]; then
		not_ok "attrs not JSON: query '$q'" "exit $rc: $(head -c 200 "$TMP/got")"
	elif ! cmp -s "$TMP/want" "$TMP/got"; then
		not_ok "attrs not JSON: query '$q'" "not what it gives with no attrs on the row"
	else
		ok "attrs not JSON: query '$q'"
	fi
done
printf 'type :phases | by host | count\nEnter\n' >"$TMP/host.keys"
"$BIN" --keys "$TMP/host.keys" --dump "$TMP/want.txt" "$TMP/noattrs.db" >/dev/null 2>&1
timeout "$LIMIT" "$BIN" --keys "$TMP/host.keys" --dump "$TMP/got.txt" "$TMP/bad.db" \
	>/dev/null 2>&1
rc=$?
# the status line says how long the query took: not compared
untimed() { sed -E 's/ in [0-9.]+ [a-zµ]+ *$//' "$1"; }
if [ "$rc" -eq 0 ] && [ "$(untimed "$TMP/want.txt")" = "$(untimed "$TMP/got.txt")" ]; then
	ok "attrs not JSON: the explorer's :phases | by host | count"
else
	not_ok "attrs not JSON: the explorer's :phases | by host | count" \
		"exit $rc, screen: $(tr -s ' \n' ' ' <"$TMP/got.txt" | head -c 200)"
fi

# A Spark rolling part (events_2_<app id>: no ApplicationStart) looks for its
# application, then its job and stages, in the database by their attrs.
cat >"$TMP/part.log" <<'EOF'
{"Event":"SparkListenerExecutorAdded","Timestamp":1000,"Executor ID":"1","Executor Info":{"Host":"hostA","Total Cores":2}}
{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":0,"Stage Attempt ID":0,"Stage Name":"map","Number of Tasks":1,"Parent IDs":[],"Submission Time":2000}}
{"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage Attempt ID":0,"Task Type":"ResultTask","Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":0,"Index":0,"Attempt":0,"Launch Time":2100,"Executor ID":"1","Host":"hostA","Finish Time":3000,"Failed":false,"Killed":false}}
{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":0,"Stage Attempt ID":0,"Submission Time":2000,"Completion Time":4000}}
{"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":5000,"Job Result":{"Result":"JobSucceeded"}}
{"Event":"SparkListenerApplicationEnd","Timestamp":6000}
EOF
spark_case() {
	local name=$1 rows=$2
	local d=$TMP/spark-$name
	mkdir "$d"
	cp "$db" "$d/s.db"
	cp "$TMP/part.log" "$d/events_2_app-1"
	sqlite3 "$d/s.db" "INSERT INTO phases(id, parent_id, kind, name_id, start_ns, dur_ns,
		self_ns, depth, attrs) VALUES $rows"
	local before
	before=$(sqlite3 "$d/s.db" 'SELECT count(*) FROM phases')
	timeout "$LIMIT" "$BIN" import -o "$d/s.db" --format spark "$d/events_2_app-1" \
		>"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		not_ok "attrs not JSON: Spark part, $name" "exit $rc: $(head -c 200 "$TMP/err")"
	elif [ "$(sqlite3 "$d/s.db" 'SELECT count(*) FROM phases')" -le "$before" ]; then
		not_ok "attrs not JSON: Spark part, $name" "no phase imported"
	else
		ok "attrs not JSON: Spark part, $name"
	fi
}
# kinds: 17 application, 18 job, 19 stage (man grademl-tui(1), phase_kinds)
spark_case "an application's attrs" "(900001, NULL, 17, 1, 0, 1, 1, 0, '{broken')"
spark_case "a job's and a stage's attrs" \
	"(900001, NULL, 17, 1, 0, 1, 1, 0, '{\"app_id\":\"app-1\"}'),
	 (900002, 900001, 18, 1, 0, 1, 1, 1, '{broken'), (900003, 900002, 19, 1, 0, 1, 1, 2, '[1,')"

summary
