// kernel/rigid/pair_lanes.h: the lanes in which contacts between ragdolls are solved.
//
// What it is: up to kPairLanes pairs of one colour (no two share an awake body), each in
// one lane, as structure-of-arrays rows: both bodies' poses, velocities and inverse
// masses, the pair's contacts (kContactsPerPair rows each) and the pass's outputs.
// PairContacts gathers a colour's active pairs into it, a rigid kernel's `pair_positions`
// or `pair_velocities` (kernel/rigid/pair_kernel_impl.h, compiled per instruction set with
// a scalar reference) solves them side by side, and PairContacts scatters the results back. A lane's result
// never depends on the lanes beside it, so how pairs are grouped changes no bit.
// What it is NOT: storage that outlives a batch (PairContacts keeps the contacts), or a
// place for the contacts' search (PairContacts::Find, once per frame).
// Threading: one per worker slot, used by one batch at a time. Memory: plain arrays, no
// std types (the per-instruction-set translation units share no inline library code).
#pragma once

#include <cstdint>

namespace tendon::detail {

inline constexpr int32_t kContactsPerPair = 4;  // contacts of a pair, found once per frame
inline constexpr int32_t kPairLanes = 16;       // pairs per batch: a multiple of every kernel's batch
// Sweeps over a pair's contacts in each pass, so that a box's corners share the push-out
// (as the static contacts' SolveContacts and ContactVelocities sweep a part's spheres).
inline constexpr int32_t kPairSweeps = 3;
// A contact point that went deeper than this, or slid this far along the surface, may be
// passing beside the shape (the tangent plane extends past it): it is measured again.
inline constexpr float kPairRemeasureDepth = 0.01f;  // m
inline constexpr float kPairRemeasureSlide = 0.02f;  // m

// Per body (a, then b), per lane.
enum PairBodyField : int32_t {
  kPbXx, kPbXy, kPbXz,
  kPbQx, kPbQy, kPbQz, kPbQw,
  kPbVx, kPbVy, kPbVz,
  kPbWx, kPbWy, kPbWz,
  kPbXPx, kPbXPy, kPbXPz,          // at the substep's start: read only where a contact
  kPbQPx, kPbQPy, kPbQPz, kPbQPw,  // is being pushed out at the bounded speed
  kPbInvMass,                      // 0: fixed in this pair (asleep, frozen or kinematic)
  kPbInvInertia0, kPbInvInertia1, kPbInvInertia2,  // body frame; 0 when fixed
  kPairBodyFieldCount
};

// Per contact slot, per lane (PairContacts::Contact's fields).
enum PairContactField : int32_t {
  kPcNx, kPcNy, kPcNz,  // normal, in the frame of the body whose shape gave it
  kPcArmAx, kPcArmAy, kPcArmAz,
  kPcArmBx, kPcArmBy, kPcArmBz,
  kPcOnA,  // 1: the normal turns with body a (the shape is a's), 0: with b
  kPcStickX, kPcStickY, kPcStickZ,
  kPcLambdaSum,
  kPcDeferred,
  kPcLambda,  // out: the normal impulse this substep (0: apart)
  kPcPre,     // out: the relative normal speed before the solve, where it pushed
  kPairContactFieldCount
};

// Per lane.
enum PairLaneField : int32_t {
  kPlCount,     // the pair's contacts (0: an empty lane)
  kPlFriction,  // sqrt(friction_a friction_b)
  kPlMoved,     // out: 1 when a contact pushed
  kPlPushing,   // out: 1 when a contact was pushed out at the bounded speed
  kPlDeferNowA, kPlDeferNowB,  // out: the most penetration left in on purpose, per body
  // A contact measured again against its shape (PairSolveParams::remeasure): the normal
  // (from b toward a, world) and the depth out.
  kPlRemeasureNx, kPlRemeasureNy, kPlRemeasureNz,
  kPlRemeasureDepth,
  // The velocity pass: the pair's restitution (the mean of both parts'), and each part's
  // extent (m, farthest shape point from its centre: caps the spin of a bounded push-out).
  kPlRestitution, kPlExtentA, kPlExtentB,
  kPairLaneFieldCount
};

struct alignas(64) PairLanes {
  float body[2][kPairBodyFieldCount][kPairLanes];
  float contact[kContactsPerPair][kPairContactFieldCount][kPairLanes];
  float lane[kPairLaneFieldCount][kPairLanes];
};

struct PairSolveParams {
  float max_push = 1e30f;  // m: the most of a placement's penetration taken out per substep
  // The velocity pass: the substep's length (s), |gravity| (restitution applies only above
  // 2 g h of approach), the bounded push-out speed (m/s) and the rolling resistance (1/s).
  float h = 0, gravity_length = 0, max_push_speed = 1e30f, angular_damping = 0;
  // Measures contact k of `lane` against its shape again, from the bodies' poses the kernel
  // stored in the lanes (the contact's sample sphere is the caller's): writes the contact's
  // new points, normal and friction hold, and the world normal and depth in kPlRemeasure*.
  // A scalar function of one lane (compiled for the baseline), so every kernel gets the
  // same result.
  void (*remeasure)(const void* context, PairLanes& lanes, int32_t lane, int32_t k) = nullptr;
  const void* context = nullptr;
};

}  // namespace tendon::detail
