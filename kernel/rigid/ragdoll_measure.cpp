// kernel/rigid/ragdoll_measure.cpp: tendon/ragdoll_measure.h. The same measures the solver
// enforces (rigid_kernel_impl.h's SolveLimits), written again in plain scalar code from the
// settings, so that a check made with them does not lean on the solver's internals.
#include "tendon/ragdoll_measure.h"

#include <algorithm>
#include <cmath>

namespace tendon {

JointMeasure MeasureJoint(const RagdollSettings& settings, std::span<const Transform> parts, int32_t part) {
  JointMeasure out;
  const auto count = static_cast<int32_t>(settings.parts.size());
  if (part < 1 || part >= count || parts.size() < settings.parts.size()) return out;
  const PartSettings& child = settings.parts[part];
  if (child.parent < 0 || child.parent >= count) return out;
  const PartSettings& parent = settings.parts[child.parent];
  const JointSettings& js = child.joint;
  constexpr float kDeg = 3.14159265f / 180.0f;
  // Anchors: the joint's build-pose anchor, fixed in each part.
  const Transform anchor{js.anchor, {}, {1, 1, 1}};
  const Vec3 on_parent = TransformPoint(parts[child.parent], Relative(parent.pose, anchor).translation);
  const Vec3 on_child = TransformPoint(parts[part], Relative(child.pose, anchor).translation);
  out.gap = Length(on_parent - on_child);
  // Each part's turn from the build pose, and the joint axes turned with it.
  const Vec3 ct = js.child_twist_axis == Vec3{} ? js.twist_axis : js.child_twist_axis;
  const Vec3 cp = js.child_plane_axis == Vec3{} ? js.plane_axis : js.child_plane_axis;
  const Quat pr = parts[child.parent].rotation * Conjugate(parent.pose.rotation);
  const Quat cr = parts[part].rotation * Conjugate(child.pose.rotation);
  const Vec3 a1 = Rotate(pr, js.twist_axis), a2 = Rotate(cr, ct);
  const Vec3 y1 = Rotate(pr, js.plane_axis), z1 = Cross(a1, y1);
  const Vec3 axis = Cross(a1, a2);
  out.swing = std::atan2(Length(axis), Dot(a1, a2));
  const Vec3 m = NormalizeOr(a1 + a2, a1);
  const Vec3 b1 = NormalizeOr(y1 - m * Dot(y1, m), y1);
  const Vec3 y2 = Rotate(cr, cp);
  const Vec3 b2 = NormalizeOr(y2 - m * Dot(y2, m), y2);
  out.twist = std::atan2(Dot(Cross(b1, b2), m), Dot(b1, b2));
  if (js.type == JointType::kHinge) {
    out.swing_limit = 0;
    out.twist_min = js.hinge_min_degrees * kDeg;
    out.twist_max = js.hinge_max_degrees * kDeg;
    return out;
  }
  const Vec3 n = NormalizeOr(axis, y1);
  const float ky = Dot(n, y1) / std::max(js.normal_half_cone_degrees * kDeg, 1e-6f);
  const float kz = Dot(n, z1) / std::max(js.plane_half_cone_degrees * kDeg, 1e-6f);
  out.swing_limit = 1.0f / std::sqrt(std::max(ky * ky + kz * kz, 1e-12f));
  out.twist_min = js.twist_min_degrees * kDeg;
  out.twist_max = js.twist_max_degrees * kDeg;
  return out;
}

}  // namespace tendon
