#!/usr/bin/env bash
# Promises the tree keeps about itself, checked from its files:
#   a. no tracked file names an absolute path of one machine (/work/...,
#      /home/...): tests find the samples as ../shared/samples;
#   b. a unit test that skips says why (skip_because in tests/skip.h,
#      never a bare cmocka skip());
#   c. every tool the scripts of `make check` call is in a package that
#      `make deps` installs for it (or in Debian's essential set);
#   d. model/'s rooms include one way: util/ knows no room, store/ only
#      util/, ingest/ and view/ only those two (and not each other),
#      analysis/ any room below it; a file of model/ lives in a room;
#   e. every read of a column of trace.db goes through model/store/col.h,
#      whose readers check the value's type (a hostile file may hold
#      anything anywhere): no sqlite3_column_text, _int, _int64, _double,
#      _bytes or _blob outside col.c in the program's sources.
# Prints "ok"/"not ok" lines, then "N passed, M failed".
#
#   bash tests/tree.sh     (needs git for a.; skipped outside a checkout)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. tests/e2e/tap.sh

# ---- a. no machine paths ----
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --git-dir >/dev/null 2>&1; then
	skip "no absolute machine path in a tracked file" "not a git checkout"
else
	hits=$(git grep -n -I -E "(^|[[:space:]=(:]|[[:space:]=(:][\"'])/(work|home|root|Users)/" -- . ':!tests/tree.sh')
	if [ -z "$hits" ]; then
		ok "no absolute machine path in a tracked file"
	else
		not_ok "no absolute machine path in a tracked file" "$(head -n 3 <<<"$hits" | tr '\n' '|')"
	fi
fi

# ---- b. every skip says why ----
hits=$(grep -n -E '(^|[^_[:alnum:]])skip\(\)' tests/*.c)
if [ -z "$hits" ]; then
	ok "every skipped unit test says why (skip_because)"
else
	not_ok "every skipped unit test says why (skip_because)" "$(head -n 3 <<<"$hits" | tr '\n' '|')"
fi

# ---- c. the tools of make check are installed by make deps ----
# TOOL-PATTERN (extended regex, on lines that are not comments) and the
# package that holds it.
debs=" $(make -s --no-print-directory deps-list LIST=CHECK 2>/dev/null) "
scripts="Makefile tests/run-all.sh tests/fuzz/run.sh tests/data/demo/import.sh tests/truth/run.sh $(ls tests/e2e/*.sh)"
while read -r pkg pattern; do
	used=$(grep -n -E -e "$pattern" $scripts | grep -v -E '^[^:]*:[0-9]+:[[:space:]]*#' | head -n 1)
	if [ -z "$used" ]; then
		continue
	elif [ "$debs" = "  " ]; then
		not_ok "$pkg is installed by make deps" "make deps-list printed nothing"
	elif [[ $debs == *" "$pkg" "* ]]; then
		ok "$pkg is installed by make deps (${used%%:*} calls it)"
	else
		not_ok "$pkg is installed by make deps" "${used%:*} calls it: ${used#*:*:}"
	fi
done <<'EOF'
procps (^|[;&|({]|\$\()[[:space:]]*(ps|pgrep|pkill|pidof|free|vmstat|watch)[[:space:]]
tmux (^|[;&|({]|\$\()[[:space:]]*tmux[[:space:]]
python3 (^|[^-_./[:alnum:]])python3([[:space:]]|$)
sqlite3 (^|[;&|({]|\$\()[[:space:]]*sqlite3[[:space:]]
zstd (^|[;&|({]|\$\()[[:space:]]*(zstd|unzstd|zstdcat)[[:space:]]
time /usr/bin/time
bsdextrautils (^|[;&|({]|\$\()[[:space:]]*(column|hexdump|look|ul|col)[[:space:]]
xxd (^|[;&|({]|\$\()[[:space:]]*xxd[[:space:]]
file (^|[;&|({]|\$\()[[:space:]]*file[[:space:]]+-
jq (^|[;&|({]|\$\()[[:space:]]*jq[[:space:]]
clang ^FUZZ_CC[[:space:]]*\?=[[:space:]]*clang
prometheus (^|[[:space:];&|({])prometheus[[:space:]]+--
prometheus-node-exporter (^|[[:space:];&|({])prometheus-node-exporter[[:space:]]+--
sysstat (^|[[:space:];&|({])sadf[[:space:]]+-|/usr/lib/sysstat/sadc
libclang-rt-*-dev -fsanitize=fuzzer
EOF

# ---- d. model/'s rooms include one way ----
# room rank: a file may include a room of a lower rank, or its own
rank() {
	case $1 in
	util) echo 0 ;;
	store) echo 1 ;;
	ingest | view) echo 2 ;;
	analysis) echo 3 ;;
	*) echo x ;;
	esac
}
back=""
for f in model/*; do
	[ -d "$f" ] || back+="$f is in no room|"
done
for f in model/*/*.[ch]; do
	from=${f#model/}
	from=${from%%/*}
	rf=$(rank "$from")
	[ "$rf" != x ] || { back+="$f: model/$from/ is not a room|"; continue; }
	while read -r inc; do
		to=${inc#model/}
		to=${to%%/*}
		rt=$(rank "$to")
		if [ "$rt" = x ] || { [ "$to" != "$from" ] && [ "$rt" -ge "$rf" ]; }; then
			back+="$f includes $inc|"
		fi
	done < <(sed -n 's/^#include "\(model\/[^"]*\)".*/\1/p' "$f")
done
if [ -z "$back" ]; then
	ok "model/'s rooms include one way (analysis -> view -> store -> util, ingest -> store)"
else
	not_ok "model/'s rooms include one way" "$back"
fi

# ---- e. columns are read through col.h ----
hits=$(grep -n -E 'sqlite3_column_(text|int|int64|double|bytes|blob)[[:space:]]*\(' \
	model/*/*.c tui/*.c query/*.c importers/*.c | grep -v '^model/store/col\.c:')
if [ -z "$hits" ]; then
	ok "every column of trace.db is read through model/store/col.h"
else
	not_ok "every column of trace.db is read through model/store/col.h" "$(head -n 3 <<<"$hits" | tr '\n' '|')"
fi

summary
