#!/usr/bin/env python3
"""Traffic and measurement for the WAN harness (scripts/wan-link.sh).

`send`: STREAMS streams at HZ datagrams a second each, every datagram to
each of the given destinations (one per path under test: mocap-link's
publisher, a socat forwarder), from one socket per stream. A datagram is
the tag `WAN1`, the stream number (u8), its counter (u32) and the send time
(f64, CLOCK_REALTIME: the namespaces share the machine's clock), padded to
the stream's size: 1628 bytes (a mocopi frame: two IP fragments), 245 (Live
Link Face), 900 (a VMC bundle).

`recv`: one socket per path; per path and stream, what arrived: the frames
delivered (distinct counters), one-way delay p50/p99 of the fresh ones (a
counter above every earlier one), the longest freeze (the longest time
without a fresh frame, from the first send to the end), and, when an outage
window is given, how long after it ended the first fresh frame came. It
prints one JSON object with every path's numbers on stdout.
"""

import argparse
import json
import select
import socket
import struct
import sys
import time

HEAD = struct.Struct("!4sBId")
SIZES = [1628, 245, 900]


def send(a):
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(a.streams)]
    dests = [(h, int(p)) for h, p in (d.rsplit(":", 1) for d in a.to)]
    period = 1.0 / a.hz
    start = time.monotonic()
    n = 0
    while True:
        due = start + n * period
        now = time.monotonic()
        if due - start >= a.duration:
            break
        if due > now:
            time.sleep(due - now)
        for s, sock in enumerate(socks):
            size = SIZES[s % len(SIZES)]
            d = HEAD.pack(b"WAN1", s, n, time.time()).ljust(size, b"\0")
            for dest in dests:
                try:
                    sock.sendto(d, dest)
                except OSError:
                    pass
        n += 1
    json.dump({"sent_per_stream": n, "start": time.time() - (time.monotonic() - start)}, sys.stdout)
    print()


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    i = max(1, min(len(v), int(-(-p * len(v) // 1)))) - 1
    return round(v[i] * 1000, 1)


def recv(a):
    paths = {}
    for spec in a.listen:
        name, addr = spec.split("=", 1)
        host, port = addr.rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind((host, int(port)))
        s.setblocking(False)
        paths[s] = {"name": name, "streams": {}}
    end = time.monotonic() + a.duration
    while time.monotonic() < end:
        ready, _, _ = select.select(list(paths), [], [], 0.05)
        for s in ready:
            while True:
                try:
                    d = s.recv(65536)
                except BlockingIOError:
                    break
                now = time.time()
                if len(d) < HEAD.size:
                    continue
                tag, stream, n, sent = HEAD.unpack_from(d)
                if tag != b"WAN1":
                    continue
                st = paths[s]["streams"].setdefault(
                    stream, {"seen": set(), "fresh": [], "top": -1})
                st["seen"].add(n)
                if n > st["top"]:
                    st["top"] = n
                    st["fresh"].append((now, now - sent, sent))
    info = json.load(open(a.sent))
    total, t0 = info["sent_per_stream"], info["start"]
    t_end = t0 + total / a.hz
    out = {}
    for p in paths.values():
        delivered, delays, freeze, recovery = [], [], 0.0, []
        for s in range(a.streams):
            st = p["streams"].get(s, {"seen": set(), "fresh": []})
            delivered.append(len([n for n in st["seen"] if n < total]) / total)
            delays += [f[1] for f in st["fresh"]]
            arrivals = [t0] + [f[0] for f in st["fresh"] if f[0] <= t_end + 1] + [t_end]
            gaps = [b - a_ for a_, b in zip(arrivals, arrivals[1:])]
            if a.outage:
                o0, o1 = (t0 + x for x in a.outage)
                # The freeze the outage itself causes is not the path's fault:
                # gaps are measured outside it, recovery after it.
                gaps = [b - a_ for a_, b in zip(arrivals, arrivals[1:]) if b <= o0 or a_ >= o1 + 1.0]
                after = [f[0] for f in st["fresh"] if f[2] >= o1 and f[0] >= o1]
                recovery.append(round(after[0] - o1, 3) if after else None)
            freeze = max([freeze] + gaps)
        out[p["name"]] = {
            "delivered_pct": round(100 * sum(delivered) / len(delivered), 1),
            "p50_ms": pct(delays, 0.50),
            "p99_ms": pct(delays, 0.99),
            "freeze_ms": round(freeze * 1000),
        }
        if a.outage:
            out[p["name"]]["recovery_s"] = recovery
    json.dump(out, sys.stdout)
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("--to", action="append", required=True, help="HOST:PORT, repeatable")
    s.add_argument("--streams", type=int, default=3)
    s.add_argument("--hz", type=float, default=60.0)
    s.add_argument("--duration", type=float, default=30.0)
    r = sub.add_parser("recv")
    r.add_argument("--listen", action="append", required=True, help="NAME=HOST:PORT")
    r.add_argument("--streams", type=int, default=3)
    r.add_argument("--hz", type=float, default=60.0)
    r.add_argument("--duration", type=float, required=True, help="seconds to listen")
    r.add_argument("--sent", required=True, help="the sender's JSON line")
    r.add_argument("--outage", type=float, nargs=2, default=None,
                   help="outage window, seconds after the first send")
    a = p.parse_args()
    (send if a.cmd == "send" else recv)(a)


if __name__ == "__main__":
    main()
