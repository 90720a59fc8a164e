#!/usr/bin/env python3
"""Writes face-32fps.pcap: OpenSeeFace face datagrams packed field by field
with Python's struct, in the order facetracker.py sends them, from inputs
set below. The Rust golden test (crates/mocap-core/tests/openseeface_golden.rs)
states the values it expects from these inputs, not from our decoder.

Run from the repository root: python3 captures/openseeface/make_capture.py
"""

import struct

T0 = 1765000000.0  # the sender's clock: seconds since 1970 (time.time())
FRAMES = 30
WIDTH, HEIGHT = 640.0, 480.0
SRC, DST = (b"\x7f\x00\x00\x01", 50573), (b"\x7f\x00\x00\x01", 11573)


def face(k, fid):
    """One face of frame k: 1785 bytes, little-endian."""
    second = fid == 1
    success = not (k in (20, 21) and not second)
    right = 0.5 if second else (k % 5) * 0.25
    left = 0.5 if second else 1.0 - right
    out = struct.pack("<d", T0 + k / 32)
    out += struct.pack("<i", fid)
    out += struct.pack("<ff", WIDTH, HEIGHT)
    out += struct.pack("<ff", right, left)  # eye openness: right, then left
    out += struct.pack("<B", 1 if success else 0)
    out += struct.pack("<f", 1.5 if second else k / 16)  # PnP error
    out += struct.pack("<4f", 0.5, -0.5, 0.5, 0.5)  # quaternion x y z w
    out += struct.pack("<3f", -170.0 + k, 10.5, 90.25)  # euler, degrees
    out += struct.pack("<3f", 0.5, -1.25, 40.0 + k / 4)  # translation
    for i in range(68):  # landmark confidences
        out += struct.pack("<f", i / 128)
    for i in range(68):  # 2D landmarks, sent as (y, x)
        out += struct.pack("<ff", 100.0 + i + fid, 200.0 + i / 2)
    for i in range(70):  # 3D points (x, y, z) sent as (x, -y, -z), zero when the fit failed
        x, y, z = (i / 16, i / 32, 1.0 + i / 64) if success else (0.0, 0.0, 0.0)
        out += struct.pack("<fff", x, -y, -z)
    for j in range(14):  # features, in facetracker.py's order
        out += struct.pack("<f", j / 16 - 0.5 + k / 256)
    assert len(out) == 1785, len(out)
    return out


def datagram(k):
    d = face(k, 0)
    if 10 <= k <= 14:
        d += face(k, 1)
    if k == FRAMES - 1:
        d = d[:-10]  # cut short on purpose
    return d


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(payload, ident):
    udp = struct.pack("!HHHH", SRC[1], DST[1], 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0, 64, 17, 0, SRC[0], DST[0])
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    eth = b"\x00" * 12 + b"\x08\x00"
    return eth + ip + udp


def main():
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for k in range(FRAMES):
        pkt = frame(datagram(k), k)
        usec = k * 31250  # k / 32 s
        out += struct.pack("<IIII", int(T0), usec, len(pkt), len(pkt)) + pkt
    with open("captures/openseeface/face-32fps.pcap", "wb") as f:
        f.write(out)


main()
