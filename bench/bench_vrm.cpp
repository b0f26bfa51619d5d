// bench/bench_vrm.cpp: VRM avatars in tendon_bench (Google Benchmark), the side of the
// three-vrm comparison that bench/vrm_vs_three_vrm.sh runs next to bench-vrm.mjs.
//
//   BM_VrmAvatars/models:<n>   n Godettes (../shared/data/vrm/godette) bound from the file
//       with the one-call avatar (kVrm chains, no character), 2 m apart, their roots driven
//       as bench-vrm.mjs drives them (yaw 0.8 sin(2t + i), bob 0.2 |sin 5t|, head roll
//       0.4 sin 3t). The host's forward kinematics (VrmAvatar::UpdateWorld) runs outside the
//       timing, as three.js's scene.updateMatrixWorld() does outside three-vrm's; one
//       iteration is one whole World::Step (pose in, solve, writeback). ns_per_joint is
//       per VRM joint (16 per Godette), items are joints.
//   BM_VrmAvatars/models:<n>/untimed_phases   the same with WorldSettings::time_phases off:
//       Step reads no cycle counter (FrameStats::times stay zero, so the phase counters
//       below read 0), as a host that profiles with its own tools would run it.
//   BM_VrmAvatars/models:<n>/character   the same avatars with their character bound (the
//       character writes every bone's world frame inside Step, the chains read it): the
//       whole per-frame cost of a ragdoll-able avatar.
//   BM_VrmHairyHead/models:<n>/{strand_lanes,one_lane}   n copies of a built VRM 1.0-style
//       head of 25 strands of 6-10 joints (200 joints), driven the same way with phase times
//       off: its strands a lane each (a chain per strand length, issue 41) or, as before, the
//       head's roots in one lane per 128-node chain. bench/hairy_head_gltf.py writes the same
//       springs as a .gltf for three-vrm (HAIRY=1 bash bench/vrm_vs_three_vrm.sh).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ports/gltf/vrm_avatar.h"
#include "ports/shared_data.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

// A VRM 1.0-style head of 25 hair springs, one linear strand each, of 6 to 10 joints (5 of
// each length), colliding with a sphere on the head: issue 41's lone avatar with many
// strands (tests/vrm_lanes_test.cpp builds the same head).
ports::GltfAsset HairyHead() {
  ports::GltfAsset asset;
  asset.name = "hairy-head.vrm";
  asset.vrm = ports::VrmVersion::k1;
  SkeletonSettings& sk = asset.skeleton;
  auto add = [&](const std::string& name, int32_t parent, Vec3 t) {
    sk.names.push_back(name);
    sk.parents.push_back(parent);
    sk.rest_local.push_back(Transform{t, {}, {1, 1, 1}});
    return static_cast<int32_t>(sk.parents.size()) - 1;
  };
  add("root", -1, {0, 0, 0});
  const int32_t head = add("head", 0, {0, 1.6f, 0});
  asset.humanoid.emplace_back("head", head);  // the bone the drive rolls (no character is built)
  asset.spring_bones.colliders.push_back(ports::VrmCollider{.bone = head, .offset = {0, 0.05f, 0}, .radius = 0.09f});
  asset.spring_bones.collider_groups.push_back(ports::VrmColliderGroup{"head", {0}});
  for (int s = 0; s < 25; ++s) {
    const int joints = 6 + s % 5;
    const float a = 6.2831853f * static_cast<float>(s) / 25.0f;
    int32_t bone = add("hair" + std::to_string(s) + "_0", head, {0.1f * std::cos(a), 0.08f, 0.1f * std::sin(a)});
    ports::VrmSpring spring;
    spring.name = "hair" + std::to_string(s);
    spring.collider_groups = {0};
    for (int j = 0; j < joints; ++j) {
      const int32_t tail = add("hair" + std::to_string(s) + "_" + std::to_string(j + 1), bone,
                               {0.01f * std::cos(a), -0.035f, 0.01f * std::sin(a)});
      spring.joints.push_back(ports::VrmJoint{.bone = bone, .parent = j - 1, .tail_bone = tail, .hit_radius = 0.01f,
                                              .stiffness = 1.0f - 0.05f * static_cast<float>(j), .gravity_power = 0.2f,
                                              .drag_force = 0.4f});
      bone = tail;
    }
    asset.spring_bones.springs.push_back(spring);
  }
  return asset;
}

void VrmAvatars(benchmark::State& state, int n, bool character, bool time_phases, bool hairy_head = false,
                bool strand_lanes = true) {
  WorldSettings ws;
  ws.time_phases = time_phases;
  ws.max_distance = INFINITY;
  ws.max_active_characters = 0;
  auto created = World::Create(ws);
  std::unique_ptr<World> world = std::move(created.value());
  ports::VrmAvatarOptions options;
  options.character = character;
  options.strand_lanes = strand_lanes;
  auto kind = hairy_head ? ports::VrmAvatarArchetype::Build(*world, HairyHead(), options)
                         : ports::VrmAvatarArchetype::Load(*world, ports::SharedDataPath("vrm/godette/Godette_vrm_v4.vrm"), options);
  if (!kind.ok()) {
    state.SkipWithError(("../shared/data/vrm is not available (set TENDON_SHARED_DATA): " + kind.error().message).c_str());
    return;
  }
  int32_t head = -1;
  for (const auto& [role, bone] : kind.value()->asset().humanoid)
    if (role == "head") head = bone;
  std::vector<std::unique_ptr<ports::VrmAvatar>> avatars;
  for (int i = 0; i < n; ++i) {
    auto bound = ports::VrmAvatar::Bind(*world, kind.value(), Transform{{2.0f * static_cast<float>(i), 0, 0}, {}, {1, 1, 1}});
    if (!bound.ok()) {
      state.SkipWithError(bound.error().message.c_str());
      return;
    }
    avatars.push_back(std::move(bound.value()));
  }
  const Quat head_rest = head >= 0 ? avatars[0]->animated_local[head].rotation : Quat{};
  const float dt = 1.0f / 60.0f;
  int64_t frame = 0;
  auto drive = [&] {
    const float t = static_cast<float>(frame++) * dt;
    for (int i = 0; i < n; ++i) {
      ports::VrmAvatar& a = *avatars[i];
      a.model_world.rotation = AxisAngle(Vec3{0, 1, 0}, 0.8f * std::sin(2.0f * t + static_cast<float>(i)));
      a.model_world.translation.y = 0.2f * std::fabs(std::sin(5.0f * t));
      if (head >= 0) a.animated_local[head].rotation = head_rest * AxisAngle(Vec3{0, 0, 1}, 0.4f * std::sin(3.0f * t));
      if (!character) a.UpdateWorld();
    }
  };
  for (int f = 0; f < 200; ++f) {  // warm-up, as bench-vrm.mjs
    drive();
    world->Step(dt);
  }
  // Manual time around Step alone: PauseTiming costs more than a one-avatar Step.
  PhaseTimes phases{};  // summed over the timed frames: where a Step goes
  for (auto _ : state) {
    drive();
    const auto t0 = std::chrono::steady_clock::now();
    const PhaseTimes& t = world->Step(dt).times;
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    phases.pose_ms += t.pose_ms, phases.solve_ms += t.solve_ms, phases.writeback_ms += t.writeback_ms;
    phases.gather_ms += t.gather_ms + t.budget_ms, phases.ragdoll_ms += t.ragdoll_ms;
  }
  const double frames = static_cast<double>(state.iterations());
  state.counters["pose_us"] = phases.pose_ms * 1e3 / frames;
  state.counters["solve_us"] = phases.solve_ms * 1e3 / frames;
  state.counters["writeback_us"] = phases.writeback_ms * 1e3 / frames;
  state.counters["gather_budget_us"] = phases.gather_ms * 1e3 / frames;
  state.counters["character_us"] = phases.ragdoll_ms * 1e3 / frames;
  const int64_t joints = static_cast<int64_t>(kind.value()->joint_count()) * n;
  state.SetItemsProcessed(state.iterations() * joints);
  state.counters["joints"] = static_cast<double>(joints);
  state.counters["ns_per_joint"] = benchmark::Counter(static_cast<double>(joints) * 1e-9,
                                                      benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
  state.counters["simulated_chains"] = world->LastStats().simulated_chains;
  state.counters["chain_blocks"] = world->LastStats().chain_blocks;  // 8-lane blocks the chains took
  state.counters["lanes_used"] = world->LastStats().lanes_used;
}

}  // namespace

void RegisterVrmBenchmarks() {
  for (bool character : {false, true}) {
    for (int n : {1, 10, 100}) {
      const std::string name = "BM_VrmAvatars/models:" + std::to_string(n) + (character ? "/character" : "");
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { VrmAvatars(s, n, character, true); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  // Issue 41: the lone many-strand head, its strands spread over lanes (a chain per length)
  // or in the one-lane layout before it (every root on the head in one chain up to 128
  // nodes). Run both with --benchmark_enable_random_interleaving to alternate them.
  for (bool strand_lanes : {true, false}) {
    for (int n : {1, 10, 100}) {
      const std::string name = "BM_VrmHairyHead/models:" + std::to_string(n) + (strand_lanes ? "/strand_lanes" : "/one_lane");
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { VrmAvatars(s, n, false, false, true, strand_lanes); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (int n : {1, 10, 100}) {
    const std::string name = "BM_VrmAvatars/models:" + std::to_string(n) + "/untimed_phases";
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { VrmAvatars(s, n, false, false); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}
