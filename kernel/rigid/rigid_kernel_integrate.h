// kernel/rigid/rigid_kernel_integrate.h: a part's integration and its velocities from
// positions, the two ends of an XPBD substep (rigid_kernel_impl.h).
//
// Owns: Integrate: x_prev = x; v += h g gravity_factor; linear and angular damping; speeds
// clamped (ClampLength); x += h v; q_prev = q; w -= h I^-1 (w x I w) in the body frame,
// where I is diagonal (the gyroscopic term); q += h/2 [w, 0] q, normalised exactly. And
// UpdateVelocities: v = (x - x_prev) / h; w = 2 (q q_prev^-1).xyz / h, negated when the
// difference's w is negative (Müller et al. 2020, "Detailed Rigid Body Simulation with
// Extended Position Based Dynamics", and Macklin et al. 2019, "Small Steps in Physics
// Simulation"; docs/ragdolls.md, XPBD step: the substep loop).
// Does not: the settling ragdoll's damping or the world inverse inertia after integration
// (the driver, rigid_kernel_impl.h), nor any constraint.
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

template <class V>
inline V3<V> ClampLength(const V3<V>& v, float max_length) {
  using O = Ops<V>;
  const V len = Length3(v);
  const V s = O::Min(O::Splat(1.0f), O::Splat(max_length) / O::Max(len, O::Splat(1e-12f)));
  return Scale(v, s);
}

template <class V>
inline void Integrate(Body<V>& b, const RigidPartConstants& c, const RigidSolveParams& sp) {
  using O = Ops<V>;
  b.xp = b.x;
  b.qp = b.q;
  if (c.inv_mass == 0.0f) {
    b.v = {O::Splat(0.0f), O::Splat(0.0f), O::Splat(0.0f)};
    b.w = b.v;
    return;
  }
  const V h = O::Splat(sp.dt);
  const V3<V> g = Splat3<V>(sp.gravity);
  b.v = Add(b.v, Scale(g, O::Splat(sp.dt * c.gravity_factor)));
  b.v = Scale(b.v, O::Splat(c.linear_damping * sp.dt < 1.0f ? 1.0f - c.linear_damping * sp.dt : 0.0f));
  b.w = Scale(b.w, O::Splat(c.angular_damping * sp.dt < 1.0f ? 1.0f - c.angular_damping * sp.dt : 0.0f));
  b.v = ClampLength(b.v, c.max_linear_speed);
  b.w = ClampLength(b.w, c.max_angular_speed);
  b.x = Add(b.x, Scale(b.v, h));
  // Gyroscopic term in the body frame, where I is diagonal.
  V3<V> wb = QRotate(QConj(b.q), b.w);
  const V3<V> inertia{O::Splat(1.0f / c.inv_inertia[0]), O::Splat(1.0f / c.inv_inertia[1]),
                      O::Splat(1.0f / c.inv_inertia[2])};
  const V3<V> torque = Cross3(wb, V3<V>{wb.x * inertia.x, wb.y * inertia.y, wb.z * inertia.z});
  wb = Sub(wb, V3<V>{torque.x * O::Splat(sp.dt * c.inv_inertia[0]), torque.y * O::Splat(sp.dt * c.inv_inertia[1]),
                     torque.z * O::Splat(sp.dt * c.inv_inertia[2])});
  b.w = QRotate(b.q, wb);
  // Exactly normalised once a substep (the corrections' turns only hold it near unit).
  b.q = QNormalize(Turn(b.q, b.w, h));
}

template <class V>
inline void UpdateVelocities(Body<V>& b, const RigidPartConstants& c, const RigidSolveParams& sp) {
  using O = Ops<V>;
  if (c.inv_mass == 0.0f) return;
  const V inv_h = O::Splat(1.0f / sp.dt);
  b.v = Scale(Sub(b.x, b.xp), inv_h);
  const Q4<V> dq = QMul(b.q, QConj(b.qp));
  const V sign = O::Select(dq.w < O::Splat(0.0f), O::Splat(-2.0f), O::Splat(2.0f)) * inv_h;
  b.w = V3<V>{dq.x * sign, dq.y * sign, dq.z * sign};
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
