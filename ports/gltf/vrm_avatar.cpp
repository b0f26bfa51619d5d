// ports/gltf/vrm_avatar.cpp: VRM springs as kVrm chain archetypes, and avatars bound on one
// character's buffers.
#include "ports/gltf/vrm_avatar.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

namespace tendon::ports {

namespace {

Error Refuse(const GltfAsset& asset, const std::string& where, const std::string& why) {
  return Error{ErrorCode::kBadReference, -1, where, asset.name + ": " + where + ": " + why};
}

std::string SpringField(int32_t s, int32_t j = -1) {
  std::string f = "spring_bones.springs[" + std::to_string(s) + "]";
  if (j >= 0) f += ".joints[" + std::to_string(j) + "]";
  return f;
}

Error Bad(const GltfAsset& asset, ErrorCode code, int32_t item, const std::string& field, const std::string& why) {
  return Error{code, item, field, asset.name + ": " + field + ": " + why};
}

std::string At(const char* field, std::size_t i) { return std::string(field) + "[" + std::to_string(i) + "]"; }

bool FiniteVec(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// A hand-built asset may hold anything; everything after this reads it by index. Checks
// what the chains, the character and the avatars index with (sizes, parents, bone indices)
// and what they compute from (finite rest poses, unit rotations, well-formed clips).
Error CheckAsset(const GltfAsset& asset) {
  const SkeletonSettings& sk = asset.skeleton;
  const std::size_t bones = sk.parents.size();
  if (bones > static_cast<std::size_t>(kMaxGltfNodes))
    return Bad(asset, ErrorCode::kCapacity, -1, "skeleton.parents",
               std::to_string(bones) + " bones; at most " + std::to_string(kMaxGltfNodes));
  if (sk.rest_local.size() != bones)
    return Bad(asset, ErrorCode::kBadReference, -1, "skeleton.rest_local",
               "has " + std::to_string(sk.rest_local.size()) + " transforms for " + std::to_string(bones) +
                   " parents: one per bone");
  if (!sk.names.empty() && sk.names.size() != bones)
    return Bad(asset, ErrorCode::kBadReference, -1, "skeleton.names",
               "has " + std::to_string(sk.names.size()) + " names for " + std::to_string(bones) + " bones: one per bone");
  const auto in_skeleton = [&](int32_t b) { return b >= 0 && static_cast<std::size_t>(b) < bones; };
  for (std::size_t b = 0; b < bones; ++b) {
    const auto item = static_cast<int32_t>(b);
    const int32_t p = sk.parents[b];
    if (p < -1 || (p >= 0 && static_cast<std::size_t>(p) >= bones))
      return Bad(asset, ErrorCode::kParentOutOfRange, item, At("skeleton.parents", b),
                 "= " + std::to_string(p) + " is outside [-1, " + std::to_string(bones) + ")");
    if (p >= item)
      return Bad(asset, ErrorCode::kParentNotBefore, item, At("skeleton.parents", b),
                 "= " + std::to_string(p) + ": a parent must come before its bone");
    const Transform& t = sk.rest_local[b];
    if (!IsFinite(t)) return Bad(asset, ErrorCode::kNotFinite, item, At("skeleton.rest_local", b), "is not finite");
    if (std::fabs(std::sqrt(Dot(t.rotation, t.rotation)) - 1.0f) > 1e-3f)
      return Bad(asset, ErrorCode::kNotUnitRotation, item, At("skeleton.rest_local", b) + ".rotation",
                 "is not a unit quaternion (within 1e-3)");
  }
  // The rest pose composed from the root: locals that are each finite can overflow together
  // (a scale of 1e30 over a translation of 1e10), and Bind writes these worlds into the
  // host's output_world. The bounds are the importer's (gltf_import.h), so a hand-built
  // asset is held to what an imported one is.
  {
    std::vector<Transform> rest_world(bones);
    for (std::size_t b = 0; b < bones; ++b) {
      const int32_t p = sk.parents[b];
      rest_world[b] = p < 0 ? sk.rest_local[b] : Compose(rest_world[static_cast<std::size_t>(p)], sk.rest_local[b]);
      const Transform& w = rest_world[b];
      const bool in_bounds = IsFinite(w) && std::fabs(w.translation.x) <= kMaxGltfWorldTranslation &&
                             std::fabs(w.translation.y) <= kMaxGltfWorldTranslation &&
                             std::fabs(w.translation.z) <= kMaxGltfWorldTranslation &&
                             std::fabs(w.scale.x) <= kMaxGltfWorldScale && std::fabs(w.scale.y) <= kMaxGltfWorldScale &&
                             std::fabs(w.scale.z) <= kMaxGltfWorldScale;
      if (!in_bounds)
        return Bad(asset, ErrorCode::kOutOfRange, static_cast<int32_t>(b), At("skeleton.rest_local", b),
                   "composed from the root, is not finite or is past " +
                       std::to_string(static_cast<int64_t>(kMaxGltfWorldTranslation)) + " m or a scale of " +
                       std::to_string(static_cast<int64_t>(kMaxGltfWorldScale)) +
                       " (each local is finite; together they overflow)");
    }
  }
  for (std::size_t n = 0; n < asset.bone_of_node.size(); ++n) {
    const int32_t b = asset.bone_of_node[n];
    if (b != -1 && !in_skeleton(b))
      return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(n), At("bone_of_node", n),
                 "= " + std::to_string(b) + " is not a bone of the skeleton (or -1)");
  }
  for (std::size_t h = 0; h < asset.humanoid.size(); ++h) {
    if (!in_skeleton(asset.humanoid[h].second))
      return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(h), At("humanoid", h),
                 "\"" + asset.humanoid[h].first + "\" names bone " + std::to_string(asset.humanoid[h].second) +
                     ", which is not in the skeleton");
  }
  for (std::size_t k = 0; k < asset.skins.size(); ++k) {
    const GltfSkin& skin = asset.skins[k];
    const std::string f = At("skins", k);
    if (skin.inverse_bind.size() != skin.joints.size())
      return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(k), f + ".inverse_bind",
                 "has " + std::to_string(skin.inverse_bind.size()) + " matrices for " + std::to_string(skin.joints.size()) +
                     " joints: one per joint");
    for (std::size_t j = 0; j < skin.joints.size(); ++j) {
      if (!in_skeleton(skin.joints[j]))
        return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(j), f + At(".joints", j),
                   "= " + std::to_string(skin.joints[j]) + " is not a bone of the skeleton");
      for (float v : skin.inverse_bind[j])
        if (!std::isfinite(v))
          return Bad(asset, ErrorCode::kNotFinite, static_cast<int32_t>(j), f + At(".inverse_bind", j), "is not finite");
    }
  }
  const VrmSpringBones& sb = asset.spring_bones;
  for (std::size_t c = 0; c < sb.colliders.size(); ++c) {
    const VrmCollider& col = sb.colliders[c];
    const std::string f = At("spring_bones.colliders", c);
    if (!in_skeleton(col.bone))
      return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(c), f + ".bone",
                 "= " + std::to_string(col.bone) + " is not a bone of the skeleton");
    if (!FiniteVec(col.offset) || !FiniteVec(col.tail) || !FiniteVec(col.normal) || !std::isfinite(col.radius))
      return Bad(asset, ErrorCode::kNotFinite, static_cast<int32_t>(c), f, "is not finite");
  }
  for (std::size_t g = 0; g < sb.collider_groups.size(); ++g) {
    for (std::size_t c = 0; c < sb.collider_groups[g].colliders.size(); ++c) {
      const int32_t id = sb.collider_groups[g].colliders[c];
      if (id < 0 || static_cast<std::size_t>(id) >= sb.colliders.size())
        return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(c),
                   At("spring_bones.collider_groups", g) + At(".colliders", c),
                   "= " + std::to_string(id) + " is not a collider");
    }
  }
  // The joint that simulates each bone: a bone is simulated once (the importer keeps the
  // first root that reaches a bone of a VRM 0.x file; a hand-built asset must do the same),
  // or two chains, or one chain's bone map, would write it twice.
  std::vector<std::pair<int32_t, int32_t>> simulated_by(bones, {-1, -1});
  for (std::size_t s = 0; s < sb.springs.size(); ++s) {
    const VrmSpring& spring = sb.springs[s];
    const std::string f = At("spring_bones.springs", s);
    if (spring.center != -1 && !in_skeleton(spring.center))
      return Bad(asset, ErrorCode::kBadReference, static_cast<int32_t>(s), f + ".center",
                 "= " + std::to_string(spring.center) + " is not a bone of the skeleton (or -1)");
    for (std::size_t j = 0; j < spring.joints.size(); ++j) {
      const VrmJoint& joint = spring.joints[j];
      const std::string jf = f + At(".joints", j);
      const auto item = static_cast<int32_t>(j);
      if (!in_skeleton(joint.bone))
        return Bad(asset, ErrorCode::kBadReference, item, jf + ".bone",
                   "= " + std::to_string(joint.bone) + " is not a bone of the skeleton");
      auto& owner = simulated_by[static_cast<std::size_t>(joint.bone)];
      if (owner.first >= 0)
        return Bad(asset, ErrorCode::kBadReference, item, jf + ".bone",
                   "= " + std::to_string(joint.bone) + " is simulated already by " +
                       At("spring_bones.springs", static_cast<std::size_t>(owner.first)) +
                       At(".joints", static_cast<std::size_t>(owner.second)) + ": a bone is simulated by one joint");
      owner = {static_cast<int32_t>(s), item};
      if (joint.tail_bone != -1 && !in_skeleton(joint.tail_bone))
        return Bad(asset, ErrorCode::kBadReference, item, jf + ".tail_bone",
                   "= " + std::to_string(joint.tail_bone) + " is not a bone of the skeleton (or -1: a virtual tip)");
      if (!FiniteVec(joint.virtual_tip) || !FiniteVec(joint.gravity_dir) || !std::isfinite(joint.hit_radius) ||
          !std::isfinite(joint.stiffness) || !std::isfinite(joint.gravity_power) || !std::isfinite(joint.drag_force))
        return Bad(asset, ErrorCode::kNotFinite, item, jf, "is not finite");
    }
  }
  for (std::size_t c = 0; c < asset.clips.size(); ++c) {
    for (std::size_t h = 0; h < asset.clips[c].channels.size(); ++h) {
      const GltfChannel& ch = asset.clips[c].channels[h];
      if (ch.path == GltfChannelPath::kWeights) continue;  // morph weights: never sampled into bones
      const std::string f = At("clips", c) + At(".channels", h);
      const auto item = static_cast<int32_t>(h);
      if (!in_skeleton(ch.bone))
        return Bad(asset, ErrorCode::kBadReference, item, f + ".bone",
                   "= " + std::to_string(ch.bone) + " is not a bone of the skeleton");
      const int32_t want = ch.path == GltfChannelPath::kRotation ? 4 : 3;
      const std::size_t per_key = static_cast<std::size_t>(want) * (ch.interpolation == GltfInterpolation::kCubicSpline ? 3 : 1);
      if (ch.components != want || ch.values.size() != ch.times.size() * per_key)
        return Bad(asset, ErrorCode::kOutOfRange, item, f + ".values",
                   std::to_string(ch.values.size()) + " floats of " + std::to_string(ch.components) + " components for " +
                       std::to_string(ch.times.size()) + " keys; want " + std::to_string(per_key) + " per key");
    }
  }
  return {};
}

ColliderSettings ToChainCollider(const VrmCollider& c) {
  ColliderSettings out;
  out.bone = -1;      // on a host frame: the avatar's output_world of the collider's bone
  out.frame = c.bone;
  out.inside = c.inside;
  out.radius = c.radius;
  out.a = c.offset;
  switch (c.shape) {
    case VrmColliderShape::kSphere: out.shape = ColliderShape::kSphere; break;
    case VrmColliderShape::kCapsule:
      out.shape = ColliderShape::kCapsule;
      out.b = c.tail;
      break;
    case VrmColliderShape::kPlane:
      out.shape = ColliderShape::kPlane;
      out.b = NormalizeOr(c.normal, Vec3{0, 0, 1});
      out.inside = false;
      break;
  }
  return out;
}

}  // namespace

// One strand's shape (each node's parent, local to its strand, in settings order) when
// every root's subtree of `bones` has the same one; empty otherwise. The kernel gives such
// a chain one lane per strand, and only there may its roots hang from different frames.
std::vector<int32_t> StrandShape(const std::vector<ChainBone>& bones) {
  const auto n = static_cast<int32_t>(bones.size());
  std::vector<int32_t> strand_of(n), local(n);
  std::vector<std::vector<int32_t>> shapes;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t p = bones[k].parent;
    strand_of[k] = p < 0 ? static_cast<int32_t>(shapes.size()) : strand_of[p];
    if (p < 0) shapes.emplace_back();
    local[k] = static_cast<int32_t>(shapes[strand_of[k]].size());
    shapes[strand_of[k]].push_back(p < 0 ? -1 : local[p]);
  }
  for (const std::vector<int32_t>& shape : shapes)
    if (shape != shapes[0]) return {};
  return shapes.empty() ? std::vector<int32_t>{} : shapes[0];
}

// Whether every root of `c` hangs from `bone` (its parent_frame; -1: the model frame).
bool AllRootsOn(const VrmChain& c, int32_t bone) {
  for (const ChainBone& b : c.settings.bones)
    if (b.parent < 0 && b.parent_frame != bone) return false;
  return true;
}

// Whether `chain`'s roots may join `into`'s: all of them hang from one bone (one root
// frame: any layout), or, across bones, both hang from bones (each root names its own
// through ChainBone::parent_frame) and every strand of both has one shape (one lane per
// strand). The kernel also wants each strand's nodes to share one collider mask; where a
// merge misses that, VrmAvatarArchetype::Build builds the chains again by parent bone.
// strand_lanes (issue 41): a root whose strand shape another root of the avatar shares
// ("shaped") joins only a chain of that shape, and an unshaped root only an unshaped chain,
// so that roots on one bone with strands of different lengths make one chain per length (a
// lane per strand) instead of one chain of them all (one lane).
bool CanShareChain(const VrmChain& into, const VrmChain& chain, bool across_bones, bool strand_lanes, bool into_shaped,
                   bool shaped) {
  if (strand_lanes) {
    if (into_shaped != shaped) return false;
    if (shaped) {
      const std::vector<int32_t> shape = StrandShape(into.settings.bones);
      if (shape.empty() || shape != StrandShape(chain.settings.bones)) return false;
      if (into.parent_bone == chain.parent_bone && AllRootsOn(into, into.parent_bone)) return true;
      return across_bones && into.parent_bone >= 0 && chain.parent_bone >= 0;
    }
  }
  if (into.parent_bone == chain.parent_bone && AllRootsOn(into, into.parent_bone)) return true;
  if (!across_bones || into.parent_bone < 0 || chain.parent_bone < 0) return false;
  const std::vector<int32_t> shape = StrandShape(into.settings.bones);
  return !shape.empty() && shape == StrandShape(chain.settings.bones);
}

// Chains become one chain where they can (CanShareChain): all of Godette's 8 roots, 7 on
// the head and 1 on the chest, are one chain, and so one lane each in one block per avatar:
// the per-chain work of a frame (reading and checking the host's frames, colliders, the
// teleport guard, the budget's look) is paid once for all of them. Each root hangs from
// its own bone (ChainBone::parent_frame), and each node keeps its own spring's colliders
// through its collider mask.
std::vector<VrmChain> MergeByParentBone(std::vector<VrmChain> roots, const std::vector<std::vector<int32_t>>& collider_ids,
                                        bool across_bones, bool strand_lanes) {
  std::vector<VrmChain> out;
  std::vector<std::vector<int32_t>> out_ids;  // per merged chain: the VRM colliders, in order
  // Per root: whether another root's strand has its shape (each root is one strand here).
  std::vector<std::vector<int32_t>> shapes(roots.size());
  for (std::size_t r = 0; r < roots.size(); ++r) shapes[r] = StrandShape(roots[r].settings.bones);
  std::vector<uint8_t> shaped(roots.size(), 0), out_shaped;
  for (std::size_t r = 0; r < roots.size() && strand_lanes; ++r)
    for (std::size_t q = 0; q < roots.size() && shaped[r] == 0; ++q)
      shaped[r] = q != r && !shapes[r].empty() && shapes[q] == shapes[r] ? 1 : 0;
  for (std::size_t r = 0; r < roots.size(); ++r) {
    VrmChain& chain = roots[r];
    const std::vector<int32_t>& ids = collider_ids[r];
    std::size_t into = out.size();
    for (std::size_t m = 0; m < out.size(); ++m) {
      if (!CanShareChain(out[m], chain, across_bones, strand_lanes, out_shaped[m] != 0, shaped[r] != 0)) continue;
      std::vector<int32_t> merged = out_ids[m];
      for (int32_t id : ids)
        if (std::find(merged.begin(), merged.end(), id) == merged.end()) merged.push_back(id);
      if (merged.size() <= 32 && out[m].settings.bones.size() + chain.settings.bones.size() <= 128) {
        into = m;
        break;
      }
    }
    if (into == out.size()) {
      out.emplace_back();
      out_ids.emplace_back();
      out_shaped.push_back(shaped[r]);
      VrmChain& fresh = out.back();
      fresh.parent_bone = chain.parent_bone;
      fresh.spring = chain.spring;
      fresh.settings.name = chain.settings.name;
      fresh.settings.model = ChainModel::kVrm;
      fresh.settings.settings = chain.settings.settings;
    } else {
      out[into].settings.name += "+" + chain.settings.name;
    }
    VrmChain& dest = out[into];
    std::vector<int32_t>& dest_ids = out_ids[into];
    uint32_t mask = 0;
    for (std::size_t c = 0; c < ids.size(); ++c) {
      auto at = std::find(dest_ids.begin(), dest_ids.end(), ids[c]);
      if (at == dest_ids.end()) {
        dest_ids.push_back(ids[c]);
        dest.settings.colliders.push_back(chain.settings.colliders[c]);
        at = dest_ids.end() - 1;
      }
      mask |= 1u << static_cast<uint32_t>(at - dest_ids.begin());
    }
    const auto offset = static_cast<int32_t>(dest.settings.bones.size());
    for (ChainBone bone : chain.settings.bones) {
      if (bone.parent >= 0) bone.parent += offset;
      dest.settings.bones.push_back(bone);
    }
    dest.bone_map.insert(dest.bone_map.end(), chain.bone_map.begin(), chain.bone_map.end());
    for (ChainNodeOverride ov : chain.settings.overrides) {
      ov.node += offset;
      ov.collider_mask = mask;
      dest.settings.overrides.push_back(ov);
    }
  }
  // Breadth first: the roots, then every node one below them, and so on. Parents still
  // come first, and consecutive joints are then of different springs, independent of each
  // other: a lone avatar's solve is a chain of square roots and divides per joint, and the
  // CPU overlaps independent ones (BM_VrmAvatars/models:1 solve phase: docs/performance.md).
  for (VrmChain& chain : out) {
    const auto n = static_cast<int32_t>(chain.settings.bones.size());
    std::vector<int32_t> depth(n, 0), order;
    int32_t deepest = 0;
    for (int32_t k = 0; k < n; ++k) {
      const int32_t p = chain.settings.bones[k].parent;
      depth[k] = p < 0 ? 0 : depth[p] + 1;
      deepest = std::max(deepest, depth[k]);
    }
    // Level by level, each in node order (stable; at most 128 nodes).
    for (int32_t d = 0; d <= deepest; ++d)
      for (int32_t k = 0; k < n; ++k)
        if (depth[k] == d) order.push_back(k);
    std::vector<int32_t> new_index(n);
    for (int32_t i = 0; i < n; ++i) new_index[order[i]] = i;
    VrmChain sorted = chain;
    for (int32_t i = 0; i < n; ++i) {
      ChainBone bone = chain.settings.bones[order[i]];
      if (bone.parent >= 0) bone.parent = new_index[bone.parent];
      sorted.settings.bones[i] = bone;
      sorted.bone_map[i] = chain.bone_map[order[i]];
    }
    for (ChainNodeOverride& ov : sorted.settings.overrides) ov.node = new_index[ov.node];
    chain = std::move(sorted);
  }
  return out;
}

Result<std::vector<VrmChain>> VrmChains(const GltfAsset& asset, bool across_bones, bool strand_lanes) {
  if (Error e = CheckAsset(asset); e.code != ErrorCode::kNone) return e;
  const SkeletonSettings& sk = asset.skeleton;
  const auto bones = static_cast<int32_t>(sk.parents.size());
  const VrmSpringBones& sb = asset.spring_bones;
  std::vector<VrmChain> out;
  std::vector<std::vector<int32_t>> out_collider_ids;
  for (int32_t s = 0; s < static_cast<int32_t>(sb.springs.size()); ++s) {
    const VrmSpring& spring = sb.springs[s];
    // The spring's colliders, group by group, in order (VRM's collision order).
    std::vector<ColliderSettings> colliders;
    std::vector<int32_t> collider_ids;
    for (int32_t g : spring.collider_groups) {
      if (g < 0 || g >= static_cast<int32_t>(sb.collider_groups.size()))
        return Refuse(asset, SpringField(s) + ".collider_groups", "names group " + std::to_string(g) + ", which does not exist");
      for (int32_t c : sb.collider_groups[g].colliders) {
        if (c < 0 || c >= static_cast<int32_t>(sb.colliders.size()) || sb.colliders[c].bone < 0 ||
            sb.colliders[c].bone >= bones)
          return Refuse(asset, "spring_bones.collider_groups[" + std::to_string(g) + "]",
                        "collider " + std::to_string(c) + " does not exist or has no bone in the skeleton");
        colliders.push_back(ToChainCollider(sb.colliders[c]));
        collider_ids.push_back(c);
      }
    }
    if (colliders.size() > 32)
      return Refuse(asset, SpringField(s) + ".collider_groups",
                    std::to_string(colliders.size()) + " colliders; a chain takes at most 32");
    const auto joints = static_cast<int32_t>(spring.joints.size());
    std::vector<int32_t> chain_of(joints, -1);  // which chain of `out` a joint went to
    for (int32_t j = 0; j < joints; ++j) {
      const VrmJoint& joint = spring.joints[j];
      const std::string here = SpringField(s, j);
      if (joint.bone < 0 || joint.bone >= bones) return Refuse(asset, here + ".bone", "is not a bone of the skeleton");
      if (joint.tail_bone >= bones) return Refuse(asset, here + ".tail_bone", "is not a bone of the skeleton");
      if (joint.parent >= j) return Refuse(asset, here + ".parent", "joints must come after the joint they hang from");
      VrmChain* chain;
      if (joint.parent < 0) {
        chain_of[j] = static_cast<int32_t>(out.size());
        out.emplace_back();
        out_collider_ids.push_back(collider_ids);
        chain = &out.back();
        chain->spring = s;
        chain->parent_bone = sk.parents[joint.bone];
        chain->settings.name = (spring.name.empty() ? "spring" + std::to_string(s) : spring.name) + ":" +
                               (joint.bone < static_cast<int32_t>(sk.names.size()) ? sk.names[joint.bone] : "");
        chain->settings.model = ChainModel::kVrm;
        chain->settings.colliders = colliders;
        chain->settings.settings.wind_scale = 0.0f;  // VRM has no wind; a host may add it
        ChainBone root{-1, sk.rest_local[joint.bone]};
        root.parent_frame = chain->parent_bone;  // output_world[parent_bone]; -1: root_parent_world (the model)
        chain->settings.bones.push_back(root);
        chain->bone_map.push_back(joint.bone);
      } else {
        chain_of[j] = chain_of[joint.parent];
        chain = &out[chain_of[j]];
      }
      // The joint's bone is a node of its chain already (the root, or its parent joint's tail).
      auto node_of = [&](int32_t bone) {
        const auto it = std::find(chain->bone_map.begin(), chain->bone_map.end(), bone);
        return it == chain->bone_map.end() ? -1 : static_cast<int32_t>(it - chain->bone_map.begin());
      };
      const int32_t head = node_of(joint.bone);
      if (head < 0) {
        // A branch of a VRM 0.x subtree: a joint whose bone is a non-first child of another
        // joint's bone; it hangs, carried, from that bone's node.
        const int32_t parent_node = node_of(sk.parents[joint.bone]);
        if (parent_node < 0) return Refuse(asset, here + ".bone", "does not hang from its parent joint's bone");
        chain->settings.bones.push_back(ChainBone{parent_node, sk.rest_local[joint.bone]});
        chain->bone_map.push_back(joint.bone);
      }
      const int32_t head_node = node_of(joint.bone);
      int32_t tail_node = -1;
      if (joint.tail_bone >= 0) {
        if (sk.parents[joint.tail_bone] != joint.bone) return Refuse(asset, here + ".tail_bone", "is not a child of the joint's bone");
        tail_node = node_of(joint.tail_bone);
        if (tail_node < 0) {
          tail_node = static_cast<int32_t>(chain->settings.bones.size());
          chain->settings.bones.push_back(ChainBone{head_node, sk.rest_local[joint.tail_bone]});
          chain->bone_map.push_back(joint.tail_bone);
        }
      } else {
        tail_node = static_cast<int32_t>(chain->settings.bones.size());
        ChainBone tip{head_node, Transform{joint.virtual_tip, {}, {1, 1, 1}}};
        tip.virtual_tip = true;
        chain->settings.bones.push_back(tip);
        chain->bone_map.push_back(-1);
      }
      if (chain->settings.bones.size() > 128)
        return Refuse(asset, here, "the chain has more than 128 nodes, Tendon's limit");
      // The joint's settings act on its tail.
      ChainNodeOverride ov;
      ov.node = tail_node;
      ov.damping = std::clamp(1.0f - joint.drag_force, 0.0f, 1.0f);
      ov.stiffness = joint.stiffness;
      ov.radius = joint.hit_radius;
      ov.gravity_push = joint.gravity_dir * joint.gravity_power;
      chain->settings.overrides.push_back(ov);
    }
  }
  return MergeByParentBone(std::move(out), out_collider_ids, across_bones, strand_lanes);
}

Result<std::shared_ptr<const VrmAvatarArchetype>> VrmAvatarArchetype::Load(World& world, const std::string& path,
                                                                           const VrmAvatarOptions& options) {
  auto asset = ImportGltf(path);
  if (!asset.ok()) return asset.error();
  return Build(world, std::move(asset.value()), options);
}

Result<std::shared_ptr<const VrmAvatarArchetype>> VrmAvatarArchetype::Load(World& world, std::span<const uint8_t> bytes,
                                                                           const std::string& name,
                                                                           const VrmAvatarOptions& options) {
  auto asset = ImportGltf(bytes, name);
  if (!asset.ok()) return asset.error();
  return Build(world, std::move(asset.value()), options);
}

Result<std::shared_ptr<const VrmAvatarArchetype>> VrmAvatarArchetype::Build(World& world, GltfAsset asset,
                                                                            const VrmAvatarOptions& options) {
  if (Error e = CheckAsset(asset); e.code != ErrorCode::kNone) return e;
  if (world.FrameInFlight())
    return Error{ErrorCode::kReentrant, -1, "world", "a frame is in flight: call FinishStep before building"};
  // The kind owns what it builds from here on: a refusal below drops it, and its
  // destructor removes every archetype it built (a refused Load leaves the World as it was).
  auto kind = std::shared_ptr<VrmAvatarArchetype>(new VrmAvatarArchetype());
  kind->world_ = &world;
  // Chains merged across bones first; where the kernel refuses them (a strand's nodes with
  // different collider masks keep a merged chain in one lane, which hangs from one frame),
  // the chains are made again by parent bone, as they were before session 18.
  Error failed{};
  for (const bool across_bones : {true, false}) {
    auto chains = VrmChains(asset, across_bones, options.strand_lanes);
    if (!chains.ok()) return chains.error();
    for (ChainArchetypeId built : kind->chain_archetypes_) (void)world.RemoveChainArchetype(built);
    kind->chain_archetypes_.clear();
    kind->joint_count_ = 0;
    kind->chains_ = std::move(chains.value());
    failed = {};
    for (std::size_t c = 0; c < kind->chains_.size() && failed.code == ErrorCode::kNone; ++c) {
      const VrmChain& chain = kind->chains_[c];
      auto built = world.BuildChainArchetype(chain.settings);
      if (!built.ok()) {
        failed = built.error();
        failed.message = asset.name + ": chain " + std::to_string(c) + " (" + chain.settings.name + "): " + failed.field +
                         ": " + failed.message;
        break;
      }
      kind->chain_archetypes_.push_back(built.value());
      kind->joint_count_ += static_cast<int32_t>(chain.settings.overrides.size());
    }
    if (failed.code == ErrorCode::kNone) break;  // else: once more by parent bone, which reports a real error
  }
  if (failed.code != ErrorCode::kNone) return failed;
  // Which chains may write their bones' world frames into output_world: not one whose bone
  // a chain reads as a frame (a root's parent, a collider's bone), since chains step side
  // by side and the reader would race the writer.
  std::vector<uint8_t> read_as_frame(asset.skeleton.parents.size(), 0);
  for (const VrmChain& chain : kind->chains_) {
    if (chain.parent_bone >= 0) read_as_frame[chain.parent_bone] = 1;
    for (const ChainBone& b : chain.settings.bones)
      if (b.parent < 0 && b.parent_frame >= 0) read_as_frame[b.parent_frame] = 1;
    for (const ColliderSettings& c : chain.settings.colliders)
      if (c.frame >= 0) read_as_frame[c.frame] = 1;
  }
  for (const VrmChain& chain : kind->chains_) {
    bool writes = true;
    for (int32_t bone : chain.bone_map) writes = writes && (bone < 0 || read_as_frame[bone] == 0);
    kind->writes_world_.push_back(writes ? 1 : 0);
  }
  for (int32_t s = 0; s < static_cast<int32_t>(asset.spring_bones.springs.size()); ++s)
    if (asset.spring_bones.springs[s].center >= 0) kind->centers.push_back(s);
  if (options.character && !asset.humanoid.empty()) {
    CharacterSettings cs;
    cs.name = asset.name;
    cs.skeleton = asset.skeleton;
    cs.humanoid_bones = asset.humanoid;
    cs.total_mass = options.total_mass;
    cs.limit_source = options.limit_source;
    cs.inactive_bodies = options.inactive_bodies;
    if (options.limit_source == LimitSource::kClips) {
      if (asset.clips.empty())
        return Refuse(asset, "animations", "limit_source is kClips, but the file has no animation clips to learn from");
      for (const GltfClip& clip : asset.clips) cs.limit_clips.push_back(SampleClipFrames(clip, asset.skeleton.rest_local));
    }
    auto built = world.BuildCharacterArchetype(cs);
    if (!built.ok()) {
      Error e = built.error();
      e.message = asset.name + ": character: " + e.field + ": " + e.message;
      return e;
    }
    kind->character_ = built.value();
  }
  kind->asset_ = std::move(asset);
  // The names as C strings, once the strings sit where they stay (the kind never changes).
  static const char kNoName[] = "";
  const std::vector<std::string>& names = kind->asset_.skeleton.names;
  kind->name_pointers_.assign(kind->asset_.skeleton.parents.size(), kNoName);
  for (std::size_t b = 0; b < names.size(); ++b) kind->name_pointers_[b] = names[b].c_str();
  return std::shared_ptr<const VrmAvatarArchetype>(std::move(kind));
}

Error VrmAvatarArchetype::Release() const {
  if (world_ == nullptr) return {};
  if (world_->FrameInFlight())
    return Error{ErrorCode::kReentrant, -1, "world", "a frame is in flight: call FinishStep before releasing a kind"};
  Error first{};
  std::vector<ChainArchetypeId> kept;
  for (ChainArchetypeId id : chain_archetypes_) {
    const Error e = world_->RemoveChainArchetype(id);
    if (e.code == ErrorCode::kNone || e.code == ErrorCode::kStaleHandle) continue;
    kept.push_back(id);  // still bound (by hand): stays, and a later Release tries again
    if (first.code == ErrorCode::kNone) first = e;
  }
  chain_archetypes_ = std::move(kept);
  if (character_.generation != 0) {
    const Error e = world_->RemoveCharacterArchetype(character_);
    if (e.code == ErrorCode::kNone || e.code == ErrorCode::kStaleHandle) {
      character_ = CharacterArchetypeId{};
    } else if (first.code == ErrorCode::kNone) {
      first = e;
    }
  }
  if (chain_archetypes_.empty() && character_.generation == 0) world_ = nullptr;
  return first;
}

VrmAvatarArchetype::~VrmAvatarArchetype() {
  // A frame still reading the archetypes is finished first, as an avatar's destructor does.
  if (world_ != nullptr && world_->FrameInFlight()) world_->FinishStep();
  (void)Release();
}

VrmAvatarPalette PaletteOfSkin(const VrmAvatarArchetype& kind, int32_t skin) {
  VrmAvatarPalette out;
  if (skin < 0 || skin >= static_cast<int32_t>(kind.skins().size())) return out;
  const GltfSkin& s = kind.skins()[skin];
  out.element_of_bone.assign(static_cast<std::size_t>(kind.bone_count()), -1);
  out.inverse_bind.assign(static_cast<std::size_t>(kind.bone_count()) * 16, 0.0f);
  for (int32_t b = 0; b < kind.bone_count(); ++b) {
    float* m = out.inverse_bind.data() + 16 * b;
    m[0] = m[5] = m[10] = m[15] = 1.0f;  // bones outside the skin: never written, but affine
  }
  for (std::size_t j = 0; j < s.joints.size(); ++j) {
    const int32_t bone = s.joints[j];
    // A bone twice in one skin: its first slot (a stream writes each bone once).
    if (out.element_of_bone[bone] >= 0) continue;
    out.element_of_bone[bone] = static_cast<int32_t>(j);
    std::copy(s.inverse_bind[j].begin(), s.inverse_bind[j].end(), out.inverse_bind.begin() + 16 * bone);
  }
  return out;
}

namespace {

constexpr int32_t kMaxAvatarStreams = 4;

int32_t PackedBytes(const PoseStream& s) {
  if (s.layout != PoseLayout::kLocalTrs) return s.matrix_form == MatrixForm::kRowMajor3x4 ? 48 : 64;
  int32_t end = s.rotation_offset + 16;
  if (s.translation_offset >= 0) end = std::max(end, s.translation_offset + 12);
  if (s.scale_offset >= 0) end = std::max(end, s.scale_offset + 12);
  return end;
}

Error StreamError(ErrorCode code, int32_t item, const std::string& field, const std::string& why) {
  const std::string f = "pose_streams[" + std::to_string(item) + "]" + (field.empty() ? "" : "." + field);
  return Error{code, item, f, f + ": " + why};
}

// The host's streams, indexed by the avatar's bones. The kernel checks what each binding
// (the character, every chain) is handed; this checks what only the avatar sees: the
// per-bone arrays against the skeleton, elements distinct over the whole skeleton (a chain
// and the character write into one array), and, for an avatar without a character whose
// streams the port itself writes (UpdateWorld), every field that addresses memory.
Error CheckStreams(std::span<const PoseStream> streams, int32_t bones) {
  if (!streams.empty() && streams.data() == nullptr)
    return Error{ErrorCode::kNullBuffer, -1, "pose_streams", "pose_streams is null with a non-zero size"};
  if (static_cast<int64_t>(streams.size()) > kMaxAvatarStreams)
    return Error{ErrorCode::kCapacity, -1, "pose_streams",
                 "pose_streams has " + std::to_string(streams.size()) + " streams; at most 4"};
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const PoseStream& s = streams[i];
    const auto item = static_cast<int32_t>(i);
    const auto layout = static_cast<int32_t>(s.layout);
    if (layout < 0 || layout > static_cast<int32_t>(PoseLayout::kSkinningMatrix))
      return StreamError(ErrorCode::kOutOfRange, item, "layout", std::to_string(layout) + " is not a PoseLayout");
    const auto form = static_cast<int32_t>(s.matrix_form);
    if (form < 0 || form > static_cast<int32_t>(MatrixForm::kRowMajor3x4))
      return StreamError(ErrorCode::kOutOfRange, item, "matrix_form", std::to_string(form) + " is not a MatrixForm");
    const auto order = static_cast<int32_t>(s.rotation_order);
    if (order < 0 || order > static_cast<int32_t>(QuatOrder::kWxyz))
      return StreamError(ErrorCode::kOutOfRange, item, "rotation_order", std::to_string(order) + " is not a QuatOrder");
    if (s.base == nullptr) return StreamError(ErrorCode::kNullBuffer, item, "base", "is null");
    if (s.element_count <= 0)
      return StreamError(ErrorCode::kNullBuffer, item, "element_count", "must be positive, got " + std::to_string(s.element_count));
    if (s.layout == PoseLayout::kLocalTrs) {
      const int32_t offsets[3] = {s.translation_offset, s.rotation_offset, s.scale_offset};
      const int32_t sizes[3] = {12, 16, 12};
      const char* names[3] = {"translation_offset", "rotation_offset", "scale_offset"};
      if (s.rotation_offset < 0) return StreamError(ErrorCode::kOutOfRange, item, "rotation_offset", "must be >= 0");
      for (int32_t a = 0; a < 3; ++a) {
        if (offsets[a] < -1 || offsets[a] > (1 << 20))
          return StreamError(ErrorCode::kOutOfRange, item, names[a], std::to_string(offsets[a]) + " is outside [-1, 1048576]");
        for (int32_t b = 0; b < a; ++b)
          if (offsets[a] >= 0 && offsets[b] >= 0 && offsets[a] < offsets[b] + sizes[b] && offsets[b] < offsets[a] + sizes[a])
            return StreamError(ErrorCode::kOutOfRange, item, names[a], std::string("overlaps ") + names[b]);
      }
    }
    const int32_t packed = PackedBytes(s);
    if (s.byte_stride != 0 && (s.byte_stride < packed || s.byte_stride > (1 << 20)))
      return StreamError(ErrorCode::kOutOfRange, item, "byte_stride",
                         std::to_string(s.byte_stride) + " does not hold the element's " + std::to_string(packed) +
                             " bytes (or exceeds 1 MiB)");
    if (!s.element_of_bone.empty() && static_cast<int64_t>(s.element_of_bone.size()) != bones)
      return StreamError(ErrorCode::kBadReference, item, "element_of_bone",
                         "has " + std::to_string(s.element_of_bone.size()) + " entries; the avatar has " +
                             std::to_string(bones) + " bones (one per bone, -1 for a bone not written)");
    if (!s.element_of_bone.empty() && s.element_of_bone.data() == nullptr)
      return StreamError(ErrorCode::kNullBuffer, item, "element_of_bone", "is null");
    std::vector<std::pair<int32_t, int32_t>> written;  // (element, bone), sorted to find repeats
    for (int32_t b = 0; b < bones; ++b) {
      const int32_t e = s.element_of_bone.empty() ? b : s.element_of_bone[b];
      if (e == -1) continue;
      if (e < -1 || e >= s.element_count)
        return StreamError(ErrorCode::kBadReference, item, "element_of_bone",
                           "bone " + std::to_string(b) + " goes to element " + std::to_string(e) + ", outside [-1, " +
                               std::to_string(s.element_count) + ")");
      written.emplace_back(e, b);
    }
    std::sort(written.begin(), written.end());
    for (std::size_t w = 1; w < written.size(); ++w)
      if (written[w].first == written[w - 1].first)
        return StreamError(ErrorCode::kBadReference, item, "element_of_bone",
                           "bones " + std::to_string(written[w - 1].second) + " and " + std::to_string(written[w].second) +
                               " both go to element " + std::to_string(written[w].first));
    if (s.layout == PoseLayout::kSkinningMatrix) {
      if (static_cast<int64_t>(s.inverse_bind.size()) != 16 * static_cast<int64_t>(bones) ||
          (bones > 0 && s.inverse_bind.data() == nullptr))
        return StreamError(ErrorCode::kNullBuffer, item, "inverse_bind",
                           "needs 16 floats per bone (" + std::to_string(16 * bones) + "), got " +
                               std::to_string(s.inverse_bind.size()));
      for (int32_t b = 0; b < bones; ++b) {
        if ((s.element_of_bone.empty() ? b : s.element_of_bone[b]) < 0) continue;  // never read
        const float* m = s.inverse_bind.data() + 16 * b;
        for (int32_t v = 0; v < 16; ++v)
          if (!std::isfinite(m[v]))
            return StreamError(ErrorCode::kNotFinite, item, "inverse_bind",
                               "bone " + std::to_string(b) + "'s inverse bind matrix is not finite");
        if (m[3] != 0.0f || m[7] != 0.0f || m[11] != 0.0f || m[15] != 1.0f)
          return StreamError(ErrorCode::kOutOfRange, item, "inverse_bind",
                             "bone " + std::to_string(b) + "'s inverse bind matrix is not affine (last row must be 0 0 0 1)");
      }
    } else if (!s.inverse_bind.empty()) {
      return StreamError(ErrorCode::kOutOfRange, item, "inverse_bind", "is only read by PoseLayout::kSkinningMatrix");
    }
    if (static_cast<int64_t>(s.element_count - 1) * (s.byte_stride == 0 ? packed : s.byte_stride) + packed > (int64_t{1} << 40))
      return StreamError(ErrorCode::kOutOfRange, item, "element_count", "element_count * byte_stride is too large");
  }
  return {};
}

// Row-major 3x4 of translation * rotation * diag(scale) (the quaternion's matrix, Shoemake).
std::array<float, 12> AffineOf(const Transform& t) {
  const Quat& q = t.rotation;
  const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  const Vec3& s = t.scale;
  return {(1 - 2 * (yy + zz)) * s.x, 2 * (xy - wz) * s.y,       2 * (xz + wy) * s.z,       t.translation.x,
          2 * (xy + wz) * s.x,       (1 - 2 * (xx + zz)) * s.y, 2 * (yz - wx) * s.z,       t.translation.y,
          2 * (xz - wy) * s.x,       2 * (yz + wx) * s.y,       (1 - 2 * (xx + yy)) * s.z, t.translation.z};
}

// One bone into one of the host's streams (the port's writer, for UpdateWorld): the local
// TRS, or the model-space matrix (times the inverse bind). Non-finite values are not written.
void WriteBone(const PoseStream& s, int32_t element, const Transform& local, const Transform& in_model,
               const float* inverse_bind) {
  unsigned char* at = static_cast<unsigned char*>(s.base) +
                      static_cast<std::ptrdiff_t>(element) * (s.byte_stride == 0 ? PackedBytes(s) : s.byte_stride);
  if (s.layout == PoseLayout::kLocalTrs) {
    if (!IsFinite(local)) return;
    if (s.translation_offset >= 0) std::memcpy(at + s.translation_offset, &local.translation, 12);
    const float q[4] = {local.rotation.x, local.rotation.y, local.rotation.z, local.rotation.w};
    const float wxyz[4] = {q[3], q[0], q[1], q[2]};
    std::memcpy(at + s.rotation_offset, s.rotation_order == QuatOrder::kXyzw ? q : wxyz, 16);
    if (s.scale_offset >= 0) std::memcpy(at + s.scale_offset, &local.scale, 12);
    return;
  }
  std::array<float, 12> m = AffineOf(in_model);
  if (s.layout == PoseLayout::kSkinningMatrix) {
    const std::array<float, 12> a = m;  // a * inverse_bind, the latter column-major 4x4
    for (int32_t r = 0; r < 3; ++r)
      for (int32_t c = 0; c < 4; ++c)
        m[r * 4 + c] = a[r * 4] * inverse_bind[c * 4] + a[r * 4 + 1] * inverse_bind[c * 4 + 1] +
                       a[r * 4 + 2] * inverse_bind[c * 4 + 2] + (c == 3 ? a[r * 4 + 3] : 0.0f);
  }
  for (float v : m)
    if (!std::isfinite(v)) return;
  if (s.matrix_form == MatrixForm::kRowMajor3x4) {
    std::memcpy(at, m.data(), sizeof(float) * 12);
    return;
  }
  float column_major[16];
  for (int32_t c = 0; c < 4; ++c) {
    for (int32_t r = 0; r < 3; ++r) column_major[c * 4 + r] = m[r * 4 + c];
    column_major[c * 4 + 3] = c == 3 ? 1.0f : 0.0f;
  }
  std::memcpy(at, column_major, sizeof(column_major));
}

}  // namespace

Result<std::unique_ptr<VrmAvatar>> VrmAvatar::Bind(World& world, std::shared_ptr<const VrmAvatarArchetype> kind,
                                                   const Transform& model_world) {
  VrmAvatarBinding binding;
  binding.model_world = model_world;
  return Bind(world, std::move(kind), binding);
}

Result<std::unique_ptr<VrmAvatar>> VrmAvatar::Bind(World& world, std::shared_ptr<const VrmAvatarArchetype> kind,
                                                   const VrmAvatarBinding& binding) {
  if (kind == nullptr) return Error{ErrorCode::kNullBuffer, -1, "kind", "no avatar archetype"};
  const int32_t bones = kind->bone_count();
  if (Error e = CheckStreams(binding.pose_streams, bones); e.code != ErrorCode::kNone) return e;
  std::unique_ptr<VrmAvatar> a(new VrmAvatar());
  a->kind_ = std::move(kind);
  const SkeletonSettings& sk = a->kind_->asset().skeleton;
  a->model_world = binding.model_world;
  a->animated_local = sk.rest_local;
  a->output_local = sk.rest_local;
  a->output_world.resize(sk.rest_local.size());
  // The host's streams, kept: a null model_world is the avatar's own model frame, and the
  // element maps and inverse binds are copied (the host's may go after Bind).
  const std::size_t stream_count = binding.pose_streams.size();
  a->streams_.assign(binding.pose_streams.begin(), binding.pose_streams.end());
  a->stream_elements_.resize(stream_count);
  a->stream_inverse_binds_.resize(stream_count);
  for (std::size_t i = 0; i < stream_count; ++i) {
    PoseStream& s = a->streams_[i];
    if (s.model_world == nullptr) s.model_world = &a->model_world;
    std::vector<int32_t>& elements = a->stream_elements_[i];
    elements.resize(static_cast<std::size_t>(bones));
    for (int32_t b = 0; b < bones; ++b) elements[b] = s.element_of_bone.empty() ? b : s.element_of_bone[b];
    s.element_of_bone = elements;
    a->stream_inverse_binds_[i].assign(s.inverse_bind.begin(), s.inverse_bind.end());
    s.inverse_bind = a->stream_inverse_binds_[i];
  }
  a->UpdateWorld();
  a->world_ = &world;
  if (a->kind_->character().generation != 0) {
    CharacterBinding b;
    b.archetype = a->kind_->character();
    b.model_world = &a->model_world;
    b.animated_local = a->animated_local;
    b.output_local = a->output_local;
    b.output_world = a->output_world;
    b.pose_streams = a->streams_;
    auto bound = world.BindCharacter(b);
    if (!bound.ok()) {
      a->world_ = nullptr;
      return bound.error();
    }
    a->character = bound.value();
  }
  // Each chain's streams: its nodes' elements and inverse binds, picked from the avatar's
  // by bone (a virtual tip has no bone: -1, and an identity it never reads).
  std::vector<PoseStream> chain_streams(stream_count);
  std::vector<std::vector<int32_t>> chain_elements(stream_count);
  std::vector<std::vector<float>> chain_inverse_binds(stream_count);
  for (std::size_t c = 0; c < a->kind_->chains().size(); ++c) {
    const VrmChain& chain = a->kind_->chains()[c];
    for (std::size_t i = 0; i < stream_count; ++i) {
      const PoseStream& s = a->streams_[i];
      chain_streams[i] = s;
      chain_elements[i].clear();
      chain_inverse_binds[i].clear();
      for (int32_t bone : chain.bone_map) {
        chain_elements[i].push_back(bone < 0 ? -1 : s.element_of_bone[bone]);
        if (s.layout != PoseLayout::kSkinningMatrix) continue;
        if (bone < 0) {
          const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
          chain_inverse_binds[i].insert(chain_inverse_binds[i].end(), identity, identity + 16);
        } else {
          const float* m = s.inverse_bind.data() + 16 * bone;
          chain_inverse_binds[i].insert(chain_inverse_binds[i].end(), m, m + 16);
        }
      }
      chain_streams[i].element_of_bone = chain_elements[i];
      chain_streams[i].inverse_bind = chain_inverse_binds[i];
    }
    ChainBinding b;
    b.archetype = a->kind_->chain_archetypes()[c];
    b.root_parent_world = chain.parent_bone >= 0 ? &a->output_world[chain.parent_bone] : &a->model_world;
    b.animated_local = a->animated_local;
    b.output_local = a->output_local;
    b.bone_map = chain.bone_map;
    b.collider_frames = a->output_world;
    b.pose_streams = chain_streams;
    // The simulated bones' world frames, over the animated ones (see the file note).
    if (a->kind_->chain_writes_world(c)) b.output_world = a->output_world;
    auto bound = world.BindChain(b);
    if (!bound.ok()) {
      Error e = bound.error();
      e.message = "chain " + std::to_string(c) + " (" + chain.settings.name + "): " + e.message;
      (void)a->Unbind();
      return e;
    }
    a->chains.push_back(bound.value());
  }
  return a;
}

namespace {
// The host's local as a rigid frame: its rotation normalised, as the kernel normalises the
// frames it reads (a chain hanging from this bone composes with the unit rotation, so
// output_world must too), or not usable (non-finite, or a rotation too near zero to have a
// direction).
bool UsableLocal(const Transform& host, Transform* local) {
  *local = host;
  if (!IsFinite(host) || !(Dot(host.rotation, host.rotation) > 1e-12f)) return false;  // no direction: bad input
  local->rotation = Normalize(host.rotation);  // math.h's, as the kernel normalises
  return IsFinite(*local);
}
}  // namespace

void VrmAvatar::UpdateWorld() {
  const SkeletonSettings& sk = kind_->asset().skeleton;
  // A bone whose pose comes out non-finite (a NaN or an overflow in the host's model_world or
  // animated_local) keeps its last good world frame, as the kernel holds a chain against bad
  // input, and is counted: nothing non-finite reaches output_world or a stream.
  Transform model_frame = model_world;
  const bool model_ok = UsableLocal(model_world, &model_frame);
  for (std::size_t b = 0; b < sk.parents.size(); ++b) {
    const int32_t p = sk.parents[b];
    Transform local;
    const bool local_ok = UsableLocal(animated_local[b], &local);
    const Transform w = Compose(p >= 0 ? output_world[p] : model_frame, local);
    if (local_ok && (p >= 0 || model_ok) && IsFinite(w)) {
      output_world[b] = w;
    } else {
      ++held_bad_input_;
    }
  }
  // With a character, the character writes the streams inside Step.
  if (character.generation != 0 || kind_->character().generation != 0) return;
  for (const PoseStream& s : streams_) {
    const Transform model = *s.model_world;
    if (!IsFinite(model)) continue;  // the streams keep their last good pose
    for (std::size_t b = 0; b < sk.parents.size(); ++b) {
      const int32_t e = s.element_of_bone[b];
      if (e < 0) continue;
      const int32_t p = sk.parents[b];
      // The local the world frame was made of: the host's (its rotation normalised), or the
      // held frame's.
      Transform local;
      if (!UsableLocal(animated_local[b], &local)) local = Relative(p >= 0 ? output_world[p] : model_world, output_world[b]);
      const Transform in_model = Relative(model, output_world[b]);
      if (!IsFinite(local) || !IsFinite(in_model)) continue;
      WriteBone(s, e, local, in_model, s.inverse_bind.empty() ? nullptr : s.inverse_bind.data() + 16 * b);
    }
  }
}

Error VrmAvatar::Unbind() {
  if (world_ == nullptr) return {};
  // Mid-frame the World refuses unbinds: nothing changes, and the buffers stay bound.
  if (world_->FrameInFlight())
    return Error{ErrorCode::kReentrant, -1, "world", "a frame is in flight: call FinishStep before unbinding"};
  Error first{};
  for (ChainId id : chains) {
    const Error e = world_->UnbindChain(id);
    if (first.code == ErrorCode::kNone) first = e;
  }
  chains.clear();
  if (character.generation != 0) {
    const Error e = world_->UnbindCharacter(character);
    if (first.code == ErrorCode::kNone) first = e;
    character = CharacterId{};
  }
  world_ = nullptr;
  return first;
}

VrmAvatar::~VrmAvatar() {
  // Its buffers go with it: a frame still writing into them is finished first.
  if (world_ != nullptr && world_->FrameInFlight()) world_->FinishStep();
  (void)Unbind();
}

}  // namespace tendon::ports
