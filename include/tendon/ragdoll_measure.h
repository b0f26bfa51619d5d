// tendon/ragdoll_measure.h: how well a ragdoll's output pose keeps its joints.
//
// What it does: from a RagdollSettings and the part frames a ragdoll wrote (its output
// buffer, part frames in world space), measures one joint as an observer would: the gap
// between its two anchors, its swing (the angle between the parent's and the child's
// twist axes) against the elliptical cone's limit along that swing, and its twist (about
// the mean twist axis, between the plane axes), or a hinge's angle. It uses the settings'
// axes only, none of the solver's state, so hosts, tests and benchmarks can check a
// simulation with it.
// What it does NOT do: change anything, or know about motors and targets.
// Threading: a pure function. Memory: none.
#pragma once

#include <cstdint>
#include <span>

#include "tendon/export.h"
#include "tendon/math.h"
#include "tendon/ragdoll_settings.h"

namespace tendon {

struct JointMeasure {
  float gap = 0;             // m: distance between the anchor on the parent and on the child
  float swing = 0;           // radians: angle between the two twist axes (hinges: their misalignment)
  float swing_limit = 0;     // radians: the cone's half-angle along this swing (hinges: 0)
  float twist = 0;           // radians: twist about the mean twist axis (hinges: the hinge angle)
  float twist_min = 0, twist_max = 0;  // radians: the joint's twist or hinge range
  // How far past its limits the joint is, radians (0 inside): swing beyond the cone, and
  // twist (or hinge angle) beyond its range.
  float SwingExcess() const { return swing > swing_limit ? swing - swing_limit : 0.0f; }
  float TwistExcess() const {
    return twist > twist_max ? twist - twist_max : (twist < twist_min ? twist_min - twist : 0.0f);
  }
};

// Joint `part` (the joint between settings.parts[part] and its parent; part >= 1) in the
// pose `parts` (one world frame per part, as BindRagdoll's output_parts). Out-of-range
// arguments give a zero measure.
TENDON_API JointMeasure MeasureJoint(const RagdollSettings& settings, std::span<const Transform> parts, int32_t part);

}  // namespace tendon
