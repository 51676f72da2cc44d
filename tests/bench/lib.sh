# What the benchmark scripts share; sourced by analyze.sh, diff.sh,
# export.sh, query.sh and tui.sh after `set -euo pipefail`.  Sets here (this
# folder), root (the project), bin (GRADEML_BIN, else build/grademl-tui, made
# absolute), dir (BENCH_DIR, else /tmp/grademl-bench) and mb (BENCH_MB,
# else 1024); die prints "bench-NAME: ..." and exits 1.
#
#   bench_init NAME [time]   also checks the binary (and /usr/bin/time)
#   bench_work NAME          checks BENCH_MB and dir, sets work: a scratch folder in dir
#                            (removed at exit), HOME and the prompt's state in it
#   bench_tui_db WORK        the explorer benchmark's trace.db (sets json, db)

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

bench_work() {
	[[ $mb =~ ^[0-9]+$ && $mb -gt 0 ]] || die "BENCH_MB must be a positive whole number of MiB, not '$mb'"
	mkdir -p "$dir" || die "cannot create $dir"
	case "$(cd "$dir" && pwd)/" in
	"$root"/*) die "BENCH_DIR $dir is inside the repository; big files do not belong there" ;;
	esac
	work=$(mktemp -d "$dir/$1.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	# the prompt's history file stays out of the real home
	export HOME=$work/home XDG_STATE_HOME=$work/state LC_ALL=C.UTF-8
}

# bench_tui_db WORK: sets json, the BENCH_MB-MiB Kineto trace (made by
# make_big_trace.py from BENCH_SAMPLE or its default sample), and db, that
# trace imported twice as steps a and b of workflow "bench" (~5.6 M phases
# at 1024); each cached in dir and made again when missing, older than what
# it is made from, or (db) when the explorer cannot open it.  WORK: a
# scratch folder.
bench_tui_db() {
	json=$dir/big-${mb}MiB.json
	db=$dir/tui-${mb}MiB.db
	local sample=${BENCH_SAMPLE:-} step
	command -v python3 >/dev/null || die "python3 is needed to build the input"
	if [[ ! -s $json || $here/make_big_trace.py -nt $json ]]; then
		echo "$bench_name: building $json ($mb MiB) ..." >&2
		rm -f "$json" "$json.gz"
		python3 "$here/make_big_trace.py" --mb "$mb" ${sample:+--sample "$sample"} -o "$json.tmp" ||
			die "make_big_trace.py failed"
		mv "$json.tmp" "$json"
	fi
	if [[ ! -s $db || $json -nt $db ]] || ! bench_opens "$db"; then
		echo "$bench_name: importing $json twice into $db ..." >&2
		rm -f "$db" "$db.tmp" "$db.tmp-wal" "$db.tmp-journal"
		for step in a b; do
			"$bin" import -o "$db.tmp" --workflow bench --step "$step" "$json" >/dev/null 2>"$1/import.err" ||
				die "import --step $step failed: $(head -c 300 "$1/import.err")"
		done
		mv "$db.tmp" "$db"
		bench_opens "$db" || die "the explorer cannot open $db"
	fi
}

# bench_opens DB: the explorer shows its first screen.
bench_opens() {
	"$bin" --keys /dev/null --dump /dev/null --size 80x24 "$1" 2>/dev/null
}
