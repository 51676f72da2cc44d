#!/usr/bin/env python3
"""One host's node_exporter series as OpenMetrics text, for backfilling a
Prometheus with `promtool tsdb create-blocks-from openmetrics`
(tests/bench/promlive.sh): a 64-core machine with 4 disks and 4 network
links, scraped every second for an hour, the series a live pull reads
(node_cpu_seconds_total for 8 modes per core, memory total and available,
disk busy time and bytes, network bytes and speed, node_uname_info).  The
counters grow as a busy machine's would: the modes of a core share each
second, disks and links move a varying load.  Deterministic (a fixed seed).

Usage: make_node_openmetrics.py --start EPOCH_S --seconds N --host NAME -o FILE
"""
import argparse
import random

MODES = ["idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user"]
CORES, DISKS, LINKS = 64, 4, 4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--seconds", type=int, default=3600)
    ap.add_argument("--host", default="benchhost")
    ap.add_argument("-o", dest="out", required=True)
    a = ap.parse_args()
    rnd = random.Random(19)
    inst = 'instance="%s:9100",job="node"' % a.host
    times = [a.start + i for i in range(a.seconds)]
    with open(a.out, "w") as f:
        w = f.write
        # a core's busy share drifts; its modes split each second
        rows = {m: [] for m in MODES}
        for c in range(CORES):
            tot = {m: rnd.uniform(1e4, 1e5) for m in MODES}
            busy = rnd.random()
            lines = {m: [] for m in MODES}
            for t in times:
                busy = min(1.0, max(0.0, busy + rnd.uniform(-0.05, 0.05)))
                tot["user"] += busy * 0.8
                tot["system"] += busy * 0.15
                tot["softirq"] += busy * 0.05
                tot["iowait"] += (1 - busy) * 0.05
                tot["idle"] += (1 - busy) * 0.95
                for m in MODES:
                    lines[m].append('node_cpu_seconds_total{cpu="%d",mode="%s",%s} %.2f %d\n'
                                    % (c, m, inst, tot[m], t))
            for m in MODES:
                rows[m].append("".join(lines[m]))
        for m in MODES:
            w("".join(rows[m]))
        total = 256 * 2**30
        avail = total * 0.6
        for t in times:
            w("node_memory_MemTotal_bytes{%s} %d %d\n" % (inst, total, t))
        for t in times:
            avail = min(total, max(0, avail + rnd.uniform(-2**28, 2**28)))
            w("node_memory_MemAvailable_bytes{%s} %d %d\n" % (inst, avail, t))
        for name, step in (("node_disk_io_time_seconds_total", 1.0),
                           ("node_disk_read_bytes_total", 4e8),
                           ("node_disk_written_bytes_total", 2e8)):
            for d in range(DISKS):
                v = rnd.uniform(0, 1e6) * step
                for t in times:
                    v += rnd.random() * step
                    w('%s{device="nvme%dn1",%s} %.3f %d\n' % (name, d, inst, v, t))
        for name in ("node_network_receive_bytes_total", "node_network_transmit_bytes_total"):
            for l in range(LINKS):
                v = rnd.uniform(0, 1e12)
                for t in times:
                    v += rnd.random() * 1.25e9
                    w('%s{device="eth%d",%s} %d %d\n' % (name, l, inst, v, t))
        for l in range(LINKS):
            for t in times:
                w('node_network_speed_bytes{device="eth%d",%s} 1250000000 %d\n' % (l, inst, t))
        for t in times:
            w('node_uname_info{nodename="%s",sysname="Linux",%s} 1 %d\n' % (a.host, inst, t))
        w("# EOF\n")


if __name__ == "__main__":
    main()
