#!/usr/bin/env python3
"""A misbehaving Prometheus for tests/e2e/prometheus_live.sh and
tests/e2e/prometheus_hostile.sh.

Listens on 127.0.0.1 (a free port, written to PORT_FILE once bound) and
answers by the first part of the path, the rest being the API path the
client asked for:

  /slow/...        sleeps 30 s, then 503
  /e404/...        404 with a text body
  /e503/...        503 with a Prometheus error body, every time
  /flaky/...       503 to the first two requests, then as /pass
  /auth/...        401 unless "Authorization: Bearer $STUB_TOKEN", then as /pass
  /pass/...        the request forwarded to UPSTREAM (the real Prometheus)
  /gpu/...         a Prometheus of one host, "gpunode", with two GPUs under
                   DCGM's exporter (instance 10.0.0.9:9400, Hostname label
                   gpunode) and two under nvidia_gpu_exporter (gpunode:9835,
                   uuids GPU-bbb and GPU-ccc, nvidia_smi_index 1 and 0),
                   scraped every second: a series reads 20 + its DCGM
                   gpu, or 11 (GPU-bbb) and 10 (GPU-ccc); capacities
                   are FB 81920 MiB, memory 40960 MiB, power limit 300 W,
                   top clocks 1980 and 1593 MHz
  /node.N/...      a node_exporter of one host, "stubnode" (instance
                   stubnode:9100), scraped every second: every series
                   reads 50 over the window asked for, but the per-CPU
                   query, which yields N CPUs (cpu 0 .. N-1): the answer
                   is written as it is made, so N may be 10**6
  /biglabel.L/...  as /node.1, but the disk queries' series name a device
                   of L bytes, and any query not about node_exporter
                   (a --promql) yields a series with a label "big" of L
                   bytes
  /instances.N/... as /node.1, but N instances (stub0:9100 ...) run
                   node_exporter
  /trickle.S/...   200, then one blank byte of body every S seconds, for
                   ever (until the client hangs up)

Every request's method, path and Authorization header go to LOG_FILE, one
line each.  Usage: prom_stub.py PORT_FILE LOG_FILE UPSTREAM
"""
import http.server
import os
import sys
import threading
import time
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from itertools import count

PORT_FILE, LOG_FILE, UPSTREAM = sys.argv[1:4]
lock = threading.Lock()
flaky_left = [2]


class Stub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, ctype="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, parts):
        """200 and the parts of a body as they are made, to the end of the
        connection (no length known beforehand)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for part in parts:
                self.wfile.write(part.encode())
        except OSError:  # the client gave up: what it was sent is enough
            pass

    def trickle(self, every):
        """200 and a blank byte every `every` seconds, until the client
        hangs up (the body is written unbuffered)."""
        def blanks():
            while True:
                yield " "
                time.sleep(every)
        self.stream(blanks())

    def forward(self, rest, body):
        req = urllib.request.Request(UPSTREAM + rest, data=body, method=self.command)
        if body is not None:
            req.add_header("Content-Type", self.headers.get("Content-Type", ""))
        try:
            with urllib.request.urlopen(req, timeout=20) as r:
                self.answer(r.status, r.read().decode())
        except urllib.error.HTTPError as e:
            self.answer(e.code, e.read().decode())

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        auth = self.headers.get("Authorization", "-")
        with lock, open(LOG_FILE, "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path, auth))
        mode, _, rest = self.path[1:].partition("/")
        rest = "/" + rest
        mode, _, arg = mode.partition(".")
        if mode in ("node", "biglabel", "instances"):
            self.stream(node_answer(mode, int(arg), rest, body))
        elif mode == "trickle":
            self.trickle(float(arg))
        elif mode == "gpu":
            self.answer(200, json.dumps(gpu_answer(rest, body)))
        elif mode == "slow":
            time.sleep(30)
            self.answer(503, "{}")
        elif mode == "e404":
            self.answer(404, "no such page\nsecond line", "text/plain")
        elif mode == "e503":
            self.answer(503, '{"status":"error","errorType":"unavailable",'
                             '"error":"stub says no"}')
        elif mode == "flaky":
            with lock:
                fail = flaky_left[0] > 0
                flaky_left[0] -= 1
            if fail:
                self.answer(503, '{"status":"error","errorType":"unavailable",'
                                 '"error":"warming up"}')
            else:
                self.forward(rest, body)
        elif mode == "auth":
            if auth != "Bearer " + os.environ["STUB_TOKEN"]:
                self.answer(401, '{"status":"error","errorType":"unauthorized",'
                                 '"error":"bad token"}')
            else:
                self.forward(rest, body)
        else:
            self.forward(rest, body)

    do_GET = do_POST = handle_any


DCGM = {"instance": "10.0.0.9:9400", "job": "dcgm", "Hostname": "gpunode"}
NVSMI = {"instance": "gpunode:9835", "job": "nvsmi"}
CAPS = [("nvidia_smi_index", None), ("DCGM_FI_DEV_FB", "81920"),
        ("memory_total", "40960"), ("power_limit", "300"),
        ("max_graphics", "1980"), ("max_memory", "1593")]


def gpu_series(query):
    """The label sets a query over the GPUs yields."""
    if "DCGM" in query:
        return [dict(DCGM, gpu=g) for g in ("0", "1")]
    if "nvidia_smi" in query:
        return [dict(NVSMI, uuid=u) for u in ("GPU-bbb", "GPU-ccc")]
    return []


def value_of(m):
    """What a series reads: 20 + its DCGM gpu, or 11 for GPU-bbb, 10 for GPU-ccc."""
    return str(20 + int(m["gpu"])) if "gpu" in m else "11" if m["uuid"] == "GPU-bbb" else "10"


def gpu_answer(path, body):
    form = {k: v[0] for k, v in urllib.parse.parse_qs((body or b"").decode()).items()}
    q = form.get("query", "")
    if path == "/api/v1/series":
        data = [dict(DCGM, __name__="DCGM_FI_DEV_GPU_UTIL", gpu=g) for g in ("0", "1")]
        data += [dict(NVSMI, __name__="nvidia_smi_utilization_gpu_ratio", uuid=u)
                 for u in ("GPU-bbb", "GPU-ccc")]
        return {"status": "success", "data": data}
    if path == "/api/v1/query" and re.search(r"\[\d+s\]$", q):  # raw samples: the scrape interval
        t = float(form["time"])
        s = gpu_series(q)[0]
        return {"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": dict(s, __name__="x"), "values": [[t - k, "42"] for k in (3, 2, 1, 0)]}]}}
    if path == "/api/v1/query":
        t = float(form["time"])
        for key, value in CAPS:
            if key in q:
                res = [{"metric": m, "value": [t, value or ("1" if m["uuid"] == "GPU-bbb" else "0")]}
                       for m in gpu_series(q)]
                return {"status": "success", "data": {"resultType": "vector", "result": res}}
        return {"status": "success", "data": {"resultType": "vector", "result": []}}
    a, b, step = float(form["start"]), float(form["end"]), float(form["step"])
    n = int((b - a) / step + 1e-9) + 1
    res = [{"metric": m, "values": [[round(a + i * step, 3), value_of(m)] for i in range(n)]}
           for m in gpu_series(q)]
    return {"status": "success", "data": {"resultType": "matrix", "result": res}}


NODE = {"instance": "stubnode:9100", "job": "node"}


def node_answer(mode, arg, path, body):
    """The parts of /node.N's, /biglabel.L's and /instances.N's answers."""
    form = {k: v[0] for k, v in urllib.parse.parse_qs((body or b"").decode()).items()}
    q = form.get("query", "")
    if path == "/api/v1/series" and mode == "instances":
        yield '{"status":"success","data":['
        for i in range(arg):
            yield '%s{"__name__":"node_memory_MemTotal_bytes","instance":"stub%d:9100"}' % (
                "," if i else "", i)
        yield "]}"
        return
    if path == "/api/v1/series":
        yield json.dumps({"status": "success",
                          "data": [dict(NODE, __name__="node_memory_MemTotal_bytes")]})
        return
    if path == "/api/v1/query" and re.search(r"\[\d+s\]$", q):  # the scrape interval
        t = float(form["time"])
        yield json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": dict(NODE, __name__="x"), "values": [[t - k, "1"] for k in (3, 2, 1, 0)]}]}})
        return
    if path == "/api/v1/query":
        yield json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}})
        return
    a, b, step = float(form["start"]), float(form["end"]), float(form["step"])
    points = json.dumps([[round(a + i * step, 3), "50"]
                         for i in range(int((b - a) / step + 1e-9) + 1)])
    if mode == "node" and 'idle",' in q and " by " not in q:  # per CPU
        labels = (dict(NODE, cpu=str(i)) for i in range(arg))
    elif mode == "biglabel" and "node_disk_io_time" in q:
        labels = [dict(NODE, device="d" * arg)]
    elif mode == "biglabel" and "node_" not in q:
        labels = [dict(NODE, big="b" * arg)]
    else:
        labels = [dict(NODE)]
    yield '{"status":"success","data":{"resultType":"matrix","result":['
    for i, m in zip(count(), labels):
        yield '%s{"metric":%s,"values":%s}' % ("," if i else "", json.dumps(m), points)
    yield "]}}"


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
