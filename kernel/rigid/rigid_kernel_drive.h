// kernel/rigid/rigid_kernel_drive.h: the host's pushes on a ragdoll in the XPBD kernel
// (rigid_kernel_impl.h): part drives, a whole-ragdoll acceleration and part forces.
//
// Owns: ApplyPushes, which adds h (a + F / m) to the velocity of every dynamic part before
// integration (a the lane's acceleration, F a force slot's force on its part, at the
// centre of mass: as gravity enters, so "acceleration a" means exactly that); and
// SolveDrives, one XPBD soft positional constraint per drive slot per substep pulling the
// part's point p = x + R l toward the target t: C = |p - t|, n = (p - t) / C, with the
// damped compliant constraint of Macklin et al. 2016 ("XPBD: Position-Based Simulation of
// Compliant Constrained Dynamics", eq. 26; one iteration a substep, so lambda starts at 0):
//   alpha~ = alpha / h^2, gamma = alpha beta / h,
//   dlambda = -(C + gamma n . (p - p_prev)) / ((1 + gamma) w + alpha~),
// with alpha = 1 / (M omega^2), beta = 2 zeta M omega and, for w, the inverse mass of the
// whole ragdoll 1/M, not the part's: the drive pulls as a spring-damper on a lone body of
// the ragdoll's mass (the response time's definition, tendon/part_drive.h), and the
// joints, solved right after, carry the part's move into the rest of the body. (With the
// part's own w a light hand holding a heavy body sees its damping and the joints' slack
// as if the hand alone were pulled: the body lagged by several times the response time
// and sagged by the hand's, not the body's, compliance.) Multiplied through by M:
//   dlambda = -M (C + gamma d) / (1 + gamma + 1 / (omega h)^2), gamma = (2 zeta / omega) / h.
// Its spring part is never more than C / w_part and its damping part never more than
// gamma d / ((1 + gamma) w_part) (what the part alone would take), so a light part is not
// thrown past the target.
// |dlambda| is capped at max_force h^2 (the positional impulse of max_force over h); the
// part moves by n dlambda / m and turns by I^-1 (r x n dlambda). |dlambda| / h^2, the
// force applied, goes to the slot's kDriveForce row.
// Does not: decide which parts are driven, where the targets are or when a drive breaks
// (RagdollSystem, scalar, once a frame), or anything when no lane of a slice has a push:
// the driver skips it (SliceState::pushes), so a world with none keeps every result bit for
// bit.
// Lanes of a slice may drive different parts: each (slot, part) pair runs only where some
// lane drives that part, and a lane that does not keeps its position and velocity by a
// select (x + 0 would turn a -0 into +0) and gets a zero turn, which keeps q (Turn), so
// every lane gives its scalar reference's bits at any batch width.
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it: the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none; it reads the block's push rows, writes kDriveForce (stepped lanes only) and
// changes the caller's bodies.
#pragma once

#include "kernel/rigid/rigid_kernel_body.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// v += h (a + F / m) for every dynamic part, before Integrate adds gravity.
// `pushed`: the lanes with kControlsOn. Lanes without are left bit for bit (v + 0 would
// turn a -0 into +0, which the scalar reference, skipping them, never does).
template <class V, class M>
inline void ApplyPushes(const RigidBlockView& blk, int32_t lane, Body<V>* bodies, const RigidSolveParams& sp,
                        const M& pushed) {
  using O = Ops<V>;
  const V h = O::Splat(sp.dt);
  const V3<V> dv{O::Load(blk.Lane(kAccelX) + lane) * h, O::Load(blk.Lane(kAccelY) + lane) * h,
                 O::Load(blk.Lane(kAccelZ) + lane) * h};
  for (int32_t j = 0; j < sp.part_count; ++j) {
    if (sp.parts[j].inv_mass > 0.0f) bodies[j].v = Select3(pushed, Add(bodies[j].v, dv), bodies[j].v);
  }
  for (int32_t s = 0; s < kMaxPartForceSlots; ++s) {
    const V part = O::Load(blk.Lane(ForceField(s, 0)) + lane);
    if (!O::AnyOf(part > O::Splat(0.5f))) continue;
    const V3<V> f{O::Load(blk.Lane(ForceField(s, 1)) + lane), O::Load(blk.Lane(ForceField(s, 2)) + lane),
                  O::Load(blk.Lane(ForceField(s, 3)) + lane)};
    for (int32_t j = 0; j < sp.part_count; ++j) {
      if (sp.parts[j].inv_mass <= 0.0f) continue;
      const auto here = part == O::Splat(static_cast<float>(j + 1));
      if (!O::AnyOf(here)) continue;
      const V3<V> moved = Add(bodies[j].v, Scale(f, O::Splat(sp.dt * sp.parts[j].inv_mass)));
      bodies[j].v = Select3(here, moved, bodies[j].v);
    }
  }
}

// One drive slot on part j, in the lanes of `here` (others get a zero correction).
template <class V, class M>
inline void SolveDrive(const RigidBlockView& blk, int32_t slot, int32_t lane, Body<V>& b, const RigidPartConstants& c,
                       const RigidSolveParams& sp, const M& here, const M& keep) {
  using O = Ops<V>;
  auto ld = [&](int32_t row) { return O::Load(blk.Lane(DriveField(slot, row)) + lane); };
  const V3<V> local{ld(kDriveLx), ld(kDriveLy), ld(kDriveLz)};
  const V3<V> target{ld(kDriveTx), ld(kDriveTy), ld(kDriveTz)};
  const V mass = ld(kDriveMass), inv_omega2 = ld(kDriveInvOmega2), damping_time = ld(kDriveDampingTime);
  const V3<V> r = QRotate(b.q, local);
  const V3<V> d = Sub(Add(b.x, r), target);
  const V3<V> n = SafeNormal(d);
  const V dist = Dot3(d, n);
  // How far the point moved along n since the substep began: the damping term's velocity.
  const V3<V> p_prev = Add(b.xp, QRotate(b.qp, local));
  const V moved = Dot3(Sub(Add(b.x, r), p_prev), n);
  const float h = sp.dt;
  const V gamma = damping_time * O::Splat(1.0f / h);
  const V denominator = O::Splat(1.0f) + gamma + inv_omega2 * O::Splat(1.0f / (h * h));
  // Never more than the part alone would take (its own w = 1/m + (r x n) . I^-1 (r x n)
  // in place of 1/M): the spring part at most closes the gap, the damping part at most
  // stops the point along n. A light part far from the rest of the mass (a character's
  // hand) would otherwise be thrown past the target by the whole body's impulse, and the
  // damping would feed on that. For a lone body (w = 1/M) neither bound acts.
  const V3<V> rn = Cross3(r, n);
  const V w = O::Max(O::Splat(c.inv_mass) + InvInertiaNorm(b, rn), O::Splat(1e-20f));
  const V whole = mass / denominator;
  const V spring = O::Min(whole, O::Splat(1.0f) / w);
  const V damper = O::Min(whole, O::Splat(1.0f) / ((O::Splat(1.0f) + gamma) * w));
  V lambda = dist * spring + gamma * moved * damper;
  const V cap = ld(kDriveMaxForce) * O::Splat(h * h);
  lambda = O::Max(O::Min(lambda, cap), O::Splat(0.0f) - cap);
  lambda = O::Select(here, lambda, O::Splat(0.0f));
  // The point moves by -n lambda w: the part by -n lambda / m, turned by I^-1 (r x -n lambda).
  const V3<V> p = Scale(n, O::Splat(0.0f) - lambda);
  b.x = Select3(here, Add(b.x, Scale(p, O::Splat(c.inv_mass))), b.x);
  b.q = Turn(b.q, InvInertia(b, Cross3(r, p)), O::Splat(1.0f));
  float* force = blk.Lane(DriveField(slot, kDriveForce)) + lane;
  const V applied = O::Abs(lambda) * O::Splat(1.0f / (h * h));
  StoreStepped(force, O::Select(here, applied, O::Load(force)), keep);
}

// Every drive slot of the slice, on the parts some lane drives.
template <class V, class M>
inline void SolveDrives(const RigidBlockView& blk, int32_t lane, Body<V>* bodies, const RigidSolveParams& sp,
                        const M& keep) {
  using O = Ops<V>;
  for (int32_t s = 0; s < kMaxPartDriveSlots; ++s) {
    const V part = O::Load(blk.Lane(DriveField(s, kDrivePart)) + lane);
    if (!O::AnyOf(part > O::Splat(0.5f))) continue;
    for (int32_t j = 0; j < sp.part_count; ++j) {
      if (sp.parts[j].inv_mass <= 0.0f) continue;  // a kinematic root follows its host frame
      const auto here = part == O::Splat(static_cast<float>(j + 1));
      if (!O::AnyOf(here)) continue;
      SolveDrive(blk, s, lane, bodies[j], sp.parts[j], sp, here, keep);
    }
  }
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
