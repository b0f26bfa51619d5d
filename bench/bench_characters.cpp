// bench/bench_characters.cpp: ragdoll characters in tendon_bench (Google Benchmark).
//
//   BM_RagdollToggle/characters:<n>          ActivateCharacter + DeactivateCharacter of one
//       bound character per iteration (cycling through n), no Step: the cost of a toggle.
//   BM_PoweredRagdolls/characters:<n>/workers:<w>[/limb_motors]   a whole World::Step (one
//       fixed step) of n powered (strength 1), anchored Jolt "Human" characters (23 parts,
//       the file's motors, in Jolt's convention or with MotorSettings::limb_inertia)
//       tracking the walk clip in place, 2 m apart on a plane; counters ms_per_frame, the
//       mean joint tracking error in degrees (each joint's output relative rotation against
//       the animation's, averaged over joints and characters) and part_substeps_per_s.
//   BM_OverlappedFrame/<mode>/workers:2   the demo's kind of frame: 24 powered Jolt humans
//       walking in place (the yard), each with a ponytail chain hanging from its head (a
//       chain that waits for the ragdolls), and 3,000 chains of 8 nodes on a crowd's
//       animated roots (the demo's budget), on 2 oneTBB workers. Modes: step (World::Step),
//       overlap (BeginStep then FinishStep: the crowd's chains run beside the ragdoll
//       substeps), step+host and overlap+host (the host thread also samples the walk clip
//       for 400 more skeletons, its own pre-render work, after Step or between BeginStep
//       and FinishStep). Counter ms_per_frame (wall, the whole iteration).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
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

std::string Data(const std::string& relative) { return ports::SharedDataPath("jolt-human/" + relative); }

struct Crowd {
  std::unique_ptr<TbbTaskSystem> tasks;
  std::unique_ptr<World> world;
  ports::JoltAnimation walk;
  SkeletonSettings skeleton;
  CharacterArchetypeId archetype;
  std::vector<Transform> animated;  // one sampled pose, shared by every character
  std::vector<Transform> models;
  std::vector<std::vector<Transform>> output, world_pose;
  std::vector<CharacterId> ids;
  std::vector<int32_t> part_bone, part_parent;
  float time = 0;
};

std::unique_ptr<Crowd> MakeCrowd(benchmark::State& state, int n, int workers, bool limb_motors = false) {
  auto crowd = std::make_unique<Crowd>();
  auto neutral = ports::LoadJoltAnimation(Data("animations/neutral.json"));
  auto walk = ports::LoadJoltAnimation(Data("animations/walk.json"));
  auto ragdoll = ports::LoadJoltHumanRagdoll(Data("ragdoll.json"));
  if (!neutral.ok() || !walk.ok() || !ragdoll.ok()) {
    state.SkipWithError("../shared/data/jolt-human is not available (set TENDON_SHARED_DATA)");
    return nullptr;
  }
  crowd->walk = walk.value();
  WorldSettings ws;
  ws.max_active_characters = n;
  ws.max_distance = INFINITY;
  if (workers > 1) {
    crowd->tasks = std::make_unique<TbbTaskSystem>(workers);
    ws.tasks = crowd->tasks->hooks();
  }
  crowd->world = World::Create(ws).value();
  bench::MustSucceed(crowd->world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}));
  CharacterSettings cs;
  cs.skeleton = ports::JoltSkeleton(neutral.value());
  cs.ragdoll = ragdoll.value();
  for (PartSettings& p : cs.ragdoll.parts) p.joint.motor.limb_inertia = limb_motors;
  crowd->skeleton = cs.skeleton;
  auto built = crowd->world->BuildCharacterArchetype(cs);
  if (!built.ok()) {
    state.SkipWithError(built.error().message.c_str());
    return nullptr;
  }
  crowd->archetype = built.value();
  const auto bones = cs.skeleton.names.size();
  crowd->animated = cs.skeleton.rest_local;
  crowd->models.resize(n);
  crowd->output.assign(n, std::vector<Transform>(bones));
  crowd->world_pose.assign(n, std::vector<Transform>(bones));
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
  for (int i = 0; i < n; ++i) {
    crowd->models[i].translation = {2.0f * static_cast<float>(i % side), 0, 2.0f * static_cast<float>(i / side)};
    CharacterBinding b;
    b.archetype = crowd->archetype;
    b.model_world = &crowd->models[i];
    b.animated_local = crowd->animated;
    b.output_local = crowd->output[i];
    b.output_world = crowd->world_pose[i];
    crowd->ids.push_back(crowd->world->BindCharacter(b).value());
  }
  for (int32_t j = 0; j < crowd->world->CharacterPartCount(crowd->archetype); ++j) {
    CharacterPartInfo info;
    bench::MustSucceed(crowd->world->GetCharacterPartInfo(crowd->archetype, j, &info));
    crowd->part_bone.push_back(info.bone);
    crowd->part_parent.push_back(info.parent);
  }
  return crowd;
}

void Advance(Crowd& c) {
  c.time += 1.0f / 60.0f;
  ports::SampleJoltAnimation(c.walk, c.time, c.animated, true);
  c.world->Step(1.0f / 60.0f);
}

// Mean over characters and joints of the angle between output and animated relative rotations.
double TrackingErrorDegrees(const Crowd& c) {
  std::vector<Transform> animated_world(c.animated.size());
  for (std::size_t b = 0; b < c.animated.size(); ++b) {
    const int32_t p = c.skeleton.parents[b];
    animated_world[b] = Compose(p >= 0 ? animated_world[p] : Transform{}, c.animated[b]);
  }
  double sum = 0;
  int count = 0;
  for (const auto& pose : c.world_pose) {
    for (std::size_t j = 1; j < c.part_bone.size(); ++j) {
      const int32_t b = c.part_bone[j], p = c.part_bone[c.part_parent[j]];
      const Quat out = Conjugate(pose[p].rotation) * pose[b].rotation;
      const Quat want = Conjugate(animated_world[p].rotation) * animated_world[b].rotation;
      sum += RotationAngle(Normalize(Conjugate(want) * out)) * 57.2957795;
      ++count;
    }
  }
  return count > 0 ? sum / count : 0.0;
}

void PoweredRagdolls(benchmark::State& state, int n, int workers, bool limb_motors) {
  auto crowd = MakeCrowd(state, n, workers, limb_motors);
  if (crowd == nullptr) return;
  Advance(*crowd);
  for (CharacterId id : crowd->ids) crowd->world->ActivateCharacter(id, {.strength = 1.0f, .anchored = true});
  for (int f = 0; f < 60; ++f) Advance(*crowd);  // settle into the walk
  double error = 0, stepping_ms = 0;
  int samples = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    Advance(*crowd);
    stepping_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    state.PauseTiming();
    error += TrackingErrorDegrees(*crowd);
    ++samples;
    state.ResumeTiming();
  }
  const FrameStats& st = crowd->world->LastStats();
  state.counters["active"] = st.active_characters;
  state.counters["tracking_error_deg"] = samples > 0 ? error / samples : 0.0;
  state.counters["ms_per_frame"] = samples > 0 ? stepping_ms / samples : 0.0;
  state.counters["part_substeps_per_s"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(crowd->part_bone.size()) * st.ragdoll_substeps,
      benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(state.iterations() * n);
}

// The demo's frame (see the header): characters, the chains on them, and a crowd's chains.
struct DemoFrame {
  std::unique_ptr<Crowd> crowd;
  ChainArchetypeId ponytail, hair;
  std::vector<std::vector<Transform>> tail_animated, tail_output;
  std::vector<Transform> roots;
  std::vector<std::vector<Transform>> hair_animated, hair_output;
  std::vector<std::vector<Transform>> host_poses;  // the host's own work: other skeletons
};

std::unique_ptr<DemoFrame> MakeDemoFrame(benchmark::State& state, int workers) {
  auto d = std::make_unique<DemoFrame>();
  d->crowd = MakeCrowd(state, 24, workers);
  if (d->crowd == nullptr) return nullptr;
  World& w = *d->crowd->world;
  ChainArchetypeSettings strand;
  for (int i = 0; i < 8; ++i) strand.bones.push_back({i - 1, {{0, i == 0 ? 0.0f : -0.06f, 0}, {}, {1, 1, 1}}});
  strand.settings.stiffness = 0.05f;
  d->hair = w.BuildChainArchetype(strand).value();
  ChainArchetypeSettings tail = strand;
  tail.bones.resize(6);
  d->ponytail = w.BuildChainArchetype(tail).value();
  int32_t head = 0;
  for (std::size_t b = 0; b < d->crowd->skeleton.names.size(); ++b) {
    if (d->crowd->skeleton.names[b] == "C_Head_sjnt_0") head = static_cast<int32_t>(b);
  }
  d->tail_animated.assign(24, std::vector<Transform>());
  d->tail_output.assign(24, std::vector<Transform>());
  for (int i = 0; i < 24; ++i) {
    for (const ChainBone& b : tail.bones) d->tail_animated[i].push_back(b.rest_local);
    d->tail_output[i] = d->tail_animated[i];
    ChainBinding b;
    b.archetype = d->ponytail;
    b.root_parent_world = &d->crowd->world_pose[i][head];
    b.animated_local = d->tail_animated[i];
    b.output_local = d->tail_output[i];
    w.BindChain(b).value();
  }
  constexpr int kCrowdChains = 3000;
  d->roots.resize(kCrowdChains);
  d->hair_animated.assign(kCrowdChains, std::vector<Transform>());
  d->hair_output.assign(kCrowdChains, std::vector<Transform>());
  for (int i = 0; i < kCrowdChains; ++i) {
    d->roots[i].translation = {0.5f * static_cast<float>(i % 60), 1.7f, 20.0f + 0.5f * static_cast<float>(i / 60)};
    for (const ChainBone& b : strand.bones) d->hair_animated[i].push_back(b.rest_local);
    d->hair_output[i] = d->hair_animated[i];
    ChainBinding b;
    b.archetype = d->hair;
    b.root_parent_world = &d->roots[i];
    b.animated_local = d->hair_animated[i];
    b.output_local = d->hair_output[i];
    w.BindChain(b).value();
  }
  d->host_poses.assign(400, d->crowd->animated);
  return d;
}

void OverlappedFrame(benchmark::State& state, bool overlap, bool host_work, int workers = 2) {
  auto d = MakeDemoFrame(state, workers);
  if (d == nullptr) return;
  Crowd& c = *d->crowd;
  World& w = *c.world;
  bench::MustSucceed(w.SetMaxChains(3100));
  Advance(c);
  for (CharacterId id : c.ids) w.ActivateCharacter(id, {.strength = 1.0f, .anchored = true});
  auto frame = [&] {
    c.time += 1.0f / 60.0f;
    ports::SampleJoltAnimation(c.walk, c.time, c.animated, true);
    for (std::size_t i = 0; i < d->roots.size(); ++i) {
      d->roots[i].translation.y = 1.7f + 0.05f * std::sin(4.0f * c.time + static_cast<float>(i));
    }
    auto work = [&] {
      for (std::size_t k = 0; k < d->host_poses.size(); ++k) {
        ports::SampleJoltAnimation(c.walk, c.time + 0.01f * static_cast<float>(k), d->host_poses[k], true);
      }
    };
    if (overlap) {
      w.BeginStep(1.0f / 60.0f);
      if (host_work) work();
      w.FinishStep();
    } else {
      w.Step(1.0f / 60.0f);
      if (host_work) work();
    }
  };
  for (int f = 0; f < 60; ++f) frame();
  double ms = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    frame();
    ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  const FrameStats& st = w.LastStats();
  state.counters["ms_per_frame"] = ms / static_cast<double>(state.iterations());
  state.counters["chains"] = st.simulated_chains;
  state.counters["active"] = st.active_characters;
}

void RagdollToggle(benchmark::State& state, int n) {
  auto crowd = MakeCrowd(state, n, 1);
  if (crowd == nullptr) return;
  Advance(*crowd);
  Advance(*crowd);
  std::vector<CharacterEvent> events(8);
  std::size_t next = 0;
  for (auto _ : state) {
    const CharacterId id = crowd->ids[next];
    next = next + 1 == crowd->ids.size() ? 0 : next + 1;
    benchmark::DoNotOptimize(crowd->world->ActivateCharacter(id));
    bench::MustSucceed(crowd->world->DeactivateCharacter(id, 0.2f));
    crowd->world->DrainCharacterEvents(events);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

void RegisterCharacterBenchmarks() {
  for (const char* mode : {"step", "overlap", "step+host", "overlap+host"}) {
    const std::string m = mode;
    const bool overlap = m.rfind("overlap", 0) == 0, host = m.find("host") != std::string::npos;
    const std::string name = "BM_OverlappedFrame/" + m + "/workers:2";
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { OverlappedFrame(s, overlap, host); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  // The demo's frame (a crowd's chains and active characters, one Step) per worker count:
  // the worker-scaling row of bench/run-matrix.sh.
  for (int w : tendon::bench::WorkerCounts()) {
    const std::string name = "BM_DemoFrame/workers:" + std::to_string(w);
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { OverlappedFrame(s, false, false, w); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_RagdollToggle/characters:100", [](benchmark::State& s) { RagdollToggle(s, 100); })
      ->Unit(benchmark::kMicrosecond);
  for (int n : {100, 1000}) {
    for (int w : tendon::bench::WorkerCounts()) {
      for (bool limb : {false, true}) {
        const std::string name = "BM_PoweredRagdolls/characters:" + std::to_string(n) + "/workers:" + std::to_string(w) +
                                 (limb ? "/limb_motors" : "");
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { PoweredRagdolls(s, n, w, limb); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}
