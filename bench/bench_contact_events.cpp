// bench/bench_contact_events.cpp: what contact and impact events cost per frame
// (tendon/contact_events.h), in tendon_bench (Google Benchmark).
//
//   BM_ContactEvents/events:<0|1>   40 Jolt humans (23 parts) in 4 piles of 10 (the i-th
//       of a pile with its hips 0.6 (i + 1) m up, turned 36 i degrees about the vertical)
//       dropped onto a plane; 300 steps of 1/60 s, one worker. events:0 has
//       contact_event_capacity 0 (events off, nothing recorded), events:1 a capacity of
//       4096 and every event drained after each Step. One benchmark iteration is the whole
//       scene, timed over Step and the drain only.
// Counters: ns_per_frame (wall), cpu_ns_per_frame (the process's CPU time: one worker, so
// the frame's own; steadier on a loaded machine), events (over the run), dropped. The
// ratio of the two runs' figures is the events' cost (docs/events.md).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

constexpr int kPiles = 4, kPerPile = 10, kSteps = 300;
constexpr float kStep = 1.0f / 60.0f;

void ContactEvents(benchmark::State& state, bool events_on) {
  auto ragdoll = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"), true);
  if (!ragdoll.ok()) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  const int parts = static_cast<int>(ragdoll.value().parts.size());
  double ns = 0, cpu_ns = 0;
  int64_t frames = 0, events = 0, dropped = 0;
  for (auto _ : state) {
    WorldSettings ws;
    ws.contact_event_capacity = events_on ? 4096 : 0;
    auto world = std::move(World::Create(ws).value());
    bench::MustSucceed(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}));
    const RagdollArchetypeId a = world->BuildRagdollArchetype(ragdoll.value()).value();
    std::vector<std::vector<Transform>> outs(kPiles * kPerPile, std::vector<Transform>(static_cast<std::size_t>(parts)));
    for (int p = 0; p < kPiles; ++p) {
      for (int i = 0; i < kPerPile; ++i) {
        RagdollBinding b;
        b.archetype = a;
        b.placement = Transform{{4.0f * static_cast<float>(p % 2), 0.6f * static_cast<float>(i + 1), 4.0f * static_cast<float>(p / 2)},
                                AxisAngle(Vec3{0, 1, 0}, 0.6283f * static_cast<float>(i)) * AxisAngle(Vec3{1, 0, 0}, 1.5708f),
                                {1, 1, 1}};
        b.output_parts = outs[static_cast<std::size_t>(p * kPerPile + i)];
        if (!world->BindRagdoll(b).ok()) std::abort();  // a broken scene is never timed
      }
    }
    std::vector<ContactEvent> buffer(4096);
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    for (int f = 0; f < kSteps; ++f) {
      const FrameStats& st = world->Step(kStep);
      dropped += st.dropped_contact_events;
      events += world->DrainContactEvents(buffer);
    }
    ns += static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    cpu_ns += 1e9 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    frames += kSteps;
  }
  state.counters["ns_per_frame"] = frames > 0 ? ns / static_cast<double>(frames) : 0.0;
  state.counters["cpu_ns_per_frame"] = frames > 0 ? cpu_ns / static_cast<double>(frames) : 0.0;
  state.counters["events"] = static_cast<double>(events) / static_cast<double>(state.iterations());
  state.counters["dropped"] = static_cast<double>(dropped);
}

}  // namespace

void RegisterContactEventBenchmarks() {
  for (const bool on : {false, true}) {
    const std::string name = std::string("BM_ContactEvents/events:") + (on ? "1" : "0");
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { ContactEvents(s, on); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(3);
  }
}
