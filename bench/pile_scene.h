// bench/pile_scene.h: the ragdoll pile scene of Jolt Physics' ragdoll performance test, and
// its fidelity measures, as one function: BM_RagdollPiles (bench_piles.cpp) runs it natively
// and ports/wasm/piles_driver.cpp runs the same code in the WebAssembly build, so the
// side-by-side with JoltPhysics.js (bench/wasm_vs_jolt_js.sh) steps exactly the scene the
// native side-by-side with Jolt does.
//
// What it does: 160 Jolt humans (23 parts, stabilised masses) in 16 piles (4 x 4, 4 m
// apart) of 10: the i-th of a pile (i = 0..9) has its hips 0.6 (i + 1) m up and is turned
// 36 i degrees about the vertical, posed in dead_pose1 with motors driving to that pose;
// dropped onto a flat static box; kPileSteps steps of 1/60 s, timed over the Step calls
// only. Between steps (untimed): the worst joint attachment error, the deepest point below
// the floor's top, the worst swing and twist past a joint limit, when every body sleeps.
// What it does NOT do: load the assets (the caller passes the ragdoll and the pose), pick
// a task system (WorldSettings carries the caller's hooks), or report (the caller does).
// Threading: the caller's thread, and whatever hooks the settings carry. Memory: the
// scene's own, allocated before the first timed step.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "tendon/tendon.h"

namespace tendon::bench {

inline constexpr int kPiles = 16, kPerPile = 10, kPileSteps = 500;
static_assert(kPileSteps % 100 == 0, "the Step time is reported per 100 steps");
inline constexpr float kPileStep = 1.0f / 60.0f;

struct PileFigures {
  double seconds = 0;  // over the timed Step calls
  double seconds_by_100[kPileSteps / 100] = {};  // per 100 steps, as Jolt's harness reports
  double worst_joint = 0, rest_joint = 0;        // m: over the run, over the last second
  double worst_depth = 0, rest_depth = 0;        // m below the floor's top
  double worst_swing = 0, worst_twist = 0;       // degrees past the joints' limits
  double asleep_at = -1;                         // s (-1: not by the end)
  uint64_t hash = 0;                             // World::StateHash after the timed steps
  Isa isa = Isa::kAuto;                          // the kernels the World ran
};

// The lowest point (world y) of a part's shape.
inline float LowestY(const PartShapeSettings& shape, const Transform& part) {
  const Transform frame = Compose(part, shape.offset);
  auto y_of = [&](Vec3 local) { return TransformPoint(frame, local).y; };
  switch (shape.type) {
    case PartShape::kSphere: return frame.translation.y - shape.radius;
    case PartShape::kCapsule:
      return std::min(y_of({0, shape.half_height, 0}), y_of({0, -shape.half_height, 0})) - shape.radius;
    case PartShape::kTaperedCapsule:
      return std::min(y_of({0, shape.half_height, 0}) - shape.top_radius, y_of({0, -shape.half_height, 0}) - shape.bottom_radius);
    case PartShape::kBox: {
      float lowest = 1e30f;
      for (int k = 0; k < 8; ++k) {
        const Vec3 h = shape.half_extents;
        lowest = std::min(lowest, y_of({(k & 1) ? h.x : -h.x, (k & 2) ? h.y : -h.y, (k & 4) ? h.z : -h.z}));
      }
      return lowest;
    }
  }
  return 0;
}

// Builds the scene in a World of `ws` (render interpolation is switched off: the bodies as
// the last step left them, as Jolt's harness reads them after Update) and steps it.
// `model`: dead_pose1 in model space (part j is skeleton joint j); `targets`: the motor
// targets. piled false: every ragdoll 4 m from the next (no contacts between instances).
// settle: step on, untimed, until every body sleeps, up to 30 s. nullopt-like failure: a
// World or archetype that cannot be built returns figures with seconds < 0.
inline PileFigures RunPileScene(const RagdollSettings& human, std::span<const Transform> model,
                                std::span<const Quat> targets, WorldSettings ws, bool piled, bool settle) {
  PileFigures f;
  ws.render_interpolation = false;
  auto created = World::Create(ws);
  if (!created.ok()) return PileFigures{.seconds = -1};
  auto world = std::move(created).value();
  if (!world->BuildStaticWorld(StaticWorldSettings{.boxes = {StaticBox{Transform{{0, -1, 0}, {}, {1, 1, 1}}, {80, 1, 80}}}}).ok())
    return PileFigures{.seconds = -1};
  auto built = world->BuildRagdollArchetype(human);
  if (!built.ok()) return PileFigures{.seconds = -1};
  const RagdollArchetypeId a = built.value();
  const auto n = static_cast<int32_t>(human.parts.size());
  std::vector<std::vector<Transform>> out(kPiles * kPerPile, std::vector<Transform>(n));
  std::vector<Transform> start(n);
  for (int pile = 0; pile < kPiles; ++pile) {
    for (int i = 0; i < kPerPile; ++i) {
      const int k = pile * kPerPile + i;
      // Piles 4 m apart; free: every ragdoll 4 m from the next.
      const Vec3 centre = piled ? Vec3{4.0f * static_cast<float>(pile % 4) - 6.0f, 0, 4.0f * static_cast<float>(pile / 4) - 6.0f}
                                : Vec3{4.0f * static_cast<float>(k % 13) - 24.0f, 0, 4.0f * static_cast<float>(k / 13) - 24.0f};
      const Quat turn = AxisAngle(Vec3{0, 1, 0}, 0.62831853f * static_cast<float>(i));
      const Vec3 hips{model[0].translation.x, 0, model[0].translation.z};
      const float lift = 0.6f * static_cast<float>(i + 1) - model[0].translation.y;
      for (int32_t j = 0; j < n; ++j)
        start[j] = Transform{centre + Rotate(turn, model[j].translation - hips) + Vec3{0, lift, 0},
                             Normalize(turn * model[j].rotation), {1, 1, 1}};
      RagdollBinding b;
      b.archetype = a;
      b.start_parts = start;
      b.output_parts = out[k];
      auto bound = world->BindRagdoll(b);
      if (!bound.ok() || !world->SetRagdollMotorTargets(bound.value(), targets, 1.0f).ok()) return PileFigures{.seconds = -1};
    }
  }
  constexpr int kAll = kPiles * kPerPile;
  for (int step = 0; step < kPileSteps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    const FrameStats& st = world->Step(kPileStep);
    const double step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f.seconds += step_seconds;
    f.seconds_by_100[step / 100] += step_seconds;
    if (f.asleep_at < 0 && st.sleeping_ragdolls == kAll) f.asleep_at = static_cast<float>(step + 1) * kPileStep;
    if (f.asleep_at >= 0 && st.sleeping_ragdolls < kAll) f.asleep_at = -1;  // woke again
    double joint = 0, depth = 0;
    for (const auto& parts : out) {
      for (int32_t j = 1; j < n; ++j) {
        const JointMeasure m = MeasureJoint(human, parts, j);
        joint = std::max(joint, static_cast<double>(m.gap));
        f.worst_swing = std::max(f.worst_swing, static_cast<double>(m.SwingExcess()) * 57.29578);
        f.worst_twist = std::max(f.worst_twist, static_cast<double>(m.TwistExcess()) * 57.29578);
      }
      for (int32_t j = 0; j < n; ++j) depth = std::max(depth, static_cast<double>(-LowestY(human.parts[j].shape, parts[j])));
    }
    f.worst_joint = std::max(f.worst_joint, joint);
    f.worst_depth = std::max(f.worst_depth, depth);
    if (step >= kPileSteps - 60) {
      f.rest_joint = std::max(f.rest_joint, joint);
      f.rest_depth = std::max(f.rest_depth, depth);
    }
  }
  f.hash = world->StateHash();
  f.isa = world->ActiveIsa();
  // Untimed: how long until every body sleeps (Jolt's scene reports ~18-23 s), up to 30 s.
  for (int step = kPileSteps; settle && step < 1800 && f.asleep_at < 0; ++step) {
    if (world->Step(kPileStep).sleeping_ragdolls == kAll) f.asleep_at = static_cast<float>(step + 1) * kPileStep;
  }
  return f;
}

}  // namespace tendon::bench
