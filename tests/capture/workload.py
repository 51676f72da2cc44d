#!/usr/bin/python3
"""Small, real CPU workload for grademl-tui demo data.

Runs two profiled phases of one small CNN on random data:
  train  - DataLoader + forward + backward + SGD step, profiled with
           schedule(wait=1, warmup=1, active=3) so ProfilerStep#N appears
  infer  - the same model under torch.no_grad(), same schedule
Between the phases it sleeps PAUSE_S so the two show as distinct steps.

Usage: workload.py OUT_DIR
Writes OUT_DIR/train.pt.trace.json, OUT_DIR/infer.pt.trace.json and
OUT_DIR/workflow.jsonl (one JSON object per phase: step, start_ns, end_ns,
host, pid, trace, trace_start_us). The manifest lines are printed to stdout
as well. TRAIN_ITERS, INFER_ITERS and PAUSE_S in the environment override
the defaults.
"""
import json
import os
import socket
import sys
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule
from torch.utils.data import DataLoader, TensorDataset

TRAIN_ITERS = int(os.environ.get("TRAIN_ITERS", "600"))
INFER_ITERS = int(os.environ.get("INFER_ITERS", "400"))
PAUSE_S = float(os.environ.get("PAUSE_S", "2"))
BATCH = 64


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 7 * 7, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        return self.head(self.features(x))


def make_loader(n_batches, shuffle):
    x = torch.randn(n_batches * BATCH, 1, 28, 28)
    y = torch.randint(0, 10, (n_batches * BATCH,))
    # one worker process so the trace carries the multiprocessing iterator
    return DataLoader(TensorDataset(x, y), batch_size=BATCH, shuffle=shuffle,
                      num_workers=1, drop_last=True)


def profiler(trace_path, info):
    def on_ready(p):
        p.export_chrome_trace(trace_path)
        # Without Kineto (Debian's build) the export is the legacy
        # EventList format whose "ts" is relative to the trace start; keep
        # that start (absolute epoch microseconds) so the trace can be
        # placed on the wall clock.
        info["trace"] = os.path.basename(trace_path) + ".gz"
        info["trace_start_us"] = int(p.profiler.kineto_results.trace_start_us())

    return profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=on_ready,
        record_shapes=True,
    )


def train(model, out_dir, info):
    loader = make_loader(TRAIN_ITERS, shuffle=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    with profiler(os.path.join(out_dir, "train.pt.trace.json"), info) as prof:
        for x, y in loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    return float(loss)


def infer(model, out_dir, info):
    loader = make_loader(INFER_ITERS, shuffle=False)
    model.eval()
    correct = 0
    with torch.no_grad():
        with profiler(os.path.join(out_dir, "infer.pt.trace.json"), info) as prof:
            for x, y in loader:
                correct += int((model(x).argmax(1) == y).sum())
                prof.step()
    return correct


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: workload.py OUT_DIR")
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    host = socket.gethostname()
    model = SmallCNN()
    manifest = []

    def run_step(name, fn):
        info = {}
        start = time.time_ns()
        result = fn(model, out_dir, info)
        end = time.time_ns()
        rec = {"step": name, "start_ns": start, "end_ns": end,
               "host": host, "pid": os.getpid()}
        rec.update(info)
        manifest.append(rec)
        print(json.dumps(rec), flush=True)
        print(f"# {name}: result={result} {(end - start) / 1e9:.2f}s",
              file=sys.stderr)

    run_step("train", train)
    time.sleep(PAUSE_S)
    run_step("infer", infer)

    with open(os.path.join(out_dir, "workflow.jsonl"), "w") as f:
        for rec in manifest:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
