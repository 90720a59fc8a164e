#!/usr/bin/env python3
"""Writes phone-60fps.pcap: VTube Studio's phone protocol, both directions,
as JSON text laid out like DenchiSoft's reference classes
(VTubeStudioUDPDataRequest.cs, VTubeStudioRawTrackingData.cs: their field
names, in their declaration order, as Unity's JsonUtility writes them), from
inputs set below. The Rust golden test
(crates/mocap-core/tests/vtubestudio_golden.rs) states the values it expects
from these inputs, not from our decoder.

Run from the repository root: python3 captures/vtubestudio/make_capture.py
"""

import json
import struct

T0_MS = 1765000000000  # the phone's clock: Unix milliseconds
FRAMES = 150  # 2.5 s at 60 frames a second
NO_FACE = range(60, 90)  # FaceFound false
NOT_SENT = range(110, 115)  # a gap in the timestamps: five frames never sent
HOTKEY_FRAME, HOTKEY = 30, 3
PC, PHONE, OTHER_PC = b"\xc0\xa8\x01\x14", b"\xc0\xa8\x01\x1e", b"\xc0\xa8\x01\x15"
PC_PORT, PC_DATA_PORT, PHONE_PORT, PHONE_DATA_PORT = 50000, 50510, 21412, 60123

# VTSARKitBlendshape.cs's order and spelling (the names the app sends).
NAMES = (
    "EyeBlinkLeft EyeLookDownLeft EyeLookInLeft EyeLookOutLeft EyeLookUpLeft EyeSquintLeft EyeWideLeft "
    "EyeBlinkRight EyeLookDownRight EyeLookInRight EyeLookOutRight EyeLookUpRight EyeSquintRight EyeWideRight "
    "JawForward JawRight JawLeft JawOpen MouthClose MouthFunnel MouthPucker MouthLeft MouthRight "
    "MouthSmileLeft MouthSmileRight MouthFrownLeft MouthFrownRight MouthDimpleLeft MouthDimpleRight "
    "MouthStretchLeft MouthStretchRight MouthRollLower MouthRollUpper MouthShrugLower MouthShrugUpper "
    "MouthPressLeft MouthPressRight MouthLowerDownLeft MouthLowerDownRight MouthUpperUpLeft MouthUpperUpRight "
    "BrowDownLeft BrowDownRight BrowInnerUp BrowOuterUpLeft BrowOuterUpRight CheekPuff CheekSquintLeft "
    "CheekSquintRight NoseSneerLeft NoseSneerRight TongueOut"
).split()
assert len(NAMES) == 52


def vec(x, y, z):
    return {"x": x, "y": y, "z": z}


def data(k):
    """Frame k as the phone sends it: every value exact in binary."""
    return {
        "Timestamp": T0_MS + k * 1000 // 60,
        "Hotkey": HOTKEY if k == HOTKEY_FRAME else -1,
        "FaceFound": k not in NO_FACE,
        "Rotation": vec(k / 4 - 10, 5.5, -2.25),
        "Position": vec(0.5, -1.25, 30 + k / 8),
        "BlendShapes": [{"k": n, "v": ((i + k) % 17) / 16} for i, n in enumerate(NAMES)],
        "EyeLeft": vec(1.5, -k / 16, 0.0),
        "EyeRight": vec(1.5, k / 16, 0.0),
    }


def request(time, sent_by, ports):
    return {"messageType": "iOSTrackingDataRequest", "time": time, "sentBy": sent_by, "ports": ports}


def text(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
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
    packets = []  # (ms after T0, src, dst, payload)
    for second in range(3):  # the PC asks every second for 3 s of data
        packets.append((second * 1000 - 1, (PC, PC_PORT), (PHONE, PHONE_PORT), text(request(3.0, "PCApp", [PC_DATA_PORT]))))
    # Another PC asks for too long, on too many ports: decoded, with warnings.
    packets.append((1500, (OTHER_PC, PC_PORT), (PHONE, PHONE_PORT), text(request(12.5, "OtherPC", list(range(50520, 50560))))))
    for k in range(FRAMES):
        if k in NOT_SENT:
            continue
        d = text(data(k))
        if k == FRAMES - 1:
            d = d[:200]  # cut short on purpose
        packets.append((k * 1000 // 60, (PHONE, PHONE_DATA_PORT), (PC, PC_DATA_PORT), d))
    packets.sort(key=lambda p: p[0])
    for ident, (ms, src, dst, payload) in enumerate(packets):
        pkt = frame(src, dst, payload, ident)
        at = T0_MS + ms
        out += struct.pack("<IIII", at // 1000, at % 1000 * 1000, len(pkt), len(pkt)) + pkt
    with open("captures/vtubestudio/phone-60fps.pcap", "wb") as f:
        f.write(out)


main()
