// kernel/rigid/pair_kernel_impl.h: the position and velocity passes of the contacts between
// ragdolls, a colour's pairs side by side in lanes (Box2D v3's graph colouring with wide contact
// solving: no two pairs of a colour share an awake body, so they run at once).
//
// Included by rigid_kernel_impl.h (after the parts, under the same per-translation-unit
// namespace; the body arithmetic it shares is rigid_kernel_body.h's), so it is compiled per
// instruction set, and its scalar instantiations are its references. What a lane does is
// one pair's halves of a substep (pair_contacts.h): the position pass (the XPBD positional
// correction along each contact's normal with both generalised inverse masses, swept
// kPairSweeps times over the pair's contacts, bounded depenetration, then static friction
// held inside Coulomb's cone over the frame's normal impulses) and the velocity pass
// (restitution swept as often, dynamic friction, a push-out's speed cap, rolling
// resistance), with every "skip this contact" a mask: a lane whose contact does
// nothing keeps its bodies (selected, not computed with a zero impulse: a lane's contact
// rows past its count hold a former batch's values), so no lane's result depends on the
// others.
// The rare branches (a contact measured against its shape again, a placement's bounded
// push-out) run only when a lane of the batch needs them.
// What it does NOT do: find contacts or read the ragdoll blocks (PairContacts gathers the
// lanes and scatters them back).
// Threading: one call per batch, on any worker. Memory: the caller's PairLanes only.
#pragma once

#include "kernel/rigid/pair_lanes.h"
#include "kernel/rigid/rigid_kernel_body.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

template <class V>
inline V3<V> FrameApply(const Frame3<V>& f, const V3<V>& u) {
  using O = Ops<V>;
  return {O::Fma(f.x.x, u.x, O::Fma(f.y.x, u.y, f.z.x * u.z)), O::Fma(f.x.y, u.x, O::Fma(f.y.y, u.y, f.z.y * u.z)),
          O::Fma(f.x.z, u.x, O::Fma(f.y.z, u.y, f.z.z * u.z))};
}

// One side of a pair in lanes: pose, velocity, inverse mass, and its frame and world
// inverse inertia, rebuilt after every turn (held for the kernel's halves, but a pair's
// contacts come one after another on the same two bodies: holding them for the pass made
// the 20-ragdoll heap of ragdoll_contact_test.cpp settle later).
template <class V>
struct PairSide {
  V3<V> x, v, w;
  Q4<V> q;
  V inv_mass;
  V i0, i1, i2;  // body-frame inverse inertia (0 when fixed)
  InvI<V> ii;
  Frame3<V> f;
};

// The side's world inverse inertia from its frame.
template <class V>
inline void UpdatePairInertia(PairSide<V>& s) {
  s.ii = WorldInvInertia(s.f, s.i0, s.i1, s.i2);
}

template <class V>
inline PairSide<V> LoadPairSide(const float (&rows)[kPairBodyFieldCount][kPairLanes], int32_t lane) {
  using O = Ops<V>;
  auto ld = [&](int32_t field) { return O::Load(&rows[field][lane]); };
  PairSide<V> s;
  s.x = {ld(kPbXx), ld(kPbXy), ld(kPbXz)};
  s.q = {ld(kPbQx), ld(kPbQy), ld(kPbQz), ld(kPbQw)};
  s.v = {ld(kPbVx), ld(kPbVy), ld(kPbVz)};
  s.w = {ld(kPbWx), ld(kPbWy), ld(kPbWz)};
  s.inv_mass = ld(kPbInvMass);
  s.f = QFrame(s.q);
  s.i0 = ld(kPbInvInertia0), s.i1 = ld(kPbInvInertia1), s.i2 = ld(kPbInvInertia2);
  UpdatePairInertia(s);
  return s;
}
template <class V>
inline void StorePairPose(float (&rows)[kPairBodyFieldCount][kPairLanes], int32_t lane, const PairSide<V>& s) {
  using O = Ops<V>;
  O::Store(&rows[kPbXx][lane], s.x.x), O::Store(&rows[kPbXy][lane], s.x.y), O::Store(&rows[kPbXz][lane], s.x.z);
  O::Store(&rows[kPbQx][lane], s.q.x), O::Store(&rows[kPbQy][lane], s.q.y), O::Store(&rows[kPbQz][lane], s.q.z);
  O::Store(&rows[kPbQw][lane], s.q.w);
}

// Moves a by +impulse u (lambda along u) and b by -impulse in the `on` lanes; ta, tb are
// I^-1 (r x u). The other lanes keep their bodies whatever their (possibly stale) rows hold.
template <class V, class M>
inline void PairImpulse(PairSide<V>& a, PairSide<V>& b, const V3<V>& u, const V3<V>& ta, const V3<V>& tb,
                        const V& lambda, const M& on) {
  using O = Ops<V>;
  a.x = Select3(on, Add(a.x, Scale(u, lambda * a.inv_mass)), a.x);
  b.x = Select3(on, Sub(b.x, Scale(u, lambda * b.inv_mass)), b.x);
  const Q4<V> qa = Turn(a.q, ta, lambda), qb = Turn(b.q, tb, O::Splat(0.0f) - lambda);
  a.q = {O::Select(on, qa.x, a.q.x), O::Select(on, qa.y, a.q.y), O::Select(on, qa.z, a.q.z), O::Select(on, qa.w, a.q.w)};
  b.q = {O::Select(on, qb.x, b.q.x), O::Select(on, qb.y, b.q.y), O::Select(on, qb.z, b.q.z), O::Select(on, qb.w, b.q.w)};
  a.f = QFrame(a.q);
  b.f = QFrame(b.q);
  UpdatePairInertia(a);
  UpdatePairInertia(b);
}

template <class V>
void PairPositionsSlice(PairLanes& pl, int32_t lane, const PairSolveParams& sp) {
  using O = Ops<V>;
  using M = typename Ops<V>::Mask;
  const V zero = O::Splat(0.0f), one = O::Splat(1.0f);
  auto lane_row = [&](int32_t field) { return &pl.lane[field][lane]; };
  const V count = O::Load(lane_row(kPlCount));
  if (!O::AnyOf(count > zero)) return;
  PairSide<V> a = LoadPairSide<V>(pl.body[0], lane), b = LoadPairSide<V>(pl.body[1], lane);
  const V friction = O::Load(lane_row(kPlFriction));
  const V max_push = O::Splat(sp.max_push);
  M moved = count < zero, pushing = moved;  // none yet
  V defer_a = zero, defer_b = zero;
  // Per contact, over the sweeps: the normal impulse, and the penetration left in on purpose.
  V lambdas[kContactsPerPair], kept_in[kContactsPerPair];
  int32_t contacts = 0;  // slots any lane uses
  // The first sweep: each contact measured (again against its shape where it went deep or
  // slid), its speed before the solve kept for restitution, its bounded depenetration
  // settled, and its penetration pushed out.
  for (int32_t k = 0; k < kContactsPerPair; ++k) {
    const M in_pair = count > O::Splat(static_cast<float>(k));
    if (!O::AnyOf(in_pair)) break;
    contacts = k + 1;
    lambdas[k] = zero;
    kept_in[k] = zero;
    auto row = [&](int32_t field) { return &pl.contact[k][field][lane]; };
    auto ld = [&](int32_t field) { return O::Load(row(field)); };
    auto ld3 = [&](int32_t field) { return V3<V>{ld(field), ld(field + 1), ld(field + 2)}; };
    M on_a = ld(kPcOnA) > O::Splat(0.5f);
    V3<V> n = FrameApply(a.f, ld3(kPcNx));
    n = Select3(on_a, n, FrameApply(b.f, ld3(kPcNx)));
    V3<V> ra = FrameApply(a.f, ld3(kPcArmAx)), rb = FrameApply(b.f, ld3(kPcArmBx));
    V3<V> gap = Sub(Add(a.x, ra), Add(b.x, rb));
    V depth = Dot3(gap, n);
    // A point that went deeper than kPairRemeasureDepth, or slid kPairRemeasureSlide along
    // the surface, may be passing beside the shape: it is measured against it again.
    const V3<V> slid = Sub(gap, Scale(n, depth));
    const M remeasure = O::And(in_pair, O::Or(depth < O::Splat(-kPairRemeasureDepth),
                                              Dot3(slid, slid) > O::Splat(kPairRemeasureSlide * kPairRemeasureSlide)));
    if (O::AnyOf(remeasure)) {
      StorePairPose(pl.body[0], lane, a);
      StorePairPose(pl.body[1], lane, b);
      alignas(64) float flags[kPairLanes];
      O::Store(flags, O::Select(remeasure, one, zero));
      for (int32_t l = 0; l < O::kSize; ++l) {
        if (flags[l] > 0.5f) sp.remeasure(sp.context, pl, lane + l, k);
      }
      n = Select3(remeasure, V3<V>{O::Load(lane_row(kPlRemeasureNx)), O::Load(lane_row(kPlRemeasureNy)),
                                   O::Load(lane_row(kPlRemeasureNz))}, n);
      depth = O::Select(remeasure, O::Load(lane_row(kPlRemeasureDepth)), depth);
      ra = FrameApply(a.f, ld3(kPcArmAx)), rb = FrameApply(b.f, ld3(kPcArmBx));
    }
    // Pushed apart where it penetrates.
    const M touching = O::And(in_pair, depth < zero);
    // The relative normal speed before the solve (restitution's reference): kept for every
    // contact of the pair, as a later sweep may push one that does not touch yet.
    const V pre = Dot3(Sub(Add(a.v, Cross3(a.w, ra)), Add(b.v, Cross3(b.w, rb))), n);
    O::Store(row(kPcPre), O::Select(in_pair, pre, ld(kPcPre)));
    V lambda = zero;
    if (O::AnyOf(touching)) {
      const V3<V> rna = Cross3(ra, n), rnb = Cross3(rb, n);
      const V3<V> ia = Mul(a.ii, rna), ib = Mul(b.ii, rnb);
      const V w = a.inv_mass + b.inv_mass + Dot3(rna, ia) + Dot3(rnb, ib);
      M go = O::And(touching, w > O::Splat(1e-12f));
      // Depenetration at a bounded speed (as against the static world): a penetration the
      // parts were placed in is pushed out at most max_push a substep, the rest kept in
      // kPcDeferred and, across frames, in the bodies' kRbPairDeferNow. Every other
      // penetration is taken out at once.
      V correction = zero - depth;
      const V deferred = ld(kPcDeferred);
      const M deep = depth < zero - max_push;
      const M bounded = O::And(O::And(go, deep), deferred > zero);
      V deferred_out = O::Select(O::And(go, O::Select(deep, zero, one) > zero), zero, deferred);
      if (O::AnyOf(bounded)) {
        const Q4<V> qpa{O::Load(&pl.body[0][kPbQPx][lane]), O::Load(&pl.body[0][kPbQPy][lane]),
                        O::Load(&pl.body[0][kPbQPz][lane]), O::Load(&pl.body[0][kPbQPw][lane])};
        const Q4<V> qpb{O::Load(&pl.body[1][kPbQPx][lane]), O::Load(&pl.body[1][kPbQPy][lane]),
                        O::Load(&pl.body[1][kPbQPz][lane]), O::Load(&pl.body[1][kPbQPw][lane])};
        const V3<V> xpa{O::Load(&pl.body[0][kPbXPx][lane]), O::Load(&pl.body[0][kPbXPy][lane]),
                        O::Load(&pl.body[0][kPbXPz][lane])};
        const V3<V> xpb{O::Load(&pl.body[1][kPbXPx][lane]), O::Load(&pl.body[1][kPbXPy][lane]),
                        O::Load(&pl.body[1][kPbXPz][lane])};
        const Frame3<V> fa0 = QFrame(qpa), fb0 = QFrame(qpb);
        const V3<V> start_gap = Sub(Add(xpa, FrameApply(fa0, ld3(kPcArmAx))), Add(xpb, FrameApply(fb0, ld3(kPcArmBx))));
        const V3<V> n0 = Select3(on_a, FrameApply(fa0, ld3(kPcNx)), FrameApply(fb0, ld3(kPcNx)));
        const V start_in = O::Max(zero - Dot3(start_gap, n0), zero);
        const V left_in = O::Max(O::Min(start_in, deferred) - max_push, zero);
        deferred_out = O::Select(bounded, left_in, deferred_out);
        kept_in[k] = O::Select(bounded, left_in, zero);
        defer_a = O::Select(bounded, O::Max(defer_a, left_in), defer_a);
        defer_b = O::Select(bounded, O::Max(defer_b, left_in), defer_b);
        correction = O::Select(bounded, O::Max(correction - left_in, zero), correction);
        go = O::And(go, correction > zero);
        pushing = O::Or(pushing, O::And(bounded, go));
      }
      O::Store(row(kPcDeferred), O::Select(in_pair, deferred_out, deferred));
      lambda = O::Select(go, correction / O::Max(w, O::Splat(1e-12f)), zero);
      if (O::AnyOf(go)) {
        moved = O::Or(moved, go);
        PairImpulse(a, b, n, ia, ib, lambda, go);
      }
    }
    lambdas[k] = lambda;
  }
  // Further sweeps over the pair's contacts from where the first left them: one sweep moves
  // the bodies contact after contact, so the last corner of a box that lands flat is pushed
  // from where the first ones turned it and the box leaves spinning (as against the static
  // world, rigid_kernel_contact_solve.h, a few sweeps let the corners share the push-out).
  // A contact within its bounded depenetration stops at what it keeps in.
  for (int32_t sweep = 1; sweep < kPairSweeps; ++sweep) {
    for (int32_t k = 0; k < contacts; ++k) {
      const M in_pair = count > O::Splat(static_cast<float>(k));
      auto ld = [&](int32_t field) { return O::Load(&pl.contact[k][field][lane]); };
      auto ld3 = [&](int32_t field) { return V3<V>{ld(field), ld(field + 1), ld(field + 2)}; };
      const M on_a = ld(kPcOnA) > O::Splat(0.5f);
      const V3<V> n = Select3(on_a, FrameApply(a.f, ld3(kPcNx)), FrameApply(b.f, ld3(kPcNx)));
      const V3<V> ra = FrameApply(a.f, ld3(kPcArmAx)), rb = FrameApply(b.f, ld3(kPcArmBx));
      const V depth = Dot3(Sub(Add(a.x, ra), Add(b.x, rb)), n);
      const V correction = O::Max(zero - depth - kept_in[k], zero);
      M go = O::And(in_pair, correction > zero);
      if (!O::AnyOf(go)) continue;
      const V3<V> rna = Cross3(ra, n), rnb = Cross3(rb, n);
      const V3<V> ia = Mul(a.ii, rna), ib = Mul(b.ii, rnb);
      const V w = a.inv_mass + b.inv_mass + Dot3(rna, ia) + Dot3(rnb, ib);
      go = O::And(go, w > O::Splat(1e-12f));
      const V lambda = O::Select(go, correction / O::Max(w, O::Splat(1e-12f)), zero);
      if (!O::AnyOf(go)) continue;
      moved = O::Or(moved, go);
      PairImpulse(a, b, n, ia, ib, lambda, go);
      lambdas[k] = lambdas[k] + lambda;
    }
  }
  // Static friction, once the normal impulses are settled: the points stay where they first
  // touched this frame while the tangential impulse that takes stays within friction x the
  // normal impulse since.
  for (int32_t k = 0; k < contacts; ++k) {
    const M in_pair = count > O::Splat(static_cast<float>(k));
    auto row = [&](int32_t field) { return &pl.contact[k][field][lane]; };
    auto ld = [&](int32_t field) { return O::Load(row(field)); };
    auto ld3 = [&](int32_t field) { return V3<V>{ld(field), ld(field + 1), ld(field + 2)}; };
    auto st3 = [&](int32_t field, const V3<V>& u) {
      O::Store(row(field), u.x), O::Store(row(field + 1), u.y), O::Store(row(field + 2), u.z);
    };
    const V lambda = lambdas[k];
    const M go = O::And(in_pair, lambda > zero);
    O::Store(row(kPcLambda), O::Select(in_pair, lambda, ld(kPcLambda)));
    if (!O::AnyOf(go)) continue;
    const M on_a = ld(kPcOnA) > O::Splat(0.5f);
    const V3<V> n = Select3(on_a, FrameApply(a.f, ld3(kPcNx)), FrameApply(b.f, ld3(kPcNx)));
    const V sum_before = ld(kPcLambdaSum);
    const V sum = O::Select(go, sum_before + lambda, sum_before);
    O::Store(row(kPcLambdaSum), sum);
    const V3<V> ra2 = FrameApply(a.f, ld3(kPcArmAx)), rb2 = FrameApply(b.f, ld3(kPcArmBx));
    V3<V> offset = Sub(Add(a.x, ra2), Add(b.x, rb2));
    offset = Sub(offset, Scale(n, Dot3(offset, n)));
    V3<V> stick = ld3(kPcStickX);
    stick = Select3(go, Select3(sum_before > zero, stick, offset), stick);
    const V3<V> slide = Sub(stick, offset);  // how a's point must move back, relative to b's
    const V slide_len = O::Sqrt(Dot3(slide, slide));
    const M sliding = O::And(go, slide_len > O::Splat(1e-9f));
    if (O::AnyOf(sliding)) {
      const V3<V> t = Scale(slide, one / O::Max(slide_len, O::Splat(1e-9f)));
      const V3<V> rta = Cross3(ra2, t), rtb = Cross3(rb2, t);
      const V3<V> ta = Mul(a.ii, rta), tb = Mul(b.ii, rtb);
      const V wt = a.inv_mass + b.inv_mass + Dot3(rta, ta) + Dot3(rtb, tb);
      const V lambda_t = O::Select(wt > O::Splat(1e-12f), slide_len / O::Max(wt, O::Splat(1e-12f)), zero);
      const M hold = O::And(sliding, lambda_t < friction * sum);
      if (O::AnyOf(hold)) PairImpulse(a, b, t, ta, tb, lambda_t, hold);
      // It slips: hold from here (pulling it back later would yank it).
      stick = Select3(hold, stick, Select3(sliding, offset, stick));
    }
    st3(kPcStickX, stick);
  }
  O::Store(lane_row(kPlMoved), O::Select(moved, one, zero));
  O::Store(lane_row(kPlPushing), O::Select(pushing, one, zero));
  O::Store(lane_row(kPlDeferNowA), defer_a);
  O::Store(lane_row(kPlDeferNowB), defer_b);
  StorePairPose(pl.body[0], lane, a);
  StorePairPose(pl.body[1], lane, b);
}

// The position pass of `count` pairs in lanes [0, count); the lanes past it up to the
// kernel's batch are emptied here (kPlCount 0) and compute nothing that is read.
template <class V>
void PairPositions(PairLanes& lanes, int32_t count, const PairSolveParams& sp) {
  constexpr int32_t kW = Ops<V>::kSize;
  static_assert(kPairLanes % kW == 0, "a pair batch is whole kernel batches");
  const int32_t padded = (count + kW - 1) / kW * kW;
  for (int32_t l = count; l < padded; ++l) lanes.lane[kPlCount][l] = 0.0f;
  for (int32_t lane = 0; lane < padded; lane += kW) PairPositionsSlice<V>(lanes, lane, sp);
}

// The velocity half of a batch's pairs, after the kernel's velocities: restitution (none
// for slow approaches) and dynamic friction at each contact that pushed, the speed cap of a
// bounded push-out, and rolling resistance between the touching parts. Orientations do not
// change here, so each side's frame and world inverse inertia hold for the whole pass.
template <class V>
void PairVelocitiesSlice(PairLanes& pl, int32_t lane, const PairSolveParams& sp) {
  using O = Ops<V>;
  using M = typename Ops<V>::Mask;
  const V zero = O::Splat(0.0f), one = O::Splat(1.0f);
  auto lane_row = [&](int32_t field) { return &pl.lane[field][lane]; };
  const V count = O::Load(lane_row(kPlCount));
  if (!O::AnyOf(count > zero)) return;
  PairSide<V> a = LoadPairSide<V>(pl.body[0], lane), b = LoadPairSide<V>(pl.body[1], lane);
  const V friction = O::Load(lane_row(kPlFriction));
  const V restitution = O::Load(lane_row(kPlRestitution));
  const V slow = O::Splat(-2.0f * sp.gravity_length * sp.h);
  const V friction_per_h = friction * O::Splat(1.0f / sp.h);
  const V push_speed = O::Splat(sp.max_push_speed);
  M touching = count < zero;  // none yet
  // Swept over the contacts that pushed (dynamic friction in the first sweep only), so that
  // every corner of a box that lands flat leaves at its target speed and the box does not
  // start to spin, as ContactVelocities sweeps a part's contacts with the static world.
  for (int32_t sweep = 0; sweep < kPairSweeps; ++sweep) {
    for (int32_t k = 0; k < kContactsPerPair; ++k) {
      const M in_pair = count > O::Splat(static_cast<float>(k));
      if (!O::AnyOf(in_pair)) break;
      auto ld = [&](int32_t field) { return O::Load(&pl.contact[k][field][lane]); };
      auto ld3 = [&](int32_t field) { return V3<V>{ld(field), ld(field + 1), ld(field + 2)}; };
      const V lambda = ld(kPcLambda);
      const M pushed = O::And(in_pair, lambda > zero);
      if (!O::AnyOf(pushed)) continue;
      touching = O::Or(touching, pushed);
      const M on_a = ld(kPcOnA) > O::Splat(0.5f);
      const V3<V> n = Select3(on_a, FrameApply(a.f, ld3(kPcNx)), FrameApply(b.f, ld3(kPcNx)));
      const V3<V> ra = FrameApply(a.f, ld3(kPcArmAx)), rb = FrameApply(b.f, ld3(kPcArmBx));
      const V3<V> vr = Sub(Add(a.v, Cross3(a.w, ra)), Add(b.v, Cross3(b.w, rb)));
      const V vn = Dot3(vr, n);
      const V3<V> vt = Sub(vr, Scale(n, vn));
      const V vt_len = O::Sqrt(Dot3(vt, vt));
      const V pre = ld(kPcPre);
      const V e = O::Select(pre < slow, restitution, zero);
      // Still being pushed out of a placement: they part at the push speed.
      const V target = O::Max(zero - e * pre, O::Select(ld(kPcDeferred) > zero, push_speed, zero));
      const V cut = sweep == 0 ? O::Min(friction_per_h * lambda, vt_len) : zero;
      const V3<V> slip = Select3(vt_len > O::Splat(1e-9f), Scale(vt, cut / O::Max(vt_len, O::Splat(1e-9f))), V3<V>{zero, zero, zero});
      const V3<V> dv = Sub(Scale(n, target - vn), slip);
      const V dv_len = O::Sqrt(Dot3(dv, dv));
      const V3<V> dir = Select3(dv_len > O::Splat(1e-12f), Scale(dv, one / O::Max(dv_len, O::Splat(1e-12f))), n);
      const V3<V> rda = Cross3(ra, dir), rdb = Cross3(rb, dir);
      const V w = a.inv_mass + b.inv_mass + Dot3(rda, Mul(a.ii, rda)) + Dot3(rdb, Mul(b.ii, rdb));
      const M go = O::And(pushed, w > O::Splat(1e-12f));
      const V3<V> impulse = Scale(dv, one / O::Max(w, O::Splat(1e-12f)));
      a.v = Select3(go, Add(a.v, Scale(impulse, a.inv_mass)), a.v);
      b.v = Select3(go, Sub(b.v, Scale(impulse, b.inv_mass)), b.v);
      a.w = Select3(go, Add(a.w, Mul(a.ii, Cross3(ra, impulse))), a.w);
      b.w = Select3(go, Sub(b.w, Mul(b.ii, Cross3(rb, impulse))), b.w);
    }
  }
  if (!O::AnyOf(touching)) return;
  const M a_fixed = a.inv_mass == zero, b_fixed = b.inv_mass == zero;
  const M pushing = O::And(touching, O::Load(lane_row(kPlPushing)) > O::Splat(0.5f));
  if (O::AnyOf(pushing)) {
    // Pushed out of a placement at the bounded speed this substep: neither part moves away
    // from the pair's common motion (its centre of mass's, or a fixed part's) faster than
    // that, nor spins faster than the push turns it, or the pushes of many contacts and the
    // joints between them add up to speeds no push had.
    const V both = O::Max(a.inv_mass + b.inv_mass, O::Splat(1e-30f));
    const V3<V> mean = Scale(Add(Scale(a.v, b.inv_mass), Scale(b.v, a.inv_mass)), one / both);
    const V3<V> common = Select3(a_fixed, a.v, Select3(b_fixed, b.v, mean));
    auto cap = [&](PairSide<V>& s, const M& fixed, int32_t extent_field) {
      const M on = O::And(pushing, O::Select(fixed, zero, one) > zero);
      const V3<V> away = Sub(s.v, common);
      const V speed = O::Sqrt(Dot3(away, away));
      const M fast = O::And(on, speed > push_speed);
      s.v = Select3(fast, Add(common, Scale(away, push_speed / O::Max(speed, O::Splat(1e-30f)))), s.v);
      const V spin = O::Sqrt(Dot3(s.w, s.w));
      const V spin_cap = push_speed / O::Max(O::Load(lane_row(extent_field)), O::Splat(0.01f));
      const M spinning = O::And(on, spin > spin_cap);
      s.w = Select3(spinning, Scale(s.w, spin_cap / O::Max(spin, O::Splat(1e-30f))), s.w);
    };
    cap(a, a_fixed, kPlExtentA);
    cap(b, b_fixed, kPlExtentB);
  }
  // Rolling resistance between touching parts, as against the static world: their relative
  // spin decays at the contact angular damping (a pile stops rolling).
  const float keep = 1.0f - sp.angular_damping * sp.h > 0.0f ? 1.0f - sp.angular_damping * sp.h : 0.0f;
  const V3<V> spin = Scale(Sub(a.w, b.w), O::Splat(1.0f - keep));
  const V half = O::Splat(0.5f);
  const V share_a = O::Select(a_fixed, zero, O::Select(b_fixed, one, half));
  const V share_b = O::Select(a_fixed, one, O::Select(b_fixed, zero, half));
  a.w = Select3(touching, Sub(a.w, Scale(spin, share_a)), a.w);
  b.w = Select3(touching, Add(b.w, Scale(spin, share_b)), b.w);
  auto store = [&](float (&rows)[kPairBodyFieldCount][kPairLanes], const PairSide<V>& s) {
    O::Store(&rows[kPbVx][lane], s.v.x), O::Store(&rows[kPbVy][lane], s.v.y), O::Store(&rows[kPbVz][lane], s.v.z);
    O::Store(&rows[kPbWx][lane], s.w.x), O::Store(&rows[kPbWy][lane], s.w.y), O::Store(&rows[kPbWz][lane], s.w.z);
  };
  store(pl.body[0], a);
  store(pl.body[1], b);
}

template <class V>
void PairVelocities(PairLanes& lanes, int32_t count, const PairSolveParams& sp) {
  constexpr int32_t kW = Ops<V>::kSize;
  static_assert(kPairLanes % kW == 0, "a pair batch is whole kernel batches");
  const int32_t padded = (count + kW - 1) / kW * kW;
  for (int32_t l = count; l < padded; ++l) lanes.lane[kPlCount][l] = 0.0f;
  for (int32_t lane = 0; lane < padded; lane += kW) PairVelocitiesSlice<V>(lanes, lane, sp);
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
