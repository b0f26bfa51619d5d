// Contacts between ragdolls (and props): momentum, energy, filtering, the pile.
#include <cmath>
#include <cstdlib>
#include <string>

#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "ports/json/json.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;

TEST(RagdollContacts, TwoCratesCollidingConserveMomentumAndDoNotInterpenetrate) {
  WorldSettings ws;
  ws.gravity = {0, 0, 0};
  auto w = MakeWorld(ws);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate({.half = 0.25f, .mass = 10.0f, .restitution = 0.5f})).value();
  const RagdollArchetypeId b = w->BuildRagdollArchetype(Crate({.half = 0.25f, .mass = 30.0f, .restitution = 0.5f})).value();
  std::vector<Transform> pa(1), pb(1);
  RagdollBinding ba;
  ba.archetype = a;
  ba.placement.translation = {-1, 0, 0};
  ba.linear_velocity = {4, 0, 0};
  ba.output_parts = pa;
  const RagdollId ia = w->BindRagdoll(ba).value();
  RagdollBinding bb;
  bb.archetype = b;
  bb.placement.translation = {1, 0, 0};
  bb.output_parts = pb;
  const RagdollId ib = w->BindRagdoll(bb).value();
  float closest = 10;
  for (int f = 0; f < 90; ++f) {
    w->Step(kStep);
    closest = std::min(closest, pb[0].translation.x - pa[0].translation.x);
  }
  std::vector<Vec3> va(1), wa(1), vb(1), wb(1);
  EXPECT_TRUE(w->GetRagdollVelocities(ia, va, wa).ok());
  EXPECT_TRUE(w->GetRagdollVelocities(ib, vb, wb).ok());
  // Momentum 10 x 4 = 40 kg m/s before; after: shared, and they separated.
  EXPECT_NEAR(10 * va[0].x + 30 * vb[0].x, 40.0f, 0.4f);
  EXPECT_GT(vb[0].x, va[0].x) << "they separate after the hit";
  EXPECT_GT(vb[0].x, 0.5f);
  EXPECT_GT(closest, 0.5f - 0.02f) << "faces met without passing into each other";
  EXPECT_GT(w->LastStats().ragdoll_pairs + 1, 0);
}

// A sleeping crate stays asleep under one set down on it (it acts as static: the new one
// rests on it) and wakes when one falls on it.
TEST(RagdollContacts, ASleeperWakesWhenStruckNotWhenTouchedGently) {
  auto run = [](float drop_height) {
    auto w = MakeWorld();
    EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
    const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate({.half = 0.25f, .mass = 10.0f})).value();
    std::vector<Transform> below(1), above(1);
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {0, 0.25f, 0};
    b.output_parts = below;
    const RagdollId sleeper = w->BindRagdoll(b).value();
    for (int f = 0; f < 120 && !w->IsRagdollAsleep(sleeper); ++f) w->Step(kStep);
    EXPECT_TRUE(w->IsRagdollAsleep(sleeper)) << "resting on the ground, it sleeps";
    b.placement.translation = {0.1f, 0.75f + drop_height, 0};
    b.output_parts = above;
    w->BindRagdoll(b).value();
    bool woke = false;
    for (int f = 0; f < 60; ++f) {
      w->Step(kStep);
      woke = woke || !w->IsRagdollAsleep(sleeper);
    }
    if (drop_height == 0.0f) {
      EXPECT_NEAR(above[0].translation.y, 0.75f, 0.01f) << "the upper crate rests on the lower one";
    }
    return woke;
  };
  EXPECT_FALSE(run(0.0f)) << "set down on it";
  EXPECT_TRUE(run(1.0f)) << "dropped from 1 m (4.4 m/s)";
}

// Static friction holds a crate on a slope its friction can carry, without creeping, and
// lets it slide down one it cannot.
TEST(RagdollContacts, FrictionHoldsACrateOnASlopeItCanAndNotOneItCannot) {
  auto slide = [](float friction) {
    WorldSettings ws;
    ws.ragdoll_sleep_speed = 0;  // it must hold by friction, not by sleeping
    auto w = MakeWorld(ws);
    const float angle = 0.35f;  // 20 degrees: tan = 0.36
    const Vec3 n = Rotate(AxisAngle(Vec3{0, 0, 1}, angle), Vec3{0, 1, 0});
    EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{n, 0}}}).code, ErrorCode::kNone);
    RagdollSettings s = Crate({.half = 0.2f, .mass = 5.0f});
    s.parts[0].friction = friction;
    const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
    std::vector<Transform> out(1);
    RagdollBinding b;
    b.archetype = a;
    b.placement = Transform{n * 0.201f, AxisAngle(Vec3{0, 0, 1}, angle), {1, 1, 1}};
    b.output_parts = out;
    w->BindRagdoll(b).value();
    for (int f = 0; f < 30; ++f) w->Step(kStep);
    const Vec3 settled = out[0].translation;
    for (int f = 0; f < 180; ++f) w->Step(kStep);
    return Length(out[0].translation - settled);
  };
  EXPECT_LT(slide(0.6f), 1e-3f) << "friction 0.6 holds it on 20 degrees for 3 s";
  EXPECT_GT(slide(0.1f), 1.0f) << "friction 0.1 does not";
}

// A crate dropped flat onto a fixed box (a one-part ragdoll held by its kinematic root, so
// static in their pair) lands and stays put, on a box larger than it or its own size. Each
// frame keeps kContactsPerPair of the pair's samples in reach: the crate's four bottom
// corners and face centre, and the box's top face centre. The four nearest were the two
// centres and the two corners of the lower edge, so the crate, held along one edge and its
// middle for a frame, tipped the other edge down, which the next frame kept instead: it
// rocked from frame to frame, 1.5 times harder each, until it was thrown off.
TEST(RagdollContacts, ABoxRestsOnAFixedBoxWithoutRocking) {
  for (const float platform_half : {2.0f, 0.3f, 4.0f, 0.25f}) {
    SCOPED_TRACE(platform_half);
    auto w = MakeWorld();
    RagdollSettings platform = Crate({.half = platform_half, .mass = 1.0f});
    platform.parts[0].shape.half_extents = {platform_half, 0.1f, platform_half};
    static Transform root{{0, -0.1f, 0}, {}, {1, 1, 1}};
    std::vector<Transform> platform_out(1), out(1);
    RagdollBinding pb;
    pb.archetype = w->BuildRagdollArchetype(platform).value();
    pb.placement = root;
    pb.kinematic_root = &root;
    pb.output_parts = platform_out;
    w->BindRagdoll(pb).value();
    RagdollSettings crate = Crate({.half = 0.25f, .mass = 10.0f});
    crate.parts[0].friction = 0.8f;
    RagdollBinding b;
    b.archetype = w->BuildRagdollArchetype(crate).value();
    b.placement.translation = {0, 0.5f, 0};  // 0.25 m above the platform's top
    b.output_parts = out;
    const RagdollId id = w->BindRagdoll(b).value();
    float fastest_spin = 0;
    for (int f = 0; f < 300; ++f) {
      w->Step(kStep);
      std::vector<Vec3> v(1), spin(1);
      ASSERT_TRUE(w->GetRagdollVelocities(id, v, spin).ok());
      if (f >= 30) fastest_spin = std::max(fastest_spin, Length(spin[0]));
    }
    std::vector<Vec3> v(1), spin(1);
    ASSERT_TRUE(w->GetRagdollVelocities(id, v, spin).ok());
    EXPECT_LT(Length(spin[0]), 0.05f) << "at rest after 5 s";
    EXPECT_LT(fastest_spin, 0.5f) << "it never rocked after landing";
    EXPECT_NEAR(out[0].translation.y, 0.25f, 0.01f) << "resting on the platform's top";
    EXPECT_NEAR(out[0].translation.x, 0.0f, 0.01f);
    EXPECT_NEAR(out[0].translation.z, 0.0f, 0.01f);
  }
}

TEST(RagdollContacts, CollisionGroupsFilterPairs) {
  WorldSettings ws;
  ws.gravity = {0, 0, 0};
  auto w = MakeWorld(ws);
  RagdollSettings ghosts = Crate();
  ghosts.collision_group = 2;
  ghosts.collision_mask = ~2u;  // never hit each other, hit everything else
  const RagdollArchetypeId g = w->BuildRagdollArchetype(ghosts).value();
  const RagdollArchetypeId c = w->BuildRagdollArchetype(Crate()).value();
  std::vector<std::vector<Transform>> out(3, std::vector<Transform>(1));
  auto bind = [&](RagdollArchetypeId a, Vec3 at, Vec3 v, int i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = at;
    b.linear_velocity = v;
    b.output_parts = out[i];
    return w->BindRagdoll(b).value();
  };
  bind(g, {-1, 0, 0}, {3, 0, 0}, 0);
  bind(g, {1, 0, 0}, {-3, 0, 0}, 1);
  bind(c, {0, 0, 3}, {0, 0, 0}, 2);
  for (int f = 0; f < 40; ++f) w->Step(kStep);
  // The two ghosts passed through each other; the plain crate was never touched.
  EXPECT_GT(out[0][0].translation.x, 0.9f);
  EXPECT_LT(out[1][0].translation.x, -0.9f);
  EXPECT_NEAR(out[2][0].translation.z, 3.0f, 1e-6f);
}

TEST(RagdollContacts, StaticCollideModeMeetsOnlyItsOwnKind) {
  WorldSettings ws;
  ws.gravity = {0, 0, 0};
  auto w = MakeWorld(ws);
  const RagdollArchetypeId c = w->BuildRagdollArchetype(Crate()).value();
  std::vector<std::vector<Transform>> out(4, std::vector<Transform>(1));
  auto bind = [&](Vec3 at, Vec3 v, RagdollCollideMode mode, int i) {
    RagdollBinding b;
    b.archetype = c;
    b.placement.translation = at;
    b.linear_velocity = v;
    b.collide_mode = mode;
    b.output_parts = out[i];
    return w->BindRagdoll(b).value();
  };
  // A 'static' ragdoll flies through a dynamic crate without shoving it...
  bind({-1, 0, 0}, {3, 0, 0}, RagdollCollideMode::kStatic, 0);
  bind({1, 0, 0}, {0, 0, 0}, RagdollCollideMode::kAll, 1);
  // ...but hits another 'static' one.
  bind({-1, 0, 5}, {3, 0, 0}, RagdollCollideMode::kStatic, 2);
  bind({1, 0, 5}, {0, 0, 0}, RagdollCollideMode::kStatic, 3);
  for (int f = 0; f < 60; ++f) w->Step(kStep);
  EXPECT_GT(out[0][0].translation.x, 1.5f);
  EXPECT_NEAR(out[1][0].translation.x, 1.0f, 1e-6f);
  EXPECT_GT(out[3][0].translation.x, 1.2f);
  EXPECT_LT(out[2][0].translation.x, out[3][0].translation.x - 0.45f);
}

TEST(RagdollContacts, APileOfTwentyRagdollsSettlesWithoutGainingEnergy) {
  const std::string path = ports::SharedDataPath("jolt-human/ragdoll.json");
  if (!json::ParseFile(path).ok) GTEST_SKIP() << path << " is not available";
  auto w = MakeWorld(LastSubstepOutputs());
  const RagdollSettings human = ports::LoadJoltHumanRagdoll(path).value();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(human).value();
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  std::vector<std::vector<Transform>> parts(20, std::vector<Transform>(23));
  std::vector<RagdollId> ids;
  for (int i = 0; i < 20; ++i) {
    RagdollBinding b;
    b.archetype = a;
    // A loose column: each one lies across the one below, turned a little more.
    b.placement = Transform{{0.1f * (i % 3), 0.4f + 0.35f * i, 0.1f * (i % 2)},
                            AxisAngle(Vec3{0, 1, 0}, 0.7f * i) * AxisAngle(Vec3{1, 0, 0}, 1.5708f), {1, 1, 1}};
    b.output_parts = parts[i];
    ids.push_back(w->BindRagdoll(b).value());
  }
  std::vector<float> masses(23);
  for (int j = 0; j < 23; ++j) {
    RagdollPartInfo info;
    EXPECT_TRUE(w->GetRagdollPartInfo(a, j, &info).ok());
    masses[j] = info.mass;
  }
  auto kinetic = [&]() {
    double e = 0;
    std::vector<Vec3> v(23), wv(23);
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(w->GetRagdollVelocities(ids[i], v, wv).ok());
      for (int j = 0; j < 23; ++j) e += 0.5 * masses[j] * LengthSquared(v[j]);
    }
    return e;
  };
  auto energy = [&]() {
    double e = kinetic();
    for (int i = 0; i < 20; ++i)
      for (int j = 0; j < 23; ++j) e += masses[j] * 9.81 * parts[i][j].translation.y;
    return e;
  };
  const double released = energy();
  double highest = released;
  int32_t most_contact_pairs = 0;
  // Every part's speed over the last second of 12 s: a loose heap of 20 slumps now and
  // then as it settles (this one, the same on every kernel since the lanes of a batch stopped
  // depending on each other, has slides at 4.5 and 7.5 s and is all asleep at 9.5 s), so it
  // is held to a still second and to sleep at the end, not to one frame at a fixed time.
  float fastest = 0;
  auto fastest_part = [&] {
    std::vector<Vec3> v(23), wv(23);
    float most = 0;
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(w->GetRagdollVelocities(ids[i], v, wv).ok());
      for (int j = 0; j < 23; ++j) most = std::max(most, Length(v[j]));
    }
    return most;
  };
  for (int f = 0; f < 720; ++f) {
    const FrameStats& st = w->Step(kStep);
    highest = std::max(highest, energy());
    // Only pairs with a contact are solved; they are a part of the pairs in reach.
    EXPECT_LE(st.contact_ragdoll_pairs, st.ragdoll_pairs);
    most_contact_pairs = std::max(most_contact_pairs, st.contact_ragdoll_pairs);
    if (f >= 660) fastest = std::max(fastest, fastest_part());
  }
  EXPECT_GT(most_contact_pairs, 0);
  // Kinetic plus potential energy (part frames as a proxy for the centres of mass: the
  // offset is fixed per part, so the comparison holds) never exceeds its value at release.
  EXPECT_LE(highest, released * 1.0005 + 1.0);
  EXPECT_EQ(w->LastStats().dropped_ragdoll_pairs, 0);
  // Settling: after 12 s the 460 parts have lost most of the energy the fall released (how
  // high the heap stands at rest varies with how it fell) and their kinetic energy is a
  // hundred-thousandth of it; over the last second no part moved faster than 0.2 m/s, and
  // every ragdoll is asleep.
  EXPECT_LT(energy(), released * 0.1);
  EXPECT_LT(kinetic(), released * 1e-5);
  EXPECT_LT(fastest, 0.2f);
  EXPECT_EQ(w->LastStats().sleeping_ragdolls, 20);
}

}  // namespace
}  // namespace tendon::test
