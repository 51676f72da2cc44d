#!/usr/bin/env bash
# End-to-end tests of device work recognised by what a track is
# (grademl-tui(1) DESCRIPTION, importers/devtrack.c) on real traces, against
# the raw file read apart (tests/tools/device_work.py: json and gzip only):
#   - the JAX capture (XLA's /device:GPU:0 plane, no categories): `summary
#     kernels` has one row per name of its device work, each name's count
#     and total those of the raw file, as many events in all as the
#     samples' MANIFEST.md says its device holds; every one linked
#     to its launching call (no UNLINKED_DEVICE); the report sees the GPU:
#     its breakdown holds them all and its top issues an idle GPU; no
#     NO_DEVICE_WORK;
#   - the same capture with its metadata moved after its events (names
#     that come too late, as a TensorFlow-shaped file may have them): no
#     device work, and NO_DEVICE_WORK names /device:GPU:0's stream;
#   - HTA's benchmark trace of CUDA launches with no kernels recorded:
#     NO_DEVICE_WORK counts its threads of a device category; Kineto's TF
#     trace-viewer demo (no device at all) and HTA's NCCL trace (kernels):
#     none.
#
# Prints "ok - NAME", "not ok - NAME (why)" or "skip - NAME (why)", then
# "N passed, M failed[, K skipped]"; exits 1 when any check failed.
# Needs: bash, sqlite3 (the CLI), python3.  GRADEML_SAMPLES overrides
# ../shared/samples.
set -u

cd "$(dirname "$0")/../.." || exit 1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
e2e_init devtrack
SAMPLES=${GRADEML_SAMPLES:-$ROOT/../shared/samples}/chrome-trace
JAX=$SAMPLES/jax_perfetto_trace.json.gz
HTA=$SAMPLES/facebookresearch__HolisticTraceAnalysis__

e2e_need_bin
PY=$(python3 -c 'import sys; print(sys.executable or "python3")') || PY=python3

# diag DB CODE: the count and example of a diagnostic, "0" when absent.
diag() {
	sqlite3 -readonly -batch -noheader -separator ' ' "$1" \
		"SELECT coalesce(sum(count), 0) || ' ' || coalesce(max(example), '')
		 FROM diagnostics WHERE code = '$2'"
}

# import NAME TRACE: imports TRACE alone into $TMP/NAME.db; fails the check
# NAME when it cannot.
import() {
	if ! "$BIN" import -o "$TMP/$1.db" "$2" >/dev/null 2>"$TMP/err"; then
		not_ok "$1: import" "$(head -c 300 "$TMP/err")"
		return 1
	fi
}

if [ ! -r "$JAX" ]; then
	skip "jax" "$JAX is absent"
elif import jax "$JAX"; then
	# what the samples' manifest says the capture holds: "N device X"
	stated=$(sed -n 's/^| chrome-trace\/jax_perfetto_trace.json.gz .* \([0-9]*\) device X.*/\1/p' \
		"$SAMPLES/../MANIFEST.md" 2>/dev/null)
	"$BIN" summary "$TMP/jax.db" kernels --format json >"$TMP/kernels.json" 2>"$TMP/err" &&
		"$BIN" report --format json "$TMP/jax.db" >"$TMP/report.json" 2>>"$TMP/err"
	why=$(PYTHONPATH=tests/tools "$PY" - "$JAX" "$TMP/kernels.json" <<'PYEOF'
import json, sys
import device_work as dw
from hta_reference import us_to_ns
events, _ = dw.load(sys.argv[1])
tracks = dw.device_tracks(events)
ref = {}
for e in events:
    if isinstance(e, dict) and e.get("ph") == "X" and dw.is_device(e, tracks):
        n, t = ref.get(e["name"], (0, 0))
        ref[e["name"]] = (n + 1, t + us_to_ns(e.get("dur", 0)))
got = {r["name"]: (r["count"], r["total"]) for r in json.load(open(sys.argv[2]))}
why = []
if got != ref:
    why.append("summary kernels by name differs: %s" % sorted(
        set(got.items()) ^ set(ref.items()))[:3])
print("%d %s" % (sum(n for n, _ in ref.values()), "; ".join(why)))
PYEOF
	) || why="0 the reference failed"
	n=${why%% *}
	why=${why#* }
	if [ -s "$TMP/err" ]; then
		not_ok "jax: summary kernels" "$(head -c 300 "$TMP/err")"
	elif [ -n "$why" ] || [ "$n" != "$stated" ]; then
		not_ok "jax: summary kernels" "reference $n events; ${why:-MANIFEST.md says \"$stated\"}"
	else
		ok "jax: summary kernels has the raw file's $n device events, each name's count and total to the ns"
	fi
	unlinked=$(diag "$TMP/jax.db" UNLINKED_DEVICE)
	unlinked=${unlinked%% *}
	unrec=$(diag "$TMP/jax.db" NO_DEVICE_WORK)
	unrec=${unrec%% *}
	launched=$(sqlite3 -readonly "$TMP/jax.db" "SELECT count(*) FROM phases_v d JOIN phases_v l
		ON l.id = d.parent_id WHERE d.kind IN ('kernel', 'memcpy', 'memset')
		AND l.kind = 'runtime'")
	if [ "$unlinked" = 0 ] && [ "$unrec" = 0 ] && [ "$launched" = "$n" ]; then
		ok "jax: all $launched under the host call of their correlation_id; no diagnostic"
	else
		not_ok "jax: launches" "$launched of $n under a runtime call, UNLINKED_DEVICE $unlinked, NO_DEVICE_WORK $unrec"
	fi
	why=$("$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
g, n = r["gpu_breakdown"], int(sys.argv[2])
kinds = [i["kind"] for i in r["top_issues"]]
print("" if len(g) == 1 and g[0]["items"] == n and 0 < g[0]["idle_ns"] < g[0]["window_ns"]
      and "idle-gpu" in kinds else "breakdown %s, issues %s" % (
      [(x["items"], x["idle_ns"], x["window_ns"]) for x in g], kinds))' "$TMP/report.json" "$n")
	if [ -z "$why" ]; then
		ok "jax: the report's GPU breakdown holds the $n items and its top issues an idle GPU"
	else
		not_ok "jax: report" "$why"
	fi

	# the names after the events: too late to make the tracks a device's
	"$PY" - "$JAX" "$TMP/late.json" <<'PYEOF'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1], "rt"))
ev = doc["traceEvents"]
doc["traceEvents"] = [e for e in ev if e.get("ph") != "M"] + [e for e in ev if e.get("ph") == "M"]
json.dump(doc, open(sys.argv[2], "w"))
PYEOF
	if import late "$TMP/late.json"; then
		streams=$(sqlite3 -readonly "$TMP/late.db" "SELECT count(*) FROM tracks WHERE kind = 'stream'")
		got=$(diag "$TMP/late.db" NO_DEVICE_WORK)
		want=$(PYTHONPATH=tests/tools "$PY" -c 'import sys, device_work as dw
print(len(dw.device_tracks(dw.load(sys.argv[1])[0])))' "$TMP/late.json")
		case "$streams $got" in
		"0 $want pid 1 '/device:GPU:0' tid 14 'Stream #14(Compute)'")
			ok "names after their events: no device work, NO_DEVICE_WORK counts the $want streams the names make ($got)" ;;
		*) not_ok "names after their events" "streams $streams, NO_DEVICE_WORK '$got', $want streams named" ;;
		esac
		if "$BIN" report "$TMP/late.db" 2>/dev/null | grep -q 'NO_DEVICE_WORK'; then
			ok "names after their events: the report shows NO_DEVICE_WORK"
		else
			not_ok "names after their events" "the report does not show NO_DEVICE_WORK"
		fi
	fi
fi

# check_diag NAME TRACE: NO_DEVICE_WORK of TRACE imported alone counts the
# threads whose events are of a category that names a device when the
# raw file has no device work (none when it has), and its example says so.
check_diag() {
	if [ ! -r "$2" ]; then
		skip "$1" "$2 is absent"
		return
	fi
	import "$1" "$2" || return
	local got want
	got=$(diag "$TMP/$1.db" NO_DEVICE_WORK)
	want=$(PYTHONPATH=tests/tools "$PY" - "$2" <<'PYEOF'
import re, sys
import device_work as dw
events = [e for e in dw.load(sys.argv[1])[0] if isinstance(e, dict) and e.get("ph") == "X"]
named = re.compile(r"^(cuda|gpu_|hip_|xpu_|mtia_)|kernel|memcpy|memset", re.I)
tracks = dw.device_tracks(events)
if any(dw.is_device(e, tracks) for e in events):
    print(0)
else:
    print(len({(e.get("pid"), e.get("tid")) for e in events if named.search(str(e.get("cat", "")))}))
PYEOF
	)
	case "$want $got" in
	"0 0 " | "$want $want "*", a device category")
		ok "$1: NO_DEVICE_WORK '$got', as the raw file says ($want)" ;;
	*) not_ok "$1" "NO_DEVICE_WORK '$got', want $want threads" ;;
	esac
}

check_diag "hta launches without kernels" "${HTA}benchmark_result_924719_1679055439_trace.json.gz"
check_diag "tf trace viewer demo" "$SAMPLES/pytorch__kineto__tf_trace_viewer-trace.json"
check_diag "hta nccl (kernels)" "${HTA}nccl_data.json.gz"

summary
