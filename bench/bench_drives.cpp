// bench/bench_drives.cpp: what part drives cost the ragdoll solver (issue 38 §3).
//
//   BM_PartDrives/ragdolls:1000/drives:<0|1>   1000 Jolt humans (23 parts, stabilised
//       masses) bound 3 m apart in the air over a ground plane (no contacts between
//       instances), 16 XPBD substeps, one worker; drives:1 holds each one's right hand at a
//       target 0.5 m above where it started (response time 0.3 s), so none sleeps; drives:0
//       is the same scene without drives (the ragdolls fall and lie on the plane 2 m down;
//       sleep is off for both, so the solver steps every one in both rows).
//       One iteration is one 1/60 s Step; the counter per_ragdoll_frame is the Step
//       time over the 1000 ragdolls. Compare the two rows: the drive's own cost.
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

void PartDrives(benchmark::State& state, int ragdolls, bool drives) {
  auto human = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"), true);
  if (!human.ok()) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  int32_t hand = -1;
  for (std::size_t j = 0; j < human.value().parts.size(); ++j) {
    if (human.value().parts[j].name == "R_Wrist_sjnt_0") hand = static_cast<int32_t>(j);
  }
  WorldSettings ws;
  ws.tasks = TaskHooks{nullptr, nullptr, nullptr, 1};
  ws.max_distance = INFINITY;
  auto world = World::Create(ws).value();
  bench::MustSucceed(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, -2.0f}}}));
  const RagdollArchetypeId a = world->BuildRagdollArchetype(human.value()).value();
  const std::size_t n = human.value().parts.size();
  std::vector<std::vector<Transform>> out(ragdolls, std::vector<Transform>(n));
  for (int i = 0; i < ragdolls; ++i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {3.0f * static_cast<float>(i % 32), 0, 3.0f * static_cast<float>(i / 32)};
    b.output_parts = out[i];
    const RagdollId id = world->BindRagdoll(b).value();
    bench::MustSucceed(world->SetRagdollSleeping(id, false, false, INFINITY));
    if (drives) {
      const Vec3 target = out[i][hand].translation + Vec3{0, 0.5f, 0};
      benchmark::DoNotOptimize(world->AddPartDrive(id, {.part = hand, .target = target, .response_time = 0.3f}).value());
    }
  }
  for (int f = 0; f < 30; ++f) world->Step(1.0f / 60.0f);  // past the first pull or fall
  for (auto _ : state) world->Step(1.0f / 60.0f);
  // Seconds per ragdoll-frame (Google Benchmark prints it with its unit: "1.2us").
  state.counters["per_ragdoll_frame"] = benchmark::Counter(
      static_cast<double>(ragdolls), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

void RegisterDriveBenchmarks() {
  for (bool drives : {false, true}) {
    const std::string name = std::string("BM_PartDrives/ragdolls:1000/drives:") + (drives ? "1" : "0");
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { PartDrives(s, 1000, drives); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}
