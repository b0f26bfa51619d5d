// kernel/rigid/ragdoll_measure.cpp: tendon/ragdoll_measure.h, and the scalar joint measure
// it shares with building limits from clips (ragdoll_archetype.h, MeasureJointFrames): the
// measures the solver enforces, from frames and settings alone, so that a check made with
// them does not lean on the solver's state.
#include "tendon/ragdoll_measure.h"

#include "kernel/rigid/ragdoll_archetype.h"

#include <algorithm>
#include <cmath>

namespace tendon {
namespace detail {

JointAngles MeasureJointFrames(Quat parent_frame, Quat child_frame) {
  JointAngles out;
  const Vec3 a1 = Rotate(parent_frame, Vec3{1, 0, 0}), a2 = Rotate(child_frame, Vec3{1, 0, 0});
  const Vec3 axis = Cross(a1, a2);
  const float sin_swing = Length(axis);
  out.swing = std::atan2(sin_swing, Dot(a1, a2));
  if (sin_swing > 1e-9f) {
    const Vec3 n = Rotate(Conjugate(parent_frame), axis * (1.0f / sin_swing));  // (0, ny, nz)
    out.swing_y = out.swing * n.y;
    out.swing_z = out.swing * n.z;
  }
  // The plane axes projected normal to the mean twist axis (atan2 is scale-free).
  const Vec3 m = NormalizeOr(a1 + a2, a1);
  const Vec3 y1 = Rotate(parent_frame, Vec3{0, 1, 0}), y2 = Rotate(child_frame, Vec3{0, 1, 0});
  const Vec3 b1 = y1 - m * Dot(y1, m), b2 = y2 - m * Dot(y2, m);
  out.twist = std::atan2(Dot(Cross(b1, b2), m), Dot(b1, b2));
  return out;
}

}  // namespace detail

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
  // The joint frames (x: twist, y: plane axis) of the build pose, turned with each part.
  const Vec3 ct = js.child_twist_axis == Vec3{} ? js.twist_axis : js.child_twist_axis;
  const Vec3 cp = js.child_plane_axis == Vec3{} ? js.plane_axis : js.child_plane_axis;
  const Quat parent_frame = parts[child.parent].rotation * Conjugate(parent.pose.rotation) *
                            detail::FromColumns(js.twist_axis, js.plane_axis, Cross(js.twist_axis, js.plane_axis));
  const Quat child_frame = parts[part].rotation * Conjugate(child.pose.rotation) * detail::FromColumns(ct, cp, Cross(ct, cp));
  const detail::JointAngles angles = detail::MeasureJointFrames(parent_frame, child_frame);
  out.swing = angles.swing;
  out.twist = angles.twist;
  if (js.type == JointType::kHinge) {
    out.twist_min = js.hinge_min_degrees * kDeg;
    out.twist_max = js.hinge_max_degrees * kDeg;
    return out;
  }
  // The cone's half-angle along the swing's axis (n_y, n_z in the parent joint frame): an
  // ellipse with half-angles normal_half_cone (y) and plane_half_cone (z).
  const float ny = angles.swing > 1e-9f ? angles.swing_y / angles.swing : 1.0f;
  const float nz = angles.swing > 1e-9f ? angles.swing_z / angles.swing : 0.0f;
  const float ky = ny / std::max(js.normal_half_cone_degrees * kDeg, 1e-6f);
  const float kz = nz / std::max(js.plane_half_cone_degrees * kDeg, 1e-6f);
  out.swing_limit = 1.0f / std::sqrt(std::max(ky * ky + kz * kz, 1e-12f));
  out.twist_min = js.twist_min_degrees * kDeg;
  out.twist_max = js.twist_max_degrees * kDeg;
  return out;
}

}  // namespace tendon
