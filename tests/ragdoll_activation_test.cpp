// RagdollSystem::Activate (kernel/ragdolls/ragdoll_controls.cpp), the one call a character's
// activation makes: it must leave exactly what the five controls it replaces leave, lanes
// included, check everything before it writes, and move a lane at most once.
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "kernel/collide/static_world.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/rigid_kernels.h"
#include "test_util.h"

namespace tendon::test {
namespace {

using detail::RagdollActivation;
using detail::RagdollSystem;

constexpr double kStep = 1.0 / 60.0;

// A two-part pendulum whose joint has a motor (the strength and targets then move it).
RagdollSettings MotorPendulum() {
  RagdollSettings s = TwoPartPendulum();
  s.parts[1].joint.motor.frequency_hz = 4;
  s.parts[1].joint.motor.max_torque_per_kg = 50;
  return s;
}

// A ragdoll system of motored pendulums (scalar kernels, no workers), with the host's
// buffers of each instance: k0, k1 kinematic and on, k2 kinematic and off, d0 dynamic and
// on, d1 and d2 dynamic and off. The kinematic group then has a disabled lane behind its
// enabled ones, which a ragdoll landing among them must move.
struct Rig {
  enum : int { kK0, kK1, kK2, kD0, kD1, kD2, kCount };
  std::unique_ptr<RagdollSystem> system;
  detail::StaticWorld static_world;
  std::array<std::vector<Transform>, kCount> outputs;
  std::array<Transform, kCount> roots;
  std::array<RagdollId, kCount> ids;

  Rig() {
    detail::RagdollSystemSettings settings;
    settings.gravity = {0, -9.81f, 0};
    settings.ragdoll_substeps = 4;
    system = std::make_unique<RagdollSystem>(settings, detail::RigidKernelsFor(Isa::kScalar));
    const RagdollArchetypeId a = system->BuildArchetype(MotorPendulum()).value();
    for (int i = 0; i < kCount; ++i) {
      outputs[i].resize(2);
      roots[i] = Transform{{static_cast<float>(i), 1, 0}, {}, {1, 1, 1}};
      RagdollBinding b;
      b.archetype = a;
      b.output_parts = outputs[i];
      b.placement.translation = roots[i].translation;
      b.kinematic_root = i <= kK2 ? &roots[i] : nullptr;
      b.enabled = i != kK2 && i != kD1 && i != kD2;
      ids[i] = system->Bind(b).value();
    }
  }
  uint64_t Hash() const {
    detail::StateHasher hasher;
    system->HashState(hasher);
    return hasher.h;
  }
  std::array<int32_t, kCount> Lanes() const {
    std::array<int32_t, kCount> lanes{};
    for (int i = 0; i < kCount; ++i) lanes[i] = system->LaneForTest(ids[i]);
    return lanes;
  }
  void Step() {
    FrameStats stats;
    system->Step(1, kStep, 1.0f, static_world, stats);
  }
};

// What a character's activation passes: parts placed off the bind pose, moving, motors on.
struct Inputs {
  Transform anchor{{0.5f, 2, 0.25f}, Normalize(Quat{0.1f, 0.2f, 0, 1}), {1, 1, 1}};
  std::vector<Transform> parts{Transform{{0.5f, 2, 0.25f}, Normalize(Quat{0.1f, 0.2f, 0, 1}), {1, 1, 1}},
                               Transform{{0.5f, 1.6f, 0.3f}, Normalize(Quat{0, 0, 0.3f, 1}), {1, 1, 1}}};
  std::vector<Vec3> linear{Vec3{1, 2, 0}, Vec3{0.5f, 0, -1}};
  std::vector<Vec3> angular{Vec3{0, 3, 0}, Vec3{1, 0, 0}};
  std::vector<Quat> targets{Quat{}, Normalize(Quat{0.2f, 0, 0.1f, 1})};
  std::vector<Vec3> target_w{Vec3{}, Vec3{0, 0.5f, 0}};
  float strength = 0.7f;

  RagdollActivation Activation(bool kinematic) const {
    RagdollActivation a;
    a.kinematic_root = kinematic ? &anchor : nullptr;
    a.motor_targets = targets;
    a.motor_strength = strength;
    a.motor_angular_velocities = target_w;
    a.can_sleep = false;
    a.freeze_when_asleep = false;
    a.freeze_after_seconds = INFINITY;
    a.parts = parts;
    a.linear = linear;
    a.angular = angular;
    return a;
  }
  // The calls a character's activation made before Activate, in its order.
  void Separately(RagdollSystem& s, RagdollId id, bool kinematic) const {
    ASSERT_EQ(s.SetMotorTargets(id, targets, strength, target_w).code, ErrorCode::kNone);
    ASSERT_EQ(s.SetKinematicRoot(id, kinematic ? &anchor : nullptr).code, ErrorCode::kNone);
    ASSERT_EQ(s.SetSleeping(id, false, false, INFINITY).code, ErrorCode::kNone);
    ASSERT_EQ(s.SetPartStates(id, parts, linear, angular).code, ErrorCode::kNone);
    ASSERT_EQ(s.SetEnabled(id, true).code, ErrorCode::kNone);
  }
};

void ExpectSameFrames(Rig& separate, Rig& combined, int frames) {
  for (int f = 0; f < frames; ++f) {
    separate.Step();
    combined.Step();
    ASSERT_EQ(separate.Hash(), combined.Hash()) << "frame " << f;
  }
  for (int i = 0; i < Rig::kCount; ++i) {
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(separate.outputs[i][j].translation.x, combined.outputs[i][j].translation.x);
      EXPECT_EQ(separate.outputs[i][j].translation.y, combined.outputs[i][j].translation.y);
      EXPECT_EQ(separate.outputs[i][j].rotation.w, combined.outputs[i][j].rotation.w);
    }
  }
}

TEST(RagdollActivation, LeavesWhatTheFiveCallsLeaveBitForBitWhenTheRootComesOn) {
  Rig separate, combined;
  const Inputs in;
  in.Separately(*separate.system, separate.ids[Rig::kD1], true);
  ASSERT_EQ(combined.system->Activate(combined.ids[Rig::kD1], in.Activation(true)).code, ErrorCode::kNone);
  EXPECT_EQ(separate.Hash(), combined.Hash());
  EXPECT_EQ(separate.Lanes(), combined.Lanes()) << "every instance in the same lane";
  // Among the enabled kinematic lanes, the disabled one there moved behind it.
  EXPECT_EQ(combined.Lanes()[Rig::kD1], 2);
  EXPECT_EQ(combined.Lanes()[Rig::kK2], 3);
  EXPECT_TRUE(combined.system->IsEnabled(combined.ids[Rig::kD1]));
  ExpectSameFrames(separate, combined, 30);
}

TEST(RagdollActivation, LeavesWhatTheFiveCallsLeaveBitForBitInItsOwnGroup) {
  Rig separate, combined;
  const Inputs in;
  in.Separately(*separate.system, separate.ids[Rig::kD2], false);
  ASSERT_EQ(combined.system->Activate(combined.ids[Rig::kD2], in.Activation(false)).code, ErrorCode::kNone);
  EXPECT_EQ(separate.Hash(), combined.Hash());
  EXPECT_EQ(separate.Lanes(), combined.Lanes());
  ExpectSameFrames(separate, combined, 30);
}

TEST(RagdollActivation, LeavesWhatTheFiveCallsLeaveBitForBitOnAnEnabledRagdoll) {
  Rig separate, combined;
  const Inputs in;
  in.Separately(*separate.system, separate.ids[Rig::kD0], true);
  ASSERT_EQ(combined.system->Activate(combined.ids[Rig::kD0], in.Activation(true)).code, ErrorCode::kNone);
  EXPECT_EQ(separate.Hash(), combined.Hash());
  EXPECT_EQ(separate.Lanes(), combined.Lanes());
  ExpectSameFrames(separate, combined, 30);
}

TEST(RagdollActivation, RefusesWithoutWritingAnything) {
  Rig rig;
  const uint64_t hash = rig.Hash();
  const auto lanes = rig.Lanes();
  const RagdollId id = rig.ids[Rig::kD1];
  Inputs in;
  in.parts[1].translation.y = NAN;
  EXPECT_EQ(rig.system->Activate(id, in.Activation(true)).code, ErrorCode::kNotFinite);
  in = Inputs{};
  in.strength = 2;
  EXPECT_EQ(rig.system->Activate(id, in.Activation(true)).code, ErrorCode::kOutOfRange);
  in = Inputs{};
  in.anchor.translation.x = INFINITY;
  EXPECT_EQ(rig.system->Activate(id, in.Activation(true)).code, ErrorCode::kNotFinite);
  in = Inputs{};
  RagdollActivation short_targets = in.Activation(false);
  short_targets.motor_targets = short_targets.motor_targets.first(1);
  EXPECT_EQ(rig.system->Activate(id, short_targets).code, ErrorCode::kNullBuffer);
  RagdollActivation bad_freeze = in.Activation(false);
  bad_freeze.freeze_after_seconds = -1;
  EXPECT_EQ(rig.system->Activate(id, bad_freeze).code, ErrorCode::kOutOfRange);
  EXPECT_EQ(rig.system->Activate(RagdollId{}, in.Activation(false)).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(rig.Hash(), hash);
  EXPECT_EQ(rig.Lanes(), lanes);
  EXPECT_FALSE(rig.system->IsEnabled(id));
}

// A kinematic root switched on for an enabled ragdoll moves it once, straight among the
// other group's enabled lanes (that group's first disabled lane moving behind them), and
// the lane it left is filled by its old group's last one.
TEST(RagdollActivation, AnEnabledRagdollChangingGroupLandsAmongTheEnabledLanes) {
  Rig rig;
  ASSERT_EQ(rig.system->SetKinematicRoot(rig.ids[Rig::kD0], &rig.roots[Rig::kD0]).code, ErrorCode::kNone);
  const auto lanes = rig.Lanes();
  EXPECT_EQ(lanes[Rig::kK0], 0);
  EXPECT_EQ(lanes[Rig::kK1], 1);
  EXPECT_EQ(lanes[Rig::kD0], 2);
  EXPECT_EQ(lanes[Rig::kK2], 3);
  // The dynamic group: its last lane (d2's) filled the one d0 left; d1 stayed.
  EXPECT_EQ(lanes[Rig::kD2], 0);
  EXPECT_EQ(lanes[Rig::kD1], 1);
  EXPECT_TRUE(rig.system->IsEnabled(rig.ids[Rig::kD0]));
  // It follows its root from then on.
  rig.roots[Rig::kD0].translation.y = 3;
  rig.Step();
  EXPECT_NEAR(rig.outputs[Rig::kD0][0].translation.y, 3.0f, 1e-5f);
}

}  // namespace
}  // namespace tendon::test
