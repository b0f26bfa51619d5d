// kernel/character/character_archetype.h: a skeleton mapped onto ragdoll parts, validated
// once.
//
// Design: every bone either carries a part (its frame is the part's frame, so a part's
// output is directly that bone's world frame) or follows its parent with its animated local
// transform (so it rides its nearest simulated ancestor). Building produces the
// RagdollSettings the ragdoll system builds its rigid archetype from; the joint limits come
// from the default table, per-joint overrides, or clips (learned with the rigid kernel's
// own swing, twist and hinge measures, so a learned limit never pushes a sampled pose).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tendon/character.h"
#include "tendon/errors.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::detail {

inline constexpr int32_t kMaxCharacterBones = 1024;

// Lower case without '_', '.', ' ', '-' and without any "prefix:" (mixamorig:Hips -> hips).
std::string NormalizeBoneName(std::string_view name);

struct CharacterArchetype {
  std::string name;
  std::vector<std::string> bone_names;
  std::vector<int32_t> parents;
  std::vector<Transform> rest_local;
  std::vector<int32_t> part_of_bone;  // per bone: its part, or -1 (it follows its parent)
  std::vector<int32_t> part_bone;     // per part: its bone
  std::vector<CharacterPartInfo> parts;
  RagdollSettings ragdoll;            // what the World builds the rigid archetype from
  RagdollArchetypeId ragdoll_archetype{};
  // CharacterInactiveBodies::kKinematic: the kinematic copy's archetype (null otherwise).
  RagdollArchetypeId twin_archetype{};
  float total_mass = 0;
  int32_t torso_part = 0;          // the part whose front says how the body lies (spine or root)
  Vec3 forward_in_torso{0, 0, 1};  // the rig's facing direction in the torso part's frame
  Quat root_rest_rotation{};       // the root part's rest rotation in model space
  int32_t head_part = -1;          // the part heading points toward (the head's, when found)
  std::vector<Vec3> com_in_part;   // each part's centre of mass in its frame (set by the World)
};

// Validates `settings` and fills `out` (all but ragdoll_archetype).
Error BuildCharacterArchetype(const CharacterSettings& settings, CharacterArchetype* out);

// The world transform of every bone from local transforms (parents before children).
void ForwardKinematics(const std::vector<int32_t>& parents, const Transform& model, const Transform* local,
                       Transform* world);

}  // namespace tendon::detail
