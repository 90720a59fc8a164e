"""Imports a BVH take with Blender's own importer (headless) and compares
every bone's head, in world space, with the expected joint positions.

usage: blender -b --python check-blender.py -- TAKE.bvh EXPECTED.json
EXPECTED as for check-bvhio.py (BVH axes and units). Blender turns Y-up into
Z-up: a BVH point (x, y, z) is (x, -z, y) in Blender's world.
Prints one line starting with RESULT and a JSON object.
"""
import builtins
import json
import math
import sys

import bpy

# Blender 3.4's importer opens with mode "rU", which Python 3.11 refuses.
_open = builtins.open


def _open_without_u(file, mode="r", *args, **kwargs):
    return _open(file, mode.replace("U", ""), *args, **kwargs)


builtins.open = _open_without_u

take, expected_path = sys.argv[sys.argv.index("--") + 1:][:2]
expected = json.load(_open(expected_path))
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_anim.bvh(filepath=take, global_scale=1.0, frame_start=1,
                        use_fps_scale=False, update_scene_fps=True,
                        update_scene_duration=True,
                        rotate_mode="NATIVE", axis_forward="-Z", axis_up="Y")
arm = bpy.context.object
action = arm.animation_data.action
first, last = action.frame_range
worst, where = 0.0, None
for frame, want in expected["frames"].items():
    bpy.context.scene.frame_set(int(frame) + 1)
    for name, (x, y, z) in want.items():
        head = arm.matrix_world @ arm.pose.bones[name].head
        d = math.dist(tuple(head), (x, -z, y))
        if d > worst:
            worst, where = d, f"{name}@{frame}"
print("RESULT " + json.dumps({
    "bones": len(arm.data.bones),
    "frames": int(last - first + 1),
    "fps": bpy.context.scene.render.fps / bpy.context.scene.render.fps_base,
    "max_error": worst,
    "where": where,
}))
