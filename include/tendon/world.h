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
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "tendon/chain_settings.h"
#include "tendon/contact_events.h"
#include "tendon/character.h"
#include "tendon/debug_draw.h"
#include "tendon/errors.h"
#include "tendon/export.h"
#include "tendon/follow.h"
#include "tendon/part_drive.h"
#include "tendon/host_body.h"
#include "tendon/ids.h"
#include "tendon/isa.h"
#include "tendon/math.h"
#include "tendon/pendulum_settings.h"
#include "tendon/pose_layout.h"
#include "tendon/profiler_hooks.h"
#include "tendon/query.h"
#include "tendon/ragdoll_settings.h"
#include "tendon/snapshot.h"
#include "tendon/stats.h"
#include "tendon/task_hooks.h"
#include "tendon/world_settings.h"

namespace tendon {

class TraceWriter;
struct NetPose;  // tendon/net_snapshot.h
struct NetCharacterState;
namespace detail {
struct WorldAccess;
}

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
  // Forgets an archetype (its id is stale from then on; a later build reuses its slot under
  // a newer id); kInUse while instances of it are bound, and for a ragdoll archetype a
  // character archetype was built on.
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

  // Grab, drag, hold, push and throw (tendon/part_drive.h; docs/ragdolls.md). A part drive
  // pulls a point of a part toward a world target every substep (at most kMaxPartDrives
  // per ragdoll; the ragdoll must be switched on); it wakes the ragdoll, and goes (its
  // handle stale) when removed or when its ragdoll is switched off (a character
  // deactivated) or unbound. Past its break distance it lets go: GetPartDriveState says
  // broken, FrameStats::broken_drives counts it that frame, and the handle stays until
  // RemovePartDrive. On release the part keeps the velocity it has.
  Result<PartDriveId> AddPartDrive(RagdollId ragdoll, const PartDriveSettings& settings);
  Error SetPartDriveTarget(PartDriveId drive, Vec3 target);  // wakes the ragdoll
  Error RemovePartDrive(PartDriveId drive);
  Error GetPartDriveState(PartDriveId drive, PartDriveState* out) const;
  bool IsValid(PartDriveId drive) const;
  // m/s^2 added to gravity on every dynamic part, every substep, until changed (zero: off;
  // |a| <= 1e5). Kept while the ragdoll is switched off; wakes it.
  Error SetRagdollAcceleration(RagdollId ragdoll, Vec3 acceleration);
  // A force (N, |F| <= 1e8) at a part's centre of mass, every substep until changed (zero:
  // off). At most kMaxPartForces parts of a ragdoll at once (kCapacity past that). Wakes it.
  Error SetRagdollPartForce(RagdollId ragdoll, int32_t part, Vec3 force);
  // Every dynamic part leaves with the velocity ThrowSpeed(strength, unanchored mass,
  // min_speed, max_speed) (tendon/landing.h) along the unit direction, no spin; wakes it and
  // returns that velocity. kInactive while the ragdoll is switched off.
  Result<Vec3> ThrowRagdoll(RagdollId ragdoll, Vec3 direction, float strength, float min_speed, float max_speed);
  // Every part's centre-of-mass velocity (m/s) and angular velocity (rad/s), world space.
  Error GetRagdollVelocities(RagdollId ragdoll, std::span<Vec3> linear, std::span<Vec3> angular) const;
  // Every part's world frame as the last Step left it (what the binding's output_parts
  // holds), for any ragdoll: a character's too, whose buffers the host never sees. `out`
  // holds at least the part count (at most kMaxRagdollParts, 64); returns the part count.
  Result<int32_t> GetRagdollPartTransforms(RagdollId ragdoll, std::span<Transform> out) const;

  // ---- host bodies (tendon/host_body.h) ----
  // A kinematic shape the host moves (a player's capsule, a car, a platform, a door):
  // ragdoll parts collide with it one way, chains by their archetype's host_body_mask.
  // Bodies alike (shape, size, surface, filter) share an internal archetype and its lanes;
  // adding, moving or removing one never rebuilds the static world. Allocates.
  Result<HostBodyId> AddHostBody(const HostBodySettings& settings);
  Error RemoveHostBody(HostBodyId body);
  bool IsValid(HostBodyId body) const;
  // The body is at `transform` now and moves on with these velocities (m/s at its origin,
  // rad/s) through the next frames' substeps until told otherwise: set it every frame from
  // the host's own simulation. The velocity is what friction and restitution see.
  Error SetHostBodyMotion(HostBodyId body, const Transform& transform, Vec3 linear_velocity, Vec3 angular_velocity);
  // The body reaches `target` at the end of the next frame that steps, moving there at the
  // velocity that takes it (derived over that frame's fixed steps, then kept): for a host
  // that only knows where its body is each frame (an animated door).
  Error MoveHostBodyTo(HostBodyId body, const Transform& target);
  // Where the body is after the last Step, its velocities, and (triggers) how many
  // ragdoll parts overlapped it in that Step.
  Error GetHostBodyState(HostBodyId body, HostBodyState* out) const;
  int32_t HostBodyCount() const;

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
  // (release_blend_seconds within [0, 1e4]), max_active_characters is 0 (kCapacity), or
  // the pose it shows gives non-finite part velocities or motor targets (kNotFinite:
  // checked before anything changes, so no other character is released for it); `why`,
  // when given, says which. Cancels a running GoLimp.
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
  // Contact and impact events (tendon/contact_events.h): moves up to out.size() of the
  // events the last Step queued (in their deterministic order) into `out` and returns how
  // many. Each Step starts a fresh queue: events not drained by then are dropped and
  // counted (FrameStats::dropped_contact_events). 0 while a Step is in flight.
  int32_t DrainContactEvents(std::span<ContactEvent> out);
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
  // Draws what the solver sees through the host's primitives (tendon/debug_draw.h): the
  // parts `flags` (DebugDrawFlags bits) pick, from the last substep's state. Call it between
  // Steps: kReentrant inside Step, between BeginStep and FinishStep, or from one of its own
  // callbacks (which may query but not change the world); kOutOfRange for a flag outside
  // DebugDrawFlags::kAll or a length of `draw` outside [0, 1e3] m (naming the field).
  // Read-only, allocates nothing; Step costs the same whether a host draws or not.
  Error DrawDebug(const DebugDraw& draw, uint32_t flags) const;
  // A hash of every simulated chain's, pendulum's and ragdoll's (so every character's)
  // state, in handle order, for determinism checks across worker counts and instruction
  // sets.
  uint64_t StateHash() const;

  // ---- saved states (tendon/snapshot.h; docs/snapshots.md) ----
  // The whole simulation state into `out` (the caller's; at least SavedStateSize() bytes:
  // kNullBuffer otherwise, naming the size needed, and `out` holds nothing of use); returns
  // the bytes written. Restoring
  // it, here or into a World built the same way (same settings, archetypes, and instances
  // bound in the same order), and stepping on gives the same bits as stepping on from
  // here. Between Steps only (kReentrant inside Step or while a frame is in flight; the
  // Saved*StateSize calls return 0 then). Neither allocates, except restoring a kinematic
  // root onto an instance whose archetype has no lane reserved for one (tendon/snapshot.h).
  std::size_t SavedStateSize() const;
  Result<std::size_t> SaveState(std::span<std::byte> out) const;
  // Checks everything, then writes: a refused buffer (truncated, foreign, corrupted, of
  // another version, kind or World, non-finite) changes nothing; the Error says why.
  Error RestoreState(std::span<const std::byte> in);
  // One instance's state: a ragdoll's (its lane, sleep clocks, output and part drives), a
  // character's (its state machine, timers, crossfade, motor targets, and its ragdoll's
  // and kinematic copy's records), a chain's. Restored into the instance given (of the
  // same archetype); what is shared with other instances (contact memory between
  // ragdolls, the clock) is the whole World's state only.
  std::size_t SavedRagdollStateSize(RagdollId ragdoll) const;  // 0 for a stale handle or mid-frame
  Result<std::size_t> SaveRagdollState(RagdollId ragdoll, std::span<std::byte> out) const;
  Error RestoreRagdollState(RagdollId ragdoll, std::span<const std::byte> in);
  std::size_t SavedCharacterStateSize(CharacterId character) const;
  Result<std::size_t> SaveCharacterState(CharacterId character, std::span<std::byte> out) const;
  Error RestoreCharacterState(CharacterId character, std::span<const std::byte> in);
  std::size_t SavedChainStateSize(ChainId chain) const;
  Result<std::size_t> SaveChainState(ChainId chain, std::span<std::byte> out) const;
  Error RestoreChainState(ChainId chain, std::span<const std::byte> in);

  // ---- following received poses, and the ownership handover (tendon/follow.h;
  // docs/snapshots.md) ----
  // The ragdoll's parts are steered toward the pose the pushed samples give at
  // FollowClock - settings.interpolation_delay_seconds, as dynamic bodies (they push and
  // are pushed). Allocates its ring of samples. kStaleHandle, kInactive for a switched-off
  // ragdoll, kInUse for a character's (its character drives it), kOutOfRange naming the
  // setting. Following already: the new settings, the samples kept.
  Error FollowRagdoll(RagdollId ragdoll, const FollowSettings& settings);
  // A received sample: the sender's time (s), every part's world frame, and optionally
  // every part's centre-of-mass velocity (m/s) and angular velocity (rad/s) as the
  // sender's GetRagdollVelocities reads them (both or neither). Late and out of order is
  // fine; one older than the newest sample already played, or a duplicate time, is
  // dropped (Ok). kInactive when not followed; kNullBuffer for a part count other than the
  // ragdoll's; kNotFinite naming the part. Never allocates.
  Error PushFollowSample(RagdollId ragdoll, double sample_time, std::span<const Transform> parts,
                         std::span<const Vec3> linear = {}, std::span<const Vec3> angular = {});
  // The handover: the ragdoll simulates on from the positions and velocities it has (no
  // jump, no velocity reset), with its own SetRagdollAcceleration back on. kInactive when
  // not followed. Following it again later is FollowRagdoll.
  Error StopFollowing(RagdollId ragdoll);
  bool IsFollowing(RagdollId ragdoll) const;
  // Sets the follow clock to `now` (the senders' time base, s) at this World's current
  // simulated time; it then advances with the World's fixed steps. Until called, the
  // follow clock is the World's simulated time (two Worlds started together agree).
  Error SetFollowClock(double now);
  double FollowClock() const;
  // ---- network snapshots (tendon/net_snapshot.h; docs/snapshots.md) ----
  // The ragdoll's pose as a network message wants it: every part's world frame at the
  // World's time into out->parts (exactly RagdollPartCount parts: kNullBuffer otherwise),
  // its velocities (GetRagdollVelocities) into out->linear and out->angular when they are
  // not empty (that size then), and out->asleep (asleep or frozen). The frames are the last
  // substep's, as the velocities are: after a Step, what the output shows without render
  // interpolation (bit for bit), a substep ahead of the output with it, so a pose stamped
  // with this frame's tick is not played a substep late.
  // out->tick is left as the caller set it. kStaleHandle for a stale handle; kReentrant
  // inside Step.
  Error CaptureRagdollPose(RagdollId ragdoll, NetPose* out) const;
  // The character's state as a message: its generation, active, anchored, strength, and
  // limp while a GoLimp is easing it (limp_seconds: what is left of it); no impulse.
  Error CaptureNetCharacterState(CharacterId character, NetCharacterState* out) const;
  // Makes the character do what the message says (ActivateCharacter, DeactivateCharacter
  // with no blend, SetCharacterStrength, SetCharacterAnchored, GoLimp, ApplyCharacterImpulse)
  // and takes the message's generation as its own. Returns false, changing nothing, for a
  // stale message: a generation older than the character's, or an activation of the
  // generation it already ended. kReentrant inside Step; kStaleHandle; kOutOfRange /
  // kNotFinite for a value outside its range (naming the field).
  Result<bool> ApplyNetCharacterState(CharacterId character, const NetCharacterState& state);

  struct Impl;

 private:
  friend struct detail::WorldAccess;
  explicit World(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tendon
