// The verlet chain solve: invariants, the SIMD kernels against the scalar reference, the
// fixed step, collisions and writeback.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <array>
#include <bit>

#include "kernel/chains/chain_kernels.h"
#include "kernel/simd/lanes.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;

float RelativeError(float a, float b) { return std::fabs(a - b) / std::max(1.0f, std::max(std::fabs(a), std::fabs(b))); }

// Moves a host root along a deterministic, lively path (sways and turns).
void Animate(HostChain& host, double t, float phase) {
  host.root_parent.translation = Vec3{static_cast<float>(std::sin(t * 2.3 + phase)) * 0.6f,
                                      1.5f + static_cast<float>(std::sin(t * 4.1 + phase)) * 0.2f,
                                      static_cast<float>(std::cos(t * 1.7 + phase)) * 0.4f};
  host.root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, static_cast<float>(std::sin(t * 1.3 + phase)));
}

TEST(ChainSolve, EveryLinkKeepsItsRestLengthAfterEverySubstep) {
  WorldSettings ws;
  ws.ambient_wind = {3, 0, 1};
  auto w = MakeWorld(ws);
  ChainArchetypeSettings s = Strand(8, 0.07f);
  s.settings.stiffness = 0.0f;
  s.settings.damping = 0.98f;
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 600; ++frame) {
    Animate(host, frame * kStep, 0.0f);
    ASSERT_EQ(w->Step(kStep).substeps, 1);  // one substep per frame: every substep is checked
    const auto p = Positions(*w, id, 8);
    for (int k = 1; k < 8; ++k) {
      const float len = Length(p[k] - p[k - 1]);
      ASSERT_NEAR(len, 0.07f, 0.07f * 1e-5f) << "frame " << frame << " node " << k;
    }
  }
}

TEST(ChainSolve, AChainWithoutStiffnessHangsStraightDownUnderGravity) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(5, 0.1f, {1, 0, 0});  // rests horizontally
  s.settings.stiffness = 0.0f;
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 600; ++frame) w->Step(kStep);
  const auto p = Positions(*w, id, 5);
  EXPECT_NEAR(p[4].x, 0.0f, 1e-3f);
  EXPECT_NEAR(p[4].y, 2.0f - 0.4f, 1e-3f);
}

TEST(ChainSolve, FullStiffnessHoldsTheAnimatedPose) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(5, 0.1f, {1, 0, 0});
  s.settings.stiffness = 1.0f;
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 120; ++frame) w->Step(kStep);
  const auto p = Positions(*w, id, 5);
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(p[k].x, 0.1f * k, 1e-5f);
    EXPECT_NEAR(p[k].y, 2.0f, 1e-5f);
  }
  // Written local rotations equal the animated ones.
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(std::fabs(Dot(host.output[k].rotation, host.animated[k].rotation)), 1.0f, 1e-5f);
}

// Runs the same lively scene on the scalar reference and on `isa`, 1,000 substeps.
// The reference of an FMA kernel fuses its multiply-adds too (Isa::kScalarFma). Eleven
// chains use their chain's parameters and five, of the same topology, per-node overrides
// (one node pinned mid-chain), so one block takes the uniform path and one the per-node
// path; padding lanes fill the rest.
void CompareWithScalar(Isa isa) {
  if (!IsIsaSupported(isa)) GTEST_SKIP() << ToString(isa) << " is not supported on this CPU";
  WorldSettings ws;
  ws.ambient_wind = {2, 0, 1};
  ws.isa = ScalarReferenceOf(isa);
  auto ref = MakeWorld(ws);
  ws.isa = isa;
  auto simd = MakeWorld(ws);
  ASSERT_EQ(simd->ActiveIsa(), isa);
  ChainArchetypeSettings s = Strand(6, 0.08f);
  s.settings.stiffness = 0.05f;
  s.settings.node_radius = 0.02f;
  s.colliders.push_back({.shape = ColliderShape::kSphere, .bone = 0, .a = {0.1f, -0.15f, 0}, .radius = 0.1f});
  s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = 0, .a = {-0.2f, -0.3f, -0.1f}, .b = {0.2f, -0.3f, 0.1f}, .radius = 0.05f});
  s.colliders.push_back({.shape = ColliderShape::kPlane, .bone = -1, .frame = 0, .a = {0, 1.0f, 0}, .b = {0, 1, 0}});
  s.colliders.push_back({.shape = ColliderShape::kSphere, .inside = true, .bone = 0, .a = {0, 0, 0}, .radius = 0.45f});
  ChainArchetypeSettings overridden = s;
  overridden.overrides.push_back({.node = 1, .damping = 0.8f, .gravity_scale = 0.5f});
  overridden.overrides.push_back({.node = 2, .stiffness = 0.3f, .wind_scale = 2.0f, .radius = 0.04f});
  overridden.overrides.push_back({.node = 3, .pinned = true});
  const ChainArchetypeId ra = ref->BuildChainArchetype(s).value();
  const ChainArchetypeId sa = simd->BuildChainArchetype(s).value();
  const ChainArchetypeId rb = ref->BuildChainArchetype(overridden).value();
  const ChainArchetypeId sb = simd->BuildChainArchetype(overridden).value();
  constexpr int kUniformChains = 11, kChains = 16;
  std::vector<HostChain> ref_hosts(kChains, HostChain(s)), simd_hosts(kChains, HostChain(s));
  std::vector<ChainId> ref_ids, simd_ids;
  for (int i = 0; i < kChains; ++i) {
    ref_hosts[i].collider_frames.assign(1, Transform{});
    simd_hosts[i].collider_frames.assign(1, Transform{});
    ref_ids.push_back(ref->BindChain(ref_hosts[i].Binding(i < kUniformChains ? ra : rb)).value());
    simd_ids.push_back(simd->BindChain(simd_hosts[i].Binding(i < kUniformChains ? sa : sb)).value());
  }
  int substeps = 0;
  float worst = 0.0f, worst_rot = 0.0f;
  for (int frame = 0; substeps < 1000; ++frame) {
    const float dt = (frame % 3 == 0) ? 0.03f : 0.011f;
    for (int i = 0; i < kChains; ++i) {
      Animate(ref_hosts[i], frame * 0.02, 0.7f * i);
      Animate(simd_hosts[i], frame * 0.02, 0.7f * i);
    }
    substeps += ref->Step(dt).substeps;
    simd->Step(dt);
    for (int i = 0; i < kChains; ++i) {
      const auto pr = Positions(*ref, ref_ids[i], 6);
      const auto ps = Positions(*simd, simd_ids[i], 6);
      // Norm-wise relative error of each position vector.
      for (int k = 0; k < 6; ++k) {
        worst = std::max(worst, Length(pr[k] - ps[k]) / std::max(Length(pr[k]), 1e-3f));
      }
      for (int k = 0; k < 6; ++k) {
        const Quat a = ref_hosts[i].output[k].rotation, b = simd_hosts[i].output[k].rotation;
        worst_rot = std::max({worst_rot, RelativeError(a.x, b.x), RelativeError(a.y, b.y), RelativeError(a.z, b.z),
                          RelativeError(a.w, b.w)});
      }
    }
  }
  EXPECT_LT(worst, 1e-5f) << ToString(isa);
  EXPECT_LT(worst_rot, 1e-5f) << ToString(isa);
}

TEST(ChainSolve, Sse2KernelAgreesWithTheScalarReference) { CompareWithScalar(Isa::kSse2); }
TEST(ChainSolve, Sse42KernelAgreesWithTheScalarReference) { CompareWithScalar(Isa::kSse42); }
TEST(ChainSolve, Avx2FmaKernelAgreesWithTheScalarReference) { CompareWithScalar(Isa::kAvx2Fma); }
TEST(ChainSolve, Avx512WorldsChainKernelAgreesWithTheScalarReference) { CompareWithScalar(Isa::kAvx512); }
TEST(ChainSolve, NeonKernelAgreesWithTheScalarReference) { CompareWithScalar(Isa::kNeon); }

// The same motion fed at 30 and at 240 frames per second settles to the same sag.
TEST(ChainSolve, ThirtyAndTwoHundredFortyFpsFeedsConverge) {
  auto run = [](int fps) {
    auto w = MakeWorld();
    ChainArchetypeSettings s = Strand(6, 0.1f);
    s.settings.stiffness = 0.02f;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s);
    const ChainId id = w->BindChain(host.Binding(a)).value();
    const double dt = 1.0 / fps;
    for (int frame = 0; frame < fps * 5; ++frame) {
      const double t = frame * dt;
      Animate(host, std::min(t, 2.0), 0.0f);  // moves for 2 s, then holds
      w->Step(static_cast<float>(dt));
    }
    return Positions(*w, id, 6);
  };
  const auto slow = run(30), fast = run(240);
  for (int k = 0; k < 6; ++k) EXPECT_LT(Length(slow[k] - fast[k]), 1e-3f) << "node " << k;
}

// A root moving at constant speed, fed at 20 fps (three substeps per frame), reaches the
// same state as at 60 fps: within a frame the root is interpolated substep by substep
// instead of jumping to the frame's pose at the first substep.
TEST(ChainSolve, AFastRootIsInterpolatedAcrossTheSubstepsOfAFrame) {
  auto run = [](int fps) {
    auto w = MakeWorld();
    ChainArchetypeSettings s = Strand(6, 0.1f);
    s.settings.stiffness = 0.0f;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s);
    const ChainId id = w->BindChain(host.Binding(a)).value();
    w->Step(1.0f / 60.0f);
    for (int frame = 1; frame <= fps; ++frame) {
      host.root_parent.translation = Vec3{3.0f * frame / fps, 0, 0};  // 3 m/s
      w->Step(1.0f / fps);
    }
    return Positions(*w, id, 6);
  };
  const auto slow = run(20), fast = run(60);
  for (int k = 0; k < 6; ++k) EXPECT_LT(Length(slow[k] - fast[k]), 1e-4f) << "node " << k;
}

TEST(ChainSolve, NodesStayOutsideSphereAndCapsuleColliders) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(8, 0.05f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  s.settings.node_radius = 0.01f;
  // A ball right under the strand: it must drape over it.
  s.colliders.push_back({.shape = ColliderShape::kSphere, .bone = 0, .a = {0.2f, -0.12f, 0.001f}, .radius = 0.1f});
  s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = 0, .a = {0.05f, -0.3f, -0.5f}, .b = {0.05f, -0.3f, 0.5f}, .radius = 0.04f});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  float deepest = 0.0f;
  for (int frame = 0; frame < 300; ++frame) {
    w->Step(kStep);
    const auto p = Positions(*w, id, 8);
    for (int k = 1; k < 8; ++k) {
      const float sphere = Length(p[k] - Vec3{0.2f, 1.88f, 0.001f}) - 0.11f;
      deepest = std::min(deepest, sphere);
    }
  }
  // Pushed out each substep, then the link is restored: penetration stays tiny.
  EXPECT_GT(deepest, -0.005f);
  const auto p = Positions(*w, id, 8);
  EXPECT_GT(p[7].y, 2.0f - 0.35f) << "the strand rests on the colliders instead of hanging free";
}

TEST(ChainSolve, InsideCollidersKeepNodesWithin) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(6, 0.1f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  s.colliders.push_back({.shape = ColliderShape::kSphere, .inside = true, .bone = 0, .a = {0, 0, 0}, .radius = 0.3f});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 300; ++frame) w->Step(kStep);
  // Links of 0.1 m, five of them, in a ball of 0.3 m: gravity folds them inside it. The
  // link restore runs after the push, so allow one link's worth of slack for the last node.
  const auto p = Positions(*w, id, 6);
  for (int k = 1; k < 4; ++k) EXPECT_LT(Length(p[k] - Vec3{0, 2, 0}), 0.3f + 1e-3f) << k;
  EXPECT_LT(p[5].y, 2.0f);
}

TEST(ChainSolve, InsideCapsulesKeepNodesWithinTheTube) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(6, 0.1f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  // A vertical tube of radius 0.15 around the root: the strand hangs inside it.
  s.colliders.push_back({.shape = ColliderShape::kCapsule, .inside = true, .bone = 0, .a = {0, 0.2f, 0},
                         .b = {0, -1.0f, 0}, .radius = 0.15f});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 300; ++frame) {
    host.root_parent.rotation = AxisAngle(Vec3{0, 0, 1}, 0.3f * std::sin(frame * 0.2f));
    w->Step(kStep);
  }
  const auto p = Positions(*w, id, 6);
  for (int k = 1; k < 6; ++k) {
    const float radial = std::sqrt(p[k].x * p[k].x + p[k].z * p[k].z);
    EXPECT_LT(radial, 0.15f + 0.02f) << k;
  }
  EXPECT_LT(p[5].y, 2.0f - 0.3f);
}

TEST(ChainSolve, PlaneCollidersHoldNodesAbove) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(6, 0.1f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  s.settings.node_radius = 0.02f;
  s.colliders.push_back({.shape = ColliderShape::kPlane, .bone = -1, .frame = 0, .a = {0, 0, 0}, .b = {0, 1, 0}});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 0.25f, 0});
  host.collider_frames.assign(1, Transform{});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  // Pushed out by the node radius, then the link is restored (so links stay exact): while
  // the strand slaps down and slides the depth stays under 3 mm, and at rest under 0.2 mm.
  for (int frame = 0; frame < 300; ++frame) {
    w->Step(kStep);
    for (const Vec3& p : Positions(*w, id, 6)) ASSERT_GT(p.y, 0.02f - 3e-3f) << "frame " << frame;
  }
  for (const Vec3& p : Positions(*w, id, 6)) EXPECT_GT(p.y, 0.02f - 2e-4f);
}

TEST(ChainSolve, PinnedOverrideNodesFollowTheAnimation) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(5, 0.1f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  s.overrides.push_back({.node = 4, .pinned = true});  // a rope held at both ends
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 120; ++frame) w->Step(kStep);
  const auto p = Positions(*w, id, 5);
  EXPECT_NEAR(p[4].x, 0.4f, 1e-6f);
  EXPECT_NEAR(p[4].y, 2.0f, 1e-6f);
}

TEST(ChainSolve, PerNodeOverridesApplyPerLaneInASharedBlock) {
  for (Isa isa : {Isa::kScalar, Isa::kAuto}) {
    WorldSettings ws;
    ws.isa = isa;
    auto w = MakeWorld(ws);
    ChainArchetypeSettings plain = Strand(5, 0.1f, {1, 0, 0});
    plain.settings.stiffness = 0.0f;
    ChainArchetypeSettings held = plain;  // same topology: shares the block
    for (int k = 1; k < 5; ++k) held.overrides.push_back({.node = k, .stiffness = 1.0f});
    const ChainArchetypeId pa = w->BuildChainArchetype(plain).value();
    const ChainArchetypeId ha = w->BuildChainArchetype(held).value();
    HostChain host_plain(plain, {0, 2, 0}), host_held(held, {1, 2, 0});
    const ChainId pid = w->BindChain(host_plain.Binding(pa)).value();
    const ChainId hid = w->BindChain(host_held.Binding(ha)).value();
    for (int frame = 0; frame < 120; ++frame) w->Step(kStep);
    EXPECT_EQ(w->LastStats().chain_blocks, 1);
    const auto p = Positions(*w, pid, 5);
    const auto h = Positions(*w, hid, 5);
    EXPECT_NEAR(p[4].y, 2.0f - 0.4f, 2e-3f) << ToString(isa);  // hangs
    EXPECT_NEAR(h[4].y, 2.0f, 1e-5f) << ToString(isa);         // held by the overrides
    EXPECT_NEAR(h[4].x, 1.4f, 1e-5f) << ToString(isa);
  }
}

// The writeback kernel of every instruction set, on one hand-made block of a three-node
// chain animated straight up: each lane's simulated chain points elsewhere, including
// straight down (the half-turn case) and collapsed onto its root (no direction: the
// animated rotation is kept). The written world rotation must turn the animated segment
// direction onto the simulated one.
TEST(ChainWriteback, TheWrittenRotationTurnsTheAnimatedSegmentOntoTheSimulatedOne) {
  const Vec3 simulated_dir[detail::kBlockLanes] = {{0, 1, 0},  {0, -1, 0}, {1, 0, 0},     {0, 0, 0},
                                                   {0, -1, 0.05f}, {0.3f, 0.2f, -0.9f}, {-1, -1, 0}, {0, 0, -1}};
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa)) continue;
    const int32_t parent[3] = {-1, 0, 1}, first_child[3] = {1, 2, -1};
    detail::ChainBlockView v;
    v.parent = parent;
    v.first_child = first_child;
    v.node_count = 3;
    detail::AlignedFloats hot(static_cast<std::size_t>(detail::HotRows(3, 0)) * detail::kBlockLanes);
    detail::AlignedFloats cold(static_cast<std::size_t>(detail::ColdRows(3)) * detail::kBlockLanes);
    detail::AlignedFloats scratch(static_cast<std::size_t>(3 * detail::kWritebackRowsPerNode) * detail::kBlockLanes);
    std::fill(hot.data(), hot.data() + hot.size(), 0.0f);
    std::fill(cold.data(), cold.data() + cold.size(), 0.0f);
    v.hot = hot.data();
    v.cold = cold.data();
    for (int32_t l = 0; l < detail::kBlockLanes; ++l) {
      v.Lane(detail::kRootParentRw)[l] = 1.0f;
      for (int32_t k = 0; k < 3; ++k) {
        v.Node(detail::kBy, k)[l] = 0.1f * static_cast<float>(k);
        v.Node(detail::kRw, k)[l] = 1.0f;
        const Vec3 p = simulated_dir[l] * (0.1f * static_cast<float>(k));
        v.Node(v.position, k)[l] = p.x;
        v.Node(v.position + 1, k)[l] = p.y;
        v.Node(v.position + 2, k)[l] = p.z;
      }
    }
    alignas(64) float probe[detail::kBlockLanes];
    detail::ChainKernelsFor(isa).writeback(v, scratch.data(), probe, 1.0f, nullptr);
    for (int32_t l = 0; l < detail::kBlockLanes; ++l) {
      EXPECT_EQ(probe[l], 0.0f) << ToString(isa) << " lane " << l;
      for (int32_t k = 0; k < 2; ++k) {
        const float* w = detail::WrittenWorldRotation(scratch.data(), k) + l;
        const Quat q{w[0], w[detail::kBlockLanes], w[2 * detail::kBlockLanes], w[3 * detail::kBlockLanes]};
        EXPECT_NEAR(Dot(q, q), 1.0f, 1e-5f) << ToString(isa) << " lane " << l;
        const float length = Length(simulated_dir[l]);
        if (length == 0.0f) {
          EXPECT_NEAR(std::fabs(q.w), 1.0f, 1e-6f) << ToString(isa) << " lane " << l;  // kept
          continue;
        }
        const Vec3 turned = Rotate(q, Vec3{0, 1, 0});
        EXPECT_LT(Length(turned - simulated_dir[l] * (1.0f / length)), 1e-5f) << ToString(isa) << " lane " << l;
      }
    }
  }
}

// The check of host transforms before the pose reads them, in every instruction set: one
// NaN or infinity anywhere (in a full batch or in the tail) fails it; huge finite values and
// denormals do not.
TEST(ChainPose, TheFiniteCheckFindsANaNOrInfinityAnywhere) {
  std::vector<float> values(83);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 1e36f - 4e37f;
  values[5] = 1e-40f;  // denormal
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa)) continue;
    const auto all_finite = detail::ChainKernelsFor(isa).all_finite;
    EXPECT_TRUE(all_finite(values.data() + 1, 81)) << ToString(isa);  // unaligned start
    for (int32_t at : {1, 8, 40, 80, 81}) {
      for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
        std::vector<float> v = values;
        v[at] = bad;
        EXPECT_FALSE(all_finite(v.data() + 1, 81)) << ToString(isa) << " at " << at;
      }
    }
  }
}

// The gather of a chain's host locals through its bone map, in every instruction set: the
// same copies and the same two decisions as the scalar kernel, for every count (the AVX2
// kernel checks rotations four at a time, with a tail), a NaN or infinity in any float of
// any transform, and rotations inside, outside and on either side of NearUnit's edge by
// one float step (so a kernel that summed |q|^2 in another order fails). The scalar kernel
// is held to finite.h's GatherTransforms away from the edge (this test's own arithmetic
// may be fused: ARM64's g++ does).
TEST(ChainPose, TheBoneMapGatherCopiesAndChecksAsTheScalarRule) {
  std::vector<Transform> host(40);
  for (std::size_t i = 0; i < host.size(); ++i) {
    const float f = static_cast<float>(i);
    host[i] = {{f, -f * 0.5f, 1e30f}, Normalize(Quat{0.1f * f, 0.2f, -0.3f, 1.0f}), {1.0f, 2.0f, 1e-40f}};
  }
  const auto bits = [](const Transform& t) {
    std::array<uint32_t, 10> b{};
    std::memcpy(b.data(), &t, sizeof t);
    return b;
  };
  const auto reference = detail::ChainKernelsFor(Isa::kScalar).gather_check;
  // A rotation with |q|^2 = n2 (about), and one on the edge of NearUnit's tolerance: the last
  // float step of w the scalar kernel takes as unit, or the first it does not.
  const auto scaled = [](Quat q, float n2) {
    const float s = std::sqrt(n2);
    return Quat{q.x * s, q.y * s, q.z * s, q.w * s};
  };
  const auto unit_by_reference = [&](const Quat& q) {
    const Transform t{{0, 0, 0}, q, {1, 1, 1}};
    Transform out;
    const int32_t zero = 0;
    return reference(&t, &zero, &out, &zero, 1).unit;
  };
  const auto edge = [&](const Quat& q, bool inside) {
    Quat r = scaled(q, 1.0f + 0.98e-4f);
    EXPECT_TRUE(unit_by_reference(r));
    while (unit_by_reference(r)) r.w = std::nextafter(r.w, 2.0f);
    if (inside) r.w = std::nextafter(r.w, 0.0f);
    return r;
  };
  for (int32_t count = 1; count <= 11; ++count) {
    std::vector<int32_t> from(count), to(count);
    for (int32_t i = 0; i < count; ++i) from[i] = (i * 7 + 3) % 40, to[i] = count - 1 - i;
    for (int32_t bad = -1; bad < count * 10; ++bad) {
      for (int32_t kind = 0; kind < 7; ++kind) {
        if (bad < 0 && kind > 0) break;
        std::vector<Transform> src = host;
        if (bad >= 0) {
          Transform& t = src[from[bad / 10]];
          if (kind < 3) {
            const float value[] = {std::nanf(""), INFINITY, -INFINITY};
            reinterpret_cast<float*>(&t)[bad % 10] = value[kind];
          } else {
            if (bad % 10 != 0) continue;  // the rotation cases once per transform
            t.rotation = kind == 3   ? scaled(t.rotation, 1.0f + 0.9e-4f)
                         : kind == 4 ? scaled(t.rotation, 1.0f + 1.2e-4f)
                                     : edge(t.rotation, kind == 5);
          }
        }
        const std::string what = "count " + std::to_string(count) + " bad " + std::to_string(bad) + " kind " +
                                 std::to_string(kind);
        std::vector<Transform> expect_dst(count);
        const detail::GatherCheck expect = reference(src.data(), from.data(), expect_dst.data(), to.data(), count);
        if (bad >= 0 && kind < 3) {
          EXPECT_FALSE(expect.finite) << what;
        }
        if (bad >= 0 && (kind == 4 || kind == 6)) {
          EXPECT_FALSE(expect.unit) << what;
        }
        if (kind == 3 || kind == 5) {
          EXPECT_TRUE(expect.unit) << what;
        }
        if (kind < 5) {
          std::vector<Transform> rule_dst(count);
          const detail::GatherCheck rule =
              detail::GatherTransforms(src.data(), from.data(), rule_dst.data(), to.data(), count);
          EXPECT_EQ(expect.finite, rule.finite) << what;
          EXPECT_EQ(expect.unit, rule.unit) << what;
          for (int32_t i = 0; i < count; ++i) EXPECT_EQ(bits(expect_dst[i]), bits(rule_dst[i])) << what;
        }
        for (Isa isa : kConcreteIsas) {
          if (!IsIsaSupported(isa)) continue;
          std::vector<Transform> dst(count);
          const detail::GatherCheck got =
              detail::ChainKernelsFor(isa).gather_check(src.data(), from.data(), dst.data(), to.data(), count);
          EXPECT_EQ(got.finite, expect.finite) << ToString(isa) << " " << what;
          EXPECT_EQ(got.unit, expect.unit) << ToString(isa) << " " << what;
          for (int32_t i = 0; i < count; ++i) EXPECT_EQ(bits(dst[i]), bits(expect_dst[i])) << ToString(isa) << " " << i;
        }
      }
    }
  }
}

// The writeback's flat scatter, in every instruction set: each host bone is its last good
// local with the four rotation floats from the scratch rows, bit for bit.
TEST(ChainWriteback, TheFlatScatterWritesTheGoodLocalWithTheWrittenRotation) {
  std::vector<Transform> good(6);
  for (std::size_t i = 0; i < good.size(); ++i) {
    const float f = static_cast<float>(i);
    good[i] = {{f, 2 * f, -f}, {0.5f, 0.5f, 0.5f, 0.5f}, {1.0f + f, 1.5f, std::nanf("")}};
  }
  constexpr int32_t kBlockLanes = detail::kBlockLanes;
  std::vector<float> scratch(6 * detail::kWritebackRowsPerNode * kBlockLanes);
  for (std::size_t i = 0; i < scratch.size(); ++i) scratch[i] = 0.25f * static_cast<float>(i) - 7.0f;
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa)) continue;
    std::vector<Transform> out(6, Transform{{9, 9, 9}, {9, 9, 9, 9}, {9, 9, 9}});
    std::vector<detail::ChainScatterEntry> entries;
    for (int32_t b = 0; b < 6; ++b)
      entries.push_back({&out[b], &good, 5 - b, detail::WrittenLocalRotationOffset(b % 3) + b});
    detail::ChainKernelsFor(isa).scatter(entries.data(), entries.data() + entries.size(), scratch.data());
    for (int32_t b = 0; b < 6; ++b) {
      Transform expect = good[5 - b];
      const float* r = scratch.data() + entries[b].rotation;
      expect.rotation = Quat{r[0], r[kBlockLanes], r[2 * kBlockLanes], r[3 * kBlockLanes]};
      EXPECT_EQ(std::memcmp(&out[b], &expect, sizeof(Transform)), 0) << ToString(isa) << " bone " << b;
    }
  }
}

// output_world in lanes, in every instruction set: each lane's written world frame is
// tendon::Compose of its parent's (its root parent for a root) and its written local (the
// host's local with the writeback's local rotation), bit for bit, on frames that turn,
// move and scale unevenly; the probe row is +-0 for a finite frame and NaN for a lane whose
// local is not finite, and for its descendants only; a virtual tip gets no frame.
TEST(ChainWriteback, WorldFramesAreTheScalarComposeOfTheWrittenLocalsBitForBit) {
  constexpr int32_t kLanes = detail::kBlockLanes;
  constexpr int32_t kNodes = 6;
  // Two strands from root 0 (nodes 1-2 and 3), ending in virtual tips 4 and 5.
  const int32_t parent[kNodes] = {-1, 0, 1, 0, 2, 3}, first_child[kNodes] = {1, 2, 4, 5, -1, -1};
  std::vector<Transform> roots(kLanes);
  std::vector<std::vector<Transform>> locals(kLanes, std::vector<Transform>(kNodes));
  detail::AlignedFloats scratch(static_cast<std::size_t>(kNodes) * detail::kWritebackRowsPerNode * kLanes);
  uint32_t seed = 12345u;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;  // [-1, 1)
  };
  auto unit = [&] { return Normalize(Quat{next(), next(), next(), next()}); };
  for (int32_t l = 0; l < kLanes; ++l) {
    roots[l] = {{next() * 5, next() * 5, next() * 5}, unit(), {1.0f + 0.5f * next(), 1.2f, 0.8f + 0.1f * next()}};
    for (int32_t k = 0; k < kNodes; ++k) {
      locals[l][k] = {{next() * 0.3f, next() * 0.3f, next() * 0.3f}, unit(), {1.0f + 0.2f * next(), 1.0f, 0.9f}};
      const Quat written = unit();
      float* r = detail::WrittenLocalRotation(scratch.data(), k) + l;
      r[0] = written.x, r[kLanes] = written.y, r[2 * kLanes] = written.z, r[3 * kLanes] = written.w;
    }
  }
  locals[5 % kLanes][1].translation.y = std::nanf("");  // lane 5's node 1 (and so node 2) not finite
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa)) continue;
    detail::ChainBlockView v;
    v.parent = parent;
    v.first_child = first_child;
    v.node_count = kNodes;
    v.virtual_leaves = true;
    detail::ChainPoseInput input;
    for (int32_t l = 0; l < kLanes; ++l) {
      input.root_parent[l] = &roots[l];
      input.locals[l] = locals[l].data();
    }
    detail::AlignedFloats frames(static_cast<std::size_t>(kNodes) * detail::kWorldFrameFloatsPerNode);
    std::fill(frames.data(), frames.data() + frames.size(), 7.0f);
    detail::ChainKernelsFor(isa).world_frames(v, input, scratch.data(), frames.data());
    for (int32_t l = 0; l < kLanes; ++l) {
      Transform world[kNodes];
      for (int32_t k = 0; k < kNodes; ++k) {
        const float* f = detail::WrittenWorldFrame(frames.data(), k) + l;  // the rows
        const float* lane_frame = detail::WrittenWorldFrameOfLane(frames.data(), k, l);
        if (k >= 4) {  // the virtual tips
          for (int32_t i = 0; i < detail::kWorldFrameFields; ++i) EXPECT_EQ(f[i * kLanes], 7.0f) << ToString(isa);
          for (int32_t i = 0; i < detail::kWorldFrameLaneFloats; ++i) EXPECT_EQ(lane_frame[i], 7.0f) << ToString(isa);
          continue;
        }
        Transform written = locals[l][k];
        const float* r = detail::WrittenLocalRotation(scratch.data(), k) + l;
        written.rotation = Quat{r[0], r[kLanes], r[2 * kLanes], r[3 * kLanes]};
        world[k] = Compose(parent[k] < 0 ? roots[l] : world[parent[k]], written);
        const bool bad = l == 5 % kLanes && (k == 1 || k == 2);
        const std::string where = std::string(ToString(isa)) + " lane " + std::to_string(l) + " node " + std::to_string(k);
        if (bad) {
          EXPECT_TRUE(std::isnan(lane_frame[detail::kWorldFrameFields])) << where;
          continue;
        }
        EXPECT_EQ(lane_frame[detail::kWorldFrameFields], 0.0f) << where;
        const float got[10] = {f[0],          f[kLanes],     f[2 * kLanes], f[3 * kLanes], f[4 * kLanes],
                               f[5 * kLanes], f[6 * kLanes], f[7 * kLanes], f[8 * kLanes], f[9 * kLanes]};
        EXPECT_EQ(std::memcmp(got, &world[k], sizeof(Transform)), 0) << where;  // the rows children read
        EXPECT_EQ(std::memcmp(lane_frame, &world[k], sizeof(Transform)), 0) << where;  // the host's copy
      }
    }
  }
}

// The read's colliders on host frames, in every instruction set: each collider's world
// shape is tendon::TransformPoint / Rotate's result bit for bit (a plane's normal turned
// and radius 0; a sphere's second point its centre; a capsule's both ends; the radius
// scaled by the frame's largest |scale| except under kVrm), over more than a block of
// colliders on frames that turn, move and scale.
TEST(ChainPose, HostCollidersComeOutAsTheScalarTransformsGiveThem) {
  constexpr int32_t kLanes = detail::kBlockLanes;
  std::vector<Transform> frames(5);
  for (int32_t f = 0; f < 5; ++f) {
    const float x = static_cast<float>(f);
    frames[f] = {{0.3f * x, 1.0f - x, 0.7f}, Normalize(Quat{0.2f * x, -0.4f, 0.1f + 0.3f * x, 0.9f}),
                 {1.0f + 0.25f * x, f == 3 ? -2.0f : 1.0f, 0.5f + x}};
  }
  const int32_t count = kLanes + 3;
  const int32_t stride = (count + kLanes - 1) / kLanes * kLanes;
  std::vector<int32_t> frame_of(count);
  std::vector<uint8_t> kind(count);
  std::vector<float> local(detail::kColliderLocalRows * stride, 0.0f);
  std::vector<ColliderSettings> col(count);
  for (int32_t i = 0; i < count; ++i) {
    const float x = static_cast<float>(i);
    frame_of[i] = (i * 3) % 5;
    kind[i] = static_cast<uint8_t>(i % 5);  // every ColliderKind
    col[i].a = {0.1f * x, -0.2f, 0.05f * x};
    col[i].b = kind[i] == detail::kPlaneKind ? Vec3{0.2f, 1.0f, -0.1f * x} * (1.0f / Length(Vec3{0.2f, 1.0f, -0.1f * x})) : Vec3{0.3f, 0.1f * x, -0.4f};
    col[i].radius = 0.05f + 0.01f * x;
    const float values[] = {col[i].a.x, col[i].a.y, col[i].a.z, col[i].b.x, col[i].b.y, col[i].b.z, col[i].radius,
                            kind[i] == detail::kPlaneKind ? 1.0f : 0.0f,
                            kind[i] == detail::kCapsuleOutside || kind[i] == detail::kCapsuleInside ? 1.0f : 0.0f};
    for (int32_t r = 0; r < detail::kColliderLocalRows; ++r) local[r * stride + i] = values[r];
  }
  for (bool vrm : {false, true}) {
    // The rule, in scalar math.h.
    std::vector<std::array<float, 7>> want(count);
    for (int32_t i = 0; i < count; ++i) {
      const Transform& t = frames[frame_of[i]];
      const Vec3 pa = TransformPoint(t, col[i].a);
      const bool plane = kind[i] == detail::kPlaneKind;
      const bool capsule = kind[i] == detail::kCapsuleOutside || kind[i] == detail::kCapsuleInside;
      const Vec3 pb = plane ? Rotate(t.rotation, col[i].b) : capsule ? TransformPoint(t, col[i].b) : pa;
      const float scale =
          vrm ? 1.0f : std::max(std::fabs(t.scale.x), std::max(std::fabs(t.scale.y), std::fabs(t.scale.z)));
      want[i] = {pa.x, pa.y, pa.z, pb.x, pb.y, pb.z, plane ? 0.0f : col[i].radius * scale};
    }
    // The kernels have no multiply-add to fuse, so every instruction set gives the scalar
    // kernel's bits, and the scalar kernel (compiled, as the kernel layer is, with
    // -ffp-contract=off) gives math.h's, computed here in the tests' arithmetic, which
    // tests/CMakeLists.txt compiles unfused too under g++ and clang (on ARM64 g++ fuses by
    // default). Another compiler may fuse this test's own a * b + c, so there math.h's result
    // is held within a few ulps instead.
#if defined(__GNUC__) || defined(__clang__)
    constexpr bool kTestArithmeticIsUnfused = true;
#else
    constexpr bool kTestArithmeticIsUnfused = false;
#endif
    const detail::ChainColliderInput input{frames.data(), frame_of.data(), local.data(), count, stride, vrm};
    std::vector<float> reference((detail::kCr + 1) * stride, -1.0f);
    detail::ChainKernelsFor(Isa::kScalar).collider_worlds(input, reference.data());
    for (int32_t i = 0; i < count; ++i) {
      for (int32_t f = 0; f <= detail::kCr; ++f) {
        const float got = reference[f * stride + i], expect = want[i][f];
        if (kTestArithmeticIsUnfused) {
          EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expect))
              << "collider " << i << " field " << f << " vrm " << vrm << ": " << got << " vs " << expect;
        } else {
          EXPECT_NEAR(got, expect, 1e-6f * std::max(1.0f, std::fabs(expect))) << "collider " << i << " field " << f;
        }
      }
    }
    for (Isa isa : kConcreteIsas) {
      if (!IsIsaSupported(isa)) continue;
      std::vector<float> out((detail::kCr + 1) * stride, -1.0f);
      detail::ChainKernelsFor(isa).collider_worlds(input, out.data());
      for (int32_t i = 0; i < count; ++i) {
        for (int32_t f = 0; f <= detail::kCr; ++f) {
          EXPECT_EQ(std::bit_cast<uint32_t>(out[f * stride + i]), std::bit_cast<uint32_t>(reference[f * stride + i]))
              << ToString(isa) << " collider " << i << " field " << f << " vrm " << vrm << ": " << out[f * stride + i]
              << " vs " << reference[f * stride + i];
        }
      }
    }
  }
}

TEST(ChainWriteback, WorldPosesThroughWrittenLocalsMatchTheSimulation) {
  WorldSettings ws;
  ws.render_interpolation = false;  // the last substep's shape exactly (interpolation: below)
  auto w = MakeWorld(ws);
  ChainArchetypeSettings s = Strand(6, 0.1f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  host.root_parent.rotation = AxisAngle(Vec3{0, 0, 1}, 0.3f);
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int frame = 0; frame < 90; ++frame) w->Step(kStep);
  const auto p = Positions(*w, id, 6);
  Transform world = host.root_parent;
  for (int k = 0; k < 6; ++k) {
    world = Compose(world, host.output[k]);
    EXPECT_LT(Length(world.translation - p[k]), 1e-4f) << "node " << k;
  }
}

TEST(FixedStep, SubstepsFollowTheAccumulatorAndTheHitchClamp) {
  auto w = MakeWorld();
  EXPECT_EQ(w->Step(1.0f / 60.0f).substeps, 1);
  EXPECT_EQ(w->Step(1.0f / 240.0f).substeps, 0);
  EXPECT_EQ(w->Step(1.0f / 240.0f).substeps, 0);
  EXPECT_EQ(w->Step(1.0f / 240.0f).substeps, 0);
  EXPECT_EQ(w->Step(1.0f / 240.0f).substeps, 1);
  const FrameStats& hitch = w->Step(0.5f);
  EXPECT_EQ(hitch.substeps, 3);
  EXPECT_NEAR(hitch.dropped_seconds, 0.5f - 3.0f / 60.0f, 1.0f / 60.0f);
  EXPECT_EQ(w->Step(1.0f / 60.0f).substeps, 1);  // the dropped time is not carried
}

TEST(FixedStep, BadDtStepsNothing) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = Strand(4);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int i = 0; i < 10; ++i) w->Step(kStep);
  const auto before = Positions(*w, id, 4);
  const auto out_before = host.output;
  for (float dt : {0.0f, -1.0f, std::nanf(""), INFINITY}) {
    const FrameStats& st = w->Step(dt);
    EXPECT_TRUE(st.dt_rejected);
    EXPECT_EQ(st.substeps, 0);
  }
  const auto after = Positions(*w, id, 4);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(before[k], after[k]);
  EXPECT_EQ(out_before, host.output);
  EXPECT_EQ(w->Step(1e9f).substeps, 3);  // a huge dt is clamped
}

}  // namespace
}  // namespace tendon::test
