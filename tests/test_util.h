// tests/test_util.h: small rigs shared by the test suites.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tendon/tendon.h"

namespace tendon::test {

// A straight strand of `nodes` bones hanging from its root along `direction`.
// The scalar kernel whose arithmetic `isa` evaluates, lane by lane: kScalarFma for the
// fused kernels (AVX2+FMA, AVX-512, NEON, and itself), kScalar for the others.
inline Isa ScalarReferenceOf(Isa isa) {
  const bool fused = isa == Isa::kScalarFma || isa == Isa::kAvx2Fma || isa == Isa::kAvx512 || isa == Isa::kNeon;
  return fused ? Isa::kScalarFma : Isa::kScalar;
}

inline ChainArchetypeSettings Strand(int nodes, float segment = 0.1f, Vec3 direction = {1, 0, 0}) {
  ChainArchetypeSettings s;
  s.name = "strand";
  for (int i = 0; i < nodes; ++i) {
    ChainBone bone;
    bone.parent = i - 1;
    bone.rest_local.translation = i == 0 ? Vec3{} : direction * segment;
    s.bones.push_back(bone);
  }
  return s;
}

// A one-part box ragdoll (Crate()): the crates of the contact, contact-event and host-body
// suites. Undamped unless `damped`, so a collision's speeds are the solver's alone.
struct CrateOptions {
  float half = 0.25f;                        // m, the box's half extent on every axis
  float mass = 10.0f;                        // kg
  float restitution = 0.0f;                  // [0, 1]
  float friction = PartSettings{}.friction;  // [0, 10]
  bool damped = false;                       // true: PartSettings' default damping; false: none
};
inline RagdollSettings Crate(const CrateOptions& o = {}) {
  RagdollSettings s;
  PartSettings p;
  p.shape = {.type = PartShape::kBox, .half_extents = {o.half, o.half, o.half}};
  p.mass = o.mass;
  p.restitution = o.restitution;
  p.friction = o.friction;
  if (!o.damped) p.linear_damping = 0, p.angular_damping = 0;
  s.parts.push_back(p);
  return s;
}

// A two-part pendulum: a box root and a capsule hanging from it on a free ball joint.
inline RagdollSettings TwoPartPendulum() {
  RagdollSettings s;
  PartSettings root;
  root.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  root.mass = 2;
  s.parts.push_back(root);
  PartSettings arm;
  arm.parent = 0;
  arm.pose.translation = {0, -0.4f, 0};
  arm.shape = {.type = PartShape::kCapsule, .radius = 0.05f, .half_height = 0.2f};
  arm.mass = 1;
  arm.joint.anchor = {0, -0.1f, 0};
  arm.joint.normal_half_cone_degrees = 170;
  arm.joint.plane_half_cone_degrees = 170;
  s.parts.push_back(arm);
  return s;
}

// The host side of one chain instance: buffers Tendon reads and writes.
struct HostChain {
  Transform root_parent{};
  std::vector<Transform> animated;
  std::vector<Transform> output;
  std::vector<Transform> collider_frames;

  explicit HostChain(const ChainArchetypeSettings& s, Vec3 position = {}) {
    root_parent.translation = position;
    for (const ChainBone& b : s.bones) animated.push_back(b.rest_local);
    output = animated;
  }
  ChainBinding Binding(ChainArchetypeId archetype) {
    ChainBinding b;
    b.archetype = archetype;
    b.root_parent_world = &root_parent;
    b.animated_local = animated;
    b.output_local = output;
    b.collider_frames = collider_frames;
    return b;
  }
};

// Settings whose outputs are the last substep's state exactly (no render interpolation):
// for tests that read the simulation through the host's buffers.
inline WorldSettings LastSubstepOutputs(WorldSettings s = {}) {
  s.render_interpolation = false;
  return s;
}

inline std::unique_ptr<World> MakeWorld(WorldSettings s = {}) {
  auto r = World::Create(s);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : nullptr;
}

// A heap of 288 small crates touching in a 6 x 6 x 8 block on a ground plane at y = 0:
// one island of more than 512 part pairs with a contact (all the frame's), which the
// world splits by colour. Each crate
// writes its one part frame to out[i] (288 of them, sized here).
inline void BindCrateHeap(World& w, std::vector<std::vector<Transform>>* out) {
  RagdollSettings crate;
  PartSettings box;
  box.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  box.mass = 1;
  crate.parts.push_back(box);
  const RagdollArchetypeId a = w.BuildRagdollArchetype(crate).value();
  ASSERT_EQ(w.BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  out->assign(288, std::vector<Transform>(1));
  for (int i = 0; i < 288; ++i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement = Transform{{0.205f * static_cast<float>(i % 6), 0.11f + 0.205f * static_cast<float>(i / 36),
                             0.205f * static_cast<float>((i / 6) % 6)},
                            AxisAngle(Vec3{0, 1, 0}, 0.05f * static_cast<float>(i % 7)), {1, 1, 1}};
    b.output_parts = (*out)[i];
    ASSERT_TRUE(w.BindRagdoll(b).ok());
  }
}

inline std::vector<Vec3> Positions(const World& w, ChainId id, int n) {
  std::vector<Vec3> p(n);
  EXPECT_EQ(w.GetChainNodePositions(id, p).code, ErrorCode::kNone);
  return p;
}

}  // namespace tendon::test
