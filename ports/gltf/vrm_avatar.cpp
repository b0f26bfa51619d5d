// ports/gltf/vrm_avatar.cpp: VRM springs as kVrm chain archetypes, and avatars bound on one
// character's buffers.
#include "ports/gltf/vrm_avatar.h"

#include <algorithm>
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
bool CanShareChain(const VrmChain& into, const VrmChain& chain, bool across_bones) {
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
                                        bool across_bones) {
  std::vector<VrmChain> out;
  std::vector<std::vector<int32_t>> out_ids;  // per merged chain: the VRM colliders, in order
  for (std::size_t r = 0; r < roots.size(); ++r) {
    VrmChain& chain = roots[r];
    const std::vector<int32_t>& ids = collider_ids[r];
    std::size_t into = out.size();
    for (std::size_t m = 0; m < out.size(); ++m) {
      if (!CanShareChain(out[m], chain, across_bones)) continue;
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

Result<std::vector<VrmChain>> VrmChains(const GltfAsset& asset, bool across_bones) {
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
  return MergeByParentBone(std::move(out), out_collider_ids, across_bones);
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
  auto kind = std::shared_ptr<VrmAvatarArchetype>(new VrmAvatarArchetype());
  // Chains merged across bones first; where the kernel refuses them (a strand's nodes with
  // different collider masks keep a merged chain in one lane, which hangs from one frame),
  // the chains are made again by parent bone, as they were before session 18.
  Error failed{};
  for (const bool across_bones : {true, false}) {
    auto chains = VrmChains(asset, across_bones);
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
  if (failed.code != ErrorCode::kNone) {
    for (ChainArchetypeId built : kind->chain_archetypes_) (void)world.RemoveChainArchetype(built);
    return failed;
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
  return std::shared_ptr<const VrmAvatarArchetype>(std::move(kind));
}

Result<std::unique_ptr<VrmAvatar>> VrmAvatar::Bind(World& world, std::shared_ptr<const VrmAvatarArchetype> kind,
                                                   const Transform& model_world) {
  if (kind == nullptr) return Error{ErrorCode::kNullBuffer, -1, "kind", "no avatar archetype"};
  std::unique_ptr<VrmAvatar> a(new VrmAvatar());
  a->kind_ = std::move(kind);
  const SkeletonSettings& sk = a->kind_->asset().skeleton;
  a->model_world = model_world;
  a->animated_local = sk.rest_local;
  a->output_local = sk.rest_local;
  a->output_world.resize(sk.rest_local.size());
  a->UpdateWorld();
  a->world_ = &world;
  if (a->kind_->character().generation != 0) {
    CharacterBinding b;
    b.archetype = a->kind_->character();
    b.model_world = &a->model_world;
    b.animated_local = a->animated_local;
    b.output_local = a->output_local;
    b.output_world = a->output_world;
    auto bound = world.BindCharacter(b);
    if (!bound.ok()) return bound.error();
    a->character = bound.value();
  }
  for (std::size_t c = 0; c < a->kind_->chains().size(); ++c) {
    const VrmChain& chain = a->kind_->chains()[c];
    ChainBinding b;
    b.archetype = a->kind_->chain_archetypes()[c];
    b.root_parent_world = chain.parent_bone >= 0 ? &a->output_world[chain.parent_bone] : &a->model_world;
    b.animated_local = a->animated_local;
    b.output_local = a->output_local;
    b.bone_map = chain.bone_map;
    b.collider_frames = a->output_world;
    auto bound = world.BindChain(b);
    if (!bound.ok()) {
      Error e = bound.error();
      (void)a->Unbind();
      return e;
    }
    a->chains.push_back(bound.value());
  }
  return a;
}

void VrmAvatar::UpdateWorld() {
  const SkeletonSettings& sk = kind_->asset().skeleton;
  for (std::size_t b = 0; b < sk.parents.size(); ++b) {
    const int32_t p = sk.parents[b];
    output_world[b] = Compose(p >= 0 ? output_world[p] : model_world, animated_local[b]);
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
