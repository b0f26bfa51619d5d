// tendon/world_settings.h: what a World is created with, and the host callbacks it takes.
//
// What it does: WorldSettings (the fixed step, the budgets, the ragdoll solver, threads and
// the instruction set), every field with its unit, range and what disables it; the host's
// wind sampler (WindSampler); which settings a device profile filled in (ProfiledSetting).
// What it does NOT do: validate (World::Create does, naming the field) or keep a pointer
// to the device profile past Create.
// Threading and memory: plain values; the callbacks run on the thread that calls Step.
#pragma once

#include <cmath>
#include <cstdint>

#include "tendon/isa.h"
#include "tendon/math.h"
#include "tendon/task_hooks.h"

namespace tendon {

struct DeviceProfile;  // tendon/device_profile.h

// A host wind sampler, called once per Step that runs a substep, with the simulation
// time in seconds; its result is used for every substep of that frame.
struct WindSampler {
  Vec3 (*sample)(double time_seconds, void* user) = nullptr;
  void* user = nullptr;
};

// The settings a device profile (WorldSettings::device_profile) may fill in: bits of
// WorldSettings::from_device_profile.
enum ProfiledSetting : uint32_t {
  kProfiledMaxChains = 1u << 0,
  kProfiledMaxDistance = 1u << 1,
  kProfiledMaxActiveCharacters = 1u << 2,
  kProfiledRagdollSubsteps = 1u << 3,
  kProfiledFixedHz = 1u << 4,
  kProfiledIsa = 1u << 5,  // isa kAuto: the profile's measured best_isa
};

struct WorldSettings {
  Vec3 gravity{0.0f, -9.81f, 0.0f};  // m/s^2
  float fixed_hz = 60.0f;            // substeps per second, range [10, 1000]
  int32_t max_substeps = 3;          // per frame, range [1, 64]; the rest of a hitch is dropped
  // Render interpolation ("Fix your timestep!", Glenn Fiedler): every Step writes chains,
  // pendulums, ragdolls and characters as they were alpha of the way from the substep
  // before the last to the last (FrameStats::interpolation_alpha, the accumulator's
  // remainder), so the output moves on every frame at any frame rate instead of standing
  // still on frames that run no substep and jumping on the next (at 144 Hz on the 60 Hz
  // clock, 168 of 288 frames). It shows the simulation one substep late. Chains and
  // characters interpolate their shape under this frame's animated root, so nothing lags
  // the animation. Queries (GetChainNodePositions, GetRagdollPartStates, raycasts) always
  // answer with the last substep's state. false writes the last substep's state.
  bool render_interpolation = true;
  // Phase timing: each Step reads the CPU's cycle counter at its phase boundaries (about
  // eight reads; one costs ~10 ns on this project's x86-64 VMs, ~6% of a lone VRM avatar's
  // Step) and reports the phases in FrameStats::times, which the frame budget steers by
  // and the dashboard charts. false: Step reads no counter and FrameStats::times stays
  // zero, for a host that times Tendon with its own profiler (ProfilerHooks zones still
  // open and close) or not at all. Nothing simulated changes. frame_budget_ms needs it
  // (Create refuses a budget without it).
  bool time_phases = true;
  // Chains whose root is farther than this from the camera sleep. Metres, > 0;
  // infinity disables distance culling.
  float max_distance = 100.0f;
  // At most this many chains simulate; the nearest eligible win. >= 0; INT32_MAX disables.
  int32_t max_chains = INT32_MAX;
  // Pendulums farther than this from the camera sleep (they ignore max_chains). Metres.
  float pendulum_max_distance = 100.0f;
  // A root that moves farther (metres) or turns more (degrees) in one frame snaps its
  // chain to the animated pose. Infinity disables either test.
  float teleport_distance = 5.0f;
  float teleport_angle_degrees = 90.0f;
  // Ambient wind (used when no sampler is set): direction * strength, m/s^2, gusting
  // between about 0.1x and 1x with deterministic noise seeded by wind_seed.
  Vec3 ambient_wind{};
  uint64_t wind_seed = 0x7e1d0;
  // XPBD substeps of ragdolls per fixed step (substeps beat iterations), range [1, 64],
  // and joint iterations per substep (each one pass root to leaf and one back), [1, 16].
  int32_t ragdoll_substeps = 16;
  int32_t ragdoll_iterations = 2;
  // A ragdoll falls asleep when, for sleep_seconds, no point of any part strays farther
  // than ragdoll_sleep_speed x sleep_seconds from where it was when that time began (its
  // centre's displacement plus its turn times its extent): an average speed below
  // ragdoll_sleep_speed, so a body that jitters in place sleeps and one that slides does
  // not; or when every point stays slower than ragdoll_sleep_speed for sleep_seconds. It
  // is then not stepped until woken (WakeRagdoll, an impulse, contact, or its
  // kinematic root moving). m/s, >= 0 (0 disables sleep); seconds > 0.
  float ragdoll_sleep_speed = 0.05f;
  // Rolling resistance: a part touching the static world loses this much of its angular
  // speed per second. 1/s, [0, 1000]; 0 disables.
  float ragdoll_contact_angular_damping = 4.0f;
  // Depenetration: the penetration a part is placed in (bound partly inside the static
  // world or inside another ragdoll, a character activated with its feet in the ground,
  // SetRagdollPartStates) is pushed out at most this fast, and the part's velocity says
  // so meanwhile. Every other penetration (a landing, a pile pressing a limb into the
  // floor) is taken out at once. Without the bound a deep start is corrected in one
  // substep and every part the joints drag along keeps that speed: a leg bound 10 cm into
  // the floor was thrown 10 m. As Box2D's contactPushMaxVelocity (3 m/s) and Jolt's
  // mMaxPenetrationDistance bound theirs. m/s, > 0; infinity disables the bound.
  float ragdoll_max_push_speed = 1.0f;
  // The sleep_seconds of ragdoll_sleep_speed's two rules: how long a ragdoll must stay
  // that still before it sleeps, and how long it must be calm before settling starts.
  // Shorter sleeps sooner and may freeze a body mid-creep. Seconds, > 0 and finite.
  float ragdoll_sleep_seconds = 0.5f;
  // Settling: a ragdoll whose every point has moved slower than 4 x ragdoll_sleep_speed
  // over each frame for ragdoll_sleep_seconds (it is coming to rest but has not yet
  // slept: a pile creeping as its bodies push on each other) loses this much of its
  // linear and angular speed per second until it sleeps or moves faster again. It brings
  // piles to rest sooner without damping anything that moves. 1/s, [0, 100]; 0 disables.
  float ragdoll_settle_damping = 8.0f;
  // At most this many characters are active (ragdolled) at once: activating past it
  // releases the oldest. >= 0; 0 refuses every activation.
  int32_t max_active_characters = 16;
  // A budget for Step in milliseconds, held adaptively (as Unreal's Animation Budget
  // Allocator holds skeletal work to one). After each frame that runs a substep the World
  // measures what a simulated chain and what one ragdoll substep cost, and sets the next
  // frame's limits so that Step costs between 90% and 100% of the budget: over it, fewer
  // chains simulate (the farthest are cut first, and snap to the animation when they
  // simulate again, as culled chains do), and once no chain is left, ragdolls run fewer
  // substeps per fixed step, down to budget_min_ragdoll_substeps; under 90% it gives back
  // substeps first, then chains. The cost is smoothed over frames (each change resets the
  // estimate to its prediction), so the limits settle instead of oscillating; a frame
  // with more fixed substeps than usual (a hitch) counts at the usual count. Under
  // BeginStep the cost is the serial phases plus the longer lane, not the wall time to
  // FinishStep (which holds the host's own work). FrameStats
  // reports the limits and each decision. The budget caps what max_chains and
  // ragdoll_substeps allow; it never raises them. When set, which chains simulate and how
  // many substeps ragdolls run depend on the machine's timing, so results are no longer
  // reproducible across runs, machines or worker counts. ms, finite, >= 0; 0 disables
  // (the default: nothing changes and results are deterministic).
  float frame_budget_ms = 0;
  // The fewest ragdoll substeps per fixed step the budget may cut to, [1, 64] (above
  // ragdoll_substeps it is ragdoll_substeps: the budget then never cuts substeps).
  // Fewer substeps make joints and contacts softer (Macklin et al. 2019, "Small Steps in
  // Physics Simulation": the error falls with the substep length squared); 1 allows anything.
  int32_t budget_min_ragdoll_substeps = 4;
  // A device profile (tendon/device_profile.h, from CalibrateDevice or a profile file):
  // each profiled setting still at its default value here (max_chains, max_distance,
  // max_active_characters, ragdoll_substeps, fixed_hz; isa kAuto) takes the profile's value in
  // Create; a value the host set stays. Create validates the profile (kOutOfRange naming
  // "device_profile.<field>") and keeps no pointer to it. Null: none.
  const DeviceProfile* device_profile = nullptr;
  // Which settings came from device_profile (ProfiledSetting bits), in World::Settings();
  // ignored on input.
  uint32_t from_device_profile = 0;
  Isa isa = Isa::kAuto;
  TaskHooks tasks{nullptr, nullptr, nullptr, 1};
  // Contact and impact events (tendon/contact_events.h, World::DrainContactEvents): the
  // most events one Step queues; past it they are dropped and counted
  // (FrameStats::dropped_contact_events). Allocated once in Create (about 100 bytes an
  // event). [0, 1 << 20]; 0 turns events off: nothing is recorded and they cost nothing.
  int32_t contact_event_capacity = 256;
};

}  // namespace tendon
