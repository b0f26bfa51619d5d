// kernel/character/character_system.h: the runtime of ragdoll characters, owned by a World.
//
// Design: each character binds one ragdoll at BindCharacter, switched off (disabled lanes
// cost the solver nothing) until activated; all of its per-frame storage is sized there.
// Step calls BeforePhysics (animated pose, timers, motor targets and the anchor) and
// AfterPhysics (the whole pose into the host's spans), around the ragdoll substeps and
// before chains, so chains bound on a ragdolled bone swing from this frame's pose.
// Layering: characters sit above the ragdoll system and drive their ragdolls through its
// calls (the same controls a host has through the World's ragdoll calls); the World owns
// both and nothing here calls the World back.
// What it does NOT do: simulate anything itself (the ragdoll system does), or touch
// chains: a chain bound on a character's bone reads the pose written here like any other.
// Threading: the World's thread. Memory: BindCharacter allocates; nothing else does.
// Files, one concept each: character_system.cpp (archetypes, binding, host buffers),
// character_controls.cpp (activation, release, strength, anchor, hits, limpness, impulses,
// the event queue), character_frame.cpp (BeforePhysics and AfterPhysics), and
// character_queries.cpp (state, recovery root, handles); character_slot.h is a bound
// character's state. Handles come from a HandleTable; each slot's state lives behind a
// unique_ptr (the ragdoll system holds pointers into it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kernel/character/character_archetype.h"
#include "kernel/core/handle_table.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/snapshot_io.h"
#include "tendon/character.h"
#include "tendon/errors.h"
#include "tendon/net_snapshot.h"

namespace tendon::detail {

class RagdollSystem;

class CharacterSystem {
 public:
  explicit CharacterSystem(RagdollSystem& ragdolls);
  ~CharacterSystem();

  Result<CharacterArchetypeId> BuildArchetype(const CharacterSettings& settings);
  const CharacterArchetype* Archetype(CharacterArchetypeId id) const;

  // Forgets an archetype and its ragdoll archetype; kInUse while characters of it are bound.
  Error RemoveArchetype(CharacterArchetypeId id);
  bool UsesRagdollArchetype(RagdollArchetypeId id) const;
  Result<CharacterId> Bind(const CharacterBinding& binding);
  // Moves a bound character to new host buffers (same archetype), keeping its ragdoll,
  // state and timers.
  Error Rebind(CharacterId id, const CharacterBinding& binding);
  Error Unbind(CharacterId id);
  int32_t UnbindAll();  // every character (Ended events for active ones); returns how many
  bool IsValid(CharacterId id) const;

  bool Activate(CharacterId id, const CharacterActivateOptions& options, Error* why = nullptr);
  Error Deactivate(CharacterId id, float blend_seconds, HandBackSpace space);
  Error SetStrength(CharacterId id, float strength);
  Error SetAnchored(CharacterId id, bool anchored);
  bool Hit(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point, const CharacterHitOptions& options,
           Error* why = nullptr);
  Error GoLimp(CharacterId id, float seconds);
  Error ApplyImpulse(CharacterId id, Vec3 impulse);
  Error ApplyPartImpulse(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point);
  Error GetState(CharacterId id, CharacterState* out) const;
  Error GetRecoveryRoot(CharacterId id, float leg_room, Transform* out) const;
  RagdollId RagdollOf(CharacterId id) const;
  CharacterId CharacterOf(RagdollId ragdoll) const;
  int32_t DrainEvents(std::span<CharacterEvent> out);
  int32_t ActiveCount() const;
  int32_t BoundCount() const;
  // Debug validation (kernel/core/host_buffers.h): every bound character's host buffers,
  // or the one of `only` when it is live.
  void CheckHostBuffers(CharacterId only = CharacterId{}) const;
  // Whether [data, data + bytes) overlaps a host buffer a bound character reads or writes
  // in its phase (model_world, animated_local, output_local, output_world, pose streams).
  bool OverlapsHostBuffers(const void* data, std::size_t bytes) const;

  // Step's hooks. frame_dt: the host's frame time (animation velocities); sim_seconds: the
  // simulated time this frame advanced (timers), now: the world clock after it.
  void BeforePhysics(float frame_dt, float sim_seconds, double now, int32_t max_active);
  void AfterPhysics();
  // Events dropped since the last call (queue full), and the count reset.
  int32_t TakeDroppedEvents() {
    const int32_t n = dropped_events_;
    dropped_events_ = 0;
    return n;
  }
  void SetMaxActive(int32_t max_active) { max_active_ = max_active; }
  int32_t BadInputs() const { return bad_inputs_; }

  // ---- network state (character_net.cpp; tendon/net_snapshot.h) ----
  Error CaptureNet(CharacterId id, NetCharacterState* out) const;
  // False, changing nothing, for a stale message (World::ApplyNetCharacterState).
  Result<bool> ApplyNet(CharacterId id, const NetCharacterState& state);

  // ---- saved states (character_snapshot.cpp; tendon/snapshot.h) ----
  // Every bound character's state machine, timers, crossfade, motor targets and the poses
  // the next frame reads (its ragdoll and kinematic copy are the ragdoll system's
  // records), in slot order, then the activation order and clock. A restore calls it twice
  // over the same bytes: a checking pass, then (all of it passed) the writing one (r.apply()).
  void SaveState(SnapshotWriter& w) const;
  void RestoreState(SnapshotReader& r);
  void SaveInstance(CharacterId id, SnapshotWriter& w) const;
  void RestoreInstance(CharacterId id, SnapshotReader& r);
  // The root frame a character's ragdoll (slot `ragdoll_slot`) follows when anchored, or
  // null when the slot is no character's (RagdollSystem::RootProvider).
  const Transform* AnchorOfRagdoll(uint32_t ragdoll_slot) const;
  // A bound character's kinematic copy (a ragdoll slot of its own), or null.
  RagdollId TwinOf(CharacterId id) const;

 private:
  void SaveSlot(uint32_t index, SnapshotWriter& w) const;
  void RestoreSlot(uint32_t index, SnapshotReader& r, bool same_slot = true);
  struct Slot;
  Error CheckBuffers(const CharacterBinding& b, int32_t bones) const;
  // Pose streams (tendon/pose_layout.h): checked at bind, written with the outputs.
  static Error BindStreams(const CharacterBinding& b, int32_t bones, std::vector<BoundPoseStream>* out);
  static void EmitStreams(Slot& c, std::span<const Transform> world);
  Slot* Find(CharacterId id);
  const Slot* Find(CharacterId id) const;
  Error Release(Slot& c, CharacterEndReason reason, float blend_seconds, HandBackSpace space = HandBackSpace::kAuto);
  void Push(const Slot& c, CharacterEvent::Type type, CharacterEndReason reason);
  Error ApplyControls(Slot& c);
  void ComputeTargets(Slot& c, const CharacterArchetype& a);

  RagdollSystem& ragdolls_;
  std::vector<CharacterArchetype> archetypes_;
  std::vector<bool> removed_;  // per archetype: RemoveArchetype made its id stale
  // Per archetype: its id's generation. A removed slot is built into again under the next
  // one (the old id stays stale), so kinds built and removed over and over reuse slots.
  std::vector<uint32_t> generation_;
  HandleTable<CharacterId> handles_;
  std::vector<std::unique_ptr<Slot>> slots_;  // by CharacterId::index, handles_.SlotCount() of them
  std::vector<int32_t> character_of_ragdoll_;  // by ragdoll slot index, -1: none
  int32_t active_count_ = 0;
  std::vector<CharacterEvent> events_;  // capacity grown at bind only
  std::size_t event_capacity_ = 64;
  int32_t dropped_events_ = 0;
  int32_t bad_inputs_ = 0;
  uint64_t activation_serial_ = 0;
  double now_ = 0;
  int32_t max_active_ = 16;
};

}  // namespace tendon::detail
