// tests/character_test_util.h: rigs and hosts shared by the character suites.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "ports/vrm/vrm_skeleton.h"
#include "test_util.h"

namespace tendon::test {

inline std::string SharedData(const std::string& relative) { return ports::SharedDataPath(relative); }

// The assets live beside the repository (../shared/data); without them the suites that
// need them skip, as the ragdoll suites do.
inline bool HaveSharedData() {
  for (const char* f : {"vrm/godette/Godette_vrm_v4.vrm", "jolt-human/ragdoll.json", "jolt-human/animations/walk.json"}) {
    if (std::FILE* file = std::fopen(SharedData(f).c_str(), "rb")) {
      std::fclose(file);
    } else {
      return false;
    }
  }
  return true;
}
#define TENDON_NEED_SHARED_DATA() \
  if (!HaveSharedData()) GTEST_SKIP() << SharedData("") << " is not available"

inline ports::JoltAnimation JoltAnim(const std::string& relative) {
  auto a = ports::LoadJoltAnimation(SharedData("jolt-human/" + relative));
  EXPECT_TRUE(a.ok()) << a.error().message;
  return a.value();
}

// Godette's skeleton with its VRM humanoid bones renamed by `rename` (VRM name -> new name).
inline SkeletonSettings Godette(const std::map<std::string, std::string>& rename) {
  auto vrm = ports::LoadVrmSkeleton(SharedData("vrm/godette/Godette_vrm_v4.vrm"));
  EXPECT_TRUE(vrm.ok()) << vrm.error().message;
  SkeletonSettings s = vrm.value().skeleton;
  for (const auto& [vrm_name, bone] : vrm.value().humanoid) {
    if (auto it = rename.find(vrm_name); it != rename.end()) s.names[bone] = it->second;
  }
  return s;
}

inline std::map<std::string, std::string> VrmNames() {
  std::map<std::string, std::string> m;
  for (const char* n : {"hips", "spine", "chest", "neck", "head", "leftUpperArm", "leftLowerArm", "leftHand", "rightUpperArm",
                        "rightLowerArm", "rightHand", "leftUpperLeg", "leftLowerLeg", "leftFoot", "leftToes",
                        "rightUpperLeg", "rightLowerLeg", "rightFoot", "rightToes", "leftShoulder", "rightShoulder"})
    m[n] = n;
  return m;
}

// Unity/Mecanim's humanoid names: the VRM ones capitalised ("LeftUpperArm").
inline std::map<std::string, std::string> UnityNames() {
  std::map<std::string, std::string> m = VrmNames();
  for (auto& [vrm, name] : m) name[0] = static_cast<char>(name[0] - 'a' + 'A');
  return m;
}

inline std::map<std::string, std::string> MixamoNames() {
  return {{"hips", "mixamorig:Hips"},           {"spine", "mixamorig:Spine"},
          {"chest", "mixamorig:Spine1"},        {"neck", "mixamorig:Neck"},
          {"head", "mixamorig:Head"},           {"leftShoulder", "mixamorig:LeftShoulder"},
          {"leftUpperArm", "mixamorig:LeftArm"}, {"leftLowerArm", "mixamorig:LeftForeArm"},
          {"leftHand", "mixamorig:LeftHand"},   {"rightShoulder", "mixamorig:RightShoulder"},
          {"rightUpperArm", "mixamorig:RightArm"}, {"rightLowerArm", "mixamorig:RightForeArm"},
          {"rightHand", "mixamorig:RightHand"}, {"leftUpperLeg", "mixamorig:LeftUpLeg"},
          {"leftLowerLeg", "mixamorig:LeftLeg"}, {"leftFoot", "mixamorig:LeftFoot"},
          {"leftToes", "mixamorig:LeftToeBase"}, {"rightUpperLeg", "mixamorig:RightUpLeg"},
          {"rightLowerLeg", "mixamorig:RightLeg"}, {"rightFoot", "mixamorig:RightFoot"},
          {"rightToes", "mixamorig:RightToeBase"}};
}

inline std::map<std::string, std::string> UnrealNames() {
  return {{"hips", "pelvis"},        {"spine", "spine_01"},       {"chest", "spine_02"},
          {"neck", "neck_01"},       {"head", "head"},            {"leftShoulder", "clavicle_l"},
          {"leftUpperArm", "upperarm_l"}, {"leftLowerArm", "lowerarm_l"}, {"leftHand", "hand_l"},
          {"rightShoulder", "clavicle_r"}, {"rightUpperArm", "upperarm_r"}, {"rightLowerArm", "lowerarm_r"},
          {"rightHand", "hand_r"},   {"leftUpperLeg", "thigh_l"}, {"leftLowerLeg", "calf_l"},
          {"leftFoot", "foot_l"},    {"leftToes", "ball_l"},      {"rightUpperLeg", "thigh_r"},
          {"rightLowerLeg", "calf_r"}, {"rightFoot", "foot_r"},   {"rightToes", "ball_r"}};
}

// The host side of one character: model frame and pose buffers.
struct HostCharacter {
  Transform model{};
  std::vector<Transform> animated, output, world;
  CharacterId id{};

  HostCharacter(const SkeletonSettings& s, Transform at = {}) : model(at) {
    animated = s.rest_local;
    output = animated;
    world.resize(animated.size());
  }
  CharacterBinding Binding(CharacterArchetypeId archetype) {
    CharacterBinding b;
    b.archetype = archetype;
    b.model_world = &model;
    b.animated_local = animated;
    b.output_local = output;
    b.output_world = world;
    return b;
  }
};

}  // namespace tendon::test
