#!/usr/bin/env bash
# The metric-import row of run.sh alone (DESIGN.md's issue 4: >= 1 M
# samples/s), to compare builds: each BIN given (default build/grademl-tui)
# imports the same sadf -j file (make_big_sadf.py, cached in BENCH_DIR as
# run.sh does), BENCH_RUNS times (default 3), the binaries taking turns so
# that drift on a shared machine hits them alike.  Prints, per binary, the
# best wall time, samples/s and the largest peak RSS.
#
#   bash tests/bench/metric.sh
#   BENCH_RUNS=5 bash tests/bench/metric.sh /tmp/base/grademl-tui build/grademl-tui
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${BENCH_DIR:-/tmp/grademl-bench}
runs=${BENCH_RUNS:-3}
bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=("$root/build/grademl-tui")

die() {
	echo "bench: $*" >&2
	exit 1
}

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive whole number, not '$runs'"
for b in "${bins[@]}"; do
	[[ -x $b ]] || die "$b is not an executable (run make)"
done
/usr/bin/time -f '%e' true 2>/dev/null || die "GNU time is needed at /usr/bin/time"
command -v sqlite3 >/dev/null || die "sqlite3 is needed to count the samples"
mkdir -p "$dir" || die "cannot create $dir"
case "$(cd "$dir" && pwd)/" in
"$root"/*) die "BENCH_DIR $dir is inside the repository; big files do not belong there" ;;
esac

sadf=$dir/big-sadf.json
if [[ ! -s $sadf || $here/make_big_sadf.py -nt $sadf ]]; then
	python3 "$here/make_big_sadf.py" --copies 200 -o "$sadf.tmp" || die "make_big_sadf.py failed"
	mv "$sadf.tmp" "$sadf"
fi
cat "$sadf" >/dev/null
work=$(mktemp -d "$dir/metric.XXXXXX")
trap 'rm -rf "$work"' EXIT

declare -a best peak samples
for ((r = 0; r < runs; r++)); do
	for i in "${!bins[@]}"; do
		db=$work/m.db
		rm -f "$db" "$db"-*
		if ! /usr/bin/time -f '%e %M' -o "$work/time" "${bins[i]}" import -o "$db" "$sadf" \
			>/dev/null 2>"$work/err"; then
			tail -n 5 "$work/err" >&2
			die "failed: ${bins[i]} import"
		fi
		read -r t m <"$work/time"
		if [[ -z ${best[i]:-} ]] || awk -v a="$t" -v b="${best[i]}" 'BEGIN { exit !(a < b) }'; then
			best[i]=$t
		fi
		((m > ${peak[i]:-0})) && peak[i]=$m
		[[ -n ${samples[i]:-} ]] || samples[i]=$(sqlite3 "$db" 'SELECT count(*) FROM samples')
	done
done
for i in "${!bins[@]}"; do
	awk -v b="${bins[i]}" -v t="${best[i]}" -v n="${samples[i]}" -v m="${peak[i]}" -v runs="$runs" \
		'BEGIN { printf "%s: %d samples, best of %d %.2f s, %.2f M samples/s, peak RSS %.1f MiB\n",
		         b, n, runs, t, n / t / 1e6, m / 1024 }'
done
