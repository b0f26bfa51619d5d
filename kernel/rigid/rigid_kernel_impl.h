// kernel/rigid/rigid_kernel_impl.h: substepped XPBD for ragdoll parts, written once.
//
// Like the chain kernel, every function is a template over V (float, FusedFloat, or an
// explicit-arch xsimd batch) and is instantiated in the per-instruction-set translation
// units, each under its own TENDON_RIGID_KERNEL_NS. Lanes are instances of one archetype;
// lanes never interact, so each slice of V::size lanes runs all its substeps alone.
//
// The substep (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position
// Based Dynamics", and Macklin et al. 2019, "Small Steps in Physics Simulation"; the
// formulas are summarised in docs/ragdolls.md, "The XPBD step"), in two halves so that
// the contacts between ragdolls (a colour's pairs in lanes: pair_kernel_impl.h, driven by
// kernel/contacts/pair_contacts.cpp) run between them:
//   positions    integrate: x_prev = x; v += h g; damp (and settle); clamp speeds;
//                x += h v; q_prev = q; w += h I^-1 (-w x I w) (body frame); q += h/2 [w,0] q
//                world inverse inertia per body (held for the half)
//                motors (compliant, capped); joints, `iterations` times root to leaf and
//                back: joint friction (Coulomb, position level), limits (one angular
//                correction), attachment (positional)
//                static contacts against the frame's contact planes (found on the frame's
//                first substep): normal corrections swept over a part's spheres, then
//                static friction held over a window of impulses
//   [contacts between ragdolls: positions]
//   velocities   joints leaf to root and root to leaf (planar lanes projected around them)
//                v = (x - x_prev) / h; w = 2 (q q_prev^-1).xyz / h
//                motor damping; contact dynamic friction, restitution, rolling resistance
//   [contacts between ragdolls: velocities]
// Conventions used throughout: a correction `e` is what body 2 (the child, or the part
// against static geometry) should move or turn by relative to body 1 (the parent); it is
// split between the bodies by their generalised inverse masses. Inactive corrections are
// computed as zero-length and change nothing (a zero turn keeps a quaternion bit for bit),
// so a branch that skips work when no lane of a batch needs it is an exact no-op for the
// lanes that run it anyway. Sleeping and padding lanes computed beside awake ones store
// nothing (StoreStepped). So no lane's result depends on the others in its batch, and
// every kernel gives its scalar reference's bits at any batch width (4, 8 or 16 lanes;
// tests/golden_hash_test.cpp).
#include <cmath>
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

// The attachment: the anchors coincide. Solved after the limits, whose pure rotations
// move the anchors.
template <class V>
inline void SolveAttachment(Body<V>& a, const RigidPartConstants& ca, Body<V>& b, const RigidPartConstants& cb) {
  const V3<V> r1 = QRotate(a.q, Splat3<V>(cb.anchor_parent));
  const V3<V> r2 = QRotate(b.q, Splat3<V>(cb.anchor_child));
  ApplyPositional(&a, &ca, r1, b, cb, r2, Sub(Add(a.x, r1), Add(b.x, r2)));
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

// `keep`: sleeping and padding lanes (their results are not stored).
template <class V>
inline void SolveJoint(Body<V>& a, const RigidPartConstants& ca, Body<V>& b, const RigidPartConstants& cb,
                       const typename Ops<V>::Mask& keep) {
  if (cb.friction_torque > 0.0f) JointFriction(a, b);
  SolveLimits(a, b, cb, keep);
  SolveAttachment(a, ca, b, cb);
}

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

// Signed distance from point c to a static shape and the outward normal there (the
// nearest feature). A point inside a box leaves through its nearest face.
template <class V>
inline void ShapeDistance(const StaticShape& sh, const V3<V>& c, V* dist, V3<V>* normal, V3<V>* surface) {
  using O = Ops<V>;
  const V zero = O::Splat(0.0f);
  if (sh.kind == kStaticBox) {
    const Q4<V> q = SplatQ<V>(sh.q);
    const V3<V> centre = Splat3<V>(sh.a);
    const V3<V> local = QRotate(QConj(q), Sub(c, centre));
    const V hx = O::Splat(sh.half[0]), hy = O::Splat(sh.half[1]), hz = O::Splat(sh.half[2]);
    const V3<V> clamped{O::Min(O::Max(local.x, zero - hx), hx), O::Min(O::Max(local.y, zero - hy), hy),
                        O::Min(O::Max(local.z, zero - hz), hz)};
    const V3<V> out = Sub(local, clamped);
    const V out_len = Length3(out);
    // Inside: the face with the least depth.
    const V dx = hx - O::Abs(local.x), dy = hy - O::Abs(local.y), dz = hz - O::Abs(local.z);
    const V one = O::Splat(1.0f);
    const V sx = O::Select(local.x < zero, zero - one, one), sy = O::Select(local.y < zero, zero - one, one),
            sz = O::Select(local.z < zero, zero - one, one);
    const auto x_face = O::And(dx <= dy, dx <= dz);
    const auto y_face = O::And(dy < dx, dy <= dz);
    V3<V> in_n{zero, zero, sz};
    in_n = Select3(y_face, V3<V>{zero, sy, zero}, in_n);
    in_n = Select3(x_face, V3<V>{sx, zero, zero}, in_n);
    const V in_d = zero - O::Min(dx, O::Min(dy, dz));
    const auto outside = out_len > O::Splat(1e-7f);
    const V3<V> n_local = Select3(outside, Scale(out, one / O::Max(out_len, O::Splat(1e-7f))), in_n);
    *dist = O::Select(outside, out_len, in_d);
    *normal = QRotate(q, n_local);
    *surface = Add(centre, QRotate(q, Select3(outside, clamped, Add(local, Scale(n_local, zero - in_d)))));
    return;
  }
  V3<V> core = Splat3<V>(sh.a);
  if (sh.kind == kStaticCapsule) {
    const V3<V> b = Splat3<V>(sh.b);
    const V3<V> ab = Sub(b, core);
    const V t = O::Min(O::Max(Dot3(Sub(c, core), ab) / O::Max(Dot3(ab, ab), O::Splat(1e-12f)), zero), O::Splat(1.0f));
    core = Add(core, Scale(ab, t));
  }
  const V3<V> d = Sub(c, core);
  const V len = Length3(d);
  *normal = Select3(len > O::Splat(1e-7f), Scale(d, O::Splat(1.0f) / O::Max(len, O::Splat(1e-7f))),
                    V3<V>{zero, O::Splat(1.0f), zero});
  *dist = len - O::Splat(sh.radius);
  *surface = Add(core, Scale(*normal, O::Splat(sh.radius)));
}

// The deepest contact of a sphere (centre c, previous centre c_prev, radius r) against the
// static world's planes and shapes (MeshContact adds the meshes). Speculative: the contact
// plane (normal and surface point) comes from c_prev, where the sphere's path starts (the
// frame's start in FindStaticContacts, the substep's for meshes), so a fast part meets the
// face it came through instead of being pushed out of the far side of a thin wall.
// Returns the signed depth (< 0: penetrating) and the normal.
template <class V>
inline void StaticContact(const RigidSolveParams& sp, const V3<V>& c, const V3<V>& c_prev, const V& r, V* depth,
                          V3<V>* normal) {
  using O = Ops<V>;
  const V zero = O::Splat(0.0f);
  V best = O::Splat(1e30f);
  V3<V> best_n{zero, O::Splat(1.0f), zero};
  for (int32_t pl = 0; pl < sp.plane_count; ++pl) {
    const V3<V> pn = Splat3<V>(sp.planes[pl]);
    const V d = Dot3(c, pn) - O::Splat(sp.planes[pl][3]) - r;
    const auto deeper = d < best;
    best = O::Select(deeper, d, best);
    best_n = Select3(deeper, pn, best_n);
  }
  for (int32_t k = 0; k < sp.shape_count; ++k) {
    V prev_dist, now_dist;
    V3<V> prev_n, prev_surface, now_n, now_surface;
    ShapeDistance(sp.shapes[k], c_prev, &prev_dist, &prev_n, &prev_surface);
    ShapeDistance(sp.shapes[k], c, &now_dist, &now_n, &now_surface);
    // Came from outside and crossed the supporting plane at the previous closest point:
    // if the path meets the shape where it crosses that plane, the contact is on that face
    // (even when the sphere is now inside, or already through the far side).
    const V prev_gap = prev_dist - r;
    const auto from_outside = prev_gap > zero;
    const V spec = Dot3(Sub(c, prev_surface), prev_n) - r;
    const V t = prev_gap / O::Max(prev_gap - spec, O::Splat(1e-12f));
    V cross_dist;
    V3<V> cross_n, cross_surface;
    ShapeDistance(sp.shapes[k], Lerp3(c_prev, c, O::Min(O::Max(t, zero), O::Splat(1.0f))), &cross_dist, &cross_n,
                  &cross_surface);
    const auto hit = O::And(O::And(from_outside, spec < zero), cross_dist - r < O::Splat(1e-3f));
    const V d = O::Select(hit, spec, now_dist - r);
    const V3<V> n = Select3(hit, prev_n, now_n);
    const auto deeper = d < best;
    best = O::Select(deeper, d, best);
    best_n = Select3(deeper, n, best_n);
  }
  *depth = best;
  *normal = best_n;
}

// Meshes and heightfields: each lane queries the BVH for itself; a contact deeper than
// (depth, normal) replaces it.
template <class V>
inline void MeshContact(const RigidSolveParams& sp, const V3<V>& c, const V3<V>& c_prev, const V& r, V* depth,
                        V3<V>* normal) {
  using O = Ops<V>;
  V best = *depth;
  V3<V> best_n = *normal;
  {
    alignas(64) float cx[O::kSize], cy[O::kSize], cz[O::kSize], px[O::kSize], py[O::kSize], pz[O::kSize];
    alignas(64) float rr[O::kSize], bd[O::kSize], nx[O::kSize], ny[O::kSize], nz[O::kSize];
    O::Store(cx, c.x), O::Store(cy, c.y), O::Store(cz, c.z);
    O::Store(px, c_prev.x), O::Store(py, c_prev.y), O::Store(pz, c_prev.z);
    O::Store(rr, r), O::Store(bd, best);
    O::Store(nx, best_n.x), O::Store(ny, best_n.y), O::Store(nz, best_n.z);
    for (int32_t i = 0; i < O::kSize; ++i) {
      const float centre[3] = {cx[i], cy[i], cz[i]}, prev[3] = {px[i], py[i], pz[i]};
      float d = 0, n[3] = {0, 0, 0};
      if (sp.mesh_contact(sp.mesh, centre, prev, rr[i], &d, n) && d < bd[i]) {
        bd[i] = d;
        nx[i] = n[0], ny[i] = n[1], nz[i] = n[2];
      }
    }
    best = O::Load(bd);
    best_n = {O::Load(nx), O::Load(ny), O::Load(nz)};
  }
  *depth = best;
  *normal = best_n;
}

// The contact planes of one part's spheres against the static world, once per frame:
// each sphere's deepest contact over the path it would take this frame at its current
// velocity (the speculative test in StaticContact: a fast part meets the face it is
// heading for), kept as a plane (normal, offset) in the block. Within a frame a sphere
// moves a few centimetres at most at ragdoll speeds, so the plane of its nearest feature
// stays a close stand-in for the feature (a box's face exactly; a sphere or capsule of
// radius R off by s^2 / 2R after a slide s); a 50 m/s part moves 0.8 m and is held at the
// face it came through.
template <class V>
inline void FindStaticContacts(const RigidBlockView& blk, int32_t part, int32_t lane, const Body<V>& b,
                               const RigidPartConstants& c, const RigidSolveParams& sp,
                               const typename Ops<V>::Mask& keep) {
  using O = Ops<V>;
  const V ahead = O::Splat(sp.frame_seconds);
  for (int32_t k = 0; k < c.point_count; ++k) {
    const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
    const V radius = O::Splat(c.points[k][3]);
    const V3<V> arm = QRotate(b.qp, local);
    const V3<V> start = Add(b.xp, arm);
    const V3<V> end = Add(start, Scale(Add(b.v, Cross3(b.w, arm)), ahead));
    V depth;
    V3<V> n;
    StaticContact(sp, end, start, radius, &depth, &n);
    if (sp.mesh_contact != nullptr) MeshContact(sp, end, start, radius, &depth, &n);
    // A point resting on the same face keeps its static friction hold across frames; one
    // that meets another face starts afresh.
    const V3<V> was{O::Load(blk.Contact(kCnx, part, k) + lane), O::Load(blk.Contact(kCny, part, k) + lane),
                    O::Load(blk.Contact(kCnz, part, k) + lane)};
    const auto same_face = Dot3(was, n) > O::Splat(0.95f);
    float* sum = blk.Contact(kLambdaSum, part, k) + lane;
    StoreStepped(sum, O::Select(same_face, O::Load(sum), O::Splat(0.0f)), keep);
    StoreStepped(blk.Contact(kCnx, part, k) + lane, n.x, keep);
    StoreStepped(blk.Contact(kCny, part, k) + lane, n.y, keep);
    StoreStepped(blk.Contact(kCnz, part, k) + lane, n.z, keep);
    StoreStepped(blk.Contact(kPlaneOffset, part, k) + lane, Dot3(end, n) - radius - depth, keep);
  }
}

// Contacts of one part against the static world: positions, against the frame's planes.
// A few sweeps of sequential corrections let a box's corners share the push-out (one
// sweep alone would spin a box that lands flat, and Jacobi averaging under-corrects a
// light, fast part enough to let it through a thin wall).
template <class V>
inline void SolveContacts(const RigidBlockView& blk, int32_t part, int32_t lane, Body<V>& b,
                          const RigidPartConstants& c, const RigidSolveParams& sp, const typename Ops<V>::Mask& keep) {
  using O = Ops<V>;
  // One sweep per contact sphere, at most three: a sphere's one contact needs one, a
  // capsule's two ends share the push-out in two.
  const int32_t sweeps = c.point_count < 3 ? c.point_count : 3;
  const V zero = O::Splat(0.0f);
  V3<V> normals[kMaxContactPoints];
  V offsets[kMaxContactPoints];
  V lambdas[kMaxContactPoints];
  V depths[kMaxContactPoints];
  if (sp.find_static_contacts) FindStaticContacts(blk, part, lane, b, c, sp, keep);
  bool any_touching = false;
  for (int32_t k = 0; k < c.point_count; ++k) {
    const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
    const V radius = O::Splat(c.points[k][3]);
    V3<V> n{O::Load(blk.Contact(kCnx, part, k) + lane), O::Load(blk.Contact(kCny, part, k) + lane),
            O::Load(blk.Contact(kCnz, part, k) + lane)};
    V offset = O::Load(blk.Contact(kPlaneOffset, part, k) + lane);
    const V3<V> arm = QRotate(b.q, local);
    if (sp.mesh_contact != nullptr) {
      // A mesh's surface bends from triangle to triangle (a valley of a heightfield), so
      // meshes are also queried every substep; a contact deeper than the frame's plane
      // stands in for it this substep.
      const V3<V> centre = Add(b.x, arm);
      V depth = Dot3(centre, n) - radius - offset;
      const V before = depth;
      MeshContact(sp, centre, Add(b.xp, QRotate(b.qp, local)), radius, &depth, &n);
      offset = O::Select(depth < before, Dot3(centre, n) - radius - depth, offset);
    }
    normals[k] = n;
    offsets[k] = offset;
    lambdas[k] = zero;
    depths[k] = Dot3(Add(b.x, arm), n) - radius - offsets[k];
    const auto touching = Dot3(Add(b.x, arm), n) - radius < offsets[k];
    any_touching = any_touching || O::AnyOf(touching);
    const V3<V> r = Sub(arm, Scale(n, radius));
    // Normal speed before the position solve, for restitution.
    StoreStepped(blk.Contact(kNormalSpeed, part, k) + lane, Dot3(Add(b.v, Cross3(b.w, r)), n), keep);
    StoreStepped(blk.Contact(kTouching, part, k) + lane, O::Select(touching, O::Splat(1.0f), zero), keep);
  }
  if (!any_touching) {
    for (int32_t k = 0; k < c.point_count; ++k) {
      StoreStepped(blk.Contact(kLambdaN, part, k) + lane, zero, keep);
      StoreStepped(blk.Contact(kLambdaSum, part, k) + lane, zero, keep);  // the hold is let go
      StoreStepped(blk.Contact(kDeferred, part, k) + lane, zero, keep);   // placed clear of the world
    }
    return;
  }
  // Depenetration at a bounded speed. Correcting a deep penetration in one substep moves
  // the part by all of it in h, and every part the joints drag along keeps that speed (a
  // leg bound 10 cm into the floor jumped 10 m). So the penetration a part was placed in
  // (bound, activated, set by SetRagdollPartStates: kDeferred is kPlacedPenetration) is
  // pushed out at most sp.max_push a substep; what is left stays in kDeferred, which
  // shrinks by max_push a substep, so the push-out ends as smoothly as it ran. Everything
  // else is taken out at once, as before: what the substep's own motion adds (a landing)
  // and what joints and ragdoll pairs press a part back in between substeps (up to 2.4 cm
  // at a corner in the Jolt-human piles, which a bound would let sink). A point no deeper
  // than max_push is within the bound already, so only deeper ones measure their start,
  // and the usual contact's arithmetic is unchanged.
  V left_in[kMaxContactPoints];  // the penetration this substep leaves, m (>= 0)
  const V max_push = O::Splat(sp.max_push);
  for (int32_t k = 0; k < c.point_count; ++k) {
    left_in[k] = zero;
    float* deferred = blk.Contact(kDeferred, part, k) + lane;
    if (!O::AnyOf(depths[k] < zero - max_push)) {
      StoreStepped(deferred, zero, keep);
      continue;
    }
    const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
    const V start_in =
        O::Max(offsets[k] + O::Splat(c.points[k][3]) - Dot3(Add(b.xp, QRotate(b.qp, local)), normals[k]), zero);
    const V held = O::Min(start_in, O::Load(deferred));
    left_in[k] = O::Select(depths[k] < zero - max_push, O::Max(held - max_push, zero), zero);
    StoreStepped(deferred, left_in[k], keep);
  }
  for (int32_t sweep = 0; sweep < sweeps; ++sweep) {
    for (int32_t k = 0; k < c.point_count; ++k) {
      const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
      const V radius = O::Splat(c.points[k][3]);
      const V3<V>& n = normals[k];
      const V3<V> arm = QRotate(b.q, local);
      const V depth = Dot3(Add(b.x, arm), n) - radius - offsets[k];
      const auto penetrating = depth < zero;
      if (!O::AnyOf(penetrating)) continue;
      const V3<V> r = Sub(arm, Scale(n, radius));
      const V w = O::Splat(c.inv_mass) + InvInertiaNorm(b, Cross3(r, n));
      const V correction = O::Max((zero - depth) - left_in[k], zero);
      const V lambda = O::Select(penetrating, correction / O::Max(w, O::Splat(1e-12f)), zero);
      const V3<V> p = Scale(n, lambda);
      b.x = Add(b.x, Scale(p, O::Splat(c.inv_mass)));
      b.q = Turn(b.q, InvInertia(b, Cross3(r, p)), O::Splat(1.0f));
      lambdas[k] = lambdas[k] + lambda;
    }
  }
  // Static friction: the contact point is held where it touched while Coulomb's cone
  // holds for the impulses over a recent window (each decays by kFrictionWindow a
  // substep): the tangential impulse that holds it within friction x the normal one. One
  // substep alone (Müller et al. 2020) compares the weight's small share of normal impulse
  // with whatever slide the joints' corrections left in that substep, which lets a body
  // at rest creep; a point that slips is held afresh from where it is.
  constexpr float kFrictionWindow = 0.875f;  // about 8 substeps
  const V window = O::Splat(kFrictionWindow);
  for (int32_t k = 0; k < c.point_count; ++k) {
    const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
    const V radius = O::Splat(c.points[k][3]);
    const V3<V>& n = normals[k];
    const V lambda_n = lambdas[k];
    StoreStepped(blk.Contact(kLambdaN, part, k) + lane, lambda_n, keep);
    const auto touching = lambda_n > zero;
    float* normal_sum = blk.Contact(kLambdaSum, part, k) + lane;
    if (!O::AnyOf(touching)) {
      StoreStepped(normal_sum, zero, keep);
      continue;
    }
    // A lane with no normal impulse keeps the geometric test SolveContacts stored above
    // (a point held back by bounded depenetration touches without an impulse), exactly as
    // when no lane of its batch touches: a lane's result never depends on its batch.
    float* touching_out = blk.Contact(kTouching, part, k) + lane;
    StoreStepped(touching_out, O::Select(touching, O::Splat(1.0f), O::Load(touching_out)), keep);
    const V sum_before = O::Load(normal_sum);
    const V sum = O::Select(touching, O::Fma(sum_before, window, lambda_n), zero);
    StoreStepped(normal_sum, sum, keep);
    const V3<V> r = Sub(QRotate(b.q, local), Scale(n, radius));
    const V3<V> now = Add(b.x, r);
    const auto first = O::And(touching, sum_before <= zero);
    const V3<V> anchor = Select3(first, now,
                                 V3<V>{O::Load(blk.Contact(kStickX, part, k) + lane), O::Load(blk.Contact(kStickY, part, k) + lane),
                                       O::Load(blk.Contact(kStickZ, part, k) + lane)});
    const V tangent_before = O::Select(first, zero, O::Load(blk.Contact(kTangentSum, part, k) + lane));
    V3<V> slide = Sub(anchor, now);
    slide = Sub(slide, Scale(n, Dot3(slide, n)));
    const V3<V> tn = SafeNormal(slide);
    const V wt = O::Splat(c.inv_mass) + InvInertiaNorm(b, Cross3(r, tn));
    const V lambda_t = Length3(slide) / O::Max(wt, O::Splat(1e-12f));
    const V tangent = O::Fma(tangent_before, window, lambda_t);
    const auto sticks = O::And(touching, tangent < sum * O::Splat(c.friction));
    const V3<V> kept = Select3(sticks, anchor, now);
    StoreStepped(blk.Contact(kStickX, part, k) + lane, kept.x, keep);
    StoreStepped(blk.Contact(kStickY, part, k) + lane, kept.y, keep);
    StoreStepped(blk.Contact(kStickZ, part, k) + lane, kept.z, keep);
    StoreStepped(blk.Contact(kTangentSum, part, k) + lane, O::Select(sticks, tangent, zero), keep);
    const V3<V> p = Scale(tn, O::Select(sticks, lambda_t, zero));
    b.x = Add(b.x, Scale(p, O::Splat(c.inv_mass)));
    b.q = Turn(b.q, InvInertia(b, Cross3(r, p)), O::Splat(1.0f));
  }
}

// Velocity pass for one part's contacts: dynamic friction (once) and restitution, as
// sequential impulses swept several times over the part's touching spheres, so that a
// box landing flat leaves every corner at the target speed and does not start to spin.
template <class V>
inline void ContactVelocities(const RigidBlockView& blk, int32_t part, int32_t lane, Body<V>& b,
                              const RigidPartConstants& c, const RigidSolveParams& sp) {
  using O = Ops<V>;
  const int32_t sweeps = c.point_count < 4 ? c.point_count : 4;  // as in SolveContacts
  const V zero = O::Splat(0.0f);
  const V3<V> zero3{zero, zero, zero};
  const float g2 = sp.gravity[0] * sp.gravity[0] + sp.gravity[1] * sp.gravity[1] + sp.gravity[2] * sp.gravity[2];
  const float g = std::sqrt(g2);
  for (int32_t sweep = 0; sweep < sweeps; ++sweep) {
    for (int32_t k = 0; k < c.point_count; ++k) {
      const auto active = O::Load(blk.Contact(kTouching, part, k) + lane) > O::Splat(0.5f);
      if (!O::AnyOf(active)) continue;
      const V3<V> n{O::Load(blk.Contact(kCnx, part, k) + lane), O::Load(blk.Contact(kCny, part, k) + lane),
                    O::Load(blk.Contact(kCnz, part, k) + lane)};
      const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
      const V3<V> r = Sub(QRotate(b.q, local), Scale(n, O::Splat(c.points[k][3])));
      const V3<V> vp = Add(b.v, Cross3(b.w, r));
      const V vn = Dot3(vp, n);
      V3<V> dv = zero3;
      if (sweep == 0) {
        // Dynamic friction: remove up to h * mu * f_n of tangential speed, f_n = lambda_n / h^2.
        const V3<V> vt = Sub(vp, Scale(n, vn));
        const V fn = O::Load(blk.Contact(kLambdaN, part, k) + lane) * O::Splat(1.0f / (sp.dt * sp.dt));
        const V cut = O::Min(O::Splat(sp.dt * c.friction) * fn, Length3(vt));
        dv = Scale(SafeNormal(vt), zero - cut);
      }
      // Restitution: leave at e times the approach speed (none below 2 g h, which removes
      // resting jitter); this also takes back the speed the position solve's push-out
      // left, so contacts do not pop.
      const V pre = O::Load(blk.Contact(kNormalSpeed, part, k) + lane);
      const V e = O::Select(pre < O::Splat(-2.0f * g * sp.dt), O::Splat(c.restitution), zero);
      V target = O::Max(zero - e * pre, zero);
      // A point still being pushed out of where it was placed (SolveContacts) leaves at the
      // push speed: its velocity says how it moves, and it does not fall asleep meanwhile.
      const auto pushed = O::Load(blk.Contact(kDeferred, part, k) + lane) > zero;
      if (O::AnyOf(pushed)) target = O::Select(pushed, O::Max(target, O::Splat(sp.max_push / sp.dt)), target);
      dv = Select3(active, Add(dv, Scale(n, target - vn)), zero3);
      const V w = O::Splat(c.inv_mass) + InvInertiaNorm(b, Cross3(r, SafeNormal(dv)));
      const V3<V> p = Scale(dv, O::Splat(1.0f) / O::Max(w, O::Splat(1e-12f)));
      b.v = Add(b.v, Scale(p, O::Splat(c.inv_mass)));
      b.w = Add(b.w, InvInertia(b, Cross3(r, p)));
    }
  }
  // Rolling resistance: a part touching the world loses angular speed at
  // contact_angular_damping per second (rocking feet and rolling hands settle).
  if (sp.contact_angular_damping > 0.0f && c.point_count > 0) {
    V touching = zero;
    for (int32_t k = 0; k < c.point_count; ++k) touching = O::Max(touching, O::Load(blk.Contact(kTouching, part, k) + lane));
    const float keep = 1.0f - sp.contact_angular_damping * sp.dt;
    const V factor = O::Select(touching > O::Splat(0.5f), O::Splat(keep > 0.0f ? keep : 0.0f), O::Splat(1.0f));
    b.w = Scale(b.w, factor);
  }
}

// Motor, position part: turn the child toward its target relative rotation as a spring of
// natural frequency omega (XPBD compliance alpha = 1 / (i_eff omega^2), with i_eff the
// joint's effective inertia about the error axis, raised to the limb's: see
// RigidPartConstants::motor_stiffness_scale), the impulse capped by strength x
// max_torque x h^2 per substep (see docs/ragdolls.md, "The XPBD step": motors).
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

// Planar mode: back into the plane (along its normal) and back to a pure turn about the
// normal from the bind orientation (the twist part of q q0^-1 about n). Only lanes whose
// normal is set change.
template <class V, class M>
inline void ProjectPlanar(const RigidBlockView& blk, int32_t part, int32_t lane, Body<V>& b, const V3<V>& n,
                          const M& planar) {
  using O = Ops<V>;
  auto ld = [&](int32_t f) { return O::Load(blk.Part(f, part) + lane); };
  const V offset = Dot3(b.x, n) - ld(kPlanarD);
  const V3<V> x = Sub(b.x, Scale(n, offset));
  const Q4<V> q0{ld(kPlanarQx), ld(kPlanarQy), ld(kPlanarQz), ld(kPlanarQw)};
  const Q4<V> d = QMul(b.q, QConj(q0));
  const V along = d.x * n.x + d.y * n.y + d.z * n.z;
  const Q4<V> twist = QNormalize(Q4<V>{n.x * along, n.y * along, n.z * along, d.w});
  const Q4<V> q = QMul(twist, q0);
  b.x = Select3(planar, x, b.x);
  b.q = Q4<V>{O::Select(planar, q.x, b.q.x), O::Select(planar, q.y, b.q.y), O::Select(planar, q.z, b.q.z),
              O::Select(planar, q.w, b.q.w)};
}

// What one lane slice needs besides its bodies: motors and planar mode.
template <class V>
struct SliceState {
  V strength;
  bool motors;
  V settle_keep;  // 1 - settle damping x h: what a settling ragdoll keeps of its speeds
  bool settling;
  V3<V> planar_n;
  typename Ops<V>::Mask planar;
  bool any_planar;
  typename Ops<V>::Mask keep;  // sleeping and padding lanes: computed, never stored
};

template <class V>
inline SliceState<V> LoadSlice(const RigidBlockView& blk, int32_t lane, const RigidSolveParams& sp) {
  using O = Ops<V>;
  SliceState<V> st;
  st.strength = O::Load(blk.Lane(kMotorStrength) + lane);
  st.motors = O::AnyOf(st.strength > O::Splat(0.0f));
  const V settle = O::Load(blk.Lane(kSettleDamping) + lane);
  st.settling = O::AnyOf(settle > O::Splat(0.0f));
  st.settle_keep = O::Max(O::Splat(1.0f) - settle * O::Splat(sp.dt), O::Splat(0.0f));
  st.planar_n = {O::Load(blk.Lane(kPlanarNx) + lane), O::Load(blk.Lane(kPlanarNy) + lane),
                 O::Load(blk.Lane(kPlanarNz) + lane)};
  st.planar = Dot3(st.planar_n, st.planar_n) > O::Splat(0.5f);
  st.any_planar = O::AnyOf(st.planar);
  return st;
}

// The position half of a substep: integrate, motors, joints (iterations, root to leaf and
// back), static contacts, a joint pass after them, planar projection.
template <class V>
inline void SubstepPositions(const RigidBlockView& blk, int32_t lane, Body<V>* bodies, const SliceState<V>& st,
                             const RigidSolveParams& sp) {
  for (int32_t j = 0; j < sp.part_count; ++j) {
    if (st.settling) {
      bodies[j].v = Scale(bodies[j].v, st.settle_keep);
      bodies[j].w = Scale(bodies[j].w, st.settle_keep);
    }
    Integrate(bodies[j], sp.parts[j], sp);
    UpdateWorldInertia(bodies[j], sp.parts[j]);
  }
  // Joint friction acts where the joint's motor does not drive it (as Jolt's joints: the
  // friction torque is for joints not powered by a motor).
  for (int32_t j = 0; j < sp.part_count; ++j) {
    using O = Ops<V>;
    const RigidPartConstants& c = sp.parts[j];
    const V cap = O::Splat(c.friction_torque * sp.dt * sp.dt);
    const bool has_motor = c.motor_omega > 0.0f && c.motor_max_torque > 0.0f;
    bodies[j].friction_left = has_motor ? O::Select(st.strength > O::Splat(0.0f), O::Splat(0.0f), cap) : cap;
  }
  if (st.motors) {
    for (int32_t j = 1; j < sp.part_count; ++j) {
      const int32_t p = sp.parts[j].parent;
      if (sp.parts[j].motor_omega > 0.0f && sp.parts[j].motor_max_torque > 0.0f)
        SolveMotor(blk, j, lane, bodies[p], sp.parts[p], bodies[j], sp.parts[j], sp, st.strength);
    }
  }
  // Each iteration solves the joints root to leaf, then leaf to root, so that corrections
  // travel both ways along the tree (a heavy torso hanging from a light spine needs it).
  for (int32_t it = 0; it < sp.iterations; ++it) {
    for (int32_t j = 1; j < sp.part_count; ++j) {
      const int32_t p = sp.parts[j].parent;
      SolveJoint(bodies[p], sp.parts[p], bodies[j], sp.parts[j], st.keep);
    }
    for (int32_t j = sp.part_count - 1; j >= 1; --j) {
      const int32_t p = sp.parts[j].parent;
      SolveJoint(bodies[p], sp.parts[p], bodies[j], sp.parts[j], st.keep);
    }
  }
  for (int32_t j = 0; j < sp.part_count; ++j) {
    if (sp.parts[j].inv_mass > 0.0f) SolveContacts(blk, j, lane, bodies[j], sp.parts[j], sp, st.keep);
  }
}

// The velocity half: one more joint pass (after the static contacts and the contacts
// between ragdolls, which run between the halves, so that a limb pressed into the ground
// or a pile against its limit leaves the substep with the joint, not the contact, exact),
// planar projection, velocities from the positions, then joint friction, motor damping
// and the static contacts' friction and restitution.
template <class V>
inline void SubstepVelocities(const RigidBlockView& blk, int32_t lane, Body<V>* bodies, const SliceState<V>& st,
                              const RigidSolveParams& sp) {
  for (int32_t j = 0; j < sp.part_count; ++j) UpdateWorldInertia(bodies[j], sp.parts[j]);
  // Planar ragdolls back into their plane before the last joint passes (whose limits then
  // hold: a planar ragdoll's hinges turn about the plane's normal).
  if (st.any_planar) {
    for (int32_t j = 0; j < sp.part_count; ++j) {
      if (sp.parts[j].inv_mass > 0.0f) ProjectPlanar(blk, j, lane, bodies[j], st.planar_n, st.planar);
    }
  }
  // Leaf to root, then root to leaf: one pass alone leaves each joint the error its
  // neighbours' corrections put back.
  for (int32_t j = sp.part_count - 1; j >= 1; --j) {
    const int32_t p = sp.parts[j].parent;
    SolveJoint(bodies[p], sp.parts[p], bodies[j], sp.parts[j], st.keep);
  }
  for (int32_t j = 1; j < sp.part_count; ++j) {
    const int32_t p = sp.parts[j].parent;
    SolveJoint(bodies[p], sp.parts[p], bodies[j], sp.parts[j], st.keep);
  }
  // And into the plane once more: the passes leave it within a fraction of a degree.
  if (st.any_planar) {
    for (int32_t j = 0; j < sp.part_count; ++j) {
      if (sp.parts[j].inv_mass > 0.0f) ProjectPlanar(blk, j, lane, bodies[j], st.planar_n, st.planar);
    }
  }
  for (int32_t j = 0; j < sp.part_count; ++j) UpdateVelocities(bodies[j], sp.parts[j], sp);
  for (int32_t j = 1; j < sp.part_count; ++j) {
    const int32_t p = sp.parts[j].parent;
    if (st.motors && sp.parts[j].motor_omega > 0.0f && sp.parts[j].motor_max_torque > 0.0f)
      MotorDamping(blk, j, lane, bodies[p], sp.parts[p], bodies[j], sp.parts[j], sp, st.strength);
  }
  for (int32_t j = 0; j < sp.part_count; ++j) {
    if (sp.parts[j].inv_mass > 0.0f) ContactVelocities(blk, j, lane, bodies[j], sp.parts[j], sp);
  }
}

// Runs `stages` over every awake lane slice of `count` blocks: 1 positions, 2 velocities,
// 3 both, params.substeps times (the whole frame, when no ragdolls touch each other).
template <class V>
void RunStages(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& sp, int32_t stages) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  constexpr int32_t kMaxParts = 64;
  static_assert(kBlockLanes % kW == 0 || kW % kBlockLanes == 0, "block widths are powers of two");
  if (sp.part_count <= 0 || sp.part_count > kMaxParts) return;
  // Static contacts are found on the first substep of the call's run only.
  RigidSolveParams later = sp;
  later.find_static_contacts = false;
  for (int32_t g = 0; g < count; ++g) {
    const RigidBlockView& blk = blocks[g];
    // Every World's block width is a multiple of its kernel's batch (RigidKernels::block_lanes).
    for (int32_t lane = 0; lane + kW <= blk.lanes; lane += kW) {
      // Sleeping and padding lanes are not stepped; a slice of them only is skipped.
      const auto keep = O::Or(O::Load(blk.Lane(kAsleep) + lane) > O::Splat(0.5f),
                              O::Load(blk.Lane(kActive) + lane) < O::Splat(0.5f));
      if (O::AllOf(keep)) continue;
      Body<V> bodies[kMaxParts];
      for (int32_t j = 0; j < sp.part_count; ++j) bodies[j] = LoadBody<V>(blk, j, lane);
      SliceState<V> st = LoadSlice<V>(blk, lane, sp);
      st.keep = keep;
      const int32_t repeats = stages == 3 ? sp.substeps : 1;
      for (int32_t s = 0; s < repeats; ++s) {
        if (stages & 1) SubstepPositions(blk, lane, bodies, st, s == 0 ? sp : later);
        if (stages & 2) SubstepVelocities(blk, lane, bodies, st, sp);
      }
      for (int32_t j = 0; j < sp.part_count; ++j) StoreBodyMasked(blk, j, lane, bodies[j], keep);
    }
  }
}

template <class V>
void Solve(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& sp) {
  RunStages<V>(blocks, count, sp, 3);
}
template <class V>
void Positions(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& sp) {
  RunStages<V>(blocks, count, sp, 1);
}
template <class V>
void Velocities(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& sp) {
  RunStages<V>(blocks, count, sp, 2);
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS

#include "kernel/rigid/pair_kernel_impl.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// This translation unit's kernel set for lane type V (its instruction set), built once.
template <class V>
const RigidKernels& KernelTable(const char* name) {
  static_assert(Ops<V>::kSize <= kMaxRigidBlockLanes && kBlockLanes <= kMaxRigidBlockLanes, "kMaxRigidBlockLanes");
  static const RigidKernels kernels{&Solve<V>, &Positions<V>, &Velocities<V>, &PairPositions<V>, &PairVelocities<V>,
                                    name,
                                    Ops<V>::kSize > kBlockLanes ? Ops<V>::kSize : kBlockLanes};
  return kernels;
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
