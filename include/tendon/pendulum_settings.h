// tendon/pendulum_settings.h: a boneless accessory (an earring, a keychain) as one
// pendulum bob hinged at its attachment joint, and its binding.
//
// What it does: PendulumSettings (plain data, every field with its range) and
// PendulumBinding (the host frames World::BindPendulum reads and writes).
// What it does NOT do: validate (BindPendulum does, naming the field).
// Threading and memory: plain values; the binding's pointers are the host's.
#pragma once

#include "tendon/math.h"

namespace tendon {

// A boneless accessory modelled as one pendulum bob hinged at its attachment joint.
struct PendulumSettings {
  float damping = 0.9f;            // [0, 1], as ChainSettings::damping
  float stiffness = 0.08f;         // [0, 1], pull back toward the worn (rest) bob
  float gravity_scale = 0.4f;      // [-100, 100]: a worn accessory sways near its pose
  float wind_scale = 1.0f;         // [-100, 100]
  float max_swing_degrees = 25.0f; // [0, 180]: the swing from rest never exceeds it
  // The accessory's centre in its own frame (the end of the rest lever). When the lever
  // from the hinge to the centre is shorter than 0.028 m, a synthetic 0.21 m lever hangs
  // from the hinge down the accessory's up axis (along -up_axis) instead. (The BonePhysics
  // reference's 0.1 and 0.75 are Roblox studs: 1 stud = 0.28 m.)
  Vec3 centre{};
  Vec3 up_axis{0.0f, 1.0f, 0.0f};  // unit, in the accessory's frame
};

struct PendulumBinding {
  PendulumSettings settings{};
  // The world frame of the joint that holds the accessory on (the hinge is its origin).
  const Transform* joint_world = nullptr;
  // The joint's accessory-side offset (accessory frame relative to the joint frame). Its
  // value at bind time is the worn pose; Step writes the swung offset here; unbinding
  // restores the bind-time value exactly. Also the identity of the binding.
  Transform* accessory_offset = nullptr;
};

}  // namespace tendon
