// kernel/rigid/rigid_kernel_impl.h: substepped XPBD for ragdoll parts, written once: the
// per-block driver, which includes every part.
//
// Like the chain kernel, every function is a template over V (float, FusedFloat, or an
// explicit-arch xsimd batch) and is instantiated in the per-instruction-set translation
// units, each under its own TENDON_RIGID_KERNEL_NS. Lanes are instances of one archetype;
// lanes never interact, so each slice of V::size lanes runs all its substeps alone.
//
// The substep (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position
// Based Dynamics", and Macklin et al. 2019, "Small Steps in Physics Simulation"; the
// formulas are summarised in docs/ragdolls.md), in two halves so that
// the contacts between ragdolls (a colour's pairs in lanes: pair_kernel_impl.h, driven by
// kernel/contacts/pair_contacts.cpp) run between them:
//   positions    pushes (when set): v += h (a + F / m)
//                integrate: x_prev = x; v += h g; damp (and settle); clamp speeds;
//                x += h v; q_prev = q; w += h I^-1 (-w x I w) (body frame); q += h/2 [w,0] q
//                world inverse inertia per body (held for the half)
//                motors (compliant, capped); part drives (when set: soft positional,
//                damped, capped); joints, `iterations` times root to leaf and
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
//
// The kernel is split by physics part, one header each (as Jolt's Constraints/ConstraintPart/),
// all included here, so each instruction set is still one translation unit:
//   rigid_kernel_body.h              a part's state in lanes; turns; world inverse inertia
//   rigid_kernel_positional_joint.h  the positional correction; the attachment
//   rigid_kernel_joint_limits.h      the angular correction; swing-twist and hinge limits
//   rigid_kernel_joint_friction.h    joint friction (Coulomb, position level)
//   rigid_kernel_integrate.h         integration; velocities from positions
//   rigid_kernel_static_contact.h    contacts against the static world, found
//   rigid_kernel_contact_solve.h     those contacts solved: positions, velocities
//   rigid_kernel_motor.h             motors: the compliant drive and its damping
//   rigid_kernel_planar.h            planar mode's projection
//   rigid_kernel_drive.h             the host's pushes: part drives, acceleration, part forces
//   pair_kernel_impl.h               the contacts between ragdolls, a colour's pairs in lanes
// This file owns the order: a joint's parts (SolveJoint), the two halves of a substep, the
// lane slices of a block and which of their lanes store (RunStages), and the kernel table.
// Memory: none of its own (a slice's bodies are on the stack).
#include <cmath>
#include <cstdint>

#include "kernel/rigid/rigid_block.h"
#include "kernel/simd/ops.h"

#ifndef TENDON_RIGID_KERNEL_NS
#error "define TENDON_RIGID_KERNEL_NS to a namespace unique to the translation unit"
#endif

#include "kernel/rigid/rigid_kernel_body.h"
#include "kernel/rigid/rigid_kernel_positional_joint.h"
#include "kernel/rigid/rigid_kernel_joint_limits.h"
#include "kernel/rigid/rigid_kernel_joint_friction.h"
#include "kernel/rigid/rigid_kernel_integrate.h"
#include "kernel/rigid/rigid_kernel_static_contact.h"
#include "kernel/rigid/rigid_kernel_contact_solve.h"
#include "kernel/rigid/rigid_kernel_motor.h"
#include "kernel/rigid/rigid_kernel_planar.h"
#include "kernel/rigid/rigid_kernel_drive.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// `keep`: sleeping and padding lanes (their results are not stored).
template <class V>
inline void SolveJoint(Body<V>& a, const RigidPartConstants& ca, Body<V>& b, const RigidPartConstants& cb,
                       const typename Ops<V>::Mask& keep) {
  if (cb.friction_torque > 0.0f) JointFriction(a, b);
  SolveLimits(a, b, cb, keep);
  SolveAttachment(a, ca, b, cb);
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
  typename Ops<V>::Mask pushed;  // lanes with a drive, an acceleration or a part force
  bool pushes;                   // any of them: else the slice skips rigid_kernel_drive.h
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
  st.pushed = O::Load(blk.Lane(kControlsOn) + lane) > O::Splat(0.5f);
  st.pushes = O::AnyOf(st.pushed);
  return st;
}

// The position half of a substep: the host's pushes (acceleration, part forces), integrate,
// motors, part drives, joints (iterations, root to leaf and
// back), static contacts, a joint pass after them, planar projection.
template <class V>
inline void SubstepPositions(const RigidBlockView& blk, int32_t lane, Body<V>* bodies, const SliceState<V>& st,
                             const RigidSolveParams& sp) {
  if (st.pushes) ApplyPushes(blk, lane, bodies, sp, st.pushed);
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
  // Drives after the motors and before the joints, which then carry the pull into the
  // rest of the body within the substep.
  if (st.pushes) SolveDrives(blk, lane, bodies, sp, st.keep);
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
    if (sp.parts[j].inv_mass > 0.0f) ContactVelocities(blk, j, lane, bodies[j], sp.parts[j], sp, st.keep);
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
