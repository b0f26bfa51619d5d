#!/usr/bin/env python3
"""Writes hairy-head.gltf: the 25-strand VRM 1.0-style head of BM_VrmHairyHead
(bench/bench_vrm.cpp, HairyHead()) as a file three-vrm loads, for the side-by-side of issue
41's lone many-strand avatar (bench/vrm_vs_three_vrm.sh HAIRY=1).

The springs, joints, collider and rest pose are the bench's; around them sits the smallest
VRMC_vrm three-vrm's bench harness accepts (meta and the required humanoid bones as empty
nodes), since bench-vrm.mjs reads gltf.userData.vrm. No meshes, no buffers.
    python3 bench/hairy_head_gltf.py OUT.gltf
"""
import json
import math
import sys

nodes = []


def add(name, parent, t):
    nodes.append({"name": name, "translation": list(t), "children": []})
    i = len(nodes) - 1
    if parent is not None:
        nodes[parent]["children"].append(i)
    return i


root = add("root", None, (0, 0, 0))
hips = add("hips", root, (0, 1.0, 0))
spine = add("spine", hips, (0, 0.3, 0))
# The bench's head is at (0, 1.6, 0) under the root; here under hips and spine, same place.
head = add("head", spine, (0, 0.3, 0))
humanoid = {"hips": hips, "spine": spine, "head": head}
for side, x in (("left", 0.2), ("right", -0.2)):
    upper = add(side + "UpperArm", spine, (x, 0.25, 0))
    lower = add(side + "LowerArm", upper, (x, 0, 0))
    humanoid[side + "UpperArm"], humanoid[side + "LowerArm"] = upper, lower
    humanoid[side + "Hand"] = add(side + "Hand", lower, (x, 0, 0))
    upper_leg = add(side + "UpperLeg", hips, (x / 2, -0.1, 0))
    lower_leg = add(side + "LowerLeg", upper_leg, (0, -0.4, 0))
    humanoid[side + "UpperLeg"], humanoid[side + "LowerLeg"] = upper_leg, lower_leg
    humanoid[side + "Foot"] = add(side + "Foot", lower_leg, (0, -0.4, 0))

springs = []
for s in range(25):
    joints = 6 + s % 5
    a = 2 * math.pi * s / 25
    bone = add(f"hair{s}_0", head, (0.1 * math.cos(a), 0.08, 0.1 * math.sin(a)))
    spring = {"name": f"hair{s}", "colliderGroups": [0], "joints": []}
    for j in range(joints):
        tail = add(f"hair{s}_{j + 1}", bone, (0.01 * math.cos(a), -0.035, 0.01 * math.sin(a)))
        spring["joints"].append({"node": bone, "hitRadius": 0.01, "stiffness": 1.0 - 0.05 * j, "gravityPower": 0.2,
                                 "gravityDir": [0, -1, 0], "dragForce": 0.4})
        bone = tail
    spring["joints"].append({"node": bone})  # VRM 1.0: the last node is the last joint's tail
    springs.append(spring)

for n in nodes:
    if not n["children"]:
        del n["children"]

gltf = {
    "asset": {"version": "2.0", "generator": "tendon bench/hairy_head_gltf.py"},
    "scene": 0,
    "scenes": [{"nodes": [root]}],
    "nodes": nodes,
    "extensionsUsed": ["VRMC_vrm", "VRMC_springBone"],
    "extensions": {
        "VRMC_vrm": {
            "specVersion": "1.0",
            "meta": {"name": "hairy-head", "version": "1", "authors": ["tendon bench"],
                     "licenseUrl": "https://vrm.dev/licenses/1.0/"},
            "humanoid": {"humanBones": {k: {"node": v} for k, v in humanoid.items()}},
        },
        "VRMC_springBone": {
            "specVersion": "1.0",
            "colliders": [{"node": head, "shape": {"sphere": {"offset": [0, 0.05, 0], "radius": 0.09}}}],
            "colliderGroups": [{"colliders": [0]}],
            "springs": springs,
        },
    },
}
with open(sys.argv[1], "w") as f:
    json.dump(gltf, f)
