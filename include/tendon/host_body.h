// tendon/host_body.h: kinematic shapes the host moves itself (the player's capsule, a car,
// a moving platform, a door), which ragdolls and chains collide with.
//
// What it does: describes a host body (its shape, collision filter, surface) and how the
// host moves it each frame: either a transform with the velocities it has now
// (World::SetHostBodyMotion), or a target transform the body reaches at the end of the
// next fixed steps, the velocity derived from it (World::MoveHostBodyTo). Ragdoll parts
// collide with host bodies one way: a host body pushes and carries, and is never pushed;
// friction and restitution act on the velocity relative to the body's surface, so a
// platform carries what lies on it and a car launches a body at the car's speed, not
// faster. A trigger pushes nothing and reports overlaps as events. Chains whose archetype
// names the body's groups in ChainArchetypeSettings::host_body_mask collide with host
// spheres and capsules as with their own colliders.
// What it does NOT do: simulate the host body (it goes exactly where the host says), or
// collide host bodies with each other or with the static world.
// Threading and memory: plain data. World::AddHostBody allocates; moving a body does not.
#pragma once

#include <cstdint>

#include "tendon/math.h"

namespace tendon {

enum class HostBodyShape : uint8_t {
  kSphere,   // radius about the body's origin
  kCapsule,  // a segment along the body's local Y axis, half_height each side, and radius
  kBox,      // half_extents along the body's local axes
};

struct HostBodySettings {
  HostBodyShape shape = HostBodyShape::kCapsule;
  float radius = 0.3f;       // m, (0, 100]: spheres and capsules
  float half_height = 0.6f;  // m, [0, 100]: a capsule's half segment (the body is 2 (half_height + radius) tall)
  Vec3 half_extents{0.5f, 0.5f, 0.5f};  // m, each (0, 1000]: boxes
  Transform transform{};     // where it starts (scale ignored; the rotation must be finite and non-zero)
  Vec3 linear_velocity{};    // m/s, |v| <= 1000
  Vec3 angular_velocity{};   // rad/s, |w| <= 1000
  uint32_t collision_group = 1;           // bit(s) the body is in
  uint32_t collision_mask = 0xffffffffu;  // groups of ragdolls it meets (both sides' filters must allow a pair)
  bool trigger = false;      // reports overlaps (contact events) and pushes nothing
  float friction = 0.6f;     // [0, 10], combined with a part's as sqrt(a b)
  float restitution = 0.0f;  // [0, 1]: the larger of the body's and the part's applies
};

// What a host body is doing, as the World last set it.
struct HostBodyState {
  Transform transform{};
  Vec3 linear_velocity{};
  Vec3 angular_velocity{};
  int32_t overlapping_parts = 0;  // triggers: ragdoll parts inside it after the last Step
};

}  // namespace tendon
