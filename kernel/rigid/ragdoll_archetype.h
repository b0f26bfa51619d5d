// kernel/rigid/ragdoll_archetype.h: a validated, immutable ragdoll archetype.
//
// Design: building does all derived work once, so that the rigid solver (substepped XPBD,
// next) only reads finished numbers:
//  - mass properties of every shape (closed forms for spheres, boxes and capsules; the
//    tapered capsule's hull integrated in slices), moved into the part frame, then
//    diagonalised: each part gets a body frame at its centre of mass along its principal
//    axes, so the solver's inertia is three numbers;
//  - masses from explicit values, shares of a total or density, then (optionally)
//    stabilised;
//  - joint frames in both bodies' frames, from the build pose, which is therefore the
//    neutral pose of every limit (limits live in the parent's frame and follow it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tendon/errors.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::detail {

inline constexpr int32_t kMaxRagdollParts = 64;

// Volume, centre of mass and inertia (about the centre of mass, per unit density) of a
// shape in its own frame.
struct ShapeMass {
  float volume = 0;
  Vec3 centre{};
  float inertia[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};  // symmetric, kg m^2 per kg/m^3
};
ShapeMass ComputeShapeMass(const PartShapeSettings& shape);

// Eigen-decomposition of a symmetric 3x3 matrix (cyclic Jacobi): the rotation whose
// columns are the eigenvectors, and the eigenvalues along them.
void DiagonaliseSymmetric(const float m[3][3], Quat* axes, Vec3* values);

struct RigidJointArchetype {
  JointType type = JointType::kSwingTwist;
  Vec3 anchor_in_parent{}, anchor_in_child{};  // in each body's frame
  // The joint frame (x: twist axis, y: plane axis, z: their normal) in each body's frame.
  Quat frame_in_parent{}, frame_in_child{};
  float normal_half_cone = 0, plane_half_cone = 0;  // radians
  float twist_min = 0, twist_max = 0;               // radians
  float hinge_min = 0, hinge_max = 0;               // radians
  float friction_torque = 0;                        // N m (per kg times the child's mass)
  MotorSettings motor{};
};

struct RigidPartArchetype {
  std::string name;
  int32_t parent = -1;
  float mass = 0, inv_mass = 0;
  Vec3 inertia{}, inv_inertia{};  // principal, in the body frame
  Transform body_pose{};          // body frame in model space, build pose
  Transform body_in_part{};       // body frame in the part frame
  Transform shape_in_body{};      // the shape's frame in the body frame
  PartShapeSettings shape{};
  float volume = 0;
  float friction = 0, restitution = 0, linear_damping = 0, angular_damping = 0, gravity_factor = 1;
  float max_linear_speed = 0, max_angular_speed = 0;
  RigidJointArchetype joint{};  // to the parent (unused for the root)
};

struct RagdollArchetype {
  std::string name;
  std::vector<RigidPartArchetype> parts;
  float total_mass = 0;
  uint32_t collision_group = 1, collision_mask = 0xffffffffu;
  std::vector<std::pair<int32_t, int32_t>> self_collision_pairs;
  // Every part kinematic, moved by the ragdoll system along the velocity it is given (a
  // host body, a character's animated twin: RagdollSystem::BuildKinematicArchetype).
  bool kinematic_bodies = false;
  bool trigger = false;  // kinematic_bodies only: meets parts as overlaps, pushes nothing
  ContactEventSettings contact_events;  // validated (tendon/contact_events.h)
};

Error BuildRagdollArchetype(const RagdollSettings& settings, RagdollArchetype* out);

// The quaternion of a rotation matrix given by its columns.
Quat FromColumns(Vec3 x, Vec3 y, Vec3 z);

// The joint measures the kernel enforces (rigid_kernel_joint_limits.h, SolveLimits), in plain
// scalar code, for the parent's and the child's joint frames in world space (x: the twist
// axis, y: the plane axis). Building limits from clips and MeasureJoint
// (tendon/ragdoll_measure.h) both read joints with it.
struct JointAngles {
  float swing = 0;                 // radians between the two twist axes
  float swing_y = 0, swing_z = 0;  // swing times its axis's y and z in the parent joint frame
  float twist = 0;                 // about the mean twist axis, between the plane axes (a
                                   // hinge's angle)
};
JointAngles MeasureJointFrames(Quat parent_frame, Quat child_frame);

}  // namespace tendon::detail
