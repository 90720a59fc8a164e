#!/usr/bin/env python3
"""Writes tracker-100hz.pcap: an emulated SlimeVR tracker and server, every
packet packed field by field with Python's struct in the layouts of
SlimeVR-Tracker-ESP's network code (commit 12f4b22d: packets.h,
connection.cpp) and SlimeVR-Server's UDP parser (commit 55497639:
UDPProtocolParser.kt, UDPPacket.kt, TrackersUDPServer.kt), from inputs set
below. The Rust golden test (crates/mocap-core/tests/slimevr_golden.rs)
states the values it expects from these inputs, not from our decoder.

The story, both directions on UDP 6969:
- the tracker powers on and sends its handshake (number 0) every second;
  the server, started at 1 s, answers the second one;
- the tracker asks for feature flags (its first numbered packet: 0), the
  server answers; it sends each sensor's info, the server acknowledges;
- rotation bundles of 2 sensors every 10 ms, battery, signal strength and
  temperature every second; the server's heartbeat and ping every half
  second, the tracker's heartbeat answer and pong;
- at 4 s the tracker reboots: handshake again, numbers from 0 again;
- packets numbered LOST are left out (lost on the way), and the last
  datagram is cut 5 bytes short.

Run from the repository root: python3 captures/slimevr/make_capture.py
"""

import struct

T0 = 1765000000.0
TRACKER = (b"\xc0\xa8\x01\x33", 6969)  # 192.168.1.51: the firmware sends from 6969 too
SERVER = (b"\xc0\xa8\x01\x0a", 6969)  # 192.168.1.10
# Packet numbers left out, per session (the reboot starts session 2).
LOST = {1: [100, 101, 102], 2: [57, 160]}
CUT = 5  # bytes cut off the last datagram

BOARD, IMU, MCU, BUILD = 9, 11, 1, 22  # SlimeVR board, BMI270, ESP8266, protocol 22
FIRMWARE = b"0.7.0"
MAC = bytes([0x3C, 0x61, 0x05, 0x12, 0x34, 0x56])
VENDOR = [b"SlimeVR", b"https://slimevr.dev", b"SlimeVR Tracker", b"SlimeVR/SlimeVR-Tracker-ESP", b"main"]


def header(kind, number):
    return struct.pack(">iq", kind, number)


def short_string(s):
    return struct.pack(">B", len(s)) + s


def handshake():
    body = struct.pack(">iii", BOARD, IMU, MCU) + struct.pack(">iii", 0, 0, 0) + struct.pack(">i", BUILD)
    body += short_string(FIRMWARE) + MAC + struct.pack(">B", 0)  # tracker type: rotation
    for s in VENDOR:
        body += short_string(s)
    return header(3, 0) + body


def answer():
    return (b"\x03" + b"Hey OVR =D 5").ljust(64, b"\x00")


def sensor_info(sensor):
    # id, state ok, IMU, config bits, rest calibration done, position, data type, two debug rates
    return struct.pack(">BBBHBBBff", sensor, 1, IMU, 0x0003, 1, 0, 0, 400.0, 100.0)


def quat(k, sensor):
    """A unit quaternion from integers: its components are quotients that
    every IEEE machine rounds alike. Sensor 0 turns about y, sensor 1 about x."""
    m, n = 1 + (k + 7 * sensor) % 20, 3
    s, c = 2 * m * n / (m * m + n * n), (m * m - n * n) / (m * m + n * n)
    return (0.0, s, 0.0, c) if sensor == 0 else (s, 0.0, 0.0, c)


def rotation(k, sensor):
    return struct.pack(">BB4fB", sensor, 1, *quat(k, sensor), 3 * sensor)


def bundle(k):
    out = b""
    for sensor in (0, 1):
        inner = struct.pack(">i", 17) + rotation(k, sensor)
        out += struct.pack(">H", len(inner)) + inner
    return out


def schedule():
    """(time, from the tracker, type, body) of every datagram, before
    numbering; body None for the packets already whole."""
    ev = []
    sessions = [(1, 0.0, 1.0, 1.002, 4.0, 290), (2, 4.5, None, 4.502, 7.0, 240)]
    for session, hs, hs2, ans, end, bundles in sessions:
        for t in [hs] + ([hs2] if hs2 else []):
            ev.append((t, True, session, "raw", handshake()))
        ev.append((ans, False, session, "raw", answer()))
        ev.append((ans + 0.008, True, session, 22, struct.pack(">B", 0x06)))
        ev.append((ans + 0.010, False, session, "raw", header(22, 0) + struct.pack(">B", 0x03)))
        for sensor in (0, 1):
            ev.append((ans + 0.018 + sensor / 1000, True, session, 15, sensor_info(sensor)))
            ev.append((ans + 0.020 + sensor / 1000, False, session, "raw", struct.pack(">iBB", 15, sensor, 1)))
        start = round(ans + 0.098, 3)
        for k in range(bundles):
            ev.append((start + k / 100, True, session, 100, bundle(k)))
        for i in range(int(end - start)):
            t = start + 0.405 + i
            ev.append((t, True, session, 12, struct.pack(">ff", 4.0 - i / 64, 0.875 - i / 128)))
            ev.append((t + 0.001, True, session, 19, struct.pack(">Bb", 255, -55 - i)))
            ev.append((t + 0.002, True, session, 20, struct.pack(">Bf", 0, 30 + i / 4)))
    # The server's heartbeat and ping every half second from 1.25 s; the
    # tracker answers while it is connected.
    ping = -1000000
    j = 0
    while 1.25 + j / 2 < 7.0:
        t = 1.25 + j / 2
        connected = 1.002 < t < 4.0 or 4.502 < t < 7.0
        session = 1 if t < 4.0 else 2
        ev.append((t, False, session, "raw", header(1, 0)))
        ping_bytes = header(10, 0) + struct.pack(">i", ping + 7919 * j)
        ev.append((t + 0.05, False, session, "raw", ping_bytes))
        if connected:
            ev.append((t + 0.001, True, session, 0, b""))
            ev.append((t + 0.052, True, session, "raw", ping_bytes))  # the pong: its bytes sent back
        j += 1
    ev.sort(key=lambda e: e[0])
    return ev


def datagrams():
    """(time, from the tracker, payload), numbered and with LOST left out."""
    out = []
    number = {}
    for t, tracker, session, kind, body in schedule():
        if kind == "raw":
            out.append((t, tracker, body))
            continue
        n = number.get(session, 0)
        number[session] = n + 1
        if n in LOST[session]:
            continue
        out.append((t, tracker, header(kind, n) + body))
    last = max(i for i, d in enumerate(out) if d[1])
    t, tracker, payload = out[last]
    out[last] = (t, tracker, payload[:-CUT])
    return out


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b + b"\x00" * (len(b) % 2)))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(src, dst, payload, ident):
    udp = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0, 64, 17, 0, src[0], dst[0])
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    eth = b"\x00" * 12 + b"\x08\x00"
    return eth + ip + udp


def main():
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for i, (t, tracker, payload) in enumerate(datagrams()):
        src, dst = (TRACKER, SERVER) if tracker else (SERVER, TRACKER)
        pkt = frame(src, dst, payload, i & 0xFFFF)
        usec = round(t * 1_000_000)
        out += struct.pack("<IIII", int(T0) + usec // 1_000_000, usec % 1_000_000, len(pkt), len(pkt)) + pkt
    with open("captures/slimevr/tracker-100hz.pcap", "wb") as f:
        f.write(out)


main()
