// kernel/chains/chain_archetype.h: a validated, immutable chain archetype.
//
// Design: BuildChainArchetype does every check and every derived computation once
// (child lists, rest lengths from the rest pose, per-node parameters with overrides
// applied, collider kinds), so binding and stepping never re-validate settings. The
// topology (parents and collider kinds) is what decides which lanes a chain shares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tendon/chain_settings.h"
#include "tendon/errors.h"

namespace tendon::detail {

inline constexpr int32_t kMaxChainNodes = 128;
inline constexpr int32_t kMaxChainColliders = 32;
// Host frame indices (ColliderSettings::frame, ChainBone::parent_frame) stay below this: a
// skeleton has far fewer bones, and 1 + an index never overflows.
inline constexpr int32_t kMaxHostFrames = 1 << 24;

// What decides which lanes chains share: the update rule, the parents and the collider kinds.
struct ChainTopologyKey {
  ChainModel model = ChainModel::kTendon;
  std::vector<int32_t> parent;
  std::vector<uint8_t> collider_kind;
  std::vector<uint32_t> collider_mask;  // per node: bit c when collider c acts on it
  // Host-body slots (the last collider slots): they carry box rows, so a chain with them
  // never shares a group with one whose own colliders have the same kinds and masks.
  int32_t host_slots = 0;
  friend bool operator<(const ChainTopologyKey& a, const ChainTopologyKey& b) {
    if (a.model != b.model) return a.model < b.model;
    if (a.host_slots != b.host_slots) return a.host_slots < b.host_slots;
    if (a.parent != b.parent) return a.parent < b.parent;
    if (a.collider_kind != b.collider_kind) return a.collider_kind < b.collider_kind;
    return a.collider_mask < b.collider_mask;
  }
};

// Every per-node vector below is in lane order: strand by strand, each strand's nodes in
// their settings order (the identity for a chain of one strand). settings_node and lane_node
// translate, so that what a host sees (bone maps, buffers, GetNodePositions, errors) stays in
// the settings' order.
struct ChainArchetype {
  std::string name;
  int32_t node_count = 0;  // every node of the chain
  // A kVrm chain whose roots' subtrees ("strands") all have one shape, and whose colliders
  // all sit on host frames, takes one lane per strand, and its topology (parents, first
  // children, collider masks) is one strand's. Godette's 7 hair strands on the head are 7
  // lanes of a 3-node topology, not one lane of a 21-node one: a lone avatar fills a block
  // instead of leaving 7 of its 8 lanes padding, and the strands (independent of each other
  // in VRM's rule) are solved side by side. Every other chain is one strand: one lane.
  int32_t strands = 1;
  int32_t lane_nodes = 0;  // nodes per lane: topology.parent.size()
  std::vector<int32_t> parent;         // per node: its parent (lane order), -1 for a root
  std::vector<int32_t> settings_node;  // per node: its index in settings.bones
  std::vector<int32_t> lane_node;      // per settings bone: its index in lane order
  // A lane's collider slots (the topology's collider_kind, one row set each) and which of
  // the chain's colliders they hold. Per strand: bit j when slot j acts on the strand's
  // nodes (its lanes' collider switches; all ones for a chain whose per-node masks stay in
  // its topology), and per slot the chain collider it holds. Slot j holds collider j,
  // except in a chain of strands that each name the same number of colliders of the same
  // kinds in order: there slot j holds the strand's own j-th collider, so a chain whose
  // strands name different colliders (two springs merged, a head's and a chest's) solves
  // as many slots per lane as one strand names, not all of them.
  std::vector<uint32_t> strand_colliders;
  std::vector<std::vector<int32_t>> strand_slot_collider;
  // Per strand: bit j when slot j is switched on and holds a collider on a host frame (what
  // the chain's read writes into its lanes).
  std::vector<uint32_t> strand_host_slots;
  std::vector<uint8_t> collider_kind;  // per chain collider (topology.collider_kind is per slot)
  ChainTopologyKey topology;
  std::vector<int32_t> first_child;  // per lane node (one strand's)
  std::vector<Transform> rest_local;
  // Per node, overrides applied.
  std::vector<float> rest_length, damping, stiffness, gravity_scale, wind_scale, radius, pinned;
  std::vector<ColliderSettings> colliders;
  bool uniform_parameters = true;  // no override changes damping, stiffness or the scales
  bool teleport_guard = true;
  // Virtual tips (ChainBone::virtual_tip): no host bone behind them.
  std::vector<uint8_t> virtual_tip;
  bool any_virtual_tip = false;
  // kVrm: per node, its gravity push (m/s) and the unit direction of its rest translation
  // in its parent's frame (the rest direction of the joint it is the tail of).
  std::vector<Vec3> gravity_push, rest_direction;
  bool any_node_collider = false;  // a collider sits on one of the chain's own nodes (bone >= 0)
  // kVrm, when no node but a root is pinned, every leaf is a virtual tip and no collider
  // sits on a node: the pose kernel composes only the roots' animated frames, since
  // nothing else of this chain reads another node's (the solve takes each joint's head and
  // rotation from its parent's solve, and the writeback a joint's rotation from the
  // solve). A block holding a lane that snaps or holds its input, or a chain with matrix
  // streams, still composes every node (ChainSystem::Pose).
  bool vrm_roots_pose = false;
  uint32_t host_colliders = 0;     // bit c when collider c sits on a host frame (bone < 0)
  // The colliders on host frames, in chain order, for the read's collider kernel
  // (ChainKernels::collider_worlds): each one's chain index and frame; per chain collider
  // its place among them (-1 on a node); and their shapes in their frames as
  // kColliderLocalRows rows of host_collider_stride floats (a, b, radius, plane and capsule
  // masks), zero-padded to whole blocks.
  std::vector<int32_t> host_collider, host_collider_frame, host_collider_place;
  std::vector<float> host_collider_local;
  int32_t host_collider_stride = 0;
  // Per strand (lane order): the host frame its root hangs from (ChainBone::parent_frame),
  // -1 for the binding's root_parent_world. root_frames: some strand names a frame.
  std::vector<int32_t> strand_root_frame;
  std::vector<int32_t> root_frames_used;  // the frames roots name, distinct, ascending
  // Per strand: its frame's index in root_frames_used (-1: root_parent_world); empty when
  // no root names a frame.
  std::vector<int32_t> strand_root_slot;
  bool root_frames = false;
  int32_t collider_frames_needed = 0;  // 1 + the highest host frame index colliders and roots use
  std::vector<int32_t> collider_frames_used;  // the host frames colliders use, distinct, ascending
  // Those and root_frames_used together, distinct, ascending: the frames the read checks
  // (each once, where a frame holds both a collider and a root).
  std::vector<int32_t> frames_checked;
  // Host bodies (ChainArchetypeSettings::host_body_mask): the mask, and the lane's collider
  // slots that hold the frame's nearest matching host shapes, host_body_slots of them from
  // host_body_first_slot (kCapsuleOutside slots acting on every node; a sphere is a capsule
  // of zero length; unused slots hold FarCollider). 0 slots when the mask is 0.
  uint32_t host_body_mask = 0;
  int32_t host_body_slots = 0;
  int32_t host_body_first_slot = 0;
  float max_node_radius = 0;  // the largest node radius: what the host shapes' bounds grow by
};
inline constexpr int32_t kMaxChainHostBodies = 16;

// Validates `settings`; on success fills `out`. The error names the item and field.
Error BuildChainArchetype(const ChainArchetypeSettings& settings, ChainArchetype* out);

}  // namespace tendon::detail
