// tests/stickman_rig.h: the 2D stickman of the Godot reference as a character skeleton
// and part list (no assets needed), shared by the character and determinism suites.
#pragma once

#include "tendon/character.h"

namespace tendon::test {

// The 2D stickman of the Godot reference as a planar character (bone table of section 5,
// 0.0018 m per pixel, y up).
inline SkeletonSettings StickmanSkeleton() {
  constexpr float px = 0.0018f;
  SkeletonSettings s;
  auto bone = [&](const char* name, int parent, float x, float y) {
    s.names.push_back(name);
    s.parents.push_back(parent);
    s.rest_local.push_back(Transform{{x * px, y * px, 0}, {}, {1, 1, 1}});
  };
  bone("hips", -1, 0, 0);
  bone("neck", 0, 0, 391.5f);
  bone("head_top", 1, 0, 200);
  bone("l_shoulder", 0, 0, 248);
  bone("l_elbow", 3, -168, 0);
  bone("l_hand", 4, -200, 0);
  bone("r_shoulder", 0, 0, 248);
  bone("r_elbow", 6, 168, 0);
  bone("r_hand", 7, 200, 0);
  bone("l_hip", 0, 0, 0);
  bone("l_knee", 9, 0, -200);
  bone("l_foot", 10, 0, -200);
  bone("r_hip", 0, 0, 0);
  bone("r_knee", 12, 0, -200);
  bone("r_foot", 13, 0, -200);
  return s;
}

inline CharacterSettings StickmanCharacter() {
  constexpr float px = 0.0018f;
  CharacterSettings c;
  c.name = "stickman";
  c.skeleton = StickmanSkeleton();
  c.total_mass = 18.5f;
  auto hinge = [](float lo, float hi) { return CharacterHinge{{0, 0, 1}, lo, hi}; };
  c.parts = {
      {.bone = "hips", .to = "neck", .radius = 12 * px, .mass_share = 8},
      {.bone = "neck", .to = "head_top", .parent = "hips", .radius = 100 * px, .mass_share = 2, .hinge = hinge(-180, 180)},
      {.bone = "l_shoulder", .to = "l_elbow", .parent = "hips", .radius = 8 * px, .mass_share = 1.5f, .hinge = hinge(-160, 160)},
      {.bone = "l_elbow", .to = "l_hand", .radius = 8 * px, .mass_share = 1, .hinge = hinge(-5, 150)},
      {.bone = "r_shoulder", .to = "r_elbow", .parent = "hips", .radius = 8 * px, .mass_share = 1.5f, .hinge = hinge(-160, 160)},
      {.bone = "r_elbow", .to = "r_hand", .radius = 8 * px, .mass_share = 1, .hinge = hinge(-150, 5)},
      {.bone = "l_hip", .to = "l_knee", .parent = "hips", .radius = 8 * px, .mass_share = 2, .hinge = hinge(-160, 160)},
      {.bone = "l_knee", .to = "l_foot", .radius = 8 * px, .mass_share = 1.5f, .hinge = hinge(-5, 150)},
      {.bone = "r_hip", .to = "r_knee", .parent = "hips", .radius = 8 * px, .mass_share = 2, .hinge = hinge(-160, 160)},
      {.bone = "r_knee", .to = "r_foot", .radius = 8 * px, .mass_share = 1.5f, .hinge = hinge(-5, 150)},
  };
  return c;
}

}  // namespace tendon::test
