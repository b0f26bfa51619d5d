// tendon/ids.h: handles to things a World owns.
//
// What it does: a handle is {index, generation}. The generation of a slot is bumped every
// time the slot is freed, so a handle kept past its object's life is detected on every
// call (it compares unequal to the slot's generation) and never dereferenced. The zero
// value (generation 0) is null; live handles always have generation >= 1.
// What it does NOT do: reference counting or ownership; handles are plain values.
// Threading and memory: plain values.
#pragma once

#include <cstdint>

namespace tendon {

template <class Tag>
struct Id {
  uint32_t index = 0;
  uint32_t generation = 0;  // 0: null
  constexpr bool IsNull() const { return generation == 0; }
  friend constexpr bool operator==(Id a, Id b) = default;
};

struct ChainArchetypeTag;
struct ChainTag;
struct PendulumTag;
struct RagdollArchetypeTag;
struct RagdollTag;
struct CharacterArchetypeTag;
struct CharacterTag;
struct HostBodyTag;
struct PartDriveTag;
// A built, immutable chain archetype (topology + settings).
using ChainArchetypeId = Id<ChainArchetypeTag>;
// A bound chain instance (one host skeleton's copy of an archetype).
using ChainId = Id<ChainTag>;
// A bound accessory pendulum.
using PendulumId = Id<PendulumTag>;
// A built, immutable ragdoll archetype (parts, shapes, joints).
using RagdollArchetypeId = Id<RagdollArchetypeTag>;
// A bound ragdoll instance.
using RagdollId = Id<RagdollTag>;
using CharacterArchetypeId = Id<CharacterArchetypeTag>;
using CharacterId = Id<CharacterTag>;
// A kinematic body the host moves itself (tendon/host_body.h).
using HostBodyId = Id<HostBodyTag>;
// A drive of a point of a ragdoll part toward a target (tendon/part_drive.h).
using PartDriveId = Id<PartDriveTag>;

}  // namespace tendon
