// kernel/ragdolls/ragdoll_system.h: ragdolls: their archetypes, their lanes by archetype,
// the host's controls over each instance, and the ragdoll frame.
//
// What it does: BuildArchetype validates ragdoll settings once. Instances of one archetype
// share blocks of the World's width in lanes (8, or 16 with AVX-512) (one group with a
// kinematic root, one without); Bind sizes everything an instance will touch, including
// the contacts between ragdolls. The controls: enabled or not (a disabled instance is
// packed behind the enabled ones and costs the solver nothing), a kinematic root (the
// instance moves to the other group, state and all), sleeping rules, part states and
// velocities, impulses, motor targets, and Activate, all of a character's activation in
// one call. Step runs the frame's stages (ragdoll_frame.cpp):
//   Prepare     per block: kinematic roots follow their host frames (a moving one wakes
//               its ragdoll); the pairs' depenetration and render interpolation roll over
//   FindPairs   serial, with two or more ragdolls enabled: the broad phase, the pairs'
//               contacts, then the islands of the pairs with one, once for the frame
//   Solve       the XPBD substeps of the rigid kernels with the pairs inside them: per
//               block all at once when no pair has a contact; else per domain
//               (ragdoll_domains.h), or substep by substep over blocks and islands
//   Writeback   per block: resets of non-finite lanes, sleep, the part frames written to
//               the host (render-interpolated)
// It owns the systems of contacts between ragdolls (BroadPhase, Islands, PairContacts),
// the domains and Sleep, and composes them. The files, one concept each: ragdoll_system.cpp
// (construction and archetypes), ragdoll_binding.cpp (bind, unbind, reservations),
// ragdoll_lanes.cpp (groups and lane moves), ragdoll_controls.cpp (the host's controls),
// ragdoll_queries.cpp (queries, raycasts, hashing, host buffers), ragdoll_drives.cpp (part
// drives, acceleration, part forces, the throw), ragdoll_frame.cpp (Step),
// ragdoll_domains.cpp (the frame's domains).
// What it does NOT do: keep time (the World's clock gives substeps), own the static world
// (the World does; Step reads it), or know of characters (they sit above and drive
// ragdolls through these calls).
// Threading: Step splits its work over the host's task hooks (blocks, ragdolls, pairs,
// islands, and domains: a frame's blocks that no pair joins run their substeps as one task
// each); results do not depend on the worker count. Every other call is for the World's
// thread, between Steps.
// Memory: Bind, ReserveKinematicToggle, AddPartDrive (its handle table) and a first
// SetKinematicRoot or Activate that moves an instance to a group with no lane reserved
// allocate; Step and the other controls do not.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernel/contacts/broad_phase.h"
#include "kernel/contacts/islands.h"
#include "kernel/contacts/pair_contacts.h"
#include "kernel/core/frame_counters.h"
#include "kernel/core/snapshot_io.h"
#include "kernel/ragdolls/part_energy.h"
#include "kernel/ragdolls/ragdoll_domains.h"
#include "kernel/rigid/ragdoll_archetype.h"
#include "kernel/rigid/ragdoll_store.h"
#include "kernel/rigid/sleep.h"
#include "tendon/profiler_hooks.h"
#include "tendon/contact_events.h"
#include "tendon/errors.h"
#include "tendon/ids.h"
#include "tendon/isa.h"
#include "tendon/math.h"
#include "tendon/part_drive.h"
#include "tendon/query.h"
#include "tendon/ragdoll_settings.h"
#include "tendon/stats.h"
#include "tendon/task_hooks.h"

namespace tendon::detail {

class StaticWorld;
struct RigidKernels;

// What a ragdoll system is built with (from WorldSettings, whose fields these mirror).
struct RagdollSystemSettings {
  TaskHooks tasks{};
  Vec3 gravity{};
  int32_t ragdoll_substeps = 16;
  int32_t ragdoll_iterations = 2;
  float ragdoll_contact_angular_damping = 0;
  float ragdoll_max_push_speed = INFINITY;
  float ragdoll_sleep_speed = 0;
  float ragdoll_sleep_seconds = 0;
  float ragdoll_settle_damping = 0;
  int32_t contact_event_capacity = 0;  // events one Step queues (0: off; tendon/contact_events.h)
};

// Everything switching a ragdoll on for a character sets, for RagdollSystem::Activate: what
// SetKinematicRoot, SetMotorTargets, SetSleeping, SetPartStates and SetEnabled(true) would
// set one call at a time, each with its own checks and lane moves.
struct RagdollActivation {
  // The kinematic root's host frame (read every Step while bound), or null: none.
  const Transform* kinematic_root = nullptr;
  // Motor targets (SetMotorTargets): part-relative rotations, one per part (part 0's is
  // ignored); the strength in [0, 1]; angular velocities (empty: zero).
  std::span<const Quat> motor_targets;
  float motor_strength = 0;
  std::span<const Vec3> motor_angular_velocities;
  // Sleeping rules (SetSleeping).
  bool can_sleep = true;
  bool freeze_when_asleep = false;
  float freeze_after_seconds = INFINITY;
  // Part frames to start from, one per part, and their velocities at the parts' origins
  // (SetPartStates; empty: zero).
  std::span<const Transform> parts;
  std::span<const Vec3> linear, angular;
};

class RagdollSystem {
 public:
  RagdollSystem(const RagdollSystemSettings& settings, const RigidKernels& kernels);
  ~RagdollSystem();
  // PairContacts holds references into this object.
  RagdollSystem(const RagdollSystem&) = delete;
  RagdollSystem& operator=(const RagdollSystem&) = delete;

  // ---- archetypes (ragdoll_system.cpp) ----
  Result<RagdollArchetypeId> BuildArchetype(const RagdollSettings& settings);
  int32_t PartCount(RagdollArchetypeId id) const;
  Error GetPartInfo(RagdollArchetypeId id, int32_t part, RagdollPartInfo* out) const;
  const RagdollArchetype* Archetype(RagdollArchetypeId id) const;
  // Bound instances (enabled or not).
  int32_t LiveCount() const { return static_cast<int32_t>(store_.handles.LiveCount()); }
  // Forgets an archetype and frees its lanes; kInUse while instances of it are bound.
  Error RemoveArchetype(RagdollArchetypeId id);

  // ---- kinematic bodies the World moves (ragdoll_kinematic.cpp) ----
  // An archetype of `settings` whose every part is kinematic, moved along the velocity it
  // is given (a host body; a character's animated twin); trigger: it meets parts as
  // overlaps (TriggerOverlaps) and pushes nothing.
  Result<RagdollArchetypeId> BuildKinematicArchetype(const RagdollSettings& settings, bool trigger);
  // An instance the World makes for itself (kind: RagdollSlotKind; owner: the host body's
  // or character's index and generation): never asleep, and not one of the host's ragdolls
  // (FrameStats, RaycastRagdolls and UnbindAll leave it out).
  Result<RagdollId> BindInternal(const RagdollBinding& binding, int32_t kind, uint32_t owner_index,
                                 uint32_t owner_generation);
  // A kinematic-body instance's part frames now and the velocities (at each part's
  // origin) it moves on with from there, until told otherwise.
  Error SetKinematicMotion(RagdollId id, std::span<const Transform> part_frames, std::span<const Vec3> linear,
                           std::span<const Vec3> angular);
  // The part frames it reaches at the end of the next frame that steps; the velocities are
  // derived then (and kept after it).
  Error SetKinematicTargets(RagdollId id, std::span<const Transform> part_frames);
  // The last frame's overlaps of trigger bodies with ragdoll parts: (trigger slot, ragdoll
  // slot, part), in the broad phase's order.
  std::span<const TriggerOverlap> TriggerOverlaps() const { return contacts_.TriggerOverlaps(); }
  const RagdollSlot& SlotForWorld(int32_t index) const { return store_.slots[index]; }
  int32_t InternalLiveCount() const { return internal_live_; }

  // ---- instances (World's calls of the same names, less "Ragdoll"; ragdoll_binding.cpp) ----
  Result<RagdollId> Bind(const RagdollBinding& binding);
  Error Unbind(RagdollId id);
  int32_t UnbindAll();  // every instance; their outputs keep the last pose
  bool IsValid(RagdollId id) const { return store_.handles.IsLive(id); }
  Error ReserveKinematicToggle(RagdollArchetypeId archetype, int32_t instances);

  // ---- the host's controls (ragdoll_controls.cpp) ----
  Error SetEnabled(RagdollId id, bool enabled);
  Error SetKinematicRoot(RagdollId id, const Transform* root);
  Error SetPartVelocity(RagdollId id, int32_t part, Vec3 linear, Vec3 angular);
  Error SetSleeping(RagdollId id, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds);
  Error SetPartStates(RagdollId id, std::span<const Transform> parts, std::span<const Vec3> linear,
                      std::span<const Vec3> angular);
  Error Wake(RagdollId id);
  Error ApplyImpulse(RagdollId id, int32_t part, Vec3 impulse, Vec3 world_point);
  Error SetMotorTargets(RagdollId id, std::span<const Quat> local_rotations, float strength,
                        std::span<const Vec3> local_angular_velocities);
  // A character's activation: the kinematic root, motor targets, sleeping rules and part
  // states of `activation`, then enabled, with one check of the id and at most one lane
  // move. The state it leaves is the one SetKinematicRoot, SetMotorTargets, SetSleeping,
  // SetPartStates and SetEnabled(true) would leave, called in that order; unlike them, it
  // checks everything first and writes nothing when anything is wrong.
  Error Activate(RagdollId id, const RagdollActivation& activation);

  // ---- the host's pushes (ragdoll_drives.cpp; World's calls of the same names) ----
  // A drive lives in one of the ragdoll's kMaxPartDrives lane slots until removed, broken,
  // or its ragdoll is switched off or unbound (which remove it: its handle goes stale).
  // A broken drive keeps its handle (state broken) until RemovePartDrive.
  Result<PartDriveId> AddPartDrive(RagdollId id, const PartDriveSettings& settings);
  Error SetPartDriveTarget(PartDriveId drive, Vec3 target);
  Error RemovePartDrive(PartDriveId drive);
  Error GetPartDriveState(PartDriveId drive, PartDriveState* out) const;
  bool IsValid(PartDriveId drive) const { return drive_handles_.IsLive(drive); }
  // The drives that broke in the last Step, in drive slot order (each listed once).
  std::span<const PartDriveId> BrokenDrives() const { return broken_drives_; }
  Error SetAcceleration(RagdollId id, Vec3 acceleration);
  Error SetPartForce(RagdollId id, int32_t part, Vec3 force);
  // The speed comes from `rule` (the World passes tendon/landing.h's ThrowSpeed, which the
  // character layer above owns) of the summed mass of the parts that are not kinematic.
  using ThrowSpeedRule = float (*)(float strength, float unanchored_mass, float min_speed, float max_speed);
  Result<Vec3> Throw(RagdollId id, Vec3 direction, float strength, float min_speed, float max_speed,
                     ThrowSpeedRule rule);

  // ---- following (kernel/follow/follow_system.h steers followed ragdolls through these;
  // ragdoll_queries.cpp) ----
  // Whether `id` is a live ragdoll of the host's (not one the World made for itself).
  bool IsHostRagdoll(RagdollId id) const { return IsValid(id) && store_.slots[id.index].internal == kHostRagdoll; }
  // Every part's body frame as its lane holds it now (its centre of mass and principal
  // axes: exact, unlike the render-interpolated output), into `bodies` (part_count).
  Error ReadBodyFrames(RagdollId id, std::span<Transform> bodies) const;
  // Every part's world frame as its lane holds it now (the last substep's): the output's
  // bits after a Step without render interpolation, a substep ahead of it with it.
  Error ReadPartFrames(RagdollId id, std::span<Transform> parts) const;
  // Where each part's body sits in its part frame (part_count entries; empty when stale).
  std::span<const Transform> BodyInPart(RagdollId id) const;
  bool IsDynamicPart(RagdollId id, int32_t part) const;
  // The lane's acceleration (SetAcceleration's; zero for a stale id).
  Vec3 Acceleration(RagdollId id) const;
  // Every dynamic part's centre-of-mass velocity and angular velocity (part_count each),
  // held to the part's speed caps; `wake`: wakes it (else its sleep clocks run on).
  void WriteBodyVelocities(RagdollId id, std::span<const Vec3> linear, std::span<const Vec3> angular, bool wake);

  // ---- queries (ragdoll_queries.cpp) ----
  bool IsEnabled(RagdollId id) const;
  bool IsAsleep(RagdollId id) const;
  bool IsFrozen(RagdollId id) const;
  Error GetVelocities(RagdollId id, std::span<Vec3> linear, std::span<Vec3> angular) const;
  Result<int32_t> GetPartTransforms(RagdollId id, std::span<Transform> out) const;
  // The nearest part a ray meets (exact part shapes, by sphere tracing).
  bool Raycast(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const;
  // Feeds every bound instance's lane state, in slot order.
  void HashState(StateHasher& hasher) const;
  // Debug validation (kernel/core/host_buffers.h): every bound ragdoll's host buffers, or
  // the one of `only` when it is live.
  void CheckHostBuffers(RagdollId only = RagdollId{}) const;
  // Whether [data, data + bytes) overlaps a host buffer a bound ragdoll reads or writes
  // in its phase (output_parts, kinematic_root, pose streams).
  bool OverlapsHostBuffers(const void* data, std::size_t bytes) const;
  // The debug draw's read-only view (World::DrawDebug, tendon/debug_draw.h): the instances
  // and their lanes, and the last frame's pairs with a contact (the broad phase's kept
  // prefix, whose bodies may have moved lanes since: check PairBody against the slots)
  // with their contacts.
  const RagdollStore& StoreForDraw() const { return store_; }
  std::span<const PartPair> ContactPairsForDraw() const {
    return broad_.pairs().first(static_cast<std::size_t>(std::min(frame_.pair_count, broad_.pair_count())));
  }
  const BroadPhase& BroadPhaseForDraw() const { return broad_; }
  const PairContacts& ContactsForDraw() const { return contacts_; }
  // NaN into the root part's velocity (WorldAccess::PoisonRagdollState; tests only).
  void PoisonStateForTest(RagdollId id);
  // Each part's energy from its lane (WorldAccess::RagdollEnergy; tests only).
  Error EnergyForTest(RagdollId id, Vec3 gravity, std::span<PartEnergy> out) const;
  int32_t LaneForTest(RagdollId id) const { return IsValid(id) ? store_.slots[id.index].lane : -1; }

  // ---- the frame (ragdoll_frame.cpp) ----
  // XPBD substeps per fixed step from the next Step on, [1, ragdoll_substeps] (the World's
  // millisecond budget lowers it).
  void SetFrameSubsteps(int32_t substeps) { frame_substeps_ = std::clamp(substeps, 1, settings_.ragdoll_substeps); }
  // Moves each group's awake enabled lanes in front of its sleeping ones where that leaves
  // fewer blocks with an awake lane (the kernels skip a slice whose lanes all sleep); with
  // workers, within each worker's run of blocks, so no lane leaves its run. No result
  // depends on a lane's place. The World calls it on the caller's thread before a
  // stepping frame's lanes start (Step, and BeginStep before it returns), so lanes never
  // move while a frame is in flight for that reason. (ragdoll_lanes.cpp)
  void PackAwakeLanes(uint32_t thread);
  // `substeps` fixed steps of step_seconds each, every one ragdoll_substeps XPBD substeps.
  // Writes the ragdoll fields of `stats` (bound, disabled, simulated, sleeping, frozen,
  // substeps, pairs, islands), adds its resets to reset_non_finite and its non-finite
  // kinematic root frames (held where they were) to snapped_bad_input.
  // alpha < 1: render interpolation; every part frame written is alpha of the way from the
  // pose at the start of the last fixed step to the pose now (the start found along the
  // frame's path when it ran several; exact for one).
  // `thread`: the worker index of the thread it runs on (its zones' track in the host's
  // profiler; kTendonCallerThread on the thread that called World::Step).
  void Step(int32_t substeps, double step_seconds, float alpha, const StaticWorld& static_world, FrameStats& stats,
            uint32_t thread = kTendonCallerThread);
  // The World's profiler hooks, or null (kernel/core/profile.h). Between frames.
  void SetProfiler(const ProfilerHooks* profiler);
  // false: every frame with pairs runs substep by substep (the schedule domains must match).
  void SetDomainsForTest(bool enabled) { domains_enabled_ = enabled; }
  // The last frame's domains (RagdollDomains::Build; 0 or 1: it ran substep by substep).
  int32_t DomainsForTest() const { return last_domains_; }

  // ---- saved states (ragdoll_snapshot.cpp; tendon/snapshot.h) ----
  // Every bound instance's record (lanes, slot, sleep, output), in slot order, then the
  // system's own state: the frame's substeps, the contact events' memory, part drives.
  void SaveState(SnapshotWriter& w) const;
  // One pass of a restore (r.apply(): the writing pass; else the checking pass, which
  // writes nothing). `root_for`: the kinematic root frame to follow for a slot whose
  // saved record has one and whose instance has none now (a character's anchor), or
  // null (refused then).
  using RootProvider = const Transform* (*)(uint32_t slot, const void* context);
  void RestoreState(SnapshotReader& r, RootProvider root_for, const void* root_context);
  // One instance's record and its part drives' records.
  void SaveInstance(RagdollId id, SnapshotWriter& w) const;
  void RestoreInstance(RagdollId id, SnapshotReader& r, RootProvider root_for, const void* root_context);

  // ---- contact events (ragdoll_events.cpp) ----
  // Moves up to out.size() of the last Step's queued events into `out`, oldest first (the
  // World fills in their character and time).
  int32_t DrainContactEvents(std::span<ContactEvent> out);

 private:
  // What the stages of one Step share (BeginFrame fills it).
  struct Frame {
    int32_t substeps = 0;       // fixed steps
    int32_t work_count = 0;     // work items [0, work_count) of work_
    int32_t enabled = 0;        // enabled instances
    int32_t ragdoll_steps = 0;  // XPBD substeps over the frame
    int32_t pair_count = 0;     // pairs with a contact (FindPairs)
    float frame_seconds = 0;
    RigidSolveParams params;
  };

  bool Live(RagdollArchetypeId id) const;

  // Lanes (ragdoll_lanes.cpp).
  int32_t FindOrAddGroup(int32_t archetype, bool kinematic);
  RagdollGroup MakeGroup(int32_t archetype, bool kinematic) const;  // no lanes yet
  // Grows group `gi`'s blocks to hold `lanes` lanes plus its reserve (never in Step).
  void EnsureLanes(int32_t gi, int32_t lanes, bool with_reserve = true);
  void SwapLanes(RagdollGroup& g, int32_t a, int32_t b);
  void PackAwakeLanesOf(RagdollGroup& g);
  void EnableLane(RagdollSlot& slot);
  void DisableLane(RagdollSlot& slot);
  void RemoveLane(RagdollSlot& slot);
  void MoveToGroup(int32_t index, int32_t target);

  // Binding (ragdoll_binding.cpp).
  // Writes the slot's output frames into its pose streams (tendon/pose_layout.h).
  static void EmitStreams(RagdollSlot& slot);
  void ReserveContacts();

  // Controls (ragdoll_controls.cpp). Wake's effect on a slot already checked.
  void WakeSlot(RagdollSlot& slot);
  // The checks and the writes of SetMotorTargets and
  // SetPartStates, which Activate runs too.
  static Error CheckMotorTargets(const RagdollSlot& slot, std::span<const Quat> local_rotations, float strength,
                                 std::span<const Vec3> local_angular_velocities);
  void WriteMotorTargets(const RagdollSlot& slot, std::span<const Quat> local_rotations, float strength,
                         std::span<const Vec3> local_angular_velocities);
  static Error CheckPartStates(const RagdollSlot& slot, std::span<const Transform> parts, std::span<const Vec3> linear,
                               std::span<const Vec3> angular);
  void WritePartStates(RagdollSlot& slot, std::span<const Transform> parts, std::span<const Vec3> linear,
                       std::span<const Vec3> angular);

  // Pushes (ragdoll_drives.cpp). Removes every drive of ragdoll slot `index` (unbind,
  // switched off); refreshes a lane's kControlsOn from its push rows; the frame's break
  // test and distances (serial, from EndFrame, in drive slot order).
  void RemoveDrivesOf(uint32_t index, bool all_pushes);
  void RefreshControlsOn(const RagdollSlot& slot);
  void UpdateDrives(FrameStats& stats);
  // Queues a kDriveBroken event in the room AddPartDrive reserved past the contacts' capacity.
  void PushDriveEvent(const ContactEvent& event);

  // The frame's stages, in this order (ragdoll_frame.cpp). BeginFrame lists the work items
  // (blocks with enabled lanes) and the solve parameters; false: nothing is enabled.
  bool BeginFrame(int32_t substeps, double step_seconds, const StaticWorld& static_world, FrameStats& stats);
  void Prepare(uint32_t thread);
  void FindPairs(FrameStats& stats, uint32_t thread);
  void Solve(uint32_t thread);
  void Writeback(float alpha, uint32_t thread);
  void EndFrame(FrameStats& stats);
  // The kernel over work item i: 0 the whole substeps, 1 positions, 2 velocities; static
  // contacts found when find_static (a frame's first substep).
  void SolveBlock(int32_t i, int32_t which, bool find_static);
  // Kinematic bodies (ragdoll_kinematic.cpp).
  Error CheckKinematicBodies(RagdollId id) const;
  static void AimKinematicLane(RagdollSlot& slot, const RigidBlockView& view, int32_t l, float frame_seconds);
  static void AdvanceKinematic(const RigidBlockView& view, int32_t which, int32_t steps, float h);

  // Saved states (ragdoll_snapshot.cpp): one slot's record, and the drives' records of one
  // ragdoll slot (or all: only < 0).
  void SaveSlot(uint32_t index, SnapshotWriter& w) const;
  void RestoreSlot(uint32_t index, SnapshotReader& r, RootProvider root_for, const void* root_context,
                   bool same_slot = true);
  uint64_t GroupFingerprint(const RagdollGroup& g) const;
  void SaveDrives(int64_t only, SnapshotWriter& w) const;
  void RestoreDrives(int64_t only, SnapshotReader& r);

  // Contact events (ragdoll_events.cpp). StartContactEvents, at every Step: drops (and
  // counts) what the host left undrained and says whether this frame records impacts
  // (RigidSolveParams::record_impacts). ResetImpacts, in Prepare: a block's impact rows.
  // CollectContactEvents, serial between Solve and Writeback: the frame's began and ended
  // events, in slot, part, other-side order.
  void StartContactEvents(FrameStats& stats);
  bool RecordsImpacts() const;
  static void ResetImpacts(const RigidBlockView& view, int32_t part_count);
  void CollectContactEvents(FrameStats& stats);
  void CollectStaticEvents(int32_t slot_index);
  void CollectPairEvents();
  bool PushContactEvent(const ContactEvent& event);  // false: the queue is full (counted)
  // What side B is when the other ragdoll's slot is `slot`: a host body's slot is that
  // host body (kHostBody); a character's kinematic copy stands for the character's own
  // ragdoll (kRagdollPart, *ragdoll its id); any other slot is that ragdoll's part.
  ContactSideKind SideOfRagdoll(int32_t slot, HostBodyId* host_body, RagdollId* ragdoll) const;
  // Triggers' overlaps (PairContacts::TriggerOverlaps) that began or ended this frame,
  // against last frame's (keys: trigger slot << 26 | ragdoll slot << 6 | part, sorted).
  void CollectTriggerEvents();

  RagdollSystemSettings settings_;
  int32_t frame_substeps_ = settings_.ragdoll_substeps;
  const ProfilerHooks* profiler_ = nullptr;
  const RigidKernels* kernels_;
  std::vector<RagdollArchetype> archetypes_;
  std::vector<bool> removed_;  // per archetype: RemoveArchetype made its id stale
  // Per archetype: its id's generation. A removed slot is built into again under the next
  // one (the old id stays stale), its groups made again for the new archetype.
  std::vector<uint32_t> generation_;
  RagdollStore store_;
  std::unordered_map<const void*, int32_t> by_output_;
  int32_t last_fixed_steps_ = 1;  // fixed steps of the last frame that ran any
  bool domains_enabled_ = true;
  int32_t last_domains_ = 0;
  int32_t total_parts_ = 0;
  int32_t internal_live_ = 0;  // bound internal instances (BindInternal)
  int32_t internal_enabled_ = 0;  // of them enabled this frame (BeginFrame)
  Frame frame_;
  std::vector<RagdollWorkItem> work_;  // per block, sized at bind time
  std::vector<int32_t> resets_;        // per work item
  std::vector<int32_t> bad_inputs_;    // per work item: non-finite kinematic root frames
  std::vector<int32_t> group_first_work_;  // per group: its first work item this frame
  RagdollDomains domains_;
  Sleep sleep_;
  BroadPhase broad_;
  Islands islands_;
  PairContacts contacts_;
  // Contact events: this Step's queue (capacity reserved at construction), how far the
  // host drained it, and how many were lost this Step.
  std::vector<ContactEvent> events_;
  std::size_t events_read_ = 0;
  int32_t events_dropped_ = 0;
  // Pairs of parts of two ragdolls that touched in the last stepped frame (by PairKey),
  // sorted, and this frame's (swapped at the end of collection; reserved at bind).
  struct TouchingPair {
    uint64_t key = 0;
    uint32_t generation_low = 0, generation_high = 0;  // the two slots' handles' (a rebound slot is another ragdoll)
    bool reported = false;  // its began event was queued: it may end with one
    float speed = 0, impulse = 0;  // this frame's approach (m/s) and normal impulse (N s)
    Vec3 point{}, normal{};        // the low side's contact, normal toward it
  };
  // The event of a pair of touching parts, side A the low side when its archetype reports
  // contacts, else the high side; false when neither does (or a side is gone).
  bool PairEvent(const TouchingPair& t, ContactEventKind kind, ContactEvent* out,
                 const ContactEventSettings** settings) const;
  std::vector<TouchingPair> touching_pairs_, touching_next_;
  std::vector<uint64_t> overlapping_, overlapping_next_;  // triggers' overlaps, last frame's and this one's
  // Part drives, by PartDriveId::index (ragdoll_drives.cpp).
  struct DriveRecord {
    RagdollId ragdoll{};
    int32_t lane_slot = -1;  // its slot of the lane's drive rows; -1 once broken
    int32_t part = 0;
    Vec3 local_body{};       // the point in the part's body frame
    Vec3 target{};
    float break_distance = INFINITY;
    float distance = 0;
    bool broken = false;
  };
  HandleTable<PartDriveId> drive_handles_;
  std::vector<DriveRecord> drives_;
  std::vector<PartDriveId> broken_drives_;  // capacity: every drive ever live at once
};

}  // namespace tendon::detail
