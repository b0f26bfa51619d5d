// Profiler hooks (tendon/profiler_hooks.h) and the Chrome trace written through them: every
// phase of FrameStats is a zone inside its frame, the zones' durations add up to
// FrameStats', every thread's zones nest, workers have tracks, and counters and frame marks
// come once per frame.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tendon/tbb_task_system.h"
#include "test_util.h"

namespace tendon::test {
namespace {

// A busy world: 6,000 chains (a budget of 4,000), 30 falling limbs that pile up, 200
// pendulums; its phases take tens of microseconds or more, so the hooks' own cost (about a
// microsecond per zone) stays small against them.
struct BusyWorld {
  std::unique_ptr<TbbTaskSystem> tasks;
  std::unique_ptr<World> world;
  std::vector<std::unique_ptr<HostChain>> chains;
  std::vector<std::vector<Transform>> limbs;
  std::vector<Transform> joints, offsets;

  explicit BusyWorld(int workers, bool time_phases = true) {
    WorldSettings ws;
    ws.time_phases = time_phases;
    if (workers > 1) {
      tasks = std::make_unique<TbbTaskSystem>(workers);
      ws.tasks = tasks->hooks();
    }
    ws.max_chains = 4000;
    world = MakeWorld(ws);
    const ChainArchetypeSettings strand = Strand(8, 0.05f, {0, -1, 0});
    const ChainArchetypeId a = world->BuildChainArchetype(strand).value();
    for (int i = 0; i < 6000; ++i) {
      chains.push_back(std::make_unique<HostChain>(strand, Vec3{0.3f * static_cast<float>(i % 80), 1.5f,
                                                                0.3f * static_cast<float>(i / 80)}));
      EXPECT_TRUE(world->BindChain(chains.back()->Binding(a)).ok());
    }
    EXPECT_EQ(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
    RagdollSettings limb;
    for (int j = 0; j < 3; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * static_cast<float>(j), 0};
      p.joint.anchor = {0, 1.15f - 0.3f * static_cast<float>(j), 0};
      limb.parts.push_back(p);
    }
    const RagdollArchetypeId r = world->BuildRagdollArchetype(limb).value();
    limbs.assign(30, std::vector<Transform>(3));
    for (int i = 0; i < 30; ++i) {
      RagdollBinding b;
      b.archetype = r;
      b.placement.translation = {0.2f * static_cast<float>(i % 3), 0.5f + 0.4f * static_cast<float>(i), 0};
      b.output_parts = limbs[i];
      EXPECT_TRUE(world->BindRagdoll(b).ok());
    }
    joints.resize(200);
    offsets.assign(200, Transform{{0, -0.3f, 0}, {}, {1, 1, 1}});
    for (int i = 0; i < 200; ++i) {
      joints[i].translation = {static_cast<float>(i % 20), 1, static_cast<float>(i / 20)};
      PendulumBinding b;
      b.joint_world = &joints[i];
      b.accessory_offset = &offsets[i];
      EXPECT_TRUE(world->BindPendulum(b).ok());
    }
  }
  void Animate(int frame) {
    const float t = static_cast<float>(frame) / 60.0f;
    for (std::size_t i = 0; i < chains.size(); ++i) chains[i]->root_parent.translation.y = 1.5f + 0.1f * std::sin(3 * t + i);
    for (std::size_t i = 0; i < joints.size(); ++i) joints[i].rotation = AxisAngle(Vec3{0, 0, 1}, std::sin(4 * t + i));
  }
};

struct Zone {
  std::string name;
  double begin = 0, end = 0;
  int tid = 0;
};

TEST(Profiler, ATraceHasEveryPhaseInsideItsFrameWithFrameStatsDurations) {
  BusyWorld w(2);
  const std::string path = ::testing::TempDir() + "tendon_profiler_trace.json";
  TraceWriter trace;
  ASSERT_TRUE(trace.Open(path));
  w.world->SetTraceWriter(&trace);
  constexpr int kFrames = 40;
  std::map<std::string, double> stats_us;
  for (int f = 0; f < kFrames; ++f) {
    w.Animate(f);
    const FrameStats& s = w.world->Step(1.0f / 60.0f);
    stats_us["gather"] += s.times.gather_ms * 1e3;
    stats_us["budget"] += s.times.budget_ms * 1e3;
    stats_us["ragdolls"] += s.times.ragdoll_ms * 1e3;
    stats_us["pose"] += s.times.pose_ms * 1e3;
    stats_us["solve"] += s.times.solve_ms * 1e3;
    stats_us["writeback"] += s.times.writeback_ms * 1e3;
    stats_us["pendulums"] += s.times.pendulum_ms * 1e3;
    stats_us["frame"] += s.times.total_ms * 1e3;
  }
  w.world->SetTraceWriter(nullptr);
  trace.Close();

  std::ifstream in(path);
  const nlohmann::json events = nlohmann::json::parse(in);  // throws (and fails) on bad JSON
  ASSERT_TRUE(events.is_array());
  // Every track's B / E events nest, name for name.
  std::map<int, std::vector<Zone>> open;
  std::vector<Zone> zones;
  std::map<std::string, int> counters;
  std::map<int, std::string> track_names;
  int frame_marks = 0;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "M") {
      track_names[e.at("tid")] = e.at("args").at("name");
    } else if (ph == "B") {
      open[e.at("tid")].push_back(Zone{e.at("name"), e.at("ts"), 0, e.at("tid")});
    } else if (ph == "E") {
      auto& stack = open[e.at("tid")];
      ASSERT_FALSE(stack.empty()) << "an end without a begin on track " << e.at("tid");
      Zone z = stack.back();
      stack.pop_back();
      ASSERT_EQ(z.name, e.at("name").get<std::string>()) << "zones must nest on a track";
      z.end = e.at("ts");
      ASSERT_GE(z.end, z.begin);
      zones.push_back(z);
    } else if (ph == "C") {
      ++counters[e.at("name")];
    } else if (ph == "i") {
      ++frame_marks;
    }
  }
  for (const auto& [tid, stack] : open) EXPECT_TRUE(stack.empty()) << "track " << tid << " left a zone open";
  EXPECT_EQ(track_names[1], "tendon caller");
  int worker_tracks = 0;
  for (const auto& [tid, name] : track_names) worker_tracks += name.rfind("tendon worker", 0) == 0 ? 1 : 0;
  EXPECT_GE(worker_tracks, 1) << "tasks run on the workers' tracks";
  EXPECT_EQ(frame_marks, kFrames);
  for (const char* c : {"chains.simulated", "chains.sleeping", "chains.culled_by_budget", "chains.lane_occupancy",
                        "ragdolls.simulated", "ragdolls.sleeping", "ragdolls.pairs", "ragdolls.islands",
                        "characters.active", "pendulums.simulated"}) {
    EXPECT_EQ(counters[c], kFrames) << c;
  }
  // Every phase of every frame lies inside that frame; durations add up to FrameStats'.
  std::vector<Zone> frames;
  for (const Zone& z : zones)
    if (z.name == "frame") frames.push_back(z);
  ASSERT_EQ(frames.size(), static_cast<std::size_t>(kFrames));
  std::map<std::string, double> trace_us;
  std::map<std::string, int> inside;
  for (const Zone& z : zones) {
    trace_us[z.name] += z.end - z.begin;
    for (const Zone& f : frames) {
      if (z.begin >= f.begin && z.end <= f.end) {
        ++inside[z.name];
        break;
      }
    }
  }
  for (const char* phase : {"gather", "budget", "ragdolls", "pose", "solve", "writeback", "pendulums",
                            "ragdolls.broad_phase", "ragdolls.islands", "ragdolls.writeback",
                            "characters.before", "characters.after"}) {
    EXPECT_GE(inside[phase], kFrames) << phase << ": a zone inside every frame";
  }
  // A frame's substeps are one zone per substep, or one for them all where the frame's
  // blocks fall into domains that each run every substep in one task.
  EXPECT_GE(inside["ragdolls.substep"] + inside["ragdolls.domains"], kFrames) << "the substeps' zones in every frame";
  EXPECT_GT(inside["ragdolls.pairs"], 0) << "the limbs pile up: frames with pairs have their zone";
  for (const auto& [name, count] : inside) {
    int total = 0;
    for (const Zone& z : zones) total += z.name == name ? 1 : 0;
    EXPECT_EQ(count, total) << name << ": every zone lies inside a frame";
  }
  EXPECT_GT(inside["chains.solve/task"], 0) << "the tasks are zones too";
  // FrameStats' phase time also covers writing the phase zone's own begin and end events
  // (the trace's zone runs from one timestamp to the other): a few us a frame, which a
  // short phase such as the pendulums' (about 30 us a frame) would put past 5% on a
  // loaded machine. CI once saw the pendulums' two figures 557 us apart over 40 frames
  // (8% of 6.8 ms). Where that time went is not proven: a likely cause is the trace
  // file's buffer flushed inside a phase's time but outside its zone. 15% holds both; a
  // zone around the wrong code is off by far more.
  for (const auto& [phase, us] : stats_us) {
    EXPECT_NEAR(trace_us[phase], us, 0.15 * us + 3.0 * kFrames) << phase << ": the trace's " << trace_us[phase]
                                                                 << " us against FrameStats' " << us << " us";
  }
  std::remove(path.c_str());
}

// Hooks that count, per thread: zones balance and nest on every thread, worker indices are
// the caller's or below the worker count, and each frame brings its counters and a mark.
struct CountingHooks {
  std::atomic<int> begins{0}, ends{0}, counters{0}, marks{0}, bad_worker{0}, unbalanced{0};
  std::atomic<uint64_t> last_frame{0};
  int32_t workers = 1;
  static thread_local int depth;
  ProfilerHooks hooks() {
    ProfilerHooks h{};
    h.zone_begin = [](const char*, uint32_t, uint32_t worker, void* self) {
      auto* c = static_cast<CountingHooks*>(self);
      ++c->begins;
      ++depth;
      if (worker != kTendonCallerThread && worker >= static_cast<uint32_t>(c->workers)) ++c->bad_worker;
    };
    h.zone_end = [](const char*, uint32_t, void* self) {
      auto* c = static_cast<CountingHooks*>(self);
      ++c->ends;
      if (--depth < 0) ++c->unbalanced;
    };
    h.counter = [](const char*, double value, void* self) {
      auto* c = static_cast<CountingHooks*>(self);
      ++c->counters;
      if (!std::isfinite(value)) ++c->bad_worker;
    };
    h.frame_mark = [](uint64_t frame, void* self) {
      auto* c = static_cast<CountingHooks*>(self);
      ++c->marks;
      c->last_frame = frame;
    };
    h.user_context = this;
    return h;
  }
};
thread_local int CountingHooks::depth = 0;

TEST(Profiler, HooksSeeBalancedZonesOnEveryWorkerAndOneMarkPerFrame) {
  for (bool split : {false, true}) {
    BusyWorld w(3);
    CountingHooks counting;
    counting.workers = 3;
    ASSERT_EQ(w.world->SetProfilerHooks(counting.hooks()).code, ErrorCode::kNone);
    for (int f = 0; f < 10; ++f) {
      w.Animate(f);
      if (split) {
        ASSERT_TRUE(w.world->BeginStep(1.0f / 60.0f));
        w.world->FinishStep();
      } else {
        w.world->Step(1.0f / 60.0f);
      }
    }
    EXPECT_GT(counting.begins.load(), 10 * 10);
    EXPECT_EQ(counting.begins.load(), counting.ends.load());
    EXPECT_EQ(counting.unbalanced.load(), 0);
    EXPECT_EQ(counting.bad_worker.load(), 0);
    EXPECT_EQ(counting.marks.load(), 10);
    EXPECT_EQ(counting.last_frame.load(), 10u);
    EXPECT_EQ(counting.counters.load() % 10, 0);
    EXPECT_GE(counting.counters.load(), 10 * 10);
    // Detached: nothing more arrives.
    ASSERT_EQ(w.world->SetProfilerHooks(ProfilerHooks{}).code, ErrorCode::kNone);
    const int before = counting.begins.load();
    w.world->Step(1.0f / 60.0f);
    EXPECT_EQ(counting.begins.load(), before);
  }
}

TEST(Profiler, WithoutPhaseTimingEveryTimeIsZeroZonesStillRunAndNothingSimulatedMoves) {
  BusyWorld timed(1), untimed(1, /*time_phases=*/false);
  CountingHooks counting;
  ASSERT_EQ(untimed.world->SetProfilerHooks(counting.hooks()).code, ErrorCode::kNone);
  double timed_total = 0;
  for (int f = 0; f < 20; ++f) {
    timed.Animate(f);
    untimed.Animate(f);
    timed_total += timed.world->Step(1.0f / 60.0f).times.total_ms;
    // From frame 10 on without hooks.
    if (f == 10) {
      ASSERT_EQ(untimed.world->SetProfilerHooks(ProfilerHooks{}).code, ErrorCode::kNone);
    }
    const PhaseTimes t = untimed.world->Step(1.0f / 60.0f).times;
    for (double ms : {t.gather_ms, t.budget_ms, t.pose_ms, t.solve_ms, t.writeback_ms, t.pendulum_ms, t.ragdoll_ms,
                      t.total_ms}) {
      EXPECT_EQ(ms, 0.0) << "frame " << f;
    }
    ASSERT_EQ(timed.world->StateHash(), untimed.world->StateHash()) << "frame " << f;
  }
  EXPECT_GT(timed_total, 0.0);
  EXPECT_GT(counting.begins.load(), 10 * 5);
  EXPECT_EQ(counting.begins.load(), counting.ends.load());
  EXPECT_EQ(counting.marks.load(), 10);  // frames 0-9 (the hooks go before frame 10 steps)
}

// The phases chain their counter reads inside the frame's: the gather starts at the
// frame's own first read when the opening is only the clock and the stats (chains alone,
// past the first 64 frames' calibrations), at its own read otherwise (a host wind
// sampler). Either way every phase is a part of the frame: none negative, and together no
// longer than total_ms.
TEST(Profiler, EveryPhaseTimeLiesWithinTheFramesTotal) {
  for (bool sampler : {false, true}) {
    WorldSettings ws;
    auto world = MakeWorld(ws);
    if (sampler) world->SetWindSampler(WindSampler{[](double, void*) { return Vec3{1, 0, 0}; }, nullptr});
    const ChainArchetypeSettings strand = Strand(6, 0.05f, {0, -1, 0});
    const ChainArchetypeId a = world->BuildChainArchetype(strand).value();
    std::vector<std::unique_ptr<HostChain>> chains;
    for (int i = 0; i < 12; ++i) {
      chains.push_back(std::make_unique<HostChain>(strand, Vec3{0.3f * static_cast<float>(i), 1.5f, 0}));
      ASSERT_TRUE(world->BindChain(chains.back()->Binding(a)).ok());
    }
    int gathered = 0;
    for (int f = 0; f < 200; ++f) {
      for (auto& c : chains) c->root_parent.translation.y = 1.5f + 0.1f * std::sin(0.2f * static_cast<float>(f));
      const PhaseTimes t = world->Step(1.0f / 60.0f).times;
      double parts = 0;
      for (double ms : {t.gather_ms, t.budget_ms, t.pose_ms, t.solve_ms, t.writeback_ms, t.pendulum_ms, t.ragdoll_ms}) {
        EXPECT_GE(ms, 0.0) << "frame " << f;
        parts += ms;
      }
      EXPECT_LE(parts, t.total_ms * (1 + 1e-9)) << "frame " << f << (sampler ? ", wind sampler" : "");
      gathered += t.gather_ms > 0 ? 1 : 0;
    }
    EXPECT_GT(gathered, 150) << (sampler ? "wind sampler" : "chains alone");
  }
}

TEST(Profiler, AFrameBudgetWithoutPhaseTimingIsRefusedAtCreate) {
  WorldSettings ws;
  ws.frame_budget_ms = 2.0f;
  ws.time_phases = false;
  const auto created = World::Create(ws);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().code, ErrorCode::kOutOfRange);
  EXPECT_EQ(created.error().field, "frame_budget_ms");
  ws.frame_budget_ms = 0.0f;  // no budget: fine
  EXPECT_TRUE(World::Create(ws).ok());
}

TEST(Profiler, HalfSetZoneHooksAreRefused) {
  auto w = MakeWorld();
  ProfilerHooks h{};
  h.zone_begin = [](const char*, uint32_t, uint32_t, void*) {};
  const Error e = w->SetProfilerHooks(h);
  EXPECT_EQ(e.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(e.field, "profiler");
  // Counters and marks alone are fine (no zones).
  ProfilerHooks marks_only{};
  marks_only.frame_mark = [](uint64_t, void*) {};
  EXPECT_EQ(w->SetProfilerHooks(marks_only).code, ErrorCode::kNone);
  w->Step(1.0f / 60.0f);
}

}  // namespace
}  // namespace tendon::test
