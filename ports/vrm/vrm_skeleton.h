// ports/vrm/vrm_skeleton.h: the node hierarchy and humanoid bone map of a VRM (glTF binary)
// model, as a Tendon skeleton.
//
// What it does: reads the GLB's JSON chunk; every node reachable from the default scene
// becomes a bone (parents before children, depth first), with its translation, rotation
// and scale as the rest local transform; VRM 0.x ("VRM") and 1.0 ("VRMC_vrm") humanoid
// bone names map to skeleton indices.
// What it does NOT do: meshes, skins, spring bones, or nodes given as a matrix (an error).
// Threading: none. Memory: allocates the skeleton.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tendon/character.h"
#include "tendon/errors.h"

namespace tendon::ports {

struct VrmSkeleton {
  SkeletonSettings skeleton;
  // VRM humanoid bone name ("hips", "leftUpperArm", ...) -> skeleton bone index.
  std::vector<std::pair<std::string, int32_t>> humanoid;
};

Result<VrmSkeleton> LoadVrmSkeleton(const std::string& path);

}  // namespace tendon::ports
