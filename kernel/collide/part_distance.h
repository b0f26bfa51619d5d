// kernel/collide/part_distance.h: exact signed distances to part shapes, for queries and
// for contacts between ragdolls (scalar, baseline code; never in the per-ISA kernels).
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

// A part shape's core and a radius about it that holds the whole shape: a capsule's or
// tapered capsule's axis segment (and its larger radius), a sphere's centre, a box's
// centre (and its half diagonal). Two shapes are at least the distance of their cores
// less both radii apart.
struct PartCore {
  Vec3 a, b;  // the segment's ends (the same point for a centre)
  float radius;
};
inline PartCore CoreOf(const PartShapeSettings& sh, const Transform& shape_world) {
  switch (sh.type) {
    case PartShape::kCapsule:
    case PartShape::kTaperedCapsule: {
      const float r = sh.type == PartShape::kCapsule ? sh.radius : std::max(sh.bottom_radius, sh.top_radius);
      const Vec3 axis = Rotate(shape_world.rotation, Vec3{0, sh.half_height, 0});
      return {shape_world.translation - axis, shape_world.translation + axis, r};
    }
    case PartShape::kSphere: return {shape_world.translation, shape_world.translation, sh.radius};
    case PartShape::kBox: return {shape_world.translation, shape_world.translation, Length(sh.half_extents)};
  }
  return {shape_world.translation, shape_world.translation, 1e30f};
}

// The squared distance between segments [p0, p1] and [q0, q1] (either may be a point):
// the closest points by clamped parameters, Ericson 2005, "Real-Time Collision Detection",
// section 5.1.9.
inline float SegmentDistance2(Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1) {
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const float a = Dot(d1, d1), e = Dot(d2, d2), f = Dot(d2, r);
  constexpr float kPoint = 1e-12f;
  float s = 0, t = 0;
  if (a <= kPoint && e <= kPoint) return Dot(r, r);
  if (a <= kPoint) {
    t = std::clamp(f / e, 0.0f, 1.0f);
  } else {
    const float c = Dot(d1, r);
    if (e <= kPoint) {
      s = std::clamp(-c / a, 0.0f, 1.0f);
    } else {
      const float b = Dot(d1, d2), denom = a * e - b * b;
      s = denom > 0 ? std::clamp((b * f - c * e) / denom, 0.0f, 1.0f) : 0.0f;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = std::clamp(-c / a, 0.0f, 1.0f);
      } else if (t > 1) {
        t = 1;
        s = std::clamp((b - c) / a, 0.0f, 1.0f);
      }
    }
  }
  return LengthSquared((p0 + d1 * s) - (q0 + d2 * t));
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

// The distance from l, a point in the shape's own frame, and its gradient there (the
// outward unit normal of the nearest surface point), in closed form: the pair contacts
// need both for every sample, and take their samples into the shape's frame at once.
inline float PartShapeDistanceNormalLocal(const PartShapeSettings& sh, Vec3 l, Vec3* normal_local) {
  Vec3 n_local{0, 1, 0};
  float d = 1e30f;
  switch (sh.type) {
    case PartShape::kSphere:
      d = Length(l) - sh.radius;
      n_local = NormalizeOr(l, Vec3{0, 1, 0});
      break;
    case PartShape::kBox: {
      const Vec3 h = sh.half_extents;
      const Vec3 q{std::fabs(l.x) - h.x, std::fabs(l.y) - h.y, std::fabs(l.z) - h.z};
      const Vec3 sign{l.x < 0 ? -1.0f : 1.0f, l.y < 0 ? -1.0f : 1.0f, l.z < 0 ? -1.0f : 1.0f};
      const Vec3 out{std::max(q.x, 0.0f), std::max(q.y, 0.0f), std::max(q.z, 0.0f)};
      const float out_len = Length(out);
      if (out_len > 0) {
        d = out_len;
        n_local = Mul(out, sign) * (1.0f / out_len);
      } else {
        // Inside: out through the nearest face.
        d = std::max(q.x, std::max(q.y, q.z));
        n_local = q.x >= q.y && q.x >= q.z ? Vec3{sign.x, 0, 0} : (q.y >= q.z ? Vec3{0, sign.y, 0} : Vec3{0, 0, sign.z});
      }
      break;
    }
    case PartShape::kCapsule:
    case PartShape::kTaperedCapsule: {
      const bool tapered = sh.type == PartShape::kTaperedCapsule;
      const float r0 = tapered ? sh.bottom_radius : sh.radius, r1 = tapered ? sh.top_radius : sh.radius;
      const float len = std::max(2 * sh.half_height, 1e-6f);
      const Vec3 c{l.x, l.y + sh.half_height, l.z};  // bottom sphere at the origin
      const float radial = std::sqrt(c.x * c.x + c.z * c.z);
      const Vec3 out_dir = radial > 1e-9f ? Vec3{c.x / radial, 0, c.z / radial} : Vec3{1, 0, 0};
      const float s = (r1 - r0) / len, co = std::sqrt(std::max(0.0f, 1.0f - s * s));
      const float along = (radial - r0 * co) * s + (c.y + r0 * s) * co;
      if (along < 0) {
        d = Length(c) - r0;
        n_local = NormalizeOr(c, Vec3{0, -1, 0});
      } else if (along > len * co) {
        const Vec3 top = c - Vec3{0, len, 0};
        d = Length(top) - r1;
        n_local = NormalizeOr(top, Vec3{0, 1, 0});
      } else {
        d = radial * co - c.y * s - r0;
        n_local = out_dir * co + Vec3{0, -s, 0};
      }
      break;
    }
  }
  *normal_local = n_local;
  return d;
}

// The distance, as PartShapeDistance, and its gradient (the outward unit normal), in world.
inline float PartShapeDistanceNormal(const PartShapeSettings& sh, const Transform& shape_world, Vec3 p, Vec3* normal) {
  Vec3 n_local;
  const float d =
      PartShapeDistanceNormalLocal(sh, Rotate(Conjugate(shape_world.rotation), p - shape_world.translation), &n_local);
  *normal = Rotate(shape_world.rotation, n_local);
  return d;
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
