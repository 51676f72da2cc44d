#!/usr/bin/env bash
# The truth suite as a part of `make check`: tests/truth/run.py --tap, one
# ok / not ok / skip line per verdict and figure of tests/truth/cases.json,
# the doctored inputs on which checks must fail, and the summary line.
# GRADEML_BIN names the binary (build/grademl-tui).
#   bash tests/truth/run.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
if ! command -v python3 >/dev/null 2>&1; then
	echo "skip - truth suite (python3 is not installed; make deps installs it)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
exec python3 tests/truth/run.py --tap
