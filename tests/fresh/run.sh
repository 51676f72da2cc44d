#!/usr/bin/env bash
# The README's promise, tried on a fresh machine: a minbase Debian 12 root
# (debootstrap --variant=minbase) with only git, make and ca-certificates
# added, as the README's recipe has it (the compiler is the two commands'
# to install), the project's committed HEAD cloned into it, then
#
#   1. an ordinary user without the packages: `make`, `make demo </dev/null`
#      and `make check` each fail with one line, the first pointing at
#      `make deps`, the others giving the apt-get line (no sudo);
#   2. root: `make demo </dev/null`, then `make check` (each installs what
#      it needs);
#   3. the ordinary user again, in their own clone: `make demo </dev/null`
#      and `make check`.
#
# Each run's time, the packages it installed (dpkg's Installed-Size) and
# make check's summary line are printed; the exit status is 1 when any
# expectation failed.  Not part of `make check`: it needs root, Debian's
# package mirror and about 12 minutes (on 2 cores).
#
#   sudo bash tests/fresh/run.sh [DIR]
#
# DIR holds the root (default: a new directory under /var/tmp, removed at
# the end; KEEP=1 keeps it).  The logs go to LOGS (default DIR.logs).
# MIRROR picks the Debian mirror.  The mounts (/proc, /sys, /dev, /dev/pts,
# /dev/shm) are undone on every way out, an interrupt included.
set -uo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
USERNAME=fresh
PATH_IN=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() {
	echo "fresh: $*" >&2
	exit 2
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mounts)"
sha=$(git -C "$src" rev-parse HEAD) || die "$src is not a git checkout"
git -C "$src" diff --quiet HEAD -- || echo "fresh: note: uncommitted changes are not tried, only HEAD $sha"

if [ $# -ge 1 ]; then
	R=$(mkdir -p "$1" && cd "$1" && pwd) || die "cannot make $1"
	[ -z "$(ls -A "$R")" ] || die "$R is not empty"
else
	R=$(mktemp -d /var/tmp/grademl-fresh.XXXXXX) || die "cannot make a directory under /var/tmp"
fi
# the root's / as a Debian root has it: mktemp's 0700 would shut the
# ordinary user out of every file in it
chmod 755 "$R" || die "cannot chmod $R"
LOGS=${LOGS:-$R.logs}
mkdir -p "$LOGS" || die "cannot make $LOGS"

mounted=()
# mounts_under: the mount points at or below $R, deepest first.
mounts_under() {
	awk -v r="$R" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}
cleanup() {
	local rc=$? p m
	trap - EXIT INT TERM
	# processes left in the root (a test's tmux server, say), by pid
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null
	done
	for m in $(mounts_under); do
		umount -l "$m" 2>/dev/null || echo "fresh: cannot unmount $m" >&2
	done
	if [ -n "$(mounts_under)" ]; then
		echo "fresh: mounts remain under $R; not removing it" >&2
		rc=1
	elif [ "${KEEP:-0}" = 1 ]; then
		echo "fresh: the root is kept in $R"
	else
		rm -rf --one-file-system "$R"
	fi
	echo "fresh: logs in $LOGS"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mnt() {
	local type=$1 what=$2 where=$R$3
	shift 3
	if [ "$type" = bind ]; then
		mount --bind "$what" "$where" "$@"
	else
		mount -t "$type" "$what" "$where" "$@"
	fi || die "cannot mount $where"
	mounted+=("$where")
}

# home_of USER: USER's home directory in the root.
home_of() {
	chroot "$R" getent passwd "$1" | cut -d: -f6
}

# in_root USER CMD: runs CMD (a shell line) in the root as USER, in a clean
# environment, from that user's clone.
in_root() {
	local user=$1 home
	shift
	home=$(home_of "$user")
	chroot --userspec="$user:$user" "$R" env -i PATH="$PATH_IN" HOME="$home" \
		USER="$user" TERM="${TERM:-xterm}" bash -c "cd ~/grademl-tui && $1"
}

# installed_kib: the sum of dpkg's Installed-Size over the root's packages.
installed_kib() {
	chroot "$R" dpkg-query -W -f='${Installed-Size}\n' | awk '{ s += $1 } END { print s + 0 }'
}

failures=0 report=()
expect() { # expect WHAT CONDITION-RESULT(0/1) WHY
	if [ "$2" = 0 ]; then
		echo "fresh: ok - $1"
	else
		echo "fresh: not ok - $1 ($3)"
		failures=$((failures + 1))
	fi
}

# run NAME USER CMD: runs CMD in the root, its output in $LOGS/NAME.log;
# sets rc, secs and mib (what dpkg installed meanwhile).
run() {
	local name=$1 user=$2 cmd=$3 t0 t1 k0 k1
	k0=$(installed_kib)
	t0=$(date +%s)
	echo "fresh: [$user] $cmd ..."
	in_root "$user" "$cmd" >"$LOGS/$name.log" 2>&1
	rc=$?
	t1=$(date +%s)
	k1=$(installed_kib)
	secs=$((t1 - t0)) mib=$(((k1 - k0 + 512) / 1024))
	report+=("$(printf '%-6s %-28s %6s s %6s MiB  exit %s' "$user" "$cmd" "$secs" "$mib" "$rc")")
	tail -n 3 "$LOGS/$name.log" | sed 's/^/    | /'
}

# ---- the root ----
command -v debootstrap >/dev/null 2>&1 || {
	echo "fresh: installing debootstrap"
	apt-get install -y -qq debootstrap >/dev/null || die "cannot install debootstrap"
}
t0=$(date +%s)
echo "fresh: debootstrap --variant=minbase $SUITE into $R"
debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
	die "debootstrap failed; see $LOGS/debootstrap.log"
cp /etc/resolv.conf "$R/etc/resolv.conf"
mnt proc proc /proc
mnt sysfs sysfs /sys -o ro
mnt bind /dev /dev
mnt bind /dev/pts /dev/pts
mnt tmpfs tmpfs /dev/shm -o mode=1777
base_kib=$(installed_kib)
echo "fresh: apt-get install git make ca-certificates"
chroot "$R" env -i PATH="$PATH_IN" DEBIAN_FRONTEND=noninteractive \
	bash -c 'apt-get update -qq && apt-get install -y -qq git make ca-certificates' \
	>"$LOGS/base.log" 2>&1 || die "cannot install git make ca-certificates; see $LOGS/base.log"
pre_kib=$(installed_kib)
echo "fresh: the root is ready in $(($(date +%s) - t0)) s: minbase $((base_kib / 1024)) MiB," \
	"with git make ca-certificates $((pre_kib / 1024)) MiB"

chroot "$R" useradd -m -s /bin/bash "$USERNAME" || die "cannot add user $USERNAME"
for user in root "$USERNAME"; do
	home=$(home_of "$user")
	git clone -q --no-checkout "$src" "$R$home/grademl-tui" &&
		git -C "$R$home/grademl-tui" checkout -q "$sha" &&
		chroot "$R" chown -R "$user:$user" "$home/grademl-tui" || die "cannot clone $src into $R$home"
done

# one_line NAME PATTERN: the log has exactly one line matching PATTERN and
# none naming sudo.
one_line() {
	[ "$(grep -c -E -- "$2" "$LOGS/$1.log")" = 1 ] && ! grep -q sudo "$LOGS/$1.log"
}

# ---- 1. an ordinary user, no packages ----
run user-make "$USERNAME" "make"
[ "$rc" != 0 ] && one_line user-make "make deps"
expect "user, no packages: make fails with one line pointing at make deps" $? "exit $rc; see $LOGS/user-make.log"
for t in demo check; do
	run "user-$t-nopkg" "$USERNAME" "make $t </dev/null"
	[ "$rc" != 0 ] && one_line "user-$t-nopkg" "apt-get install -y" &&
		grep -q "^make $t needs Debian packages; as root, run: apt-get update && apt-get install -y" \
			"$LOGS/user-$t-nopkg.log"
	expect "user, no packages: make $t fails with the one apt-get line, no sudo" $? \
		"exit $rc; see $LOGS/user-$t-nopkg.log"
done

# summary_of NAME: make check's summary line (its last, but for make's own
# error lines after a failure).
summary_of() {
	grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$LOGS/$1.log" | tail -n 1
}

# check_ok NAME: make check ended with its summary, and nothing failed.
check_ok() {
	local last
	last=$(summary_of "$1")
	echo "fresh: $1: ${last:-no summary line}"
	[ "$rc" = 0 ] && [ "$(tail -n 1 "$LOGS/$1.log")" = "$last" ] &&
		[[ $last =~ ^[0-9]+\ passed,\ 0\ failed,\ [0-9]+\ skipped$ ]]
}

# ---- 2. root ----
run root-demo root "make demo </dev/null"
[ "$rc" = 0 ] && grep -q -E "^grademl-tui report: demo.db \([0-9]+ phases\)" "$LOGS/root-demo.log"
expect "root: make demo installs, builds and prints the report" $? "exit $rc; see $LOGS/root-demo.log"
run root-check root "make check"
check_ok root-check
expect "root: make check passes" $? "exit $rc; see $LOGS/root-check.log"

# ---- 3. the ordinary user, packages installed ----
run user-demo "$USERNAME" "make demo </dev/null"
[ "$rc" = 0 ] && grep -q -E "^grademl-tui report: demo.db \([0-9]+ phases\)" "$LOGS/user-demo.log" &&
	! grep -q "apt-get" "$LOGS/user-demo.log"
expect "user: make demo builds and prints the report" $? "exit $rc; see $LOGS/user-demo.log"
run user-check "$USERNAME" "make check"
check_ok user-check
expect "user: make check passes" $? "exit $rc; see $LOGS/user-check.log"

echo
echo "fresh: minbase $SUITE + git make ca-certificates ($((pre_kib / 1024)) MiB), HEAD $sha"
printf '%s\n' "${report[@]}"
echo "fresh: root make check: $(summary_of root-check)"
echo "fresh: user make check: $(summary_of user-check)"
echo "fresh: $failures expectation(s) failed"
[ "$failures" = 0 ]
