// Chains against what lies between their nodes (issue 38 §6: a kTendon link is a segment
// against spheres and capsules) and against the host's bodies (issue 38 §1: host shapes as
// extra per-lane colliders, by the archetype's host_body_mask).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
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


// A cape: six 8 cm links hanging from (0, 2, 0), node radius 2 cm, and a host capsule (a
// player, 15 cm radius, from 1.2 m to 1.75 m up) that walks from x = -1 m to x = 0.05 m,
// through where the cape hangs, in 60 frames and then stands there.
ChainArchetypeSettings Cape(uint32_t mask) {
  ChainArchetypeSettings s = Strand(7, 0.08f, {0, -1, 0});
  s.settings.stiffness = 0.02f;
  s.settings.node_radius = 0.02f;
  s.host_body_mask = mask;
  return s;
}
constexpr float kPlayerRadius = 0.15f;
detail::HostShape Player(int frame, uint32_t group = 1, bool trigger = false) {
  const float x = -1.0f + 1.05f * std::min(frame, 60) / 60.0f;
  detail::HostShape h;
  h.kind = detail::kHostCapsule;
  h.a[0] = x, h.a[1] = 1.2f, h.a[2] = 0.0f;
  h.b[0] = x, h.b[1] = 1.75f, h.b[2] = 0.0f;
  h.radius = kPlayerRadius;
  h.velocity[0] = frame < 60 ? 1.05f : 0.0f;
  h.group = group;
  h.trigger = trigger;
  return h;
}
// How deep the cape's deepest node is inside the player capsule (positive: inside its
// radius), after `frames` frames with the player given by `shape(frame)`.
template <class Shape>
float DeepestInPlayer(uint32_t mask, Shape shape, int frames = 120) {
  auto w = MakeWorld(LastSubstepOutputs());
  const ChainArchetypeSettings s = Cape(mask);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  float deepest = -1.0f;
  for (int frame = 0; frame < frames; ++frame) {
    const detail::HostShape h = shape(frame);
    detail::WorldAccess::SetHostShapes(*w, std::span<const detail::HostShape>(&h, 1));
    w->Step(kStep);
  }
  const detail::HostShape h = shape(frames - 1);
  const auto p = Positions(*w, id, 7);
  for (const Vec3& node : p) {
    const float d = SegmentDistance(node, node, {h.a[0], h.a[1], h.a[2]}, {h.b[0], h.b[1], h.b[2]});
    deepest = std::max(deepest, kPlayerRadius - d);
  }
  return deepest;
}

TEST(ChainHostBodies, ACapeIsPushedOutOfAHostCapsuleWalkedIntoIt) {
  // No node ends inside the capsule (within the node radius: its surface stays 2 cm clear,
  // less a millimetre of the last link restore).
  EXPECT_LT(DeepestInPlayer(1, [](int f) { return Player(f); }), -0.02f + 0.001f);
}

TEST(ChainHostBodies, WithoutAMatchingMaskTheCapsulePassesThroughTheCape) {
  // Mask 0 (the default) and a mask that names another group: the cape hangs where it
  // hung, through the capsule.
  EXPECT_GT(DeepestInPlayer(0, [](int f) { return Player(f); }), 0.05f);
  EXPECT_GT(DeepestInPlayer(2, [](int f) { return Player(f, 1); }), 0.05f);
}

TEST(ChainHostBodies, ATriggerHostBodyPushesNothing) {
  EXPECT_GT(DeepestInPlayer(1, [](int f) { return Player(f, 1, true); }), 0.05f);
}

TEST(ChainHostBodies, OnlyTheNearestMaxHostBodiesCollide) {
  // Two matching host bodies that the cape's bounds overlap from the first frame: the
  // player standing in it, and a big ball above whose surface cuts the cape's first link
  // (its centre a metre above the bounds' centre, the player's core a few cm off).
  // With max_host_bodies = 1 only the nearer one (the player) acts, bit for bit as the
  // player alone; with 2 the ball acts too.
  auto run = [](int32_t max_bodies) {
    auto w = MakeWorld(LastSubstepOutputs());
    ChainArchetypeSettings s = Cape(1);
    s.max_host_bodies = max_bodies;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s, {0, 2, 0});
    const ChainId id = w->BindChain(host.Binding(a)).value();
    for (int frame = 0; frame < 90; ++frame) {
      detail::HostShape shapes[2] = {Player(60), {}};
      shapes[1].kind = detail::kHostSphere;
      shapes[1].a[1] = 2.9f;
      shapes[1].radius = 1.0f;
      detail::WorldAccess::SetHostShapes(*w, shapes);
      w->Step(kStep);
    }
    return Positions(*w, id, 7);
  };
  auto alone = [] {
    auto w = MakeWorld(LastSubstepOutputs());
    ChainArchetypeSettings s = Cape(1);
    s.max_host_bodies = 1;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s, {0, 2, 0});
    const ChainId id = w->BindChain(host.Binding(a)).value();
    for (int frame = 0; frame < 90; ++frame) {
      const detail::HostShape h = Player(60);
      detail::WorldAccess::SetHostShapes(*w, std::span<const detail::HostShape>(&h, 1));
      w->Step(kStep);
    }
    return Positions(*w, id, 7);
  }();
  const auto one = run(1), two = run(2);
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(one[k].x, alone[k].x) << k;
    EXPECT_EQ(one[k].y, alone[k].y) << k;
  }
  float differ = 0.0f;
  for (int k = 0; k < 7; ++k) differ = std::max(differ, Length(two[k] - one[k]));
  EXPECT_GT(differ, 1e-3f) << "the second body acts when two may";
}

TEST(ChainHostBodies, AChainWithoutAMaskIsBitIdenticalWithHostBodiesAround) {
  // host_body_mask 0 leaves the chain's lanes as they were: with host shapes in the world
  // and any max_host_bodies, every bit of every node is what a world without them gives.
  auto run = [](bool shapes, int32_t max_bodies) {
    auto w = MakeWorld(LastSubstepOutputs());
    ChainArchetypeSettings s = Cape(0);
    s.max_host_bodies = max_bodies;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s, {0, 2, 0});
    const ChainId id = w->BindChain(host.Binding(a)).value();
    std::vector<Vec3> all;
    for (int frame = 0; frame < 90; ++frame) {
      const detail::HostShape h = Player(frame);
      if (shapes) detail::WorldAccess::SetHostShapes(*w, std::span<const detail::HostShape>(&h, 1));
      host.root_parent.translation.x = 0.3f * std::sin(frame * 0.1f);
      w->Step(kStep);
      for (const Vec3& p : Positions(*w, id, 7)) all.push_back(p);
    }
    return all;
  };
  const auto without = run(false, 4), with = run(true, 16);
  ASSERT_EQ(without.size(), with.size());
  EXPECT_EQ(std::memcmp(without.data(), with.data(), sizeof(Vec3) * without.size()), 0);
}

// Sixteen capes on the reference and on every instruction set, each with its own host
// capsules moving through it (two per cape, one sphere among them), 240 frames: every
// instruction set gives its reference's bits, node for node (the link test included).
TEST(ChainHostBodies, EveryInstructionSetGivesItsScalarReferenceBits) {
  constexpr int kCapes = 16, kNodes = 7;
  auto run = [&](Isa isa) {
    WorldSettings ws = LastSubstepOutputs();
    ws.isa = isa;
    ws.ambient_wind = {2, 0, 1};
    auto w = MakeWorld(ws);
    ChainArchetypeSettings s = Cape(1);
    s.max_host_bodies = 2;
    s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = 0, .a = {-0.2f, -0.25f, -0.1f},
                           .b = {0.2f, -0.25f, 0.1f}, .radius = 0.015f});
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    std::vector<HostChain> hosts;
    for (int i = 0; i < kCapes; ++i) hosts.emplace_back(s, Vec3{static_cast<float>(i) * 2.0f, 2.0f, 0.0f});
    std::vector<ChainId> ids;
    for (HostChain& h : hosts) ids.push_back(w->BindChain(h.Binding(a)).value());
    std::vector<Vec3> all;
    std::vector<detail::HostShape> shapes;
    for (int frame = 0; frame < 240; ++frame) {
      shapes.clear();
      for (int i = 0; i < kCapes; ++i) {
        detail::HostShape h = Player((frame + 7 * i) % 120);
        h.a[0] += 2.0f * i, h.b[0] += 2.0f * i;
        shapes.push_back(h);
        detail::HostShape ball;
        ball.a[0] = 2.0f * i + 0.3f * std::sin(frame * 0.05f + i), ball.a[1] = 1.6f, ball.a[2] = 0.05f;
        ball.radius = 0.08f;
        shapes.push_back(ball);
      }
      detail::WorldAccess::SetHostShapes(*w, shapes);
      for (int i = 0; i < kCapes; ++i) hosts[i].root_parent.translation.z = 0.2f * std::sin(frame * 0.07f + i);
      w->Step(kStep);
      for (const ChainId id : ids)
        for (const Vec3& p : Positions(*w, id, kNodes)) all.push_back(p);
    }
    return all;
  };
  const auto scalar = run(Isa::kScalar), scalar_fma = run(Isa::kScalarFma);
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa) || isa == Isa::kScalar || isa == Isa::kScalarFma) continue;
    const auto& reference = ScalarReferenceOf(isa) == Isa::kScalar ? scalar : scalar_fma;
    const auto got = run(isa);
    ASSERT_EQ(got.size(), reference.size());
    EXPECT_EQ(std::memcmp(got.data(), reference.data(), sizeof(Vec3) * got.size()), 0) << ToString(isa);
  }
}

TEST(ChainHostBodies, BadHostBodySettingsAreRefusedNamingTheField) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Cape(1);
  s.max_host_bodies = 17;
  auto r = w->BuildChainArchetype(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOutOfRange);
  EXPECT_EQ(r.error().field, "max_host_bodies");
  s.max_host_bodies = -1;
  r = w->BuildChainArchetype(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "max_host_bodies");
  s.max_host_bodies = 16;
  s.colliders.assign(17, ColliderSettings{.bone = 0, .radius = 0.01f});
  r = w->BuildChainArchetype(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCapacity);
  EXPECT_EQ(r.error().field, "max_host_bodies");
  s.colliders.clear();
  s.model = ChainModel::kVrm;
  r = w->BuildChainArchetype(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "host_body_mask");
  // Out-of-range counts are not read without a mask.
  s.model = ChainModel::kTendon;
  s.host_body_mask = 0;
  s.max_host_bodies = 99;
  EXPECT_TRUE(w->BuildChainArchetype(s).ok());
}

}  // namespace
}  // namespace tendon::test
