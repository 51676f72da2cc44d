#!/usr/bin/env bash
# End-to-end tests: nothing from a file reaches the terminal raw ($GRADEML_BIN).
#
#   a. error messages quote hostile text through the sanitiser: a file name
#      with OSC 0 and OSC 52 in a directory import, an nvidia-smi timestamp
#      cell holding an OSC 52 payload, a rules file's unknown rule, a hosts
#      file's alias, a trace.db whose schema names a table with escapes (the
#      report's error and a query's caret error), a bad option's value: exit
#      2, stderr free of ESC, BEL, C0, DEL, C1 and bidi controls, and still
#      saying what failed, on one line (the caret error on its three);
#   b. `analyze` prints a hostile file name sanitised;
#   c. `query --format csv|json` to a file carries the data byte for byte,
#      and to a terminal (a pty) escapes it: CSV in the sanitiser's form,
#      JSON with \uXXXX that reads back as the same data.
#
# Prints "ok - NAME" / "not ok - NAME (why)" per check, then a summary;
# exits 1 when any check failed.  Needs: bash, python3, sqlite3 (the CLI).
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-sanitize

e2e_need_bin
for tool in python3 sqlite3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		not_ok "tool $tool" "not installed"
		summary
		exit 1
	fi
done

# The payloads: window title (OSC 0), clipboard (OSC 52, 40 bytes of base64),
# a C1 CSI (U+009B), a right-to-left override (U+202E).
OSC0=$'\e]0;pwned\a'
OSC52=$'\e]52;c;QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\a'
C1=$'\xc2\x9b'
RLO=$'\xe2\x80\xae'

# unsafe FILE: why FILE holds something that could drive a terminal, or
# nothing: invalid UTF-8, C0 other than a line end (LF, CSV's CRLF; ESC and
# BEL among them), DEL, C1 controls, bidi controls.
unsafe() {
	python3 - "$1" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit(print("invalid UTF-8 at byte %d" % e.start))
text = text.replace("\r\n", "\n")
bidi = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
for i, ch in enumerate(text):
    c = ord(ch)
    if (c < 0x20 and ch != "\n") or 0x7F <= c <= 0x9F or c in bidi:
        sys.exit(print("U+%04X at character %d" % (c, i)))
EOF
}

# expect_error NAME LINES PATTERN CMD...: CMD exits 2, its stderr is LINES
# lines (-: any, the usage follows), its first line holds PATTERN (grep -E),
# and nothing in it is unsafe.
expect_error() {
	local name=$1 lines=$2 pattern=$3
	shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$? why
	why=$(unsafe "$TMP/err")
	if [ $rc -ne 2 ]; then
		not_ok "$name" "exit $rc, want 2"
	elif [ -n "$why" ]; then
		not_ok "$name" "stderr holds $why: $(head -c 200 "$TMP/err" | od -An -c | tr -s ' \n' ' ')"
	elif [ "$lines" != - ] && [ "$(wc -l <"$TMP/err")" -ne "$lines" ]; then
		not_ok "$name" "$(wc -l <"$TMP/err") lines on stderr, want $lines"
	elif ! head -n 1 "$TMP/err" | grep -Eq -- "$pattern"; then
		not_ok "$name" "stderr lacks /$pattern/: $(head -c 200 "$TMP/err")"
	else
		ok "$name"
	fi
}

# ---------------------------------------------------------------------------
# a. error messages

smi_head='timestamp, index, utilization.gpu [%]'
mkdir "$TMP/dir"
printf 'not a trace\n' >"$TMP/dir/run${OSC0}x${OSC52}${C1}${RLO}"$'\x9b.json'
expect_error "error: file name with OSC 0 and OSC 52 (directory import)" 1 \
	'run\\e\]0;pwned\\x07x\\e\]52;c;.*unrecognised format' \
	"$BIN" import -o "$TMP/a.db" "$TMP/dir/"

printf '%s\n%s, 0, 5 %%\n' "$smi_head" "$OSC52" >"$TMP/smi.csv"
expect_error "error: nvidia-smi timestamp cell with an OSC 52 payload" 1 \
	"smi\.csv:2: bad timestamp '\\\\e\]52;c;QUFB" \
	"$BIN" import -o "$TMP/b.db" --format nvidia-smi "$TMP/smi.csv"

printf 'x%s%s%sy /a/\n' "$OSC0" "$C1" "$RLO" >"$TMP/bad.rules"
printf 'hello\n' >"$TMP/log.txt"
expect_error "error: rules file with an escape in an unknown rule" 1 \
	"bad\.rules:1: unknown rule 'x\\\\e\]0;pwned\\\\x07\\\\u009b\\\\u\{202e\}y'" \
	"$BIN" import -o "$TMP/c.db" --rules "$TMP/bad.rules" "$TMP/log.txt"

printf '%s\n2024/01/01 00:00:00.000, 0, 5 %%\n2024/01/01 00:00:01.000, 0, 7 %%\n' \
	"$smi_head" >"$TMP/ok.csv"
printf 'node1 g%s%s\nnode2 g%s%s\n' "$OSC0" "$RLO" "$OSC0" "$RLO" >"$TMP/hosts.txt"
expect_error "error: hosts file with an escape in an alias" 1 \
	"hosts\.txt:2: 'g\\\\e\]0;pwned\\\\x07\\\\u\{202e\}' is already an alias" \
	"$BIN" import -o "$TMP/d.db" --hosts "$TMP/hosts.txt" --format nvidia-smi "$TMP/ok.csv"

expect_error "error: bad option value with an escape" - \
	"unknown query format '\\\\e\]0;pwned" \
	"$BIN" query "$TMP/x.db" 'phases' --format "$OSC0"

# A trace.db whose strings table became a view of a table named with escapes:
# SQLite's own message ("no such table: main.NAME") quotes the name.
base_ok=0
if "$BIN" import -o "$TMP/base.db" --format nvidia-smi "$TMP/ok.csv" 2>"$TMP/err"; then
	base_ok=1
else
	not_ok "a small trace.db imports" "$(head -n 1 "$TMP/err")"
fi
if [ $base_ok = 1 ]; then
	cp "$TMP/base.db" "$TMP/hostile.db"
	sqlite3 "$TMP/hostile.db" "PRAGMA legacy_alter_table = 1;
		ALTER TABLE strings RENAME TO strings_kept;
		CREATE VIEW strings AS SELECT * FROM \"t${OSC52}${C1}${RLO}\";"
	expect_error "error: hostile trace.db, the report's error" 1 \
		'no such table: main\.t\\e\]52;c;.*\\u009b\\u\{202e\}' \
		"$BIN" report "$TMP/hostile.db"
	expect_error "error: hostile trace.db, a query's caret error" 3 \
		'^grademl-tui: error at column 4: sql: no such table: main\.t\\e\]52;c;' \
		"$BIN" query "$TMP/hostile.db" 'sql SELECT text FROM strings'
fi

# ---------------------------------------------------------------------------
# b. analyze names its file

if [ $base_ok = 1 ]; then
	evil_db="$TMP/t${OSC0}${RLO}.db"
	cp "$TMP/base.db" "$evil_db"
	if ! "$BIN" analyze "$evil_db" >"$TMP/out" 2>"$TMP/err"; then
		not_ok "analyze: hostile file name" "exit non-zero: $(head -n 1 "$TMP/err")"
	elif why=$(unsafe "$TMP/out") && [ -n "$why" ]; then
		not_ok "analyze: hostile file name" "stdout holds $why"
	elif ! grep -q 't\\e]0;pwned\\x07\\u{202e}\.db: ' "$TMP/out"; then
		not_ok "analyze: hostile file name" "$(head -c 200 "$TMP/out")"
	else
		ok "analyze: hostile file name"
	fi
fi

# ---------------------------------------------------------------------------
# c. query --format csv|json: exact to a file, escaped to a terminal

# on_pty OUT CMD...: runs CMD with stdout on a pseudo-terminal (raw mode: no
# CR added) and writes what it printed to OUT.
on_pty() {
	python3 - "$@" <<'EOF'
import os, subprocess, sys, tty
out, cmd = sys.argv[1], sys.argv[2:]
master, slave = os.openpty()
tty.setraw(slave)
p = subprocess.Popen(cmd, stdout=slave)
os.close(slave)
data = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the command closed the terminal
        break
    if not chunk:
        break
    data += chunk
open(out, "wb").write(data)
sys.exit(p.wait())
EOF
}

if [ $base_ok = 1 ]; then
	# the host: every unsafe kind, and CSV's specials
	host="a${OSC0}${OSC52}${C1}${RLO}"$'\x7f,"q\nz\xc3\xa9'
	cp "$TMP/base.db" "$TMP/q.db"
	python3 - "$TMP/q.db" "$host" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE metrics SET host = ?", (sys.argv[2],))
db.commit()
EOF
	query='metrics | select host, name'
	# what a file must hold, byte for byte
	python3 - "$host" "$TMP/want" <<'EOF'
import json, re, sys
host, out = sys.argv[1], sys.argv[2]
field = '"' + host.replace('"', '""') + '"'
open(out + ".csv", "wb").write(("host,name\r\n%s,utilization.gpu\r\n" % field).encode())
row = json.dumps({"host": host, "name": "utilization.gpu"}, ensure_ascii=False, separators=(",", ":"))
row = re.sub(r"\\u00([0-9a-f]{2})", lambda m: "\\u00" + m.group(1).upper(), row)  # as jansson writes
open(out + ".json", "wb").write(("[\n%s\n]\n" % row).encode())
EOF
	for fmt in csv json; do
		if ! "$BIN" query "$TMP/q.db" "$query" --format $fmt >"$TMP/file.$fmt" 2>"$TMP/err"; then
			not_ok "query $fmt to a file: exact" "$(head -n 1 "$TMP/err")"
		elif ! cmp -s "$TMP/file.$fmt" "$TMP/want.$fmt"; then
			not_ok "query $fmt to a file: exact" "$(cmp "$TMP/file.$fmt" "$TMP/want.$fmt" 2>&1)"
		else
			ok "query $fmt to a file: exact"
		fi
		"$BIN" query "$TMP/q.db" "$query" --format $fmt | cat >"$TMP/pipe.$fmt"
		if cmp -s "$TMP/pipe.$fmt" "$TMP/want.$fmt"; then
			ok "query $fmt to a pipe: exact"
		else
			not_ok "query $fmt to a pipe: exact" "$(cmp "$TMP/pipe.$fmt" "$TMP/want.$fmt" 2>&1)"
		fi
		if ! on_pty "$TMP/tty.$fmt" "$BIN" query "$TMP/q.db" "$query" --format $fmt; then
			not_ok "query $fmt to a terminal: escaped" "the command failed"
		elif why=$(unsafe "$TMP/tty.$fmt") && [ -n "$why" ]; then
			not_ok "query $fmt to a terminal: escaped" "output holds $why"
		else
			ok "query $fmt to a terminal: escaped"
		fi
	done
	# CSV: the sanitiser's visible form; JSON: \uXXXX, the same data read back
	want_csv='"a\e]0;pwned\x07\e]52;c;QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\x07\u009b\u{202e}\x7f,""q\x0az'
	if grep -qF -- "$want_csv" "$TMP/tty.csv"; then
		ok "query csv to a terminal: the sanitiser's form"
	else
		not_ok "query csv to a terminal: the sanitiser's form" "$(head -c 300 "$TMP/tty.csv")"
	fi
	if python3 - "$TMP/tty.json" "$host" <<'EOF'; then
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
want = ['"a\\u001B]0;pwned\\u0007\\u001B]52;c;', "\\u009B\\u202E\\u007F", '"name":"utilization.gpu"']
missing = [w for w in want if w not in text]
rows = json.loads(text)
if missing or rows != [{"host": sys.argv[2], "name": "utilization.gpu"}]:
    print("missing %r or different data" % missing)
    sys.exit(1)
EOF
		ok "query json to a terminal: \\u escapes, the same data"
	else
		not_ok "query json to a terminal: \\u escapes, the same data" "$(head -c 300 "$TMP/tty.json")"
	fi
fi

summary
