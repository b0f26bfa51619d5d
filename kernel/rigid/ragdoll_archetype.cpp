// kernel/rigid/ragdoll_archetype.cpp: validation, mass properties and joint frames.
//
// Mass properties (standard results; e.g. any rigid-body dynamics text):
//   sphere r:        V = 4/3 pi r^3, I = 2/5 m r^2
//   box a, b, c (half extents): V = 8abc, Ixx = m (b^2 + c^2) / 3, ...
//   capsule r, h (half the cylinder's height, along Y): cylinder mc = rho pi r^2 2h,
//     hemispheres ms = rho 4/3 pi r^3; Iyy = mc r^2/2 + ms 2r^2/5,
//     Ixx = Izz = mc (h^2/3 + r^2/4) + ms (2r^2/5 + h^2 + 3hr/4)
//     (each hemisphere's centre of mass is 3r/8 from its base; parallel-axis theorem).
//   tapered capsule: the convex hull of two spheres. Its radius along the axis is the
//     upper cap, the tangent cone and the lower cap (the cone touches sphere i at axial
//     y_i + r_i s, radius r_i sqrt(1 - s^2), with s = (r_bottom - r_top) / (2h)); volume,
//     centre and inertia are integrated over 4,096 disks (midpoint rule, ~1e-7 relative).
#include "kernel/rigid/ragdoll_archetype.h"

#include "kernel/core/validation.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tendon::detail {
namespace {

constexpr double kPiD = 3.14159265358979323846;
constexpr float kDegToRad = 3.14159265358979f / 180.0f;

std::string PartField(int32_t i, const char* member) { return "parts[" + std::to_string(i) + "]" + member; }

float Component(Vec3 v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); }

Error CheckUnitTransform(const Transform& t, int32_t item, const std::string& field) {
  if (!IsFinite(t)) return Fail(ErrorCode::kNotFinite, item, field, field + " is not finite");
  if (std::fabs(std::sqrt(Dot(t.rotation, t.rotation)) - 1.0f) > 1e-3f)
    return Fail(ErrorCode::kNotUnitRotation, item, field + ".rotation", field + ".rotation is not a unit quaternion");
  if (std::fabs(t.scale.x - 1) > 1e-4f || std::fabs(t.scale.y - 1) > 1e-4f || std::fabs(t.scale.z - 1) > 1e-4f)
    return Fail(ErrorCode::kOutOfRange, item, field + ".scale", field + ".scale must be 1 (rigid parts do not scale)");
  return {};
}


// A shape dimension, m: positive, and within [kMinShapeSize, kMaxShapeSize] so that its
// mass properties (up to the fifth power of a length) stay finite and non-zero in float.
constexpr float kMinShapeSize = 1e-4f;
constexpr float kMaxShapeSize = 1e4f;
Error CheckSize(float value, int32_t i, const char* field) {
  if (Error e = CheckPositive(value, i, PartField(i, field)); !Ok(e)) return e;
  if (value < kMinShapeSize || value > kMaxShapeSize)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, field),
                PartField(i, field) + " = " + std::to_string(value) +
                    " m is outside [0.0001, 10000] m: its mass properties would not be finite");
  return {};
}

Error CheckShape(const PartShapeSettings& s, int32_t i) {
  switch (s.type) {
    case PartShape::kSphere: return CheckSize(s.radius, i, ".shape.radius");
    case PartShape::kCapsule:
      if (Error e = CheckSize(s.radius, i, ".shape.radius"); !Ok(e)) return e;
      return CheckRange(s.half_height, 0, 1e3f, i, PartField(i, ".shape.half_height"));
    case PartShape::kTaperedCapsule:
      if (Error e = CheckSize(s.top_radius, i, ".shape.top_radius"); !Ok(e)) return e;
      if (Error e = CheckSize(s.bottom_radius, i, ".shape.bottom_radius"); !Ok(e)) return e;
      if (Error e = CheckSize(s.half_height, i, ".shape.half_height"); !Ok(e)) return e;
      if (std::fabs(s.top_radius - s.bottom_radius) >= 2.0f * s.half_height)
        return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".shape"),
                    "the larger sphere of the tapered capsule contains the smaller one; use a sphere");
      return {};
    case PartShape::kBox:
      if (Error e = CheckSize(s.half_extents.x, i, ".shape.half_extents.x"); !Ok(e)) return e;
      if (Error e = CheckSize(s.half_extents.y, i, ".shape.half_extents.y"); !Ok(e)) return e;
      return CheckSize(s.half_extents.z, i, ".shape.half_extents.z");
  }
  return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".shape.type"), "unknown shape type");
}

Error CheckJoint(const JointSettings& j, int32_t i) {
  if (!IsFinite(j.anchor)) return Fail(ErrorCode::kNotFinite, i, PartField(i, ".joint.anchor"), "anchor is not finite");
  if (!IsFinite(j.twist_axis) || std::fabs(Length(j.twist_axis) - 1.0f) > 1e-3f)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.twist_axis"), "twist_axis must be a finite unit vector");
  if (!IsFinite(j.plane_axis) || std::fabs(Length(j.plane_axis) - 1.0f) > 1e-3f)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.plane_axis"), "plane_axis must be a finite unit vector");
  if (std::fabs(Dot(j.twist_axis, j.plane_axis)) > 1e-3f)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.plane_axis"), "plane_axis must be perpendicular to twist_axis");
  const bool child_axes = !(j.child_twist_axis == Vec3{}) || !(j.child_plane_axis == Vec3{});
  if (child_axes) {
    if (!IsFinite(j.child_twist_axis) || std::fabs(Length(j.child_twist_axis) - 1.0f) > 1e-3f)
      return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.child_twist_axis"),
                  "child_twist_axis must be zero (unset) or a finite unit vector");
    if (!IsFinite(j.child_plane_axis) || std::fabs(Length(j.child_plane_axis) - 1.0f) > 1e-3f ||
        std::fabs(Dot(j.child_twist_axis, j.child_plane_axis)) > 1e-3f)
      return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.child_plane_axis"),
                  "child_plane_axis must be a finite unit vector perpendicular to child_twist_axis");
  }
  struct Limit {
    float v, lo, hi;
    const char* member;
  };
  const Limit limits[] = {{j.normal_half_cone_degrees, 0, 180, ".joint.normal_half_cone_degrees"},
                          {j.plane_half_cone_degrees, 0, 180, ".joint.plane_half_cone_degrees"},
                          {j.twist_min_degrees, -180, 180, ".joint.twist_min_degrees"},
                          {j.twist_max_degrees, -180, 180, ".joint.twist_max_degrees"},
                          {j.hinge_min_degrees, -180, 180, ".joint.hinge_min_degrees"},
                          {j.hinge_max_degrees, -180, 180, ".joint.hinge_max_degrees"},
                          {j.friction_torque_per_kg, 0, 1e6f, ".joint.friction_torque_per_kg"},
                          {j.motor.frequency_hz, 0, 1000, ".joint.motor.frequency_hz"},
                          {j.motor.damping_ratio, 0, 100, ".joint.motor.damping_ratio"},
                          {j.motor.max_torque_per_kg, 0, 1e6f, ".joint.motor.max_torque_per_kg"}};
  for (const Limit& l : limits) {
    if (Error e = CheckRange(l.v, l.lo, l.hi, i, PartField(i, l.member)); !Ok(e)) return e;
  }
  if (j.twist_min_degrees > j.twist_max_degrees)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.twist_min_degrees"), "twist_min_degrees exceeds twist_max_degrees");
  if (j.hinge_min_degrees > j.hinge_max_degrees)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.hinge_min_degrees"), "hinge_min_degrees exceeds hinge_max_degrees");
  if (j.type != JointType::kSwingTwist && j.type != JointType::kHinge)
    return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".joint.type"), "unknown joint type");
  return {};
}

Error CheckPart(const PartSettings& p, int32_t i, int32_t count) {
  const std::string field = PartField(i, ".parent");
  if (p.parent < -1 || p.parent >= count)
    return Fail(ErrorCode::kParentOutOfRange, i, field,
                "part " + std::to_string(i) + " has parent " + std::to_string(p.parent) + ", outside [-1, " +
                    std::to_string(count) + ")");
  if (p.parent == i) return Fail(ErrorCode::kCycle, i, field, "part " + std::to_string(i) + " is its own parent");
  if (Error e = CheckUnitTransform(p.pose, i, PartField(i, ".pose")); !Ok(e)) return e;
  if (Error e = CheckShape(p.shape, i); !Ok(e)) return e;
  if (Error e = CheckUnitTransform(p.shape.offset, i, PartField(i, ".shape.offset")); !Ok(e)) return e;
  if (!std::isfinite(p.mass)) return Fail(ErrorCode::kNotFinite, i, PartField(i, ".mass"), "mass is not finite");
  if (p.mass < 0) return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".mass"), "mass must not be negative");
  if (Error e = CheckRange(p.mass_share, 0, 1, i, PartField(i, ".mass_share")); !Ok(e)) return e;
  if (p.mass == 0 && p.mass_share == 0) {
    if (Error e = CheckPositive(p.density, i, PartField(i, ".density")); !Ok(e)) return e;
  }
  struct Range {
    float v, lo, hi;
    const char* member;
  };
  const Range ranges[] = {{p.friction, 0, 10, ".friction"},
                          {p.restitution, 0, 1, ".restitution"},
                          {p.linear_damping, 0, 100, ".linear_damping"},
                          {p.angular_damping, 0, 100, ".angular_damping"},
                          {p.gravity_factor, -100, 100, ".gravity_factor"}};
  for (const Range& r : ranges) {
    if (Error e = CheckRange(r.v, r.lo, r.hi, i, PartField(i, r.member)); !Ok(e)) return e;
  }
  if (Error e = CheckPositive(p.max_linear_speed, i, PartField(i, ".max_linear_speed")); !Ok(e)) return e;
  if (Error e = CheckPositive(p.max_angular_speed, i, PartField(i, ".max_angular_speed")); !Ok(e)) return e;
  if (p.parent >= 0) return CheckJoint(p.joint, i);
  return {};
}

}  // namespace

// Shepperd's method.
Quat FromColumns(Vec3 x, Vec3 y, Vec3 z) {
  const float m00 = x.x, m11 = y.y, m22 = z.z;
  const float trace = m00 + m11 + m22;
  Quat q;
  if (trace > 0) {
    const float s = std::sqrt(trace + 1.0f) * 2.0f;
    q = {(y.z - z.y) / s, (z.x - x.z) / s, (x.y - y.x) / s, 0.25f * s};
  } else if (m00 > m11 && m00 > m22) {
    const float s = std::sqrt(1.0f + m00 - m11 - m22) * 2.0f;
    q = {0.25f * s, (y.x + x.y) / s, (z.x + x.z) / s, (y.z - z.y) / s};
  } else if (m11 > m22) {
    const float s = std::sqrt(1.0f + m11 - m00 - m22) * 2.0f;
    q = {(y.x + x.y) / s, 0.25f * s, (z.y + y.z) / s, (z.x - x.z) / s};
  } else {
    const float s = std::sqrt(1.0f + m22 - m00 - m11) * 2.0f;
    q = {(z.x + x.z) / s, (z.y + y.z) / s, 0.25f * s, (x.y - y.x) / s};
  }
  return Normalize(q);
}

ShapeMass ComputeShapeMass(const PartShapeSettings& s) {
  ShapeMass out;
  auto diag = [&](double x, double y, double z) {
    out.inertia[0][0] = static_cast<float>(x);
    out.inertia[1][1] = static_cast<float>(y);
    out.inertia[2][2] = static_cast<float>(z);
  };
  switch (s.type) {
    case PartShape::kSphere: {
      const double r = s.radius, v = 4.0 / 3.0 * kPiD * r * r * r, i = 0.4 * v * r * r;
      out.volume = static_cast<float>(v);
      diag(i, i, i);
      break;
    }
    case PartShape::kBox: {
      const double a = s.half_extents.x, b = s.half_extents.y, c = s.half_extents.z, v = 8.0 * a * b * c;
      out.volume = static_cast<float>(v);
      diag(v * (b * b + c * c) / 3.0, v * (a * a + c * c) / 3.0, v * (a * a + b * b) / 3.0);
      break;
    }
    case PartShape::kCapsule: {
      const double r = s.radius, h = s.half_height;
      const double mc = kPiD * r * r * 2.0 * h, ms = 4.0 / 3.0 * kPiD * r * r * r;
      const double iyy = mc * r * r / 2.0 + ms * 0.4 * r * r;
      const double ixx = mc * (h * h / 3.0 + r * r / 4.0) + ms * (0.4 * r * r + h * h + 0.75 * h * r);
      out.volume = static_cast<float>(mc + ms);
      diag(ixx, iyy, ixx);
      break;
    }
    case PartShape::kTaperedCapsule: {
      const double r1 = s.top_radius, r2 = s.bottom_radius, h = s.half_height;
      const double sn = (r2 - r1) / (2.0 * h), cs = std::sqrt(std::max(0.0, 1.0 - sn * sn));
      const double t1 = h + r1 * sn, t2 = -h + r2 * sn;  // axial tangent points (top, bottom)
      auto radius = [&](double y) {
        if (y >= t1) return std::sqrt(std::max(0.0, r1 * r1 - (y - h) * (y - h)));
        if (y <= t2) return std::sqrt(std::max(0.0, r2 * r2 - (y + h) * (y + h)));
        const double f = (y - t2) / (t1 - t2);
        return (r2 + (r1 - r2) * f) * cs;
      };
      const double lo = -h - r2, hi = h + r1;
      constexpr int kSlices = 4096;
      const double dy = (hi - lo) / kSlices;
      double v = 0, my = 0, iyy = 0, ixx_origin = 0;
      for (int k = 0; k < kSlices; ++k) {
        const double y = lo + (k + 0.5) * dy, rho = radius(y), dv = kPiD * rho * rho * dy;
        v += dv;
        my += dv * y;
        iyy += 0.5 * dv * rho * rho;
        ixx_origin += dv * (rho * rho / 4.0 + y * y);
      }
      const double cy = my / v;
      out.volume = static_cast<float>(v);
      out.centre = Vec3{0, static_cast<float>(cy), 0};
      const double ixx = ixx_origin - v * cy * cy;
      diag(ixx, iyy, ixx);
      break;
    }
  }
  return out;
}

void DiagonaliseSymmetric(const float m_in[3][3], Quat* axes, Vec3* values) {
  double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) a[r][c] = m_in[r][c];
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    if (off < 1e-30) break;
    for (int p = 0; p < 2; ++p) {
      for (int q = p + 1; q < 3; ++q) {
        if (std::fabs(a[p][q]) < 1e-300) continue;
        // Jacobi rotation zeroing a[p][q] (Golub & Van Loan, "Matrix Computations", 8.5).
        const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < 3; ++k) {
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  Vec3 x{static_cast<float>(v[0][0]), static_cast<float>(v[1][0]), static_cast<float>(v[2][0])};
  Vec3 y{static_cast<float>(v[0][1]), static_cast<float>(v[1][1]), static_cast<float>(v[2][1])};
  Vec3 z = Cross(x, y);  // a proper rotation (the Jacobi product may be a reflection)
  y = Cross(z, x);
  *axes = FromColumns(NormalizeOr(x, {1, 0, 0}), NormalizeOr(y, {0, 1, 0}), NormalizeOr(z, {0, 0, 1}));
  *values = Vec3{static_cast<float>(a[0][0]), static_cast<float>(a[1][1]), static_cast<float>(a[2][2])};
}

Error BuildRagdollArchetype(const RagdollSettings& settings, RagdollArchetype* out) {
  const auto count = static_cast<int32_t>(settings.parts.size());
  if (count == 0) return Fail(ErrorCode::kEmpty, -1, "parts", "a ragdoll needs at least one part");
  if (count > kMaxRagdollParts)
    return Fail(ErrorCode::kCapacity, -1, "parts", "a ragdoll has at most " + std::to_string(kMaxRagdollParts) + " parts");
  if (Error e = CheckRange(settings.total_mass, 0, 1e7f, -1, "total_mass"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.stabilize.max_mass_ratio, 1, 1e6f, -1, "stabilize.max_mass_ratio"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.stabilize.min_inertia_ratio, 0, 1, -1, "stabilize.min_inertia_ratio"); !Ok(e)) return e;
  // Contact events' thresholds (tendon/contact_events.h): finite and >= 0 (1e6 is past any
  // impact: 0 disables a threshold, enabled = false the events).
  if (Error e = CheckRange(settings.contact_events.min_impulse, 0, 1e9f, -1, "contact_events.min_impulse"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.contact_events.min_normal_speed, 0, 1e6f, -1, "contact_events.min_normal_speed"); !Ok(e))
    return e;
  for (int32_t i = 0; i < count; ++i) {
    const PartSettings& p = settings.parts[i];
    if (Error e = CheckPart(p, i, count); !Ok(e)) return e;
    if (p.parent > i) {
      int32_t at = p.parent;
      for (int32_t guard = 0; at >= 0 && guard <= count; ++guard) {
        if (at == i) return Fail(ErrorCode::kCycle, i, PartField(i, ".parent"), "part " + std::to_string(i) + " is its own ancestor");
        const int32_t next = settings.parts[at].parent;
        at = next >= -1 && next < count ? next : -1;
      }
      return Fail(ErrorCode::kParentNotBefore, i, PartField(i, ".parent"),
                  "part " + std::to_string(i) + "'s joint names parent " + std::to_string(p.parent) +
                      ", which must come before it");
    }
    if (p.parent < 0 && i > 0)
      return Fail(ErrorCode::kDisconnected, i, PartField(i, ".parent"),
                  "part " + std::to_string(i) + " has no parent, but part 0 is the root: the tree is disconnected");
    if (p.mass == 0 && p.mass_share > 0 && !(settings.total_mass > 0))
      return Fail(ErrorCode::kOutOfRange, i, "total_mass", "part " + std::to_string(i) + " has a mass_share but total_mass is 0");
  }
  for (int32_t k = 0; k < static_cast<int32_t>(settings.self_collision_pairs.size()); ++k) {
    const auto [a, b] = settings.self_collision_pairs[k];
    if (a < 0 || a >= count || b < 0 || b >= count || a == b)
      return Fail(ErrorCode::kBadReference, k, "self_collision_pairs[" + std::to_string(k) + "]",
                  "a self-collision pair names two distinct parts in [0, " + std::to_string(count) + ")");
  }

  RagdollArchetype r;
  r.name = settings.name;
  r.collision_group = settings.collision_group;
  r.collision_mask = settings.collision_mask;
  r.self_collision_pairs = settings.self_collision_pairs;
  r.contact_events = settings.contact_events;
  r.parts.resize(count);
  struct Tensor {
    float m[3][3];
  };
  std::vector<Tensor> unit_inertia(count);
  for (int32_t i = 0; i < count; ++i) {
    const PartSettings& p = settings.parts[i];
    RigidPartArchetype& a = r.parts[i];
    a.name = p.name;
    a.parent = p.parent;
    a.shape = p.shape;
    const ShapeMass sm = ComputeShapeMass(p.shape);
    a.volume = sm.volume;
    a.mass = p.mass > 0 ? p.mass : (p.mass_share > 0 ? p.mass_share * settings.total_mass : p.density * sm.volume);
    if (!(a.mass > 0) || !std::isfinite(a.mass))
      return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".mass"), "the part's mass comes out as zero");
    // Inertia about the centre of mass in the part frame: R I R^T, scaled to the mass.
    const Quat q = p.shape.offset.rotation;
    const Vec3 cols[3] = {Rotate(q, {1, 0, 0}), Rotate(q, {0, 1, 0}), Rotate(q, {0, 0, 1})};
    const float scale = a.mass / sm.volume;
    Tensor& t = unit_inertia[i];
    for (int row = 0; row < 3; ++row) {
      for (int col = 0; col < 3; ++col) {
        float sum = 0;
        for (int k = 0; k < 3; ++k) {
          for (int l = 0; l < 3; ++l) {
            // R[row][k] is component `row` of column k.
            sum += Component(cols[k], row) * sm.inertia[k][l] * Component(cols[l], col);
          }
        }
        t.m[row][col] = sum * scale;
      }
    }
    Quat axes;
    Vec3 principal;
    DiagonaliseSymmetric(t.m, &axes, &principal);
    a.inertia = principal;
    a.body_in_part = Transform{TransformPoint(p.shape.offset, sm.centre), axes, {1, 1, 1}};
    a.body_pose = Compose(p.pose, a.body_in_part);
    a.shape_in_body = Relative(a.body_in_part, Transform{p.shape.offset.translation, p.shape.offset.rotation, {1, 1, 1}});
    a.friction = p.friction;
    a.restitution = p.restitution;
    a.linear_damping = p.linear_damping;
    a.angular_damping = p.angular_damping;
    a.gravity_factor = p.gravity_factor;
    a.max_linear_speed = p.max_linear_speed;
    a.max_angular_speed = p.max_angular_speed;
  }
  // Stabilisation: raise the lighter part of each joint, keep the total, fatten thin inertia.
  if (settings.stabilize.enabled) {
    float before = 0;
    for (const RigidPartArchetype& a : r.parts) before += a.mass;
    const float ratio = settings.stabilize.max_mass_ratio;
    for (int pass = 0; pass < 4; ++pass) {
      for (int32_t i = 1; i < count; ++i) {
        RigidPartArchetype& child = r.parts[i];
        RigidPartArchetype& parent = r.parts[child.parent];
        const float floor_mass = std::max(child.mass, parent.mass) / ratio;
        for (RigidPartArchetype* part : {&child, &parent}) {
          if (part->mass < floor_mass) {
            part->inertia = part->inertia * (floor_mass / part->mass);
            part->mass = floor_mass;
          }
        }
      }
    }
    float after = 0;
    for (const RigidPartArchetype& a : r.parts) after += a.mass;
    for (RigidPartArchetype& a : r.parts) {
      a.mass *= before / after;
      a.inertia = a.inertia * (before / after);
      const float largest = std::max(a.inertia.x, std::max(a.inertia.y, a.inertia.z));
      const float floor_inertia = largest * settings.stabilize.min_inertia_ratio;
      a.inertia = Vec3{std::max(a.inertia.x, floor_inertia), std::max(a.inertia.y, floor_inertia),
                       std::max(a.inertia.z, floor_inertia)};
    }
  }
  for (int32_t i = 0; i < count; ++i) {
    RigidPartArchetype& a = r.parts[i];
    a.inv_mass = 1.0f / a.mass;
    a.inv_inertia = Vec3{1.0f / a.inertia.x, 1.0f / a.inertia.y, 1.0f / a.inertia.z};
    // Sizes in range can still meet an extreme mass: the solver needs finite, positive
    // inverses, or the body would reset every frame and never move.
    const bool finite = std::isfinite(a.inv_mass) && IsFinite(a.inertia) && IsFinite(a.inv_inertia) &&
                        a.inertia.x > 0 && a.inertia.y > 0 && a.inertia.z > 0 && a.inv_mass > 0;
    if (!finite)
      return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".mass"),
                  "part " + std::to_string(i) + "'s mass properties are not finite (mass " + std::to_string(a.mass) +
                      " kg on its shape): choose a mass and size nearer a body's");
    // The centre of mass in the part's frame, and the body's pose, must be finite and
    // within the size limit (10 km) too: a frame composed with them is written to the host.
    if (!IsFinite(a.body_in_part) || !IsFinite(a.body_pose) || !(Length(a.body_in_part.translation) <= 1e4f))
      return Fail(ErrorCode::kOutOfRange, i, PartField(i, ".shape"),
                  "part " + std::to_string(i) + "'s centre of mass is not finite or lies farther than 10 km from it");
    r.total_mass += a.mass;
  }
  // Joint frames in both bodies' frames, from the build pose.
  for (int32_t i = 1; i < count; ++i) {
    const JointSettings& j = settings.parts[i].joint;
    RigidPartArchetype& child = r.parts[i];
    const RigidPartArchetype& parent = r.parts[child.parent];
    const Quat frame = FromColumns(j.twist_axis, j.plane_axis, Cross(j.twist_axis, j.plane_axis));
    const bool child_axes = !(j.child_twist_axis == Vec3{});
    const Quat child_frame = child_axes ? FromColumns(j.child_twist_axis, j.child_plane_axis,
                                                      Cross(j.child_twist_axis, j.child_plane_axis))
                                        : frame;
    RigidJointArchetype& out_joint = child.joint;
    out_joint.type = j.type;
    out_joint.anchor_in_parent = Relative(parent.body_pose, Transform{j.anchor, {}, {1, 1, 1}}).translation;
    out_joint.anchor_in_child = Relative(child.body_pose, Transform{j.anchor, {}, {1, 1, 1}}).translation;
    out_joint.frame_in_parent = Normalize(Conjugate(parent.body_pose.rotation) * frame);
    out_joint.frame_in_child = Normalize(Conjugate(child.body_pose.rotation) * child_frame);
    out_joint.normal_half_cone = j.normal_half_cone_degrees * kDegToRad;
    out_joint.plane_half_cone = j.plane_half_cone_degrees * kDegToRad;
    out_joint.twist_min = j.twist_min_degrees * kDegToRad;
    out_joint.twist_max = j.twist_max_degrees * kDegToRad;
    out_joint.hinge_min = j.hinge_min_degrees * kDegToRad;
    out_joint.hinge_max = j.hinge_max_degrees * kDegToRad;
    out_joint.friction_torque = j.friction_torque_per_kg * child.mass;
    out_joint.motor = j.motor;
  }
  *out = std::move(r);
  return {};
}

}  // namespace tendon::detail
