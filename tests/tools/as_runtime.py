#!/usr/bin/env python3
"""A CUDA Kineto trace rewritten as another device runtime would have
written it, so that one workload with a known answer (tests/truth/gpu)
checks what the tool says of other accelerators (json and gzip only).

Usage: as_runtime.py TRACE rocm|mtia OUT

rocm: the host calls as HIP names them (cudaLaunchKernel becomes
      hipLaunchKernel, cuLaunchKernelEx hipModuleLaunchKernel); Kineto
      under ROCm keeps the cuda_runtime category (HTA's MI250 sample does),
      and the CUDA version fields become ROCm's.
mtia: the host calls in mtia_runtime (named as MTIA's runtime does:
      "enqueueCommand NAME", "synchronize"), the device work in
      mtia_ccp_events on the device's process, as HTA's MTIA sample has
      them; the CUDA version fields go.

Everything else (times, pids, tids, correlation ids, flows) is kept, so
the idle gaps and their causes are the CUDA trace's.  OUT is written
plain, or gzip'd when it ends in .gz.
"""
import gzip
import json
import sys

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
HOST_CATS = {"cuda_runtime", "cuda_driver"}


def hip_name(name):
    if name.startswith("cuLaunchKernel"):
        return "hipModuleLaunchKernel"
    if name.startswith("cuda"):
        return "hip" + name[4:]
    if name.startswith("cu"):
        return "hip" + name[2:]
    return name


def mtia_name(name):
    base = name[4:] if name.startswith("cuda") else name[2:] if name.startswith("cu") else name
    return "synchronize" if "Synchronize" in base else "enqueueCommand " + base


def rewrite(doc, runtime):
    for k in ("cuda_driver_version", "cuda_runtime_version", "cupti_version"):
        doc.pop(k, None)
    if runtime == "rocm":
        doc["roctracer_version"] = 4
    for e in doc["traceEvents"]:
        if not isinstance(e, dict):
            continue
        cat = str(e.get("cat", ""))
        if cat in HOST_CATS:
            if runtime == "rocm":
                e["cat"] = "cuda_runtime"
                e["name"] = hip_name(e["name"])
            else:
                e["cat"] = "mtia_runtime"
                e["name"] = mtia_name(e["name"])
        elif cat in DEVICE_CATS and runtime == "mtia":
            e["cat"] = "mtia_ccp_events"
    return doc


def main(argv):
    if len(argv) != 3 or argv[1] not in ("rocm", "mtia"):
        sys.stderr.write(__doc__)
        return 2
    src, runtime, out = argv
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt", encoding="utf-8") as fh:
        doc = json.load(fh)
    doc = rewrite(doc, runtime)
    opener = gzip.open if out.endswith(".gz") else open
    with opener(out, "wt", encoding="utf-8") as fh:
        json.dump(doc, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
