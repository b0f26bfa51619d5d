// kernel/rigid/rigid_constants.h: an archetype's lane-uniform numbers for the rigid kernels.
//
// What it does: RigidConstants turns a built ragdoll archetype into the per-part constants
// every lane of its blocks shares (RigidPartConstants, rigid_block.h): inverse masses and
// inertias (zero for a kinematic root), damping and speed caps, the contact spheres in the
// body frame, the joint frames and limits with the limits' core (SetLimitsCore), and the
// motors' gains, limb inertia included. PairSamplePoints gives a part's sample spheres for
// the contacts between ragdolls.
// What it does NOT do: validate (building the archetype did), or touch lanes: a group
// computes its constants once, when it is made (bind time).
// Threading: pure functions. Memory: RigidConstants and PairSamplePoints return vectors
// (bind time only).
#pragma once

#include <array>
#include <vector>

#include "kernel/rigid/ragdoll_archetype.h"
#include "kernel/rigid/rigid_block.h"

namespace tendon::detail {

// The lane-uniform constants of an archetype's parts; with `kinematic_root`, part 0 is
// driven by the host (zero inverse mass and inertia).
std::vector<RigidPartConstants> RigidConstants(const RagdollArchetype& a, bool kinematic_root);

// The limits' core of a swing-twist joint (RigidPartConstants::limits_core), from its
// half-cones and twist range; a hinge, or limits within the margins of zero, keep none.
void SetLimitsCore(RigidPartConstants* c);

// A part's sample spheres in its body frame (x, y, z, radius), a box's face centres
// included: what the contacts between ragdolls test (RagdollGroup::pair_points).
std::vector<std::array<float, 4>> PairSamplePoints(const RigidPartArchetype& p);

}  // namespace tendon::detail
