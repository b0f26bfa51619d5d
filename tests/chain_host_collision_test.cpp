// Chains against what lies between their nodes (issue 38 §6: a kTendon link is a segment
// against spheres and capsules) and against the host's bodies (issue 38 §1: host shapes as
// extra per-lane colliders, by the archetype's host_body_mask).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel/core/host_shapes.h"
#include "kernel/world/world_access.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;

// The distance between segments p0..p1 and q0..q1, by dense sampling of the first against
// the clamped projection onto the second (a test's oracle: slow, simple, independent of
// the kernel's closed form).
float SegmentDistance(Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1) {
  float best = 1e30f;
  const Vec3 d = q1 - q0;
  const float len2 = std::max(Dot(d, d), 1e-12f);
  for (int i = 0; i <= 1000; ++i) {
    const Vec3 p = p0 + (p1 - p0) * (static_cast<float>(i) / 1000.0f);
    const float t = std::clamp(Dot(p - q0, d) / len2, 0.0f, 1.0f);
    best = std::min(best, Length(p - (q0 + d * t)));
  }
  return best;
}

// A 40 cm link falls from horizontal and, at 45 degrees, meets a capsule 1.5 cm thick across
// its middle, at about 1.2 m/s there (2 cm a substep). Its tip, 40 cm out, never comes near
// the capsule: only the link can meet it. Points alone let it through, and it hung straight
// down; as a segment it comes to rest on the capsule, on the side it came from.
TEST(ChainLinkCollision, AFastLinkDoesNotPassAThinCapsuleBetweenItsNodes) {
  auto w = MakeWorld(LastSubstepOutputs());
  ChainArchetypeSettings s = Strand(2, 0.4f, {1, 0, 0});
  s.settings.stiffness = 0.0f;
  s.settings.damping = 0.98f;
  const float c45 = std::sqrt(0.5f);
  const Vec3 centre{0.2f * c45, -0.2f * c45, 0.0f};  // in the root's frame (root at 0, 2, 0)
  constexpr float kRadius = 0.015f;
  s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = 0, .a = centre + Vec3{0, 0, -0.3f},
                         .b = centre + Vec3{0, 0, 0.3f}, .radius = kRadius});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  const Vec3 root{0, 2, 0}, core = root + centre;
  for (int frame = 0; frame < 180; ++frame) {
    w->Step(kStep);
    const auto p = Positions(*w, id, 2);
    // Above the capsule: the link turns clockwise from +x, and the capsule's centre stays
    // on its clockwise side (the z of (tip - root) x (core - root) stays negative).
    const Vec3 link = p[1] - root, to_core = core - root;
    ASSERT_LT(link.x * to_core.y - link.y * to_core.x, 0.0f) << "frame " << frame << ": the link passed the capsule";
  }
  const auto p = Positions(*w, id, 2);
  EXPECT_GT(p[1].x, 0.25f) << "the link rests on the capsule instead of hanging straight down";
  EXPECT_GT(SegmentDistance(p[0], p[1], core + Vec3{0, 0, -0.3f}, core + Vec3{0, 0, 0.3f}), kRadius - 0.002f);
}

}  // namespace
}  // namespace tendon::test
