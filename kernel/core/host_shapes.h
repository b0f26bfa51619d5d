// kernel/core/host_shapes.h: the host bodies' shapes in world space, as the systems below
// the World read them each frame (chains collide with the spheres and capsules).
//
// What it is: one HostShape per live host body, in handle order, written by the World
// before each Step from where the host placed the bodies (tendon/host_body.h) and read
// only during the Step. What it is NOT: the ragdolls' view of host bodies (they are
// kinematic parts there, kernel/ragdolls), or a broad phase (readers cull by bounds).
// Threading: written between Steps by the World's thread, read by any worker during one.
// Memory: plain values; the World owns the array.
#pragma once

#include <cstdint>

namespace tendon::detail {

enum HostShapeKind : int32_t { kHostSphere, kHostCapsule, kHostBox };

struct HostShape {
  int32_t kind = kHostSphere;
  // Sphere: a = centre. Capsule: segment a..b. Box: a = centre, q = rotation (x, y, z, w),
  // half = half extents. radius: spheres and capsules.
  float a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  float q[4] = {0, 0, 0, 1};
  float half[3] = {0, 0, 0};
  float radius = 0;
  float velocity[3] = {0, 0, 0};  // m/s at the body's origin this frame
  uint32_t group = 1;             // HostBodySettings::collision_group
  bool trigger = false;           // triggers push nothing: chains skip them
};

}  // namespace tendon::detail
