// kernel/core/rotation.h: small scalar rotation helpers the systems share.
//
// What it does: a rotation as its matrix's columns (Rot3), for code that turns many
// vectors by one body (9 multiply-adds each instead of a quaternion product), and Nlerp.
// What it does NOT do: anything in lanes (the kernels have their own, per instruction set).
// Threading: pure functions. Memory: none.
#pragma once

#include <cmath>

#include "tendon/math.h"

namespace tendon::detail {

// t of the way from a to b along the shorter way round, normalised (nlerp: render
// interpolation between substeps, whose rotations differ by a few degrees at most).
inline Quat Nlerp(Quat a, Quat b, float t) {
  const float s = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w < 0.0f ? -1.0f : 1.0f;
  return Normalize(Quat{a.x * s + (b.x - a.x * s) * t, a.y * s + (b.y - a.y * s) * t, a.z * s + (b.z - a.z * s) * t,
                        a.w * s + (b.w - a.w * s) * t});
}

// A rotation as its matrix's columns (the body's axes in world).
struct Rot3 {
  Vec3 x, y, z;
};
inline Rot3 RotationOf(Quat q) {
  const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return Rot3{{1 - 2 * (yy + zz), 2 * (xy + wz), 2 * (xz - wy)},
              {2 * (xy - wz), 1 - 2 * (xx + zz), 2 * (yz + wx)},
              {2 * (xz + wy), 2 * (yz - wx), 1 - 2 * (xx + yy)}};
}
inline Vec3 Apply(const Rot3& r, Vec3 v) { return r.x * v.x + r.y * v.y + r.z * v.z; }
inline Vec3 ApplyInverse(const Rot3& r, Vec3 v) { return Vec3{Dot(r.x, v), Dot(r.y, v), Dot(r.z, v)}; }

// The rotation vector (axis times angle) of unit q, the shorter way round.
inline Vec3 RotationVector(Quat q) {
  if (q.w < 0) q = Quat{-q.x, -q.y, -q.z, -q.w};
  const Vec3 v{q.x, q.y, q.z};
  const float s = Length(v);
  if (s < 1e-9f) return v * 2.0f;
  return v * (2.0f * std::atan2(s, q.w) / s);
}

inline constexpr float kPi = 3.14159265358979f;

}  // namespace tendon::detail
