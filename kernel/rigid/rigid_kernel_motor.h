// kernel/rigid/rigid_kernel_motor.h: joint motors in the XPBD kernel (rigid_kernel_impl.h),
// a position part and a velocity part.
//
// Owns: SolveMotor, a compliant angular constraint that turns the child toward its target
// relative rotation as a spring of natural frequency omega: alpha = 1 / (i_eff omega^2),
// alpha~ = alpha / h^2, the impulse capped by strength x max_torque x h^2 a substep; and
// MotorDamping, which damps the relative angular velocity toward the target one (a
// fraction 2 zeta omega h a substep, capped by strength x max_torque x h)
// (docs/ragdolls.md, XPBD step: motors; RigidPartConstants::motor_stiffness_scale).
// Does not: say which joints are driven or when (the driver, rigid_kernel_impl.h), or
// limit the joint (rigid_kernel_joint_limits.h).
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none; it reads the block's motor targets and changes the caller's bodies.
#pragma once

#include "kernel/rigid/rigid_kernel_body.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// Motor, position part: turn the child toward its target relative rotation as a spring of
// natural frequency omega (XPBD compliance alpha = 1 / (i_eff omega^2), with i_eff the
// joint's effective inertia about the error axis, raised to the limb's: see
// RigidPartConstants::motor_stiffness_scale), the impulse capped by strength x
// max_torque x h^2 per substep (see docs/ragdolls.md, XPBD step: motors).
template <class V>
inline void SolveMotor(const RigidBlockView& blk, int32_t part, int32_t lane, Body<V>& a, const RigidPartConstants& /*ca*/,
                       Body<V>& b, const RigidPartConstants& cb, const RigidSolveParams& sp, const V& strength) {
  using O = Ops<V>;
  auto ld = [&](int32_t f) { return O::Load(blk.Part(f, part) + lane); };
  const Q4<V> target = QMul(a.q, Q4<V>{ld(kMotorQx), ld(kMotorQy), ld(kMotorQz), ld(kMotorQw)});
  Q4<V> d = QMul(target, QConj(b.q));  // the rotation still to go, world
  const V sign = O::Select(d.w < O::Splat(0.0f), O::Splat(-1.0f), O::Splat(1.0f));
  d = {d.x * sign, d.y * sign, d.z * sign, d.w * sign};
  const V3<V> axis{d.x, d.y, d.z};
  const V3<V> n = SafeNormal(axis);
  const V theta = O::Splat(2.0f) * Atan2<V>(Length3(axis), d.w);
  const V w = InvInertiaNorm(a, n) + InvInertiaNorm(b, n);
  // alpha~ = alpha / h^2 = w / (s (omega h)^2), s the limb's inertia over the child's.
  const float oh = cb.motor_omega * sp.dt;
  const V alpha = w * O::Splat(1.0f / (oh * oh * cb.motor_stiffness_scale));
  V lambda = theta / O::Max(w + alpha, O::Splat(1e-12f));
  const V cap = strength * O::Splat(cb.motor_max_torque * sp.dt * sp.dt);
  lambda = O::Min(lambda, cap);
  const V3<V> p = Scale(n, lambda);
  a.q = Turn(a.q, InvInertia(a, p), O::Splat(-1.0f));
  b.q = Turn(b.q, InvInertia(b, p), O::Splat(1.0f));
}

// Motor, velocity part: damp the relative angular velocity toward the target one with
// ratio zeta (a fraction 2 zeta omega h per substep), capped by strength x max_torque x h.
template <class V>
inline void MotorDamping(const RigidBlockView& blk, int32_t part, int32_t lane, Body<V>& a, const RigidPartConstants& /*ca*/,
                         Body<V>& b, const RigidPartConstants& cb, const RigidSolveParams& sp, const V& strength) {
  using O = Ops<V>;
  auto ld = [&](int32_t f) { return O::Load(blk.Part(f, part) + lane); };
  const V3<V> target = QRotate(a.q, V3<V>{ld(kMotorWx), ld(kMotorWy), ld(kMotorWz)});
  const V3<V> error = Sub(Sub(b.w, a.w), target);
  const V3<V> n = SafeNormal(error);
  const V w = InvInertiaNorm(a, n) + InvInertiaNorm(b, n);
  const float damp = 2.0f * cb.motor_damping_ratio * cb.motor_omega * sp.dt;
  const float fraction = damp < 1.0f ? damp : 1.0f;
  V impulse = Length3(error) * O::Splat(fraction) / O::Max(w, O::Splat(1e-12f));
  impulse = O::Min(impulse, strength * O::Splat(cb.motor_max_torque * sp.dt));
  const V3<V> p = Scale(n, impulse);
  a.w = Add(a.w, InvInertia(a, p));
  b.w = Sub(b.w, InvInertia(b, p));
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
