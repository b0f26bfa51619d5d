// kernel/rigid/rigid_constants.cpp: an archetype's lane-uniform numbers for the rigid
// kernels (rigid_constants.h).
//
// Everything the kernels would otherwise work out per lane and per substep is worked out
// here once per group: the contact spheres already in the body frame, the joint frames as
// raw floats, the motors' natural frequency and torque cap, the limb inertia's stiffness
// scale (a subtree walk the kernels could not afford), and the limits' core, which lets
// SolveLimits skip the turn for a lane well inside its limits without changing a bit.
#include "kernel/rigid/rigid_constants.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernel/rigid/shape_samples.h"

namespace tendon::detail {

// The limits' core of a swing-twist joint (RigidPartConstants::limits_core). The margins
// (1 mrad on the twist, 1e-3 of the swing's squared ratio) are far above the rounding of
// the core test and of SolveLimits' angles (about 1e-6 relative), so a lane in the core is
// one the full test finds within its limits, and skipping the turn for it changes no bit.
void SetLimitsCore(RigidPartConstants* c) {
  constexpr double kTwistMargin = 1e-3;  // rad
  constexpr double kPi = 3.14159265358979323846;
  if (c->joint_type != 0) return;
  const double a = std::max(static_cast<double>(c->normal_half_cone), 1e-6);
  const double b = std::max(static_cast<double>(c->plane_half_cone), 1e-6);
  const double lo = c->twist_min, hi = c->twist_max;
  const double half = 0.5 * (hi - lo) - kTwistMargin;
  if (a < 2e-3 || b < 2e-3 || half < kTwistMargin || lo < -kPi || hi > kPi) return;
  c->limits_core = 1;
  c->swing_core_inv2[0] = static_cast<float>(1.0 / (a * a));
  c->swing_core_inv2[1] = static_cast<float>(1.0 / (b * b));
  const double mid = 0.5 * (lo + hi);
  c->twist_core_mid[0] = static_cast<float>(std::cos(mid));
  c->twist_core_mid[1] = static_cast<float>(std::sin(mid));
  const double k = std::cos(half);
  c->twist_core_cos2 = static_cast<float>(k < 0.0 ? -k * k : k * k);
}

// The lane-uniform constants of an archetype's parts, for the rigid kernels.
std::vector<RigidPartConstants> RigidConstants(const RagdollArchetype& a, bool kinematic_root) {
  std::vector<RigidPartConstants> out(a.parts.size());
  for (std::size_t j = 0; j < a.parts.size(); ++j) {
    const RigidPartArchetype& p = a.parts[j];
    RigidPartConstants& c = out[j];
    c.parent = p.parent;
    const bool kinematic = a.kinematic_bodies || (kinematic_root && j == 0);
    c.inv_mass = kinematic ? 0.0f : p.inv_mass;
    c.inv_inertia[0] = kinematic ? 0.0f : p.inv_inertia.x;
    c.inv_inertia[1] = kinematic ? 0.0f : p.inv_inertia.y;
    c.inv_inertia[2] = kinematic ? 0.0f : p.inv_inertia.z;
    c.gravity_factor = p.gravity_factor;
    c.linear_damping = p.linear_damping;
    c.angular_damping = p.angular_damping;
    c.max_linear_speed = p.max_linear_speed;
    c.max_angular_speed = p.max_angular_speed;
    c.friction = p.friction;
    c.restitution = p.restitution;
    auto add_point = [&](Vec3 shape_local, float radius) {
      const Vec3 b = TransformPoint(p.shape_in_body, shape_local);
      c.points[c.point_count][0] = b.x;
      c.points[c.point_count][1] = b.y;
      c.points[c.point_count][2] = b.z;
      c.points[c.point_count][3] = radius;
      c.extent = std::max(c.extent, Length(b) + radius);
      ++c.point_count;
    };
    ForEachShapeSample(p.shape, /*face_centres=*/false, add_point);
    const RigidJointArchetype& jt = p.joint;
    c.joint_type = jt.type == JointType::kHinge ? 1 : 0;
    const Vec3 ap = jt.anchor_in_parent, ac = jt.anchor_in_child;
    c.anchor_parent[0] = ap.x, c.anchor_parent[1] = ap.y, c.anchor_parent[2] = ap.z;
    c.anchor_child[0] = ac.x, c.anchor_child[1] = ac.y, c.anchor_child[2] = ac.z;
    const Quat fp = jt.frame_in_parent, fc = jt.frame_in_child;
    c.frame_parent[0] = fp.x, c.frame_parent[1] = fp.y, c.frame_parent[2] = fp.z, c.frame_parent[3] = fp.w;
    c.frame_child[0] = fc.x, c.frame_child[1] = fc.y, c.frame_child[2] = fc.z, c.frame_child[3] = fc.w;
    c.normal_half_cone = jt.normal_half_cone;
    c.plane_half_cone = jt.plane_half_cone;
    c.twist_min = jt.twist_min;
    c.twist_max = jt.twist_max;
    SetLimitsCore(&c);
    c.hinge_min = jt.hinge_min;
    c.hinge_max = jt.hinge_max;
    c.friction_torque = jt.friction_torque;
    c.motor_omega = 2.0f * 3.14159265f * jt.motor.frequency_hz;
    c.motor_damping_ratio = jt.motor.damping_ratio;
    c.motor_max_torque = jt.motor.max_torque_per_kg * p.mass;
  }
  // A limb-inertia motor holds the whole limb below its joint (an arm held out against
  // gravity is the upper arm, forearm and hand): its spring's inertia is the subtree's
  // about the joint (parallel-axis theorem, principal inertias averaged), not the child's
  // alone (MotorSettings::limb_inertia).
  const auto n = static_cast<int32_t>(a.parts.size());
  auto mean_inertia = [](const RigidPartArchetype& p) { return (p.inertia.x + p.inertia.y + p.inertia.z) / 3.0f; };
  for (int32_t j = 1; j < n; ++j) {
    const RigidPartArchetype& child = a.parts[j];
    if (!child.joint.motor.limb_inertia) continue;
    const Vec3 anchor = TransformPoint(child.body_pose, child.joint.anchor_in_child);
    float limb = 0;
    for (int32_t k = j; k < n; ++k) {
      int32_t at = k;
      while (at > j) at = a.parts[at].parent;
      if (at != j) continue;  // not in j's subtree
      limb += mean_inertia(a.parts[k]) + a.parts[k].mass * LengthSquared(a.parts[k].body_pose.translation - anchor);
    }
    const float own = mean_inertia(child);
    out[j].motor_stiffness_scale = own > 0 ? std::max(limb / own, 1.0f) : 1.0f;
  }
  return out;
}

std::vector<std::array<float, 4>> PairSamplePoints(const RigidPartArchetype& p) {
  std::vector<std::array<float, 4>> points;
  auto add = [&](Vec3 local, float radius) {
    const Vec3 body_point = TransformPoint(p.shape_in_body, local);
    points.push_back({body_point.x, body_point.y, body_point.z, radius});
  };
  ForEachShapeSample(p.shape, /*face_centres=*/true, add);
  return points;
}

}  // namespace tendon::detail
