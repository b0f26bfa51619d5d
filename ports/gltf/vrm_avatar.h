// ports/gltf/vrm_avatar.h: from a .vrm (or any glTF with VRM spring bones) to a swinging,
// ragdoll-able avatar in one call, with the skeleton and skins a host needs to skin it.
//
// What it does:
//   VrmChains             ChainModel::kVrm chain archetypes from an ImportGltf asset: every
//                         spring-bone root's joints' bones, their tails (a child bone or a
//                         virtual tip), each joint's stiffness, drag, gravity and hit radius
//                         on its tail node, and its spring's colliders on the skeleton's
//                         bones (host frames: the avatar's output_world). Roots whose
//                         strands share a shape share one chain, a lane per strand; the
//                         others on one bone share one chain (one lane).
//   VrmAvatarArchetype    checks the asset (a hand-built one too: sizes, parents before
//                         children, finite rest poses, every bone index), builds those chain
//                         archetypes, and the character archetype when the asset has a VRM
//                         humanoid (mapped by its bone table), in a World once; any number
//                         of avatars share them. It offers the skeleton (names, parents,
//                         rest pose) and the skins (joints, inverse binds) to map Tendon's
//                         bones to the host's. A refused Build leaves nothing in the World;
//                         a kind removes its archetypes from the World when it is dropped.
//   VrmAvatar             one avatar on buffers of its own: the character over the whole
//                         skeleton, and every chain on the character's buffers (its root
//                         hanging from output_world of its parent bone), and up to 4 pose
//                         streams of the host's (a skinning palette, model matrices, local
//                         TRS in its bone struct) indexed by the avatar's bones.
// Three lines from a file on disk to an avatar that swings and can fall:
//   auto kind = tendon::ports::VrmAvatarArchetype::Load(world, "godette.vrm").value();
//   auto avatar = tendon::ports::VrmAvatar::Bind(world, kind, model_frame).value();
//   world.Step(dt);  // each frame, after writing avatar->model_world (and animated_local)
// After Step every output holds the simulated pose: output_local (to render or retarget),
// output_world (the chains write their bones' world frames there in the Step, over the
// animated ones the character wrote) and every pose stream. world.ActivateCharacter(
// avatar->character) ragdolls it.
// What it does NOT do: render, skin (the host's GPU does, from a kSkinningMatrix stream),
// sample clips for the host (SampleClip does), or simulate a spring's center space (kVrm
// chains keep inertia in world space; `centers` names the springs whose center is
// ignored). An avatar without a humanoid has no character: call UpdateWorld() before each
// Step so output_world and the streams follow the animation (the chains then write their
// bones inside the Step). Bones below a simulated bone that no spring simulates, and the
// bones of a chain that another chain hangs from or collides with (chain_writes_world()
// false: chains step side by side, so one may not write what another reads), keep their
// animated world frames in output_world and the matrix streams.
// Threading: the World's thread. Memory: an avatar owns its buffers (they must not move
// while bound, so it lives behind a unique_ptr); binding allocates, stepping does not. A
// kind and an avatar keep a pointer to their World: drop both before the World (the C ABI
// does so in tendon_world_destroy), or call VrmAvatarArchetype::Release first.
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
// strand_lanes (issue 41): roots whose strand shape another root shares join only chains of
// that shape (one lane per strand, several lanes per avatar: docs/chains.md "Several lanes
// per instance"), and the other roots only each other; false: every root on a bone joins
// one chain whatever its shape (one lane for strands of different lengths; before issue 41).
Result<std::vector<VrmChain>> VrmChains(const GltfAsset& asset, bool across_bones = true, bool strand_lanes = true);

struct VrmAvatarOptions {
  // Build the character (ragdoll) when the asset has a VRM humanoid.
  bool character = true;
  // Extra settings for the character archetype (its skeleton and humanoid table come from
  // the asset).
  float total_mass = 60.0f;  // kg
  // kClips: the character's joint limits are learned from every clip of the asset (sampled
  // at 30 fps; an asset without clips is refused); kTable: the default table.
  LimitSource limit_source = LimitSource::kTable;
  // Spread an avatar's strands over lanes by shape (VrmChains' strand_lanes). Results are
  // the same either way (strands are independent in VRM's rule); only the speed differs.
  // C++ only: the C ABI builds with the default.
  bool strand_lanes = true;
  // What the character's parts do while it stands animated (CharacterSettings::
  // inactive_bodies, docs/living-world.md): kNone (the default, costs nothing) lets ragdolls
  // pass through; kKinematic keeps kinematic copies of its parts that active ragdolls land on.
  CharacterInactiveBodies inactive_bodies = CharacterInactiveBodies::kNone;
};

class VrmAvatarArchetype {
 public:
  VrmAvatarArchetype(const VrmAvatarArchetype&) = delete;
  VrmAvatarArchetype& operator=(const VrmAvatarArchetype&) = delete;
  // Removes its archetypes from the World (Release).
  ~VrmAvatarArchetype();

  // Imports the file (ImportGltf) and builds it.
  static Result<std::shared_ptr<const VrmAvatarArchetype>> Load(World& world, const std::string& path,
                                                                const VrmAvatarOptions& options = {});
  // From a file in memory (`name` names it in errors; see ImportGltf).
  static Result<std::shared_ptr<const VrmAvatarArchetype>> Load(World& world, std::span<const uint8_t> bytes,
                                                                const std::string& name,
                                                                const VrmAvatarOptions& options = {});
  // Checks the asset first (a hand-built one may be anything): names, parents and
  // rest_local of one size, each parent before its bone, finite rest poses with unit
  // rotations, and every bone index (joints, tails, colliders, springs' centers, skins,
  // humanoid, clips) inside the skeleton; refused naming the field and index. Whatever it
  // built before a refusal is removed from the World again.
  static Result<std::shared_ptr<const VrmAvatarArchetype>> Build(World& world, GltfAsset asset,
                                                                 const VrmAvatarOptions& options = {});

  // Removes the chain and character archetypes from the World now; the destructor does the
  // same, so a host only calls it to drop a kind after its World (call it before the
  // World goes) or to learn why an archetype stayed: kInUse while something is bound to
  // one (an avatar holds its kind, so that is only instances bound by hand). Idempotent;
  // the kind's avatars must be unbound first. Refused (kReentrant) mid-frame.
  Error Release() const;

  // The avatar's bones, in the order of every per-bone buffer (output_local, a stream's
  // element_of_bone and inverse_bind): names, parents (before their children), rest pose.
  const SkeletonSettings& skeleton() const { return asset_.skeleton; }
  int32_t bone_count() const { return static_cast<int32_t>(asset_.skeleton.parents.size()); }
  // The names as C strings (the C ABI lends them; valid while the kind lives).
  std::span<const char* const> bone_name_pointers() const { return name_pointers_; }
  // The file's skins: per skin its joints (avatar bones) and their inverse bind matrices.
  const std::vector<GltfSkin>& skins() const { return asset_.skins; }
  // Whether chain c writes its bones' world frames into an avatar's output_world (false
  // when a chain reads one of its bones as a frame: see the file note).
  bool chain_writes_world(std::size_t c) const { return c < writes_world_.size() && writes_world_[c] != 0; }

  const GltfAsset& asset() const { return asset_; }
  const std::vector<VrmChain>& chains() const { return chains_; }
  const std::vector<ChainArchetypeId>& chain_archetypes() const { return chain_archetypes_; }
  CharacterArchetypeId character() const { return character_; }  // null without a humanoid
  int32_t joint_count() const { return joint_count_; }            // VRM joints over all chains
  std::vector<int32_t> centers{};  // springs whose center space is ignored (see the file note)

 private:
  VrmAvatarArchetype() = default;
  GltfAsset asset_;
  std::vector<VrmChain> chains_;
  // mutable: Release forgets what it removed (a kind is shared as const).
  mutable World* world_ = nullptr;
  mutable std::vector<ChainArchetypeId> chain_archetypes_;
  mutable CharacterArchetypeId character_{};
  int32_t joint_count_ = 0;
  std::vector<uint8_t> writes_world_;
  std::vector<const char*> name_pointers_;
};

// What VrmAvatar::Bind binds besides the avatar's own buffers.
struct VrmAvatarBinding {
  // The model frame the avatar starts at (then avatar->model_world, written by the host).
  Transform model_world{};
  // Up to 4 more places every bone is written, in the host's layouts (tendon/pose_layout.h),
  // indexed by the avatar's bones (skeleton order): element_of_bone has one entry per bone
  // (-1: not written; empty: bone k to element k) and a kSkinningMatrix stream's
  // inverse_bind 16 floats per bone. For a skin's palette, element_of_bone maps each of the
  // skin's joints to its slot and every other bone to -1, and inverse_bind holds each
  // joint's inverse bind (VrmAvatarPalette builds both). A stream whose model_world is null
  // is written in the avatar's model space (its model_world, read every Step), not in world
  // space: point model_world at an identity Transform for world space. Copied at bind.
  std::span<const PoseStream> pose_streams{};
};

// element_of_bone and inverse_bind for a kSkinningMatrix stream of `skin`'s palette (slot j
// for the skin's joint j), as VrmAvatarBinding wants them; empty spans for a skin index
// out of range.
struct VrmAvatarPalette {
  std::vector<int32_t> element_of_bone;
  std::vector<float> inverse_bind;
};
VrmAvatarPalette PaletteOfSkin(const VrmAvatarArchetype& kind, int32_t skin);

class VrmAvatar {
 public:
  // Binds one avatar at `model_world` in its rest pose.
  static Result<std::unique_ptr<VrmAvatar>> Bind(World& world, std::shared_ptr<const VrmAvatarArchetype> kind,
                                                 const Transform& model_world);
  // The same, with the host's pose streams (refused naming the stream and field).
  static Result<std::unique_ptr<VrmAvatar>> Bind(World& world, std::shared_ptr<const VrmAvatarArchetype> kind,
                                                 const VrmAvatarBinding& binding);
  VrmAvatar(const VrmAvatar&) = delete;
  VrmAvatar& operator=(const VrmAvatar&) = delete;
  // Unbinds what Bind bound if it still is: destroy avatars before their World.
  ~VrmAvatar();
  // Unbinds the chains, then the character (which hands its bones back to the animation).
  // Idempotent.
  Error Unbind();

  // Forward kinematics of model_world and animated_local into output_world, and every
  // bone into the pose streams, for an avatar without a character (the character writes
  // both itself inside Step). The chains then write their bones inside the Step. A bone
  // whose pose comes out non-finite (NaN or overflow in the host's input) keeps its last
  // good world frame and is counted in held_bad_input().
  void UpdateWorld();
  // Bones UpdateWorld held at their last good frame against non-finite host input, in all.
  int64_t held_bad_input() const { return held_bad_input_; }

  const VrmAvatarArchetype& kind() const { return *kind_; }

  // The host's side: written by the host each frame (model_world, animated_local), read
  // after Step (output_local, output_world, the pose streams: all the simulated pose).
  Transform model_world{};
  std::vector<Transform> animated_local, output_local, output_world;
  CharacterId character{};
  std::vector<ChainId> chains;

 private:
  VrmAvatar() = default;
  World* world_ = nullptr;  // while bound
  std::shared_ptr<const VrmAvatarArchetype> kind_;
  // The host's streams as checked at bind, for UpdateWorld (an avatar without a character).
  std::vector<PoseStream> streams_;
  std::vector<std::vector<int32_t>> stream_elements_;
  std::vector<std::vector<float>> stream_inverse_binds_;
  int64_t held_bad_input_ = 0;
};

}  // namespace tendon::ports
