// kernel/world/world.cpp: the World, the facade over Tendon's systems, and the frame.
//
// The World owns one system per concern and composes them; none of them knows of the
// World. Below them all sits kernel/core (the parallel-for over the host's task hooks,
// denormal flushing, rotation helpers, the frame's counters).
//   StaticWorld      kernel/collide/static_world.h   what ragdolls collide with; rays
//   ChainSystem      kernel/chains/chain_system.h     verlet chains in lanes by topology
//   PendulumSystem   kernel/pendulums/pendulum_system.h  accessory pendulums
//   RagdollSystem    kernel/ragdolls/ragdoll_system.h    ragdoll lanes by archetype, the
//                    ragdoll frame, and the systems it composes: Sleep, BroadPhase,
//                    Islands, PairContacts (kernel/rigid, kernel/contacts)
//   CharacterSystem  kernel/character/character_system.h  characters, above ragdolls
// Step below is the frame's phase order; every phase says in its own header what it reads,
// writes and splits over threads. Results are the same for any worker count, and Step
// allocates nothing: every system sizes itself at build and bind time.
#include "tendon/world.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include "kernel/chains/chain_kernels.h"
#include "kernel/chains/chain_system.h"
#include "kernel/character/character_system.h"
#include "kernel/collide/static_world.h"
#include "kernel/core/fpu.h"
#include "kernel/core/frame_counters.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/profile.h"
#include "kernel/core/tick_clock.h"
#include "kernel/core/validation.h"
#include "kernel/pendulums/pendulum_system.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/rigid_kernels.h"
#include "kernel/world/fixed_clock.h"
#include "kernel/world/frame_budget.h"
#include "kernel/world/wind.h"
#include "kernel/world/world_access.h"
#include "tendon/device_profile.h"
#include "tendon/trace.h"

namespace tendon {

using detail::CheckPositive;
using detail::Fail;

constexpr int32_t kMaxWorkers = 1024;  // TaskHooks::worker_count

namespace {

// What a call from inside Step gets (see World::Step).
Error Reentrant() {
  return Fail(ErrorCode::kReentrant, -1, "world",
              "a World call from inside Step (a host callback) would change the world mid-frame: refused");
}

// Times a run of phases on one thread (CPU ticks: see tick_clock.h), each a zone in the
// host's profiler when it has one. A phase's time runs from the end of the one before it
// in the run, so n phases cost n + 1 counter reads (a read is 11 ns on this machine kind,
// and a lone avatar's Step is under 1 us). A phase with no work (no bodies, no pendulums,
// an empty chain pass) is not run when there is no profiler: it reads no counter and
// records 0. With a profiler it runs, so that every phase has its zone.
class PhaseRun {
 public:
  // `chain`, when not null, is the tick the last timed phase on this thread ended at: the
  // run's first phase starts there instead of reading the counter, and the run's last tick
  // goes back there. A counter read costs about 10 ns on this project's VMs (rdtsc), and a
  // lone avatar's whole Step is about 500 ns: the serial Step without profiler zones chains
  // its phases, so that what lies between them (a few dozen instructions) counts toward
  // the next one. With zones, each phase starts at its own tick, after its zone's begin.
  // `timed` false (WorldSettings::time_phases): no counter is read and every phase records 0.
  PhaseRun(const detail::TickClock& clock, const ProfilerHooks* profiler, const detail::PhaseClock* test_clock,
           uint32_t thread, bool timed, uint64_t* chain = nullptr)
      : clock_(clock),
        profiler_(profiler),
        test_clock_(test_clock),
        thread_(thread),
        timed_(timed),
        chain_(profiler == nullptr ? chain : nullptr),
        last_(chain_ != nullptr ? *chain_ : 0) {}
  ~PhaseRun() {
    if (chain_ != nullptr) *chain_ = last_;
  }
  PhaseRun(const PhaseRun&) = delete;
  PhaseRun& operator=(const PhaseRun&) = delete;

  // `items()` is the phase's work for a test's clock (world_access.h), asked after it ran.
  template <class F, class Items>
  void Phase(double& ms, detail::FramePhase id, const char* name, uint32_t color, bool has_work, F&& phase,
             Items&& items) {
    if (test_clock_ != nullptr) {
      detail::ProfileZone zone(profiler_, name, color, thread_);
      phase();
      ms = test_clock_->ms(id, items(), test_clock_->user);
      return;
    }
    if (!has_work && profiler_ == nullptr) {
      ms = 0;  // nothing to step: not even called (a lone avatar's Step ran five such phases)
      return;
    }
    if (!timed_) {
      detail::ProfileZone zone(profiler_, name, color, thread_);
      phase();
      ms = 0;
      return;
    }
    if (last_ == 0) last_ = detail::Ticks();
    {
      detail::ProfileZone zone(profiler_, name, color, thread_);
      phase();
    }
    const uint64_t now = detail::Ticks();
    ms = clock_.Ms(now > last_ ? now - last_ : 0);
    last_ = now;
  }

 private:
  const detail::TickClock& clock_;
  const ProfilerHooks* profiler_;
  const detail::PhaseClock* test_clock_;  // null: the CPU counter
  uint32_t thread_;
  bool timed_;
  uint64_t* chain_;
  uint64_t last_;  // the last phase's end; 0 until the run's first timed phase (unchained)
};

detail::ChainSystemSettings ChainSettingsOf(const WorldSettings& s, Isa isa) {
  return {s.tasks, &detail::ChainKernelsFor(isa), s.max_chains, s.max_distance, s.gravity, s.teleport_distance,
          s.teleport_angle_degrees};
}

detail::RagdollSystemSettings RagdollSettingsOf(const WorldSettings& s) {
  return {s.tasks, s.gravity, s.ragdoll_substeps, s.ragdoll_iterations, s.ragdoll_contact_angular_damping,
          s.ragdoll_max_push_speed, s.ragdoll_sleep_speed, s.ragdoll_sleep_seconds, s.ragdoll_settle_damping};
}

}  // namespace

struct World::Impl {
  WorldSettings settings;
  Isa isa;
  detail::FixedClock clock;
  Vec3 camera{};
  WindSampler wind_sampler{};
  SimulatePredicate predicate{};
  ProfilerHooks profiler_hooks{};           // as the host set them
  const ProfilerHooks* profiler = nullptr;  // &profiler_hooks when they have zones, else null
  detail::TickClock ticks;  // the phases' clock; its creation is the trace's time zero
  detail::PhaseClock phase_clock{};  // a test's, in place of `ticks` (world_access.h)
  detail::FrameBudget frame_budget{settings.frame_budget_ms, settings.max_chains, settings.ragdoll_substeps,
                                   settings.budget_min_ragdoll_substeps};  // WorldSettings::frame_budget_ms
  FrameStats stats{};
  FrameStats previous_stats{};  // what LastStats and a refused Step return while a frame is in flight
  Vec3 frame_wind{};
  bool stepping = false;           // inside Step: calls that change the world are refused
  bool dependencies_dirty = true;  // binds changed since chains were last sorted into passes
  // The frame in flight between OpenFrame and CloseFrame (Step, or BeginStep .. FinishStep).
  struct Frame {
    uint64_t t0 = 0;
    uint64_t last_tick = 0;  // the serial phases' chained tick (PhaseRun), from the gather's start
    float dt = 0, step = 0, vrm_dt = 0;
    int32_t substeps = 0;
    bool rejected = false;
    void* job = nullptr;    // the host's handle for the frame's two lanes (BeginStep)
    bool in_flight = false;  // BeginStep returned; FinishStep has not yet run
    bool overlapped = false;  // this frame came through BeginStep (its wall time holds the host's work)
    PhaseTimes lane_times[2]{};
  } frame_state;
  int32_t pending_bad_input = 0;   // non-finite host input between Steps (the camera)

  detail::StaticWorld static_world;
  detail::ChainSystem chains;
  detail::PendulumSystem pendulums;
  detail::RagdollSystem ragdolls;
  detail::CharacterSystem characters;  // above ragdolls: drives some of them

  Impl(const WorldSettings& s, Isa resolved)
      : settings(s),
        isa(resolved),
        clock(s.fixed_hz, s.max_substeps),
        chains(ChainSettingsOf(s, resolved)),
        pendulums({s.tasks, s.gravity, s.pendulum_max_distance, s.teleport_distance}),
        ragdolls(RagdollSettingsOf(s), detail::RigidKernelsFor(resolved)),
        characters(ragdolls) {
    characters.SetMaxActive(s.max_active_characters);
  }

  // The frame. Its serial start (OpenFrame), two lanes, and its serial end (CloseFrame):
  //   lane 0: characters before physics, the ragdoll substeps, characters after physics,
  //           then the chains that hang from them (a chain one of whose host buffers a
  //           ragdoll or character also reads or writes: ChainSystem::MarkDependents);
  //   lane 1: every other chain.
  // Step runs lane 0 then lane 1; BeginStep hands both to the host's job system at once.
  // Chains' blocks never share memory, so both orders give the same bits.
  const FrameStats& Step(float dt) {
    // From a callback inside Step: the frame in progress's stats (same thread); mid-frame
    // (BeginStep .. FinishStep) the last whole frame's: the lanes are writing these.
    if (stepping) return frame_state.in_flight ? previous_stats : stats;
    detail::DenormalGuard guard;
    {
      detail::ProfileZone zone(profiler, "frame", detail::kFrameColor, kTendonCallerThread);
      frame_state.overlapped = false;
      if (OpenFrame(dt)) {
        RunLane(0, kTendonCallerThread);
        RunLane(1, kTendonCallerThread);
      }
      CloseFrame();
    }
    return MarkFrame();
  }

  bool BeginStep(float dt) {
    if (stepping) return false;  // a frame in flight, or a callback inside Step
    detail::DenormalGuard guard;
    detail::ProfileZone zone(profiler, "begin_step", detail::kFrameColor, kTendonCallerThread);
    frame_state.overlapped = true;
    if (OpenFrame(dt)) {
      if (settings.tasks.enqueue != nullptr) {
        frame_state.job = settings.tasks.enqueue(&LaneTask, 2, 1, this, settings.tasks.user_context);
      } else {
        RunLane(0, kTendonCallerThread);
        RunLane(1, kTendonCallerThread);
      }
    }
    frame_state.in_flight = true;
    return true;
  }

  const FrameStats& FinishStep() {
    if (!frame_state.in_flight) return stats;
    detail::DenormalGuard guard;
    {
      detail::ProfileZone zone(profiler, "finish_step", detail::kFrameColor, kTendonCallerThread);
      if (!frame_state.rejected && settings.tasks.enqueue != nullptr) {
        settings.tasks.finish(frame_state.job, settings.tasks.user_context);
        frame_state.job = nullptr;
      }
      frame_state.in_flight = false;
      CloseFrame();
    }
    return MarkFrame();
  }

  static void LaneTask(int32_t begin, int32_t end, uint32_t worker, void* context) {
    detail::DenormalGuard guard;  // MXCSR is per thread
    for (int32_t lane = begin; lane < end; ++lane) static_cast<Impl*>(context)->RunLane(lane, worker);
  }

  // The frame's counters and its mark, into the host's profiler (when it takes them).
  const FrameStats& MarkFrame() {
    const ProfilerHooks& p = profiler_hooks;
    if (p.counter != nullptr) {
      const struct {
        const char* name;
        double value;
      } counters[] = {
          {"chains.bound", static_cast<double>(stats.bound_chains)},
          {"chains.simulated", static_cast<double>(stats.simulated_chains)},
          {"chains.sleeping", static_cast<double>(stats.sleeping_chains)},
          {"chains.culled_by_distance", static_cast<double>(stats.culled_by_distance)},
          {"chains.culled_by_budget", static_cast<double>(stats.culled_by_budget)},
          {"chains.woken", static_cast<double>(stats.snapped_wake)},
          {"chains.lane_occupancy", static_cast<double>(stats.lane_occupancy)},
          {"chains.blocks", static_cast<double>(stats.chain_blocks)},
          {"pendulums.simulated", static_cast<double>(stats.simulated_pendulums)},
          {"ragdolls.bound", static_cast<double>(stats.bound_ragdolls)},
          {"ragdolls.simulated", static_cast<double>(stats.simulated_ragdolls)},
          {"ragdolls.sleeping", static_cast<double>(stats.sleeping_ragdolls)},
          {"ragdolls.frozen", static_cast<double>(stats.frozen_ragdolls)},
          {"ragdolls.pairs", static_cast<double>(stats.ragdoll_pairs)},
          {"ragdolls.islands", static_cast<double>(stats.ragdoll_islands)},
          {"characters.active", static_cast<double>(stats.active_characters)},
          {"snapped.teleport", static_cast<double>(stats.snapped_teleport)},
          {"snapped.bad_input", static_cast<double>(stats.snapped_bad_input)},
          {"reset.non_finite", static_cast<double>(stats.reset_non_finite)},
          {"budget.max_chains", static_cast<double>(stats.budget_max_chains)},
          {"budget.ragdoll_substeps", static_cast<double>(stats.budget_ragdoll_substeps)},
          {"budget.action", static_cast<double>(stats.budget_action)},
          {"budget.estimate_ms", static_cast<double>(stats.budget_estimate_ms)},
      };
      for (const auto& c : counters) p.counter(c.name, c.value, p.user_context);
    }
    if (p.frame_mark != nullptr) p.frame_mark(stats.frame, p.user_context);
    return stats;
  }

  // Clock, wind, and the chains' gather and budget (every chain, on the root frames as the
  // host left them before the frame: a chain hanging from a ragdolled bone is culled on
  // where that bone was at the end of the last frame). False when nothing steps.
  bool OpenFrame(float dt) {
    // The frame's time starts first: the debug build's buffer checks and the clock's
    // calibration are part of what a Step costs (and of its zone in a trace).
    frame_state.t0 = settings.time_phases ? detail::Ticks() : 0;
    if constexpr (detail::kDebugValidation) CheckHostBuffers();
    stepping = true;
    const uint64_t frame = stats.frame + 1;
    // Whether the frame's opening did more than the clock and the stats (below): then the
    // gather's time starts at its own read rather than at t0.
    bool heavy_opening = detail::kDebugValidation;
    if (settings.time_phases) heavy_opening |= ticks.Calibrate(frame);
    frame_state.lane_times[0] = frame_state.lane_times[1] = PhaseTimes{};
    if (frame_state.overlapped) previous_stats = stats;  // what LastStats answers while the frame is in flight
    stats = FrameStats{};
    stats.frame = frame;
    stats.snapped_bad_input = pending_bad_input;
    pending_bad_input = 0;
    stats.bound_chains = chains.BoundCount();
    stats.bound_pendulums = pendulums.BoundCount();
    if (frame_budget.enabled()) {
      const int32_t cap = frame_budget.chain_cap();
      chains.SetFrameChainCap(cap);
      ragdolls.SetFrameSubsteps(frame_budget.ragdoll_substeps());
      stats.budget_max_chains = cap == INT32_MAX ? -1 : cap;
      stats.budget_ragdoll_substeps = frame_budget.ragdoll_substeps();
    }
    // 1. The clock: whole fixed substeps, at most max_substeps (the rest is dropped).
    const detail::FixedClock::Tick tick = clock.Advance(dt);
    stats.dt_rejected = tick.rejected;
    stats.dropped_seconds = static_cast<float>(tick.dropped_seconds);
    frame_state.rejected = tick.rejected;
    if (tick.rejected) {
      // Nothing steps and nothing is written; the host's buffers keep the last frame.
      stats.sleeping_chains = stats.bound_chains;
      return false;
    }
    stats.substeps = tick.substeps;
    stats.interpolation_alpha = settings.render_interpolation ? clock.Alpha() : 1.0f;
    frame_state.dt = dt;
    frame_state.substeps = tick.substeps;
    frame_state.step = static_cast<float>(clock.step());
    // kVrm chains take one step of the frame's dt, hitch-clamped as the fixed clock is.
    frame_state.vrm_dt = std::min(dt, frame_state.step * static_cast<float>(settings.max_substeps));
    if (tick.substeps > 0) {
      heavy_opening |= wind_sampler.sample != nullptr;  // the host's callback
      SampleWind();
      if (ragdolls.LiveCount() > 0) {
        heavy_opening = true;
        ragdolls.PackAwakeLanes(kTendonCallerThread);
      }
    }
    // 2. Which chains wait for the ragdoll phase (only after binds changed), then the
    // chains' selection.
    if (dependencies_dirty) {
      heavy_opening = true;
      chains.MarkDependents(&OverlapsBodies, this);
      dependencies_dirty = false;
    }
    // The gather starts here, and the phases after it chain from its reads. Where the
    // opening was only the clock and the stats (a few dozen instructions), the gather's
    // time starts at t0 and one counter read is saved (a lone avatar's Step went from 0.410
    // to 0.394 us, 6 of 6 alternated pairs); after a calibration, a host wind sampler, the
    // ragdolls' lane packing or the dependency sort, it starts at its own read.
    frame_state.last_tick = heavy_opening ? 0 : frame_state.t0;
    PhaseRun run(ticks, profiler, test_clock(), kTendonCallerThread, settings.time_phases, &frame_state.last_tick);
    const auto bound_chains = [&] { return stats.bound_chains; };
    run.Phase(stats.times.gather_ms, detail::FramePhase::kGather, "gather", detail::kChainColor, true,
              [&] { chains.Gather(camera, predicate); }, bound_chains);
    run.Phase(stats.times.budget_ms, detail::FramePhase::kBudget, "budget", detail::kChainColor, true,
              [&] { chains.Budget(predicate, stats); }, bound_chains);
    chains.BeginFrame(tick.substeps, frame_state.step, frame_wind, frame_state.vrm_dt);
    return true;
  }

  static bool OverlapsBodies(const void* data, std::size_t bytes, const void* context) {
    const auto* impl = static_cast<const Impl*>(context);
    return impl->ragdolls.OverlapsHostBuffers(data, bytes) || impl->characters.OverlapsHostBuffers(data, bytes);
  }

  // One lane of the frame (see Step), on `thread` (kTendonCallerThread, or the worker that
  // runs it under BeginStep). Each writes its own phase times.
  void RunLane(int32_t lane, uint32_t thread) {
    PhaseTimes& times = frame_state.lane_times[lane];
    detail::ProfileZone lane_zone(thread == kTendonCallerThread ? nullptr : profiler, lane == 0 ? "lane 0" : "lane 1",
                             detail::kFrameColor, thread);
    // Step runs both lanes on the caller, one after the other, right after OpenFrame.
    PhaseRun run(ticks, profiler, test_clock(), thread, settings.time_phases,
                 frame_state.overlapped ? nullptr : &frame_state.last_tick);
    if (lane == 0) {
      const bool bodies = ragdolls.LiveCount() > 0 || characters.BoundCount() > 0;
      run.Phase(
          times.ragdoll_ms, detail::FramePhase::kRagdolls, "ragdolls", detail::kRagdollColor, bodies,
          [&] {
            {
              detail::ProfileZone before(profiler, "characters.before", detail::kCharacterColor, thread);
              characters.BeforePhysics(frame_state.dt, frame_state.step * static_cast<float>(frame_state.substeps),
                                       clock.time(), settings.max_active_characters);
            }
            ragdolls.Step(frame_state.substeps, clock.step(), stats.interpolation_alpha, static_world, stats, thread);
            detail::ProfileZone after(profiler, "characters.after", detail::kCharacterColor, thread);
            characters.AfterPhysics();
          },
          [&] { return stats.simulated_ragdolls * stats.ragdoll_substeps; });
    }
    const detail::ChainSystem::ChainPass& pass = chains.Pass(lane == 0 ? 1 : 0);
    const int32_t pass_chains = pass.end_selected - pass.first_selected;
    const bool chain_work = pass_chains > 0 || pass.end_work > pass.first_work;
    const auto items = [&] { return pass_chains; };
    run.Phase(times.pose_ms, detail::FramePhase::kPose, "pose", detail::kChainColor, chain_work,
              [&] { chains.Pose(pass); }, items);
    run.Phase(times.solve_ms, detail::FramePhase::kSolve, "solve", detail::kChainColor, chain_work,
              [&] { chains.Solve(pass); }, items);
    run.Phase(times.writeback_ms, detail::FramePhase::kWriteback, "writeback", detail::kChainColor, chain_work,
              [&] { chains.Writeback(pass, stats.interpolation_alpha); }, items);
  }

  const detail::PhaseClock* test_clock() const { return phase_clock.ms != nullptr ? &phase_clock : nullptr; }

  // Counters, pendulums, stats and trace.
  const FrameStats& CloseFrame() {
    if (!frame_state.rejected) {
      chains.EndFrame();
      chains.AddCounters(stats);
      stats.bound_characters = characters.BoundCount();
      stats.active_characters = characters.ActiveCount();
      stats.dropped_character_events = characters.TakeDroppedEvents();
      // (Counted by BeforePhysics, which runs only when there are bodies.)
      if (characters.BoundCount() > 0) stats.snapped_bad_input += characters.BadInputs();
      const PhaseTimes (&lt)[2] = frame_state.lane_times;
      stats.times.ragdoll_ms = lt[0].ragdoll_ms;
      stats.times.pose_ms = lt[0].pose_ms + lt[1].pose_ms;
      stats.times.solve_ms = lt[0].solve_ms + lt[1].solve_ms;
      stats.times.writeback_ms = lt[0].writeback_ms + lt[1].writeback_ms;
      // 4. Pendulums.
      PhaseRun run(ticks, profiler, test_clock(), kTendonCallerThread, settings.time_phases,
                   frame_state.overlapped ? nullptr : &frame_state.last_tick);
      run.Phase(
          stats.times.pendulum_ms, detail::FramePhase::kPendulums, "pendulums", detail::kPendulumColor,
          pendulums.BoundCount() > 0,
          [&] {
            pendulums.Step(frame_state.substeps, frame_state.step, stats.interpolation_alpha, camera, frame_wind,
                           stats);
          },
          [&] { return stats.simulated_pendulums; });
      // 5. Stats and trace.
      stats.simulated_instance_substeps =
          static_cast<int64_t>(stats.simulated_chains + stats.simulated_pendulums) * frame_state.substeps;
    }
    return Finish(frame_state.t0);
  }

  // Debug validation: every bound instance's host buffers are still the host's.
  void CheckHostBuffers() const {
    chains.CheckHostBuffers();
    pendulums.CheckHostBuffers();
    ragdolls.CheckHostBuffers();
    characters.CheckHostBuffers();
  }

  // The frame's wind: the host's sampler, or the ambient wind's gusts; never non-finite.
  void SampleWind() {
    const Vec3 ambient = settings.ambient_wind;
    const bool calm = ambient.x == 0.0f && ambient.y == 0.0f && ambient.z == 0.0f;  // no gust to scale
    frame_wind = wind_sampler.sample != nullptr ? wind_sampler.sample(clock.time(), wind_sampler.user)
                 : calm                         ? Vec3{}
                                                : ambient * detail::GustFactor(settings.wind_seed, clock.time());
    if (!IsFinite(frame_wind)) {
      frame_wind = Vec3{};
      ++stats.snapped_bad_input;
    }
  }

  const FrameStats& Finish(uint64_t t0) {
    const PhaseTimes& t = stats.times;
    stats.times.total_ms = test_clock() != nullptr ? t.gather_ms + t.budget_ms + t.ragdoll_ms + t.pose_ms + t.solve_ms +
                                                         t.writeback_ms + t.pendulum_ms
                           : settings.time_phases ? ticks.Ms(detail::TicksSince(t0))
                                                  : 0.0;
    if (frame_budget.enabled()) {
      detail::FrameBudgetSample sample;
      // Tendon's own cost: under BeginStep the wall time to FinishStep includes the host's
      // work between the calls, so the budget sees the serial phases and the longer lane.
      const PhaseTimes (&lt)[2] = frame_state.lane_times;
      const double lanes = std::max(lt[0].ragdoll_ms + lt[0].pose_ms + lt[0].solve_ms + lt[0].writeback_ms,
                                    lt[1].pose_ms + lt[1].solve_ms + lt[1].writeback_ms);
      sample.total_ms = frame_state.overlapped ? t.gather_ms + t.budget_ms + lanes + t.pendulum_ms : t.total_ms;
      sample.chain_ms = t.pose_ms + t.solve_ms + t.writeback_ms;
      sample.ragdoll_ms = t.ragdoll_ms;
      sample.simulated_chains = stats.simulated_chains;
      sample.budget_culled_chains = stats.culled_by_budget;
      sample.simulated_ragdolls = stats.simulated_ragdolls;
      sample.substeps = stats.substeps;
      stats.budget_action = frame_budget.Observe(sample);
      stats.budget_estimate_ms = static_cast<float>(frame_budget.estimate_ms());
    }
    stepping = false;
    return stats;
  }
};

// ---- World: creation ----

World::World(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
World::~World() {
  if (impl_ != nullptr && impl_->frame_state.in_flight) impl_->FinishStep();  // its tasks use the World
}

namespace {

// Every profiled setting still at its default takes the profile's value.
Result<WorldSettings> ApplyDeviceProfile(WorldSettings s) {
  s.from_device_profile = 0;
  const DeviceProfile* p = s.device_profile;
  s.device_profile = nullptr;
  if (p == nullptr) return s;
  if (Error e = ValidateDeviceProfile(*p); e.code != ErrorCode::kNone) {
    e.field = "device_profile." + e.field;
    return e;
  }
  const WorldSettings defaults{};
  // A setting still at its default takes the profile's value, and says so.
  auto fill = [&](auto& setting, auto default_value, auto profile_value, ProfiledSetting bit) {
    if (setting != default_value) return;
    setting = profile_value;
    s.from_device_profile |= bit;
  };
  fill(s.max_chains, defaults.max_chains, p->max_chains, kProfiledMaxChains);
  fill(s.max_distance, defaults.max_distance, p->max_distance, kProfiledMaxDistance);
  fill(s.max_active_characters, defaults.max_active_characters, p->max_active_characters,
       kProfiledMaxActiveCharacters);
  fill(s.ragdoll_substeps, defaults.ragdoll_substeps, p->ragdoll_substeps, kProfiledRagdollSubsteps);
  fill(s.fixed_hz, defaults.fixed_hz, p->fixed_hz, kProfiledFixedHz);
  // The measured best instruction set, unless the environment picks one (ResolveIsa's
  // rule) or this CPU cannot run it (a profile from another machine).
  if (detail::EnvironmentIsa() == Isa::kAuto && IsIsaSupported(p->best_isa))
    fill(s.isa, defaults.isa, p->best_isa, kProfiledIsa);
  return s;
}

}  // namespace

Result<std::unique_ptr<World>> World::Create(const WorldSettings& host_settings) {
  auto applied = ApplyDeviceProfile(host_settings);
  if (!applied.ok()) return applied.error();
  const WorldSettings& s = applied.value();
  if (!IsFinite(s.gravity)) return Fail(ErrorCode::kNotFinite, -1, "gravity", "gravity is not finite");
  if (!IsFinite(s.ambient_wind)) return Fail(ErrorCode::kNotFinite, -1, "ambient_wind", "ambient_wind is not finite");
  if (!(s.fixed_hz >= 10.0f && s.fixed_hz <= 1000.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "fixed_hz", "fixed_hz must be within [10, 1000]");
  if (s.max_substeps < 1 || s.max_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "max_substeps", "max_substeps must be within [1, 64]");
  if (Error e = CheckPositive(s.max_distance, -1, "max_distance", true); e.code != ErrorCode::kNone) return e;
  if (Error e = CheckPositive(s.pendulum_max_distance, -1, "pendulum_max_distance", true); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPositive(s.teleport_distance, -1, "teleport_distance", true); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPositive(s.teleport_angle_degrees, -1, "teleport_angle_degrees", true);
      e.code != ErrorCode::kNone)
    return e;
  if (s.max_chains < 0) return Fail(ErrorCode::kOutOfRange, -1, "max_chains", "max_chains must be >= 0");
  if (s.ragdoll_substeps < 1 || s.ragdoll_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_substeps", "ragdoll_substeps must be within [1, 64]");
  if (!(s.frame_budget_ms >= 0) || !std::isfinite(s.frame_budget_ms))
    return Fail(ErrorCode::kOutOfRange, -1, "frame_budget_ms", "frame_budget_ms must be finite and >= 0 (0: no budget)");
  if (s.frame_budget_ms > 0 && !s.time_phases)
    return Fail(ErrorCode::kOutOfRange, -1, "frame_budget_ms",
                "frame_budget_ms steers by the phase times: it needs time_phases (or frame_budget_ms = 0)");
  if (s.budget_min_ragdoll_substeps < 1 || s.budget_min_ragdoll_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "budget_min_ragdoll_substeps",
                "budget_min_ragdoll_substeps must be within [1, 64]");
  if (!(s.ragdoll_sleep_speed >= 0) || !std::isfinite(s.ragdoll_sleep_speed))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_sleep_speed", "ragdoll_sleep_speed must be finite and >= 0");
  if (!(s.ragdoll_contact_angular_damping >= 0 && s.ragdoll_contact_angular_damping <= 1000))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_contact_angular_damping", "must be within [0, 1000]");
  if (!(s.ragdoll_max_push_speed > 0))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_max_push_speed", "must be > 0 m/s (infinity disables the bound)");
  if (!(s.ragdoll_sleep_seconds > 0) || !std::isfinite(s.ragdoll_sleep_seconds))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_sleep_seconds", "ragdoll_sleep_seconds must be positive");
  if (!(s.ragdoll_settle_damping >= 0.0f && s.ragdoll_settle_damping <= 100.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_settle_damping", "ragdoll_settle_damping must be within [0, 100] 1/s");
  if (s.ragdoll_iterations < 1 || s.ragdoll_iterations > 16)
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_iterations", "ragdoll_iterations must be within [1, 16]");
  if ((s.tasks.enqueue == nullptr) != (s.tasks.finish == nullptr))
    return Fail(ErrorCode::kOutOfRange, -1, "tasks", "tasks.enqueue and tasks.finish must both be set or both null");
  if (s.tasks.enqueue != nullptr && (s.tasks.worker_count < 1 || s.tasks.worker_count > kMaxWorkers))
    return Fail(ErrorCode::kOutOfRange, -1, "tasks.worker_count",
                "tasks.worker_count must be within [1, " + std::to_string(kMaxWorkers) + "]");
  if (s.max_active_characters < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "max_active_characters", "max_active_characters must be >= 0");
  const Isa isa = detail::ResolveIsa(s.isa);
  if (!IsIsaSupported(isa)) {
    return Fail(ErrorCode::kOutOfRange, -1, "isa",
                std::string("this CPU cannot run the ") + ToString(isa) + " kernels");
  }
  return std::unique_ptr<World>(new World(std::make_unique<Impl>(s, isa)));
}

// ---- the static world ----

Error World::BuildStaticWorld(const StaticWorldSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->static_world.Build(settings);
}
bool World::RaycastStatic(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  RaycastHit unwanted;
  return impl_->static_world.Raycast(origin, dir, max_distance, hit != nullptr ? hit : &unwanted);
}

// ---- chains and pendulums ----

Result<ChainArchetypeId> World::BuildChainArchetype(const ChainArchetypeSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->chains.BuildArchetype(settings);
}
int32_t World::ChainBoneCount(ChainArchetypeId id) const { return impl_->chains.BoneCount(id); }
Error World::RemoveChainArchetype(ChainArchetypeId id) {
  if (impl_->stepping) return Reentrant();
  return impl_->chains.RemoveArchetype(id);
}
Error World::RebindChain(ChainId id, const ChainBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->chains.Rebind(id, b);
}
Result<ChainId> World::BindChain(const ChainBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->chains.Bind(b);
}
Error World::UnbindChain(ChainId id) {
  if (impl_->stepping) return Reentrant();
  if constexpr (detail::kDebugValidation) impl_->chains.CheckHostBuffers(id);
  impl_->dependencies_dirty = true;
  return impl_->chains.Unbind(id);
}
bool World::IsValid(ChainId id) const { return impl_->chains.IsValid(id); }
bool World::IsSimulated(ChainId id) const { return impl_->chains.IsSimulated(id); }
Error World::GetChainNodePositions(ChainId id, std::span<Vec3> out) const {
  return impl_->chains.GetNodePositions(id, out);
}
Error World::SetMaxChains(int32_t max_chains) {
  if (impl_->stepping) return Reentrant();
  if (max_chains < 0) return Fail(ErrorCode::kOutOfRange, -1, "max_chains", "max_chains must be >= 0");
  impl_->settings.max_chains = max_chains;
  impl_->chains.SetMaxChains(max_chains);
  impl_->frame_budget.SetHostMaxChains(max_chains);
  return {};
}

Result<PendulumId> World::BindPendulum(const PendulumBinding& b) {
  if (impl_->stepping) return Reentrant();
  return impl_->pendulums.Bind(b);
}
Error World::UnbindPendulum(PendulumId id) {
  if (impl_->stepping) return Reentrant();
  if constexpr (detail::kDebugValidation) impl_->pendulums.CheckHostBuffers(id);
  return impl_->pendulums.Unbind(id);
}
bool World::IsValid(PendulumId id) const { return impl_->pendulums.IsValid(id); }
Error World::GetPendulumState(PendulumId id, Vec3* bob, float* swing_radians) const {
  return impl_->pendulums.GetState(id, bob, swing_radians);
}

// ---- ragdolls (kernel/ragdolls/ragdoll_system.cpp does the work) ----

Result<RagdollArchetypeId> World::BuildRagdollArchetype(const RagdollSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.BuildArchetype(settings);
}
int32_t World::RagdollPartCount(RagdollArchetypeId id) const { return impl_->ragdolls.PartCount(id); }
Error World::GetRagdollPartInfo(RagdollArchetypeId id, int32_t part, RagdollPartInfo* out) const {
  return impl_->ragdolls.GetPartInfo(id, part, out);
}
Error World::RemoveRagdollArchetype(RagdollArchetypeId id) {
  if (impl_->stepping) return Reentrant();
  if (impl_->characters.UsesRagdollArchetype(id))
    return Fail(ErrorCode::kInUse, -1, "archetype", "a character archetype is built on it: RemoveCharacterArchetype removes both");
  return impl_->ragdolls.RemoveArchetype(id);
}
Result<RagdollId> World::BindRagdoll(const RagdollBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->ragdolls.Bind(b);
}
Error World::UnbindRagdoll(RagdollId id) {
  if (impl_->stepping) return Reentrant();
  if (impl_->ragdolls.IsValid(id) && impl_->characters.CharacterOf(id).generation != 0)
    return Fail(ErrorCode::kInUse, -1, "ragdoll", "this ragdoll belongs to a character: UnbindCharacter frees it");
  if constexpr (detail::kDebugValidation) impl_->ragdolls.CheckHostBuffers(id);
  impl_->dependencies_dirty = true;
  return impl_->ragdolls.Unbind(id);
}
bool World::IsValid(RagdollId id) const { return impl_->ragdolls.IsValid(id); }
Error World::SetRagdollEnabled(RagdollId id, bool enabled) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetEnabled(id, enabled);
}
bool World::IsRagdollEnabled(RagdollId id) const { return impl_->ragdolls.IsEnabled(id); }
Error World::SetRagdollKinematicRoot(RagdollId id, const Transform* root) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->ragdolls.SetKinematicRoot(id, root);
}
Error World::ReserveRagdollKinematicToggle(RagdollArchetypeId archetype, int32_t instances) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.ReserveKinematicToggle(archetype, instances);
}
Error World::SetRagdollPartVelocity(RagdollId id, int32_t part, Vec3 linear, Vec3 angular) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetPartVelocity(id, part, linear, angular);
}
Error World::SetRagdollSleeping(RagdollId id, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetSleeping(id, can_sleep, freeze_when_asleep, freeze_after_seconds);
}
Error World::SetRagdollPartStates(RagdollId id, std::span<const Transform> parts, std::span<const Vec3> linear,
                                  std::span<const Vec3> angular) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetPartStates(id, parts, linear, angular);
}
Error World::WakeRagdoll(RagdollId id) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.Wake(id);
}
Error World::ApplyRagdollImpulse(RagdollId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.ApplyImpulse(id, part, impulse, world_point);
}
Error World::SetRagdollMotorTargets(RagdollId id, std::span<const Quat> local_rotations, float strength,
                                    std::span<const Vec3> local_angular_velocities) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetMotorTargets(id, local_rotations, strength, local_angular_velocities);
}
bool World::IsRagdollAsleep(RagdollId id) const { return impl_->ragdolls.IsAsleep(id); }
bool World::IsRagdollFrozen(RagdollId id) const { return impl_->ragdolls.IsFrozen(id); }
Error World::GetRagdollVelocities(RagdollId id, std::span<Vec3> linear, std::span<Vec3> angular) const {
  return impl_->ragdolls.GetVelocities(id, linear, angular);
}
bool World::RaycastRagdolls(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  RaycastHit unwanted;
  return impl_->ragdolls.Raycast(origin, dir, max_distance, hit != nullptr ? hit : &unwanted);
}

// Characters: the system does the work (kernel/character/character_system.cpp).
Result<CharacterArchetypeId> World::BuildCharacterArchetype(const CharacterSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.BuildArchetype(settings);
}
int32_t World::CharacterPartCount(CharacterArchetypeId id) const {
  const detail::CharacterArchetype* a = impl_->characters.Archetype(id);
  return a != nullptr ? static_cast<int32_t>(a->parts.size()) : 0;
}
Error World::GetCharacterPartInfo(CharacterArchetypeId id, int32_t part, CharacterPartInfo* out) const {
  const detail::CharacterArchetype* a = impl_->characters.Archetype(id);
  if (a == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null or stale");
  if (part < 0 || part >= static_cast<int32_t>(a->parts.size())) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  *out = a->parts[part];
  return {};
}
int32_t World::FindCharacterPart(CharacterArchetypeId id, std::string_view name) const {
  const detail::CharacterArchetype* a = impl_->characters.Archetype(id);
  if (a == nullptr) return -1;
  // Exact names first, then as the humanoid table matches them.
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (a->parts[j].name == name) return j;
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (a->bone_names[a->parts[j].bone] == name) return j;
  const std::string wanted = detail::NormalizeBoneName(name);
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (detail::NormalizeBoneName(a->parts[j].name) == wanted) return j;
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (detail::NormalizeBoneName(a->bone_names[a->parts[j].bone]) == wanted) return j;
  return -1;
}
Result<CharacterId> World::BindCharacter(const CharacterBinding& binding) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->characters.Bind(binding);
}
Error World::RemoveCharacterArchetype(CharacterArchetypeId id) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.RemoveArchetype(id);
}
Error World::RebindCharacter(CharacterId id, const CharacterBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->characters.Rebind(id, b);
}
Error World::UnbindCharacter(CharacterId id) {
  if (impl_->stepping) return Reentrant();
  if constexpr (detail::kDebugValidation) impl_->characters.CheckHostBuffers(id);
  impl_->dependencies_dirty = true;
  return impl_->characters.Unbind(id);
}
bool World::IsValid(CharacterId id) const { return impl_->characters.IsValid(id); }
bool World::ActivateCharacter(CharacterId id, const CharacterActivateOptions& options, Error* why) {
  if (impl_->stepping) {
    if (why != nullptr) *why = Reentrant();
    return false;
  }
  return impl_->characters.Activate(id, options, why);
}
Error World::DeactivateCharacter(CharacterId id, float blend_seconds, HandBackSpace space) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.Deactivate(id, blend_seconds, space);
}
Error World::SetCharacterStrength(CharacterId id, float strength) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.SetStrength(id, strength);
}
Error World::SetCharacterAnchored(CharacterId id, bool anchored) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.SetAnchored(id, anchored);
}
bool World::HitCharacter(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point, const CharacterHitOptions& options,
                         Error* why) {
  if (impl_->stepping) {
    if (why != nullptr) *why = Reentrant();
    return false;
  }
  return impl_->characters.Hit(id, part, impulse, world_point, options, why);
}
Error World::GoLimp(CharacterId id, float seconds) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.GoLimp(id, seconds);
}
Error World::ApplyCharacterImpulse(CharacterId id, Vec3 impulse) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.ApplyImpulse(id, impulse);
}
Error World::ApplyCharacterPartImpulse(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.ApplyPartImpulse(id, part, impulse, world_point);
}
Error World::GetCharacterState(CharacterId id, CharacterState* out) const { return impl_->characters.GetState(id, out); }
Error World::GetCharacterRecoveryRoot(CharacterId id, float leg_room, Transform* out) const {
  return impl_->characters.GetRecoveryRoot(id, leg_room, out);
}
RagdollId World::CharacterRagdoll(CharacterId id) const { return impl_->characters.RagdollOf(id); }
CharacterId World::CharacterOfRagdoll(RagdollId id) const { return impl_->characters.CharacterOf(id); }
int32_t World::DrainCharacterEvents(std::span<CharacterEvent> out) {
  return impl_->stepping ? 0 : impl_->characters.DrainEvents(out);
}
int32_t World::ActiveCharacterCount() const { return impl_->characters.ActiveCount(); }
int32_t World::BoundCharacterCount() const { return impl_->characters.BoundCount(); }

int32_t World::UnbindAll() {
  impl_->dependencies_dirty = true;
  if (impl_->stepping) return 0;
  if constexpr (detail::kDebugValidation) impl_->CheckHostBuffers();
  // Characters first: they own ragdolls.
  return impl_->characters.UnbindAll() + impl_->chains.UnbindAll() + impl_->pendulums.UnbindAll() +
         impl_->ragdolls.UnbindAll();
}

// ---- the frame ----

void World::SetCamera(Vec3 position) {
  if (impl_->stepping) return;
  if (IsFinite(position)) {
    impl_->camera = position;
  } else {
    ++impl_->pending_bad_input;
  }
}
void World::SetWindSampler(WindSampler sampler) {
  if (!impl_->stepping) impl_->wind_sampler = sampler;
}
void World::SetSimulatePredicate(SimulatePredicate predicate) {
  if (!impl_->stepping) impl_->predicate = predicate;
}
Error World::SetProfilerHooks(const ProfilerHooks& hooks) {
  if (impl_->stepping) return Reentrant();
  if ((hooks.zone_begin == nullptr) != (hooks.zone_end == nullptr))
    return Fail(ErrorCode::kOutOfRange, -1, "profiler", "zone_begin and zone_end must both be set or both null");
  impl_->profiler_hooks = hooks;
  impl_->profiler = hooks.zone_begin != nullptr ? &impl_->profiler_hooks : nullptr;
  impl_->chains.SetProfiler(impl_->profiler);
  impl_->ragdolls.SetProfiler(impl_->profiler);
  impl_->pendulums.SetProfiler(impl_->profiler);
  return {};
}
void World::SetTraceWriter(TraceWriter* writer) {
  SetProfilerHooks(writer != nullptr ? writer->hooks() : ProfilerHooks{});
}

const FrameStats& World::Step(float dt) { return impl_->Step(dt); }
bool World::BeginStep(float dt) { return impl_->BeginStep(dt); }
const FrameStats& World::FinishStep() { return impl_->FinishStep(); }
const FrameStats& World::LastStats() const {
  // While a BeginStep frame runs its stats are being written (lane 0 writes the ragdolls'):
  // the last whole frame's instead.
  return impl_->frame_state.in_flight ? impl_->previous_stats : impl_->stats;
}
bool World::FrameInFlight() const { return impl_->frame_state.in_flight; }
const WorldSettings& World::Settings() const { return impl_->settings; }
Isa World::ActiveIsa() const { return impl_->isa; }
int32_t World::LaneWidth() const { return detail::kBlockLanes; }
int32_t World::RagdollLaneWidth() const { return detail::RigidKernelsFor(impl_->isa).block_lanes; }

uint64_t World::StateHash() const {
  detail::StateHasher hasher;
  impl_->chains.HashState(hasher);
  impl_->pendulums.HashState(hasher);
  impl_->ragdolls.HashState(hasher);
  return hasher.h;
}

// ---- detail::WorldAccess ----

void detail::WorldAccess::SolveOnly(World& world, int32_t substeps) {
  detail::DenormalGuard guard;
  const auto step = static_cast<float>(world.impl_->clock.step());
  detail::ChainSystem& chains = world.impl_->chains;
  chains.BeginFrame(substeps, step, world.impl_->frame_wind, step);
  chains.Solve(chains.Pass(0));
  chains.Solve(chains.Pass(1));
  chains.EndFrame();
}
void detail::WorldAccess::WritebackOnly(World& world) {
  detail::DenormalGuard guard;
  detail::ChainSystem& chains = world.impl_->chains;
  chains.RefreshLists();  // binds since the last Step changed the lists
  chains.Writeback(chains.Pass(0), 1.0f);
  chains.Writeback(chains.Pass(1), 1.0f);
}
void detail::WorldAccess::SetPhaseClock(World& world, PhaseClock clock) { world.impl_->phase_clock = clock; }
int32_t detail::WorldAccess::SimulatedBlocks(const World& world) { return world.impl_->chains.SimulatedBlocks(); }
void detail::WorldAccess::PoisonRagdollState(World& world, RagdollId ragdoll) {
  world.impl_->ragdolls.PoisonStateForTest(ragdoll);
}
int32_t detail::WorldAccess::RagdollLane(const World& world, RagdollId ragdoll) {
  return world.impl_->ragdolls.LaneForTest(ragdoll);
}

void detail::WorldAccess::SetRagdollDomains(World& world, bool enabled) { world.impl_->ragdolls.SetDomainsForTest(enabled); }

int32_t detail::WorldAccess::RagdollDomains(const World& world) { return world.impl_->ragdolls.DomainsForTest(); }

}  // namespace tendon
