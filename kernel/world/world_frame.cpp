// kernel/world/world_frame.cpp: the frame: Step, BeginStep and FinishStep, and the stages
// they run in order.
//
// A frame is a serial start (OpenFrame: the clock, wind, the chains' gather and budget),
// two lanes (RunLane: lane 0 the characters, the ragdoll substeps and the chains that hang
// from them; lane 1 every other chain) and a serial end (CloseFrame: pendulums, counters,
// stats, the budget and the trace). Step runs the lanes in turn; BeginStep hands both to
// the host's job system and FinishStep waits for them. Every phase says in its own header
// what it reads, writes and splits over threads. Results are the same for any worker count,
// and nothing here allocates.
#include <algorithm>
#include <cmath>

#include "kernel/core/fpu.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/profile.h"
#include "kernel/world/phase_run.h"
#include "kernel/world/world_impl.h"
#include "tendon/trace.h"

namespace tendon {

using detail::PhaseRun;

const FrameStats& World::Impl::Step(float dt) {
  // From a callback inside Step: the frame in progress's stats (same thread); mid-frame
  // (BeginStep .. FinishStep) the last whole frame's: the lanes are writing these.
  if (stepping) return frame_state.in_flight ? previous_stats : stats;
  // Stepping from before the frame's first zone opens until its last mark: a profiler
  // callback that calls back into the World is refused (or told the stats) there too.
  stepping = true;
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
  MarkFrame();
  stepping = false;
  return stats;
}

bool World::Impl::BeginStep(float dt) {
  if (stepping) return false;  // a frame in flight, or a callback inside Step
  stepping = true;  // before the zone opens (see Step); FinishStep ends it
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

const FrameStats& World::Impl::FinishStep() {
  // A FinishStep from a callback inside this one gets the last whole frame's stats.
  if (finishing) return previous_stats;
  if (!frame_state.in_flight) return stats;
  finishing = true;
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
  MarkFrame();
  stepping = false;
  finishing = false;
  return stats;
}

void World::Impl::LaneTask(int32_t begin, int32_t end, uint32_t worker, void* context) {
  detail::DenormalGuard guard;  // MXCSR is per thread
  for (int32_t lane = begin; lane < end; ++lane) static_cast<Impl*>(context)->RunLane(lane, worker);
}

const FrameStats& World::Impl::MarkFrame() {
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

bool World::Impl::OpenFrame(float dt) {
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
  host_bodies.WriteShapes(host_shapes);  // capacity reserved by AddHostBody: no allocation
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
    // Followed ragdolls (tendon/follow.h): their velocities toward the received pose at the
    // frame's end, before the lanes are packed (a steered ragdoll wakes).
    if (follow.Count() > 0)
      follow.Step(ragdolls, clock.time(), clock.step() * static_cast<double>(tick.substeps), settings.gravity);
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
  chains.SetHostShapes(host_shapes);  // where the host bodies are this frame (chains' pose phase)
  return true;
}

bool World::Impl::OverlapsBodies(const void* data, std::size_t bytes, const void* context) {
  const auto* impl = static_cast<const Impl*>(context);
  return impl->ragdolls.OverlapsHostBuffers(data, bytes) || impl->characters.OverlapsHostBuffers(data, bytes);
}

void World::Impl::RunLane(int32_t lane, uint32_t thread) {
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

const FrameStats& World::Impl::CloseFrame() {
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

void World::Impl::CheckHostBuffers() const {
  chains.CheckHostBuffers();
  pendulums.CheckHostBuffers();
  ragdolls.CheckHostBuffers();
  characters.CheckHostBuffers();
}

void World::Impl::SampleWind() {
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

const FrameStats& World::Impl::Finish(uint64_t t0) {
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
  return stats;
}

}  // namespace tendon
