// bench/bench_snapshots.cpp: what saving and restoring a World's state costs (issue 40 §1;
// docs/snapshots.md).
//
//   BM_SaveState / BM_RestoreState   64 Jolt humans (23 parts, stabilised masses) fallen
//       onto a ground plane, 8 apart in a row so neighbours touch, and 256 eight-node
//       chains, stepped 60 frames (one worker); one iteration saves the whole World into a
//       buffer reserved once (or restores it from there). Counters: bytes (the saved
//       state's size), per_instance (the time over the 320 instances) and the byte rate.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include "bench/bench_util.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

constexpr int kRagdolls = 64;
constexpr int kChains = 256;

struct SnapshotScene {
  std::unique_ptr<World> world;
  std::vector<std::vector<Transform>> ragdoll_out;
  std::vector<Transform> roots;
  std::vector<std::vector<Transform>> animated, chain_out;
  std::vector<std::byte> bytes;
  bool ok = false;

  SnapshotScene() {
    auto human = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"), true);
    if (!human.ok()) return;
    WorldSettings ws;
    ws.tasks = TaskHooks{nullptr, nullptr, nullptr, 1};
    ws.max_distance = INFINITY;
    ws.max_chains = kChains;
    world = World::Create(ws).value();
    bench::MustSucceed(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, -1.0f}}}));
    const RagdollArchetypeId a = world->BuildRagdollArchetype(human.value()).value();
    ragdoll_out.assign(kRagdolls, std::vector<Transform>(human.value().parts.size()));
    for (int i = 0; i < kRagdolls; ++i) {
      RagdollBinding b;
      b.archetype = a;
      b.placement.translation = {0.4f * static_cast<float>(i % 8), 0.5f * static_cast<float>(i / 8), 3.0f * static_cast<float>(i / 8)};
      b.output_parts = ragdoll_out[i];
      (void)world->BindRagdoll(b).value();
    }
    ChainArchetypeSettings strand;
    for (int j = 0; j < 8; ++j) {
      ChainBone bone;
      bone.parent = j - 1;
      bone.rest_local.translation = j == 0 ? Vec3{} : Vec3{0, -0.06f, 0};
      strand.bones.push_back(bone);
    }
    const ChainArchetypeId c = world->BuildChainArchetype(strand).value();
    roots.resize(kChains);
    animated.assign(kChains, std::vector<Transform>(8));
    chain_out.assign(kChains, std::vector<Transform>(8));
    for (int i = 0; i < kChains; ++i) {
      roots[i].translation = {static_cast<float>(i % 16), 2, static_cast<float>(i / 16) + 40.0f};
      for (int j = 0; j < 8; ++j) animated[i][j] = strand.bones[j].rest_local;
      ChainBinding b;
      b.archetype = c;
      b.root_parent_world = &roots[i];
      b.animated_local = animated[i];
      b.output_local = chain_out[i];
      (void)world->BindChain(b).value();
    }
    for (int f = 0; f < 60; ++f) {
      for (int i = 0; i < kChains; ++i) roots[i].translation.x = static_cast<float>(i % 16) + 0.2f * std::sin(0.1f * static_cast<float>(f));
      world->Step(1.0f / 60.0f);
    }
    bytes.resize(world->SavedStateSize());
    ok = world->SaveState(bytes).ok();
  }
};

void Counters(benchmark::State& state, std::size_t bytes) {
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["per_instance"] = benchmark::Counter(static_cast<double>(kRagdolls + kChains),
                                                      benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void SaveState(benchmark::State& state) {
  SnapshotScene scene;
  if (!scene.ok) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(scene.world->SaveState(scene.bytes).ok());
    benchmark::ClobberMemory();
  }
  Counters(state, scene.bytes.size());
}

void RestoreState(benchmark::State& state) {
  SnapshotScene scene;
  if (!scene.ok) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(scene.world->RestoreState(scene.bytes).ok());
    benchmark::ClobberMemory();
  }
  Counters(state, scene.bytes.size());
}

}  // namespace

void RegisterSnapshotBenchmarks() {
  benchmark::RegisterBenchmark("BM_SaveState/ragdolls:64/chains:256", SaveState)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_RestoreState/ragdolls:64/chains:256", RestoreState)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}
