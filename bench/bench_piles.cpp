// bench/bench_piles.cpp: the ragdoll pile scene of Jolt Physics' ragdoll performance test,
// rebuilt from ../shared/data/jolt-human, in tendon_bench (Google Benchmark).
//
//   BM_RagdollPiles/<impl>/workers:<w>   (kPileSubsteps XPBD substeps) 160 Jolt humans (23 parts, stabilised masses) in
//       16 piles (4 x 4, 4 m apart) of 10: the i-th of a pile (i = 0..9) has its hips
//       0.6 (i + 1) m up and is turned 36 i degrees about the vertical, posed in dead_pose1
//       with motors driving to that pose; dropped onto a flat static box; 500 steps of
//       1/60 s. One benchmark iteration is the whole scene (timed over Step calls only).
//   BM_RagdollFree/<impl>/workers:<w>    the same 160 ragdolls far apart (no contacts
//       between instances): the solver's own throughput.
//   BM_RagdollPiles/simd/workers:<w>/substeps:<s>   the piles with other XPBD substep counts.
// Counters: steps_per_s, part_substeps_per_s, the worst joint attachment error (mm) over
// the run and at rest (the last second), the deepest penetration into the ground (mm) over
// the run and at rest, the worst swing and twist past a joint limit over the run (degrees;
// dead_pose1 starts some joints outside their limits), when every body was asleep (s; SIMD
// runs step on untimed up to 30 s; -1: never), ms_per_step_<a>_<b>: the mean Step time
// over steps a..b (Jolt's harness prints the same per 100 steps), and the state hash after
// the 500 steps in the label.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tbb_task_system.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

constexpr int kPiles = 16, kPerPile = 10, kSteps = 500;
static_assert(kSteps % 100 == 0, "the Step time is reported per 100 steps");
// XPBD substeps per 1/60 s step for the scene (WorldSettings::ragdoll_substeps; 16 by
// default): 8 keep every fidelity figure of the scene inside Jolt's (Jolt's scene runs its
// own settings: one collision step, 10 velocity and 2 position iterations).
constexpr int kPileSubsteps = 8;
constexpr float kStep = 1.0f / 60.0f;

std::string HumanData(const std::string& relative) { return ports::SharedDataPath("jolt-human/" + relative); }


// The lowest point (world y) of a part's shape.
float LowestY(const PartShapeSettings& shape, const Transform& part) {
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

void Piles(benchmark::State& state, Isa isa, int workers, bool piled, int substeps) {
  auto ragdoll = ports::LoadJoltHumanRagdoll(HumanData("ragdoll.json"), /*stabilized_masses=*/true);
  auto pose = ports::LoadJoltAnimation(HumanData("animations/dead_pose1.json"));
  if (!ragdoll.ok() || !pose.ok()) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  if (!IsIsaSupported(isa)) {
    state.SkipWithError("this CPU cannot run the kernel asked for");
    return;
  }
  const RagdollSettings& human = ragdoll.value();
  const auto n = static_cast<int32_t>(human.parts.size());
  // dead_pose1 in model space (part j is skeleton joint j), and the motor targets.
  std::vector<Transform> model(n);
  std::vector<Quat> targets(n);
  ports::SampleJoltPartPose(human, pose.value(), 0.0f, model, targets);
  double steps_per_s = 0, worst_joint = 0, rest_joint = 0, worst_depth = 0, rest_depth = 0, asleep_at = -1;
  double worst_swing = 0, worst_twist = 0;  // degrees past the joints' limits
  double seconds_by_100[kSteps / 100] = {};   // Step time per 100 steps, as Jolt's harness reports it
  uint64_t hash = 0;
  for (auto _ : state) {
    std::unique_ptr<TbbTaskSystem> tasks;
    WorldSettings ws;
    ws.isa = isa;
    ws.ragdoll_substeps = substeps;
    // The bodies as the last step left them, as Jolt's harness reads them after Update:
    // render interpolation would show the start of each step (at 60 Hz a whole step
    // behind), and the first frame would measure dead_pose1 itself (joint 16 starts 13.3
    // degrees past its swing limit) instead of what the solver made of it.
    ws.render_interpolation = false;
    if (workers > 1) {
      tasks = std::make_unique<TbbTaskSystem>(workers);
      ws.tasks = tasks->hooks();
    }
    auto world = World::Create(ws).value();
    bench::MustSucceed(world->BuildStaticWorld(StaticWorldSettings{.boxes = {StaticBox{Transform{{0, -1, 0}, {}, {1, 1, 1}}, {80, 1, 80}}}}));
    const RagdollArchetypeId a = world->BuildRagdollArchetype(human).value();
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
        const RagdollId id = world->BindRagdoll(b).value();
        bench::MustSucceed(world->SetRagdollMotorTargets(id, targets, 1.0f));
      }
    }
    double seconds = 0;
    std::fill(std::begin(seconds_by_100), std::end(seconds_by_100), 0.0);
    worst_joint = rest_joint = worst_depth = rest_depth = worst_swing = worst_twist = 0;
    asleep_at = -1;
    for (int step = 0; step < kSteps; ++step) {
      const auto t0 = std::chrono::steady_clock::now();
      const FrameStats& st = world->Step(kStep);
      const double step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      seconds += step_seconds;
      seconds_by_100[step / 100] += step_seconds;
      if (asleep_at < 0 && st.sleeping_ragdolls == kPiles * kPerPile) asleep_at = (step + 1) * kStep;
      if (asleep_at >= 0 && st.sleeping_ragdolls < kPiles * kPerPile) asleep_at = -1;  // woke again
      double joint = 0, depth = 0;
      for (const auto& parts : out) {
        for (int32_t j = 1; j < n; ++j) {
          const JointMeasure m = MeasureJoint(human, parts, j);
          joint = std::max(joint, static_cast<double>(m.gap));
          worst_swing = std::max(worst_swing, static_cast<double>(m.SwingExcess()) * 57.29578);
          worst_twist = std::max(worst_twist, static_cast<double>(m.TwistExcess()) * 57.29578);
        }
        for (int32_t j = 0; j < n; ++j) depth = std::max(depth, static_cast<double>(-LowestY(human.parts[j].shape, parts[j])));
      }
      worst_joint = std::max(worst_joint, joint);
      worst_depth = std::max(worst_depth, depth);
      if (step >= kSteps - 60) {
        rest_joint = std::max(rest_joint, joint);
        rest_depth = std::max(rest_depth, depth);
      }
    }
    state.SetIterationTime(seconds);
    steps_per_s = kSteps / seconds;
    hash = world->StateHash();
    // Untimed: how long until every body sleeps (Jolt's scene reports ~23 s), up to 30 s
    // (SIMD runs only: the scalar reference would take minutes).
    const bool simd = world->ActiveIsa() != Isa::kScalar && world->ActiveIsa() != Isa::kScalarFma;
    for (int step = kSteps; simd && step < 1800 && asleep_at < 0; ++step) {
      if (world->Step(kStep).sleeping_ragdolls == kPiles * kPerPile) asleep_at = (step + 1) * kStep;
    }
  }
  state.counters["steps_per_s"] = steps_per_s;
  state.counters["part_substeps_per_s"] =
      steps_per_s * static_cast<double>(kPiles * kPerPile * n) * substeps;
  state.counters["worst_joint_error_mm"] = worst_joint * 1e3;
  state.counters["rest_joint_error_mm"] = rest_joint * 1e3;
  state.counters["worst_penetration_mm"] = worst_depth * 1e3;
  state.counters["rest_penetration_mm"] = rest_depth * 1e3;
  state.counters["all_asleep_s"] = asleep_at;
  state.counters["worst_swing_excess_deg"] = worst_swing;
  state.counters["worst_twist_excess_deg"] = worst_twist;
  for (int k = 0; k < kSteps / 100; ++k)
    state.counters["ms_per_step_" + std::to_string(k * 100) + "_" + std::to_string(k * 100 + 99)] = seconds_by_100[k] * 10.0;
  char label[40];
  std::snprintf(label, sizeof label, "hash=%016llx", static_cast<unsigned long long>(hash));
  state.SetLabel(label);
}

}  // namespace

void RegisterPileBenchmarks() {
  for (const char* impl : {"scalar", "simd"}) {
    const Isa isa = std::string(impl) == "scalar" ? Isa::kScalar : Isa::kAuto;
    for (int w : tendon::bench::WorkerCounts()) {
      for (bool piled : {true, false}) {
        const std::string name =
            std::string(piled ? "BM_RagdollPiles/" : "BM_RagdollFree/") + impl + "/workers:" + std::to_string(w);
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { Piles(s, isa, w, piled, kPileSubsteps); })
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kSecond);
      }
    }
  }
  // The substeps knob (WorldSettings::ragdoll_substeps; the scene runs 8, the world's
  // default is 16): speed against fidelity.
  for (int substeps : {4, 6, 16}) {
    for (int w : tendon::bench::WorkerCounts()) {
      const std::string name = "BM_RagdollPiles/simd/workers:" + std::to_string(w) + "/substeps:" + std::to_string(substeps);
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { Piles(s, Isa::kAuto, w, true, substeps); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kSecond);
    }
  }
}
