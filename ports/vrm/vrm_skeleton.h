// ports/vrm/vrm_skeleton.h: the node hierarchy and humanoid bone map of a VRM (glTF binary)
// model, as a Tendon skeleton.
//
// What it does: the skeleton and humanoid map of ImportGltf (ports/gltf/gltf_import.h):
// every node reachable from the default scene becomes a bone (parents before children,
// depth first), with its rest local transform; VRM 0.x ("VRM") and 1.0 ("VRMC_vrm")
// humanoid bone names map to skeleton indices.
// What it does NOT do: anything else of the file (ImportGltf has skins, clips and springs).
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
