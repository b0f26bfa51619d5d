"""ports/c/tests/ctypes_test.py: Tendon's C ABI through Python's ctypes.

ctypes sees what Unity's P/Invoke, C#'s DllImport, Rust's FFI and LuaJIT's ffi see: a C
symbol table and plain structs. This loads libtendon_c, builds a chain and a character
from plain arrays, steps, reads the poses back, and checks a refusal's code and field.
With ../shared/data present it also loads a VRM avatar by path and from memory.

    python3 ctypes_test.py path/to/libtendon_c.so
Prints "N passed, N failed"; exits non-zero on a failure.
"""
import ctypes as C
import math
import os
import sys

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAILED: {what} (last error: {lib.tendon_last_error().decode()})", file=sys.stderr)


class Vec3(C.Structure):
    _fields_ = [("x", C.c_float), ("y", C.c_float), ("z", C.c_float)]


class Quat(C.Structure):
    _fields_ = [("x", C.c_float), ("y", C.c_float), ("z", C.c_float), ("w", C.c_float)]


class Transform(C.Structure):
    _fields_ = [("translation", Vec3), ("rotation", Quat), ("scale", Vec3)]


def at(x, y, z):
    return Transform(Vec3(x, y, z), Quat(0, 0, 0, 1), Vec3(1, 1, 1))


class TaskHooks(C.Structure):
    _fields_ = [("enqueue", C.c_void_p), ("finish", C.c_void_p), ("user_context", C.c_void_p),
                ("worker_count", C.c_int32)]


class WorldSettings(C.Structure):
    _fields_ = [("gravity", Vec3), ("fixed_hz", C.c_float), ("max_substeps", C.c_int32),
                ("render_interpolation", C.c_int32), ("time_phases", C.c_int32), ("max_distance", C.c_float),
                ("max_chains", C.c_int32),
                ("pendulum_max_distance", C.c_float), ("teleport_distance", C.c_float),
                ("teleport_angle_degrees", C.c_float), ("ambient_wind", Vec3), ("wind_seed", C.c_uint64),
                ("ragdoll_substeps", C.c_int32), ("ragdoll_iterations", C.c_int32),
                ("ragdoll_sleep_speed", C.c_float), ("ragdoll_contact_angular_damping", C.c_float),
                ("ragdoll_max_push_speed", C.c_float), ("ragdoll_sleep_seconds", C.c_float),
                ("ragdoll_settle_damping", C.c_float), ("max_active_characters", C.c_int32),
                ("frame_budget_ms", C.c_float), ("budget_min_ragdoll_substeps", C.c_int32),
                ("device_profile", C.c_void_p), ("from_device_profile", C.c_uint32),
                ("isa", C.c_int), ("tasks", TaskHooks)]


class PhaseTimes(C.Structure):
    _fields_ = [(n, C.c_double) for n in ("gather_ms", "budget_ms", "pose_ms", "solve_ms", "writeback_ms",
                                          "pendulum_ms", "ragdoll_ms", "total_ms")]


_i32 = C.c_int32
class FrameStats(C.Structure):
    _fields_ = ([("frame", C.c_uint64), ("substeps", _i32), ("dropped_seconds", C.c_float), ("dt_rejected", _i32),
                 ("interpolation_alpha", C.c_float)] +
                [(n, _i32) for n in ("bound_chains", "bound_pendulums", "simulated_chains", "simulated_pendulums")] +
                [("simulated_instance_substeps", C.c_int64)] +
                [(n, _i32) for n in ("sleeping_chains", "culled_by_distance", "culled_by_budget", "sleeping_pendulums",
                                     "bound_ragdolls", "disabled_ragdolls", "simulated_ragdolls", "sleeping_ragdolls",
                                     "frozen_ragdolls", "ragdoll_substeps", "ragdoll_pairs", "dropped_ragdoll_pairs",
                                     "contact_ragdoll_pairs", "ragdoll_islands", "coloured_ragdoll_pairs", "bound_characters",
                                     "active_characters", "dropped_character_events", "snapped_teleport",
                                     "snapped_wake", "snapped_bad_input", "reset_non_finite", "chain_blocks",
                                     "lanes_used")] +
                [("lane_occupancy", C.c_float), ("budget_max_chains", _i32), ("budget_ragdoll_substeps", _i32),
                 ("budget_action", C.c_int), ("budget_estimate_ms", C.c_float), ("times", PhaseTimes)])


class ChainBone(C.Structure):
    _fields_ = [("parent", _i32), ("rest_local", Transform), ("virtual_tip", _i32)]


class ChainSettings(C.Structure):
    _fields_ = [("damping", C.c_float), ("stiffness", C.c_float), ("gravity_scale", C.c_float),
                ("wind_scale", C.c_float), ("node_radius", C.c_float), ("gravity_push", Vec3)]


class ChainArchetypeSettings(C.Structure):
    _fields_ = [("name", C.c_char_p), ("model", C.c_int), ("teleport_guard", _i32), ("bones", C.POINTER(ChainBone)),
                ("bone_count", _i32), ("settings", ChainSettings), ("overrides", C.c_void_p),
                ("override_count", _i32), ("colliders", C.c_void_p), ("collider_count", _i32),
                ("parent_frames", C.POINTER(_i32))]


class PoseStream(C.Structure):
    _fields_ = [("layout", C.c_int), ("base", C.c_void_p), ("element_count", _i32), ("byte_stride", _i32),
                ("translation_offset", _i32), ("rotation_offset", _i32), ("scale_offset", _i32),
                ("rotation_order", C.c_int), ("matrix_form", C.c_int), ("model_world", C.POINTER(Transform)),
                ("element_of_bone", C.POINTER(_i32)), ("element_of_bone_count", _i32),
                ("inverse_bind", C.POINTER(C.c_float)), ("inverse_bind_count", _i32)]


class ChainBinding(C.Structure):
    _fields_ = [("archetype", C.c_uint64), ("root_parent_world", C.POINTER(Transform)),
                ("animated_local", C.POINTER(Transform)), ("animated_count", _i32),
                ("output_local", C.POINTER(Transform)), ("output_count", _i32), ("bone_map", C.POINTER(_i32)),
                ("bone_map_count", _i32), ("collider_frames", C.POINTER(Transform)), ("collider_frame_count", _i32),
                ("pose_streams", C.POINTER(PoseStream)), ("pose_stream_count", _i32),
                ("output_world", C.POINTER(Transform)), ("output_world_count", _i32)]


class HumanoidBone(C.Structure):
    _fields_ = [("role", C.c_char_p), ("bone", _i32)]


class CharacterSettings(C.Structure):
    _fields_ = [("name", C.c_char_p), ("bone_count", _i32), ("bone_names", C.POINTER(C.c_char_p)),
                ("bone_parents", C.POINTER(_i32)), ("bone_rest_local", C.POINTER(Transform)),
                ("humanoid_bones", C.POINTER(HumanoidBone)), ("humanoid_bone_count", _i32)] + \
               [(n, C.c_float) for n in ("total_mass", "friction", "linear_damping", "angular_damping",
                                         "drive_frequency_hz", "drive_damping_ratio", "drive_torque_per_kg",
                                         "joint_friction_per_kg")] + \
               [("limit_source", C.c_int), ("limit_clips", C.c_void_p), ("limit_clip_count", _i32),
                ("limits_margin_degrees", C.c_float), ("collision_group", C.c_uint32), ("collision_mask", C.c_uint32),
                ("parts", C.c_void_p), ("part_count", _i32), ("ragdoll", C.c_void_p),
                ("limit_overrides", C.c_void_p), ("limit_override_count", _i32)]


class CharacterBinding(C.Structure):
    _fields_ = [("archetype", C.c_uint64), ("model_world", C.POINTER(Transform)),
                ("animated_local", C.POINTER(Transform)), ("output_local", C.POINTER(Transform)),
                ("output_world", C.POINTER(Transform)), ("bone_count", _i32), ("collide_mode", C.c_int),
                ("planar_normal", Vec3), ("freeze_when_settled", _i32), ("freeze_after_seconds", C.c_float),
                ("pose_streams", C.POINTER(PoseStream)), ("pose_stream_count", _i32)]


class CharacterState(C.Structure):
    _fields_ = [(n, _i32) for n in ("active", "blending_out", "settled", "anchored")] + \
               [("strength", C.c_float), ("generation", C.c_uint32), ("root", Transform), ("root_velocity", Vec3),
                ("speed", C.c_float), ("total_mass", C.c_float), ("unanchored_mass", C.c_float),
                ("facing", C.c_int), ("heading_degrees", C.c_float)]


class VrmAvatarBuffers(C.Structure):
    _fields_ = [("model_world", C.POINTER(Transform)), ("animated_local", C.POINTER(Transform)),
                ("output_local", C.POINTER(Transform)), ("output_world", C.POINTER(Transform)),
                ("bone_count", _i32), ("character", C.c_uint64)]


lib = C.CDLL(sys.argv[1])
W = C.c_void_p
lib.tendon_last_error.restype = C.c_char_p
lib.tendon_last_error_field.restype = C.c_char_p
lib.tendon_world_create.argtypes = [C.POINTER(WorldSettings), C.POINTER(W)]
lib.tendon_world_destroy.argtypes = [W]
lib.tendon_world_step.argtypes = [W, C.c_float, C.POINTER(FrameStats)]
lib.tendon_chain_archetype_settings_defaults.argtypes = [C.POINTER(ChainArchetypeSettings)]
lib.tendon_pose_stream_defaults.argtypes = [C.POINTER(PoseStream)]
lib.tendon_build_chain_archetype.argtypes = [W, C.POINTER(ChainArchetypeSettings), C.POINTER(C.c_uint64)]
lib.tendon_bind_chain.argtypes = [W, C.POINTER(ChainBinding), C.POINTER(C.c_uint64)]
lib.tendon_unbind_chain.argtypes = [W, C.c_uint64]
lib.tendon_get_chain_node_positions.argtypes = [W, C.c_uint64, C.POINTER(Vec3), _i32]
lib.tendon_character_settings_defaults.argtypes = [C.POINTER(CharacterSettings)]
lib.tendon_build_character_archetype.argtypes = [W, C.POINTER(CharacterSettings), C.POINTER(C.c_uint64)]
lib.tendon_character_binding_defaults.argtypes = [C.POINTER(CharacterBinding)]
lib.tendon_bind_character.argtypes = [W, C.POINTER(CharacterBinding), C.POINTER(C.c_uint64)]
lib.tendon_activate_character.argtypes = [W, C.c_uint64, C.c_void_p]
lib.tendon_get_character_state.argtypes = [W, C.c_uint64, C.POINTER(CharacterState)]
lib.tendon_load_vrm_kind.argtypes = [W, C.c_char_p, C.c_void_p, C.POINTER(C.c_uint64)]
lib.tendon_load_vrm_kind_from_memory.argtypes = [W, C.c_char_p, C.c_size_t, C.c_char_p, C.c_void_p,
                                                 C.POINTER(C.c_uint64)]
lib.tendon_bind_vrm_avatar.argtypes = [W, C.c_uint64, Transform, C.POINTER(C.c_uint64)]
lib.tendon_vrm_avatar_buffers.argtypes = [W, C.c_uint64, C.POINTER(VrmAvatarBuffers)]
lib.tendon_vrm_kind_joint_count.argtypes = [W, C.c_uint64]

settings = WorldSettings()
lib.tendon_world_settings_defaults(C.byref(settings))
check(abs(settings.fixed_hz - 60.0) < 1e-6 and settings.max_substeps == 3, "the defaults are WorldSettings'")
check(settings.frame_budget_ms == 0 and settings.budget_min_ragdoll_substeps == 4, "no millisecond budget by default")
settings.frame_budget_ms = float("nan")
check(lib.tendon_world_create(C.byref(settings), C.byref(W())) != 0, "a NaN budget is refused")
check(lib.tendon_last_error_field() == b"frame_budget_ms", "the refusal names the budget")
settings.frame_budget_ms = 0
settings.max_distance = float("inf")
settings.render_interpolation = 0
world = W()
check(lib.tendon_world_create(C.byref(settings), C.byref(world)) == 0 and world.value, "a world")

# A chain: four bones hanging from a moving root.
bones = (ChainBone * 4)(*[ChainBone(i - 1, at(0, 0, 0) if i == 0 else at(0, -0.1, 0), 0) for i in range(4)])
cs = ChainArchetypeSettings()
lib.tendon_chain_archetype_settings_defaults(C.byref(cs))
cs.name = b"python tail"
cs.bones = bones
cs.bone_count = 4
arch = C.c_uint64()
check(lib.tendon_build_chain_archetype(world, C.byref(cs), C.byref(arch)) == 0, "a chain archetype")
bones[3].parent = 9
check(lib.tendon_build_chain_archetype(world, C.byref(cs), C.byref(C.c_uint64())) == 2, "parent out of range")
check(lib.tendon_last_error_field() == b"bones[3].parent", "the refusal names the field")
root = at(0, 2, 0)
animated = (Transform * 4)(*[bones[i].rest_local for i in range(4)])
output = (Transform * 4)(*[bones[i].rest_local for i in range(4)])
binding = ChainBinding(archetype=arch.value, root_parent_world=C.pointer(root), animated_local=animated,
                       animated_count=4, output_local=output, output_count=4)
chain = C.c_uint64()
check(lib.tendon_bind_chain(world, C.byref(binding), C.byref(chain)) == 0 and chain.value != 0, "a bound chain")
stats = FrameStats()
for f in range(90):
    root.translation.x = 0.4 * math.sin(0.1 * f)
    lib.tendon_world_step(world, C.c_float(1 / 60), C.byref(stats))
check(stats.frame == 90 and stats.simulated_chains == 1 and stats.times.total_ms > 0, "stats come back")
check(stats.budget_action == 0 and stats.budget_max_chains == -1 and stats.budget_ragdoll_substeps == 0,
      "without a budget the stats say so")
nodes = (Vec3 * 4)()
check(lib.tendon_get_chain_node_positions(world, chain, nodes, 4) == 0, "node positions")
lengths = [math.dist((nodes[i].x, nodes[i].y, nodes[i].z), (nodes[i - 1].x, nodes[i - 1].y, nodes[i - 1].z))
           for i in range(1, 4)]
check(all(abs(l - 0.1) < 0.01 for l in lengths), f"links keep their length: {lengths}")
check(abs(output[1].rotation.z) + abs(output[1].rotation.x) > 1e-3, "the written pose swings")
check(lib.tendon_unbind_chain(world, chain) == 0, "unbind")
check(lib.tendon_unbind_chain(world, chain) == 10, "a stale handle is refused")

# The same chain with a pose stream: model-space column-major 4x4s, as three.js's
# Skeleton.boneMatrices holds them, under a model frame 1 m to the left.
matrices = (C.c_float * (16 * 4))()
model = at(-1, 0, 0)
stream = PoseStream()
lib.tendon_pose_stream_defaults(C.byref(stream))
stream.layout = 1  # TENDON_POSE_MODEL_MATRIX
stream.base = C.cast(matrices, C.c_void_p)
stream.element_count = 4
stream.model_world = C.pointer(model)
binding.pose_streams = C.pointer(stream)
binding.pose_stream_count = 1
check(lib.tendon_bind_chain(world, C.byref(binding), C.byref(chain)) == 0, "a chain with a pose stream")
for f in range(30):
    root.translation.x = 0.4 * math.sin(0.1 * f)
    lib.tendon_world_step(world, C.c_float(1 / 60), C.byref(stats))
check(abs(matrices[12] - (root.translation.x + 1)) < 1e-5 and abs(matrices[13] - root.translation.y) < 1e-5
      and matrices[15] == 1.0, "bone 0's matrix sits at the root parent, in the model's space")
check(lib.tendon_get_chain_node_positions(world, chain, nodes, 4) == 0, "node positions")
check(all(abs(matrices[16 * k + 12] - (nodes[k].x + 1)) < 0.02 for k in range(4)), "every bone's matrix follows its node")
check(lib.tendon_unbind_chain(world, chain) == 0, "unbind the streamed chain")

# A character over an 18-bone humanoid named by VRM's roles.
names = [b"hips", b"spine", b"neck", b"head", b"leftUpperArm", b"leftLowerArm", b"leftHand", b"rightUpperArm",
         b"rightLowerArm", b"rightHand", b"leftUpperLeg", b"leftLowerLeg", b"leftFoot", b"leftToes",
         b"rightUpperLeg", b"rightLowerLeg", b"rightFoot", b"rightToes"]
parents = [-1, 0, 1, 2, 1, 4, 5, 1, 7, 8, 0, 10, 11, 12, 0, 14, 15, 16]
offsets = [(0, 1, 0), (0, .25, 0), (0, .3, 0), (0, .1, 0), (.18, .25, 0), (.28, 0, 0), (.25, 0, 0), (-.18, .25, 0),
           (-.28, 0, 0), (-.25, 0, 0), (.1, -.05, 0), (0, -.45, 0), (0, -.45, 0), (0, -.05, .12), (-.1, -.05, 0),
           (0, -.45, 0), (0, -.45, 0), (0, -.05, .12)]
n = len(names)
rest = (Transform * n)(*[at(*o) for o in offsets])
char_settings = CharacterSettings()
lib.tendon_character_settings_defaults(C.byref(char_settings))
char_settings.bone_count = n
char_settings.bone_names = (C.c_char_p * n)(*names)
char_settings.bone_parents = (_i32 * n)(*parents)
char_settings.bone_rest_local = rest
char_arch = C.c_uint64()
check(lib.tendon_build_character_archetype(world, C.byref(char_settings), C.byref(char_arch)) == 0, "a character")
model = at(0, 0, 0)
c_animated = (Transform * n)(*rest)
c_output = (Transform * n)(*rest)
c_world = (Transform * n)(*rest)
cb = CharacterBinding()
lib.tendon_character_binding_defaults(C.byref(cb))
cb.archetype = char_arch.value
cb.model_world = C.pointer(model)
cb.animated_local = c_animated
cb.output_local = c_output
cb.output_world = c_world
cb.bone_count = n
character = C.c_uint64()
check(lib.tendon_bind_character(world, C.byref(cb), C.byref(character)) == 0, "a bound character")
check(lib.tendon_activate_character(world, character, None) == 0, "activated")
for f in range(120):
    lib.tendon_world_step(world, C.c_float(1 / 60), None)
state = CharacterState()
check(lib.tendon_get_character_state(world, character, C.byref(state)) == 0 and state.active == 1, "active")
check(c_world[0].translation.y < 0.6, f"the ragdolled hips fell: y = {c_world[0].translation.y}")
check(all(math.isfinite(c_output[i].rotation.w) for i in range(n)), "finite poses")

data = os.environ.get("TENDON_SHARED_DATA", "")
godette = os.path.join(data, "vrm/godette/Godette_vrm_v4.vrm")
if data and os.path.exists(godette):
    kind = C.c_uint64()
    check(lib.tendon_load_vrm_kind(world, godette.encode(), None, C.byref(kind)) == 0, "a VRM by path")
    check(lib.tendon_vrm_kind_joint_count(world, kind) == 16, "Godette's 16 spring joints")
    blob = open(godette, "rb").read()
    kind2 = C.c_uint64()
    check(lib.tendon_load_vrm_kind_from_memory(world, blob, len(blob), b"godette.vrm", None, C.byref(kind2)) == 0,
          "a VRM from memory")
    avatar = C.c_uint64()
    check(lib.tendon_bind_vrm_avatar(world, kind, at(3, 0, 0), C.byref(avatar)) == 0, "an avatar")
    buf = VrmAvatarBuffers()
    check(lib.tendon_vrm_avatar_buffers(world, avatar, C.byref(buf)) == 0 and buf.bone_count == 71, "its buffers")
    for f in range(60):
        buf.model_world[0].translation.x = 3 + 0.5 * math.sin(0.2 * f)
        lib.tendon_world_step(world, C.c_float(1 / 60), None)
    swung = sum(1 for i in range(buf.bone_count)
                if abs(buf.output_local[i].rotation.x - buf.animated_local[i].rotation.x) > 1e-4)
    check(swung >= 4, f"the springs swing ({swung} bones off the animation)")
else:
    print("ctypes_test: ../shared/data not found, the VRM part is skipped")

lib.tendon_world_destroy(world)
print(f"{passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
