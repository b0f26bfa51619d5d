// Switching bound ragdolls on and off, their kinematic root on and off, and placing their
// parts: the World controls characters are built on.
#include <cmath>
#include <string>
#include <vector>

#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;

struct Bound {
  std::vector<Transform> parts = std::vector<Transform>(2);
  RagdollId id;
};

TEST(RagdollToggle, ADisabledRagdollIsNotSteppedAndResumesWhereItWas) {
  auto w = MakeWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  Bound falling, parked;
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = falling.parts;
  falling.id = w->BindRagdoll(b).value();
  b.output_parts = parked.parts;
  b.placement.translation = {3, 0, 0};
  b.enabled = false;
  parked.id = w->BindRagdoll(b).value();
  EXPECT_FALSE(w->IsRagdollEnabled(parked.id));
  for (int f = 0; f < 30; ++f) {
    const FrameStats& st = w->Step(kStep);
    EXPECT_EQ(st.disabled_ragdolls, 1);
    EXPECT_EQ(st.simulated_ragdolls, 1);
  }
  EXPECT_LT(falling.parts[0].translation.y, -0.5f) << "the enabled one fell";
  EXPECT_EQ(parked.parts[0].translation.y, 0.0f) << "the disabled one did not move";
  // The host may write a pose into a disabled ragdoll's output; Step leaves it.
  parked.parts[0].translation.z = 7;
  w->Step(kStep);
  EXPECT_EQ(parked.parts[0].translation.z, 7.0f);
  parked.parts[0].translation.z = 0;
  // Switching the falling one off freezes its output; switching it on resumes its motion.
  ASSERT_EQ(w->SetRagdollEnabled(falling.id, false).code, ErrorCode::kNone);
  const float y_off = falling.parts[0].translation.y;
  for (int f = 0; f < 10; ++f) w->Step(kStep);
  EXPECT_EQ(falling.parts[0].translation.y, y_off);
  ASSERT_EQ(w->SetRagdollEnabled(falling.id, true).code, ErrorCode::kNone);
  ASSERT_EQ(w->SetRagdollEnabled(parked.id, true).code, ErrorCode::kNone);
  std::vector<Vec3> v(2), wv(2);
  EXPECT_TRUE(w->GetRagdollVelocities(falling.id, v, wv).ok());
  EXPECT_LT(v[0].y, -4.0f) << "it kept its velocity while off";
  w->Step(kStep);
  EXPECT_LT(falling.parts[0].translation.y, y_off);
  EXPECT_LT(parked.parts[0].translation.y, 0.0f) << "the parked one falls once enabled";
  EXPECT_EQ(w->LastStats().disabled_ragdolls, 0);
  EXPECT_EQ(w->SetRagdollEnabled(RagdollId{}, true).code, ErrorCode::kStaleHandle);
}

TEST(RagdollToggle, AnImpulseOnASwitchedOffRagdollIsRefusedAndNotHeldForLater) {
  auto w = MakeWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  Bound off;
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = off.parts;
  b.enabled = false;
  off.id = w->BindRagdoll(b).value();
  const Error e = w->ApplyRagdollImpulse(off.id, 0, Vec3{100, 0, 0}, off.parts[0].translation);
  EXPECT_EQ(e.code, ErrorCode::kInactive);
  EXPECT_NE(e.message.find("switched off"), std::string::npos) << e.message;
  std::vector<Vec3> v(2), wv(2);
  ASSERT_EQ(w->SetRagdollEnabled(off.id, true).code, ErrorCode::kNone);
  ASSERT_EQ(w->GetRagdollVelocities(off.id, v, wv).code, ErrorCode::kNone);
  EXPECT_EQ(v[0].x, 0.0f) << "the refused impulse did not wait in the lane";
  // Switched on, the same call takes.
  ASSERT_EQ(w->ApplyRagdollImpulse(off.id, 0, Vec3{100, 0, 0}, off.parts[0].translation).code, ErrorCode::kNone);
  ASSERT_EQ(w->GetRagdollVelocities(off.id, v, wv).code, ErrorCode::kNone);
  EXPECT_GT(v[0].x, 0.0f);
}

TEST(RagdollToggle, TogglingOneRagdollLeavesItsNeighboursInTheBlockAlone) {
  // Many instances in one block: switching some off and on swaps lanes; every instance
  // must keep its own state (its lane follows it).
  // The same ten spinning pendulums in two worlds.
  auto spinning = [](World& world, std::vector<Bound>& bound) {
    const RagdollArchetypeId a = world.BuildRagdollArchetype(TwoPartPendulum()).value();
    for (int i = 0; i < 10; ++i) {
      RagdollBinding b;
      b.archetype = a;
      b.placement.translation = {static_cast<float>(i) * 2.0f, 0, 0};
      b.angular_velocity = {0, 0, 0.3f * static_cast<float>(i)};
      b.output_parts = bound[i].parts;
      bound[i].id = world.BindRagdoll(b).value();
    }
  };
  auto w = MakeWorld();
  auto reference = MakeWorld();
  std::vector<Bound> all(10), solo(10);
  spinning(*w, all);
  spinning(*reference, solo);
  for (int f = 0; f < 20; ++f) {
    // Off and on again within the frame: the same physics, different lanes.
    for (int i : {1, 4, 8}) EXPECT_TRUE(w->SetRagdollEnabled(all[i].id, false).ok());
    for (int i : {8, 1, 4}) EXPECT_TRUE(w->SetRagdollEnabled(all[i].id, true).ok());
    w->Step(kStep);
    reference->Step(kStep);
  }
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 2; ++j)
      EXPECT_LT(Length(all[i].parts[j].translation - solo[i].parts[j].translation), 1e-5f) << "instance " << i;
  }
}

TEST(RagdollToggle, AKinematicRootFollowsItsFrameAndLetsGoWhenCleared) {
  auto w = MakeWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  ASSERT_EQ(w->ReserveRagdollKinematicToggle(a, 1).code, ErrorCode::kNone);
  Bound r;
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = r.parts;
  r.id = w->BindRagdoll(b).value();
  Bound other;
  b.output_parts = other.parts;
  b.placement.translation = {5, 0, 0};
  other.id = w->BindRagdoll(b).value();
  Transform anchor{{0, 2, 0}, {}, {1, 1, 1}};
  ASSERT_EQ(w->SetRagdollKinematicRoot(r.id, &anchor).code, ErrorCode::kNone);
  for (int f = 0; f < 60; ++f) {
    anchor.translation.x = 0.01f * static_cast<float>(f);
    w->Step(kStep);
    EXPECT_EQ(r.parts[0].translation.x, anchor.translation.x) << "the root follows its frame";
    EXPECT_EQ(r.parts[0].translation.y, 2.0f);
    // The arm hangs from it (the joint holds within a millimetre).
    const Vec3 anchor_root = TransformPoint(r.parts[0], Vec3{0, -0.1f, 0});
    const Vec3 anchor_arm = TransformPoint(r.parts[1], Vec3{0, 0.3f, 0});
    EXPECT_LT(Length(anchor_root - anchor_arm), 1e-3f) << "frame " << f;
  }
  EXPECT_LT(other.parts[0].translation.y, -2.0f) << "the other instance fell all along";
  ASSERT_EQ(w->SetRagdollKinematicRoot(r.id, nullptr).code, ErrorCode::kNone);
  for (int f = 0; f < 30; ++f) w->Step(kStep);
  EXPECT_LT(r.parts[0].translation.y, 1.0f) << "released, it falls";
  Transform nan_frame{{0, std::nanf(""), 0}, {}, {1, 1, 1}};
  EXPECT_EQ(w->SetRagdollKinematicRoot(r.id, &nan_frame).code, ErrorCode::kNotFinite);
}

TEST(RagdollToggle, PartStatesPlaceTheBodyWithVelocities) {
  WorldSettings ws;
  ws.gravity = {};
  auto w = MakeWorld(ws);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  Bound r;
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = r.parts;
  r.id = w->BindRagdoll(b).value();
  std::vector<Transform> at = {Transform{{10, 0, 0}, {}, {1, 1, 1}}, Transform{{10, -0.4f, 0}, {}, {1, 1, 1}}};
  std::vector<Vec3> lin = {{3, 0, 0}, {3, 0, 0}};
  ASSERT_EQ(w->SetRagdollPartStates(r.id, at, lin).code, ErrorCode::kNone);
  EXPECT_EQ(r.parts[0].translation.x, 10.0f) << "the output shows the placed pose at once";
  for (int f = 0; f < 60; ++f) w->Step(kStep);
  // 3 m/s for a second less the parts' 0.05/s damping: 2.93 m. (The velocity comes from
  // positions 10 m from the origin, whose float steps are a few parts in 10^4 of a
  // substep's move, so the damping's 10^-4 per substep partly rounds away: 2.93-3.0 m.)
  EXPECT_NEAR(r.parts[0].translation.x, 12.96f, 0.06f);
  std::vector<Transform> short_list(1);
  EXPECT_EQ(w->SetRagdollPartStates(r.id, short_list).code, ErrorCode::kNullBuffer);
  at[1].translation.y = std::nanf("");
  EXPECT_EQ(w->SetRagdollPartStates(r.id, at).item, 1);
}

// An arm of two capsules held out level by motors against gravity: with limb inertia the
// shoulder's spring acts on the whole arm, so it sags far less than with the two-part
// effective inertia (Jolt's convention) at the same frequency.
float ArmSagDegrees(bool limb_inertia) {
  RagdollSettings s;
  PartSettings root;
  root.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  s.parts.push_back(root);
  for (int k = 0; k < 2; ++k) {
    PartSettings seg;
    seg.parent = k;
    seg.pose = Transform{{0.1f + 0.15f + 0.3f * static_cast<float>(k), 0, 0}, AxisAngle(Vec3{0, 0, 1}, 1.5707963f), {1, 1, 1}};
    seg.shape = {.type = PartShape::kCapsule, .radius = 0.04f, .half_height = 0.11f};
    seg.mass = 2.0f;
    seg.joint.anchor = {0.1f + 0.3f * static_cast<float>(k), 0, 0};
    seg.joint.twist_axis = {1, 0, 0};
    seg.joint.plane_axis = {0, 0, 1};
    seg.joint.normal_half_cone_degrees = seg.joint.plane_half_cone_degrees = 170;
    seg.joint.motor = MotorSettings{6.0f, 1.0f, 100.0f, limb_inertia};
    s.parts.push_back(seg);
  }
  auto w = MakeWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> parts(3);
  Transform hold{};
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = parts;
  b.kinematic_root = &hold;
  const RagdollId id = w->BindRagdoll(b).value();
  const std::vector<Quat> level = {Quat{}, AxisAngle(Vec3{0, 0, 1}, 1.5707963f), Quat{}};
  EXPECT_TRUE(w->SetRagdollMotorTargets(id, level, 1.0f).ok());
  for (int f = 0; f < 180; ++f) w->Step(kStep);
  const Vec3 tip = TransformPoint(parts[2], Vec3{0, -0.15f, 0});  // the arm's end
  return std::atan2(-tip.y, tip.x - 0.1f) * 57.29578f;
}

// Settling: a body drifting at 0.1 m/s (above the sleep speed, below four times it) is
// coming to rest; settle damping slows it until it sleeps, while one at 1 m/s is left alone.
TEST(RagdollSleep, SettleDampingBringsASlowDrifterToRestAndLeavesAFastOneAlone) {
  auto drift = [](float settle, float speed) {
    WorldSettings ws = LastSubstepOutputs();
    ws.gravity = {};
    ws.ragdoll_settle_damping = settle;
    auto w = MakeWorld(ws);
    RagdollSettings s = TwoPartPendulum();
    for (PartSettings& p : s.parts) p.linear_damping = p.angular_damping = 0;
    const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
    Bound r;
    RagdollBinding b;
    b.archetype = a;
    b.output_parts = r.parts;
    b.linear_velocity = {speed, 0, 0};
    r.id = w->BindRagdoll(b).value();
    float asleep_at = -1;
    for (int f = 0; f < 300 && asleep_at < 0; ++f) {
      w->Step(kStep);
      if (w->IsRagdollAsleep(r.id)) asleep_at = static_cast<float>(f + 1) * kStep;
    }
    return std::make_pair(asleep_at, r.parts[0].translation.x);
  };
  const auto [slow_settled, slow_x] = drift(5.0f, 0.1f);
  const auto [slow_free, slow_free_x] = drift(0.0f, 0.1f);
  EXPECT_GT(slow_settled, 0.0f) << "settle damping brings it to rest";
  EXPECT_LT(slow_settled, 2.0f);
  EXPECT_LT(slow_free, 0.0f) << "without it, a steady drift above the sleep speed never sleeps";
  EXPECT_NEAR(slow_free_x, 0.5f, 1e-3f) << "5 s at 0.1 m/s";
  const auto [fast, fast_x] = drift(5.0f, 1.0f);
  EXPECT_LT(fast, 0.0f);
  EXPECT_NEAR(fast_x, 5.0f, 5e-3f) << "a body moving at 1 m/s is not settling";
}

// Joint friction holds a limb whose weight's torque it can carry without creeping, and
// lets a heavier one fall.
TEST(RagdollJoints, JointFrictionHoldsALimbItCanCarryAndNotOneItCannot) {
  auto sag = [](float friction_per_kg) {
    auto w = MakeWorld();
    RagdollSettings s = TwoPartPendulum();
    // The arm sticks out sideways: 1 kg whose centre is 0.25 m from the joint, about
    // 2.5 N m of gravity torque.
    s.parts[1].pose = Transform{{0.25f, -0.1f, 0}, AxisAngle(Vec3{0, 0, 1}, 1.5707963f), {1, 1, 1}};
    s.parts[1].joint.friction_torque_per_kg = friction_per_kg;
    s.parts[1].angular_damping = 0;
    const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
    Transform root{{0, 2, 0}, {}, {1, 1, 1}};
    Bound r;
    RagdollBinding b;
    b.archetype = a;
    b.placement = root;
    b.kinematic_root = &root;
    b.output_parts = r.parts;
    r.id = w->BindRagdoll(b).value();
    // A second to take up the joint's play (the friction holds the turn; the attachment
    // settles by a mm or two), then two seconds in which it must not move.
    const float built = r.parts[1].translation.y;
    for (int f = 0; f < 60; ++f) w->Step(kStep);
    const float start = r.parts[1].translation.y;
    for (int f = 0; f < 120; ++f) w->Step(kStep);
    return std::make_pair(built - start, start - r.parts[1].translation.y);
  };
  const auto [held_drop, held_creep] = sag(4.0f);
  EXPECT_LT(held_drop, 5e-3f) << "4 N m holds 2.5 N m";
  EXPECT_LT(held_creep, 1e-4f) << "and it does not creep";
  EXPECT_GT(sag(1.0f).first, 0.1f) << "1 N m does not: the arm falls";
}

TEST(RagdollMotors, LimbInertiaMotorsHoldAnArmOutWhereTwoPartOnesSag) {
  const float jolt = ArmSagDegrees(false), limb = ArmSagDegrees(true);
  EXPECT_GT(jolt, 10.0f) << "the two-part spring at 6 Hz is soft for a whole arm";
  EXPECT_LT(limb, 3.0f) << "the limb's spring holds it";
}

}  // namespace
}  // namespace tendon::test
