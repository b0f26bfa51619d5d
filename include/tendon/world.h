// tendon/world.h: the World builds chain archetypes, binds instances and steps them.
//
// What it does: settings -> BuildChainArchetype (validated once, immutable) -> BindChain
// (an instance over host buffers, by handle) -> Step(dt) every frame. Step drains a
// fixed-rate accumulator (WorldSettings::fixed_hz, at most max_substeps per frame),
// culls and budgets chains against the camera, packs the awake ones into SIMD lanes of
// blocks that share a topology, runs the verlet solve and writes local transforms into
// the host's buffers once per frame. Accessory pendulums (BindPendulum) step alongside.
// Ragdolls (BuildRagdollArchetype, BindRagdoll) are rigid parts solved with substepped
// XPBD in SIMD lanes; characters (BuildCharacterArchetype, BindCharacter; character.h)
// map whole skeletons onto ragdolls and toggle them. Per Step: the chains' culling and
// budget (on the root frames as the host left them), characters' animated poses and
// controls, the ragdoll substeps, characters' output poses, the chains that hang from
// them, every other chain (BeginStep runs these beside the ragdolls), then pendulums.
//
// What it does NOT do: own host memory, animate, load assets, or allocate in Step.
// Step never fails: bad dt steps nothing; non-finite input holds the instance at its last
// good pose; non-finite state resets the instance to its animated pose; FrameStats says
// which. Building and binding fail with an Error naming the item, field and reason.
//
// Threading: a World is used by one thread at a time. Step hands its phases to
// WorldSettings::tasks (see task_hooks.h) and returns when they are done: chain and
// ragdoll blocks of lanes, and contacts between ragdolls by island (awake ragdolls joined
// by pairs with a contact, each island one task; one island holding more than half of
// those pairs and over 512 is split by colour across tasks instead; FrameStats counts
// both). Results are bit-identical for any worker count. Step sets flush-to-zero
// and denormals-are-zero inside every task and restores the caller's floating-point mode.
//
// Memory: building and binding allocate (archetypes, lanes, per-instance state, scratch
// for the budget, and per worker a writeback scratch of 256 bytes, and a world-matrix
// scratch for pose streams of 480 bytes, per node of the longest chain archetype); Step, SetCamera, the wind setters and every call on a bound ragdoll or
// character do not (SetRagdollKinematicRoot only the first time, unless reserved).
// Host buffers named in a binding must stay valid until the instance is unbound.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "tendon/export.h"
#include "tendon/chain_settings.h"
#include "tendon/pose_layout.h"
#include "tendon/profiler_hooks.h"
#include "tendon/character.h"
#include "tendon/ragdoll_settings.h"
#include "tendon/errors.h"
#include "tendon/ids.h"
#include "tendon/math.h"
#include "tendon/stats.h"
#include "tendon/task_hooks.h"

namespace tendon {

class TraceWriter;
struct DeviceProfile;  // tendon/device_profile.h
namespace detail {
struct WorldAccess;
}

// Which kernel runs the solve. kAuto picks the best the CPU has; the environment
// variable TENDON_FORCE_SCALAR=1 turns kAuto into kScalar, and TENDON_ISA=<ToString name>
// (sse2, avx2+fma, ...) into that one where the CPU runs it. kScalar is the reference for
// the SSE kernels (separate multiply and add); kScalarFma is the reference for kAvx2Fma,
// kAvx512 and kNeon (fused multiply-add, std::fma): each pair evaluates the same
// arithmetic. A build has the kernels of its target: the SSE, AVX2 and AVX-512 ones on
// x86-64, NEON on ARM64 (4 lanes), and the scalar ones everywhere. kAvx512 (AVX-512F, with
// AVX2 and FMA) runs ragdolls 16 lanes at a time, in blocks of 16 (RagdollLaneWidth), and
// chains with the AVX2+FMA kernels; kAuto picks it where the CPU and the OS have it.
enum class Isa : uint8_t { kAuto, kScalar, kScalarFma, kSse2, kSse42, kAvx2Fma, kNeon, kAvx512 };
TENDON_API const char* ToString(Isa isa);
// Every instruction set but kAuto, the scalar references first.
inline constexpr Isa kConcreteIsas[] = {Isa::kScalar,  Isa::kScalarFma, Isa::kSse2,  Isa::kSse42,
                                        Isa::kAvx2Fma, Isa::kAvx512,    Isa::kNeon};
// Whether this build has a kernel for `isa` and this CPU can run it.
TENDON_API bool IsIsaSupported(Isa isa);

// A host wind sampler, called once per Step that runs a substep, with the simulation
// time in seconds; its result is used for every substep of that frame.
struct WindSampler {
  Vec3 (*sample)(double time_seconds, void* user) = nullptr;
  void* user = nullptr;
};

// Replaces the distance test: return true when the chain should simulate this frame.
// Called once per bound chain per frame, from the thread that called Step.
struct SimulatePredicate {
  bool (*should_simulate)(ChainId chain, Vec3 root_world, void* user) = nullptr;
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

// The most instances of one ragdoll archetype a world holds, bound or reserved.
inline constexpr int32_t kMaxRagdollInstances = 1 << 20;

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
};

// What a ray hit: a ragdoll part (ragdoll, part) or the static world (static_shape: the
// index in StaticWorldSettings order: planes, then spheres, capsules, boxes, heightfields,
// meshes).
struct RaycastHit {
  RagdollId ragdoll{};
  int32_t part = -1;
  int32_t static_shape = -1;
  Vec3 point{};
  Vec3 normal{};       // unit, facing the ray's origin side
  float distance = 0;  // m along the (unit) direction
};

// A ragdoll instance. Part frames cross the API in world space.
struct RagdollBinding {
  RagdollArchetypeId archetype{};
  // Where the build pose is placed in the world (when start_parts is empty). Scale 1.
  Transform placement{};
  // Optional: every part's world frame to start from (a pose taken from the animation).
  std::span<const Transform> start_parts{};
  Vec3 linear_velocity{};   // m/s, given to every part at bind (momentum into the fall)
  Vec3 angular_velocity{};  // rad/s, likewise
  // Every part's world frame is written here each Step; the identity of the binding.
  std::span<Transform> output_parts{};
  // Optional: up to 4 more places the part frames are written, in the host's layouts
  // (tendon/pose_layout.h; kLocalTrs writes each part's frame in the model's space).
  // Bones are the archetype's parts. Copied at bind.
  std::span<const PoseStream> pose_streams{};
  // When set, the root part is kinematic: it follows this world frame (read every Step)
  // and pulls the rest along by the joints.
  const Transform* kinematic_root = nullptr;
  // Freezing: a frozen ragdoll is static where it lies and reported as settled; only
  // WakeRagdoll or an impulse brings it back. freeze_when_asleep freezes it as it falls
  // asleep; freeze_after_seconds freezes it that long after binding whatever it is doing
  // (infinity disables the cap).
  bool freeze_when_asleep = false;
  float freeze_after_seconds = INFINITY;
  // Planar mode (2D games): when non-zero (unit), every part only moves in the plane with
  // this normal through its bind position and only turns about the normal.
  Vec3 planar_normal{};
  RagdollCollideMode collide_mode = RagdollCollideMode::kAll;
  // False binds it switched off (see World::SetRagdollEnabled).
  bool enabled = true;
};

// An instance of a chain archetype over host buffers (all read or written every Step the
// chain simulates; all must stay valid until UnbindChain).
struct ChainBinding {
  ChainArchetypeId archetype{};
  // The world transform the archetype's roots are relative to (e.g. the head bone's).
  const Transform* root_parent_world = nullptr;
  // The animated local transform of every bone: in archetype order, or where bone_map
  // says.
  std::span<const Transform> animated_local{};
  // Where the simulated local transforms go (same indexing). May alias animated_local
  // when the host re-animates every frame. The address of bone 0's output is the identity
  // of the binding: binding the same bones again returns the existing handle.
  std::span<Transform> output_local{};
  // Optional: bone k of the archetype is element bone_map[k] of animated_local and
  // output_local (a chain inside a whole-skeleton buffer). Empty: element k. Indices
  // must be distinct and inside both spans.
  std::span<const int32_t> bone_map{};
  // World frames for colliders attached to host frames (ColliderSettings::frame).
  std::span<const Transform> collider_frames{};
  // Optional: up to 4 more places the bones are written, in the host's layouts
  // (tendon/pose_layout.h): local TRS in its bone struct, model-space matrices, a skinning
  // palette. Bones are the archetype's, in settings order. Copied at bind.
  std::span<const PoseStream> pose_streams{};
};

struct PendulumBinding {
  PendulumSettings settings{};
  // The world frame of the joint that holds the accessory on (the hinge is its origin).
  const Transform* joint_world = nullptr;
  // The joint's accessory-side offset (accessory frame relative to the joint frame). Its
  // value at bind time is the worn pose; Step writes the swung offset here; unbinding
  // restores the bind-time value exactly. Also the identity of the binding.
  Transform* accessory_offset = nullptr;
};

class TENDON_API World {
 public:
  // Validates the settings (which field, why) and detects the instruction sets.
  static Result<std::unique_ptr<World>> Create(const WorldSettings& settings);
  // Writes nothing into host buffers (they may be gone already): call UnbindAll first to
  // hand every bone back to the animation.
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Result<ChainArchetypeId> BuildChainArchetype(const ChainArchetypeSettings& settings);
  // Bone count of a built archetype (0 for a stale id).
  int32_t ChainBoneCount(ChainArchetypeId archetype) const;
  // Forgets an archetype (its id is stale from then on); kInUse while instances of it are
  // bound, and for a ragdoll archetype a character archetype was built on.
  Error RemoveChainArchetype(ChainArchetypeId archetype);
  Error RemoveRagdollArchetype(RagdollArchetypeId archetype);
  Error RemoveCharacterArchetype(CharacterArchetypeId archetype);

  // Validates a ragdoll (or one-part prop) and derives its mass properties and joint
  // frames once; instances of it are bound with BindRagdoll.
  Result<RagdollArchetypeId> BuildRagdollArchetype(const RagdollSettings& settings);
  int32_t RagdollPartCount(RagdollArchetypeId archetype) const;  // 0 for a stale id
  Error GetRagdollPartInfo(RagdollArchetypeId archetype, int32_t part, RagdollPartInfo* out) const;

  // The static world ragdoll parts collide with; replaces the previous one.
  Error BuildStaticWorld(const StaticWorldSettings& settings);
  Result<RagdollId> BindRagdoll(const RagdollBinding& binding);
  // Frees the instance; its output keeps the last written pose. kInUse for a character's
  // ragdoll (UnbindCharacter frees it).
  Error UnbindRagdoll(RagdollId ragdoll);
  bool IsValid(RagdollId ragdoll) const;
  // Switches a bound ragdoll on or off without unbinding it. A disabled ragdoll is not
  // stepped, collides with nothing and costs the solver nothing (its lane moves out of the
  // stepped range); Step leaves its output alone, so the host (or a character) may write
  // any pose there, and RaycastRagdolls still hits the parts where the output says they
  // are. Enabling wakes it from the state it held (SetRagdollPartStates to move it first);
  // whatever it then overlaps (another ragdoll that came to rest in its space while it
  // collided with nothing, a static world rebuilt through it) is pushed out at
  // ragdoll_max_push_speed, as after a placement.
  // Never allocates.
  Error SetRagdollEnabled(RagdollId ragdoll, bool enabled);
  bool IsRagdollEnabled(RagdollId ragdoll) const;
  // Makes the root part kinematic, following `root` (read every Step; must stay valid), or
  // dynamic again (null). Allocates a lane the first time an instance of the archetype
  // switches, unless ReserveRagdollKinematicToggle reserved one.
  Error SetRagdollKinematicRoot(RagdollId ragdoll, const Transform* root);
  // Sets one part's linear velocity (m/s, at the part's origin) and angular velocity
  // (rad/s), waking the ragdoll. A kinematic part ignores it.
  Error SetRagdollPartVelocity(RagdollId ragdoll, int32_t part, Vec3 linear, Vec3 angular);
  // Whether it may fall asleep (a powered character may not: its motors keep moving it),
  // and freezing as in RagdollBinding. Turning sleep off wakes it; turning it back on
  // restarts the sleep and freeze_after clocks (a body gone limp counts from then).
  Error SetRagdollSleeping(RagdollId ragdoll, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds);
  // Reserves lanes so that `instances` more instances of `archetype` can switch their
  // kinematic root on and off without allocating (negative: gives reservations back when
  // such instances are unbound; lanes already made stay). kCapacity past
  // kMaxRagdollInstances reserved per archetype.
  Error ReserveRagdollKinematicToggle(RagdollArchetypeId archetype, int32_t instances);
  // Puts every part at a world frame with a linear velocity (m/s, at the part's origin) and
  // an angular velocity (rad/s); empty spans mean at rest. Forgets contacts and wakes it.
  Error SetRagdollPartStates(RagdollId ragdoll, std::span<const Transform> parts, std::span<const Vec3> linear = {},
                             std::span<const Vec3> angular = {});
  // Wakes (and unfreezes) a ragdoll; its sleep timer starts again.
  Error WakeRagdoll(RagdollId ragdoll);
  // Applies an impulse (N s) at a world point of a part, waking the ragdoll. kInactive
  // while it is switched off (SetRagdollEnabled(false)): nothing is stored for later.
  Error ApplyRagdollImpulse(RagdollId ragdoll, int32_t part, Vec3 impulse, Vec3 world_point);
  // The first ragdoll part (RaycastRagdolls) or static shape (RaycastStatic) a ray meets
  // within max_distance; direction need not be unit. False when nothing is hit or the ray
  // is not finite. `hit` may be null: then only whether something is hit. Reads the last
  // Step's poses; safe to call between Steps.
  bool RaycastRagdolls(Vec3 origin, Vec3 direction, float max_distance, RaycastHit* hit) const;
  bool RaycastStatic(Vec3 origin, Vec3 direction, float max_distance, RaycastHit* hit) const;

  // Motor targets: for each part j >= 1, the rotation of its frame relative to its parent
  // part's frame (what the animation's local rotation says), and optionally the relative
  // angular velocity in the parent part's frame (rad/s). strength in [0, 1] scales every
  // motor's torque cap; 0 turns the motors off. Entry 0 (the root) is ignored.
  Error SetRagdollMotorTargets(RagdollId ragdoll, std::span<const Quat> local_rotations, float strength,
                               std::span<const Vec3> local_angular_velocities = {});
  bool IsRagdollAsleep(RagdollId ragdoll) const;
  bool IsRagdollFrozen(RagdollId ragdoll) const;
  // Every part's centre-of-mass velocity (m/s) and angular velocity (rad/s), world space.
  Error GetRagdollVelocities(RagdollId ragdoll, std::span<Vec3> linear, std::span<Vec3> angular) const;

  // Characters (character.h). Building validates the skeleton and the parts (which item,
  // which field, why) and builds the ragdoll archetype under them.
  Result<CharacterArchetypeId> BuildCharacterArchetype(const CharacterSettings& settings);
  int32_t CharacterPartCount(CharacterArchetypeId archetype) const;  // 0 for a stale id
  Error GetCharacterPartInfo(CharacterArchetypeId archetype, int32_t part, CharacterPartInfo* out) const;
  // A part by its name ("LeftLowerArm") or its bone's name, matched as the humanoid table
  // matches names (ignoring case, '_', '.', ' ', '-' and a "prefix:"); -1 when there is none.
  int32_t FindCharacterPart(CharacterArchetypeId archetype, std::string_view name) const;
  // Binds an inactive character: all its storage (and its switched-off ragdoll) is made
  // here; activating and deactivating never allocate. Binding the same output_local again
  // returns the existing handle.
  Result<CharacterId> BindCharacter(const CharacterBinding& binding);
  // Releases it if active (an Ended event, reason kRemoved), frees its ragdoll and writes
  // the animated locals to output_local.
  Error UnbindCharacter(CharacterId character);
  // Moves a bound character to new host buffers, keeping its ragdoll, state and timers.
  Error RebindCharacter(CharacterId character, const CharacterBinding& binding);
  bool IsValid(CharacterId character) const;
  // Hands the bones to physics from the pose the character shows: every part keeps the
  // motion of its last two frames, plus the options' launch velocity and impulse. False
  // when it is already active (kInUse), the handle is stale, an option is out of range
  // (release_blend_seconds within [0, 1e4]) or max_active_characters is 0 (kCapacity);
  // `why`, when given, says which. Cancels a running GoLimp.
  bool ActivateCharacter(CharacterId character, const CharacterActivateOptions& options = {}, Error* why = nullptr);
  // Hands the bones back to the animation, crossfading from the ragdoll pose over
  // blend_seconds (0: a cut). A no-op when inactive. `space` says where the fading pose is
  // held (HandBackSpace): by default, in the world for a body that fell, so the get-up
  // recipe works in one frame: model_world = GetCharacterRecoveryRoot(...) (the host's
  // root bone placement), start the get-up clip, DeactivateCharacter(c, 0.3f).
  Error DeactivateCharacter(CharacterId character, float blend_seconds = 0.0f,
                            HandBackSpace space = HandBackSpace::kAuto);
  // How hard the joints pull toward the animated pose, [0, 1]; persists across activations.
  Error SetCharacterStrength(CharacterId character, float strength);
  // The hips follow the animation kinematically (a stagger, not a fall); persists.
  Error SetCharacterAnchored(CharacterId character, bool anchored);
  // A flinch: an inactive character powers up anchored at options.strength, the part takes
  // the impulse (N s at a world point), and after duration_seconds the bones go back to the
  // animation through blend_seconds (its own strength and anchor restored). On an active
  // body it is only the impulse. False for a stale handle, a bad part or bad options
  // (durations and blends within [0, 1e4] s); `why`, when given, says which.
  bool HitCharacter(CharacterId character, int32_t part, Vec3 impulse, Vec3 world_point,
                    const CharacterHitOptions& options = {}, Error* why = nullptr);
  // The joints give way: strength eases linearly to 0 over `seconds` ([0, 1e4]; under 1 ms:
  // at once), the anchor comes off now. kInactive unless active.
  Error GoLimp(CharacterId character, float seconds = 0.4f);
  // N s on the whole body: every part's velocity changes by impulse / total mass.
  Error ApplyCharacterImpulse(CharacterId character, Vec3 impulse);
  Error ApplyCharacterPartImpulse(CharacterId character, int32_t part, Vec3 impulse, Vec3 world_point);
  Error GetCharacterState(CharacterId character, CharacterState* out) const;
  // Where to stand it up: the root (hips) frame upright (its rest orientation turned by the
  // body's yaw) and lifted by leg_room metres.
  Error GetCharacterRecoveryRoot(CharacterId character, float leg_room, Transform* out) const;
  RagdollId CharacterRagdoll(CharacterId character) const;       // null for a stale handle
  CharacterId CharacterOfRagdoll(RagdollId ragdoll) const;       // null when none
  // Moves up to out.size() queued events (oldest first) into `out` and returns how many.
  // Events are queued by Step and by the calls above; FrameStats counts any dropped.
  int32_t DrainCharacterEvents(std::span<CharacterEvent> out);
  int32_t ActiveCharacterCount() const;
  int32_t BoundCharacterCount() const;

  // Binds an instance; it starts at its animated pose on its first simulated frame.
  Result<ChainId> BindChain(const ChainBinding& binding);
  // Writes every bone's last animated local transform to output_local, exactly, and frees
  // the handle. kStaleHandle when the handle is not live.
  Error UnbindChain(ChainId chain);
  // Moves a bound chain to new host buffers (an ECS chunk move, a reallocated vector),
  // keeping its simulated state: the same checks as BindChain, the same archetype.
  Error RebindChain(ChainId chain, const ChainBinding& binding);
  bool IsValid(ChainId chain) const;

  Result<PendulumId> BindPendulum(const PendulumBinding& binding);
  Error UnbindPendulum(PendulumId pendulum);
  bool IsValid(PendulumId pendulum) const;

  // A non-finite position is ignored (the last good one stays) and counted in the next
  // Step's FrameStats::snapped_bad_input.
  // Unbinds everything: characters (Ended events for active ones, animated locals written),
  // chains (animated locals written), pendulums (rest offsets written) and ragdolls
  // (outputs keep the last pose). Returns how many instances it unbound.
  int32_t UnbindAll();

  void SetCamera(Vec3 position);
  void SetWindSampler(WindSampler sampler);  // null sample: ambient wind
  void SetSimulatePredicate(SimulatePredicate predicate);  // null: distance test
  // Changes the budget between frames (e.g. from a device benchmark). kOutOfRange below 0.
  Error SetMaxChains(int32_t max_chains);
  // Routes every phase, task and frame counter into the host's profiler (see
  // profiler_hooks.h); empty hooks detach. kOutOfRange when only one of zone_begin and
  // zone_end is set; kReentrant during a frame.
  Error SetProfilerHooks(const ProfilerHooks& hooks);
  // A Chrome trace: SetProfilerHooks(writer->hooks()); null detaches.
  void SetTraceWriter(TraceWriter* writer);

  // Advances the simulation by dt seconds and writes poses. Never fails; see FrameStats.
  // Host callbacks run inside it (the wind sampler, the simulate predicate, the trace
  // writer, the task hooks): a World call from one that would change the world returns
  // kReentrant (false, or nothing, for calls without an Error) and changes nothing, and a
  // nested Step returns the last frame's stats. Queries are safe from callbacks.
  const FrameStats& Step(float dt);

  // Step in two halves, for a pre-render job that overlaps: BeginStep starts the frame and
  // FinishStep waits for it and returns its stats. The frame has two lanes:
  //   - lane 0: characters and ragdolls (the substeps), then the chains that depend on
  //     them: a chain one of whose host buffers (root_parent_world, animated_local,
  //     output_local, collider_frames, pose streams) a ragdoll or character also reads or
  //     writes, such as a hair chain hanging from a character's output_world[head];
  //   - lane 1: every other chain, which runs while the ragdoll substeps are in flight.
  // Pendulums, counters and the trace run in FinishStep. Both halves (and Step) give the
  // same bits for any worker count: chains' lanes never share memory.
  //
  // Threads: BeginStep hands the two lanes to WorldSettings::tasks as one job of 2 items
  // (enqueue) and returns; FinishStep calls finish. Inside the lanes each phase splits its
  // work through the same hooks, so enqueue and finish are then also called from the
  // host's workers (nested). tendon::TbbTaskSystem runs the job asynchronously and nested
  // calls inside it; a host job system must allow nesting to use BeginStep. Without task
  // hooks, BeginStep runs the whole frame and FinishStep only closes it.
  //
  // Between the two, the host may do anything except call this World's mutating calls
  // (kReentrant, as from inside Step) or touch the bound buffers: queries read a frame
  // half written. BeginStep returns false and does nothing while a frame is in flight;
  // FinishStep without a frame in flight returns the last stats. Step while a frame is in
  // flight returns the last stats. Destroying the World waits for a frame in flight.
  bool BeginStep(float dt);
  const FrameStats& FinishStep();
  // Between BeginStep and FinishStep. (LastStats then returns the last whole frame's.)
  bool FrameInFlight() const;
  const FrameStats& LastStats() const;

  // The settings the World runs with: the host's, with a device profile applied
  // (from_device_profile says which came from it; device_profile is null here).
  const WorldSettings& Settings() const;
  Isa ActiveIsa() const;
  int32_t LaneWidth() const;  // chain lanes per block (a layout constant of this build)
  // Ragdoll lanes per block: the rigid kernel's, picked with the World's instruction set
  // (16 on kAvx512, else 8). A block is solved whole: fewer instances than this in a
  // topology still cost one block.
  int32_t RagdollLaneWidth() const;
  // Whether the chain simulated in the last Step.
  bool IsSimulated(ChainId chain) const;
  // The simulated world positions of a chain's nodes (its animated pose while it sleeps).
  Error GetChainNodePositions(ChainId chain, std::span<Vec3> out) const;
  // The current bob position and swing angle (radians) of a pendulum; either output may be
  // null (not wanted).
  Error GetPendulumState(PendulumId pendulum, Vec3* bob, float* swing_radians) const;
  // A hash of every simulated chain's, pendulum's and ragdoll's (so every character's)
  // state, in handle order, for determinism checks across worker counts and instruction
  // sets.
  uint64_t StateHash() const;

  struct Impl;

 private:
  friend struct detail::WorldAccess;
  explicit World(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tendon
