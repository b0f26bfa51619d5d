// kernel/rigid/rigid_kernel_contact_solve.h: a part's contacts against the static world
// solved, both halves of the XPBD substep (rigid_kernel_impl.h).
//
// Owns: SolveContacts, the position half against the frame's contact planes (and a mesh's
// deeper contact each substep): normal corrections, lambda = penetration / w with w =
// 1/m + (r x n)^T I^-1 (r x n), swept over the part's spheres; depenetration of a placed part
// bounded at max_push a substep (kDeferred); static friction held while the tangential
// impulse stays inside Coulomb's cone over a window of recent normal impulses. And
// ContactVelocities, the velocity half: dynamic friction (cut h mu f_n of tangential speed,
// f_n = lambda_n / h^2), restitution (none below 2 g h), a pushed-out point's speed, and
// rolling resistance (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended
// Position Based Dynamics"; docs/ragdolls.md, XPBD step: contacts).
// Does not: find the contacts (rigid_kernel_static_contact.h), or solve the contacts
// between ragdolls (pair_kernel_impl.h).
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none of its own (a part's contacts on the stack); it reads and writes the block's
// contact rows.
#pragma once

#include <cmath>

#include "kernel/rigid/rigid_kernel_body.h"
#include "kernel/rigid/rigid_kernel_static_contact.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// Contact events' bookkeeping for contact point k of a part (rigid_block.h,
// kRbImpactSpeed): where it pushed this substep, the frame's fastest approach before the
// solve (>= 0, so a row still at its reset -1 says "touched nothing this frame") and its sum
// of normal impulses (lambda / h, N s; ContactVelocities adds its pass's). Written only
// where it touches, and read by nothing in the solve, so no other result depends on it.
template <class V>
inline void RecordImpact(const RigidBlockView& blk, int32_t part, int32_t lane, int32_t k, const V& lambda_n,
                         const typename Ops<V>::Mask& touching, const RigidSolveParams& sp,
                         const typename Ops<V>::Mask& keep) {
  using O = Ops<V>;
  const V zero = O::Splat(0.0f);
  float* speed_row = blk.Part(kRbImpactSpeed, part) + lane;
  float* impulse_row = blk.Part(kRbImpactImpulse, part) + lane;
  const V speed_before = O::Load(speed_row);
  const V approach = O::Max(zero - O::Load(blk.Contact(kNormalSpeed, part, k) + lane), zero);
  StoreStepped(speed_row, O::Select(touching, O::Max(speed_before, approach), speed_before), keep);
  const V impulse_before = O::Load(impulse_row);
  const V impulse = O::Fma(lambda_n, O::Splat(1.0f / sp.dt), impulse_before);
  StoreStepped(impulse_row, O::Select(touching, impulse, impulse_before), keep);
}

// True when no sphere of the part, in any lane of the batch, can touch its contact plane
// at the body's pose b, told without the spheres' rotations: a sphere's centre is within
// extent - radius of the body's origin (RigidPartConstants::extent), so its depth is at
// least x.n - offset - extent |n|. A host plane's normal is unit within 1e-3 (checked when
// the static world is built; the shapes' normals are divided by their length), so the
// extent counts 1.002 times. The margin (1 cm, and 1e-5 of the terms' magnitudes
// |x_i n_i| and |offset| for the roundings of dot products far from the origin, where x.n
// itself may cancel to near 0) keeps the bound on the safe side of SolveContacts' own
// test, so skipping changes no result's bits. A powered character's arms, head and trunk
// clear the floor by far more (issue 41: the static contacts were a quarter of its Step).
template <class V>
inline bool OutOfReach(const RigidBlockView& blk, int32_t part, int32_t lane, const Body<V>& b,
                       const RigidPartConstants& c) {
  using O = Ops<V>;
  const V extent = O::Splat(c.extent * 1.002f + 0.01f), relative = O::Splat(1e-5f);
  for (int32_t k = 0; k < c.point_count; ++k) {
    const V3<V> n{O::Load(blk.Contact(kCnx, part, k) + lane), O::Load(blk.Contact(kCny, part, k) + lane),
                  O::Load(blk.Contact(kCnz, part, k) + lane)};
    const V offset = O::Load(blk.Contact(kPlaneOffset, part, k) + lane);
    const V along = Dot3(b.x, n);
    const V magnitude = O::Abs(b.x.x * n.x) + O::Abs(b.x.y * n.y) + O::Abs(b.x.z * n.z) + O::Abs(offset);
    const V slack = extent + magnitude * relative;
    // A NaN anywhere fails the test, so such a lane takes the full path.
    if (!O::AllOf(along - offset > slack)) return false;
  }
  return true;
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
  if (sp.mesh_contact == nullptr && OutOfReach(blk, part, lane, b, c)) {
    // What the loop below leaves when no lane touches, without its rotations: no sphere of
    // any lane reaches its plane (the kNormalSpeed rows keep their last value, which only
    // a touching lane reads).
    for (int32_t k = 0; k < c.point_count; ++k) {
      StoreStepped(blk.Contact(kTouching, part, k) + lane, zero, keep);
      StoreStepped(blk.Contact(kLambdaN, part, k) + lane, zero, keep);
      StoreStepped(blk.Contact(kLambdaSum, part, k) + lane, zero, keep);
      StoreStepped(blk.Contact(kDeferred, part, k) + lane, zero, keep);
    }
    return;
  }
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
    if (sp.record_impacts) RecordImpact(blk, part, lane, k, lambda_n, touching, sp, keep);
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
                              const RigidPartConstants& c, const RigidSolveParams& sp,
                              const typename Ops<V>::Mask& stepped) {
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
      // Contact events: the normal impulse of this pass counts with the position pass's
      // (a landing's push-out stops only the part of the approach that went in; this pass
      // stops the rest, and restitution sends it back).
      if (sp.record_impacts) {
        float* impulse_row = blk.Part(kRbImpactImpulse, part) + lane;
        const V before = O::Load(impulse_row);
        StoreStepped(impulse_row, O::Select(active, before + Dot3(p, n), before), stepped);
      }
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

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
