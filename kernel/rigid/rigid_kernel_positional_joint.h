// kernel/rigid/rigid_kernel_positional_joint.h: the positional joint of the XPBD kernel
// (rigid_kernel_impl.h): the positional correction, and the attachment built on it.
//
// Owns: ApplyPositional, XPBD's positional correction with zero compliance: body 2's point
// moves by e relative to body 1's, lambda = |e| / (w1 + w2) with the generalised inverse
// masses w_i = 1/m_i + (r_i x n)^T I_i^-1 (r_i x n), split between the bodies' positions
// and orientations (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended
// Position Based Dynamics"; docs/ragdolls.md, XPBD step: positional correction);
// and SolveAttachment, which makes a joint's two anchors coincide with it.
// Does not: the joint's limits (rigid_kernel_joint_limits.h) or friction
// (rigid_kernel_joint_friction.h), nor the order they run in (SolveJoint,
// rigid_kernel_impl.h); the contacts' corrections are their own (rigid_kernel_contact_solve.h).
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

// Positional correction: body 2's point (r2 from its centre) should move by e relative to
// body 1's point (r1). Returns the impulse magnitude (lambda).
template <class V>
inline V ApplyPositional(Body<V>* a, const RigidPartConstants* ca, const V3<V>& r1, Body<V>& b,
                         const RigidPartConstants& cb, const V3<V>& r2, const V3<V>& e) {
  using O = Ops<V>;
  const V c = Length3(e);
  const V3<V> n = SafeNormal(e);
  const V3<V> rn2 = Cross3(r2, n);
  const V3<V> ti2 = InvInertia(b, rn2);  // turn of body 2 per unit impulse
  V w = O::Splat(cb.inv_mass) + Dot3(rn2, ti2);
  V3<V> ti1{};
  if (a != nullptr) {
    const V3<V> rn1 = Cross3(r1, n);
    ti1 = InvInertia(*a, rn1);
    w = w + O::Splat(ca->inv_mass) + Dot3(rn1, ti1);
  }
  const V lambda = c / O::Max(w, O::Splat(1e-12f));
  b.x = Add(b.x, Scale(n, lambda * O::Splat(cb.inv_mass)));
  b.q = Turn(b.q, ti2, lambda);
  if (a != nullptr) {
    a->x = Sub(a->x, Scale(n, lambda * O::Splat(ca->inv_mass)));
    a->q = Turn(a->q, ti1, O::Splat(0.0f) - lambda);
  }
  return lambda;
}

// The attachment: the anchors coincide. Solved after the limits, whose pure rotations
// move the anchors.
template <class V>
inline void SolveAttachment(Body<V>& a, const RigidPartConstants& ca, Body<V>& b, const RigidPartConstants& cb) {
  const V3<V> r1 = QRotate(a.q, Splat3<V>(cb.anchor_parent));
  const V3<V> r2 = QRotate(b.q, Splat3<V>(cb.anchor_child));
  ApplyPositional(&a, &ca, r1, b, cb, r2, Sub(Add(a.x, r1), Add(b.x, r2)));
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
