// ports/wasm/piles_driver.cpp: Jolt's ragdoll pile scene (bench/pile_scene.h, the scene
// BM_RagdollPiles runs natively) in the WebAssembly build, single-threaded, in Node: the
// Tendon side of bench/wasm_vs_jolt_js.sh, beside ../shared/peers/jolt-js/ragdoll-piles.mjs.
//   node --no-experimental-fetch tendon_piles.js [shared data folder] [scalar|auto] [substeps]
// Prints one JSON line with the peer's field names: steps_per_s over the 500 timed steps,
// ms per step by 100 steps, the fidelity figures (joint error, penetration, swing and twist
// past the limits, when all sleep) and the state hash.
// What it does NOT do: compare (the script does), or time anything but World::Step.
// Threading: one thread (no task system). Memory: the scene's own.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/pile_scene.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"

int main(int argc, char** argv) {
  using namespace tendon;
  if (argc > 1) setenv("TENDON_SHARED_DATA", argv[1], 1);
  const Isa isa = (argc > 2 && std::strcmp(argv[2], "scalar") == 0) ? Isa::kScalar : Isa::kAuto;
  const int substeps = argc > 3 ? std::atoi(argv[3]) : 8;  // BM_RagdollPiles' kPileSubsteps
  auto ragdoll = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"), /*stabilized_masses=*/true);
  auto pose = ports::LoadJoltAnimation(ports::SharedDataPath("jolt-human/animations/dead_pose1.json"));
  if (!ragdoll.ok() || !pose.ok()) {
    std::fprintf(stderr, "tendon_piles: cannot read jolt-human from the shared data folder\n");
    return 2;
  }
  const RagdollSettings& human = ragdoll.value();
  const auto n = static_cast<int32_t>(human.parts.size());
  std::vector<Transform> model(n);
  std::vector<Quat> targets(n);
  ports::SampleJoltPartPose(human, pose.value(), 0.0f, model, targets);
  WorldSettings ws;
  ws.isa = isa;
  ws.ragdoll_substeps = substeps;
  const bench::PileFigures f = bench::RunPileScene(human, model, targets, ws, /*piled=*/true, /*settle=*/true);
  if (f.seconds < 0) {
    std::fprintf(stderr, "tendon_piles: the scene could not be built\n");
    return 1;
  }
  std::printf("{\"engine\": \"tendon-wasm\", \"isa\": \"%s\", \"substeps\": %d, \"steps\": %d, \"seconds\": %.4f, "
              "\"steps_per_s\": %.2f, \"ms_per_100\": [%.2f, %.2f, %.2f, %.2f, %.2f], \"worst_joint_mm\": %.2f, "
              "\"rest_joint_mm\": %.2f, \"worst_swing_excess_deg\": %.2f, \"worst_twist_excess_deg\": %.2f, "
              "\"worst_penetration_mm\": %.2f, \"rest_penetration_mm\": %.2f, \"all_asleep_s\": %.2f, "
              "\"hash\": \"%016llx\"}\n",
              ToString(f.isa), substeps, bench::kPileSteps, f.seconds,
              bench::kPileSteps / f.seconds, f.seconds_by_100[0] * 10, f.seconds_by_100[1] * 10,
              f.seconds_by_100[2] * 10, f.seconds_by_100[3] * 10, f.seconds_by_100[4] * 10, f.worst_joint * 1e3,
              f.rest_joint * 1e3, f.worst_swing, f.worst_twist, f.worst_depth * 1e3, f.rest_depth * 1e3, f.asleep_at,
              static_cast<unsigned long long>(f.hash));
  return 0;
}
