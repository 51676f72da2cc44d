#!/usr/bin/env python3
"""Writes a starved-DataLoader run and its fixed twin as two Kineto traces,
the pair that `grademl-tui diff` must read as one change in the steps'
median time (tests/e2e/diff_steps.sh).

    diff_pair.py A.json B.json

Both runs train the same model: each profiler step fetches a batch
(`enumerate(DataLoader)#..._DataLoaderIter.__next__`, a user annotation),
copies it to the device (aten::to > aten::_to_copy > aten::copy_ >
cudaMemcpyAsync, a host-to-device Memcpy on stream 7) and runs a linear
layer (aten::linear > aten::addmm > cudaLaunchKernel, a GEMM kernel).

  A  (starved)  a single-process DataLoader whose fetch takes 30-34 ms,
                pageable host memory (Memcpy HtoD (Pageable -> Device)),
                5 steps, the first one's aten::linear 40 ms longer (lazy
                initialisation: warm-up, not a cost of every step);
  B  (fixed)    a multi-process DataLoader whose fetch takes 1-2 ms, pinned
                host memory (Memcpy HtoD (Pinned -> Device)), 8 steps.

Durations are whole microseconds, jittered by a seeded generator, so the
file's figures are exact in ns.  The medians are not written anywhere:
diff_steps.sh computes them from these files.
"""
import json
import random
import sys

PID, TID, STREAM = 4242, 4242, 7


def run(single, steps, seed):
    rnd = random.Random(seed)
    ev = [{"name": "process_name", "ph": "M", "pid": PID, "tid": 0, "args": {"name": "python3"}},
          {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "python3"}}]
    ext = [1000]
    corr = [5000]

    def x(cat, name, ts, dur, pid=PID, tid=TID, **args):
        ext[0] += 1
        args.setdefault("External id", ext[0])
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
                   "dur": dur, "args": args})

    def launch(rt, dev_cat, dev_name, ts, rt_dur, dev_start, dev_dur):
        corr[0] += 1
        c = corr[0]
        x("cuda_runtime", rt, ts, rt_dur, correlation=c)
        x(dev_cat, dev_name, dev_start, dev_dur, pid=0, tid=STREAM, device=0, stream=STREAM,
          correlation=c)
        ev.append({"ph": "s", "id": c, "pid": PID, "tid": TID, "ts": ts, "cat": "ac2g",
                   "name": "ac2g"})
        ev.append({"ph": "f", "id": c, "pid": 0, "tid": STREAM, "ts": dev_start, "cat": "ac2g",
                   "name": "ac2g", "bp": "e"})

    it = ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" if single
          else "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")
    copy = "Memcpy HtoD (Pageable -> Device)" if single else "Memcpy HtoD (Pinned -> Device)"
    t = 1_000_000
    for k in range(steps):
        s0 = t
        t += 10
        fetch = rnd.randint(30_000, 34_000) if single else rnd.randint(1_000, 2_000)
        x("user_annotation", it, t, fetch)
        t += fetch + 5
        # aten::to > aten::_to_copy > aten::copy_ > cudaMemcpyAsync
        cp = rnd.randint(300, 400) if single else rnd.randint(40, 60)
        x("cpu_op", "aten::to", t, cp + 30)
        x("cpu_op", "aten::_to_copy", t + 5, cp + 20)
        x("cpu_op", "aten::copy_", t + 10, cp + 10)
        launch("cudaMemcpyAsync", "gpu_memcpy", copy, t + 12, cp, t + 20, cp - 20)
        t += cp + 40
        # aten::linear > aten::addmm > cudaLaunchKernel > gemm
        lin = rnd.randint(900, 1_100) + (40_000 if single and k == 0 else 0)
        x("cpu_op", "aten::linear", t, lin)
        x("cpu_op", "aten::addmm", t + lin - 200, 150)
        launch("cudaLaunchKernel", "kernel", "gemm_bf16_128x128", t + lin - 150, 20,
               t + lin - 120, 2_000)
        t += lin + 2_100
        x("user_annotation", "ProfilerStep#%d" % (k + 1), s0, t - s0)
        t += 20
    return {"schemaVersion": 1, "displayTimeUnit": "ms",
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],
            "baseTimeNanoseconds": 1790000000000000000, "traceEvents": ev}


def main(argv):
    for path, single, steps, seed in ((argv[0], True, 5, 28), (argv[1], False, 8, 29)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(run(single, steps, seed), f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
