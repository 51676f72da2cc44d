#!/usr/bin/env bash
# Capture the CPU cases of the truth suite into tests/truth/cpu/data/ (or
# OUT_DIR): tests/truth/cpu/workloads.py runs each case as a step while
# sysstat's sadc records the host every second; sadf -j then keeps the CPU
# (all and per CPU, every field) and disk activities.  Needs sysstat
# (apt-get install sysstat) and python3; about half a minute once the host
# is quiet: the cases are judged by host-wide counters, so the script waits
# until the CPUs are nearly idle (QUIET, default 25% busy at most), and checks
# the capture afterwards with expect.py (each step must show what it was
# built to show), trying again until one does or WAIT_S (default 1800 s)
# has passed; it exits 1, keeping nothing, when none did.
# Then tests/truth/cpu/nested.py writes the same windows as OTLP spans and
# nested steps beside them.  Rerunnable: it overwrites.
# Usage: tests/truth/cpu/capture.sh [OUT_DIR [CASE ...]]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/data}"
shift || true
py="${PYTHON:-/usr/bin/python3}"
sadc="${SADC:-/usr/lib/sysstat/sadc}"
wait_s="${WAIT_S:-1800}"
quiet="${QUIET:-25}" # % of the CPUs busy at most before a try
export PYTHONUNBUFFERED=1

[ -x "$sadc" ] || { echo "capture.sh: no $sadc (apt-get install sysstat)" >&2; exit 1; }
command -v sadf >/dev/null || { echo "capture.sh: no sadf (apt-get install sysstat)" >&2; exit 1; }

tmp="$(mktemp -d)"
sadc_pid=""
cleanup() {
	if [ -n "$sadc_pid" ]; then kill "$sadc_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# busy: the share of CPU time not idle (nor iowait) over 3 s, in percent
busy() {
	local a b
	a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
	sleep 3
	b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)
	echo "$a $b" | awk '{d = $4 - $2; print (d > 0 ? int(100 * ($3 - $1) / d) : 100)}'
}
# One try: wait until the host is quiet, record the workloads, check them.
attempt() {
	local b
	while :; do
		b=$(busy)
		[ "$b" -le "$quiet" ] && break
		if [ $SECONDS -ge $deadline ]; then
			echo "capture.sh: the host stayed busy (${b}% of its CPUs) for ${wait_s} s" >&2
			exit 1
		fi
		sleep 5
	done
	rm -rf "$tmp/work" "$tmp/sa.bin"
	# sadc: one record a second, disks included (-S XDISK), until killed
	"$sadc" -S XDISK 1 "$tmp/sa.bin" &
	sadc_pid=$!
	"$py" "$here/workloads.py" "$tmp/work" "$@"
	sleep 1
	kill "$sadc_pid" 2>/dev/null || true
	wait "$sadc_pid" 2>/dev/null || true
	sadc_pid=""
	# -u ALL: every CPU field (iowait too); -P ALL: each CPU; -d: each disk
	sadf -j -- -u ALL -P ALL -d "$tmp/sa.bin" >"$tmp/sadf.json"
	"$py" "$here/expect.py" --check "$tmp/sadf.json" "$tmp/work/workflow.jsonl"
}

# Other processes disturb host-wide counters: a try that does not show what
# each case was built to show is thrown away, and the next waits again.
deadline=$((SECONDS + wait_s))
until attempt "$@"; do
	if [ $SECONDS -ge $deadline ]; then
		echo "capture.sh: no clean capture within ${wait_s} s" >&2
		exit 1
	fi
	echo "capture.sh: another process got in the way; trying again" >&2
	sleep 20
done

mkdir -p "$out"
rm -f "$out"/sadf.json.gz "$out"/workflow.jsonl "$out"/truth.json
gzip -9 -n -c "$tmp/sadf.json" >"$out/sadf.json.gz"
cp "$tmp/work/workflow.jsonl" "$tmp/work/truth.json" "$out/"
# the same windows at other levels of the tree (OTLP spans, nested steps)
"$py" "$here/nested.py" "$out"
{
	echo "capture: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -srm), $(nproc) CPUs"
	echo "sysstat: $(sadf -V 2>&1 | head -1)"
	echo "python: $("$py" -V 2>&1)"
	echo
	"$py" "$here/expect.py" "$tmp/sadf.json" "$tmp/work/workflow.jsonl"
} >"$out/CAPTURE.txt"
echo "capture.sh: wrote $out"
