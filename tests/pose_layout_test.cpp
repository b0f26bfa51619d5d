// Pose streams (tendon/pose_layout.h): every layout a host can ask for equals the TRS
// output composed by hand, for chains (kTendon and split kVrm, every instruction set) and
// ragdolls; bad streams are refused at bind with the stream and field named.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "allocation_counter.h"
#include "character_test_util.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kTolerance = 1e-6f;

// The host's own bone struct: scale first, then a wxyz rotation, then the translation,
// and 4 bytes of its own that must survive.
struct HostBone {
  float scale[3];
  float wxyz[4];
  float position[3];
  uint32_t flags;
};
static_assert(sizeof(HostBone) == 44);

// A row-major 3x4 matrix of translation * rotation * diag(scale), written out here on its
// own so the test does not lean on the kernel's helper.
struct M34 {
  float m[3][4];
};
M34 MatrixOf(const Transform& t) {
  const Quat q = t.rotation;
  const float r[3][3] = {{1 - 2 * (q.y * q.y + q.z * q.z), 2 * (q.x * q.y - q.w * q.z), 2 * (q.x * q.z + q.w * q.y)},
                         {2 * (q.x * q.y + q.w * q.z), 1 - 2 * (q.x * q.x + q.z * q.z), 2 * (q.y * q.z - q.w * q.x)},
                         {2 * (q.x * q.z - q.w * q.y), 2 * (q.y * q.z + q.w * q.x), 1 - 2 * (q.x * q.x + q.y * q.y)}};
  const float s[3] = {t.scale.x, t.scale.y, t.scale.z};
  const float p[3] = {t.translation.x, t.translation.y, t.translation.z};
  M34 out;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) out.m[i][j] = r[i][j] * s[j];
    out.m[i][3] = p[i];
  }
  return out;
}
M34 Multiply(const M34& a, const M34& b) {
  M34 out;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      out.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j] + (j == 3 ? a.m[i][3] : 0.0f);
    }
  }
  return out;
}
// The inverse of an affine matrix by cofactors (general, not assuming a rotation).
M34 Inverse(const M34& a) {
  const float(*m)[4] = a.m;
  const float det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                    m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  M34 inv;
  inv.m[0][0] = (m[1][1] * m[2][2] - m[1][2] * m[2][1]) / det;
  inv.m[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
  inv.m[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
  inv.m[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) / det;
  inv.m[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
  inv.m[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det;
  inv.m[2][0] = (m[1][0] * m[2][1] - m[1][1] * m[2][0]) / det;
  inv.m[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det;
  inv.m[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det;
  for (int i = 0; i < 3; ++i) inv.m[i][3] = -(inv.m[i][0] * m[0][3] + inv.m[i][1] * m[1][3] + inv.m[i][2] * m[2][3]);
  return inv;
}
// A column-major 4x4 (glTF's layout) of an affine matrix.
std::vector<float> ColumnMajor(const M34& a) {
  std::vector<float> out(16);
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 3; ++r) out[c * 4 + r] = a.m[r][c];
    out[c * 4 + 3] = c == 3 ? 1.0f : 0.0f;
  }
  return out;
}
M34 FromColumnMajor(const float* f) {
  M34 out;
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 3; ++r) out.m[r][c] = f[c * 4 + r];
  }
  return out;
}
M34 FromRowMajor(const float* f) {
  M34 out;
  std::memcpy(out.m, f, sizeof(out.m));
  return out;
}
void ExpectNear(const M34& got, const M34& want, const std::string& what) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(got.m[i][j], want.m[i][j], kTolerance) << what << " [" << i << "][" << j << "]";
  }
}

// A branching chain (a root with two strands) inside a whole-skeleton host buffer.
ChainArchetypeSettings Branching() {
  ChainArchetypeSettings s = Strand(4, 0.12f, Vec3{0, -1, 0});
  ChainBone side;
  side.parent = 1;
  side.rest_local = Transform{{0.08f, -0.05f, 0.02f}, AxisAngle(Vec3{0, 0, 1}, 0.4f), {1.1f, 0.9f, 1.0f}};
  s.bones.push_back(side);
  ChainBone side_tip;
  side_tip.parent = 4;
  side_tip.rest_local.translation = {0.1f, 0, 0};
  s.bones.push_back(side_tip);
  s.settings.stiffness = 0.3f;
  return s;
}

// Four streams at once: the host's bone struct, model 4x4, row-major 3x4, and a palette
// with a joint remap; the bones sit in a 12-bone skeleton buffer at bone_map's places.
struct StreamHost {
  static constexpr int kSkeleton = 12;
  std::vector<HostBone> bones = std::vector<HostBone>(kSkeleton);
  std::vector<float> model4x4 = std::vector<float>(16 * kSkeleton, -7.0f);
  std::vector<float> model3x4 = std::vector<float>(12 * kSkeleton, -7.0f);
  std::vector<float> palette = std::vector<float>(12 * 8, -7.0f);
  std::vector<int32_t> palette_joint;  // per bone: its palette entry
  std::vector<float> inverse_bind;     // per bone, column-major 4x4
  Transform model{{0.3f, 1.0f, -0.2f}, AxisAngle(NormalizeOr(Vec3{0.2f, 1, 0.1f}, Vec3{0, 1, 0}), 0.7f), {1.2f, 1.2f, 1.2f}};
  std::vector<PoseStream> streams;

  void Make(int bones_in_chain) {
    for (HostBone& b : bones) b.flags = 0xC0FFEEu;
    palette_joint.clear();
    inverse_bind.clear();
    for (int k = 0; k < bones_in_chain; ++k) {
      palette_joint.push_back((k * 3 + 1) % 8);  // scattered, distinct for up to 8 bones
      const Transform bind{{0.01f * static_cast<float>(k), -0.1f * static_cast<float>(k), 0.05f},
                           AxisAngle(Vec3{1, 0, 0}, 0.1f * static_cast<float>(k)), {1, 1, 1}};
      const std::vector<float> ib = ColumnMajor(Inverse(MatrixOf(bind)));
      inverse_bind.insert(inverse_bind.end(), ib.begin(), ib.end());
    }
    streams.assign(4, PoseStream{});
    PoseStream& trs = streams[0];
    trs.base = bones.data();
    trs.element_count = kSkeleton;
    trs.byte_stride = sizeof(HostBone);
    trs.scale_offset = offsetof(HostBone, scale);
    trs.rotation_offset = offsetof(HostBone, wxyz);
    trs.translation_offset = offsetof(HostBone, position);
    trs.rotation_order = QuatOrder::kWxyz;
    PoseStream& m4 = streams[1];
    m4.layout = PoseLayout::kModelMatrix;
    m4.base = model4x4.data();
    m4.element_count = kSkeleton;
    m4.model_world = &model;
    PoseStream& m3 = streams[2];
    m3.layout = PoseLayout::kModelMatrix;
    m3.matrix_form = MatrixForm::kRowMajor3x4;
    m3.base = model3x4.data();
    m3.element_count = kSkeleton;
    PoseStream& pal = streams[3];
    pal.layout = PoseLayout::kSkinningMatrix;
    pal.matrix_form = MatrixForm::kRowMajor3x4;
    pal.base = palette.data();
    pal.element_count = 8;
    pal.model_world = &model;
    pal.element_of_bone = palette_joint;
    pal.inverse_bind = inverse_bind;
  }

  // Every stream against the TRS output composed by hand: `local[k]` the bone's written
  // local transform and `world[k]` its world frame, `element[k]` its skeleton index.
  void Check(const std::vector<Transform>& local, const std::vector<Transform>& world,
             const std::vector<int32_t>& element, const std::string& what) const {
    const M34 to_model = Inverse(MatrixOf(model));
    for (std::size_t k = 0; k < local.size(); ++k) {
      const std::string bone = what + " bone " + std::to_string(k);
      const HostBone& h = bones[element[k]];
      EXPECT_EQ(h.flags, 0xC0FFEEu) << bone << ": the host's own field was touched";
      const float want_trs[10] = {local[k].scale.x, local[k].scale.y, local[k].scale.z,
                                  local[k].rotation.w, local[k].rotation.x, local[k].rotation.y, local[k].rotation.z,
                                  local[k].translation.x, local[k].translation.y, local[k].translation.z};
      const float got_trs[10] = {h.scale[0], h.scale[1], h.scale[2], h.wxyz[0], h.wxyz[1], h.wxyz[2], h.wxyz[3],
                                 h.position[0], h.position[1], h.position[2]};
      for (int f = 0; f < 10; ++f) EXPECT_EQ(got_trs[f], want_trs[f]) << bone << " TRS field " << f;
      const M34 model_space = Multiply(to_model, MatrixOf(world[k]));
      ExpectNear(FromColumnMajor(&model4x4[16 * element[k]]), model_space, bone + " model 4x4");
      for (int r = 0; r < 3; ++r) EXPECT_EQ(model4x4[16 * element[k] + 4 * r + 3], 0.0f) << bone;
      EXPECT_EQ(model4x4[16 * element[k] + 15], 1.0f) << bone;
      ExpectNear(FromRowMajor(&model3x4[12 * element[k]]), MatrixOf(world[k]), bone + " world 3x4");
      ExpectNear(FromRowMajor(&palette[12 * palette_joint[k]]),
                 Multiply(model_space, FromColumnMajor(&inverse_bind[16 * k])), bone + " palette");
    }
  }
};

// The world frames of a chain's bones, composed by hand from what it wrote.
std::vector<Transform> ChainWorld(const ChainArchetypeSettings& s, const Transform& root_parent,
                                  const std::vector<Transform>& local) {
  std::vector<Transform> world(local.size());
  for (std::size_t k = 0; k < local.size(); ++k) {
    const int32_t p = s.bones[k].parent;
    world[k] = Compose(p < 0 ? root_parent : world[p], local[k]);
  }
  return world;
}

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> isas;
  for (Isa isa : kConcreteIsas) {
    if (IsIsaSupported(isa)) isas.push_back(isa);
  }
  return isas;
}

TEST(PoseLayouts, EveryChainLayoutEqualsTheTrsOutputComposedByHandOnEveryInstructionSet) {
  for (Isa isa : SupportedIsas()) {
    for (bool interpolate : {false, true}) {
      WorldSettings ws;
      ws.isa = isa;
      ws.render_interpolation = interpolate;
      auto w = MakeWorld(ws);
      const ChainArchetypeSettings s = Branching();
      const ChainArchetypeId a = w->BuildChainArchetype(s).value();
      const int n = static_cast<int>(s.bones.size());
      const std::vector<int32_t> bone_map = {9, 2, 5, 0, 11, 7};
      std::vector<Transform> animated(StreamHost::kSkeleton), output(StreamHost::kSkeleton);
      for (int k = 0; k < n; ++k) animated[bone_map[k]] = s.bones[k].rest_local;
      Transform root_parent{{0, 1.5f, 0}, {}, {1, 1, 1}};
      StreamHost host;
      host.Make(n);
      ChainBinding b;
      b.archetype = a;
      b.root_parent_world = &root_parent;
      b.animated_local = animated;
      b.output_local = output;
      b.bone_map = bone_map;
      b.pose_streams = host.streams;
      const ChainId id = w->BindChain(b).value();
      for (int frame = 0; frame < 40; ++frame) {
        const float t = static_cast<float>(frame) / 60.0f;
        root_parent.translation = {0.4f * std::sin(6 * t), 1.5f, 0.2f * t};
        root_parent.rotation = AxisAngle(Vec3{0, 0, 1}, 0.8f * std::sin(4 * t));
        root_parent.scale = {1.0f, 1.0f + 0.1f * t, 1.0f};
        host.model.translation.x = 0.3f + t;
        const FrameStats& st = w->Step(1.0f / 50.0f);  // uneven: render interpolation has work
        ASSERT_EQ(st.simulated_chains, 1);
      }
      std::vector<Transform> local(n);
      for (int k = 0; k < n; ++k) local[k] = output[bone_map[k]];
      const std::string what = std::string(ToString(isa)) + (interpolate ? " interpolated" : "");
      host.Check(local, ChainWorld(s, root_parent, local), bone_map, what);
      // Unbinding hands the animated pose back to every stream too.
      ASSERT_EQ(w->UnbindChain(id).code, ErrorCode::kNone);
      std::vector<Transform> rest(n);
      for (int k = 0; k < n; ++k) rest[k] = animated[bone_map[k]];
      host.Check(rest, ChainWorld(s, root_parent, rest), bone_map, what + " after unbind");
    }
  }
}

// Godette's hair shape: a kVrm chain of `strands` strands side by side (roots, then a joint
// each, then a virtual tip each), pushed sideways and down.
ChainArchetypeSettings HairStrands(int strands) {
  ChainArchetypeSettings s;
  s.model = ChainModel::kVrm;
  for (int i = 0; i < strands; ++i)
    s.bones.push_back(ChainBone{-1, Transform{{0.1f * static_cast<float>(i), 0, 0}, {}, {1, 1, 1}}});
  for (int i = 0; i < strands; ++i) s.bones.push_back(ChainBone{i, Transform{{0, -0.1f, 0.01f}, {}, {1, 1, 1}}});
  for (int i = 0; i < strands; ++i) {
    ChainBone tip{strands + i, Transform{{0, -0.07f, 0}, {}, {1, 1, 1}}};
    tip.virtual_tip = true;
    s.bones.push_back(tip);
  }
  s.settings.gravity_push = Vec3{0.3f, 0, -1.0f};
  return s;
}

// Godette's hair shape: a kVrm chain of strands, one lane each, with virtual tips the
// streams skip; the bones are named in the settings' order whatever the lanes' order.
TEST(PoseLayouts, AKVrmChainOfStrandsWritesItsStreamsInTheSettingsOrder) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = HairStrands(3);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain chain(s);
  std::vector<Transform> model(9, Transform{{-9, -9, -9}, {}, {1, 1, 1}});
  PoseStream stream;
  stream.layout = PoseLayout::kModelMatrix;
  stream.matrix_form = MatrixForm::kRowMajor3x4;
  std::vector<float> matrices(12 * 9, -7.0f);
  stream.base = matrices.data();
  stream.element_count = 9;
  // The virtual tips' entries name element 0 again: a tip has no host bone, so they are
  // neither checked nor written.
  const std::vector<int32_t> elements = {0, 1, 2, 3, 4, 5, 0, 0, 0};
  stream.element_of_bone = elements;
  ChainBinding b = chain.Binding(a);
  b.pose_streams = std::span<const PoseStream>(&stream, 1);
  ASSERT_TRUE(w->BindChain(b).ok());
  for (int frame = 0; frame < 30; ++frame) {
    chain.root_parent.translation.x = 0.02f * static_cast<float>(frame);
    chain.root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, 0.05f * static_cast<float>(frame));
    w->Step(1.0f / 60.0f);
  }
  const std::vector<Transform> world = ChainWorld(s, chain.root_parent, chain.output);
  for (int k = 0; k < 6; ++k) ExpectNear(FromRowMajor(&matrices[12 * k]), MatrixOf(world[k]), "bone " + std::to_string(k));
  for (int k = 6; k < 9; ++k) EXPECT_EQ(matrices[12 * k], -7.0f) << "virtual tip " << k << " has no host bone";
  EXPECT_GT(std::fabs(chain.output[3].rotation.x) + std::fabs(chain.output[3].rotation.z), 1e-3f) << "the strands swung";
}

// A kVrm chain of strands with virtual tips composes only its roots' animated frames
// (ChainArchetype::vrm_roots_pose); a matrix stream makes its blocks compose every node.
// Nothing it writes may differ: the same chain in two worlds, one with a stream, writes the
// same bits every frame, through a swing, a teleport (a snap) and a frame of bad input.
TEST(PoseLayouts, AKVrmChainPosedFromItsRootsAloneWritesTheBitsOfAFullyPosedOne) {
  ChainArchetypeSettings s = HairStrands(5);
  s.settings.stiffness = 1.5f;
  s.teleport_guard = true;  // so that the jump at frame 20 snaps
  ColliderSettings head;  // on host frame 0, in the strands' way
  head.bone = -1;
  head.frame = 0;
  head.a = {0.2f, -0.12f, 0.05f};
  head.radius = 0.06f;
  s.colliders.push_back(head);
  const auto n = static_cast<int32_t>(s.bones.size());
  struct Side {
    std::unique_ptr<World> world = MakeWorld();
    HostChain chain;
    std::vector<float> matrices;
    PoseStream stream;
    explicit Side(const ChainArchetypeSettings& s) : chain(s) { chain.collider_frames.assign(1, Transform{}); }
  };
  Side roots(s), full(s);
  for (Side* side : {&roots, &full}) {
    const ChainArchetypeId a = side->world->BuildChainArchetype(s).value();
    ChainBinding b = side->chain.Binding(a);
    if (side == &full) {
      side->matrices.assign(static_cast<std::size_t>(12) * n, 0.0f);
      side->stream.layout = PoseLayout::kModelMatrix;
      side->stream.matrix_form = MatrixForm::kRowMajor3x4;
      side->stream.base = side->matrices.data();
      side->stream.element_count = n;
      b.pose_streams = std::span<const PoseStream>(&side->stream, 1);
    }
    ASSERT_TRUE(side->world->BindChain(b).ok());
  }
  for (int frame = 0; frame < 60; ++frame) {
    for (Side* side : {&roots, &full}) {
      HostChain& c = side->chain;
      const float t = static_cast<float>(frame) / 60.0f;
      c.root_parent.translation = {0.3f * std::sin(4.0f * t) + (frame >= 20 ? 5.0f : 0.0f), 0.1f * std::sin(7.0f * t), 0};
      c.root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, 0.8f * std::sin(3.0f * t));
      c.collider_frames[0] = c.root_parent;
      c.animated[6].rotation = AxisAngle(Vec3{1, 0, 0}, 0.3f * std::sin(5.0f * t));  // a joint's own animation
      c.animated[2].translation.x = frame == 40 ? NAN : 0.2f;                           // held input at frame 40
      const FrameStats& stats = side->world->Step(1.0f / 60.0f);
      if (frame == 20) {
        EXPECT_EQ(stats.snapped_teleport, 1) << "the jump snaps";
      }
      if (frame == 40) {
        EXPECT_EQ(stats.snapped_bad_input, 1) << "the input is held";
      }
    }
    ASSERT_EQ(std::memcmp(roots.chain.output.data(), full.chain.output.data(), sizeof(Transform) * 10), 0)
        << "frame " << frame;
  }
  EXPECT_GT(std::fabs(roots.chain.output[5].rotation.x) + std::fabs(roots.chain.output[5].rotation.z), 1e-3f)
      << "the strands swung";
}

TEST(PoseLayouts, RagdollPartFramesAreWrittenInEveryLayout) {
  auto w = MakeWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  std::vector<Transform> parts(2);
  StreamHost host;
  host.Make(2);
  RagdollBinding b;
  b.archetype = a;
  b.placement.translation = {0, 2, 0};
  b.angular_velocity = {0.5f, 1.0f, 0.2f};
  b.output_parts = parts;
  b.pose_streams = host.streams;
  ASSERT_TRUE(w->BindRagdoll(b).ok());
  for (int frame = 0; frame < 20; ++frame) w->Step(1.0f / 60.0f);
  // kLocalTrs writes a part's frame in the model's space: here the TRS stream has no
  // model, so it is the world frame itself.
  host.Check(parts, parts, {0, 1}, "ragdoll");
  // And with a model frame: Relative(model, part).
  PoseStream in_model = host.streams[0];
  in_model.model_world = &host.model;
  std::vector<HostBone> model_bones(StreamHost::kSkeleton);
  in_model.base = model_bones.data();
  std::vector<Transform> parts2(2);
  b.output_parts = parts2;
  b.pose_streams = std::span<const PoseStream>(&in_model, 1);
  ASSERT_TRUE(w->BindRagdoll(b).ok());
  w->Step(1.0f / 60.0f);
  for (int j = 0; j < 2; ++j) {
    const Transform want = Relative(host.model, parts2[j]);
    EXPECT_NEAR(model_bones[j].position[0], want.translation.x, kTolerance);
    EXPECT_NEAR(model_bones[j].position[1], want.translation.y, kTolerance);
    EXPECT_NEAR(model_bones[j].position[2], want.translation.z, kTolerance);
    EXPECT_NEAR(model_bones[j].wxyz[0], want.rotation.w, kTolerance);
    EXPECT_NEAR(model_bones[j].scale[0], want.scale.x, kTolerance);
  }
}

// A whole skeleton: Godette as a ragdolled character, with her local TRS and a skinning
// palette in her model's space written each Step, also while she falls.
TEST(PoseLayouts, ACharacterWritesItsWholeSkeletonIntoItsStreamsWhileRagdolled) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld(LastSubstepOutputs());
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  CharacterSettings cs;
  cs.skeleton = Godette(VrmNames());
  const CharacterArchetypeId a = w->BuildCharacterArchetype(cs).value();
  const int n = static_cast<int>(cs.skeleton.rest_local.size());
  HostCharacter host(cs.skeleton, Transform{{0.5f, 0.1f, -0.3f}, AxisAngle(Vec3{0, 1, 0}, 0.6f), {1, 1, 1}});
  std::vector<float> trs(static_cast<std::size_t>(7) * n, -7.0f);
  std::vector<float> palette(static_cast<std::size_t>(16) * n, -7.0f);
  std::vector<float> inverse_bind;
  for (int k = 0; k < n; ++k) {
    const std::vector<float> ib =
        ColumnMajor(Inverse(MatrixOf(Transform{{0, 0.01f * static_cast<float>(k), 0}, {}, {1, 1, 1}})));
    inverse_bind.insert(inverse_bind.end(), ib.begin(), ib.end());
  }
  PoseStream streams[2];
  streams[0].base = trs.data();
  streams[0].element_count = n;
  streams[1].layout = PoseLayout::kSkinningMatrix;
  streams[1].base = palette.data();
  streams[1].element_count = n;
  streams[1].model_world = &host.model;
  streams[1].inverse_bind = inverse_bind;
  CharacterBinding b = host.Binding(a);
  b.pose_streams = streams;
  const CharacterId id = w->BindCharacter(b).value();
  for (int frame = 0; frame < 40; ++frame) {
    if (frame == 5) {
      ASSERT_TRUE(w->ActivateCharacter(id));
    }
    w->Step(1.0f / 60.0f);
  }
  ASSERT_EQ(w->LastStats().active_characters, 1);
  const M34 to_model = Inverse(MatrixOf(host.model));
  for (int k = 0; k < n; ++k) {
    const float* t = &trs[static_cast<std::size_t>(7) * k];
    EXPECT_EQ(t[0], host.output[k].translation.x) << k;
    EXPECT_EQ(t[2], host.output[k].translation.z) << k;
    EXPECT_EQ(t[3], host.output[k].rotation.x) << k;
    EXPECT_EQ(t[6], host.output[k].rotation.w) << k;
    ExpectNear(FromColumnMajor(&palette[static_cast<std::size_t>(16) * k]),
               Multiply(Multiply(to_model, MatrixOf(host.world[k])), FromColumnMajor(&inverse_bind[16 * k])),
               "bone " + std::to_string(k));
  }
  // The body fell: the hips' palette entry moved off the animated pose.
  const std::vector<Transform> animated_world = [&] {
    std::vector<Transform> wd(n);
    for (int k = 0; k < n; ++k) {
      const int32_t p = cs.skeleton.parents[k];
      wd[k] = Compose(p < 0 ? host.model : wd[p], host.animated[k]);
    }
    return wd;
  }();
  const auto hips = static_cast<int32_t>(
      std::find(cs.skeleton.names.begin(), cs.skeleton.names.end(), "hips") - cs.skeleton.names.begin());
  ASSERT_LT(hips, n);
  EXPECT_GT(Length(host.world[hips].translation - animated_world[hips].translation), 0.05f);
}

TEST(PoseLayouts, AModelFrameThatGoesBadKeepsTheLastGoodOneAndNoNanReachesTheStream) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = Strand(3, 0.1f, Vec3{0, -1, 0});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain chain(s);
  Transform model{{1, 0, 0}, {}, {1, 1, 1}};
  std::vector<float> matrices(16 * 3, -7.0f);
  PoseStream stream;
  stream.layout = PoseLayout::kModelMatrix;
  stream.base = matrices.data();
  stream.element_count = 3;
  stream.model_world = &model;
  ChainBinding b = chain.Binding(a);
  b.pose_streams = std::span<const PoseStream>(&stream, 1);
  ASSERT_TRUE(w->BindChain(b).ok());
  w->Step(1.0f / 60.0f);
  const std::vector<Transform> world = ChainWorld(s, chain.root_parent, chain.output);
  const M34 to_model = Inverse(MatrixOf(model));
  ExpectNear(FromColumnMajor(&matrices[16]), Multiply(to_model, MatrixOf(world[1])), "good model");
  for (const Transform bad : {Transform{{NAN, 0, 0}, {}, {1, 1, 1}}, Transform{{0, 0, 0}, {}, {0, 1, 1}},
                              Transform{{0, 0, 0}, {0, 0, 0, 2}, {1, 1, 1}}}) {
    model = bad;
    w->Step(1.0f / 60.0f);
    const std::vector<Transform> now = ChainWorld(s, chain.root_parent, chain.output);
    ExpectNear(FromColumnMajor(&matrices[16]), Multiply(to_model, MatrixOf(now[1])), "the last good model is kept");
    for (float v : matrices) EXPECT_TRUE(std::isfinite(v));
  }
}

TEST(PoseLayouts, SteppingWithStreamsAllocatesNothing) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = Branching();
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain chain(s);
  StreamHost host;
  host.Make(static_cast<int>(s.bones.size()));
  ChainBinding b = chain.Binding(a);
  b.pose_streams = host.streams;
  ASSERT_TRUE(w->BindChain(b).ok());
  const RagdollArchetypeId r = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  std::vector<Transform> parts(2);
  StreamHost ragdoll_host;
  ragdoll_host.Make(2);
  RagdollBinding rb;
  rb.archetype = r;
  rb.output_parts = parts;
  rb.pose_streams = ragdoll_host.streams;
  ASSERT_TRUE(w->BindRagdoll(rb).ok());
  w->Step(1.0f / 60.0f);
  const long before = g_allocations.load();
  for (int frame = 0; frame < 20; ++frame) {
    chain.root_parent.translation.x = 0.01f * static_cast<float>(frame);
    w->Step(1.0f / 60.0f);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
}

// Each bad stream is refused at bind, naming the stream and the field.
TEST(PoseLayouts, EveryBadStreamIsRefusedAtBindNamingTheStreamAndField) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = Strand(3);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  std::vector<float> buffer(16 * 4);
  std::vector<float> inverse_bind(16 * 3, 0.0f);
  for (int k = 0; k < 3; ++k) {
    for (int d = 0; d < 4; ++d) inverse_bind[16 * k + 5 * d] = 1.0f;
  }
  const std::vector<int32_t> two_to_one = {0, 1, 1};
  const std::vector<int32_t> too_far = {0, 1, 4};
  const std::vector<int32_t> too_few = {0, 1};
  struct Case {
    const char* what;
    void (*mutate)(PoseStream&);
    ErrorCode code;
    const char* field;
  };
  PoseStream good;
  good.base = buffer.data();
  good.element_count = 4;
  good.byte_stride = 40;
  const Case cases[] = {
      {"null base", [](PoseStream& p) { p.base = nullptr; }, ErrorCode::kNullBuffer, "pose_streams[1].base"},
      {"no elements", [](PoseStream& p) { p.element_count = 0; }, ErrorCode::kNullBuffer, "pose_streams[1].element_count"},
      {"stride too small", [](PoseStream& p) { p.byte_stride = 20; }, ErrorCode::kOutOfRange, "pose_streams[1].byte_stride"},
      {"overlapping fields", [](PoseStream& p) { p.scale_offset = 20; }, ErrorCode::kOutOfRange, "pose_streams[1].scale_offset"},
      {"no rotation", [](PoseStream& p) { p.rotation_offset = -1; }, ErrorCode::kOutOfRange, "pose_streams[1].rotation_offset"},
      {"layout out of range", [](PoseStream& p) { p.layout = static_cast<PoseLayout>(9); }, ErrorCode::kOutOfRange,
       "pose_streams[1].layout"},
      {"form out of range", [](PoseStream& p) { p.matrix_form = static_cast<MatrixForm>(-1); }, ErrorCode::kOutOfRange,
       "pose_streams[1].matrix_form"},
      {"order out of range", [](PoseStream& p) { p.rotation_order = static_cast<QuatOrder>(2); }, ErrorCode::kOutOfRange,
       "pose_streams[1].rotation_order"},
      {"matrix stride too small",
       [](PoseStream& p) {
         p.layout = PoseLayout::kModelMatrix;
         p.byte_stride = 48;
       },
       ErrorCode::kOutOfRange, "pose_streams[1].byte_stride"},
      {"palette without inverse binds", [](PoseStream& p) { p.layout = PoseLayout::kSkinningMatrix; p.byte_stride = 0; },
       ErrorCode::kNullBuffer, "pose_streams[1].inverse_bind"},
      {"too many streams", nullptr, ErrorCode::kCapacity, "pose_streams"},
  };
  for (const Case& c : cases) {
    HostChain chain(s);
    std::vector<PoseStream> streams(c.mutate == nullptr ? 5 : 2, good);
    if (c.mutate != nullptr) c.mutate(streams[1]);
    ChainBinding b = chain.Binding(a);
    b.pose_streams = streams;
    auto r = w->BindChain(b);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.error().code, c.code) << c.what << ": " << r.error().message;
    EXPECT_EQ(r.error().field, c.field) << c.what << ": " << r.error().message;
  }
  // Element maps and inverse binds, which need spans that outlive the case table.
  auto refused = [&](PoseStream p, ErrorCode code, const char* field, const char* needle) {
    HostChain chain(s);
    ChainBinding b = chain.Binding(a);
    b.pose_streams = std::span<const PoseStream>(&p, 1);
    auto r = w->BindChain(b);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.error().code, code) << r.error().message;
    EXPECT_EQ(r.error().field, field) << r.error().message;
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
  };
  PoseStream p = good;
  p.element_of_bone = two_to_one;
  refused(p, ErrorCode::kBadReference, "pose_streams[0].element_of_bone", "bones 1 and 2 both go to element 1");
  p.element_of_bone = too_far;
  refused(p, ErrorCode::kBadReference, "pose_streams[0].element_of_bone", "bone 2 goes to element 4");
  p.element_of_bone = too_few;
  refused(p, ErrorCode::kBadReference, "pose_streams[0].element_of_bone", "has 2 entries");
  p = good;
  p.inverse_bind = inverse_bind;
  refused(p, ErrorCode::kOutOfRange, "pose_streams[0].inverse_bind", "only read by PoseLayout::kSkinningMatrix");
  p.layout = PoseLayout::kSkinningMatrix;
  p.byte_stride = 0;
  std::vector<float> bad = inverse_bind;
  bad[16 + 3] = 0.5f;  // bone 1's last row
  p.inverse_bind = bad;
  refused(p, ErrorCode::kOutOfRange, "pose_streams[0].inverse_bind", "bone 1's inverse bind matrix is not affine");
  bad = inverse_bind;
  bad[32] = NAN;
  p.inverse_bind = bad;
  refused(p, ErrorCode::kNotFinite, "pose_streams[0].inverse_bind", "bone 2's inverse bind matrix is not finite");
  p.inverse_bind = std::span<const float>(inverse_bind).first(20);
  refused(p, ErrorCode::kNullBuffer, "pose_streams[0].inverse_bind", "needs 16 floats per bone (48), got 20");
  // A refused bind leaves nothing bound, and a good one binds.
  p.inverse_bind = inverse_bind;
  HostChain chain(s);
  ChainBinding b = chain.Binding(a);
  b.pose_streams = std::span<const PoseStream>(&p, 1);
  EXPECT_TRUE(w->BindChain(b).ok());
  EXPECT_EQ(w->Step(1.0f / 60.0f).simulated_chains, 1);
}

}  // namespace
}  // namespace tendon::test
