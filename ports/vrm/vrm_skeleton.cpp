// ports/vrm/vrm_skeleton.cpp: the skeleton and humanoid map of a VRM model, from the glTF
// importer (ports/gltf/gltf_import.h).
#include "ports/vrm/vrm_skeleton.h"

#include "ports/gltf/gltf_import.h"

namespace tendon::ports {

Result<VrmSkeleton> LoadVrmSkeleton(const std::string& path) {
  Result<GltfAsset> imported = ImportGltf(path);
  if (!imported.ok()) return imported.error();
  VrmSkeleton out;
  out.skeleton = std::move(imported.value().skeleton);
  out.humanoid = std::move(imported.value().humanoid);
  return out;
}

}  // namespace tendon::ports
