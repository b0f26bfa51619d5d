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
#include "bench/pile_scene.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tbb_task_system.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

// XPBD substeps per 1/60 s step for the scene (WorldSettings::ragdoll_substeps; 16 by
// default): 8 keep every fidelity figure of the scene inside Jolt's (Jolt's scene runs its
// own settings: one collision step, 10 velocity and 2 position iterations).
constexpr int kPileSubsteps = 8;
constexpr int kSteps = bench::kPileSteps;

std::string HumanData(const std::string& relative) { return ports::SharedDataPath("jolt-human/" + relative); }

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
  bench::PileFigures f;
  for (auto _ : state) {
    std::unique_ptr<TbbTaskSystem> tasks;
    WorldSettings ws;
    ws.isa = isa;
    ws.ragdoll_substeps = substeps;
    if (workers > 1) {
      tasks = std::make_unique<TbbTaskSystem>(workers);
      ws.tasks = tasks->hooks();
    }
    // Untimed after the 500 steps: how long until every body sleeps, up to 30 s (SIMD runs
    // only: the scalar reference would take minutes).
    const bool settle = isa != Isa::kScalar && isa != Isa::kScalarFma;
    f = bench::RunPileScene(human, model, targets, ws, piled, settle);
    if (f.seconds < 0) {
      state.SkipWithError("the pile scene could not be built");
      return;
    }
    state.SetIterationTime(f.seconds);
  }
  const double steps_per_s = kSteps / f.seconds;
  state.counters["steps_per_s"] = steps_per_s;
  state.counters["part_substeps_per_s"] =
      steps_per_s * static_cast<double>(bench::kPiles * bench::kPerPile * n) * substeps;
  state.counters["worst_joint_error_mm"] = f.worst_joint * 1e3;
  state.counters["rest_joint_error_mm"] = f.rest_joint * 1e3;
  state.counters["worst_penetration_mm"] = f.worst_depth * 1e3;
  state.counters["rest_penetration_mm"] = f.rest_depth * 1e3;
  state.counters["all_asleep_s"] = f.asleep_at;
  state.counters["worst_swing_excess_deg"] = f.worst_swing;
  state.counters["worst_twist_excess_deg"] = f.worst_twist;
  for (int k = 0; k < kSteps / 100; ++k)
    state.counters["ms_per_step_" + std::to_string(k * 100) + "_" + std::to_string(k * 100 + 99)] = f.seconds_by_100[k] * 10.0;
  char label[40];
  std::snprintf(label, sizeof label, "hash=%016llx", static_cast<unsigned long long>(f.hash));
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
