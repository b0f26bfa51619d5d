// tendon/chain_settings.h: plain data that describes a verlet chain archetype.
//
// What it does: a bone hierarchy (parents before children, branching allowed) with rest
// local transforms, per-chain solver settings, optional per-node overrides and colliders.
// World::BuildChainArchetype validates it and turns it into an immutable archetype.
// ChainBinding is an instance of one over the host's buffers (World::BindChain), and
// SimulatePredicate the host's replacement for the chains' distance test.
// What it does NOT do: anything at run time; these are values a host can author, save
// and load. Every field documents its unit, range and what "disabled" means.
// Threading: plain values. Memory: std::vector members, owned by the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tendon/ids.h"
#include "tendon/math.h"
#include "tendon/pose_layout.h"

namespace tendon {

// The update rule a chain archetype runs.
enum class ChainModel : uint8_t {
  // Tendon's (below): the world's fixed substeps, stiffness as a pull toward the animated
  // pose, world gravity and wind times dt^2, rotations from the solved positions at
  // writeback, root and render interpolation, the teleport guard.
  kTendon,
  // VRM spring bones as three-vrm 3.5.5 updates them (docs/vrm.md, "ChainModel::kVrm"),
  // one joint per linked node (its parent bone; the node is the joint's tail): one step per
  // frame of the frame's dt (World::Step's dt, clamped to max_substeps fixed steps), no
  // interpolation. Per step, parents first: next = cur + (cur - prev) * damping +
  // axis * stiffness * dt + gravity_push * dt, where axis is the parent bone's rest
  // direction turned by its own simulated parent; the length is restored, then each
  // collider pushes out by (radius + the node radius, unscaled) with the length restored
  // after each hit; the parent bone's world rotation is its rest rotation under its
  // simulated parent, swung by the shortest arc from axis to the solved direction, and
  // that rotation is what is written. Fields mean: damping = 1 - VRM dragForce, stiffness
  // = VRM stiffness (1/s, [0, 1000]), gravity_push = gravityDir * gravityPower (m/s),
  // node radius = hitRadius; world gravity and gravity_scale do not act; wind acts as
  // wind * wind_scale * dt. A non-first child of a node is carried rigidly by its
  // parent's rotation (VRM 0.x branches). A freshly bound chain starts at rest in its
  // bind-time pose (three-vrm's load); a chain woken after culling starts at rest in its
  // current pose (three-vrm's reset()).
  kVrm,
};

// Solver settings of one chain. The verlet step per substep (reference:
// bonephysics-verlet-chains-roblox): velocity = (current - previous) * damping;
// current += velocity + (gravity * gravity_scale + wind * wind_scale) * dt^2;
// current = lerp(current, animated, stiffness); then the link restores the rest length.
struct ChainSettings {
  // Fraction of velocity kept per substep. Range [0, 1]; 1 = undamped, 0 = no inertia.
  float damping = 0.92f;
  // Pull toward the animated pose per substep. Range [0, 1]; 0 lets gravity own the chain
  // (disabled), 1 pins every node to the animation.
  float stiffness = 0.1f;
  // Multiplier on WorldSettings::gravity. Range [-100, 100]; 0 disables gravity.
  float gravity_scale = 1.0f;
  // Multiplier on the world's wind. Range [-100, 100]; 0 disables wind.
  float wind_scale = 1.0f;
  // Collision radius of every node, metres. Range [0, 10]; 0 = points.
  float node_radius = 0.0f;
  // ChainModel::kVrm only: gravity as a displacement rate (m/s), VRM's gravityDir *
  // gravityPower. Finite, each component within [-1000, 1000]; zero disables it.
  Vec3 gravity_push{};
};

// Per-node values that replace the chain's. Unset fields keep the chain's value.
struct ChainNodeOverride {
  int32_t node = -1;  // index into ChainArchetypeSettings::bones
  std::optional<float> damping{};
  std::optional<float> stiffness{};
  std::optional<float> gravity_scale{};
  std::optional<float> wind_scale{};
  std::optional<float> radius{};
  std::optional<Vec3> gravity_push{};  // kVrm only (ChainSettings::gravity_push)
  // Which colliders act on this node: bit c for colliders[c]. Unset: all of them. (Several
  // springs with different collider groups can then share one chain, and so one lane.)
  std::optional<uint32_t> collider_mask{};
  // A pinned node copies the animated pose every substep, like a root. Default: roots only.
  std::optional<bool> pinned{};
};

struct ChainBone {
  // Index of the parent bone in the same list, or -1 for a chain root (pinned to the
  // animated pose). Parents must come before their children.
  int32_t parent = -1;
  // Rest transform relative to the parent (for a root: relative to the binding's
  // root_parent_world, or to its parent_frame). The rest length of a link is
  // |rest_local.translation * parent scale|; it must be at least 1e-6 m.
  Transform rest_local{};
  // A node with no host bone (VRM's virtual tip at the end of a leaf joint): a leaf, never
  // a root, whose local is rest_local every frame; bone_map's entry for it is ignored, and
  // nothing is read from or written to the host's buffers for it.
  bool virtual_tip = false;
  // A root only: the host frame it hangs from, an index into ChainBinding::collider_frames
  // (the host's world pose of its skeleton), instead of root_parent_world; -1: the
  // binding's root_parent_world. It lets one chain hold every spring of an avatar, whose
  // roots hang from different bones (hair from the head, a ribbon from the chest), and so
  // be read, checked and culled once a frame instead of once per parent bone. The roots
  // of a chain may name different frames only where each root's subtree is a lane of its
  // own: a kVrm chain whose roots' subtrees all have one shape and whose colliders all sit
  // on host frames (BuildChainArchetype refuses the rest, naming the root).
  int32_t parent_frame = -1;
};

enum class ColliderShape : uint8_t {
  kSphere,   // centre `a`, radius
  kCapsule,  // segment a..b, radius
  kPlane,    // point `a`, unit normal `b`; nodes stay on the side the normal points to
};

struct ColliderSettings {
  ColliderShape shape = ColliderShape::kSphere;
  // Spheres and capsules only: keep nodes inside the shape instead of outside.
  bool inside = false;
  // The frame the collider moves with: a bone of this chain (its animated world frame)
  // when >= 0; otherwise host frame `frame` of ChainBinding::collider_frames.
  int32_t bone = -1;
  int32_t frame = 0;
  // In the attach frame: sphere centre, capsule end A, plane point.
  Vec3 a{};
  // In the attach frame: capsule end B, or the plane's unit normal.
  Vec3 b{0.0f, 1.0f, 0.0f};
  // Metres, range [0, 100] (ignored by planes). Node radii add to it (inside: subtract).
  float radius = 0.05f;
};

struct ChainArchetypeSettings {
  std::string name{};  // for errors and traces only
  ChainModel model = ChainModel::kTendon;
  // The teleport guard (WorldSettings::teleport_distance / _angle): unset means on for
  // kTendon and off for kVrm (three-vrm has none; a kVrm chain then follows a teleport as
  // three-vrm does, with one frame of inertia).
  std::optional<bool> teleport_guard{};
  std::vector<ChainBone> bones{};
  ChainSettings settings{};
  std::vector<ChainNodeOverride> overrides{};
  std::vector<ColliderSettings> colliders{};
  // The host-body collision groups this chain collides with (HostBodySettings'
  // collision_group, tendon/host_body.h): a host sphere, capsule or box whose group & mask
  // != 0 is one more collider of the chain, pushing its nodes out to its surface grown by
  // the node radius, one way (kTendon: its links too against spheres and capsules; boxes
  // test nodes only). A kVrm chain's tails meet them under the VRM rule its own colliders
  // follow (the node radius is the hit radius). 0 = none: the default, and it costs nothing
  // (the chain's lanes and results are what they were). Triggers push nothing.
  uint32_t host_body_mask = 0;
  // The nearest matching host bodies a chain collides with per frame (each frame's
  // nearest to each of its lanes' bounds, found through a broad phase over the host
  // bodies), range [0, 16]; each is a collider slot in every lane of the chain's kind
  // whether used or not, and colliders.size() + max_host_bodies must stay within 32. 0
  // with a mask collides with none. Read only when host_body_mask != 0.
  int32_t max_host_bodies = 4;
};

// An instance of a chain archetype over host buffers (all read or written every Step the
// chain simulates; all must stay valid until UnbindChain).
struct ChainBinding {
  ChainArchetypeId archetype{};
  // The world transform the archetype's roots are relative to (e.g. the head bone's).
  const Transform* root_parent_world = nullptr;
  // The animated local transform of every bone: in archetype order, or where bone_map
  // says.
  std::span<const Transform> animated_local{};
  // Where the simulated local transforms go (same indexing). May alias animated_local
  // when the host re-animates every frame. The address of bone 0's output is the identity
  // of the binding: binding the same bones again returns the existing handle.
  std::span<Transform> output_local{};
  // Optional: bone k of the archetype is element bone_map[k] of animated_local and
  // output_local (a chain inside a whole-skeleton buffer). Empty: element k. Indices
  // must be distinct and inside both spans.
  std::span<const int32_t> bone_map{};
  // World frames for colliders attached to host frames (ColliderSettings::frame).
  std::span<const Transform> collider_frames{};
  // Optional: up to 4 more places the bones are written, in the host's layouts
  // (tendon/pose_layout.h): local TRS in its bone struct, model-space matrices, a skinning
  // palette. Bones are the archetype's, in settings order. Copied at bind.
  std::span<const PoseStream> pose_streams{};
  // Optional: every bone's world transform (root_parent_world, or its root's frame,
  // composed with the written locals), indexed as output_local (bone_map), written
  // whenever output_local is (virtual tips never). A host that keeps whole-skeleton world
  // poses (a character's output_world) gets the simulated bones there without a pass of
  // its own. No chain may read these elements as a frame (root_parent_world,
  // collider_frames) in the same Step: chains step side by side.
  std::span<Transform> output_world{};
};

// Replaces the distance test: return true when the chain should simulate this frame.
// Called once per bound chain per frame, from the thread that called Step.
struct SimulatePredicate {
  bool (*should_simulate)(ChainId chain, Vec3 root_world, void* user) = nullptr;
  void* user = nullptr;
};

}  // namespace tendon
