// ports/c/c_world.cpp: the C ABI's world: its settings, create and destroy, the step and
// its stats, the camera and chain budget, the world's queries, and unbind-all.
//
// TendonWorldSettings and TendonFrameStats mirror tendon::WorldSettings and FrameStats
// through the tables below (c_mirror.h): a field added to either side fails the build
// until its row is written.
// What it does NOT do: the trace and profiler hooks (c_trace.cpp), device profiles
// (c_device.cpp), or any instance kind (c_chains.cpp, c_ragdolls.cpp, ...).
// Threading: as the C++ World: one thread at a time per world; the step's work runs on
// the host's task hooks. Memory: create allocates the world; step allocates nothing (the
// stats are converted in place).
#include <memory>
#include <utility>

#include "ports/c/c_port.h"

static_assert(static_cast<int>(tendon::Isa::kNeon) == TENDON_ISA_NEON, "TendonIsa mirrors Isa");
static_assert(static_cast<int>(tendon::Isa::kAvx512) == TENDON_ISA_AVX512, "TendonIsa mirrors Isa");
static_assert(static_cast<int>(tendon::BudgetAction::kAtFloor) == TENDON_BUDGET_AT_FLOOR,
              "TendonBudgetAction mirrors BudgetAction");

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonWorldSettings, WorldSettings> : TableOf<TendonWorldSettings, WorldSettings> {
  using Rows = RowList<
      Field<&C::gravity, &P::gravity>, Field<&C::fixed_hz, &P::fixed_hz>, Field<&C::max_substeps, &P::max_substeps>,
      Field<&C::render_interpolation, &P::render_interpolation>, Field<&C::time_phases, &P::time_phases>,
      Field<&C::max_distance, &P::max_distance>, Field<&C::max_chains, &P::max_chains>,
      Field<&C::pendulum_max_distance, &P::pendulum_max_distance>, Field<&C::teleport_distance, &P::teleport_distance>,
      Field<&C::teleport_angle_degrees, &P::teleport_angle_degrees>, Field<&C::ambient_wind, &P::ambient_wind>,
      Field<&C::wind_seed, &P::wind_seed>, Field<&C::ragdoll_substeps, &P::ragdoll_substeps>,
      Field<&C::ragdoll_iterations, &P::ragdoll_iterations>, Field<&C::ragdoll_sleep_speed, &P::ragdoll_sleep_speed>,
      Field<&C::ragdoll_contact_angular_damping, &P::ragdoll_contact_angular_damping>,
      Field<&C::ragdoll_max_push_speed, &P::ragdoll_max_push_speed>,
      Field<&C::ragdoll_sleep_seconds, &P::ragdoll_sleep_seconds>,
      Field<&C::ragdoll_settle_damping, &P::ragdoll_settle_damping>,
      Field<&C::max_active_characters, &P::max_active_characters>, Field<&C::frame_budget_ms, &P::frame_budget_ms>,
      Field<&C::budget_min_ragdoll_substeps, &P::budget_min_ragdoll_substeps>,
      // In: the opaque handle's profile (SettingsToCpp). Out: NULL, the World keeps none.
      ByHand<&C::device_profile, &P::device_profile>,
      // The World's answer (which settings the profile filled): never read from the host.
      OutOnly<&C::from_device_profile, &P::from_device_profile>, Field<&C::isa, &P::isa>, Field<&C::tasks, &P::tasks>,
      Field<&C::contact_event_capacity, &P::contact_event_capacity>>;
};
TENDON_C_CHECK_MIRROR(TendonWorldSettings, tendon::WorldSettings);

template <>
struct MirrorTable<TendonPhaseTimes, PhaseTimes> : TableOf<TendonPhaseTimes, PhaseTimes> {
  using Rows = RowList<Field<&C::gather_ms, &P::gather_ms>, Field<&C::budget_ms, &P::budget_ms>,
                       Field<&C::pose_ms, &P::pose_ms>, Field<&C::solve_ms, &P::solve_ms>,
                       Field<&C::writeback_ms, &P::writeback_ms>, Field<&C::pendulum_ms, &P::pendulum_ms>,
                       Field<&C::ragdoll_ms, &P::ragdoll_ms>, Field<&C::total_ms, &P::total_ms>>;
};
TENDON_C_CHECK_MIRROR(TendonPhaseTimes, tendon::PhaseTimes);

template <>
struct MirrorTable<TendonFrameStats, FrameStats> : TableOf<TendonFrameStats, FrameStats> {
  using Rows = RowList<
      Field<&C::frame, &P::frame>, Field<&C::substeps, &P::substeps>, Field<&C::dropped_seconds, &P::dropped_seconds>,
      Field<&C::dt_rejected, &P::dt_rejected>, Field<&C::interpolation_alpha, &P::interpolation_alpha>,
      Field<&C::bound_chains, &P::bound_chains>, Field<&C::bound_pendulums, &P::bound_pendulums>,
      Field<&C::simulated_chains, &P::simulated_chains>, Field<&C::simulated_pendulums, &P::simulated_pendulums>,
      Field<&C::simulated_instance_substeps, &P::simulated_instance_substeps>,
      Field<&C::sleeping_chains, &P::sleeping_chains>, Field<&C::culled_by_distance, &P::culled_by_distance>,
      Field<&C::culled_by_budget, &P::culled_by_budget>, Field<&C::sleeping_pendulums, &P::sleeping_pendulums>,
      Field<&C::bound_ragdolls, &P::bound_ragdolls>, Field<&C::disabled_ragdolls, &P::disabled_ragdolls>,
      Field<&C::simulated_ragdolls, &P::simulated_ragdolls>, Field<&C::sleeping_ragdolls, &P::sleeping_ragdolls>,
      Field<&C::frozen_ragdolls, &P::frozen_ragdolls>, Field<&C::ragdoll_substeps, &P::ragdoll_substeps>,
      Field<&C::ragdoll_pairs, &P::ragdoll_pairs>, Field<&C::dropped_ragdoll_pairs, &P::dropped_ragdoll_pairs>,
      Field<&C::contact_ragdoll_pairs, &P::contact_ragdoll_pairs>, Field<&C::ragdoll_islands, &P::ragdoll_islands>,
      Field<&C::coloured_ragdoll_pairs, &P::coloured_ragdoll_pairs>, Field<&C::bound_characters, &P::bound_characters>,
      Field<&C::active_characters, &P::active_characters>,
      Field<&C::dropped_character_events, &P::dropped_character_events>,
      Field<&C::snapped_teleport, &P::snapped_teleport>, Field<&C::snapped_wake, &P::snapped_wake>,
      Field<&C::snapped_bad_input, &P::snapped_bad_input>, Field<&C::reset_non_finite, &P::reset_non_finite>,
      Field<&C::chain_blocks, &P::chain_blocks>, Field<&C::lanes_used, &P::lanes_used>,
      Field<&C::lane_occupancy, &P::lane_occupancy>, Field<&C::budget_max_chains, &P::budget_max_chains>,
      Field<&C::budget_ragdoll_substeps, &P::budget_ragdoll_substeps>, Field<&C::budget_action, &P::budget_action>,
      Field<&C::budget_estimate_ms, &P::budget_estimate_ms>, Field<&C::times, &P::times>,
      Field<&C::contact_events, &P::contact_events>, Field<&C::dropped_contact_events, &P::dropped_contact_events>,
      Field<&C::broken_drives, &P::broken_drives>>;
};
TENDON_C_CHECK_MIRROR(TendonFrameStats, tendon::FrameStats);

namespace {

WorldSettings SettingsToCpp(const TendonWorldSettings& c) {
  WorldSettings s;
  MirrorIn(c, s);
  s.device_profile = c.device_profile != nullptr ? &c.device_profile->profile : nullptr;
  return s;
}
void SettingsToC(const WorldSettings& s, TendonWorldSettings* c) {
  *c = TendonWorldSettings{};
  MirrorOut(s, *c);
}
void StatsToC(const FrameStats& s, TendonFrameStats* c) {
  *c = TendonFrameStats{};
  MirrorOut(s, *c);
}

// The World calls these with the TendonWorld as context: the C callbacks take and return C
// values, so they are called through these rather than cast to the C++ pointer types.
Vec3 WindTrampoline(double time_seconds, void* user) {
  const TendonWorld* w = static_cast<const TendonWorld*>(user);
  return ToCpp(w->wind_sample(time_seconds, w->wind_user));
}
bool PredicateTrampoline(ChainId chain, Vec3 root_world, void* user) {
  const TendonWorld* w = static_cast<const TendonWorld*>(user);
  return w->simulate_predicate(ToC(chain), ToC(root_world), w->predicate_user) != 0;
}

// Marks the world stepping for the length of a step call (callbacks run inside it:
// the wind sampler and predicate in step and begin_step, profiler hooks in all three).
// The World refuses a callback's change there; without this the C side would store a new
// callback the World never took, and its trampoline would call that one (or NULL).
struct SteppingScope {
  explicit SteppingScope(TendonWorld* w) : world(w), was(w->stepping) { w->stepping = true; }
  ~SteppingScope() { world->stepping = was; }
  SteppingScope(const SteppingScope&) = delete;
  SteppingScope& operator=(const SteppingScope&) = delete;
  TendonWorld* world;
  bool was;
};
// A callback may only change outside a frame: inside a step (a callback setting one) or
// while a frame is in flight, the frame is calling the one set.
TendonResult CallbackRefused(TendonWorld* w) {
  if (w->stepping || w->world->FrameInFlight())
    return Refuse(w, TENDON_ERROR_REENTRANT, "world", ": a callback cannot change during a frame");
  return TENDON_OK;
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::World;

extern "C" {

void tendon_world_settings_defaults(TendonWorldSettings* c) {
  if (c != nullptr) SettingsToC(tendon::WorldSettings{}, c);
}
void tendon_world_get_settings(const TendonWorld* world, TendonWorldSettings* out) {
  if (world != nullptr && out != nullptr) SettingsToC(world->world->Settings(), out);
}

TendonResult tendon_world_create(const TendonWorldSettings* settings, TendonWorld** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (settings == nullptr) return NullArgument(nullptr, "settings");
  if (OutOfEnum(EnumValue(settings->isa), TENDON_ISA_AVX512))
    return Record(nullptr, TENDON_ERROR_OUT_OF_RANGE, "isa is not a TendonIsa", "isa");
  return Guard(nullptr, [&] {
    auto created = World::Create(SettingsToCpp(*settings));
    if (!created.ok()) return Record(nullptr, created.error());
    auto w = std::make_unique<TendonWorld>();
    w->world = std::move(created).value();
    *out = w.release();
    return TENDON_OK;
  });
}

void tendon_world_destroy(TendonWorld* world) {
  if (world == nullptr) return;
  if (world->world->FrameInFlight()) world->world->FinishStep();  // its lanes write the buffers freed below
  world->world->SetTraceWriter(nullptr);
  delete world;  // avatars unbind themselves before the World goes (member order)
}

const char* tendon_world_last_error(const TendonWorld* world) { return world != nullptr ? world->last_error.c_str() : ""; }
TendonIsa tendon_world_active_isa(const TendonWorld* world) {
  return world != nullptr ? static_cast<TendonIsa>(world->world->ActiveIsa()) : TENDON_ISA_AUTO;
}
int32_t tendon_world_lane_width(const TendonWorld* world) { return world != nullptr ? world->world->LaneWidth() : 0; }
int32_t tendon_world_ragdoll_lane_width(const TendonWorld* world) {
  return world != nullptr ? world->world->RagdollLaneWidth() : 0;
}
uint64_t tendon_world_state_hash(const TendonWorld* world) { return world != nullptr ? world->world->StateHash() : 0; }

int32_t tendon_world_frame_in_flight(const TendonWorld* world) {
  return world != nullptr && world->world->FrameInFlight() ? 1 : 0;
}

void tendon_world_step(TendonWorld* world, float dt, TendonFrameStats* stats) {
  if (world == nullptr) return;
  const SteppingScope scope(world);
  const tendon::FrameStats& s = world->world->Step(dt);
  if (stats != nullptr) StatsToC(s, stats);
}
TendonResult tendon_world_begin_step(TendonWorld* world, float dt) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  const SteppingScope scope(world);  // without task hooks the whole frame runs in here
  if (!world->world->BeginStep(dt)) return InFlight(world);
  return TENDON_OK;
}
void tendon_world_finish_step(TendonWorld* world, TendonFrameStats* stats) {
  if (world == nullptr) return;
  const SteppingScope scope(world);  // its counters and frame mark call the profiler hooks
  const tendon::FrameStats& s = world->world->FinishStep();
  if (stats != nullptr) StatsToC(s, stats);
}
void tendon_world_last_stats(const TendonWorld* world, TendonFrameStats* stats) {
  if (world != nullptr && stats != nullptr) StatsToC(world->world->LastStats(), stats);
}
void tendon_world_set_camera(TendonWorld* world, TendonVec3 position) {
  if (world != nullptr) world->world->SetCamera(ToCpp(position));
}
TendonResult tendon_world_set_wind_sampler(TendonWorld* world, TendonWindSampleFn sample, void* user) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (TendonResult r = CallbackRefused(world); r != TENDON_OK) return r;
  world->wind_sample = sample;
  world->wind_user = user;
  world->world->SetWindSampler(sample != nullptr ? tendon::WindSampler{&WindTrampoline, world} : tendon::WindSampler{});
  return TENDON_OK;
}
TendonResult tendon_world_set_simulate_predicate(TendonWorld* world, TendonSimulatePredicateFn predicate, void* user) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (TendonResult r = CallbackRefused(world); r != TENDON_OK) return r;
  world->simulate_predicate = predicate;
  world->predicate_user = user;
  world->world->SetSimulatePredicate(predicate != nullptr ? tendon::SimulatePredicate{&PredicateTrampoline, world}
                                                          : tendon::SimulatePredicate{});
  return TENDON_OK;
}
TendonResult tendon_world_set_max_chains(TendonWorld* world, int32_t max_chains) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetMaxChains(max_chains)); });
}
int32_t tendon_world_unbind_all(TendonWorld* world) {
  if (world == nullptr) return 0;
  if (world->world->FrameInFlight()) {
    (void)InFlight(world);  // recorded; the count is 0
    return 0;
  }
  int32_t count = 0;
  // The count is the answer; a failure is recorded (tendon_last_error) and the rest go on.
  (void)Guard(world, [&] {
    // Avatars first: each unbinds its own chains and character and forgets their ids.
    world->vrm_avatars.ForEachLive([&](std::unique_ptr<tendon::ports::VrmAvatar>& avatar) {
      if (avatar) (void)Record(world, avatar->Unbind());
    });
    count = world->world->UnbindAll();
    return TENDON_OK;
  });
  return count;
}

}  // extern "C"
