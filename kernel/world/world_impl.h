// kernel/world/world_impl.h: what a World holds, for the World's own files only.
//
// What it does: World::Impl owns one system per concern (world.cpp's header lists them),
// the fixed clock, the frame budget, the profiler hooks and the frame in flight, and
// declares the frame's stages, which world_frame.cpp defines (Step, BeginStep and
// FinishStep; OpenFrame, the two lanes, CloseFrame).
// What it does NOT do: anything outside kernel/world may use (the public World is
// tendon/world.h).
// Threading: as World (tendon/world.h). Memory: the systems size themselves at build and
// bind time; nothing here allocates in a frame.
#pragma once

#include <cstdint>

#include "kernel/chains/chain_kernels.h"
#include "kernel/chains/chain_system.h"
#include "kernel/character/character_system.h"
#include "kernel/collide/static_world.h"
#include "kernel/core/frame_counters.h"
#include "kernel/core/host_shapes.h"
#include "kernel/core/tick_clock.h"
#include "kernel/follow/follow_system.h"
#include "kernel/world/world_access.h"
#include "kernel/pendulums/pendulum_system.h"
#include "kernel/ragdolls/host_bodies.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/rigid_kernels.h"
#include "kernel/world/fixed_clock.h"
#include "kernel/world/frame_budget.h"
#include "kernel/world/wind.h"
#include "tendon/world.h"

namespace tendon {

namespace detail {

inline ChainSystemSettings ChainSettingsOf(const WorldSettings& s, Isa isa) {
  return {s.tasks, &ChainKernelsFor(isa), s.max_chains, s.max_distance, s.gravity, s.teleport_distance,
          s.teleport_angle_degrees};
}

inline RagdollSystemSettings RagdollSettingsOf(const WorldSettings& s) {
  return {s.tasks, s.gravity, s.ragdoll_substeps, s.ragdoll_iterations, s.ragdoll_contact_angular_damping,
          s.ragdoll_max_push_speed, s.ragdoll_sleep_speed, s.ragdoll_sleep_seconds, s.ragdoll_settle_damping,
          s.contact_event_capacity};
}

}  // namespace detail

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
  // Inside Step, BeginStep .. FinishStep (their zones and marks included): calls that change
  // the world are refused, and a nested Step returns stats.
  bool stepping = false;
  bool finishing = false;  // inside FinishStep: a nested one returns the last whole frame's stats
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
  // The host bodies' shapes in world space (kernel/core/host_shapes.h), one per live host
  // body, rewritten at the frame's opening (OpenFrame; capacity reserved by AddHostBody);
  // the chains read them in their pose phase (SetHostShapes).
  std::vector<detail::HostShape> host_shapes;
  detail::PendulumSystem pendulums;
  detail::RagdollSystem ragdolls;
  detail::CharacterSystem characters;  // above ragdolls: drives some of them
  detail::HostBodies host_bodies;      // the host's kinematic bodies, kinematic lanes of `ragdolls`
  detail::FollowSystem follow;         // ragdolls steered toward received samples (tendon/follow.h)

  Impl(const WorldSettings& s, Isa resolved)
      : settings(s),
        isa(resolved),
        clock(s.fixed_hz, s.max_substeps),
        chains(detail::ChainSettingsOf(s, resolved)),
        pendulums({s.tasks, s.gravity, s.pendulum_max_distance, s.teleport_distance}),
        ragdolls(detail::RagdollSettingsOf(s), detail::RigidKernelsFor(resolved)),
        characters(ragdolls),
        host_bodies(ragdolls) {
    characters.SetMaxActive(s.max_active_characters);
  }

  // The frame. Its serial start (OpenFrame), two lanes, and its serial end (CloseFrame):
  //   lane 0: characters before physics, the ragdoll substeps, characters after physics,
  //           then the chains that hang from them (a chain one of whose host buffers a
  //           ragdoll or character also reads or writes: ChainSystem::MarkDependents);
  //   lane 1: every other chain.
  // Step runs lane 0 then lane 1; BeginStep hands both to the host's job system at once.
  // Chains' blocks never share memory, so both orders give the same bits.
  const FrameStats& Step(float dt);

  bool BeginStep(float dt);

  const FrameStats& FinishStep();

  static void LaneTask(int32_t begin, int32_t end, uint32_t worker, void* context);

  // The frame's counters and its mark, into the host's profiler (when it takes them).
  const FrameStats& MarkFrame();

  // Clock, wind, and the chains' gather and budget (every chain, on the root frames as the
  // host left them before the frame: a chain hanging from a ragdolled bone is culled on
  // where that bone was at the end of the last frame). False when nothing steps.
  bool OpenFrame(float dt);

  static bool OverlapsBodies(const void* data, std::size_t bytes, const void* context);

  // One lane of the frame (see Step), on `thread` (kTendonCallerThread, or the worker that
  // runs it under BeginStep). Each writes its own phase times.
  void RunLane(int32_t lane, uint32_t thread);

  const detail::PhaseClock* test_clock() const { return phase_clock.ms != nullptr ? &phase_clock : nullptr; }

  // Counters, pendulums, stats and trace.
  const FrameStats& CloseFrame();

  // Debug validation: every bound instance's host buffers are still the host's.
  void CheckHostBuffers() const;

  // The frame's wind: the host's sampler, or the ambient wind's gusts; never non-finite.
  void SampleWind();

  const FrameStats& Finish(uint64_t t0);
};

}  // namespace tendon
