// bench/bench_net_snapshot.cpp: what encoding and decoding a network pose costs (issue 40
// §2; docs/snapshots.md, "Network snapshots").
//
//   BM_NetPoseEncode/full, BM_NetPoseDecode/full     Jolt's human (23 parts), captured
//       half a second into a tumbling fall onto a plane, as a full pose (no velocities).
//   BM_NetPoseEncode/delta, BM_NetPoseDecode/delta   the same pose against a baseline in
//       which 4 parts differ.
//   BM_NetPoseEncode/velocities                      the full pose with velocities.
// One iteration encodes into (or decodes from) buffers reserved once. Counters: bytes (the
// message's size) and per_part (the time over the 23 parts).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

constexpr int kParts = 23;

struct NetScene {
  std::vector<Transform> parts = std::vector<Transform>(kParts), base_parts = parts, got_parts = parts;
  std::vector<Vec3> linear = std::vector<Vec3>(kParts), angular = linear, got_linear = linear, got_angular = linear;
  NetPose pose, baseline, got;
  NetPoseSettings settings;
  std::vector<std::byte> bytes;
  bool ok = false;

  explicit NetScene(bool velocities) {
    auto human = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"));
    if (!human.ok()) return;
    WorldSettings ws;
    ws.tasks = TaskHooks{nullptr, nullptr, nullptr, 1};
    std::unique_ptr<World> world = World::Create(ws).value();
    if (!world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok()) return;
    std::vector<Transform> out(kParts);
    RagdollBinding b;
    b.archetype = world->BuildRagdollArchetype(human.value()).value();
    b.placement = Transform{{3, 1.2f, -2}, AxisAngle(Vec3{1, 0, 0}, 1.2f), {1, 1, 1}};
    b.angular_velocity = {1.5f, 0.5f, 2.0f};
    b.output_parts = out;
    const RagdollId id = world->BindRagdoll(b).value();
    for (int f = 0; f < 30; ++f) world->Step(1.0f / 60);
    settings.include_velocities = velocities;
    pose = NetPose{1000, parts, linear, angular, false, false};
    if (!world->CaptureRagdollPose(id, &pose).ok()) return;
    // The baseline: the receiver's copy of the pose 4 ticks earlier, 4 parts elsewhere and the
    // root where it is.
    base_parts = parts;
    for (int i : {5, 9, 14, 20}) base_parts[i].translation.y += 0.05f;
    baseline = NetPose{996, base_parts, linear, angular, false, velocities};
    got = NetPose{0, got_parts, got_linear, got_angular, false, false};
    bytes.resize(MaxNetPoseBytes(kParts, settings));
    ok = true;
  }
};

void Counters(benchmark::State& state, std::size_t bytes) {
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["per_part"] = benchmark::Counter(
      static_cast<double>(kParts), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void Encode(benchmark::State& state, bool delta, bool velocities) {
  NetScene s(velocities);
  if (!s.ok) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  std::size_t n = 0;
  for (auto _ : state) {
    Result<std::size_t> r = EncodeNetPose(s.pose, delta ? &s.baseline : nullptr, s.settings, s.bytes);
    n = r.ok() ? r.value() : 0;
    benchmark::DoNotOptimize(n);
    benchmark::ClobberMemory();
  }
  Counters(state, n);
}

void Decode(benchmark::State& state, bool delta) {
  NetScene s(false);
  if (!s.ok) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return;
  }
  const NetPose* baseline = delta ? &s.baseline : nullptr;
  const std::size_t n = EncodeNetPose(s.pose, baseline, s.settings, s.bytes).value();
  const std::span<const std::byte> message(s.bytes.data(), n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(DecodeNetPose(message, baseline, s.settings, &s.got).ok());
    benchmark::ClobberMemory();
  }
  Counters(state, n);
}

void NetPoseEncodeFull(benchmark::State& state) { Encode(state, false, false); }
void NetPoseEncodeDelta(benchmark::State& state) { Encode(state, true, false); }
void NetPoseEncodeVelocities(benchmark::State& state) { Encode(state, false, true); }
void NetPoseDecodeFull(benchmark::State& state) { Decode(state, false); }
void NetPoseDecodeDelta(benchmark::State& state) { Decode(state, true); }

}  // namespace

BENCHMARK(NetPoseEncodeFull)->Name("BM_NetPoseEncode/full");
BENCHMARK(NetPoseEncodeDelta)->Name("BM_NetPoseEncode/delta");
BENCHMARK(NetPoseEncodeVelocities)->Name("BM_NetPoseEncode/velocities");
BENCHMARK(NetPoseDecodeFull)->Name("BM_NetPoseDecode/full");
BENCHMARK(NetPoseDecodeDelta)->Name("BM_NetPoseDecode/delta");
