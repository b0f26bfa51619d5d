// Render interpolation (issue 11, defect 10): at a frame rate above the fixed rate, frames
// that run no substep still move what Tendon writes, by the accumulator's remainder
// (FrameStats::interpolation_alpha), instead of standing still and jumping on the next
// substep. At 144 Hz on the 60 Hz clock, 168 of 288 frames run no substep.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "character_test_util.h"
#include "stickman_rig.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kFrame144 = 1.0f / 144.0f;
constexpr int kFrames = 288;  // two seconds at 144 Hz
constexpr float kTwoPi = 6.2831853f;

float Turned(Quat a, Quat b) { return RotationAngle(Normalize(Conjugate(a) * b)); }

// How a run's per-frame change of some output went: frames where it did not change at all,
// and the largest change against the mean.
struct Motion {
  int still_frames = 0;
  int substep_free_frames = 0;
  float worst_over_mean = 0;
};

// Steps 288 frames at 144 Hz after a second of warm-up, calling `change` after each one
// for how far the output moved since the frame before.
Motion Measure(World& w, const std::function<void(int)>& drive, const std::function<float()>& change) {
  for (int f = 0; f < 144; ++f) {
    drive(f);
    w.Step(kFrame144);
    change();
  }
  Motion m;
  std::vector<float> moved;
  for (int f = 144; f < 144 + kFrames; ++f) {
    drive(f);
    const FrameStats& st = w.Step(kFrame144);
    m.substep_free_frames += st.substeps == 0 ? 1 : 0;
    moved.push_back(change());
    m.still_frames += moved.back() == 0.0f ? 1 : 0;
  }
  float sum = 0, worst = 0;
  for (float d : moved) sum += d, worst = std::max(worst, d);
  m.worst_over_mean = worst / (sum / static_cast<float>(moved.size()));
  return m;
}

void Expect(const Motion& on, const Motion& off, const char* what) {
  std::printf("%s at 144 Hz: %d of %d frames ran no substep; still frames %d (off: %d), largest change %.2fx the mean (off: %.2fx)\n",
              what, on.substep_free_frames, kFrames, on.still_frames, off.still_frames, on.worst_over_mean, off.worst_over_mean);
  EXPECT_EQ(on.substep_free_frames, 168) << what;
  EXPECT_EQ(on.still_frames, 0) << what << ": the output moves on every frame";
  EXPECT_LT(on.worst_over_mean, 3.0f) << what;
  EXPECT_GE(off.still_frames, 160) << what << ": without interpolation the frames without a substep stand still";
}

// The root moves on a circle (its rotation fixed), so the strand trails behind a direction
// that turns at a constant rate: its written locals change steadily.
Vec3 Circle(int frame) {
  const float t = static_cast<float>(frame) * kFrame144;
  return Vec3{0.5f * std::cos(kTwoPi * t), 2.0f, 0.5f * std::sin(kTwoPi * t)};
}

Motion ChainMotion(bool interpolate) {
  WorldSettings ws;
  ws.render_interpolation = interpolate;
  auto w = MakeWorld(ws);
  ChainArchetypeSettings s = Strand(6, 0.1f, {0, -1, 0});
  s.settings.stiffness = 0.0f;
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s, Circle(0));
  w->BindChain(host.Binding(a)).value();
  std::vector<Transform> last = host.output;
  return Measure(
      *w, [&](int f) { host.root_parent.translation = Circle(f); },
      [&] {
        float moved = 0;
        for (std::size_t k = 0; k < last.size(); ++k) moved += Turned(last[k].rotation, host.output[k].rotation);
        // The root bone hangs where the host put it on every frame: nothing lags the root.
        EXPECT_EQ(host.output[0].translation.x, host.animated[0].translation.x);
        last = host.output;
        return moved;
      });
}

TEST(RenderInterpolation, AChainsOutputMovesOnEveryFrameAt144Hz) {
  Expect(ChainMotion(true), ChainMotion(false), "chain");
}

Motion PendulumMotion(bool interpolate) {
  WorldSettings ws;
  ws.render_interpolation = interpolate;
  auto w = MakeWorld(ws);
  Transform joint{Circle(0), {}, {1, 1, 1}};
  Transform offset{{0, -0.3f, 0}, {}, {1, 1, 1}};
  PendulumBinding b;
  b.joint_world = &joint;
  b.accessory_offset = &offset;
  w->BindPendulum(b).value();
  Transform last = offset;
  return Measure(
      *w, [&](int f) { joint.translation = Circle(f); },
      [&] {
        const float moved = Turned(last.rotation, offset.rotation);
        last = offset;
        return moved;
      });
}

TEST(RenderInterpolation, APendulumsOutputMovesOnEveryFrameAt144Hz) {
  Expect(PendulumMotion(true), PendulumMotion(false), "pendulum");
}

// A box tumbling without gravity at a steady spin.
Motion RagdollMotion(bool interpolate) {
  WorldSettings ws;
  ws.render_interpolation = interpolate;
  ws.gravity = {};
  auto w = MakeWorld(ws);
  RagdollSettings s;
  PartSettings box;
  box.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.2f, 0.3f}};
  box.angular_damping = 0;
  box.linear_damping = 0;
  s.parts.push_back(box);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> out(1);
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = out;
  b.angular_velocity = {0, 3.0f, 0};
  b.linear_velocity = {0.5f, 0, 0};
  const RagdollId id = w->BindRagdoll(b).value();
  EXPECT_EQ(w->SetRagdollSleeping(id, false, false, INFINITY).code, ErrorCode::kNone);
  Transform last = out[0];
  return Measure(
      *w, [](int) {},
      [&] {
        const float moved = Turned(last.rotation, out[0].rotation) + Length(out[0].translation - last.translation);
        last = out[0];
        return moved;
      });
}

TEST(RenderInterpolation, ARagdollsOutputMovesOnEveryFrameAt144Hz) {
  Expect(RagdollMotion(true), RagdollMotion(false), "ragdoll");
}

// The stickman, activated limp in the air, falls and tumbles.
Motion CharacterMotion(bool interpolate) {
  WorldSettings ws;
  ws.render_interpolation = interpolate;
  auto w = MakeWorld(ws);
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton(), Transform{{0, 100, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  w->Step(kFrame144);
  CharacterActivateOptions limp;
  limp.strength = 0.0f;
  EXPECT_TRUE(w->ActivateCharacter(id, limp));
  std::vector<Transform> last = host.world;
  return Measure(
      *w, [](int) {},
      [&] {
        float moved = 0;
        for (std::size_t k = 0; k < last.size(); ++k) moved += Length(host.world[k].translation - last[k].translation);
        last = host.world;
        return moved;
      });
}

TEST(RenderInterpolation, ACharactersOutputMovesOnEveryFrameAt144Hz) {
  Expect(CharacterMotion(true), CharacterMotion(false), "character");
}

// A ragdoll hanging from a kinematic root that the host moves: the root part is written
// exactly where the host frame is on every frame (the rest is interpolated under it).
TEST(RenderInterpolation, AKinematicRootIsShownAtItsHostFrameWithoutLag) {
  auto w = MakeWorld();
  RagdollSettings s;
  PartSettings top, hanging;
  top.pose.translation = {0, 1, 0};
  hanging.parent = 0;
  hanging.pose.translation = {0, 0.7f, 0};
  hanging.joint.anchor = {0, 0.85f, 0};
  s.parts = {top, hanging};
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> out(2);
  Transform anchor{Circle(0) - Vec3{0, 1, 0}, {}, {1, 1, 1}};
  RagdollBinding b;
  b.placement.translation = anchor.translation - Vec3{0, 1, 0};
  b.archetype = a;
  b.output_parts = out;
  b.kinematic_root = &anchor;
  w->BindRagdoll(b).value();
  for (int f = 0; f < 288; ++f) {
    anchor.translation = Circle(f) - Vec3{0, 1, 0};  // 2.2 m/s
    anchor.rotation = AxisAngle(Vec3{0, 1, 0}, 0.02f * static_cast<float>(f));
    const FrameStats& st = w->Step(kFrame144);
    EXPECT_LT(st.interpolation_alpha, 1.0f);
    EXPECT_LT(Length(out[0].translation - anchor.translation), 1e-5f) << "frame " << f;
    EXPECT_LT(Turned(out[0].rotation, anchor.rotation), 1e-3f) << "frame " << f;
    EXPECT_LT(Length(out[1].translation - out[0].translation), 0.35f) << "frame " << f << ": still hanging from it";
  }
}

// alpha is the accumulator's remainder in substeps: at 144 Hz on 60 Hz it steps by 60/144
// and wraps at each substep; with interpolation off it is 1.
TEST(RenderInterpolation, AlphaIsTheRemainderOfTheFixedStep) {
  auto w = MakeWorld();
  double accumulated = 0;
  for (int f = 0; f < 60; ++f) {
    const FrameStats& st = w->Step(kFrame144);
    accumulated += static_cast<double>(kFrame144) * 60.0;
    accumulated -= st.substeps;
    EXPECT_NEAR(st.interpolation_alpha, accumulated, 1e-4) << "frame " << f;
    EXPECT_GE(st.interpolation_alpha, 0.0f);
    EXPECT_LT(st.interpolation_alpha, 1.0f);
  }
  auto off = MakeWorld(LastSubstepOutputs());
  EXPECT_EQ(off->Step(kFrame144).interpolation_alpha, 1.0f);
}

}  // namespace
}  // namespace tendon::test
