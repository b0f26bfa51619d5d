// kernel/rigid/rigid_block.h: the structure-of-arrays layout of a block of ragdoll lanes,
// and the plain constants the rigid kernels read.
//
// Design (DESIGN.md, "lanes are instances"): a block holds `lanes` instances of one
// ragdoll archetype (8, or 16 where the World runs the AVX-512 kernel: the width is the
// World's, RigidKernels::block_lanes, and each kernel loops over a block in steps of its
// batch). Part j of every lane sits side by side, so joint j (between part
// parent(j) and part j) is the same aligned load in every lane. Everything that is the
// same for every lane (masses, inertia, joint frames and limits, contact spheres) is in
// RigidPartConstants, a plain array read with broadcasts: kernels never touch std types,
// so the per-instruction-set translation units share no inline library code.
// Padding lanes hold a valid body pose and are marked inactive: their state is never
// written back, and every correction is computed for them anyway (masks cost more).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel/rigid/pair_lanes.h"
#include "kernel/simd/lanes.h"

namespace tendon::detail {

inline constexpr int32_t kMaxContactPoints = 8;  // per part (a box's corners)
inline constexpr int32_t kMaxStaticPlanes = 8;
inline constexpr int32_t kMaxStaticShapes = 64;  // spheres + capsules + boxes

// Per part, per lane.
enum RigidField : int32_t {
  kRbXx, kRbXy, kRbXz,            // centre of mass (world)
  kRbQx, kRbQy, kRbQz, kRbQw,       // body orientation (body frame: principal axes)
  kRbVx, kRbVy, kRbVz,            // linear velocity
  kRbWx, kRbWy, kRbWz,         // angular velocity (world)
  kRbXPx, kRbXPy, kRbXPz,         // position at the substep's start
  kRbQPx, kRbQPy, kRbQPz, kRbQPw,   // orientation at the substep's start
  // The motor of the joint to the parent: the target rotation of this body relative to
  // the parent body (q_parent^-1 q_child), and the target relative angular velocity in the
  // parent body's frame.
  kMotorQx, kMotorQy, kMotorQz, kMotorQw,
  kMotorWx, kMotorWy, kMotorWz,
  // Planar mode: the body's orientation at bind (it may only turn about the plane's normal
  // from there) and its offset along the normal (it may only move in its plane).
  kPlanarQx, kPlanarQy, kPlanarQz, kPlanarQw, kPlanarD,
  // The fields above are the bodies' state and the host's controls (World::StateHash);
  // the ones below are bookkeeping derived from them.
  // Bounded depenetration between ragdolls (pair_kernel_impl.h), m: the most
  // penetration this part's pair contacts left in on purpose this frame, and last frame's
  // (the frame's first pass moves one into the other). kPlacedPenetration after a
  // placement: whatever the part starts in is pushed out at the bounded speed.
  kRbPairDeferNow, kRbPairDeferLast,
  // Render interpolation (RagdollSystem::Step): the body's pose when the last frame that
  // ran fixed steps began; what is written lies between it and the pose now.
  kRbFrameStartX, kRbFrameStartY, kRbFrameStartZ,
  kRbFrameStartQx, kRbFrameStartQy, kRbFrameStartQz, kRbFrameStartQw,
  // Contact events (tendon/contact_events.h), written only when RigidSolveParams::
  // record_impacts and only where a lane's part touches the static world; never read by
  // the solve. Over the frame: the fastest approach speed along a contact's normal before
  // the position solve (m/s, >= 0; -1: no contact this frame) and the sum of the normal
  // impulses of both passes (N s); reset by RagdollSystem::Prepare. kRbContactState
  // carries the events' memory from frame to frame (ragdoll_events.cpp's bits), with the
  // lane when it moves.
  kRbImpactSpeed, kRbImpactImpulse, kRbContactState,
  kRigidFieldCount
};

// Per part, per contact point, per lane: the substep's contact against the static planes.
enum ContactField : int32_t {
  kLambdaN,      // normal positional impulse this substep (>0: in contact)
  kNormalSpeed,  // normal speed before the position solve (for restitution)
  kCnx, kCny, kCnz,  // contact normal (from the static shape toward the part), found once
  kPlaneOffset,      // per frame with the plane's offset: dot(x, n) = offset on the surface
  kTouching,     // 1 when in contact this substep
  kStickX, kStickY, kStickZ,  // where the sphere's contact point is held (static friction)
  kLambdaSum, kTangentSum,    // the normal and tangential impulses over a recent window
  kDeferred,     // m: penetration the last substep left in on purpose (bounded depenetration);
                 // kPlacedPenetration after a placement
  kContactFieldCount
};

// A part just placed (bound, activated, moved by SetRagdollPartStates) pushes out whatever
// penetration it starts in at the bounded speed: this stands for "all of it".
inline constexpr float kPlacedPenetration = 1e30f;

enum StaticShapeKind : int32_t { kStaticSphere, kStaticCapsule, kStaticBox };

// A static shape as the kernels read it. Sphere: a = centre. Capsule: segment a..b.
// Box: a = centre, q = rotation, half = half extents. radius: spheres and capsules.
struct StaticShape {
  int32_t kind = kStaticSphere;
  float a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  float q[4] = {0, 0, 0, 1};
  float half[3] = {0, 0, 0};
  float radius = 0;
};

// Per lane.
enum RigidLaneField : int32_t {
  kActive,  // 1: an instance lives in this lane, 0: padding
  kAsleep,  // 1: asleep (or frozen): the lane is not stepped and its state is not written
  kMotorStrength,  // [0, 1]: scales every motor's torque cap (0: motors off)
  kPlanarNx, kPlanarNy, kPlanarNz,  // planar mode's unit normal; zero: 3D
  kSettleDamping,  // 1/s, extra linear and angular damping of a ragdoll coming to rest
  // The host's pushes (rigid_kernel_drive.h; RagdollSystem's drives and forces). All zero
  // (a fresh lane) means none, and the kernel skips a slice none of whose lanes has one,
  // so a world that uses none computes exactly what it did without them.
  kControlsOn,  // 1: a drive, an acceleration or a part force is set in this lane
  kAccelX, kAccelY, kAccelZ,  // m/s^2 added to gravity on every dynamic part
  // kMaxPartForceSlots slots of kForceRows rows from kForceBase: part + 1 (0: free), force (N).
  kForceBase,
  // kMaxPartDriveSlots slots of kDriveRows rows from kDriveBase (see DriveRow).
  kDriveBase = kForceBase + 4 * 4,
  kRigidLaneFieldCount = kDriveBase + 4 * 12
};
inline constexpr int32_t kMaxPartForceSlots = 4;
inline constexpr int32_t kForceRows = 4;  // part + 1, fx, fy, fz
inline constexpr int32_t kMaxPartDriveSlots = 4;
// A drive slot's rows, from kDriveBase + slot * kDriveRows.
enum DriveRow : int32_t {
  kDrivePart,                 // part index + 1 (0: the slot is free)
  kDriveLx, kDriveLy, kDriveLz,  // the point, in the part's body frame (m)
  kDriveTx, kDriveTy, kDriveTz,  // the target (world, m)
  kDriveMass,                 // M, the ragdoll's total mass (kg): the drive moves it as one body
  kDriveInvOmega2,            // 1 / omega^2 (s^2): the compliance times M
  kDriveDampingTime,          // 2 zeta / omega (s): the damping over the stiffness
  kDriveMaxForce,             // N (infinity: no cap)
  kDriveForce,                // written by the kernel: |force| of the last substep (N)
  kDriveRows
};
static_assert(kDriveBase == kForceBase + kMaxPartForceSlots * kForceRows, "force rows");
static_assert(kRigidLaneFieldCount == kDriveBase + kMaxPartDriveSlots * kDriveRows, "drive rows");
inline constexpr int32_t DriveField(int32_t slot, int32_t row) { return kDriveBase + slot * kDriveRows + row; }
inline constexpr int32_t ForceField(int32_t slot, int32_t row) { return kForceBase + slot * kForceRows + row; }

struct RigidPartConstants {
  int32_t parent = -1;
  float inv_mass = 0;        // 0: kinematic (driven by the host)
  float inv_inertia[3] = {0, 0, 0};
  float gravity_factor = 1;
  float linear_damping = 0, angular_damping = 0;  // 1/s
  float max_linear_speed = 500, max_angular_speed = 47;
  float friction = 0.6f, restitution = 0;
  // Contact spheres in the body frame (x, y, z, radius): capsule and tapered ends, the
  // sphere's centre, a box's corners (radius 0).
  int32_t point_count = 0;
  float points[kMaxContactPoints][4] = {};
  float extent = 0;  // farthest shape point from the centre of mass (m), for sleep
  // The joint to the parent, in each body's frame.
  int32_t joint_type = 0;  // 0 swing-twist, 1 hinge
  float anchor_parent[3] = {0, 0, 0}, anchor_child[3] = {0, 0, 0};
  float frame_parent[4] = {0, 0, 0, 1}, frame_child[4] = {0, 0, 0, 1};  // x: twist, y: plane
  float normal_half_cone = 0, plane_half_cone = 0, twist_min = 0, twist_max = 0;
  // The limits' core, a swing-twist joint's early-out (SolveLimits): a lane whose swing and
  // twist are inside their limits by a margin needs no limit turn, which dot and cross
  // products tell without an angle. Swing: tan(swing) >= swing, so a swing axis a (= n sin
  // swing) with (a.y / A)^2 + (a.z / B)^2 < cos^2 (1 - margin) (A, B the half-cones, cos
  // > 0) is inside the elliptical cone. Twist: the angle from the range's middle, by signed
  // squared cosines (sign(c) c^2 > twist_core_cos2 x r^2). limits_core 0: no early-out (a
  // hinge, or a half-cone or twist range within the margin of zero).
  float limits_core = 0;
  float swing_core_inv2[2] = {0, 0};  // 1 / A^2, 1 / B^2 (A, B at least 1e-6, as the limit)
  float twist_core_mid[2] = {1, 0};   // cos, sin of the twist range's middle
  float twist_core_cos2 = 2;          // of the range's half-width less the margin
  float hinge_min = 0, hinge_max = 0;
  float friction_torque = 0;  // N m
  // Motor: natural frequency (rad/s, 2 pi f; 0: no motor), damping ratio, torque cap (N m).
  float motor_omega = 0, motor_damping_ratio = 1, motor_max_torque = 0;
  // The motor's spring acts on the whole limb the joint holds, not on the child alone:
  // stiffness = i_limb omega^2, with i_limb the inertia of the child's subtree about the
  // joint (build pose) = motor_stiffness_scale x the child's own (>= 1).
  float motor_stiffness_scale = 1;
};

struct RigidSolveParams {
  const RigidPartConstants* parts = nullptr;
  int32_t part_count = 0;
  int32_t substeps = 0;
  int32_t iterations = 1;  // joint passes (root to leaf and back) per substep
  float dt = 0;  // substep length
  float gravity[3] = {0, 0, 0};
  int32_t plane_count = 0;
  float planes[kMaxStaticPlanes][4] = {};  // unit normal, offset: n . x = offset on the plane
  int32_t shape_count = 0;
  const StaticShape* shapes = nullptr;
  float contact_angular_damping = 0;  // 1/s, parts touching the static world
  // Bounded depenetration (see SolveContacts): at most max_push (ragdoll_max_push_speed x
  // dt, m) of a deep penetration a part starts a substep with is taken out in it.
  float max_push = 1e30f;
  // Static contacts are found on the frame's first substep (find_static_contacts), over
  // the path a contact sphere would take in frame_seconds at its velocity, and the
  // substeps after it solve against those planes.
  bool find_static_contacts = true;
  float frame_seconds = 0;
  // Triangle meshes and heightfields: a scalar sphere query each lane calls for itself
  // (compiled for the baseline; see kernel/collide/static_mesh.h). Null when there are none.
  bool (*mesh_contact)(const void* mesh, const float c[3], const float c_prev[3], float r, float* depth,
                       float normal[3]) = nullptr;
  const void* mesh = nullptr;
  // Contact events are on for some archetype: the static contacts record kRbImpactSpeed
  // and kRbImpactImpulse (bookkeeping only: no other result changes).
  bool record_impacts = false;
};

inline constexpr std::size_t RigidFloatsPerBlock(int32_t parts, int32_t lanes) {
  return (static_cast<std::size_t>(parts) * (kRigidFieldCount + kMaxContactPoints * kContactFieldCount) +
          kRigidLaneFieldCount) *
         static_cast<std::size_t>(lanes);
}

// The widest block a World may take (the AVX-512 kernel's 16 lanes): per-block scratch on
// the stack is sized by it.
inline constexpr int32_t kMaxRigidBlockLanes = 16;

struct RigidBlockView {
  int32_t part_count = 0;
  float* data = nullptr;
  int32_t lanes = kBlockLanes;  // the block's width: every row holds this many floats
  float* Part(int32_t field, int32_t part) const {
    return data + (static_cast<std::size_t>(part) * kRigidFieldCount + field) * static_cast<std::size_t>(lanes);
  }
  float* Contact(int32_t field, int32_t part, int32_t point) const {
    return data + (static_cast<std::size_t>(part_count) * kRigidFieldCount +
                   (static_cast<std::size_t>(part) * kMaxContactPoints + point) * kContactFieldCount + field) *
                      static_cast<std::size_t>(lanes);
  }
  float* Lane(int32_t field) const {
    return data + (static_cast<std::size_t>(part_count) * (kRigidFieldCount + kMaxContactPoints * kContactFieldCount) +
                   field) *
                      static_cast<std::size_t>(lanes);
  }
};

struct RigidKernels {
  // Runs params.substeps XPBD substeps over `count` blocks of one archetype.
  void (*solve)(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params);
  // One substep in two halves, for frames where ragdolls touch each other: the contacts
  // between them are solved between the halves (positions, then velocities).
  void (*positions)(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params);
  void (*velocities)(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params);
  // The contacts between ragdolls' position half for `count` pairs of one colour gathered
  // in lanes (pair_lanes.h; PairContacts gathers and scatters).
  void (*pair_positions)(PairLanes& lanes, int32_t count, const PairSolveParams& params);
  // Their velocity half, for pairs where a contact pushed in the position half.
  void (*pair_velocities)(PairLanes& lanes, int32_t count, const PairSolveParams& params);
  const char* name;
  // The block width this kernel is built for: its batch, and at least kBlockLanes. Any
  // width that is a multiple of its batch also runs (slices of a block, one batch each).
  int32_t block_lanes;
};

}  // namespace tendon::detail
