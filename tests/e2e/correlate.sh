#!/usr/bin/env bash
# The query language's correlation in time on generated traces
# (tests/e2e/correlate_check.py), with grademl-tui ($GRADEML_BIN):
#
#   a. during and within answer as a scan of every pair does: the phases
#      and events during the operators, and each phase's and event's
#      nearest operator within 3 us (ties to the lowest id, a phase not
#      near itself), on a trace of ~1 000 events;
#   b. they scale as n log n, not n^2: each query on a trace of 10x the
#      events takes less than 30x the time of the same query on the 1x
#      trace (the best of three runs each, the 1x counted as at least
#      20 ms, which starting the binary takes; n^2 would be 100x).  Each
#      run is bounded by `timeout`, so a quadratic binary fails rather
#      than hangs.
#
# Prints "ok - NAME" / "not ok - NAME (why)", then a summary; exits 1 when
# any check failed.  Needs: bash, python3, timeout.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init e2e-correlate
CHECK=$ROOT/tests/e2e/correlate_check.py

e2e_need_bin

# gen N: the generated trace of about N events imported as $TMP/tN.db
gen() {
	python3 "$CHECK" trace "$1" "$TMP/t$1.json" &&
		"$BIN" import -o "$TMP/t$1.db" "$TMP/t$1.json" >"$TMP/import.log" 2>&1
}

# ---- a. the answers ----

if ! gen 1000; then
	not_ok "a: the 1 000-event trace imports" "$(tail -n 3 "$TMP/import.log" | tr '\n' '|')"
else
	DB=$TMP/t1000.db
	# answer NAME WANT QUERY...: the queries' CSV rows (header dropped),
	# "--" between them, equal the file WANT
	answer() {
		local name=$1 want=$2 q first=1
		shift 2
		: >"$TMP/got"
		for q in "$@"; do
			[ "$first" = 1 ] || echo -- >>"$TMP/got"
			first=0
			if ! timeout 60 "$BIN" query "$DB" "$q" --format csv >"$TMP/out" 2>"$TMP/err"; then
				not_ok "$name" "'$q': $(head -c 200 "$TMP/err")"
				return
			fi
			tail -n +2 "$TMP/out" | tr -d '\r' | tr ',' ' ' >>"$TMP/got"
		done
		if [ "$(grep -cv -- -- "$want")" -lt 100 ]; then
			not_ok "$name" "the brute force found only $(grep -cv -- -- "$want") rows"
		elif ! diff -q "$want" "$TMP/got" >/dev/null; then
			not_ok "$name" "differs from the brute force: $(diff "$want" "$TMP/got" | head -n 4 | tr '\n' '|')"
		else
			ok "$name ($(grep -cv -- -- "$want") rows)"
		fi
	}
	python3 "$CHECK" during "$DB" >"$TMP/during.want"
	answer "a: during (phases kind = operator) equals the brute force" "$TMP/during.want" \
		'phases | during (phases kind = operator) | select id' \
		'events | during (phases kind = operator) | select id'
	python3 "$CHECK" within "$DB" 3000 >"$TMP/within.want"
	answer "a: within 3us of (phases kind = operator) equals the brute force" \
		"$TMP/within.want" \
		'phases | within 3us of (phases kind = operator) | select id, near' \
		'events | within 3us of (phases kind = operator) | select id, near'
fi

# ---- b. n log n ----

N=3000
LIMIT=20 # seconds a run may take; n^2 at 10x takes longer here
if ! gen $N || ! gen $((10 * N)); then
	not_ok "b: the generated traces import" "$(tail -n 3 "$TMP/import.log" | tr '\n' '|')"
	summary
	exit 1
fi
# best DB QUERY: the least wall time of three runs in ms, or "timeout"
best() {
	local b= i t0 t1 ms
	for i in 1 2 3; do
		t0=$(date +%s%N)
		if ! timeout "$LIMIT" "$BIN" query "$1" "$2" --format csv >/dev/null 2>"$TMP/err"; then
			echo timeout
			return
		fi
		t1=$(date +%s%N)
		ms=$(((t1 - t0) / 1000000))
		[ -z "$b" ] || [ "$ms" -lt "$b" ] && b=$ms
	done
	echo "$b"
}
for q in 'phases | during (phases kind = operator) | count' \
	'phases | within 1s of phases | count' \
	'events | within 1s of phases | count' \
	'events | during (phases kind = operator) | count'; do
	small=$(best "$TMP/t$N.db" "$q")
	big=$(best "$TMP/t$((10 * N)).db" "$q")
	name="b: '$q' at 10x the events takes < 30x the time"
	if [ "$small" = timeout ] || [ "$big" = timeout ]; then
		not_ok "$name" "1x: $small ms, 10x: $big (limit $LIMIT s): $(head -c 200 "$TMP/err")"
	elif [ "$big" -ge $((30 * (small > 20 ? small : 20))) ]; then
		not_ok "$name" "1x: $small ms, 10x: $big ms"
	else
		ok "$name (1x: $small ms, 10x: $big ms)"
	fi
done

summary || exit 1
