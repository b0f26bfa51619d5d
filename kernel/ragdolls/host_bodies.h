// kernel/ragdolls/host_bodies.h: the host's kinematic bodies (tendon/host_body.h), as the
// World keeps them.
//
// What it does: Add validates a HostBodySettings (every field, by name) and binds the body
// as a one-part kinematic instance in the ragdoll system (RagdollSystem::BindInternal), of
// an archetype shared by every body of the same shape, size, surface and filter (so a
// hundred player capsules are lanes of one group, not a hundred groups). SetMotion and
// MoveTo set how it moves over the next frame; the ragdoll system moves it through the
// substeps, where the broad phase and the pair contacts meet it with the ragdolls (one
// way: it is fixed in every pair). WriteShapes lists every body's world shape for the
// chains (kernel/core/host_shapes.h). Overlapping counts the trigger overlaps of the last
// frame.
// What it does NOT do: move anything itself, or rebuild the static world (host bodies are
// not part of it: adding, moving and removing them touches one lane).
// Threading: the World's thread, between Steps. Memory: Add allocates (the body's record,
// a new archetype for a new shape, the lane); the rest does not.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernel/core/handle_table.h"
#include "kernel/core/host_shapes.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "tendon/errors.h"
#include "tendon/host_body.h"
#include "tendon/ids.h"

namespace tendon::detail {

class HostBodies {
 public:
  explicit HostBodies(RagdollSystem& ragdolls) : ragdolls_(ragdolls) {}

  Result<HostBodyId> Add(const HostBodySettings& settings);
  Error Remove(HostBodyId id);
  void RemoveAll();
  bool IsValid(HostBodyId id) const { return handles_.IsLive(id); }
  // Where the body is now and how it moves on from here (until told otherwise).
  Error SetMotion(HostBodyId id, const Transform& transform, Vec3 linear_velocity, Vec3 angular_velocity);
  // Where it is at the end of the next frame that steps (the velocity derived from it).
  Error MoveTo(HostBodyId id, const Transform& target);
  Error GetState(HostBodyId id, HostBodyState* out) const;
  int32_t Count() const { return static_cast<int32_t>(handles_.LiveCount()); }
  // Every live body's world shape, in handle order (the chains' host colliders).
  void WriteShapes(std::vector<HostShape>& out) const;
  // The host body a ragdoll slot of kind kHostBodySlot stands for.
  HostBodyId OfSlot(const RagdollSlot& slot) const {
    return HostBodyId{slot.owner_index, slot.owner_generation};
  }

 private:
  struct Body {
    HostBodySettings settings;
    RagdollId ragdoll;
    std::unique_ptr<Transform> output;  // the part frame the ragdoll system writes
  };
  struct Shared {
    HostBodySettings key;  // shape, sizes, filter, trigger, surface
    RagdollArchetypeId archetype;
  };
  static Error Check(const HostBodySettings& s);
  Result<RagdollArchetypeId> ArchetypeFor(const HostBodySettings& s);

  RagdollSystem& ragdolls_;
  HandleTable<HostBodyId> handles_;
  std::vector<Body> bodies_;
  std::vector<Shared> archetypes_;
};

}  // namespace tendon::detail
