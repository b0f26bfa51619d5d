// kernel/rigid/rigid_kernel_joint_limits.h: a joint's swing-twist and hinge limits in the
// XPBD kernel (rigid_kernel_impl.h), solved as one angular correction.
//
// Owns: ApplyAngular, XPBD's angular correction with zero compliance: body 2 turns by the
// rotation vector e relative to body 1, lambda = |e| / w with w = e^ . (I1^-1 + I2^-1) e^
// (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position Based
// Dynamics"; docs/ragdolls.md, XPBD step: angular correction); LimitCorrection, the
// turn back into [lo, hi]; and SolveLimits: the swing-twist joint's elliptical cone and
// twist range, or the hinge's axis alignment and angle range, measured from one pose and
// summed (the notes' "Joint limits (the paper's limitAngle)"), with the early out of
// RigidPartConstants::limits_core when every lane is well inside.
// Does not: the attachment (rigid_kernel_positional_joint.h), joint friction
// (rigid_kernel_joint_friction.h) or motors (rigid_kernel_motor.h).
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none; it changes the caller's bodies only.
#pragma once

#include "kernel/rigid/rigid_kernel_body.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// Angular correction: body 2 should turn by the rotation vector e relative to body 1.
template <class V>
inline void ApplyAngular(Body<V>& a, Body<V>& b, const V3<V>& e) {
  using O = Ops<V>;
  // The impulse along e that turns body 2 by |e| relative to body 1: lambda = |e| / w with
  // w = e^ . (I1^-1 + I2^-1) e^, that is e / (e . (I1^-1 + I2^-1) e) without normalising e.
  const V3<V> ta = InvInertia(a, e), tb = InvInertia(b, e);
  const V w = Dot3(e, ta) + Dot3(e, tb);
  const V k = O::Select(w > O::Splat(1e-24f), Dot3(e, e) / O::Max(w, O::Splat(1e-24f)), O::Splat(0.0f));
  a.q = Turn(a.q, ta, O::Splat(0.0f) - k);
  b.q = Turn(b.q, tb, k);
}

// The correction that brings an angle phi about n back into [lo, hi]; zero inside.
template <class V>
inline V3<V> LimitCorrection(const V& phi, float lo, float hi, const V3<V>& n) {
  using O = Ops<V>;
  const V over = O::Max(phi - O::Splat(hi), O::Splat(0.0f));
  const V under = O::Min(phi - O::Splat(lo), O::Splat(0.0f));
  return Scale(n, O::Splat(0.0f) - (over + under));
}

// The limits of one joint as one angular correction: the swing-twist joint's cone and
// twist range, or the hinge's axis alignment and angle range, each measured from the same
// pose and summed (the swing turns about an axis normal to both twist axes and the twist
// about their mean, so the two are orthogonal and one correction serves both).
template <class V>
inline void SolveLimits(Body<V>& a, Body<V>& b, const RigidPartConstants& cb, const typename Ops<V>::Mask& keep) {
  using O = Ops<V>;
  const V zero = O::Splat(0.0f);
  const Frame3<V> fa = QFrame(QMul(a.q, SplatQ<V>(cb.frame_parent)));
  const Frame3<V> fb = QFrame(QMul(b.q, SplatQ<V>(cb.frame_child)));
  const V3<V>& a1 = fa.x;
  const V3<V>& a2 = fb.x;
  const V3<V> axis = Cross3(a1, a2);  // swing axis times sin(swing)
  const V cos_swing = Dot3(a1, a2);
  // The angle about the mean twist axis between the plane axes, projected normal to it
  // (atan2 of unnormalised projections: it is scale-free).
  const V3<V> tn = SafeNormal(Add(a1, a2));
  const V3<V> p1 = Sub(fa.y, Scale(tn, Dot3(fa.y, tn))), p2 = Sub(fb.y, Scale(tn, Dot3(fb.y, tn)));
  const V twist_y = Dot3(Cross3(p1, p2), tn), twist_x = Dot3(p1, p2);
  // Inside the limits' core in every lane (`keep` lanes, whose results are not stored, count
  // as inside): nothing to turn, and no angle is needed to say so (see
  // RigidPartConstants::limits_core).
  if (cb.limits_core != 0.0f) {
    const V ay = Dot3(axis, fa.y), az = Dot3(axis, fa.z);
    const V cone = ay * ay * O::Splat(cb.swing_core_inv2[0]) + az * az * O::Splat(cb.swing_core_inv2[1]);
    const auto swing_in = O::And(cos_swing > zero, cone < cos_swing * cos_swing * O::Splat(1.0f - 1e-3f));
    const V mid_x = twist_x * O::Splat(cb.twist_core_mid[0]) + twist_y * O::Splat(cb.twist_core_mid[1]);
    const V twist_r2 = twist_x * twist_x + twist_y * twist_y;
    const auto twist_in = O::Abs(mid_x) * mid_x > O::Splat(cb.twist_core_cos2) * twist_r2;
    if (O::AllOf(O::Or(keep, O::And(swing_in, twist_in)))) return;
  }
  const V sin_swing = Length3(axis);
  const V swing = Atan2<V>(sin_swing, cos_swing);
  const V twist = Atan2<V>(twist_y, twist_x);
  if (cb.joint_type == 1) {
    // Hinge: the axes aligned (turn body 2 by -swing about the swing axis), the angle about
    // them within [hinge_min, hinge_max].
    const V k = O::Select(sin_swing > O::Splat(1e-12f), swing / O::Max(sin_swing, O::Splat(1e-12f)), zero);
    ApplyAngular(a, b, Sub(LimitCorrection(twist, cb.hinge_min, cb.hinge_max, tn), Scale(axis, k)));
    return;
  }
  // Swing inside an elliptical cone whose half-angles are about the parent's plane axis
  // (normal_half_cone) and its normal (plane_half_cone): the limit along the swing axis n
  // is 1 / |(n.y / normal_half_cone, n.z / plane_half_cone)| in the parent's joint frame.
  const V3<V> n = SafeNormal(axis);
  const V ky = Dot3(n, fa.y) * O::Splat(1.0f / (cb.normal_half_cone > 1e-6f ? cb.normal_half_cone : 1e-6f));
  const V kz = Dot3(n, fa.z) * O::Splat(1.0f / (cb.plane_half_cone > 1e-6f ? cb.plane_half_cone : 1e-6f));
  const V limit = O::Splat(1.0f) / O::Sqrt(O::Max(ky * ky + kz * kz, O::Splat(1e-12f)));
  const V excess = O::Max(swing - limit, zero);
  const V3<V> twist_fix = LimitCorrection(twist, cb.twist_min, cb.twist_max, tn);
  // Within both limits in every lane (a joint at rest mostly is): nothing to turn.
  if (!O::AnyOf(O::Or(excess > zero, O::Or(twist < O::Splat(cb.twist_min), twist > O::Splat(cb.twist_max))))) return;
  ApplyAngular(a, b, Sub(twist_fix, Scale(n, excess)));
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
