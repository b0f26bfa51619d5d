// ports/gltf/vrm_avatar.h: from a .vrm (or any glTF with VRM spring bones) to a swinging,
// ragdoll-able avatar in one call.
//
// What it does:
//   VrmChains             ChainModel::kVrm chain archetypes from an ImportGltf asset: every
//                         spring-bone root's joints' bones, their tails (a child bone or a
//                         virtual tip), each joint's stiffness, drag, gravity and hit radius
//                         on its tail node, and its spring's colliders on the skeleton's
//                         bones (host frames: the avatar's output_world). Roots that hang
//                         from the same bone share one chain (one lane per avatar).
//   VrmAvatarArchetype    builds those chain archetypes, and the character archetype when
//                         the asset has a VRM humanoid (mapped by its bone table), in a World
//                         once; any number of avatars share them.
//   VrmAvatar             one avatar on buffers of its own: the character over the whole
//                         skeleton, and every chain on the character's buffers (its root
//                         hanging from output_world of its parent bone).
// Three lines from a file on disk to an avatar that swings and can fall:
//   auto kind = tendon::ports::VrmAvatarArchetype::Load(world, "godette.vrm").value();
//   auto avatar = tendon::ports::VrmAvatar::Bind(world, kind, model_frame).value();
//   world.Step(dt);  // each frame, after writing avatar->model_world (and animated_local)
// then avatar->output_local is the pose to render, and world.ActivateCharacter(
// avatar->character) ragdolls it.
// What it does NOT do: render, skin, sample clips for the host (SampleClip does), or
// simulate a spring's center space (kVrm chains keep inertia in world space; `centers`
// names the springs whose center is ignored). An avatar without a humanoid has no
// character: call UpdateWorld() before each Step so output_world follows the animation.
// Threading: the World's thread. Memory: an avatar owns its buffers (they must not move
// while bound, so it lives behind a unique_ptr); binding allocates, stepping does not.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ports/gltf/gltf_import.h"
#include "tendon/tendon.h"

namespace tendon::ports {

// One chain of an avatar: the spring-bone roots that hang from one bone, their joints and
// tails (each node keeps its own spring's colliders through its collider mask).
struct VrmChain {
  ChainArchetypeSettings settings{};  // model kVrm
  std::vector<int32_t> bone_map{};    // per chain node: its skeleton bone; -1 for a virtual tip
  int32_t parent_bone = -1;           // the bone its first root hangs from (root_parent_world; each root names its own in ChainBone::parent_frame); -1: the model frame
  int32_t spring = -1;                // index into VrmSpringBones::springs
};

// The chains of every spring of `asset` (none for an asset without spring bones). Refuses,
// naming the spring and joint, a joint whose bone or tail is not in the skeleton, a chain
// longer than Tendon's node limit, and a spring with more colliders than a chain takes.
// across_bones: roots on different bones whose strands share one shape join one chain
// (each root on its bone through ChainBone::parent_frame); false: a chain per parent bone.
Result<std::vector<VrmChain>> VrmChains(const GltfAsset& asset, bool across_bones = true);

struct VrmAvatarOptions {
  // Build the character (ragdoll) when the asset has a VRM humanoid.
  bool character = true;
  // Extra settings for the character archetype (its skeleton and humanoid table come from
  // the asset).
  float total_mass = 60.0f;  // kg
  // kClips: the character's joint limits are learned from every clip of the asset (sampled
  // at 30 fps; an asset without clips is refused); kTable: the default table.
  LimitSource limit_source = LimitSource::kTable;
};

class VrmAvatarArchetype {
 public:
  // Imports the file (ImportGltf) and builds it.
  static Result<std::shared_ptr<const VrmAvatarArchetype>> Load(World& world, const std::string& path,
                                                                const VrmAvatarOptions& options = {});
  // From a file in memory (`name` names it in errors; see ImportGltf).
  static Result<std::shared_ptr<const VrmAvatarArchetype>> Load(World& world, std::span<const uint8_t> bytes,
                                                                const std::string& name,
                                                                const VrmAvatarOptions& options = {});
  static Result<std::shared_ptr<const VrmAvatarArchetype>> Build(World& world, GltfAsset asset,
                                                                 const VrmAvatarOptions& options = {});

  const GltfAsset& asset() const { return asset_; }
  const std::vector<VrmChain>& chains() const { return chains_; }
  const std::vector<ChainArchetypeId>& chain_archetypes() const { return chain_archetypes_; }
  CharacterArchetypeId character() const { return character_; }  // null without a humanoid
  int32_t joint_count() const { return joint_count_; }            // VRM joints over all chains
  std::vector<int32_t> centers{};  // springs whose center space is ignored (see the file note)

 private:
  GltfAsset asset_;
  std::vector<VrmChain> chains_;
  std::vector<ChainArchetypeId> chain_archetypes_;
  CharacterArchetypeId character_{};
  int32_t joint_count_ = 0;
};

class VrmAvatar {
 public:
  // Binds one avatar at `model_world` in its rest pose.
  static Result<std::unique_ptr<VrmAvatar>> Bind(World& world, std::shared_ptr<const VrmAvatarArchetype> kind,
                                                 const Transform& model_world);
  VrmAvatar(const VrmAvatar&) = delete;
  VrmAvatar& operator=(const VrmAvatar&) = delete;
  // Unbinds what Bind bound if it still is: destroy avatars before their World.
  ~VrmAvatar();
  // Unbinds the chains, then the character (which hands its bones back to the animation).
  // Idempotent.
  Error Unbind();

  // Forward kinematics of model_world and animated_local into output_world, for an avatar
  // without a character (the character writes output_world itself inside Step).
  void UpdateWorld();

  const VrmAvatarArchetype& kind() const { return *kind_; }

  // The host's side: written by the host each frame (model_world, animated_local), read
  // after Step (output_local, output_world).
  Transform model_world{};
  std::vector<Transform> animated_local, output_local, output_world;
  CharacterId character{};
  std::vector<ChainId> chains;

 private:
  VrmAvatar() = default;
  World* world_ = nullptr;  // while bound
  std::shared_ptr<const VrmAvatarArchetype> kind_;
};

}  // namespace tendon::ports
