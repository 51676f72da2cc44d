#!/usr/bin/env bash
# End-to-end tests of where `grademl-tui export -o OUT` and the explorer's
# `:save FILE` write (model/util/outfile.h), of the hidden files killed
# imports and exports leave (model/util/aside.h), and of an export whose
# earliest time is INT64_MIN.
#
#   a. OUT not a regular file, as root, on device nodes made in TMP with the
#      numbers of /dev/null and /dev/full (so that no check can replace the
#      system's): the null device stays a character device; the full one
#      fails with exit 2 and one line saying "no space left on device"; a
#      FIFO's reader receives the whole export; `-o -`, and a link of its
#      own to /proc/self/fd/1 as /dev/stdout is, write the JSON, and only
#      it, to a pipe (python3's json and gzip read it); a terminal is
#      refused;
#   b. symlinks and owners, as root: a symlink's target gets the export and
#      the link stays a link; a symlink to nothing is refused; a 0600 file
#      of uid 65534 keeps its mode and owner;
#   c. as an ordinary user (root drops to uid 65534 through setpriv), on
#      the system's files, which such a user cannot replace: -o /dev/null
#      and -o /dev/stdout work;
#   d. leftovers: an export and an import killed with SIGKILL leave their
#      hidden files, which the next export or import into that directory
#      removes, whatever name it writes; an export stopped (SIGSTOP) mid-way
#      keeps its hidden file through another export's sweep and completes
#      when continued; another program's ".NAME.XXXXXX" stays;
#   e. :save (headless) on a read-only file system (a tmpfs mounted
#      read-only in a mount namespace of its own) says why; to a FIFO that
#      nothing reads it says so at once instead of waiting; through a
#      symlink it writes the target;
#   f. a trace.db whose earliest event is at INT64_MIN exports, its
#      baseTimeNanoseconds at or before every time written.
#
# What needs root (device nodes, chown, mount namespaces) is skipped with
# one line otherwise.  Prints "ok - NAME", "not ok - NAME (why)" or
# "skip - NAME (why)", then "N passed, M failed[, K skipped]"; exits 1 when
# any check failed.  Needs: bash, python3, sqlite3 (the CLI), gzip, cmp.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init export-out
e2e_home
e2e_need_bin
ROOTUSER=$([ "$(id -u)" = 0 ] && echo 1)

# A small trace: two ranks' ops, an instant, a counter.
python3 - "$TMP/small.json" <<'EOF'
import json, sys
ev = []
for pid in (1, 2):
    for i in range(200):
        ev.append({"ph": "X", "ts": 1000 + 10 * i, "dur": 8, "pid": pid, "tid": pid,
                   "name": "aten::op%d" % (i % 7), "cat": "cpu_op"})
ev.append({"ph": "i", "ts": 1500, "pid": 1, "tid": 1, "s": "t", "name": "note"})
ev.append({"ph": "C", "ts": 1000, "pid": 1, "name": "mem", "args": {"v": 3}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
EOF
DB=$TMP/small.db
if ! "$BIN" import -o "$DB" "$TMP/small.json" >/dev/null 2>"$TMP/err"; then
	not_ok "import of the small trace" "$(head -c 300 "$TMP/err")"
	summary
	exit 1
fi
REF=$TMP/ref.json
"$BIN" export -o "$REF" "$DB" >/dev/null 2>&1 || not_ok "a plain export" "failed"

# one_error RC ERRFILE WANT: RC is 2 and ERRFILE one line containing WANT.
one_error() {
	[ "$1" = 2 ] && [ "$(wc -l <"$2")" = 1 ] && grep -qF -- "$3" "$2"
}

# ---- a. OUT not a regular file ----
if [ -n "$ROOTUSER" ] && mkdir -p "$TMP/dev" && mknod "$TMP/dev/null" c 1 3 2>/dev/null &&
	mknod "$TMP/dev/full" c 1 7 2>/dev/null; then
	"$BIN" export -o "$TMP/dev/null" "$DB" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	kind=$(stat -c '%F %t,%T' "$TMP/dev/null")
	if [ "$rc" = 0 ] && [ "$kind" = "character special file 1,3" ]; then
		ok "-o a null device (1,3): exit 0, still a character device"
	else
		not_ok "-o a null device (1,3): exit 0, still a character device" \
			"exit $rc, now a $kind: $(head -c 200 "$TMP/err")"
	fi
	"$BIN" export -o "$TMP/dev/full" "$DB" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	kind=$(stat -c '%F %t,%T' "$TMP/dev/full")
	if one_error "$rc" "$TMP/err" "no space left on device" &&
		[ "$kind" = "character special file 1,7" ]; then
		ok "-o a full device (1,7): exit 2, one line: no space left on device"
	else
		not_ok "-o a full device (1,7): exit 2, one line: no space left on device" \
			"exit $rc, now a $kind: $(head -c 200 "$TMP/err")"
	fi
else
	skip "-o a null device (1,3)" "needs root and mknod"
	skip "-o a full device (1,7)" "needs root and mknod"
fi

mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.got" &
reader=$!
timeout 60 "$BIN" export -o "$TMP/fifo" "$DB" >/dev/null 2>"$TMP/err"
rc=$?
# the reader has its end of file, unless the export never opened the FIFO
for i in $(seq 100); do
	kill -0 "$reader" 2>/dev/null || break
	sleep 0.05
done
kill "$reader" 2>/dev/null
wait "$reader"
if [ "$rc" = 0 ] && [ -p "$TMP/fifo" ] && cmp -s "$REF" "$TMP/fifo.got"; then
	ok "-o a FIFO: its reader receives the whole export, the FIFO stays one"
else
	not_ok "-o a FIFO: its reader receives the whole export, the FIFO stays one" \
		"exit $rc, $(stat -c %s "$TMP/fifo.got") of $(stat -c %s "$REF") bytes, $(stat -c %F "$TMP/fifo"): $(head -c 200 "$TMP/err")"
fi

# parses: the JSON on stdin has the reference's events
parses() {
	python3 -c 'import json, sys
got, want = json.load(sys.stdin), json.load(open(sys.argv[1]))
sys.exit(got != want)' "$REF"
}
# (in TMP: a wrong binary writes a file named "-" there)
cd "$TMP" || exit 1
"$BIN" export -o - "$DB" 2>"$TMP/err" | parses
rc=("${PIPESTATUS[@]}")
if [ "${rc[*]}" = "0 0" ] && grep -q "^-: .* phases" "$TMP/err"; then
	ok "-o -: the JSON, and only it, on stdout; the counts on stderr"
else
	not_ok "-o -: the JSON, and only it, on stdout; the counts on stderr" \
		"exit ${rc[*]}: $(head -c 200 "$TMP/err")"
fi
"$BIN" export -o - "$DB" 2>/dev/null | gzip -c | gzip -dc | parses
rc=("${PIPESTATUS[@]}")
if [ "${rc[*]}" = "0 0 0 0" ]; then
	ok "-o - | gzip: gzip reads it, the JSON parses"
else
	not_ok "-o - | gzip: gzip reads it, the JSON parses" "exits ${rc[*]}"
fi
# as root, a name of its own for /dev/stdout (a wrong binary would replace
# the system's); as an ordinary user below, /dev/stdout itself
mkdir -p "$TMP/dev"
ln -s /proc/self/fd/1 "$TMP/dev/stdout"
"$BIN" export -o "$TMP/dev/stdout" "$DB" 2>"$TMP/err" | cat >"$TMP/stdout.json"
rc=("${PIPESTATUS[@]}")
if [ "${rc[*]}" = "0 0" ] && cmp -s "$REF" "$TMP/stdout.json" && [ -L "$TMP/dev/stdout" ]; then
	ok "-o a link to /proc/self/fd/1 (as /dev/stdout) into a pipe: the whole export"
else
	not_ok "-o a link to /proc/self/fd/1 (as /dev/stdout) into a pipe: the whole export" \
		"exit ${rc[*]}: $(head -c 200 "$TMP/err")"
fi
if command -v script >/dev/null 2>&1; then
	script -qec "\"$BIN\" export -o - \"$DB\"" /dev/null </dev/null >"$TMP/tty.out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q "a terminal" "$TMP/tty.out" && ! grep -q traceEvents "$TMP/tty.out"; then
		ok "-o - on a terminal: refused, exit 2"
	else
		not_ok "-o - on a terminal: refused, exit 2" "exit $rc: $(head -c 200 "$TMP/tty.out")"
	fi
else
	skip "-o - on a terminal" "no script(1)"
fi
cd "$ROOT" || exit 1

# ---- b. symlinks and owners ----
mkdir -p "$TMP/l/real"
echo old >"$TMP/l/real/target.json"
ln -s real/target.json "$TMP/l/link1.json"
ln -s link1.json "$TMP/l/link2.json"
"$BIN" export -o "$TMP/l/link2.json" "$DB" >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" = 0 ] && [ -L "$TMP/l/link2.json" ] && [ -L "$TMP/l/link1.json" ] &&
	[ "$(readlink "$TMP/l/link2.json")" = link1.json ] && cmp -s "$REF" "$TMP/l/real/target.json" &&
	[ -z "$(ls -A "$TMP/l" | grep -v '^link[12].json$\|^real$')" ] &&
	[ "$(ls -A "$TMP/l/real")" = target.json ]; then
	ok "-o a symlink to a symlink: the final target gets the export, the links stay links"
else
	not_ok "-o a symlink to a symlink: the final target gets the export, the links stay links" \
		"exit $rc: $(head -c 200 "$TMP/err"); $(ls -lA "$TMP/l" "$TMP/l/real" | tr '\n' '|')"
fi
ln -s nowhere.json "$TMP/l/dangling.json"
"$BIN" export -o "$TMP/l/dangling.json" "$DB" >/dev/null 2>"$TMP/err"
rc=$?
if one_error "$rc" "$TMP/err" "a symlink to nothing" && [ -L "$TMP/l/dangling.json" ] &&
	[ ! -e "$TMP/l/nowhere.json" ]; then
	ok "-o a symlink to nothing: refused in one line, nothing written"
else
	not_ok "-o a symlink to nothing: refused in one line, nothing written" \
		"exit $rc: $(head -c 200 "$TMP/err")"
fi
if [ -n "$ROOTUSER" ]; then
	echo theirs >"$TMP/l/theirs.json"
	chmod 0600 "$TMP/l/theirs.json"
	chown 65534:65534 "$TMP/l/theirs.json"
	"$BIN" export -o "$TMP/l/theirs.json" "$DB" >/dev/null 2>"$TMP/err"
	rc=$?
	got=$(stat -c '%a %u:%g' "$TMP/l/theirs.json")
	if [ "$rc" = 0 ] && [ "$got" = "600 65534:65534" ] && cmp -s "$REF" "$TMP/l/theirs.json"; then
		ok "-o a 0600 file of uid 65534, as root: replaced, its mode and owner kept"
	else
		not_ok "-o a 0600 file of uid 65534, as root: replaced, its mode and owner kept" \
			"exit $rc, now $got: $(head -c 200 "$TMP/err")"
	fi
else
	skip "-o a 0600 file of uid 65534" "needs root"
fi

# ---- c. as an ordinary user ----
# (root drops to uid 65534; anyone else is an ordinary user already)
AS_USER=()
if [ -n "$ROOTUSER" ] && command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$TMP"
	chmod 644 "$DB"
	AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
if [ -n "$ROOTUSER" ] && [ ${#AS_USER[@]} = 0 ]; then
	skip "as an ordinary user: -o /dev/null" "no setpriv"
	skip "as an ordinary user: -o /dev/stdout into a pipe" "no setpriv"
else
	"${AS_USER[@]}" "$BIN" export -o /dev/null "$DB" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ "$rc" = 0 ] && [ -c /dev/null ]; then
		ok "as an ordinary user: -o /dev/null"
	else
		not_ok "as an ordinary user: -o /dev/null" "exit $rc: $(head -c 200 "$TMP/err")"
	fi
	"${AS_USER[@]}" "$BIN" export -o /dev/stdout "$DB" 2>"$TMP/err" | cat >"$TMP/user.json"
	rc=("${PIPESTATUS[@]}")
	if [ "${rc[*]}" = "0 0" ] && cmp -s "$REF" "$TMP/user.json"; then
		ok "as an ordinary user: -o /dev/stdout into a pipe"
	else
		not_ok "as an ordinary user: -o /dev/stdout into a pipe" "exit ${rc[*]}: $(head -c 200 "$TMP/err")"
	fi
fi

# ---- d. leftovers ----
BIG=$TMP/big.db
TRAIN=tests/data/gpu/train.pt.trace.json.gz
if ! "$BIN" import -o "$BIG" "$TRAIN" >/dev/null 2>"$TMP/err"; then
	not_ok "import of $TRAIN" "$(head -c 300 "$TMP/err")"
fi
# stopped DIR CMD...: runs CMD, stops it (SIGSTOP) once it holds the
# flock of a hidden file of this tool in DIR (as /proc/locks says: taking
# the lock to see would disturb it); prints its pid, or nothing when it
# ended first.
stopped() {
	python3 - "$@" <<'EOF'
import os, re, signal, subprocess, sys, time
d = sys.argv[1]
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)
pat = re.compile(r"^\..+\.grademl\.[A-Za-z0-9]{6}$")

def holds():
    inodes = set()
    for f in os.listdir(d):
        try:
            if pat.match(f):
                inodes.add(os.stat(os.path.join(d, f)).st_ino)
        except OSError:
            pass
    if not inodes:
        return False
    for line in open("/proc/locks"):
        # "1: FLOCK  ADVISORY  WRITE 1234 00:2f:5678 0 EOF"; "1: -> ..." waits
        f = line.split()
        if len(f) >= 6 and f[1] == "FLOCK" and f[4] == str(p.pid) and \
                int(f[5].split(":")[2]) in inodes:
            return True
    return False

t = time.time()
while p.poll() is None and time.time() - t < 120:
    if holds():
        os.kill(p.pid, signal.SIGSTOP)
        print(p.pid)
        break
    time.sleep(0.0005)
EOF
}
# hidden DIR: the hidden files of this tool in DIR, one a line.
hidden() {
	ls -A "$1" | grep -E '^\..+\.grademl\.[A-Za-z0-9]{6}$'
}
# killed_swept NAME DIR NEXT CMD...: CMD, killed with SIGKILL once it holds
# its hidden file in DIR, leaves that file; then NEXT (export or import)
# into another name in DIR removes it, and not another program's
# ".b.json.AbC123" (rsync's temporary files are named so).
killed_swept() {
	local name=$1 dir=$2 next=$3 pid left rc
	shift 3
	mkdir -p "$dir"
	pid=$(stopped "$dir" "$@")
	if [ -z "$pid" ]; then
		not_ok "$name" "it ended before it could be stopped"
		return
	fi
	kill -KILL "$pid"
	sleep 0.2
	left=$(hidden "$dir")
	echo "x" >"$dir/.b.json.AbC123"
	case $next in
	export) "$BIN" export -o "$dir/other.json" "$DB" ;;
	import) "$BIN" import -o "$dir/other.db" "$TMP/small.json" ;;
	esac >/dev/null 2>"$TMP/err"
	rc=$?
	if [ -n "$left" ] && [ "$rc" = 0 ] && [ -z "$(hidden "$dir")" ] && [ -e "$dir/.b.json.AbC123" ]; then
		ok "$name"
	else
		not_ok "$name" "left by the kill: '$left'; after an $next (exit $rc): '$(ls -A "$dir" | tr '\n' ' ')'"
	fi
}
killed_swept "an export killed with SIGKILL: the next export (another name) removes its hidden file, not rsync's" \
	"$TMP/k" export "$BIN" export -o "$TMP/k/a.json.gz" "$BIG"
killed_swept "an import killed with SIGKILL: an import into another name removes its hidden file, not rsync's" \
	"$TMP/i" import "$BIN" import -o "$TMP/i/a.db" "$TRAIN"
killed_swept "an import killed with SIGKILL: the next export removes its hidden file" \
	"$TMP/ie" export "$BIN" import -o "$TMP/ie/a.db" "$TRAIN"
mkdir -p "$TMP/s"
pid=$(stopped "$TMP/s" "$BIN" export -o "$TMP/s/live.json.gz" "$BIG")
if [ -z "$pid" ]; then
	not_ok "a stopped export's hidden file survives another's sweep, and it completes" \
		"the export ended before it could be stopped"
else
	live=$(hidden "$TMP/s")
	"$BIN" export -o "$TMP/s/other.json" "$DB" >/dev/null 2>"$TMP/err"
	rc=$?
	still=$(hidden "$TMP/s")
	kill -CONT "$pid"
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	if [ -n "$live" ] && [ "$rc" = 0 ] && [ "$still" = "$live" ] && [ -z "$(hidden "$TMP/s")" ] &&
		gzip -dc "$TMP/s/live.json.gz" | python3 -c 'import json, sys; json.load(sys.stdin)'; then
		ok "a stopped export's hidden file survives another's sweep, and it completes"
	else
		not_ok "a stopped export's hidden file survives another's sweep, and it completes" \
			"hidden '$live', after the other export (exit $rc) '$still'; $(ls -A "$TMP/s" | tr '\n' ' ')"
	fi
fi

# ---- e. :save ----
# save_keys FILE: a key script that types :save FILE, dumps the screen
# (its last line the message), clears the message and ends.
save_keys() {
	printf 'type :save %s\nEnter\ndump\nC-l\n' "$1"
}
# save NAME FILE: the explorer (headless) runs save_keys FILE; the message
# it shows is in $TMP/NAME.msg, the final screen the last 24 lines of
# $TMP/NAME.dump.  Fails after 10 s.
save() {
	save_keys "$2" >"$TMP/$1.keys"
	timeout 10 "$BIN" --keys "$TMP/$1.keys" --dump "$TMP/$1.dump" --size 80x24 "$DB" \
		>/dev/null 2>"$TMP/$1.err" </dev/null
	local rc=$?
	sed -n '24s/ *$//p' "$TMP/$1.dump" 2>/dev/null >"$TMP/$1.msg"
	return $rc
}
mkdir -p "$TMP/ro"
if [ -n "$ROOTUSER" ] && unshare -m --propagation private true 2>/dev/null; then
	save_keys "$TMP/ro/x.txt" >"$TMP/ro.keys"
	unshare -m --propagation private sh -c 'mount -t tmpfs -o ro,size=1m tmpfs "$1" &&
		exec timeout 10 "$2" --keys "$3" --dump "$4" --size 80x24 "$5"' - \
		"$TMP/ro" "$BIN" "$TMP/ro.keys" "$TMP/ro.dump" "$DB" >/dev/null 2>"$TMP/ro.err" </dev/null
	rc=$?
	msg=$(sed -n '24s/ *$//p' "$TMP/ro.dump" 2>/dev/null)
	if [ "$rc" = 0 ] && [ "$msg" = "cannot write '$TMP/ro/x.txt': read-only file system" ]; then
		ok ":save on a read-only file system says why"
	else
		not_ok ":save on a read-only file system says why" "exit $rc, message '$msg': $(head -c 200 "$TMP/ro.err")"
	fi
else
	skip ":save on a read-only file system" "needs root and unshare -m"
fi
mkfifo "$TMP/savefifo"
save fifo "$TMP/savefifo"
rc=$?
if [ "$rc" = 0 ] && [ "$(cat "$TMP/fifo.msg")" = "cannot write '$TMP/savefifo': nothing reads the FIFO" ]; then
	ok ":save to a FIFO that nothing reads: says so at once"
else
	not_ok ":save to a FIFO that nothing reads: says so at once" "exit $rc, message '$(cat "$TMP/fifo.msg")'"
fi
echo old >"$TMP/l/screen.txt"
ln -s screen.txt "$TMP/l/screenlink.txt"
save link "$TMP/l/screenlink.txt"
rc=$?
if [ "$rc" = 0 ] && [ -L "$TMP/l/screenlink.txt" ] &&
	cmp -s "$TMP/l/screen.txt" <(tail -n 24 "$TMP/link.dump"); then
	ok ":save through a symlink: the target gets the screen, the link stays"
else
	not_ok ":save through a symlink: the target gets the screen, the link stays" \
		"exit $rc, message '$(cat "$TMP/link.msg")'"
fi

# ---- f. INT64_MIN ----
cp "$DB" "$TMP/min.db"
sqlite3 "$TMP/min.db" "UPDATE events SET t_ns = -9223372036854775808" 2>"$TMP/err"
"$BIN" export -o "$TMP/min.json" "$TMP/min.db" >/dev/null 2>>"$TMP/err"
rc=$?
why=$([ "$rc" = 0 ] && python3 - "$TMP/min.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
base = d["baseTimeNanoseconds"]
if base != -2**63:
    print("baseTimeNanoseconds %d, not the event's INT64_MIN" % base)
bad = [e for e in d["traceEvents"] if e["ts"] < 0]
if bad:
    print("%d events before the base, e.g. %s" % (len(bad), bad[0]))
EOF
)
if [ "$rc" = 0 ] && [ -z "$why" ]; then
	ok "an event at INT64_MIN: exported, the base at or before it"
else
	not_ok "an event at INT64_MIN: exported, the base at or before it" \
		"exit $rc: ${why:-$(head -c 200 "$TMP/err")}"
fi

summary
