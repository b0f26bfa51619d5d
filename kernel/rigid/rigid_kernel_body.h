// kernel/rigid/rigid_kernel_body.h: a ragdoll part's state in lanes, and the rotation and
// inertia arithmetic every other part of the XPBD kernel (rigid_kernel_impl.h) uses.
//
// Owns: Body (position, velocity, angular velocity and orientation, the substep's start
// pose, the world inverse inertia, the joint friction left) loaded from a RigidBlockView,
// and stored back except in sleeping and padding lanes (StoreStepped); the small turn
// q + h/2 [w, 0] q with one Newton step back to unit length (Turn: the XPBD update of an
// orientation, Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position
// Based Dynamics"; docs/ragdolls.md); a unit quaternion's frame (QFrame);
// and the world inverse inertia R diag(I^-1) R^T, held for a half substep as Macklin et
// al. 2019 ("Small Steps in Physics Simulation") hold it for a substep.
// Does not: integrate (rigid_kernel_integrate.h) or correct anything (the joint, contact
// and motor parts). Every part includes it first, so it checks, for them all, that the
// translation unit named its namespace.
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none; it reads and writes the caller's RigidBlockView.
#pragma once

#include <cstdint>

#include "kernel/rigid/rigid_block.h"
#include "kernel/simd/ops.h"

#ifndef TENDON_RIGID_KERNEL_NS
#error "define TENDON_RIGID_KERNEL_NS to a namespace unique to the translation unit"
#endif

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// The inverse inertia in world space, a symmetric 3x3 matrix R diag(I^-1) R^T. It is
// computed once per half substep, from the orientation after integration (positions) or
// after the position solve (velocities), and used for every correction of that half: the
// corrections turn a body by a small angle, so the frame's change within the half moves
// it by a second-order amount (Macklin et al. 2019 hold it fixed over a substep too), and
// one 3x3 product replaces two quaternion rotations per use.
template <class V>
struct InvI {
  V xx, yy, zz, xy, xz, yz;
};
template <class V>
inline V3<V> Mul(const InvI<V>& m, const V3<V>& u) {
  using O = Ops<V>;
  return {O::Fma(m.xx, u.x, O::Fma(m.xy, u.y, m.xz * u.z)), O::Fma(m.xy, u.x, O::Fma(m.yy, u.y, m.yz * u.z)),
          O::Fma(m.xz, u.x, O::Fma(m.yz, u.y, m.zz * u.z))};
}

template <class V>
struct Body {
  V3<V> x, v, w, xp;
  Q4<V> q, qp;
  InvI<V> ii;
  V friction_left;  // the joint to the parent: friction impulse left this substep
};

template <class V>
inline Body<V> LoadBody(const RigidBlockView& b, int32_t part, int32_t lane) {
  using O = Ops<V>;
  auto ld = [&](int32_t f) { return O::Load(b.Part(f, part) + lane); };
  return Body<V>{{ld(kRbXx), ld(kRbXy), ld(kRbXz)},     {ld(kRbVx), ld(kRbVy), ld(kRbVz)},
                 {ld(kRbWx), ld(kRbWy), ld(kRbWz)},  {ld(kRbXPx), ld(kRbXPy), ld(kRbXPz)},
                 {ld(kRbQx), ld(kRbQy), ld(kRbQz), ld(kRbQw)}, {ld(kRbQPx), ld(kRbQPy), ld(kRbQPz), ld(kRbQPw)}, {}, O::Splat(0.0f)};
}

// Stores `v` except in `keep` lanes (sleeping and padding ones), whose memory keeps its old
// value. A lane that shares its batch with awake ones is computed along with them; neither
// its body nor its contact state (friction holds, push-out left, planes) takes the result,
// exactly as when its whole batch is skipped or the scalar reference steps it alone.
template <class V, class M>
inline void StoreStepped(float* p, const V& v, const M& keep) {
  using O = Ops<V>;
  O::Store(p, O::Select(keep, O::Load(p), v));
}
template <class V, class M>
inline void StoreBodyMasked(const RigidBlockView& b, int32_t part, int32_t lane, const Body<V>& body, const M& keep) {
  auto st = [&](int32_t f, const V& v) { StoreStepped(b.Part(f, part) + lane, v, keep); };
  st(kRbXx, body.x.x), st(kRbXy, body.x.y), st(kRbXz, body.x.z);
  st(kRbVx, body.v.x), st(kRbVy, body.v.y), st(kRbVz, body.v.z);
  st(kRbWx, body.w.x), st(kRbWy, body.w.y), st(kRbWz, body.w.z);
  st(kRbXPx, body.xp.x), st(kRbXPy, body.xp.y), st(kRbXPz, body.xp.z);
  st(kRbQx, body.q.x), st(kRbQy, body.q.y), st(kRbQz, body.q.z), st(kRbQw, body.q.w);
  st(kRbQPx, body.qp.x), st(kRbQPy, body.qp.y), st(kRbQPz, body.qp.z), st(kRbQPw, body.qp.w);
}

template <class V>
inline V3<V> Splat3(const float* p) {
  using O = Ops<V>;
  return {O::Splat(p[0]), O::Splat(p[1]), O::Splat(p[2])};
}
template <class V>
inline Q4<V> SplatQ(const float* p) {
  using O = Ops<V>;
  return {O::Splat(p[0]), O::Splat(p[1]), O::Splat(p[2]), O::Splat(p[3])};
}
template <class V>
inline V Length3(const V3<V>& a) {
  return Ops<V>::Sqrt(Dot3(a, a));
}
// a / |a|, or zero when a is (nearly) zero.
template <class V>
inline V3<V> SafeNormal(const V3<V>& a) {
  using O = Ops<V>;
  const V len2 = Dot3(a, a);
  const V inv = O::Select(len2 > O::Splat(1e-24f), O::Splat(1.0f) / O::Sqrt(O::Max(len2, O::Splat(1e-24f))),
                          O::Splat(0.0f));
  return Scale(a, inv);
}
template <class V>
inline Q4<V> QNormalize(const Q4<V>& q) {
  using O = Ops<V>;
  const V inv = O::Splat(1.0f) / O::Sqrt(O::Max(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, O::Splat(1e-30f)));
  return {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}
// q + s/2 [u, 0] q: q turned by the small rotation vector s u, brought back to unit length
// by one Newton step of 1/sqrt about 1 (q (3 - |q|^2) / 2): no square root or division,
// and for a turn of angle t the length error left is about 3 t^4 / 64 (t = 0.1 rad:
// 5e-6), which the next turn's step shrinks again.
// A lane whose turn is zero keeps q bit for bit (the renormalisation would move its last
// bits), so that a lane's result never depends on what the other lanes of its batch do:
// the SIMD kernels skip work when no lane needs it, and the scalar reference per lane.
template <class V>
inline Q4<V> Turn(const Q4<V>& q, const V3<V>& u, const V& s) {
  using O = Ops<V>;
  const V half = s * O::Splat(0.5f);
  const V3<V> h{u.x * half, u.y * half, u.z * half};
  const Q4<V> d = QMul(Q4<V>{h.x, h.y, h.z, O::Splat(0.0f)}, q);
  const Q4<V> t{q.x + d.x, q.y + d.y, q.z + d.z, q.w + d.w};
  const V len2 = O::Fma(t.x, t.x, O::Fma(t.y, t.y, O::Fma(t.z, t.z, t.w * t.w)));
  V k = O::Fma(len2, O::Splat(-0.5f), O::Splat(1.5f));
  // A turn past about 1 rad (|t|^2 > 1.25) is normalised exactly: the Newton step loses
  // accuracy there and goes negative past 2 sqrt(2) rad, which made a large correction grow
  // the quaternion without bound. Turns that large are rare (a deep initial penetration, a
  // joint bound far apart), so the branch is almost never taken and small turns keep their
  // bits.
  const auto large = len2 > O::Splat(1.25f);
  if (O::AnyOf(large)) k = O::Select(large, O::Splat(1.0f) / O::Sqrt(len2), k);
  const auto still = O::And(h.x == O::Splat(0.0f), O::And(h.y == O::Splat(0.0f), h.z == O::Splat(0.0f)));
  return {O::Select(still, q.x, t.x * k), O::Select(still, q.y, t.y * k), O::Select(still, q.z, t.z * k),
          O::Select(still, q.w, t.w * k)};
}
// The x, y and z axes of a unit quaternion's frame (its rotation matrix's columns).
template <class V>
struct Frame3 {
  V3<V> x, y, z;
};
template <class V>
inline Frame3<V> QFrame(const Q4<V>& q) {
  using O = Ops<V>;
  const V two = O::Splat(2.0f), one = O::Splat(1.0f);
  const V xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const V wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return {{one - two * (yy + zz), two * (xy + wz), two * (xz - wy)},
          {two * (xy - wz), one - two * (xx + zz), two * (yz + wx)},
          {two * (xz + wy), two * (yz - wx), one - two * (xx + yy)}};
}

// R diag(i0, i1, i2) R^T for the frame R (its columns the body axes in world): a world
// inverse inertia from the body frame's diagonal.
template <class V>
inline InvI<V> WorldInvInertia(const Frame3<V>& axes, const V& i0, const V& i1, const V& i2) {
  using O = Ops<V>;
  const V3<V>& c0 = axes.x;
  const V3<V>& c1 = axes.y;
  const V3<V>& c2 = axes.z;
  auto entry = [&](const V& a0, const V& a1, const V& a2, const V& b0, const V& b1, const V& b2) {
    return O::Fma(a0 * b0, i0, O::Fma(a1 * b1, i1, a2 * b2 * i2));
  };
  return InvI<V>{entry(c0.x, c1.x, c2.x, c0.x, c1.x, c2.x), entry(c0.y, c1.y, c2.y, c0.y, c1.y, c2.y),
                 entry(c0.z, c1.z, c2.z, c0.z, c1.z, c2.z), entry(c0.x, c1.x, c2.x, c0.y, c1.y, c2.y),
                 entry(c0.x, c1.x, c2.x, c0.z, c1.z, c2.z), entry(c0.y, c1.y, c2.y, c0.z, c1.z, c2.z)};
}
// The body's world inverse inertia from its orientation (I diagonal in the body frame).
template <class V>
inline void UpdateWorldInertia(Body<V>& b, const RigidPartConstants& c) {
  using O = Ops<V>;
  b.ii = WorldInvInertia(QFrame(b.q), O::Splat(c.inv_inertia[0]), O::Splat(c.inv_inertia[1]),
                         O::Splat(c.inv_inertia[2]));
}
// I^-1 u for a world vector u.
template <class V>
inline V3<V> InvInertia(const Body<V>& b, const V3<V>& u) {
  return Mul(b.ii, u);
}
// u^T I^-1 u.
template <class V>
inline V InvInertiaNorm(const Body<V>& b, const V3<V>& u) {
  return Dot3(u, Mul(b.ii, u));
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
