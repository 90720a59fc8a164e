#!/usr/bin/env python3
"""A userspace stand-in for netem between two network namespaces.

This kernel has no sch_netem, so the WAN harness (scripts/wan-link.sh)
carries the path itself: two TUN devices, one moved into each namespace;
every IP packet one side routes into its TUN is read here and written to the
other side's TUN after the path's treatment, in each direction on its own:

- a bottleneck of RATE bits per second (packets queue behind each other;
  past QUEUE_S of queue a packet is dropped, as a router's buffer would),
- independent loss of LOSS of the packets (fragments of one datagram are
  lost independently: an IP-fragmented datagram needs all of them),
- a one-way delay of DELAY_MS plus a uniform jitter of +-JITTER_MS, each
  packet on its own (so jitter alone reorders, as netem's does),
- REORDER of the packets sent at once instead of after the delay (netem's
  `reorder`: they overtake the ones in flight),
- and an outage: while the file named by --outage-file exists, every
  packet is dropped (the harness creates it to cut the link).

Needs root (TUN, ip). Usage (the harness runs it):

    impair.py --a tunA --b tunB --delay-ms 150 --jitter-ms 10 --loss 0.05 \\
              --reorder 0.10 --rate-mbit 20 --seed 1 [--outage-file F]

It prints one line of counts per direction when it ends (SIGTERM).
"""

import argparse
import fcntl
import heapq
import os
import random
import select
import signal
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
QUEUE_S = 0.25  # most queueing delay the bottleneck holds


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


class Direction:
    def __init__(self, name, out_fd, args, rng):
        self.name, self.out, self.a, self.rng = name, out_fd, args, rng
        self.free_at = 0.0  # when the bottleneck is next free
        self.counts = {"in": 0, "lost": 0, "queue_full": 0, "outage": 0, "reordered": 0, "out": 0}

    def due(self, now, size):
        """When a packet read now leaves, or None when it is dropped."""
        a, c = self.a, self.counts
        c["in"] += 1
        if a.outage_file and os.path.exists(a.outage_file):
            c["outage"] += 1
            return None
        if self.rng.random() < a.loss:
            c["lost"] += 1
            return None
        start = max(now, self.free_at)
        if start - now > QUEUE_S:
            c["queue_full"] += 1
            return None
        self.free_at = start + (size * 8 / (a.rate_mbit * 1e6) if a.rate_mbit > 0 else 0.0)
        if self.rng.random() < a.reorder:
            c["reordered"] += 1
            return self.free_at
        jitter = self.rng.uniform(-a.jitter_ms, a.jitter_ms) if a.jitter_ms > 0 else 0.0
        return self.free_at + max(0.0, a.delay_ms + jitter) / 1000.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="TUN name of side A")
    p.add_argument("--b", required=True, help="TUN name of side B")
    p.add_argument("--delay-ms", type=float, default=0.0)
    p.add_argument("--jitter-ms", type=float, default=0.0)
    p.add_argument("--loss", type=float, default=0.0)
    p.add_argument("--reorder", type=float, default=0.0)
    p.add_argument("--rate-mbit", type=float, default=0.0, help="0: no bottleneck")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--outage-file", default=None)
    p.add_argument("--ready-file", default=None, help="created once both TUNs are open")
    args = p.parse_args()

    fa, fb = open_tun(args.a), open_tun(args.b)
    if args.ready_file:
        open(args.ready_file, "w").close()
    rng = random.Random(args.seed)
    dirs = {fa: Direction("a->b", fb, args, rng), fb: Direction("b->a", fa, args, rng)}
    heap = []  # (due, order, out_fd, packet)
    order = 0
    running = [True]

    def stop(*_):
        running[0] = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while running[0]:
        now = time.monotonic()
        while heap and heap[0][0] <= now:
            _, _, out, packet = heapq.heappop(heap)
            try:
                os.write(out, packet)
                dirs[fa if out == fb else fb].counts["out"] += 1
            except OSError:
                pass
        timeout = max(0.0, heap[0][0] - now) if heap else 0.05
        try:
            ready, _, _ = select.select([fa, fb], [], [], min(timeout, 0.05))
        except InterruptedError:
            continue
        now = time.monotonic()
        for fd in ready:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                except OSError:
                    break
                d = dirs[fd]
                due = d.due(now, len(packet))
                if due is not None:
                    order += 1
                    heapq.heappush(heap, (due, order, d.out, packet))
    for d in dirs.values():
        print(d.name, " ".join(f"{k}={v}" for k, v in d.counts.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
