// tendon/query.h: what a query of the World's bodies and static world answers.
//
// What it does: RaycastHit, the answer of World::RaycastRagdolls and World::RaycastStatic.
// What it does NOT do: run queries (the World does, between Steps).
// Threading and memory: a plain value.
#pragma once

#include <cstdint>

#include "tendon/ids.h"
#include "tendon/math.h"

namespace tendon {

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

}  // namespace tendon
