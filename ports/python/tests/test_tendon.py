"""ports/python/tests/test_tendon.py: the tendon package (cffi over tendon_c.h) against a
real libtendon_c: a chain and a character from plain arrays, pose streams (model matrices
and a skinning palette), refusals as TendonError with the library's field, and, with
../shared/data present, Godette (VRM) by path and from memory, bound, stepped and skinned.

    TENDON_C_LIBRARY=build/ports/c/libtendon_c.so TENDON_SHARED_DATA=../shared/data \
        python3 -m unittest discover -s ports/python/tests
Skips (with the reason) when cffi is not installed or the library is not given.
"""
import math
import os
import sys
import unittest

# The source tree's package, unless the installed one is under test (tests/consumer).
INSTALLED = os.environ.get("TENDON_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
try:
    import tendon
    from tendon import TendonError, check, ffi
    SKIP = None
except ImportError as error:  # cffi missing: Debian's python3-cffi
    SKIP = f"the tendon package cannot be imported ({error}); apt-get install python3-cffi"

DT = 1.0 / 60.0


def godette_path():
    data = os.environ.get("TENDON_SHARED_DATA", "")
    path = os.path.join(data, "vrm", "godette", "Godette_vrm_v4.vrm")
    return path if data and os.path.exists(path) else None


def transform(x=0.0, y=0.0, z=0.0):
    return {"translation": {"x": x, "y": y, "z": z}, "rotation": {"x": 0, "y": 0, "z": 0, "w": 1},
            "scale": {"x": 1, "y": 1, "z": 1}}


def matrix_of(t):
    """Column-major 4x4 of a TendonTransform: translation * rotation * diag(scale)."""
    q, s, p = t.rotation, t.scale, t.translation
    x, y, z, w = q.x, q.y, q.z, q.w
    r = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    scale = (s.x, s.y, s.z)
    m = [0.0] * 16
    for column in range(3):
        for row in range(3):
            m[4 * column + row] = r[row][column] * scale[column]
    m[12], m[13], m[14], m[15] = p.x, p.y, p.z, 1.0
    return m


def multiply(a, b):
    """a * b, both column-major 4x4."""
    return [sum(a[4 * k + row] * b[4 * column + k] for k in range(4)) for column in range(4) for row in range(4)]


def invert_affine(m):
    """The inverse of a column-major affine 4x4 (3x3 by its adjugate, then the translation)."""
    a = [[m[4 * c + r] for c in range(3)] for r in range(3)]
    det = (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
           + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    inv = [[0.0] * 3 for _ in range(3)]
    for r in range(3):
        for c in range(3):
            rows = [i for i in range(3) if i != c]
            cols = [j for j in range(3) if j != r]
            minor = a[rows[0]][cols[0]] * a[rows[1]][cols[1]] - a[rows[0]][cols[1]] * a[rows[1]][cols[0]]
            inv[r][c] = (-1) ** (r + c) * minor / det
    t = [m[12], m[13], m[14]]
    out = [0.0] * 16
    for c in range(3):
        for r in range(3):
            out[4 * c + r] = inv[r][c]
    for r in range(3):
        out[12 + r] = -sum(inv[r][k] * t[k] for k in range(3))
    out[15] = 1.0
    return out


@unittest.skipIf(SKIP is not None, SKIP or "")
class TendonPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.environ.get("TENDON_C_LIBRARY") and tendon.library_path() == "tendon_c":
            raise unittest.SkipTest("TENDON_C_LIBRARY is not set and no installed library was recorded")
        cls.lib = tendon.lib

    def setUp(self):
        lib = self.lib
        self.settings = ffi.new("TendonWorldSettings*")
        lib.tendon_world_settings_defaults(self.settings)
        self.settings.max_distance = math.inf
        self.settings.render_interpolation = 0
        world = ffi.new("TendonWorld**")
        check(lib.tendon_world_create(self.settings, world))
        self.world = world[0]
        self.addCleanup(lib.tendon_world_destroy, self.world)

    def hanging_chain(self):
        """Four bones hanging 0.1 m apart under a root parent at (0, 2, 0); keeps its arrays."""
        lib = self.lib
        bones = ffi.new("TendonChainBone[]", [{"parent": i - 1, "rest_local": transform(0, 0 if i == 0 else -0.1, 0)}
                                               for i in range(4)])
        settings = ffi.new("TendonChainArchetypeSettings*")
        lib.tendon_chain_archetype_settings_defaults(settings)
        name = ffi.new("char[]", b"python tail")
        settings.name, settings.bones, settings.bone_count = name, bones, 4
        archetype = ffi.new("TendonChainArchetypeId*")
        check(lib.tendon_build_chain_archetype(self.world, settings, archetype))
        keep = {"bones": bones, "settings": settings, "name": name, "root": ffi.new("TendonTransform*", transform(0, 2, 0)),
                "animated": ffi.new("TendonTransform[]", [bones[i].rest_local for i in range(4)]),
                "output": ffi.new("TendonTransform[]", [bones[i].rest_local for i in range(4)])}
        binding = ffi.new("TendonChainBinding*", {"archetype": archetype[0], "root_parent_world": keep["root"],
                                                   "animated_local": keep["animated"], "animated_count": 4,
                                                   "output_local": keep["output"], "output_count": 4})
        keep["binding"] = binding
        return keep

    def swing(self, root, frames):
        stats = ffi.new("TendonFrameStats*")
        for frame in range(frames):
            root.translation.x = 0.4 * math.sin(0.1 * frame)
            self.lib.tendon_world_step(self.world, DT, stats)
        return stats

    def test_TheInstalledPackageFindsItsOwnHeaderAndLibrary(self):
        if not INSTALLED:
            self.skipTest("the source tree's package is under test (TENDON_TEST_INSTALLED is not 1)")
        package = os.path.dirname(os.path.abspath(tendon.__file__))
        prefix = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(package))))
        for found in (tendon.header_path(), tendon.library_path()):
            self.assertTrue(os.path.exists(found), found)
            self.assertTrue(os.path.abspath(found).startswith(prefix + os.sep), f"{found} is under {prefix}")

    def test_TheDefaultsAreTheLibrarysWorldSettings(self):
        defaults = ffi.new("TendonWorldSettings*")
        self.lib.tendon_world_settings_defaults(defaults)
        self.assertAlmostEqual(defaults.fixed_hz, 60.0, places=5)
        self.assertEqual(defaults.max_substeps, 3)
        self.assertEqual(defaults.frame_budget_ms, 0)
        self.assertEqual(defaults.budget_min_ragdoll_substeps, 4)
        self.assertEqual(self.lib.TENDON_ISA_AUTO, 0)
        self.assertEqual(self.lib.TENDON_CALLER_THREAD, 0xFFFFFFFF, "integer macros come through")

    def test_ARefusedWorldRaisesTendonErrorNamingTheField(self):
        self.settings.frame_budget_ms = math.nan
        with self.assertRaises(TendonError) as caught:
            check(self.lib.tendon_world_create(self.settings, ffi.new("TendonWorld**")))
        self.assertEqual(caught.exception.field, "frame_budget_ms")
        self.assertNotEqual(caught.exception.code, 0)
        self.assertIn("frame_budget_ms", str(caught.exception))

    def test_ARefusedChainRaisesWithItsCodeFieldAndItem(self):
        keep = self.hanging_chain()
        keep["bones"][3].parent = 9
        with self.assertRaises(TendonError) as caught:
            check(self.lib.tendon_build_chain_archetype(self.world, keep["settings"],
                                                        ffi.new("TendonChainArchetypeId*")))
        error = caught.exception
        self.assertEqual(error.code, self.lib.TENDON_ERROR_PARENT_OUT_OF_RANGE)
        self.assertEqual(error.name, "parent_out_of_range")
        self.assertEqual(error.field, "bones[3].parent")
        self.assertEqual(error.item, 3)
        self.assertTrue(error.message)

    def test_AChainFromPlainArraysSwingsKeepsItsLengthsAndUnbindsOnce(self):
        lib = self.lib
        keep = self.hanging_chain()
        chain = ffi.new("TendonChainId*")
        check(lib.tendon_bind_chain(self.world, keep["binding"], chain))
        self.assertNotEqual(chain[0], 0)
        stats = self.swing(keep["root"], 90)
        self.assertEqual(stats.frame, 90)
        self.assertEqual(stats.simulated_chains, 1)
        self.assertEqual((stats.budget_action, stats.budget_max_chains, stats.budget_ragdoll_substeps),
                         (lib.TENDON_BUDGET_OFF, -1, 0), "without a budget the stats say so")
        nodes = ffi.new("TendonVec3[]", 4)
        check(lib.tendon_get_chain_node_positions(self.world, chain[0], nodes, 4))
        for i in range(1, 4):
            length = math.dist((nodes[i].x, nodes[i].y, nodes[i].z), (nodes[i - 1].x, nodes[i - 1].y, nodes[i - 1].z))
            self.assertAlmostEqual(length, 0.1, delta=0.01)
        out = keep["output"][1].rotation
        self.assertGreater(abs(out.z) + abs(out.x), 1e-3, "the written pose swings")
        check(lib.tendon_unbind_chain(self.world, chain[0]))
        with self.assertRaises(TendonError) as caught:
            check(lib.tendon_unbind_chain(self.world, chain[0]))
        self.assertEqual(caught.exception.code, lib.TENDON_ERROR_STALE_HANDLE)

    def test_ASkinningPaletteIsTheModelMatrixTimesTheInverseBind(self):
        # Two streams on one chain, under a model frame 1 m to the left: model matrices (as
        # three.js's Skeleton.boneMatrices) and a skinning palette over inverse binds of
        # the rest pose, which must be their product, and identity at rest.
        lib = self.lib
        keep = self.hanging_chain()
        model = ffi.new("TendonTransform*", transform(-1, 0, 0))
        matrices = ffi.new("float[]", 16 * 4)
        palette = ffi.new("float[]", 16 * 4)
        rest_model = [matrix_of(ffi.new("TendonTransform*", transform(1, 2 - 0.1 * k, 0))) for k in range(4)]
        inverse_bind = ffi.new("float[]", [v for m in rest_model for v in invert_affine(m)])
        streams = ffi.new("TendonPoseStream[]", 2)
        for stream, layout, base in ((streams[0], lib.TENDON_POSE_MODEL_MATRIX, matrices),
                                     (streams[1], lib.TENDON_POSE_SKINNING_MATRIX, palette)):
            lib.tendon_pose_stream_defaults(ffi.addressof(stream))
            stream.layout, stream.base, stream.element_count, stream.model_world = layout, base, 4, model
        streams[1].inverse_bind, streams[1].inverse_bind_count = inverse_bind, 64
        keep["binding"].pose_streams, keep["binding"].pose_stream_count = streams, 2
        chain = ffi.new("TendonChainId*")
        check(lib.tendon_bind_chain(self.world, keep["binding"], chain))
        self.swing(keep["root"], 30)
        nodes = ffi.new("TendonVec3[]", 4)
        check(lib.tendon_get_chain_node_positions(self.world, chain[0], nodes, 4))
        for k in range(4):
            self.assertAlmostEqual(matrices[16 * k + 12], nodes[k].x + 1, delta=0.02, msg=f"bone {k} follows its node")
            product = multiply(list(matrices[16 * k:16 * k + 16]), invert_affine(rest_model[k]))
            for i in range(16):
                self.assertAlmostEqual(palette[16 * k + i], product[i], delta=1e-4, msg=f"palette[{k}][{i}]")
        self.assertGreater(abs(palette[16 * 3 + 12]), 1e-3, "the swung tip's palette entry is not the identity")
        self.assertEqual(matrices[15], 1.0)

    def test_ASkinningStreamWithoutInverseBindsIsRefusedByField(self):
        lib = self.lib
        keep = self.hanging_chain()
        stream = ffi.new("TendonPoseStream*")
        lib.tendon_pose_stream_defaults(stream)
        palette = ffi.new("float[]", 64)
        stream.layout, stream.base, stream.element_count = lib.TENDON_POSE_SKINNING_MATRIX, palette, 4
        keep["binding"].pose_streams, keep["binding"].pose_stream_count = stream, 1
        with self.assertRaises(TendonError) as caught:
            check(lib.tendon_bind_chain(self.world, keep["binding"], ffi.new("TendonChainId*")))
        self.assertIn("inverse_bind", caught.exception.field)

    def test_ACharacterFromPlainArraysFallsWhenActivated(self):
        lib = self.lib
        names = [b"hips", b"spine", b"neck", b"head", b"leftUpperArm", b"leftLowerArm", b"leftHand", b"rightUpperArm",
                 b"rightLowerArm", b"rightHand", b"leftUpperLeg", b"leftLowerLeg", b"leftFoot", b"leftToes",
                 b"rightUpperLeg", b"rightLowerLeg", b"rightFoot", b"rightToes"]
        parents = [-1, 0, 1, 2, 1, 4, 5, 1, 7, 8, 0, 10, 11, 12, 0, 14, 15, 16]
        offsets = [(0, 1, 0), (0, .25, 0), (0, .3, 0), (0, .1, 0), (.18, .25, 0), (.28, 0, 0), (.25, 0, 0),
                   (-.18, .25, 0), (-.28, 0, 0), (-.25, 0, 0), (.1, -.05, 0), (0, -.45, 0), (0, -.45, 0),
                   (0, -.05, .12), (-.1, -.05, 0), (0, -.45, 0), (0, -.45, 0), (0, -.05, .12)]
        n = len(names)
        name_strings = [ffi.new("char[]", name) for name in names]
        rest = ffi.new("TendonTransform[]", [transform(*o) for o in offsets])
        settings = ffi.new("TendonCharacterSettings*")
        lib.tendon_character_settings_defaults(settings)
        settings.bone_count = n
        bone_names = ffi.new("const char*[]", name_strings)
        bone_parents = ffi.new("int32_t[]", parents)
        settings.bone_names, settings.bone_parents, settings.bone_rest_local = bone_names, bone_parents, rest
        archetype = ffi.new("TendonCharacterArchetypeId*")
        check(lib.tendon_build_character_archetype(self.world, settings, archetype))
        model = ffi.new("TendonTransform*", transform())
        animated, output, world_out = (ffi.new("TendonTransform[]", list(rest)) for _ in range(3))
        binding = ffi.new("TendonCharacterBinding*")
        lib.tendon_character_binding_defaults(binding)
        binding.archetype, binding.model_world, binding.bone_count = archetype[0], model, n
        binding.animated_local, binding.output_local, binding.output_world = animated, output, world_out
        character = ffi.new("TendonCharacterId*")
        check(lib.tendon_bind_character(self.world, binding, character))
        check(lib.tendon_activate_character(self.world, character[0], ffi.NULL))
        for _ in range(120):
            lib.tendon_world_step(self.world, DT, ffi.NULL)
        state = ffi.new("TendonCharacterState*")
        check(lib.tendon_get_character_state(self.world, character[0], state))
        self.assertEqual(state.active, 1)
        self.assertLess(world_out[0].translation.y, 0.6, "the ragdolled hips fell")
        self.assertTrue(all(math.isfinite(output[i].rotation.w) for i in range(n)))


@unittest.skipIf(SKIP is not None, SKIP or "")
class Godette(unittest.TestCase):
    """Godette (../shared/data/vrm/godette): 71 bones, 16 spring joints, one skinned mesh."""

    @classmethod
    def setUpClass(cls):
        if not os.environ.get("TENDON_C_LIBRARY") and tendon.library_path() == "tendon_c":
            raise unittest.SkipTest("TENDON_C_LIBRARY is not set and no installed library was recorded")
        cls.path = godette_path()
        if cls.path is None:
            raise unittest.SkipTest("../shared/data is missing (set TENDON_SHARED_DATA): Godette is not there")
        cls.lib = tendon.lib

    def setUp(self):
        lib = self.lib
        settings = ffi.new("TendonWorldSettings*")
        lib.tendon_world_settings_defaults(settings)
        settings.max_distance = math.inf
        settings.render_interpolation = 0
        world = ffi.new("TendonWorld**")
        check(lib.tendon_world_create(settings, world))
        self.world = world[0]
        self.addCleanup(lib.tendon_world_destroy, self.world)
        self.kind = ffi.new("TendonVrmKindId*")
        check(lib.tendon_load_vrm_kind(self.world, self.path.encode(), ffi.NULL, self.kind))

    def test_GodetteLoadsByPathAndFromMemoryAndHerSpringsSwing(self):
        lib = self.lib
        self.assertEqual(lib.tendon_vrm_kind_joint_count(self.world, self.kind[0]), 16)
        with open(self.path, "rb") as handle:
            blob = handle.read()
        from_memory = ffi.new("TendonVrmKindId*")
        check(lib.tendon_load_vrm_kind_from_memory(self.world, blob, len(blob), b"godette.vrm", ffi.NULL, from_memory))
        self.assertEqual(lib.tendon_vrm_kind_bone_count(self.world, from_memory[0]), 71)
        avatar = ffi.new("TendonVrmAvatarId*")
        check(lib.tendon_bind_vrm_avatar(self.world, self.kind[0], transform(3, 0, 0), avatar))
        buffers = ffi.new("TendonVrmAvatarBuffers*")
        check(lib.tendon_vrm_avatar_buffers(self.world, avatar[0], buffers))
        self.assertEqual(buffers.bone_count, 71)
        for frame in range(60):
            buffers.model_world[0].translation.x = 3 + 0.5 * math.sin(0.2 * frame)
            lib.tendon_world_step(self.world, DT, ffi.NULL)
        swung = sum(1 for i in range(buffers.bone_count)
                    if abs(buffers.output_local[i].rotation.x - buffers.animated_local[i].rotation.x) > 1e-4)
        self.assertGreaterEqual(swung, 4, "the springs swing")

    def test_AFileThatIsNotThereRaisesNamingIt(self):
        with self.assertRaises(TendonError) as caught:
            check(self.lib.tendon_load_vrm_kind(self.world, b"/nonexistent/avatar.vrm", ffi.NULL,
                                                ffi.new("TendonVrmKindId*")))
        self.assertIn("avatar.vrm", caught.exception.message)

    def test_GodettesSkinningPaletteFollowsTheHairAndIsModelTimesInverseBind(self):
        self.skinning_palette_through_the_avatar_binding(self.lib)

    def skinning_palette_through_the_avatar_binding(self, lib):
        kind = self.kind[0]
        skeleton = ffi.new("TendonVrmSkeleton*")
        check(lib.tendon_vrm_kind_skeleton(self.world, kind, skeleton))
        self.assertEqual(skeleton.bone_count, 71)
        self.assertGreaterEqual(lib.tendon_vrm_kind_skin_count(self.world, kind), 1)
        # The skin with the most joints is the body's (the hair's joints are in it).
        skins = []
        for index in range(lib.tendon_vrm_kind_skin_count(self.world, kind)):
            skin = ffi.new("TendonVrmSkin*")
            check(lib.tendon_vrm_kind_skin(self.world, kind, index, skin))
            skins.append(skin)
        skin = max(skins, key=lambda s: s.joint_count)
        joints = [skin.joints[j] for j in range(skin.joint_count)]
        names = [ffi.string(skeleton.names[b]).decode() for b in range(skeleton.bone_count)]
        # Each bone's palette element is its joint index in the skin (-1: not a joint), and
        # its inverse bind the skin's, as glTF's skins say (the identity for other bones).
        element_of_bone = ffi.new("int32_t[]", [joints.index(b) if b in joints else -1
                                                for b in range(skeleton.bone_count)])
        identity = [1.0 if i in (0, 5, 10, 15) else 0.0 for i in range(16)]
        inverse = []
        for b in range(skeleton.bone_count):
            if b in joints:
                inverse.extend(skin.inverse_binds[16 * joints.index(b) + i] for i in range(16))
            else:
                inverse.extend(identity)
        inverse_bind = ffi.new("float[]", inverse)
        palette = ffi.new("float[]", 16 * skin.joint_count)
        matrices = ffi.new("float[]", 16 * skin.joint_count)
        streams = ffi.new("TendonPoseStream[]", 2)
        for stream, layout, base in ((streams[0], lib.TENDON_POSE_SKINNING_MATRIX, palette),
                                     (streams[1], lib.TENDON_POSE_MODEL_MATRIX, matrices)):
            lib.tendon_pose_stream_defaults(ffi.addressof(stream))
            stream.layout, stream.base, stream.element_count = layout, base, skin.joint_count
            stream.element_of_bone, stream.element_of_bone_count = element_of_bone, skeleton.bone_count
        streams[0].inverse_bind, streams[0].inverse_bind_count = inverse_bind, len(inverse)
        binding = ffi.new("TendonVrmAvatarBinding*")
        lib.tendon_vrm_avatar_binding_defaults(binding)
        binding.pose_streams, binding.pose_stream_count = streams, 2  # model_world NULL: the avatar's model space
        avatar = ffi.new("TendonVrmAvatarId*")
        check(lib.tendon_bind_vrm_avatar_with(self.world, kind, binding, avatar))
        buffers = ffi.new("TendonVrmAvatarBuffers*")
        check(lib.tendon_vrm_avatar_buffers(self.world, avatar[0], buffers))
        hair = [j for j, b in enumerate(joints) if "hair" in names[b].lower()]
        self.assertTrue(hair, f"Godette's skin has hair joints ({[names[b] for b in joints]})")
        lib.tendon_world_step(self.world, DT, ffi.NULL)
        before = list(palette)
        for frame in range(60):
            buffers.model_world[0].translation.x = 0.5 * math.sin(0.2 * frame)
            lib.tendon_world_step(self.world, DT, ffi.NULL)
        self.assertTrue(all(math.isfinite(v) for v in palette), "the palette is finite")
        moved = max(abs(palette[16 * j + i] - before[16 * j + i]) for j in hair for i in range(16))
        self.assertGreater(moved, 1e-3, "the hair's palette entries move with the simulated hair (in model space)")
        for j in range(skin.joint_count):
            expected = multiply(list(matrices[16 * j:16 * j + 16]),
                                [skin.inverse_binds[16 * j + i] for i in range(16)])
            for i in range(16):
                self.assertAlmostEqual(palette[16 * j + i], expected[i], delta=1e-3,
                                       msg=f"{names[joints[j]]}: palette = model matrix * inverse bind")
        # A refusal names the field: a pose stream with a wrong layout value.
        streams[0].layout = 7
        with self.assertRaises(TendonError) as caught:
            check(lib.tendon_bind_vrm_avatar_with(self.world, kind, binding, ffi.new("TendonVrmAvatarId*")))
        self.assertIn("layout", caught.exception.field)
        # The arrays the streams name die with this function: unbind first, as the C ABI
        # asks (an unbind hands the animated pose back through the streams, and
        # tendon_world_destroy unbinds whatever is still bound).
        check(lib.tendon_unbind_vrm_avatar(self.world, avatar[0]))


if __name__ == "__main__":
    if SKIP is not None:
        print(f"test_tendon: skipped: {SKIP}")
        sys.exit(77)  # CTest's SKIP_RETURN_CODE
    unittest.main(verbosity=2)
