"""Reads a BVH take with PyPI bvhio and compares every joint's world position
(bvhio's forward kinematics) with the expected ones.

usage: python3 check-bvhio.py TAKE.bvh EXPECTED.json
EXPECTED: {"frames": {"<frame index>": {"<joint>": [x, y, z], ...}, ...}}
Prints one JSON line: frame count, frame time, joint count, the largest
distance found (file units) and where.
"""
import json
import math
import sys

import bvhio

take, expected = sys.argv[1], json.load(open(sys.argv[2]))
container = bvhio.readAsBvh(take)
root = bvhio.readAsHierarchy(take)
joints = {j.Name: j for j, _, _ in root.layout()}
worst, where = 0.0, None
for frame, want in expected["frames"].items():
    root.loadPose(int(frame))
    for name, p in want.items():
        q = joints[name].PositionWorld
        d = math.dist((q.x, q.y, q.z), p)
        if d > worst:
            worst, where = d, f"{name}@{frame}"
print(json.dumps({
    "frames": container.FrameCount,
    "frame_time": container.FrameTime,
    "joints": len(joints),
    "max_error": worst,
    "where": where,
}))
