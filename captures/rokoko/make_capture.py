#!/usr/bin/env python3
"""Writes studio-60fps.pcap: Rokoko Studio Live's JSON v3 stream of one
actor (suit and face) at 60 frames a second, laid out as Rokoko's Unity
plugin reads it (JsonLiveSerializerV3.cs: its member names, in its
declaration order; segment names of its BodyFrame, blendshapes of its
FaceFrame), plain JSON for the first 90 frames and one LZ4 frame per
datagram after (python's lz4.frame, as the Blender add-on reads it). The
pose is built from inputs set below: the body turns about Y, the left arm
rises to 90 degrees and stays, the head nods. Studio's segment rotations are
world rotations times Studio's T-pose rotation of the segment (the Unity
plugin's SmartsuitTPose), segment positions chained from rest offsets. The
Rust golden test (crates/mocap-core/tests/rokoko_golden.rs) states what it
expects from these inputs, not from our decoder.

Needs: pip install lz4. Run from the repository root:
python3 captures/rokoko/make_capture.py
"""

import json
import math
import struct

import lz4.frame

FRAMES = 180  # 3 s at 60 frames a second
PACKED_FROM = 90  # frames from here on are LZ4 frames
T0 = 1765000000  # pcap time of frame 0, Unix seconds
CLOCK0 = 100.0  # Studio's scene.timestamp at frame 0, seconds
STUDIO, PLUGIN = b"\xc0\xa8\x01\x28", b"\xc0\xa8\x01\x0a"
STUDIO_PORT, PLUGIN_PORT = 53000, 14043

S = math.sqrt(0.5)
H = 0.5
# Studio's T-pose rotations (x, y, z, w) per segment: the Unity plugin's
# SmartsuitTPose, which writes sqrt(1/2) as 0.707; toe ends as their toes.
TPOSE = {
    "hip": (0, 0, 0, 1),
    "spine": (0, 0, 1, 0), "chest": (0, 0, 1, 0), "neck": (0, 0, 1, 0), "head": (0, 0, 1, 0),
    "leftShoulder": (0, 0, S, -S),
    "leftUpperArm": (-H, -H, H, -H), "leftLowerArm": (-H, -H, H, -H), "leftHand": (-H, -H, H, -H),
    "rightShoulder": (0, 0, S, S),
    "rightUpperArm": (H, -H, H, H), "rightLowerArm": (H, -H, H, H), "rightHand": (H, -H, H, H),
    "leftUpLeg": (0, S, 0, S), "leftLeg": (0, S, 0, S),
    "leftFoot": (0, S, -S, 0), "leftToe": (0, S, -S, 0), "leftToeEnd": (0, S, -S, 0),
    "rightUpLeg": (0, -S, 0, S), "rightLeg": (0, -S, 0, S),
    "rightFoot": (0, -S, S, 0), "rightToe": (0, -S, S, 0), "rightToeEnd": (0, -S, S, 0),
}
# Segment: (parent, rest offset from the parent in metres, Unity's frame:
# +Y up, +Z where the actor faces, the actor's left at -X).
SKELETON = {
    "hip": (None, (0, 0, 0)),
    "spine": ("hip", (0, 0.1, 0)),
    "chest": ("spine", (0, 0.25, 0)),
    "neck": ("chest", (0, 0.2, 0)),
    "head": ("neck", (0, 0.1, 0)),
    "leftShoulder": ("chest", (-0.05, 0.15, 0)),
    "leftUpperArm": ("leftShoulder", (-0.12, 0, 0)),
    "leftLowerArm": ("leftUpperArm", (-0.28, 0, 0)),
    "leftHand": ("leftLowerArm", (-0.25, 0, 0)),
    "rightShoulder": ("chest", (0.05, 0.15, 0)),
    "rightUpperArm": ("rightShoulder", (0.12, 0, 0)),
    "rightLowerArm": ("rightUpperArm", (0.28, 0, 0)),
    "rightHand": ("rightLowerArm", (0.25, 0, 0)),
    "leftUpLeg": ("hip", (-0.1, -0.05, 0)),
    "leftLeg": ("leftUpLeg", (0, -0.42, 0)),
    "leftFoot": ("leftLeg", (0, -0.42, 0)),
    "leftToe": ("leftFoot", (0, -0.06, 0.12)),
    "leftToeEnd": ("leftToe", (0, 0, 0.06)),
    "rightUpLeg": ("hip", (0.1, -0.05, 0)),
    "rightLeg": ("rightUpLeg", (0, -0.42, 0)),
    "rightFoot": ("rightLeg", (0, -0.42, 0)),
    "rightToe": ("rightFoot", (0, -0.06, 0.12)),
    "rightToeEnd": ("rightToe", (0, 0, 0.06)),
}
# FaceFrame's order: ARKit's 52 names.
FACE = (
    "eyeBlinkLeft eyeLookDownLeft eyeLookInLeft eyeLookOutLeft eyeLookUpLeft eyeSquintLeft eyeWideLeft "
    "eyeBlinkRight eyeLookDownRight eyeLookInRight eyeLookOutRight eyeLookUpRight eyeSquintRight eyeWideRight "
    "jawForward jawLeft jawRight jawOpen mouthClose mouthFunnel mouthPucker mouthLeft mouthRight "
    "mouthSmileLeft mouthSmileRight mouthFrownLeft mouthFrownRight mouthDimpleLeft mouthDimpleRight "
    "mouthStretchLeft mouthStretchRight mouthRollLower mouthRollUpper mouthShrugLower mouthShrugUpper "
    "mouthPressLeft mouthPressRight mouthLowerDownLeft mouthLowerDownRight mouthUpperUpLeft mouthUpperUpRight "
    "browDownLeft browDownRight browInnerUp browOuterUpLeft browOuterUpRight cheekPuff cheekSquintLeft "
    "cheekSquintRight noseSneerLeft noseSneerRight tongueOut"
).split()
assert len(FACE) == 52


def turn(k):
    """The whole body's turn about +Y, degrees."""
    return 20 * math.sin(2 * math.pi * k / FRAMES)


def raise_left_arm(k):
    """The left arm raised sideways, degrees: 0 to 90 over frames 0-90, then held."""
    return 90 * min(k, 90) / 90


def nod(k):
    """The head's nod about +X, degrees."""
    return 15 * math.sin(2 * math.pi * k / 60)


def face_value(i, k):
    """Blendshape i in frame k, percent."""
    return ((i + k) % 21) * 5


def about(axis, deg):
    s, c = math.sin(math.radians(deg) / 2), math.cos(math.radians(deg) / 2)
    return (axis[0] * s, axis[1] * s, axis[2] * s, c)


def mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def rotate(q, v):
    x, y, z, _ = mul(mul(q, (v[0], v[1], v[2], 0)), (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


def local_motion(seg, k):
    """Each segment's rotation relative to its parent, beyond the T-pose."""
    if seg == "hip":
        return about((0, 1, 0), turn(k))
    if seg == "leftUpperArm":
        # Raising the left arm (along -X) towards +Y is -a about +Z.
        return about((0, 0, 1), -raise_left_arm(k))
    if seg == "head":
        return about((1, 0, 0), nod(k))
    return (0, 0, 0, 1)


def body(k):
    world, pos, out = {}, {}, {}
    for seg, (parent, offset) in SKELETON.items():
        if parent is None:
            world[seg] = local_motion(seg, k)
            pos[seg] = (0.0, 1.0 + 0.02 * math.sin(2 * math.pi * k / 60), 0.005 * k)
        else:
            world[seg] = mul(world[parent], local_motion(seg, k))
            step = rotate(world[parent], offset)
            pos[seg] = tuple(p + d for p, d in zip(pos[parent], step))
        x, y, z, w = mul(world[seg], TPOSE[seg])
        px, py, pz = pos[seg]
        out[seg] = {"position": {"x": px, "y": py, "z": pz}, "rotation": {"x": x, "y": y, "z": z, "w": w}}
    return out


def frame_json(k):
    face = {"faceId": "Actor01-face"}
    face.update({n: face_value(i, k) for i, n in enumerate(FACE)})
    actor = {
        "name": "Actor01",
        "color": [255, 92, 0],
        "meta": {"hasGloves": False, "hasLeftGlove": False, "hasRightGlove": False, "hasBody": True, "hasFace": True},
        "dimensions": {"totalHeight": 1.75, "hipHeight": 1.0},
        "body": body(k),
        "face": face,
    }
    prop = {
        "name": "Stick",
        "color": [0, 255, 0],
        "type": 2,
        "position": {"x": 0.5, "y": 0.75, "z": 1.0},
        "rotation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
    }
    scene = {"timestamp": CLOCK0 + k / 60, "actors": [actor], "props": [prop]}
    return json.dumps({"version": 3, "fps": 60, "scene": scene}, separators=(",", ":")).encode()


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def packet(payload, ident):
    udp = struct.pack("!HHHH", STUDIO_PORT, PLUGIN_PORT, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0, 64, 17, 0, STUDIO, PLUGIN)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return b"\x00" * 12 + b"\x08\x00" + ip + udp


def main():
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for k in range(FRAMES):
        d = frame_json(k)
        if k >= PACKED_FROM:
            d = lz4.frame.compress(d)
        if k == FRAMES - 1:
            d = d[:60]  # cut short on purpose
        p = packet(d, k)
        usec = k * 1000000 // 60
        out += struct.pack("<IIII", T0 + usec // 1000000, usec % 1000000, len(p), len(p)) + p
    with open("captures/rokoko/studio-60fps.pcap", "wb") as f:
        f.write(out)


main()
