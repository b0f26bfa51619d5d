// tendon/snapshot.h: saved states: the whole World's simulation state, or one ragdoll's,
// character's or chain's, as bytes a host keeps and gives back (World::SaveState,
// World::RestoreState and the per-instance calls in tendon/world.h; docs/snapshots.md).
//
// What it does: a saved state holds everything that changes what the next Steps compute
// (bodies, contacts and their bookkeeping, sleep clocks, drives, contact-event memory,
// characters' state machines and timers, chains' positions and teleport guard, pendulums,
// the fixed clock), so that stepping on after a restore gives the same bits as stepping
// on from the moment of the save. Restoring works into the same World, or into another
// World built with the same settings and archetypes with the same instances bound in
// the same order (the same handle indices): anything else is refused with an Error that
// names the instance and field that differ.
// The format: a 32-byte header (the magic kSnapshotMagic, kSnapshotVersion, the kind of
// state, a reserved word, the payload's length in bytes and its FNV-1a 64 checksum), then
// the payload: sections, each a 4-byte tag and a 4-byte length. Every field is
// little-endian and of fixed size, floats and doubles as their bits, so a buffer saved on
// x86-64 restores on ARM64. A buffer that is truncated, foreign, corrupted, of another
// version or kind, or that holds a NaN (or an infinity where only finite values are
// state) is refused, and a refused restore changes nothing: everything is checked before
// anything is written.
// What it does NOT do: save host buffers' identities (kinematic root pointers, outputs:
// the instance keeps the ones it is bound to), settings, archetypes, the static world,
// the events waiting to be drained, or FrameStats; or compress anything.
// Threading: the calls are the World's (one thread, between Steps: kReentrant inside Step
// or between BeginStep and FinishStep). Memory: they never allocate (the caller owns the
// buffer), except restoring a kinematic root onto an instance whose archetype has no lane
// reserved for one (ReserveRagdollKinematicToggle), and the Error of a refusal.
#pragma once

#include <cstdint>

namespace tendon {

// "TDSN" in its first four bytes.
inline constexpr uint32_t kSnapshotMagic = 0x4E534454u;
// The format's version; a buffer of another version is refused.
inline constexpr uint32_t kSnapshotVersion = 1;
// Bytes before the payload.
inline constexpr uint32_t kSnapshotHeaderBytes = 32;

// What a saved state holds (its header's third word).
enum class SnapshotKind : uint32_t {
  kWorld = 1,
  kRagdoll = 2,
  kCharacter = 3,
  kChain = 4,
};

}  // namespace tendon
