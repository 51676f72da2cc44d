# Test-line helpers shared by the end-to-end scripts (sourced, not run):
# e2e_init NAME, e2e_need_bin, e2e_need_tools TOOL..., e2e_home, ok NAME,
# not_ok NAME [WHY], skip NAME [WHY], regenerated, relay WHO, json FILE
# EXPR, e2e_keys NAME SIZE DB KEY..., and summary, which prints "N passed,
# M failed[, K skipped][, R regenerated]" and returns non-zero when
# anything failed.
pass=0 fail=0 skipped=0 regen=0
ok() {
	pass=$((pass + 1))
	echo "ok - $1"
}
not_ok() {
	fail=$((fail + 1))
	echo "not ok - $1${2:+ ($2)}"
}
skip() {
	skipped=$((skipped + 1))
	echo "skip - $1${2:+ ($2)}"
}
regenerated() {
	regen=$((regen + 1))
}
summary() {
	local line="$pass passed, $fail failed"
	[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
	[ "$regen" -gt 0 ] && line="$line, $regen regenerated"
	echo "$line"
	[ "$fail" -eq 0 ]
}
# relay WHO: counts each "ok - NAME" / "not ok - NAME (why)" line read from
# stdin (a checker's; run as: relay WHO < <(checker ...)), any other line a
# failure "WHO said LINE".
relay() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) not_ok "$1 said" "$line" ;;
		esac
	done
}
# json FILE EXPR: prints a Python expression over the JSON document d in
# FILE.
json() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# e2e_keys NAME SIZE DB KEY...: the explorer on DB headless at SIZE (WxH),
# one key line each KEY ("type TEXT", "dump", ...), its dumps into
# TMP/NAME.txt; 0 when it ran, else a failed line.
e2e_keys() {
	local name=$1 size=$2 db=$3
	shift 3
	printf '%s\n' "$@" >"$TMP/$name.keys"
	"$BIN" --keys "$TMP/$name.keys" --dump "$TMP/$name.txt" --size "$size" "$db" \
		2>"$TMP/$name.err" || {
		not_ok "$name: the explorer ran" "$(head -c 300 "$TMP/$name.err")"
		return 1
	}
}
# e2e_need_bin: one failed line and exit 1 unless BIN is an executable.
e2e_need_bin() {
	[ -x "$BIN" ] && return 0
	not_ok "binary" "$BIN is not an executable; set GRADEML_BIN or run make"
	summary
	exit 1
}
# e2e_need_tools TOOL...: one failed line and exit 1 unless every TOOL is
# on PATH.
e2e_need_tools() {
	local tool
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			not_ok "tool $tool" "not installed"
			summary
			exit 1
		fi
	done
}
# e2e_home: HOME and XDG_STATE_HOME inside TMP (the prompt's history stays
# out of the real home), and a UTF-8 locale.
e2e_home() {
	export HOME=$TMP/home XDG_STATE_HOME=$TMP/state LC_ALL=C.UTF-8
	mkdir -p "$HOME"
}
# e2e_init NAME, in the repository root: ROOT, BIN (GRADEML_BIN made
# absolute, build/grademl-tui by default) and TMP, the script's own
# directory, removed at exit (a script with more to clean sets its own
# trap after).
e2e_init() {
	ROOT=$PWD
	BIN=${GRADEML_BIN:-build/grademl-tui}
	case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/grademl-$1.XXXXXX") || exit 1
	trap 'rm -rf "$TMP"' EXIT
}
