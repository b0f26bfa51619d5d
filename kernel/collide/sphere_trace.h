// kernel/collide/sphere_trace.h: rays against distance functions.
//
// What it does: SphereTrace steps along a ray by the distance to a convex shape (never
// past its surface), so it converges onto it; RayReady checks a ray and normalises its
// direction. What it does NOT do: concave shapes (it may stop short), or triangles
// (StaticMesh::Raycast does those). Threading: pure functions. Memory: none.
#pragma once

#include <cmath>

#include "tendon/math.h"

namespace tendon::detail {

// Sphere tracing along a ray against a convex distance function: steps by the distance
// (never past the surface), so it converges onto convex shapes. Returns the hit distance
// or a negative number.
template <class F>
inline float SphereTrace(const F& distance, Vec3 origin, Vec3 dir, float max_distance) {
  float t = 0;
  for (int i = 0; i < 128 && t <= max_distance; ++i) {
    const float d = distance(origin + dir * t);
    if (d < 1e-5f) return t;
    t += d;
  }
  return -1.0f;
}

inline bool RayReady(Vec3& origin, Vec3& direction, float max_distance) {
  if (!IsFinite(origin) || !IsFinite(direction) || !(max_distance > 0) || std::isnan(max_distance)) return false;
  const float len = Length(direction);
  if (!(len > 1e-12f)) return false;
  direction = direction * (1.0f / len);
  return true;
}

}  // namespace tendon::detail
