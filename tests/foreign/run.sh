#!/usr/bin/env bash
# The foreign-trace suite: every trace in ../shared/samples/chrome-trace
# (HTA's, PARAM's, Kineto's, the JAX capture: traces the tool was not built
# on), each imported alone, and the tool's figures against an independent
# reading of the raw file (tests/foreign/check.py: json and gzip only):
# device work recognised, per-name kernel and operator counts and totals,
# kernel names' types by HTA 0.6.1, stream busy, profiler step durations and
# device time, each stream's idle split and the kernel-type unions by HTA's
# rules.  This is the one place that loops over
# every sample; the e2e scripts check more figures on a few of them.
#
# Each check is "ok - SAMPLE: CHECK (detail)" or "not ok - SAMPLE: CHECK
# (why: tool against file)", then "N passed, M failed[, K skipped]"; exits 1
# when any check failed.  Only an absent samples directory is skipped.
#
# GRADEML_FOREIGN_KNOWN=FILE names checks known to fail, one a line as
# "SAMPLE: CHECK | item N: why" (a line starting with # is a comment): such
# a failure is reported "ok - ... # TODO known: item N ..." instead, and a
# listed check that passes says its line can go.  tests/foreign/known.txt
# is such a list, empty now (issue 27's items landed), which tests/run-all.sh
# no longer passes: every check counts.
#
# Needs: bash, python3.  GRADEML_SAMPLES overrides ../shared/samples;
# GRADEML_JOBS samples at a time (default 2).
set -u

cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/tap.sh
e2e_init foreign
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
KNOWN=${GRADEML_FOREIGN_KNOWN:-}
JOBS=${GRADEML_JOBS:-2}

e2e_need_bin
if [ ! -d "$SAMPLES" ]; then
	skip "foreign traces" "no samples at $SAMPLES"
	summary
	exit 0
fi
if [ -n "$KNOWN" ] && [ ! -r "$KNOWN" ]; then
	not_ok "known failures" "cannot read GRADEML_FOREIGN_KNOWN '$KNOWN'"
	summary
	exit 1
fi

# short FILE: the sample's name in the check names.
short() {
	local b=${1##*/}
	b=${b%.gz} b=${b%.json} b=${b%.pt.trace}
	case $b in
	facebookresearch__HolisticTraceAnalysis__*) b=hta/${b#*__*__} ;;
	facebookresearch__param__*) b=param/${b#*__*__} ;;
	pytorch__kineto__*) b=kineto/${b#*__*__} ;;
	esac
	echo "$b"
}

# one N FILE: imports FILE and checks it, into $TMP/N.out (check.py's
# lines, or one "fail import ..." line).
one() {
	local db=$TMP/$1.db
	if ! "$BIN" import -o "$db" "$2" >/dev/null 2>"$TMP/$1.err"; then
		printf 'fail\timport\t%s\n' "$(head -c 300 "$TMP/$1.err" | tr '\n\t' '  ')" >"$TMP/$1.out"
	elif ! python3 tests/foreign/check.py "$BIN" "$2" "$db" >"$TMP/$1.out" 2>"$TMP/$1.err"; then
		printf 'fail\tcheck.py\t%s\n' "$(tail -n 3 "$TMP/$1.err" | tr '\n\t' '  ')" >>"$TMP/$1.out"
	fi
	rm -f "$db"
}

files=()
for f in "$SAMPLES"/*.json "$SAMPLES"/*.json.gz; do
	[ -f "$f" ] && files+=("$f")
done
for i in "${!files[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	one "$i" "${files[$i]}" &
done
wait

declare -A known=() seen=()
if [ -n "$KNOWN" ]; then
	while IFS= read -r line; do
		case $line in "#"*) ;; *" | "*) known[${line%% | *}]=${line#* | } ;; esac
	done <"$KNOWN"
fi
for i in "${!files[@]}"; do
	name=$(short "${files[$i]}")
	while IFS=$'\t' read -r state check detail; do
		key="$name: $check"
		seen[$key]=1
		if [ "$state" = ok ] && [ -n "${known[$key]:-}" ]; then
			ok "$key ($detail) # known.txt lists it, yet it passes: remove its line"
		elif [ "$state" = ok ]; then
			ok "$key ($detail)"
		elif [ -n "${known[$key]:-}" ]; then
			ok "$key # TODO known: ${known[$key]} ($detail)"
		else
			not_ok "$key" "$detail"
		fi
	done <"$TMP/$i.out"
done
for key in "${!known[@]}"; do
	[ -n "${seen[$key]:-}" ] || not_ok "known failures" "'$key' names no check of this run"
done
summary
