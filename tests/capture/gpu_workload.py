#!/usr/bin/env python3
"""Small, real GPU workflow for grademl-tui test data (needs CUDA).

Four steps, one after the other, each recorded in OUT_DIR/workflow.jsonl:
  prep   - CPU only: builds a token data set with numpy-free torch ops
           (no trace; the manifest window and nvidia-smi show it)
  train  - a small decoder-only transformer, bf16 autocast, AdamW, data
           copied from pinned host memory each step; PREP_ITERS unprofiled
           steps, then schedule(wait=1, warmup=1, active=3) so the trace
           holds ProfilerStep#N with CPU ops, kernels, memcpys and flows
  eval   - the same model under torch.no_grad(), same profiler settings
  ddp    - two ranks on the one GPU (gloo; NCCL refuses two ranks on one
           device), DistributedDataParallel, one trace per rank with
           distributedInfo; rank 1 gets a longer sequence so the ranks
           differ as real stragglers do
Usage: gpu_workload.py OUT_DIR
"""
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

ITERS = int(os.environ.get("ITERS", "60"))
BATCH, SEQ, VOCAB, DIM, LAYERS = 16, 256, 8192, 512, 4


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        layer = nn.TransformerEncoderLayer(DIM, 8, 4 * DIM, batch_first=True,
                                           norm_first=True)
        self.body = nn.TransformerEncoder(layer, LAYERS)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, x):
        n = x.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf"), device=x.device), 1)
        return self.head(self.body(self.emb(x), mask=mask, is_causal=True))


def profiler(path, info):
    def on_ready(p):
        p.export_chrome_trace(path)
        info["trace"] = os.path.basename(path) + ".gz"

    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                   on_trace_ready=on_ready, record_shapes=True)


def batches(n, seq=SEQ):
    """Pinned host batches, so each step's copy is a real H2D memcpy."""
    g = torch.Generator().manual_seed(n)
    return [torch.randint(0, VOCAB, (BATCH, seq + 1), generator=g).pin_memory()
            for _ in range(n)]


def prep(out, info):
    # tokenise-like CPU work: hash random "documents" into the vocabulary
    docs = torch.randint(0, 1 << 30, (4000, 2048))
    for _ in range(6):
        docs = (docs * 1103515245 + 12345) % (1 << 31)
    tokens = docs % VOCAB
    info["tokens"] = int(tokens.numel())
    return int(tokens[0, 0])


def train_loop(model, data, prof, dev):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loss_fn = nn.CrossEntropyLoss()
    for i, b in enumerate(data):
        b = b.to(dev, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(b[:, :-1])
            loss = loss_fn(logits.reshape(-1, VOCAB).float(), b[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if prof is not None and i >= len(data) - 6:
            prof.step()
    torch.cuda.synchronize()
    return float(loss)


def train(out, info):
    model = TinyGPT().cuda()
    data = batches(ITERS)
    train_loop(model, data[:-6], None, "cuda")  # unprofiled bulk of the run
    with profiler(os.path.join(out, "train.pt.trace.json"), info) as prof:
        loss = train_loop(model, data[-6:], prof, "cuda")
    torch.save(model.state_dict(), os.path.join(out, "model.pt"))
    return loss


def evaluate(out, info):
    model = TinyGPT().cuda()
    model.load_state_dict(torch.load(os.path.join(out, "model.pt")))
    model.eval()
    data = batches(ITERS // 2)
    correct = 0
    with torch.no_grad(), profiler(os.path.join(out, "eval.pt.trace.json"), info) as prof:
        for i, b in enumerate(data):
            b = b.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                pred = model(b[:, :-1]).argmax(-1)
            correct += int((pred == b[:, 1:]).sum())
            if i >= len(data) - 6:
                prof.step()
    os.unlink(os.path.join(out, "model.pt"))
    return correct


def ddp_rank(rank, world, out, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(TinyGPT().cuda())
    # rank 1 reads longer sequences: a straggler the others wait for in
    # the gradient all-reduce
    data = batches(ITERS // 3, SEQ if rank == 0 else SEQ + SEQ // 2)
    info = {}
    train_loop(model, data[:-6], None, "cuda")
    with profiler(os.path.join(out, "ddp_rank%d.pt.trace.json" % rank), info) as prof:
        train_loop(model, data[-6:], prof, "cuda")
    dist.destroy_process_group()


def ddp(out, info):
    port = 29500 + os.getpid() % 1000
    mp.spawn(ddp_rank, args=(2, out, port), nprocs=2, join=True)
    info["traces"] = ["ddp_rank0.pt.trace.json.gz", "ddp_rank1.pt.trace.json.gz"]
    return 2


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gpu_workload.py OUT_DIR")
    if not torch.cuda.is_available():
        sys.exit("gpu_workload.py: no CUDA device")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    host = socket.gethostname()
    manifest = []
    prev = None
    for name, fn in (("prep", prep), ("train", train), ("eval", evaluate), ("ddp", ddp)):
        info = {}
        start = time.time_ns()
        try:
            result = fn(out, info)
        except Exception as e:  # keep what the other steps captured
            print(f"# {name}: failed: {e!r}", file=sys.stderr)
            continue
        end = time.time_ns()
        rec = {"step": name, "start_ns": start, "end_ns": end, "host": host,
               "gpu": 0}
        if prev:
            rec["depends_on"] = [prev]
        rec.update(info)
        manifest.append(rec)
        prev = name
        print(json.dumps(rec), flush=True)
        print(f"# {name}: result={result} {(end - start) / 1e9:.2f}s", file=sys.stderr)
        time.sleep(1)
    with open(os.path.join(out, "workflow.jsonl"), "w") as f:
        for rec in manifest:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
