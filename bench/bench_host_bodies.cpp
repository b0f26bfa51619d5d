// bench/bench_host_bodies.cpp: what host bodies cost (tendon/host_body.h), in tendon_bench.
//
//   BM_HostBodies/capsules:<n>/ragdolls:<m>   m Jolt humans lying in a grid 3 m apart on a
//       static ground (settled for 2 s untimed), and n player capsules (radius 0.3 m, 1.8 m
//       tall) walking straight across the field at 1.5 m/s, the host setting each one's
//       motion every frame; 120 steps of 1/60 s timed, 8 XPBD substeps, one worker.
//   .../far   the same capsules walking 200 m away: what host bodies cost with no pair.
// Counters: us_per_step; pairs_per_step (part pairs the broad phase kept, ragdoll_pairs)
// and contact_pairs_per_step (those with a contact, contact_ragdoll_pairs). What a host body
// costs is the difference to capsules:0 over n; docs/performance.md reports it.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

constexpr float kStep = 1.0f / 60.0f;
constexpr int kSteps = 120;

void HostBodies(benchmark::State& state, int capsules, int ragdolls, bool far) {
  const RagdollSettings human =
      ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"), true).value();
  double seconds = 0, pairs = 0, contacts = 0;
  for (auto _ : state) {
    WorldSettings ws;
    ws.ragdoll_substeps = 8;
    auto world = World::Create(ws).value();
    tendon::bench::MustSucceed(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}));
    const RagdollArchetypeId a = world->BuildRagdollArchetype(human).value();
    const int n = world->RagdollPartCount(a);
    const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(ragdolls))));
    std::vector<std::vector<Transform>> out(static_cast<std::size_t>(ragdolls), std::vector<Transform>(n));
    for (int i = 0; i < ragdolls; ++i) {
      RagdollBinding b;
      b.archetype = a;
      b.placement.translation = {3.0f * static_cast<float>(i % side), 0.3f, 3.0f * static_cast<float>(i / side)};
      b.placement.rotation = Normalize(Quat{-0.70710678f, 0, 0, 0.70710678f});  // lying along z
      b.output_parts = out[i];
      (void)world->BindRagdoll(b).value();
    }
    for (int f = 0; f < 120; ++f) world->Step(kStep);
    std::vector<HostBodyId> bodies;
    std::vector<Vec3> start;
    const float extent = 3.0f * static_cast<float>(side);
    for (int k = 0; k < capsules; ++k) {
      HostBodySettings s;
      s.half_height = 0.6f;
      s.radius = 0.3f;
      // Spread over the field; every other one walks along x, the rest along z.
      const Vec3 p{std::fmod(1.37f * static_cast<float>(k), extent), 0.9f,
                   std::fmod(2.11f * static_cast<float>(k), extent) + (far ? 200.0f : 0.0f)};
      s.transform.translation = p;
      bodies.push_back(world->AddHostBody(s).value());
      start.push_back(p);
    }
    for (int step = 0; step < kSteps; ++step) {
      for (int k = 0; k < capsules; ++k) {
        const Vec3 v = k % 2 == 0 ? Vec3{1.5f, 0, 0} : Vec3{0, 0, 1.5f};
        const Transform t{start[k] + v * (kStep * static_cast<float>(step)), {}, {1, 1, 1}};
        tendon::bench::MustSucceed(world->SetHostBodyMotion(bodies[k], t, v, {}));
      }
      const auto t0 = std::chrono::steady_clock::now();
      const FrameStats& st = world->Step(kStep);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      pairs += st.ragdoll_pairs;
      contacts += st.contact_ragdoll_pairs;
    }
    state.SetIterationTime(seconds);
  }
  state.counters["us_per_step"] = seconds / kSteps * 1e6;
  state.counters["pairs_per_step"] = pairs / kSteps;
  state.counters["contact_pairs_per_step"] = contacts / kSteps;
}

}  // namespace

void RegisterHostBodyBenchmarks() {
  for (int capsules : {0, 64, 256}) {
    for (bool far : {false, true}) {
      if (far && capsules == 0) continue;
      const std::string name =
          "BM_HostBodies/capsules:" + std::to_string(capsules) + "/ragdolls:64" + (far ? "/far" : "");
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { HostBodies(s, capsules, 64, far); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}
