// Chains against what lies between their nodes (issue 38 §6: a kTendon link is a segment
// against spheres and capsules) and against the host's bodies (issue 38 §1: host shapes as
// extra per-lane colliders, by the archetype's host_body_mask).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "kernel/chains/chain_archetype.h"
#include "kernel/chains/chain_host_pick.h"
#include "kernel/core/host_shapes.h"
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


// A cape: six 8 cm links hanging from (0, 2, 0), node radius 2 cm, and a host body (a
// player: a capsule of 15 cm radius from 1.2 m to 1.75 m up, or a box as tall) that walks
// from x = -1 m to x = 0.05 m, through where the cape hangs, in 60 frames and then stands
// there. The host body is the World's own (World::AddHostBody, moved each frame by
// World::SetHostBodyMotion), as a game would drive it.
ChainArchetypeSettings Cape(uint32_t mask) {
  ChainArchetypeSettings s = Strand(7, 0.08f, {0, -1, 0});
  s.settings.stiffness = 0.02f;
  s.settings.node_radius = 0.02f;
  s.host_body_mask = mask;
  return s;
}
constexpr float kPlayerRadius = 0.15f;
constexpr float kPlayerHalfHeight = 0.275f;  // the core from 1.2 m to 1.75 m
constexpr float kPlayerCentreY = 1.475f;
const Vec3 kBoxHalf{0.15f, 0.3f, 0.15f};
float PlayerX(int frame) { return -1.0f + 1.05f * std::min(frame, 60) / 60.0f; }
HostBodySettings PlayerBody(HostBodyShape shape = HostBodyShape::kCapsule, uint32_t group = 1, bool trigger = false) {
  HostBodySettings b;
  b.shape = shape;
  b.radius = kPlayerRadius;
  b.half_height = kPlayerHalfHeight;
  b.half_extents = kBoxHalf;
  b.transform.translation = {PlayerX(0), kPlayerCentreY, 0.0f};
  b.collision_group = group;
  b.trigger = trigger;
  return b;
}
// Puts the body where the player is at `frame`, turned `yaw` radians about y.
void MovePlayer(World& w, HostBodyId body, int frame, float yaw = 0.0f, float dx = 0.0f) {
  Transform t;
  t.translation = {PlayerX(frame) + dx, kPlayerCentreY, 0.0f};
  t.rotation = Quat{0.0f, std::sin(0.5f * yaw), 0.0f, std::cos(0.5f * yaw)};
  ASSERT_EQ(w.SetHostBodyMotion(body, t, {frame < 60 ? 1.05f : 0.0f, 0, 0}, {}).code, ErrorCode::kNone);
}
// How deep `node` is inside the player at x (positive: inside its surface).
float DepthInCapsule(Vec3 node, float x) {
  return kPlayerRadius - SegmentDistance(node, node, {x, kPlayerCentreY - kPlayerHalfHeight, 0},
                                         {x, kPlayerCentreY + kPlayerHalfHeight, 0});
}
float DepthInBox(Vec3 node, float x, float yaw) {
  // Into the box's frame (turned yaw about y), then the signed distance to an axis box.
  const Vec3 e = node - Vec3{x, kPlayerCentreY, 0};
  const float c = std::cos(yaw), s = std::sin(yaw);
  const Vec3 l{c * e.x - s * e.z, e.y, s * e.x + c * e.z};
  const Vec3 q{std::fabs(l.x) - kBoxHalf.x, std::fabs(l.y) - kBoxHalf.y, std::fabs(l.z) - kBoxHalf.z};
  const Vec3 o{std::max(q.x, 0.0f), std::max(q.y, 0.0f), std::max(q.z, 0.0f)};
  const float outside = Length(o), inside = std::min(std::max(q.x, std::max(q.y, q.z)), 0.0f);
  return -(outside + inside);
}
// How deep the cape's deepest node is inside the player (positive: inside its surface),
// after `frames` frames.
float DeepestInPlayer(uint32_t mask, HostBodySettings body, int frames = 120, float yaw = 0.0f) {
  auto w = MakeWorld(LastSubstepOutputs());
  const ChainArchetypeSettings s = Cape(mask);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  const HostBodyId player = w->AddHostBody(body).value();
  for (int frame = 0; frame < frames; ++frame) {
    MovePlayer(*w, player, frame, yaw);
    w->Step(kStep);
  }
  float deepest = -1.0f;
  for (const Vec3& node : Positions(*w, id, 7)) {
    deepest = std::max(deepest, body.shape == HostBodyShape::kBox ? DepthInBox(node, PlayerX(frames - 1), yaw)
                                                                  : DepthInCapsule(node, PlayerX(frames - 1)));
  }
  return deepest;
}

TEST(ChainHostBodies, ACapeIsPushedOutOfAHostCapsuleWalkedIntoIt) {
  // No node ends inside the capsule (within the node radius: its surface stays 2 cm clear,
  // less a millimetre of the last link restore).
  EXPECT_LT(DeepestInPlayer(1, PlayerBody()), -0.02f + 0.001f);
}

TEST(ChainHostBodies, ACapeIsPushedOutOfAHostBoxWalkedIntoIt) {
  // The box as the capsule: no node ends inside it, square to the walk or turned 30 degrees.
  // Each node is pushed to 2 cm (its radius) from the box; the link restore after the push
  // takes back up to a centimetre where the cape drapes over the box's top edge (only nodes
  // meet a box, not links), so at least half the radius stays clear.
  EXPECT_LT(DeepestInPlayer(1, PlayerBody(HostBodyShape::kBox)), -0.01f);
  EXPECT_LT(DeepestInPlayer(1, PlayerBody(HostBodyShape::kBox), 120, 0.5236f), -0.01f);
  // Without the mask the box stands through the cape.
  EXPECT_GT(DeepestInPlayer(0, PlayerBody(HostBodyShape::kBox)), 0.05f);
}

TEST(ChainHostBodies, WithoutAMatchingMaskTheCapsulePassesThroughTheCape) {
  // Mask 0 (the default) and a mask that names another group: the cape hangs where it
  // hung, through the capsule.
  EXPECT_GT(DeepestInPlayer(0, PlayerBody()), 0.05f);
  EXPECT_GT(DeepestInPlayer(2, PlayerBody(HostBodyShape::kCapsule, 1)), 0.05f);
}

TEST(ChainHostBodies, ATriggerHostBodyPushesNothing) {
  EXPECT_GT(DeepestInPlayer(1, PlayerBody(HostBodyShape::kCapsule, 1, true)), 0.05f);
}

TEST(ChainHostBodies, OnlyTheNearestMaxHostBodiesCollide) {
  // Two matching host bodies that the cape's bounds overlap from the first frame: the
  // player standing in it, and a big ball above whose surface cuts the cape's first link
  // (its centre a metre above the bounds' centre, the player's core a few cm off).
  // With max_host_bodies = 1 only the nearer one (the player) acts, bit for bit as the
  // player alone; with 2 the ball acts too.
  auto run = [](int32_t max_bodies, bool ball) {
    auto w = MakeWorld(LastSubstepOutputs());
    ChainArchetypeSettings s = Cape(1);
    s.max_host_bodies = max_bodies;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s, {0, 2, 0});
    const ChainId id = w->BindChain(host.Binding(a)).value();
    HostBodySettings standing = PlayerBody();  // there from the first frame (chains see a body's last Step)
    standing.transform.translation.x = PlayerX(60);
    const HostBodyId player = w->AddHostBody(standing).value();
    if (ball) {
      HostBodySettings b;
      b.shape = HostBodyShape::kSphere;
      b.radius = 1.0f;
      b.transform.translation = {0, 2.9f, 0};
      w->AddHostBody(b).value();
    }
    for (int frame = 0; frame < 90; ++frame) {
      MovePlayer(*w, player, 60);
      w->Step(kStep);
    }
    return Positions(*w, id, 7);
  };
  const auto alone = run(1, false), one = run(1, true), two = run(2, true);
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(one[k].x, alone[k].x) << k;
    EXPECT_EQ(one[k].y, alone[k].y) << k;
  }
  float differ = 0.0f;
  for (int k = 0; k < 7; ++k) differ = std::max(differ, Length(two[k] - one[k]));
  EXPECT_GT(differ, 1e-3f) << "the second body acts when two may";
}

TEST(ChainHostBodies, AChainWithoutAMaskIsBitIdenticalWithHostBodiesAround) {
  // host_body_mask 0 leaves the chain's lanes as they were: with host bodies (a capsule and
  // a box) in the world and any max_host_bodies, every bit of every node is what a world
  // without them gives.
  auto run = [](bool bodies, int32_t max_bodies) {
    auto w = MakeWorld(LastSubstepOutputs());
    ChainArchetypeSettings s = Cape(0);
    s.max_host_bodies = max_bodies;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    HostChain host(s, {0, 2, 0});
    const ChainId id = w->BindChain(host.Binding(a)).value();
    HostBodyId player{}, box{};
    if (bodies) {
      player = w->AddHostBody(PlayerBody()).value();
      box = w->AddHostBody(PlayerBody(HostBodyShape::kBox)).value();
    }
    std::vector<Vec3> all;
    for (int frame = 0; frame < 90; ++frame) {
      if (bodies) {
        MovePlayer(*w, player, frame);
        MovePlayer(*w, box, frame, 0.3f, 0.1f);
      }
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

// A kVrm strand (five 8 cm joints hanging from (0, 2, 0), hit radius 2 cm) and the player
// walked into it: a host capsule or box is one more collider under the VRM rule, so no
// tail ends within half its hit radius of it (the rule pushes each tail out to its hit
// radius and restores the bone's length, which takes back up to 7 mm at the box's top
// edge); without the mask it passes through.
float DeepestVrmTail(uint32_t mask, HostBodySettings body) {
  auto w = MakeWorld(LastSubstepOutputs());
  ChainArchetypeSettings s = Strand(6, 0.08f, {0, -1, 0});
  s.model = ChainModel::kVrm;
  s.settings.stiffness = 1.0f;  // a rate (1/s) under the VRM rule
  s.settings.node_radius = 0.02f;
  s.host_body_mask = mask;
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, {0, 2, 0});
  const ChainId id = w->BindChain(host.Binding(a)).value();
  const HostBodyId player = w->AddHostBody(body).value();
  for (int frame = 0; frame < 120; ++frame) {
    MovePlayer(*w, player, frame);
    w->Step(kStep);
  }
  float deepest = -1.0f;
  const auto p = Positions(*w, id, 6);
  for (int k = 1; k < 6; ++k) {
    deepest = std::max(deepest, body.shape == HostBodyShape::kBox ? DepthInBox(p[k], PlayerX(119), 0.0f)
                                                                  : DepthInCapsule(p[k], PlayerX(119)));
  }
  return deepest;
}

TEST(ChainHostBodies, AKVrmStrandIsPushedOutOfAHostCapsuleAndABox) {
  EXPECT_LT(DeepestVrmTail(1, PlayerBody()), -0.01f);
  EXPECT_LT(DeepestVrmTail(1, PlayerBody(HostBodyShape::kBox)), -0.01f);
  EXPECT_GT(DeepestVrmTail(0, PlayerBody()), 0.05f);
  EXPECT_GT(DeepestVrmTail(0, PlayerBody(HostBodyShape::kBox)), 0.05f);
}

// Sixteen capes (kTendon) and sixteen kVrm strands on the reference and on every
// instruction set, each with its own host bodies moving through it (a capsule, a turned
// box and a sphere per cape), 240 frames: every instruction set gives its reference's bits,
// node for node (the link test and the box test included).
TEST(ChainHostBodies, EveryInstructionSetGivesItsScalarReferenceBits) {
  constexpr int kCapes = 16, kNodes = 7;
  auto run = [&](Isa isa) {
    WorldSettings ws = LastSubstepOutputs();
    ws.isa = isa;
    ws.ambient_wind = {2, 0, 1};
    auto w = MakeWorld(ws);
    ChainArchetypeSettings s = Cape(1);
    s.max_host_bodies = 3;
    s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = 0, .a = {-0.2f, -0.25f, -0.1f},
                           .b = {0.2f, -0.25f, 0.1f}, .radius = 0.015f});
    ChainArchetypeSettings vrm = Strand(kNodes, 0.08f, {0, -1, 0});
    vrm.model = ChainModel::kVrm;
    vrm.settings.stiffness = 1.0f;
    vrm.settings.node_radius = 0.02f;
    vrm.host_body_mask = 1;
    vrm.max_host_bodies = 3;
    const ChainArchetypeId a = w->BuildChainArchetype(s).value();
    const ChainArchetypeId av = w->BuildChainArchetype(vrm).value();
    std::vector<HostChain> hosts;
    for (int i = 0; i < 2 * kCapes; ++i)
      hosts.emplace_back(i < kCapes ? s : vrm, Vec3{static_cast<float>(i) * 2.0f, 2.0f, 0.0f});
    std::vector<ChainId> ids;
    for (int i = 0; i < 2 * kCapes; ++i) ids.push_back(w->BindChain(hosts[i].Binding(i < kCapes ? a : av)).value());
    std::vector<HostBodyId> players, boxes, balls;
    for (int i = 0; i < 2 * kCapes; ++i) {
      players.push_back(w->AddHostBody(PlayerBody()).value());
      boxes.push_back(w->AddHostBody(PlayerBody(HostBodyShape::kBox)).value());
      HostBodySettings ball;
      ball.shape = HostBodyShape::kSphere;
      ball.radius = 0.08f;
      balls.push_back(w->AddHostBody(ball).value());
    }
    std::vector<Vec3> all;
    for (int frame = 0; frame < 240; ++frame) {
      for (int i = 0; i < 2 * kCapes; ++i) {
        Transform t;
        t.translation = {PlayerX((frame + 7 * i) % 120) + 2.0f * i, kPlayerCentreY, 0.0f};
        EXPECT_EQ(w->SetHostBodyMotion(players[i], t, {1, 0, 0}, {}).code, ErrorCode::kNone);
        t.translation = {PlayerX((frame + 40 + 7 * i) % 120) + 2.0f * i, kPlayerCentreY + 0.1f, 0.05f};
        t.rotation = Quat{0.1f, std::sin(0.01f * frame + i), 0.0f, 1.0f};
        t.rotation = Normalize(t.rotation);
        EXPECT_EQ(w->SetHostBodyMotion(boxes[i], t, {1, 0, 0}, {}).code, ErrorCode::kNone);
        t.translation = {2.0f * i + 0.3f * std::sin(frame * 0.05f + i), 1.6f, 0.05f};
        t.rotation = Quat{};
        EXPECT_EQ(w->SetHostBodyMotion(balls[i], t, {}, {}).code, ErrorCode::kNone);
        hosts[i].root_parent.translation.z = 0.2f * std::sin(frame * 0.07f + i);
      }
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

// The broad phase against the linear scan it replaced, on a random scene: 400 host shapes
// in a 16 m cube (spheres, capsules and turned boxes, a few triggers, groups 1 and 2, a 60 m floor box
// that spans every query), and 2,000 random lane bounds with random masks and slot counts:
// every pick is the same shapes in the same order.
TEST(ChainHostBodies, TheBroadPhasePicksWhatTheLinearScanPicks) {
  uint32_t seed = 12345u;
  auto uniform = [&](float lo, float hi) {
    seed = seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * static_cast<float>(seed >> 8) / static_cast<float>(1u << 24);
  };
  std::vector<detail::HostShape> shapes(400);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    detail::HostShape& h = shapes[i];
    h.kind = static_cast<int32_t>(i % 3);
    for (int a = 0; a < 3; ++a) h.a[a] = uniform(-8.0f, 8.0f);
    for (int a = 0; a < 3; ++a) h.b[a] = h.a[a] + uniform(-1.0f, 1.0f);
    const Quat q = Normalize(Quat{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(0.1f, 1)});
    h.q[0] = q.x, h.q[1] = q.y, h.q[2] = q.z, h.q[3] = q.w;
    for (int a = 0; a < 3; ++a) h.half[a] = uniform(0.05f, 1.0f);
    h.radius = uniform(0.05f, 0.8f);
    h.group = i % 5 == 0 ? 2u : 1u;
    h.trigger = i % 17 == 0;
  }
  shapes[123].kind = detail::kHostBox;  // the floor
  shapes[123].a[1] = -1.0f;
  shapes[123].q[0] = shapes[123].q[1] = shapes[123].q[2] = 0.0f, shapes[123].q[3] = 1.0f;
  shapes[123].half[0] = shapes[123].half[2] = 30.0f, shapes[123].half[1] = 0.5f;
  shapes[123].group = 1, shapes[123].trigger = false;
  detail::HostBroadPhase broad;
  broad.Reserve(shapes.size());
  broad.Build(shapes);
  int32_t picked = 0;
  for (int query = 0; query < 2000; ++query) {
    detail::HostPickBounds bounds;
    bounds.lo = {uniform(-9, 7), uniform(-9, 7), uniform(-9, 7)};
    bounds.hi = bounds.lo + Vec3{uniform(0, 3), uniform(0, 3), uniform(0, 3)};
    const uint32_t mask = query % 4 == 0 ? 2u : query % 4 == 1 ? 3u : 1u;
    const int32_t slots = 1 + query % detail::kMaxChainHostBodies;
    int32_t linear[detail::kMaxChainHostBodies], fast[detail::kMaxChainHostBodies];
    const int32_t n_linear = detail::PickHostShapesLinear(shapes, bounds, mask, slots, linear);
    const int32_t n_fast = broad.Pick(bounds, mask, slots, fast);
    ASSERT_EQ(n_fast, n_linear) << "query " << query;
    for (int32_t j = 0; j < n_linear; ++j) ASSERT_EQ(fast[j], linear[j]) << "query " << query << " pick " << j;
    picked += n_linear;
  }
  EXPECT_GT(picked, 2000) << "the scene is dense enough that most queries pick something";
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
  // A kVrm chain collides with host bodies too.
  s.colliders.clear();
  s.model = ChainModel::kVrm;
  s.settings.stiffness = 1.0f;
  EXPECT_TRUE(w->BuildChainArchetype(s).ok());
  // Out-of-range counts are not read without a mask.
  s.model = ChainModel::kTendon;
  s.settings.stiffness = 0.02f;
  s.host_body_mask = 0;
  s.max_host_bodies = 99;
  EXPECT_TRUE(w->BuildChainArchetype(s).ok());
}

}  // namespace
}  // namespace tendon::test
