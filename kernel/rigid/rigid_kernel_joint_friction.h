// kernel/rigid/rigid_kernel_joint_friction.h: joint friction in the XPBD kernel
// (rigid_kernel_impl.h), at the position level.
//
// Owns: JointFriction: Coulomb friction on a joint's relative rotation. The rotation is held
// at the substep's start while the angular impulse that takes, summed over the substep's
// joint passes, stays within friction_torque x h^2 (Body::friction_left is what is left);
// the impulse is the angular correction's, |e|^3 / w with w = |e|^2 x the generalised
// inverse inertia along e (docs/ragdolls.md, XPBD step: angular correction).
// Does not: say which joints have friction, or how much a substep allows (the driver,
// rigid_kernel_impl.h, sets friction_left: none where the joint's motor drives it, as in
// Jolt's joints), nor damp velocities (rigid_kernel_motor.h's MotorDamping is the motors').
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

// Joint friction, at the position level and inside the joint's solve: the joint's
// relative rotation is held at the substep's start while the angular impulse that takes,
// summed over the substep's joint passes, stays within friction_torque x h^2 (Coulomb
// friction; b.friction_left is what is left of it). Solved with the attachment, pass after
// pass, a limb whose weight the friction can carry stays put: neither turning alone nor
// turning after the attachment has converted gravity's drop into a turn (velocity level,
// as before: a creep of ~3 g h) holds it. A joint its motor drives has none.
template <class V>
inline void JointFriction(Body<V>& a, Body<V>& b) {
  using O = Ops<V>;
  if (!O::AnyOf(b.friction_left > O::Splat(0.0f))) return;  // spent, or motor-driven in every lane
  // The turn of b (relative to a) back to the relative rotation at the substep's start:
  // q_a (q_a,prev^-1 q_b,prev) q_b^-1, as a rotation vector.
  const Q4<V> d = QMul(QMul(a.q, QMul(QConj(a.qp), b.qp)), QConj(b.q));
  const V sign = O::Select(d.w < O::Splat(0.0f), O::Splat(-2.0f), O::Splat(2.0f));
  const V3<V> e{d.x * sign, d.y * sign, d.z * sign};
  const V3<V> ta = InvInertia(a, e), tb = InvInertia(b, e);
  const V w = Dot3(e, ta) + Dot3(e, tb);  // |e|^2 x the generalised inverse inertia along e
  const V e2 = Dot3(e, e);
  const V safe_w = O::Max(w, O::Splat(1e-24f));
  // The impulse that undoes it, |e|^3 / w, within what is left: turn by that fraction.
  const V needed = e2 * O::Sqrt(e2) / safe_w;
  const V applied = O::Min(needed, b.friction_left);
  b.friction_left = b.friction_left - applied;
  const V fraction = O::Select(needed > O::Splat(1e-30f), applied / O::Max(needed, O::Splat(1e-30f)), O::Splat(0.0f));
  const V k = O::Select(w > O::Splat(1e-24f), e2 / safe_w * fraction, O::Splat(0.0f));
  a.q = Turn(a.q, ta, O::Splat(0.0f) - k);
  b.q = Turn(b.q, tb, k);
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
