# Test-line helpers shared by the end-to-end scripts (sourced, not run):
# ok NAME, not_ok NAME [WHY], skip NAME [WHY], regenerated, and summary,
# which prints "N passed, M failed[, K skipped][, R regenerated]" and
# returns non-zero when anything failed.
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
