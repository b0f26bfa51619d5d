// tendon/math.h: the host-facing scalar math types: Vec3, Quat and Transform.
//
// What it does: small value types with the handful of operations the API and the
// scalar parts of the kernel need (compose, inverse, rotate, shortest arc).
// What it does NOT do: SIMD (the kernel's lane types live in kernel/simd and are
// templated on the instruction set), matrices, or non-uniform scale with shear.
// Transform composition treats scale per axis without shear, as most engines do:
// world = parent * local gives t = pt + pr * (ps * lt), r = pr * lr, s = ps * ls.
// Threading: plain values, no shared state. Memory: none allocated.
// Conventions: metres, radians, right-handed, quaternions are unit (x, y, z, w).
#pragma once

#include <cmath>

namespace tendon {

struct Vec3 {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
};

inline constexpr Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline constexpr Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline constexpr Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
inline constexpr Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline constexpr Vec3 operator*(float s, Vec3 a) { return {a.x * s, a.y * s, a.z * s}; }
inline constexpr Vec3 Mul(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
inline constexpr Vec3 Div(Vec3 a, Vec3 b) { return {a.x / b.x, a.y / b.y, a.z / b.z}; }
inline constexpr bool operator==(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
inline constexpr float Dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline constexpr Vec3 Cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float Length(Vec3 a) { return std::sqrt(Dot(a, a)); }
inline constexpr float LengthSquared(Vec3 a) { return Dot(a, a); }
inline Vec3 Lerp(Vec3 a, Vec3 b, float t) { return a + (b - a) * t; }
inline bool IsFinite(Vec3 a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); }
// Unit vector along a; returns `fallback` when a is shorter than 1e-12.
inline Vec3 NormalizeOr(Vec3 a, Vec3 fallback) {
  const float len = Length(a);
  return len > 1e-12f ? a * (1.0f / len) : fallback;
}

struct Quat {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
  float w = 1.0f;
};

inline constexpr bool operator==(Quat a, Quat b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w;
}
inline constexpr Quat operator*(Quat a, Quat b) {
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
inline constexpr Quat Conjugate(Quat q) { return {-q.x, -q.y, -q.z, q.w}; }
inline constexpr float Dot(Quat a, Quat b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
inline bool IsFinite(Quat q) {
  return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}
inline Quat Normalize(Quat q) {
  const float len = std::sqrt(Dot(q, q));
  if (!(len > 1e-12f)) return Quat{};
  const float inv = 1.0f / len;
  return {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}
// v rotated by unit q: v + 2w (u x v) + 2 u x (u x v), with u = q.xyz.
inline constexpr Vec3 Rotate(Quat q, Vec3 v) {
  const Vec3 u{q.x, q.y, q.z};
  const Vec3 t = Cross(u, v) * 2.0f;
  return v + t * q.w + Cross(u, t);
}
inline Quat AxisAngle(Vec3 unit_axis, float radians) {
  const float s = std::sin(radians * 0.5f);
  return {unit_axis.x * s, unit_axis.y * s, unit_axis.z * s, std::cos(radians * 0.5f)};
}
// The shortest-arc rotation taking unit vector `from` onto unit vector `to`. For opposite
// vectors the axis is any perpendicular; the result is always a unit quaternion.
inline Quat ShortestArc(Vec3 from, Vec3 to) {
  const float d = Dot(from, to);
  if (d < -0.999999f) {
    Vec3 axis = Cross(Vec3{1, 0, 0}, from);
    if (LengthSquared(axis) < 1e-6f) axis = Cross(Vec3{0, 1, 0}, from);
    return AxisAngle(NormalizeOr(axis, Vec3{0, 0, 1}), 3.14159265358979f);
  }
  const Vec3 c = Cross(from, to);
  return Normalize(Quat{c.x, c.y, c.z, 1.0f + d});
}
// Angle of a unit quaternion's rotation, in [0, pi].
inline float RotationAngle(Quat q) {
  const float w = std::fabs(q.w) > 1.0f ? 1.0f : std::fabs(q.w);
  return 2.0f * std::acos(w);
}

struct Transform {
  Vec3 translation{};
  Quat rotation{};
  Vec3 scale{1.0f, 1.0f, 1.0f};
};

inline constexpr bool operator==(const Transform& a, const Transform& b) {
  return a.translation == b.translation && a.rotation == b.rotation && a.scale == b.scale;
}
inline bool IsFinite(const Transform& t) {
  return IsFinite(t.translation) && IsFinite(t.rotation) && IsFinite(t.scale);
}
// parent * local (see the header note on scale).
inline constexpr Transform Compose(const Transform& parent, const Transform& local) {
  return {parent.translation + Rotate(parent.rotation, Mul(parent.scale, local.translation)),
          parent.rotation * local.rotation, Mul(parent.scale, local.scale)};
}
// The local transform l with Compose(parent, l) == world (exact inverse of Compose).
inline constexpr Transform Relative(const Transform& parent, const Transform& world) {
  const Quat inv = Conjugate(parent.rotation);
  return {Div(Rotate(inv, world.translation - parent.translation), parent.scale),
          inv * world.rotation, Div(world.scale, parent.scale)};
}
// A point in the transform's local frame mapped to its parent frame.
inline constexpr Vec3 TransformPoint(const Transform& t, Vec3 p) {
  return t.translation + Rotate(t.rotation, Mul(t.scale, p));
}

}  // namespace tendon
