// ports/jolt_human/jolt_human.h: RagdollSettings from the Jolt "Human" ragdoll JSON
// (jolt-human/ragdoll.json among the assets; docs/ragdolls.md describes the format).
//
// What it does: maps each part's rest transform, shape, mass, material and swing-twist
// joint (anchor, parent and child axes, cone and twist limits, friction, motors) onto
// Tendon's settings. Jolt states torques in N m; Tendon's are per kg of the child part,
// so they are divided by the part's mass. Angles become degrees.
// It also reads the animations (skeletal clips) that come with it.
// What it does NOT do: compound shapes. The two neck parts are compounds of two capsules;
// they become one box bounding both (their mass is kept from the file).
// Threading: none. Memory: allocates the settings.
#pragma once

#include <string>

#include <span>
#include <vector>

#include "tendon/character.h"
#include "tendon/errors.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::ports {

// Reads `path`; on failure the error says what was wrong with the file: kIo with the
// system's reason when it cannot be read, "<path>:<line>:<column>: ..." for a syntax error,
// "<path>: <JSON path>: ..." for a member that is missing, mistyped or out of range (every
// member the mapping needs is required; material, damping, velocity limits, joint friction
// and motors may be absent and take Jolt's defaults). No exception leaves either loader.
// stabilized_masses: each part's mass after Jolt's RagdollSettings::Stabilize (what
// Jolt's samples use: child/parent ratios within [0.8, 1.2], same total) instead of the
// masses of the shapes.
Result<RagdollSettings> LoadJoltHumanRagdoll(const std::string& path, bool stabilized_masses = false);

// A Jolt skeletal animation (animations/*.json, hd/animations/*.json): every joint's local
// transform at shared key times, joints parents first.
struct JoltAnimation {
  std::string name;
  std::vector<std::string> joints;
  std::vector<int32_t> parents;
  bool looping = true;
  float duration = 0;
  std::vector<float> key_times;
  std::vector<Transform> keys;  // key-major: keys[k * joints.size() + j]
};
Result<JoltAnimation> LoadJoltAnimation(const std::string& path);
// The local pose at `time` (wrapped when looping; clamped otherwise): translations lerped,
// rotations slerped along the shortest arc. With in_place, the root's horizontal (x, z)
// translation is held at its first key (root motion removed). out: one per joint (extra
// joints are not written; an animation without keys for every joint writes nothing).
void SampleJoltAnimation(const JoltAnimation& animation, float time, std::span<Transform> out, bool in_place = false);
// The pose at `time` as the ragdoll's parts see it (part j is skeleton joint j): each
// part's model-space frame, and its normalised local rotation (a motor target). Both
// spans hold one entry per part.
void SampleJoltPartPose(const RagdollSettings& ragdoll, const JoltAnimation& animation, float time,
                        std::span<Transform> model, std::span<Quat> local_rotations);
// The skeleton of an animation, its first key as the rest pose (use `neutral`).
SkeletonSettings JoltSkeleton(const JoltAnimation& neutral);
// Every key of the animation as a frame, for CharacterSettings::limit_clips.
SampledClip JoltClip(const JoltAnimation& animation);

}  // namespace tendon::ports
