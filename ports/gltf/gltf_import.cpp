// ports/gltf/gltf_import.cpp: see gltf_import.h. tinygltf parses; everything read from its
// model is checked here first, so a malformed file is an error that names where it is.
#include "ports/gltf/gltf_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "ports/gltf/tinygltf.h"
#include "ports/json/json.h"

namespace tendon::ports {

namespace {

using Json = tinygltf::Value;

// An error with the file and where in it.
struct Context {
  std::string file;
  Error Fail(const std::string& where, const std::string& why) const {
    return Error{ErrorCode::kBadReference, -1, where, file + ": " + where + ": " + why};
  }
};

bool Finite(double v) { return std::isfinite(v) && std::fabs(v) <= std::numeric_limits<float>::max(); }

// An index read from JSON: an integer in [0, count).
bool IndexIn(const Json& v, int32_t count, int32_t* out) {
  if (!v.IsNumber()) return false;
  const double d = v.GetNumberAsDouble();
  if (!(d >= 0 && d < count) || d != std::floor(d)) return false;
  *out = static_cast<int32_t>(d);
  return true;
}

// A number member (or the fallback when absent); false when present and not a finite number.
bool Number(const Json& object, const char* key, float fallback, float* out) {
  if (!object.IsObject() || !object.Has(key)) {
    *out = fallback;
    return true;
  }
  const Json& v = object.Get(key);
  if (!v.IsNumber() || !Finite(v.GetNumberAsDouble())) return false;
  *out = static_cast<float>(v.GetNumberAsDouble());
  return true;
}

// A vector member: an array [x, y, z] (VRM 1.0) or an object {x, y, z} (VRM 0.x).
bool Vector(const Json& object, const char* key, Vec3 fallback, Vec3* out) {
  if (!object.IsObject() || !object.Has(key)) {
    *out = fallback;
    return true;
  }
  const Json& v = object.Get(key);
  float c[3];
  if (v.IsArray()) {
    if (v.ArrayLen() != 3) return false;
    for (int i = 0; i < 3; ++i) {
      if (!v.Get(i).IsNumber() || !Finite(v.Get(i).GetNumberAsDouble())) return false;
      c[i] = static_cast<float>(v.Get(i).GetNumberAsDouble());
    }
  } else if (v.IsObject()) {
    const char* names[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; ++i)
      if (!Number(v, names[i], 0.0f, &c[i])) return false;
  } else {
    return false;
  }
  *out = Vec3{c[0], c[1], c[2]};
  return true;
}

std::string At(const std::string& base, std::size_t i) { return base + "[" + std::to_string(i) + "]"; }

// The floats of an accessor, checked against its buffer view and buffer: float components
// only, `components` of them per element.
Error ReadFloats(const Context& cx, const tinygltf::Model& m, int accessor, int components, std::vector<float>* out,
                 const std::string& where) {
  if (accessor < 0 || accessor >= static_cast<int>(m.accessors.size()))
    return cx.Fail(where, "accessor " + std::to_string(accessor) + " does not exist");
  const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(accessor)];
  const std::string here = At("accessors", static_cast<std::size_t>(accessor));
  if (a.componentType != TINYGLTF_COMPONENT_TYPE_FLOAT) return cx.Fail(here, "only float accessors are read here");
  if (tinygltf::GetNumComponentsInType(static_cast<uint32_t>(a.type)) != components)
    return cx.Fail(here, "has " + std::to_string(tinygltf::GetNumComponentsInType(static_cast<uint32_t>(a.type))) +
                             " components per element, " + std::to_string(components) + " expected");
  if (a.sparse.isSparse) return cx.Fail(here, "sparse accessors are not supported");
  if (a.count > static_cast<std::size_t>(kMaxGltfAccessorCount)) return cx.Fail(here, "count is too large");
  if (a.bufferView < 0 || a.bufferView >= static_cast<int>(m.bufferViews.size()))
    return cx.Fail(here, "bufferView " + std::to_string(a.bufferView) + " does not exist");
  const tinygltf::BufferView& view = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
  if (view.buffer < 0 || view.buffer >= static_cast<int>(m.buffers.size()))
    return cx.Fail(here, "its buffer view's buffer does not exist");
  const std::vector<unsigned char>& data = m.buffers[static_cast<std::size_t>(view.buffer)].data;
  const std::size_t element = static_cast<std::size_t>(components) * sizeof(float);
  const std::size_t stride = view.byteStride == 0 ? element : view.byteStride;
  if (stride < element) return cx.Fail(here, "its byte stride is shorter than an element");
  if (view.byteOffset > data.size() || view.byteLength > data.size() - view.byteOffset)
    return cx.Fail(here, "its buffer view does not fit its buffer");
  if (a.count > 0 && (a.byteOffset > view.byteLength || (a.count - 1) > (view.byteLength - a.byteOffset) / stride ||
                      (a.count - 1) * stride + element > view.byteLength - a.byteOffset))
    return cx.Fail(here, "its " + std::to_string(a.count) + " elements do not fit its buffer view");
  out->resize(a.count * static_cast<std::size_t>(components));
  const unsigned char* base = data.data() + view.byteOffset + a.byteOffset;
  for (std::size_t i = 0; i < a.count; ++i) std::memcpy(out->data() + i * components, base + i * stride, element);
  for (float f : *out)
    if (!std::isfinite(f)) return cx.Fail(here, "holds a value that is not finite");
  return {};
}

Quat FromMatrix(const float r[3][3]) {
  // Shepperd's method on the rotation (columns already divided by the scales).
  const float trace = r[0][0] + r[1][1] + r[2][2];
  Quat q;
  if (trace > 0) {
    const float s = std::sqrt(trace + 1.0f) * 2.0f;
    q = {(r[1][2] - r[2][1]) / s, (r[2][0] - r[0][2]) / s, (r[0][1] - r[1][0]) / s, 0.25f * s};
  } else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
    const float s = std::sqrt(1.0f + r[0][0] - r[1][1] - r[2][2]) * 2.0f;
    q = {0.25f * s, (r[1][0] + r[0][1]) / s, (r[2][0] + r[0][2]) / s, (r[1][2] - r[2][1]) / s};
  } else if (r[1][1] > r[2][2]) {
    const float s = std::sqrt(1.0f + r[1][1] - r[0][0] - r[2][2]) * 2.0f;
    q = {(r[1][0] + r[0][1]) / s, 0.25f * s, (r[2][1] + r[1][2]) / s, (r[2][0] - r[0][2]) / s};
  } else {
    const float s = std::sqrt(1.0f + r[2][2] - r[0][0] - r[1][1]) * 2.0f;
    q = {(r[2][0] + r[0][2]) / s, (r[2][1] + r[1][2]) / s, 0.25f * s, (r[0][1] - r[1][0]) / s};
  }
  return Normalize(q);
}

Error NodeTransform(const Context& cx, const tinygltf::Node& n, std::size_t index, Transform* out) {
  const std::string here = At("nodes", index);
  auto finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double d) { return Finite(d); });
  };
  if (!n.matrix.empty()) {
    if (n.matrix.size() != 16 || !finite(n.matrix)) return cx.Fail(here + ".matrix", "is not 16 finite numbers");
    float col[3][3];
    Vec3 scale;
    for (int c = 0; c < 3; ++c) {
      const Vec3 axis{static_cast<float>(n.matrix[c * 4]), static_cast<float>(n.matrix[c * 4 + 1]),
                      static_cast<float>(n.matrix[c * 4 + 2])};
      const float len = Length(axis);
      if (!(len > 1e-12f)) return cx.Fail(here + ".matrix", "has a zero scale");
      (c == 0 ? scale.x : (c == 1 ? scale.y : scale.z)) = len;
      col[c][0] = axis.x / len, col[c][1] = axis.y / len, col[c][2] = axis.z / len;
    }
    *out = Transform{{static_cast<float>(n.matrix[12]), static_cast<float>(n.matrix[13]), static_cast<float>(n.matrix[14])},
                     FromMatrix(col), scale};
    return {};
  }
  if ((!n.translation.empty() && n.translation.size() != 3) || !finite(n.translation))
    return cx.Fail(here + ".translation", "is not 3 finite numbers");
  if ((!n.rotation.empty() && n.rotation.size() != 4) || !finite(n.rotation))
    return cx.Fail(here + ".rotation", "is not 4 finite numbers");
  if ((!n.scale.empty() && n.scale.size() != 3) || !finite(n.scale)) return cx.Fail(here + ".scale", "is not 3 finite numbers");
  Transform t;
  if (!n.translation.empty())
    t.translation = {static_cast<float>(n.translation[0]), static_cast<float>(n.translation[1]), static_cast<float>(n.translation[2])};
  if (!n.rotation.empty()) {
    const Quat q{static_cast<float>(n.rotation[0]), static_cast<float>(n.rotation[1]), static_cast<float>(n.rotation[2]),
                 static_cast<float>(n.rotation[3])};
    const float len2 = Dot(q, q);
    if (!(len2 > 0.25f && len2 < 4.0f)) return cx.Fail(here + ".rotation", "is far from a unit quaternion");
    t.rotation = Normalize(q);
  }
  if (!n.scale.empty()) t.scale = {static_cast<float>(n.scale[0]), static_cast<float>(n.scale[1]), static_cast<float>(n.scale[2])};
  *out = t;
  return {};
}

// A node's world transform (its rest locals composed from the root) within the bounds of
// gltf_import.h: finite, every translation component within kMaxGltfWorldTranslation and
// every scale component within kMaxGltfWorldScale.
Error CheckWorld(const Context& cx, const Transform& w, const tinygltf::Node& n, std::size_t index) {
  const std::string here = At("nodes", index) + (n.name.empty() ? "" : " (\"" + n.name + "\")");
  auto refuse = [&](const std::string& why) {  // field: the element; message: with its name
    Error e = cx.Fail(here, why);
    e.field = At("nodes", index);
    return e;
  };
  const float t[3] = {w.translation.x, w.translation.y, w.translation.z};
  const float sc[3] = {w.scale.x, w.scale.y, w.scale.z};
  const float q[4] = {w.rotation.x, w.rotation.y, w.rotation.z, w.rotation.w};
  for (float v : q)
    if (!std::isfinite(v)) return refuse("its world rotation (its locals composed from the root) is not finite");
  for (float v : t)
    if (!(std::fabs(v) <= kMaxGltfWorldTranslation))
      return refuse("its world translation (its locals composed from the root) has a component of " + std::to_string(v) +
                               " m, past the " + std::to_string(static_cast<int64_t>(kMaxGltfWorldTranslation)) +
                               " m a model may span");
  for (float v : sc)
    if (!(std::fabs(v) <= kMaxGltfWorldScale))
      return refuse("its world scale (its locals composed from the root) has a component of " + std::to_string(v) +
                               ", past the " + std::to_string(static_cast<int64_t>(kMaxGltfWorldScale)) + " a model may have");
  return {};
}

// Every node reachable from the scene, depth first in child order: parents first.
Error ReadSkeleton(const Context& cx, const tinygltf::Model& m, GltfAsset* asset) {
  if (m.nodes.size() > static_cast<std::size_t>(kMaxGltfNodes)) return cx.Fail("nodes", "has too many nodes");
  const auto node_count = static_cast<int32_t>(m.nodes.size());
  asset->bone_of_node.assign(m.nodes.size(), -1);
  std::vector<int> roots;
  if (!m.scenes.empty()) {
    const int scene = m.defaultScene >= 0 ? m.defaultScene : 0;
    if (scene >= static_cast<int>(m.scenes.size())) return cx.Fail("scene", "is not the index of a scene");
    roots = m.scenes[static_cast<std::size_t>(scene)].nodes;
  } else {
    // No scene: every node that is nobody's child is a root.
    std::vector<char> child(m.nodes.size(), 0);
    for (const tinygltf::Node& n : m.nodes)
      for (int c : n.children)
        if (c >= 0 && c < node_count) child[static_cast<std::size_t>(c)] = 1;
    for (int i = 0; i < node_count; ++i)
      if (!child[static_cast<std::size_t>(i)]) roots.push_back(i);
  }
  std::vector<std::pair<int32_t, int32_t>> stack;  // (node, parent bone)
  for (std::size_t r = roots.size(); r-- > 0;) {
    if (roots[r] < 0 || roots[r] >= node_count) return cx.Fail(At("scenes.nodes", r), "is not the index of a node");
    stack.emplace_back(roots[r], -1);
  }
  SkeletonSettings& s = asset->skeleton;
  std::vector<Transform> world;  // per bone, composed from the root (parents come first)
  while (!stack.empty()) {
    const auto [node, parent] = stack.back();
    stack.pop_back();
    if (asset->bone_of_node[static_cast<std::size_t>(node)] >= 0)
      return cx.Fail(At("nodes", static_cast<std::size_t>(node)), "is reached twice: the node graph is not a tree");
    const tinygltf::Node& n = m.nodes[static_cast<std::size_t>(node)];
    Transform rest;
    if (Error e = NodeTransform(cx, n, static_cast<std::size_t>(node), &rest); e.code != ErrorCode::kNone) return e;
    // Each local is finite, but their composition may not be (a root scaled 1e30 with a
    // child 1e10 away, or 3e38 + 3e38): everything downstream (binding, the character, the
    // chains) composes these, so a world transform past the bounds is refused here, by node.
    world.push_back(parent >= 0 ? Compose(world[static_cast<std::size_t>(parent)], rest) : rest);
    if (Error e = CheckWorld(cx, world.back(), n, static_cast<std::size_t>(node)); e.code != ErrorCode::kNone) return e;
    const auto bone = static_cast<int32_t>(s.names.size());
    asset->bone_of_node[static_cast<std::size_t>(node)] = bone;
    s.names.push_back(n.name.empty() ? "node" + std::to_string(node) : n.name);
    s.parents.push_back(parent);
    s.rest_local.push_back(rest);
    for (std::size_t c = n.children.size(); c-- > 0;) {
      if (n.children[c] < 0 || n.children[c] >= node_count)
        return cx.Fail(At(At("nodes", static_cast<std::size_t>(node)) + ".children", c), "is not the index of a node");
      stack.emplace_back(n.children[c], bone);
    }
  }
  if (s.names.empty()) return cx.Fail("scenes", "the scene has no nodes");
  return {};
}

// A node reference in an extension: it must be a node of the scene.
bool Bone(const GltfAsset& a, const Json& v, int32_t* bone) {
  int32_t node = -1;
  if (!IndexIn(v, static_cast<int32_t>(a.bone_of_node.size()), &node)) return false;
  *bone = a.bone_of_node[static_cast<std::size_t>(node)];
  return *bone >= 0;
}

Error ReadSkins(const Context& cx, const tinygltf::Model& m, GltfAsset* a) {
  for (std::size_t i = 0; i < m.skins.size(); ++i) {
    const tinygltf::Skin& skin = m.skins[i];
    GltfSkin out;
    out.name = skin.name;
    for (std::size_t j = 0; j < skin.joints.size(); ++j) {
      const int node = skin.joints[j];
      if (node < 0 || node >= static_cast<int>(a->bone_of_node.size()) || a->bone_of_node[static_cast<std::size_t>(node)] < 0)
        return cx.Fail(At(At("skins", i) + ".joints", j), "is not a node of the scene");
      out.joints.push_back(a->bone_of_node[static_cast<std::size_t>(node)]);
    }
    if (skin.inverseBindMatrices >= 0) {
      std::vector<float> m16;
      if (Error e = ReadFloats(cx, m, skin.inverseBindMatrices, 16, &m16, At("skins", i) + ".inverseBindMatrices");
          e.code != ErrorCode::kNone)
        return e;
      if (m16.size() != out.joints.size() * 16)
        return cx.Fail(At("skins", i) + ".inverseBindMatrices", "does not hold one matrix per joint");
      out.inverse_bind.resize(out.joints.size());
      for (std::size_t j = 0; j < out.joints.size(); ++j) std::copy_n(m16.data() + j * 16, 16, out.inverse_bind[j].begin());
    } else {
      out.inverse_bind.assign(out.joints.size(), std::array<float, 16>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
    }
    a->skins.push_back(std::move(out));
  }
  return {};
}

Error ReadClips(const Context& cx, const tinygltf::Model& m, GltfAsset* a) {
  for (std::size_t i = 0; i < m.animations.size(); ++i) {
    const tinygltf::Animation& anim = m.animations[i];
    GltfClip clip;
    clip.name = anim.name.empty() ? "clip" + std::to_string(i) : anim.name;
    for (std::size_t c = 0; c < anim.channels.size(); ++c) {
      const tinygltf::AnimationChannel& ch = anim.channels[c];
      const std::string here = At(At("animations", i) + ".channels", c);
      if (ch.target_node < 0) continue;  // a channel on something else (an extension's target)
      if (ch.target_node >= static_cast<int>(a->bone_of_node.size()) || a->bone_of_node[static_cast<std::size_t>(ch.target_node)] < 0)
        return cx.Fail(here + ".target.node", "is not a node of the scene");
      if (ch.sampler < 0 || ch.sampler >= static_cast<int>(anim.samplers.size()))
        return cx.Fail(here + ".sampler", "is not the index of a sampler");
      const tinygltf::AnimationSampler& sm = anim.samplers[static_cast<std::size_t>(ch.sampler)];
      const std::string sampler = At(At("animations", i) + ".samplers", static_cast<std::size_t>(ch.sampler));
      GltfChannel out;
      out.bone = a->bone_of_node[static_cast<std::size_t>(ch.target_node)];
      if (ch.target_path == "translation") out.path = GltfChannelPath::kTranslation, out.components = 3;
      else if (ch.target_path == "rotation") out.path = GltfChannelPath::kRotation, out.components = 4;
      else if (ch.target_path == "scale") out.path = GltfChannelPath::kScale, out.components = 3;
      else if (ch.target_path == "weights") out.path = GltfChannelPath::kWeights, out.components = 1;
      else return cx.Fail(here + ".target.path", "\"" + ch.target_path + "\" is not a glTF channel path");
      if (sm.interpolation == "STEP") out.interpolation = GltfInterpolation::kStep;
      else if (sm.interpolation == "CUBICSPLINE") out.interpolation = GltfInterpolation::kCubicSpline;
      else if (sm.interpolation == "LINEAR" || sm.interpolation.empty()) out.interpolation = GltfInterpolation::kLinear;
      else return cx.Fail(sampler + ".interpolation", "\"" + sm.interpolation + "\" is not a glTF interpolation");
      if (Error e = ReadFloats(cx, m, sm.input, 1, &out.times, sampler + ".input"); e.code != ErrorCode::kNone) return e;
      const std::size_t keys = out.times.size();
      if (keys == 0) return cx.Fail(sampler + ".input", "has no keys");
      for (std::size_t k = 1; k < keys; ++k)
        if (!(out.times[k] >= out.times[k - 1])) return cx.Fail(sampler + ".input", "key times decrease");
      // Weights: the output holds one value per morph target per key; infer the count.
      std::vector<float> values;
      const tinygltf::Accessor* output =
          sm.output >= 0 && sm.output < static_cast<int>(m.accessors.size()) ? &m.accessors[static_cast<std::size_t>(sm.output)] : nullptr;
      if (out.path == GltfChannelPath::kWeights && output != nullptr) {
        const std::size_t per = (out.interpolation == GltfInterpolation::kCubicSpline ? 3 : 1) * keys;
        if (output->count % per != 0 || output->count == 0) return cx.Fail(sampler + ".output", "does not hold whole keys");
        out.components = static_cast<int32_t>(output->count / per);
      }
      if (Error e = ReadFloats(cx, m, sm.output, out.path == GltfChannelPath::kWeights ? 1 : out.components, &values,
                               sampler + ".output");
          e.code != ErrorCode::kNone)
        return e;
      const std::size_t expected = keys * static_cast<std::size_t>(out.components) *
                                   (out.interpolation == GltfInterpolation::kCubicSpline ? 3u : 1u);
      if (values.size() != expected)
        return cx.Fail(sampler + ".output", "holds " + std::to_string(values.size()) + " floats; " + std::to_string(expected) +
                                                " expected for its input's keys");
      out.values = std::move(values);
      clip.duration = std::max(clip.duration, out.times.back());
      clip.channels.push_back(std::move(out));
    }
    a->clips.push_back(std::move(clip));
  }
  return {};
}

Error ReadHumanoid(const Context& cx, const Json& ext, GltfAsset* a) {
  if (a->vrm == VrmVersion::k0x) {
    const Json& bones = ext.Get("VRM").Get("humanoid").Get("humanBones");
    if (!bones.IsArray()) return {};
    for (std::size_t i = 0; i < bones.ArrayLen(); ++i) {
      const Json& b = bones.Get(static_cast<int>(i));
      int32_t bone = -1;
      if (!b.Get("bone").IsString() || !Bone(*a, b.Get("node"), &bone))
        return cx.Fail(At("extensions.VRM.humanoid.humanBones", i), "needs a bone name and a node of the scene");
      a->humanoid.emplace_back(b.Get("bone").Get<std::string>(), bone);
    }
  } else if (a->vrm == VrmVersion::k1) {
    const Json& bones = ext.Get("VRMC_vrm").Get("humanoid").Get("humanBones");
    if (!bones.IsObject()) return {};
    for (const std::string& name : bones.Keys()) {
      int32_t bone = -1;
      if (!Bone(*a, bones.Get(name).Get("node"), &bone))
        return cx.Fail("extensions.VRMC_vrm.humanoid.humanBones." + name + ".node", "is not a node of the scene");
      a->humanoid.emplace_back(name, bone);
    }
  }
  return {};
}

// A list of indices into something `count` long ("colliderGroups": [0, 2]).
Error ReadIndices(const Context& cx, const Json& list, std::size_t count, const std::string& where, const char* what,
                  std::vector<int32_t>* out) {
  for (std::size_t k = 0; list.IsArray() && k < list.ArrayLen(); ++k) {
    int32_t index = -1;
    if (!IndexIn(list.Get(static_cast<int>(k)), static_cast<int32_t>(count), &index))
      return cx.Fail(At(where, k), std::string("is not the index of ") + what);
    out->push_back(index);
  }
  return {};
}

// VRM 0.x: secondaryAnimation's colliderGroups (spheres on a node, offsets z-negated) and
// boneGroups (every node under each root is a joint; its tail is its first child, or a
// 7 cm virtual tip along a leaf). A bone is simulated once, by the first root that reaches
// it (groups in file order, roots in order, depth first); see gltf_import.h.
Error ReadSprings0x(const Context& cx, const Json& sa, GltfAsset* a) {
  VrmSpringBones& out = a->spring_bones;
  const std::string base = "extensions.VRM.secondaryAnimation";
  const Json& groups = sa.Get("colliderGroups");
  for (std::size_t g = 0; groups.IsArray() && g < groups.ArrayLen(); ++g) {
    const Json& group = groups.Get(static_cast<int>(g));
    const std::string here = At(base + ".colliderGroups", g);
    int32_t bone = -1;
    if (!Bone(*a, group.Get("node"), &bone)) return cx.Fail(here + ".node", "is not a node of the scene");
    VrmColliderGroup vg;
    const Json& colliders = group.Get("colliders");
    for (std::size_t c = 0; colliders.IsArray() && c < colliders.ArrayLen(); ++c) {
      const Json& col = colliders.Get(static_cast<int>(c));
      VrmCollider vc;
      vc.bone = bone;
      if (!Vector(col, "offset", Vec3{}, &vc.offset) || !Number(col, "radius", 0.0f, &vc.radius) || vc.radius < 0)
        return cx.Fail(At(here + ".colliders", c), "needs a finite offset and a radius >= 0");
      vc.offset.z = -vc.offset.z;  // 0.x stores collider offsets z-flipped (UniVRM)
      vg.colliders.push_back(static_cast<int32_t>(out.colliders.size()));
      out.colliders.push_back(vc);
    }
    out.collider_groups.push_back(std::move(vg));
  }
  const Json& bone_groups = sa.Get("boneGroups");
  const SkeletonSettings& s = a->skeleton;
  std::vector<std::vector<int32_t>> children(s.names.size());
  for (std::size_t b = 0; b < s.parents.size(); ++b)
    if (s.parents[b] >= 0) children[static_cast<std::size_t>(s.parents[b])].push_back(static_cast<int32_t>(b));
  // Files that list a bone under two roots (a group that names every bone of a strand as a
  // root, or two groups on one strand) are common; three-vrm and UniVRM simulate them, but
  // a bone written by two joints has no single answer, and two chain nodes on one bone
  // cannot bind. The first root that reaches a bone simulates it.
  std::vector<char> simulated(s.names.size(), 0);
  for (std::size_t g = 0; bone_groups.IsArray() && g < bone_groups.ArrayLen(); ++g) {
    const Json& group = bone_groups.Get(static_cast<int>(g));
    const std::string here = At(base + ".boneGroups", g);
    VrmJoint settings;
    Vec3 gravity_dir;
    if (!Number(group, "stiffiness", 1.0f, &settings.stiffness) || !Number(group, "gravityPower", 0.0f, &settings.gravity_power) ||
        !Number(group, "dragForce", 0.4f, &settings.drag_force) || !Number(group, "hitRadius", 0.0f, &settings.hit_radius) ||
        !Vector(group, "gravityDir", Vec3{0, -1, 0}, &gravity_dir))
      return cx.Fail(here, "stiffiness, gravityPower, dragForce, hitRadius and gravityDir must be finite numbers");
    settings.gravity_dir = gravity_dir;
    VrmSpring spring;
    spring.name = group.Get("comment").IsString() ? group.Get("comment").Get<std::string>() : "boneGroup" + std::to_string(g);
    if (group.Has("center") && group.Get("center").IsNumber() && group.Get("center").GetNumberAsDouble() >= 0 &&
        !Bone(*a, group.Get("center"), &spring.center))
      return cx.Fail(here + ".center", "is not a node of the scene");
    if (Error e = ReadIndices(cx, group.Get("colliderGroups"), out.collider_groups.size(), here + ".colliderGroups",
                              "a collider group", &spring.collider_groups);
        e.code != ErrorCode::kNone)
      return e;
    const Json& roots = group.Get("bones");
    for (std::size_t r = 0; roots.IsArray() && r < roots.ArrayLen(); ++r) {
      int32_t root = -1;
      if (!Bone(*a, roots.Get(static_cast<int>(r)), &root)) return cx.Fail(At(here + ".bones", r), "is not a node of the scene");
      if (simulated[static_cast<std::size_t>(root)]) continue;  // reached before, with its subtree
      // The subtree, parents first (bones already are: a node's descendants follow it).
      std::vector<std::pair<int32_t, int32_t>> stack{{root, -1}};  // (bone, parent joint)
      while (!stack.empty()) {
        const auto [bone, parent] = stack.back();
        stack.pop_back();
        simulated[static_cast<std::size_t>(bone)] = 1;
        VrmJoint j = settings;
        j.bone = bone;
        j.parent = parent;
        const std::vector<int32_t>& kids = children[static_cast<std::size_t>(bone)];
        if (kids.empty()) {
          const Vec3 t = s.rest_local[static_cast<std::size_t>(bone)].translation;
          j.virtual_tip = NormalizeOr(t, Vec3{0, 1, 0}) * 0.07f;  // UniVRM's and three-vrm's leaf tip
        } else if (simulated[static_cast<std::size_t>(kids.front())]) {
          // The tail bone is an earlier root's (this root is its ancestor): the tail stays
          // where that bone rests, as a virtual tip, so no bone is a node of two chains.
          j.virtual_tip = s.rest_local[static_cast<std::size_t>(kids.front())].translation;
        } else {
          j.tail_bone = kids.front();
        }
        const auto joint = static_cast<int32_t>(spring.joints.size());
        spring.joints.push_back(j);
        for (std::size_t c = kids.size(); c-- > 0;)
          if (!simulated[static_cast<std::size_t>(kids[c])]) stack.emplace_back(kids[c], joint);
      }
    }
    out.springs.push_back(std::move(spring));
  }
  return {};
}

// VRM 1.0: VRMC_springBone's colliders (sphere or capsule, or the extended collider's
// plane and inside shapes), colliderGroups and springs (joint lists, root first).
Error ReadSprings1(const Context& cx, const Json& sb, GltfAsset* a) {
  VrmSpringBones& out = a->spring_bones;
  const std::string base = "extensions.VRMC_springBone";
  const Json& colliders = sb.Get("colliders");
  for (std::size_t c = 0; colliders.IsArray() && c < colliders.ArrayLen(); ++c) {
    const Json& col = colliders.Get(static_cast<int>(c));
    const std::string here = At(base + ".colliders", c);
    VrmCollider vc;
    if (!Bone(*a, col.Get("node"), &vc.bone)) return cx.Fail(here + ".node", "is not a node of the scene");
    const Json& extended = col.Get("extensions").Get("VRMC_springBone_extended_collider").Get("shape");
    const bool use_extended = extended.IsObject();
    const Json& shape = use_extended ? extended : col.Get("shape");
    bool ok = true;
    if (shape.Has("sphere")) {
      const Json& sp = shape.Get("sphere");
      vc.shape = VrmColliderShape::kSphere;
      ok = Vector(sp, "offset", Vec3{}, &vc.offset) && Number(sp, "radius", 0.0f, &vc.radius);
      vc.inside = sp.Get("inside").IsBool() && sp.Get("inside").Get<bool>();
    } else if (shape.Has("capsule")) {
      const Json& cp = shape.Get("capsule");
      vc.shape = VrmColliderShape::kCapsule;
      ok = Vector(cp, "offset", Vec3{}, &vc.offset) && Number(cp, "radius", 0.0f, &vc.radius) &&
           Vector(cp, "tail", Vec3{}, &vc.tail);
      vc.inside = cp.Get("inside").IsBool() && cp.Get("inside").Get<bool>();
    } else if (use_extended && shape.Has("plane")) {
      const Json& pl = shape.Get("plane");
      vc.shape = VrmColliderShape::kPlane;
      ok = Vector(pl, "offset", Vec3{}, &vc.offset) && Vector(pl, "normal", Vec3{0, 0, 1}, &vc.normal);
      if (ok && !(Length(vc.normal) > 1e-6f)) return cx.Fail(here, "the plane's normal is zero");
      vc.normal = NormalizeOr(vc.normal, Vec3{0, 0, 1});
    } else {
      return cx.Fail(here + ".shape", "is neither a sphere nor a capsule (nor an extended plane)");
    }
    if (!ok || vc.radius < 0) return cx.Fail(here + ".shape", "needs finite offsets and a radius >= 0");
    out.colliders.push_back(vc);
  }
  const Json& groups = sb.Get("colliderGroups");
  for (std::size_t g = 0; groups.IsArray() && g < groups.ArrayLen(); ++g) {
    const Json& group = groups.Get(static_cast<int>(g));
    VrmColliderGroup vg;
    vg.name = group.Get("name").IsString() ? group.Get("name").Get<std::string>() : "";
    if (Error e = ReadIndices(cx, group.Get("colliders"), out.colliders.size(), At(base + ".colliderGroups", g) + ".colliders",
                              "a collider", &vg.colliders);
        e.code != ErrorCode::kNone)
      return e;
    out.collider_groups.push_back(std::move(vg));
  }
  const Json& springs = sb.Get("springs");
  for (std::size_t i = 0; springs.IsArray() && i < springs.ArrayLen(); ++i) {
    const Json& sp = springs.Get(static_cast<int>(i));
    const std::string here = At(base + ".springs", i);
    VrmSpring spring;
    spring.name = sp.Get("name").IsString() ? sp.Get("name").Get<std::string>() : "spring" + std::to_string(i);
    if (sp.Has("center") && !Bone(*a, sp.Get("center"), &spring.center)) return cx.Fail(here + ".center", "is not a node of the scene");
    if (Error e = ReadIndices(cx, sp.Get("colliderGroups"), out.collider_groups.size(), here + ".colliderGroups",
                              "a collider group", &spring.collider_groups);
        e.code != ErrorCode::kNone)
      return e;
    const Json& joints = sp.Get("joints");
    if (!joints.IsArray() || joints.ArrayLen() < 2) return cx.Fail(here + ".joints", "needs at least two joints (a bone and its tail)");
    // Each joint but the last is simulated; its tail is the next joint's node (the last
    // node is only a tail). The nodes must form a chain down the skeleton.
    std::vector<int32_t> bones(joints.ArrayLen());
    for (std::size_t j = 0; j < joints.ArrayLen(); ++j)
      if (!Bone(*a, joints.Get(static_cast<int>(j)).Get("node"), &bones[j]))
        return cx.Fail(At(here + ".joints", j) + ".node", "is not a node of the scene");
    for (std::size_t j = 0; j + 1 < bones.size(); ++j) {
      const Json& jt = joints.Get(static_cast<int>(j));
      const std::string where = At(here + ".joints", j);
      if (a->skeleton.parents[static_cast<std::size_t>(bones[j + 1])] != bones[j])
        return cx.Fail(At(here + ".joints", j + 1) + ".node", "is not a child of the joint before it");
      VrmJoint vj;
      vj.bone = bones[j];
      vj.parent = static_cast<int32_t>(j) - 1;
      vj.tail_bone = bones[j + 1];
      if (!Number(jt, "hitRadius", 0.0f, &vj.hit_radius) || !Number(jt, "stiffness", 1.0f, &vj.stiffness) ||
          !Number(jt, "gravityPower", 0.0f, &vj.gravity_power) || !Number(jt, "dragForce", 0.5f, &vj.drag_force) ||
          !Vector(jt, "gravityDir", Vec3{0, -1, 0}, &vj.gravity_dir))
        return cx.Fail(where, "hitRadius, stiffness, gravityPower, dragForce and gravityDir must be finite numbers");
      spring.joints.push_back(vj);
    }
    out.springs.push_back(std::move(spring));
  }
  return {};
}

// tinygltf drops an integer array with a non-integer entry ("children": [0.5]) without a
// word, so the index arrays it reads leniently are checked on the JSON itself first.
Error CheckIndexArrays(const Context& cx, const nlohmann::json& j) {
  if (!j.is_object()) return {};  // tinygltf has said what is wrong
  auto check = [&](const nlohmann::json& list, const std::string& where) -> Error {
    if (!list.is_array()) return cx.Fail(where, "is not an array of indices");
    for (std::size_t k = 0; k < list.size(); ++k)
      if (!list[k].is_number_integer() && !list[k].is_number_unsigned()) return cx.Fail(At(where, k), "is not an integer index");
    return {};
  };
  for (const char* kind : {"nodes", "skins", "scenes"}) {
    const char* member = std::strcmp(kind, "nodes") == 0 ? "children" : (std::strcmp(kind, "skins") == 0 ? "joints" : "nodes");
    const auto it = j.find(kind);
    if (it == j.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < it->size(); ++i) {
      const nlohmann::json& e = (*it)[i];
      if (e.is_object() && e.contains(member))
        if (Error err = check(e[member], At(kind, i) + "." + member); err.code != ErrorCode::kNone) return err;
    }
  }
  return {};
}

bool SkipImages(tinygltf::Image*, const int, std::string*, std::string*, int, int, const unsigned char*, int, void*) {
  return true;  // images are never decoded: Tendon reads no textures
}

Result<GltfAsset> Convert(const Context& cx, const tinygltf::Model& m) {
  GltfAsset a;
  a.name = cx.file;
  if (Error e = ReadSkeleton(cx, m, &a); e.code != ErrorCode::kNone) return e;
  if (Error e = ReadSkins(cx, m, &a); e.code != ErrorCode::kNone) return e;
  if (Error e = ReadClips(cx, m, &a); e.code != ErrorCode::kNone) return e;
  const Json ext = m.extensions.empty() ? Json() : Json(m.extensions);
  if (ext.Has("VRM")) a.vrm = VrmVersion::k0x;
  else if (ext.Has("VRMC_vrm") || ext.Has("VRMC_springBone")) a.vrm = VrmVersion::k1;
  if (Error e = ReadHumanoid(cx, ext, &a); e.code != ErrorCode::kNone) return e;
  if (a.vrm == VrmVersion::k0x && ext.Get("VRM").Get("secondaryAnimation").IsObject()) {
    if (Error e = ReadSprings0x(cx, ext.Get("VRM").Get("secondaryAnimation"), &a); e.code != ErrorCode::kNone) return e;
  } else if (ext.Get("VRMC_springBone").IsObject()) {
    if (Error e = ReadSprings1(cx, ext.Get("VRMC_springBone"), &a); e.code != ErrorCode::kNone) return e;
  }
  return a;
}

}  // namespace

namespace {

constexpr uint32_t kGlbMagic = 0x46546C67u;      // "glTF"
constexpr uint32_t kGlbJsonChunk = 0x4E4F534Au;  // "JSON"
constexpr uint32_t kGlbBinChunk = 0x004E4942u;   // "BIN\0"

uint32_t U32(std::span<const uint8_t> bytes, std::size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);  // GLB is little-endian, as every platform Tendon builds on
  return v;
}

// The GLB container checked before tinygltf sees it (tinygltf says only "Invalid glTF
// binary"): the header's length against the bytes there are, then each chunk's length
// against what follows it. On success *used is the header's length (bytes past it are not
// part of the file).
Error CheckGlb(const Context& cx, std::span<const uint8_t> bytes, std::size_t* used) {
  const std::size_t size = bytes.size();
  auto truncated = [&](const std::string& what, std::size_t expected, std::size_t actual) {
    return cx.Fail("glb", "is truncated: " + what + " needs " + std::to_string(expected) + " bytes, " + std::to_string(actual) +
                              " are there");
  };
  if (size < 12) return truncated("the 12-byte header", 12, size);
  if (U32(bytes, 4) != 2) return cx.Fail("glb", "is binary glTF version " + std::to_string(U32(bytes, 4)) + "; only 2 is read");
  const std::size_t length = U32(bytes, 8);
  if (length > size) return truncated("the length in its header", length, size);
  if (length < 20) return truncated("a header and a JSON chunk header", 20, length);
  const std::size_t json_length = U32(bytes, 12);
  if (U32(bytes, 16) != kGlbJsonChunk) return cx.Fail("glb", "its first chunk is not the JSON chunk");
  if (json_length > length - 20) return truncated("the JSON chunk (at byte 20)", json_length, length - 20);
  const std::size_t bin_at = 20 + json_length;
  if (bin_at < length) {
    if (length - bin_at < 8) return truncated("the second chunk's header (at byte " + std::to_string(bin_at) + ")", 8, length - bin_at);
    const std::size_t bin_length = U32(bytes, bin_at);
    if (U32(bytes, bin_at + 4) == kGlbBinChunk && bin_length > length - bin_at - 8)
      return truncated("the BIN chunk (at byte " + std::to_string(bin_at + 8) + ")", bin_length, length - bin_at - 8);
  }
  *used = length;
  return {};
}

// tinygltf's file access (external buffers of a .gltf) through json::ReadFile: its own
// reads a directory through an ifstream sized by seeking, which can throw or ask for
// exabytes; this one refuses a directory, a device or a missing file with the reason.
bool ReadWholeFile(std::vector<unsigned char>* out, std::string* err, const std::string& path, void*) {
  std::string bytes, why;
  if (!json::ReadFile(path, &bytes, &why)) {
    if (err != nullptr) *err += path + ": " + why + "\n";
    return false;
  }
  out->assign(bytes.begin(), bytes.end());
  return true;
}
bool FileExists(const std::string& path, void*) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}
std::string ExpandFilePath(const std::string& path, void*) { return path; }  // no shell expansion of a file's URIs
bool WriteWholeFile(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
  if (err != nullptr) *err += "the importer writes no files\n";
  return false;
}

// tinygltf turns the JSON into its own values recursively: arrays nested 100,000 deep (in
// "extras", say) overflow the stack. Nesting is counted on the text first (outside
// strings) and refused past kMaxGltfJsonDepth, which no real file comes near.
Error CheckDepth(const Context& cx, std::string_view text) {
  int32_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxGltfJsonDepth)
        return cx.Fail("json", "nests arrays and objects more than " + std::to_string(kMaxGltfJsonDepth) +
                                   " deep (at byte " + std::to_string(i) + " of the JSON)");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return {};
}

Result<GltfAsset> Import(std::span<const uint8_t> bytes, const std::string& name, const std::string& base_dir) {
  const Context cx{name};
  if (bytes.size() > (std::size_t{1} << 31)) return cx.Fail("file", "is larger than 2 GiB");
  const bool binary = bytes.size() >= 4 && U32(bytes, 0) == kGlbMagic;
  std::string_view json_text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (binary) {
    std::size_t used = 0;
    if (Error e = CheckGlb(cx, bytes, &used); e.code != ErrorCode::kNone) return e;
    bytes = bytes.first(used);
    json_text = json_text.substr(20, U32(bytes, 12));
  }
  if (Error e = CheckDepth(cx, json_text); e.code != ErrorCode::kNone) return e;
  // Parsed here first so that a syntax error says where (line, column, byte) in the
  // loaders' one format, not in nlohmann's raw words through tinygltf; the document also
  // serves CheckIndexArrays.
  const json::ParseResult parsed = json::Parse(json_text);
  if (!parsed.ok) {
    Error e = cx.Fail("json", parsed.error);
    e.message = name + (binary ? ": JSON chunk:" : ":") + parsed.error;
    return e;
  }
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(&SkipImages, nullptr);
  loader.SetFsCallbacks(tinygltf::FsCallbacks{&FileExists, &ExpandFilePath, &ReadWholeFile, &WriteWholeFile, nullptr});
  tinygltf::Model model;
  std::string err, warn;
  bool ok = false;
  try {
    ok = binary ? loader.LoadBinaryFromMemory(&model, &err, &warn, bytes.data(), static_cast<unsigned int>(bytes.size()), base_dir)
                : loader.LoadASCIIFromString(&model, &err, &warn, reinterpret_cast<const char*>(bytes.data()),
                                             static_cast<unsigned int>(bytes.size()), base_dir);
  } catch (const std::bad_alloc&) {
    throw;  // ImportGltf's
  } catch (const std::exception& e) {  // nlohmann-json throws on some malformed input
    err = e.what();
    ok = false;
  }
  if (!ok) {
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return cx.Fail(binary ? "glb" : "json", err.empty() ? "cannot be parsed" : err);
  }
  if (Error e = CheckIndexArrays(cx, *parsed.document); e.code != ErrorCode::kNone) return e;
  return Convert(cx, model);
}

// Every exception below a public call ends here: none leaves the importer.
Error Caught(const std::string& name, const char* what) {
  return Error{ErrorCode::kOutOfRange, -1, "import", name + ": cannot be imported: " + what};
}

}  // namespace

Result<GltfAsset> ImportGltf(std::span<const uint8_t> bytes, const std::string& name, const std::string& base_dir) {
  try {
    return Import(bytes, name, base_dir);
  } catch (const std::bad_alloc&) {
    return Caught(name, "out of memory");
  } catch (const std::exception& e) {
    return Caught(name, e.what());
  }
}

Result<GltfAsset> ImportGltf(const std::string& path) {
  try {
    std::string bytes, why;
    if (!json::ReadFile(path, &bytes, &why)) return json::IoError(path, why);
    const std::size_t slash = path.find_last_of('/');
    return Import(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), path,
                  slash == std::string::npos ? std::string(".") : path.substr(0, slash));
  } catch (const std::bad_alloc&) {
    return Caught(path, "out of memory");
  } catch (const std::exception& e) {
    return Caught(path, e.what());
  }
}

namespace {

// The value of key k (components floats) of a channel, for LINEAR/STEP or CUBICSPLINE.
const float* Key(const GltfChannel& c, std::size_t k, int part) {
  const std::size_t n = static_cast<std::size_t>(c.components);
  return c.interpolation == GltfInterpolation::kCubicSpline ? c.values.data() + (3 * k + static_cast<std::size_t>(part)) * n
                                                            : c.values.data() + k * n;
}

}  // namespace

void SampleClip(const GltfClip& clip, float time, std::span<Transform> locals) {
  for (const GltfChannel& c : clip.channels) {
    if (c.path == GltfChannelPath::kWeights || c.bone < 0 || c.bone >= static_cast<int32_t>(locals.size()) || c.times.empty())
      continue;
    const std::size_t keys = c.times.size();
    const float t = std::clamp(time, c.times.front(), c.times.back());
    std::size_t k = static_cast<std::size_t>(std::upper_bound(c.times.begin(), c.times.end(), t) - c.times.begin());
    k = k == 0 ? 0 : k - 1;
    const std::size_t next = std::min(k + 1, keys - 1);
    const float span = c.times[next] - c.times[k];
    const float u = span > 0 ? (t - c.times[k]) / span : 0.0f;
    float v[4] = {0, 0, 0, 1};
    const int n = c.components;
    if (c.interpolation == GltfInterpolation::kStep || next == k) {
      const float* a = Key(c, k, 1);
      for (int i = 0; i < n; ++i) v[i] = a[i];
    } else if (c.interpolation == GltfInterpolation::kLinear) {
      const float* a = Key(c, k, 0);
      const float* b = Key(c, next, 0);
      float sign = 1;
      if (c.path == GltfChannelPath::kRotation && a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0) sign = -1;
      for (int i = 0; i < n; ++i) v[i] = a[i] + (b[i] * sign - a[i]) * u;
    } else {
      // glTF's cubic Hermite spline: p(u) = (2u^3 - 3u^2 + 1) v0 + (u^3 - 2u^2 + u) span b0
      // + (-2u^3 + 3u^2) v1 + (u^3 - u^2) span a1, with b0 the out-tangent of key k and a1
      // the in-tangent of the next (glTF 2.0 specification, Appendix C).
      const float* v0 = Key(c, k, 1);
      const float* b0 = Key(c, k, 2);
      const float* a1 = Key(c, next, 0);
      const float* v1 = Key(c, next, 1);
      const float u2 = u * u, u3 = u2 * u;
      for (int i = 0; i < n; ++i)
        v[i] = (2 * u3 - 3 * u2 + 1) * v0[i] + (u3 - 2 * u2 + u) * span * b0[i] + (-2 * u3 + 3 * u2) * v1[i] +
               (u3 - u2) * span * a1[i];
    }
    Transform& out = locals[static_cast<std::size_t>(c.bone)];
    if (c.path == GltfChannelPath::kTranslation) out.translation = {v[0], v[1], v[2]};
    else if (c.path == GltfChannelPath::kScale) out.scale = {v[0], v[1], v[2]};
    else out.rotation = Normalize(Quat{v[0], v[1], v[2], v[3]});
  }
}

SampledClip SampleClipFrames(const GltfClip& clip, std::span<const Transform> rest, float fps) {
  SampledClip out;
  out.name = clip.name;
  const float rate = std::isfinite(fps) && fps > 0.0f ? std::min(fps, 1000.0f) : 30.0f;
  const float duration = std::isfinite(clip.duration) ? std::max(clip.duration, 0.0f) : 0.0f;
  // Bounded (a clip's duration comes from its file): at most kMaxClipFrameTransforms
  // transforms in all; a longer clip is sampled evenly at fewer frames.
  const std::size_t bones = std::max<std::size_t>(rest.size(), 1);
  const double wanted = std::floor(static_cast<double>(duration) * rate) + 1.0;
  const double cap = std::max(2.0, static_cast<double>(kMaxClipFrameTransforms / bones));
  const auto frames = static_cast<int32_t>(std::min(wanted, cap));
  const double step = frames > 1 && wanted > cap ? static_cast<double>(duration) / (frames - 1) : 1.0 / rate;
  out.frame_count = frames;
  out.local.reserve(static_cast<std::size_t>(frames) * rest.size());
  std::vector<Transform> pose(rest.begin(), rest.end());
  for (int32_t f = 0; f < frames; ++f) {
    std::copy(rest.begin(), rest.end(), pose.begin());
    SampleClip(clip, std::min(static_cast<float>(f * step), duration), pose);
    out.local.insert(out.local.end(), pose.begin(), pose.end());
  }
  return out;
}

}  // namespace tendon::ports
