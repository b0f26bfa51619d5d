// kernel/collide/part_distance.h: exact signed distances to part shapes, for queries and
// for contacts between ragdolls (scalar, baseline code: included by world.cpp only).
#pragma once

#include <algorithm>
#include <cmath>

#include "tendon/math.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::detail {

// Signed distance from p to the hull of two spheres (centres (0, 0, 0) radius r0 and
// (0, len, 0) radius r1), in that shape's frame. In the (radial, axial) half-plane the hull's
// side is the common tangent line with unit normal n = (c, -s), s = (r1 - r0) / len; it
// touches sphere 0 at r0 n and runs a length len c along t = (s, c) to sphere 1.
inline float RoundConeDistance(Vec3 p, float len, float r0, float r1) {
  const float radial = std::sqrt(p.x * p.x + p.z * p.z), axial = p.y;
  const float s = (r1 - r0) / len, c = std::sqrt(std::max(0.0f, 1.0f - s * s));
  const float along = (radial - r0 * c) * s + (axial + r0 * s) * c;  // dot(P - T0, t)
  if (along < 0) return std::sqrt(radial * radial + axial * axial) - r0;
  if (along > len * c) return std::sqrt(radial * radial + (axial - len) * (axial - len)) - r1;
  return radial * c - axial * s - r0;
}

inline float BoxDistance(Vec3 p, Vec3 h) {
  const Vec3 q{std::fabs(p.x) - h.x, std::fabs(p.y) - h.y, std::fabs(p.z) - h.z};
  const Vec3 out{std::max(q.x, 0.0f), std::max(q.y, 0.0f), std::max(q.z, 0.0f)};
  return Length(out) + std::min(std::max(q.x, std::max(q.y, q.z)), 0.0f);
}

// Distance from a world point to a part's shape (shape_world: the shape's frame).
inline float PartShapeDistance(const PartShapeSettings& sh, const Transform& shape_world, Vec3 p) {
  const Vec3 l = Rotate(Conjugate(shape_world.rotation), p - shape_world.translation);
  switch (sh.type) {
    case PartShape::kSphere: return Length(l) - sh.radius;
    case PartShape::kBox: return BoxDistance(l, sh.half_extents);
    case PartShape::kCapsule:
      return RoundConeDistance(l + Vec3{0, sh.half_height, 0}, 2 * sh.half_height > 1e-6f ? 2 * sh.half_height : 1e-6f,
                               sh.radius, sh.radius);
    case PartShape::kTaperedCapsule:
      return RoundConeDistance(l + Vec3{0, sh.half_height, 0}, 2 * sh.half_height, sh.bottom_radius, sh.top_radius);
  }
  return 1e30f;
}

template <class F>
inline Vec3 DistanceNormal(const F& distance, Vec3 p) {
  const float e = 1e-4f;
  return NormalizeOr(Vec3{distance(p + Vec3{e, 0, 0}) - distance(p - Vec3{e, 0, 0}),
                          distance(p + Vec3{0, e, 0}) - distance(p - Vec3{0, e, 0}),
                          distance(p + Vec3{0, 0, e}) - distance(p - Vec3{0, 0, e})},
                     Vec3{0, 1, 0});
}


}  // namespace tendon::detail
