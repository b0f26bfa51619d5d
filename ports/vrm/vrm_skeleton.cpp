// ports/vrm/vrm_skeleton.cpp: GLB container (glTF 2.0 spec, "GLB File Format": a 12-byte
// header, then chunks of {uint32 length, uint32 type, data}; the first is JSON) -> nodes.
#include "ports/vrm/vrm_skeleton.h"

#include <cstdint>
#include <cstring>
#include <climits>
#include <fstream>
#include <iterator>

#include "ports/json/json.h"

namespace tendon::ports {
namespace {

Error Bad(const std::string& what) { return Error{ErrorCode::kOutOfRange, -1, "file", what}; }

uint32_t ReadU32(const std::string& bytes, std::size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);  // GLB is little-endian, as is every target here
  return v;
}

float F(const json::Value& v, std::size_t i, float fallback) {
  return v[i].IsNumber() ? v[i].Float() : fallback;
}

}  // namespace

Result<VrmSkeleton> LoadVrmSkeleton(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Bad(path + ": cannot be read");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 20 || bytes.compare(0, 4, "glTF") != 0) return Bad(path + ": not a GLB file (no glTF magic)");
  const uint32_t json_length = ReadU32(bytes, 12);
  if (ReadU32(bytes, 16) != 0x4E4F534Au || 20 + static_cast<std::size_t>(json_length) > bytes.size())
    return Bad(path + ": the first chunk is not a complete JSON chunk");
  const json::ParseResult parsed = json::Parse(std::string_view(bytes).substr(20, json_length));
  if (!parsed.ok) return Bad(path + ": " + parsed.error);
  const json::Value& gltf = parsed.value;
  const json::Value& nodes = gltf["nodes"];
  if (nodes.Size() > static_cast<std::size_t>(INT32_MAX)) return Bad(path + ": too many nodes");
  const auto node_count = static_cast<int32_t>(nodes.Size());
  // Every index is checked before it is used: integral, in range, or the file is refused.
  int32_t scene = 0;
  if (gltf.Has("scene") && !gltf["scene"].Int(0, static_cast<int32_t>(gltf["scenes"].Size()), &scene))
    return Bad(path + ": \"scene\" is not the index of a scene");
  const json::Value& roots = gltf["scenes"][static_cast<std::size_t>(scene)]["nodes"];
  VrmSkeleton out;
  std::vector<int32_t> bone_of_node(node_count, -1);
  // Depth first from the scene's roots: parents before children.
  std::vector<std::pair<int32_t, int32_t>> stack;  // (node, parent bone)
  for (std::size_t r = roots.Size(); r-- > 0;) {
    int32_t node = -1;
    if (!roots[r].Int(0, node_count, &node)) return Bad(path + ": a scene root is not the index of a node");
    stack.emplace_back(node, -1);
  }
  while (!stack.empty()) {
    const auto [node, parent] = stack.back();
    stack.pop_back();
    if (node < 0 || node >= node_count || bone_of_node[node] >= 0) return Bad(path + ": the node tree is not a tree");
    const json::Value& n = nodes[static_cast<std::size_t>(node)];
    if (n.Has("matrix")) return Bad(path + ": node " + std::to_string(node) + " is given as a matrix (not supported)");
    const auto bone = static_cast<int32_t>(out.skeleton.names.size());
    bone_of_node[node] = bone;
    std::string name = n["name"].String();
    if (name.empty()) name = "node" + std::to_string(node);
    out.skeleton.names.push_back(name);
    out.skeleton.parents.push_back(parent);
    const json::Value& t = n["translation"];
    const json::Value& q = n["rotation"];
    const json::Value& s = n["scale"];
    out.skeleton.rest_local.push_back(Transform{{F(t, 0, 0), F(t, 1, 0), F(t, 2, 0)},
                                                Normalize(Quat{F(q, 0, 0), F(q, 1, 0), F(q, 2, 0), F(q, 3, 1)}),
                                                {F(s, 0, 1), F(s, 1, 1), F(s, 2, 1)}});
    const json::Value& children = n["children"];
    for (std::size_t c = children.Size(); c-- > 0;) {
      int32_t child = -1;
      if (!children[c].Int(0, node_count, &child))
        return Bad(path + ": node " + std::to_string(node) + " has a child that is not the index of a node");
      stack.emplace_back(child, bone);
    }
  }
  auto add = [&](const std::string& bone_name, const json::Value& node_value) {
    int32_t node = -1;
    if (node_value.Int(0, node_count, &node) && bone_of_node[node] >= 0) out.humanoid.emplace_back(bone_name, bone_of_node[node]);
  };
  const json::Value& ext = gltf["extensions"];
  if (ext["VRM"].IsObject()) {  // VRM 0.x: humanBones is a list of {bone, node}
    const json::Value& bones = ext["VRM"]["humanoid"]["humanBones"];
    for (std::size_t i = 0; i < bones.Size(); ++i)
      add(bones[i]["bone"].String(), bones[i]["node"]);
  } else if (ext["VRMC_vrm"].IsObject()) {  // VRM 1.0: humanBones is an object {name: {node}}
    // The json reader keeps members in a map; walk the known names.
    static const char* kNames[] = {"hips", "spine", "chest", "upperChest", "neck", "head", "leftUpperLeg", "leftLowerLeg",
                                   "leftFoot", "leftToes", "rightUpperLeg", "rightLowerLeg", "rightFoot", "rightToes",
                                   "leftShoulder", "leftUpperArm", "leftLowerArm", "leftHand", "rightShoulder",
                                   "rightUpperArm", "rightLowerArm", "rightHand"};
    const json::Value& bones = ext["VRMC_vrm"]["humanoid"]["humanBones"];
    for (const char* name : kNames) add(name, bones[name]["node"]);
  }
  if (out.skeleton.names.empty()) return Bad(path + ": the scene has no nodes");
  return out;
}

}  // namespace tendon::ports
