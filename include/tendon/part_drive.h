// tendon/part_drive.h: grabbing, dragging, holding and pushing a ragdoll: a drive of a point
// of a part toward a target point, a continuous acceleration or part force, and a throw
// (World::AddPartDrive, SetRagdollAcceleration, SetRagdollPartForce, ThrowRagdoll).
//
// What it does: describes a part drive (the AlignPosition of a grab beam) and what it
// reports. A drive is a soft, damped, force-capped XPBD constraint solved in the ragdoll
// kernel every substep (after the motors, before the joints), so the joints carry its pull
// through the body within the substep: a hand dragged drags the body that hangs from it.
// Stiffness is given as a response time T: the time in which a lone rigid body of the
// ragdoll's total mass, critically damped (damping_ratio 1), closes 98% of a sudden step
// of the target: natural frequency omega = kPartDriveResponseOmegaT / T (the root of
// (1 + omega T) e^(-omega T) = 0.02), stiffness k = M omega^2, damping c = 2 damping_ratio
// M omega, M the summed mass of every part. A drive on a limb of a jointed body moves the
// whole body through that limb, so it responds about that fast plus the slack of the
// joints between. Gravity sags a held body by about g / omega^2 below the target.
// A drive breaks (lets go, reports it once, and stays readable as broken until removed)
// when the point is farther from the target than break_distance at the end of a frame.
// On release (RemovePartDrive or a break) the part keeps the velocity it has.
// What it does NOT do: collide the held body with anything the ragdoll would not meet
// anyway, or move the target (the host sets it each frame: SetPartDriveTarget).
// Threading and memory: plain data. AddPartDrive may allocate (its handle table); setting
// a target, removing a drive and stepping do not.
#pragma once

#include <cmath>
#include <cstdint>

#include "tendon/math.h"

namespace tendon {

// Drives per ragdoll at once (two hands and two feet).
inline constexpr int32_t kMaxPartDrives = 4;
// Parts of one ragdoll with a continuous force at once (SetRagdollPartForce).
inline constexpr int32_t kMaxPartForces = 4;
// omega T for 98% of a critically damped step response: (1 + x) e^-x = 0.02.
inline constexpr float kPartDriveResponseOmegaT = 5.8335f;

struct PartDriveSettings {
  int32_t part = 0;         // the part driven, [0, part count); not a kinematic root
  Vec3 local_point{};       // m, in the part's frame (the part frame the ragdoll outputs)
  Vec3 target{};            // m, world: where the point is pulled
  float response_time = 0.2f;   // s, (0, 1000]: see the header's comment
  float max_force = INFINITY;   // N, > 0; infinity: no cap
  float damping_ratio = 1.0f;   // [0, 100]: 1 critical, 0 none
  float break_distance = INFINITY;  // m, > 0; infinity: never breaks
};

struct PartDriveState {
  bool active = false;   // pulling (false once broken)
  bool broken = false;   // let go past break_distance (stays so until RemovePartDrive)
  float distance = 0;    // m, from the point to the target at the end of the last frame
  float force = 0;       // N, the pull of the last substep (0 once broken)
  Vec3 target{};         // the target it pulls (or pulled) toward
};

}  // namespace tendon
