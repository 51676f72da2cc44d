# What the benchmark scripts share; sourced by analyze.sh, diff.sh,
# query.sh and tui.sh after `set -euo pipefail`.  Sets here (this folder),
# root (the project), bin (GRADEML_BIN, else build/grademl-tui, made
# absolute), dir (BENCH_DIR, else /tmp/grademl-bench) and mb (BENCH_MB,
# else 1024); die prints "bench-NAME: ..." and exits 1.
#
#   bench_init NAME [time]   also checks the binary (and /usr/bin/time)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${GRADEML_BIN:-$root/build/grademl-tui}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
dir=${BENCH_DIR:-/tmp/grademl-bench}
mb=${BENCH_MB:-1024}
bench_name=bench

die() {
	echo "$bench_name: $*" >&2
	exit 1
}

bench_init() {
	bench_name=bench-$1
	[[ -x $bin ]] || die "$bin is not built (run make, or set GRADEML_BIN)"
	[[ ${2:-} != time || -x /usr/bin/time ]] ||
		die "/usr/bin/time is needed (Debian: apt-get install -y time)"
}
