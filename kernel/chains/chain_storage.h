// kernel/chains/chain_storage.h: what the chain system keeps, for its own files only.
//
// What it does: defines ChainSystem's Group (a topology's blocks of lanes, hot and cold
// slabs, and the lists the phases walk), ArchetypeSlot and Slot (one bound chain: its
// host buffers, its lanes, its last good input), the stack scratch for a chain's world
// pose, and the helpers more than one of the system's files use. The system's files
// (chain_*.cpp) each hold one concept: binding, lanes, the budget, the dependency passes,
// the pose, the solve, the writeback, pose streams, queries.
// What it does NOT do: anything a file outside kernel/chains/chain_*.cpp may use: the
// World sees only chain_system.h.
// Threading and memory: as chain_system.h says.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel/chains/chain_system.h"

#if defined(__GNUC__) || defined(__clang__)
#define TENDON_NOINLINE __attribute__((noinline))
#else
#define TENDON_NOINLINE
#endif

namespace tendon::detail {

inline constexpr int32_t kGatherChunk = 512;  // chains per task of the gather
inline constexpr int32_t kReadChunk = 64;     // chains per task of the pose phase's per-chain read

struct ChainSystem::Group {
  int32_t node_count = 0;
  int32_t collider_count = 0;
  int32_t host_box_count = 0;  // ChainBlockView::host_box_count
  bool vrm = false;  // ChainModel::kVrm: one step per frame, the Vrm rows
  std::vector<int32_t> parent;
  std::vector<int32_t> first_child;
  std::vector<uint8_t> collider_kind;
  std::vector<uint32_t> collider_mask;
  int32_t hot_rows = 0;
  int32_t cold_rows = 0;
  std::vector<float> padding_column;   // one value per row: a pinned, valid rest pose
  std::vector<Transform> padding_locals;  // the rest pose the pose kernel gives padding lanes
  Transform padding_root_parent{};
  // Blocks' hot parts side by side in one slab, cold parts in another; capacity grows at
  // bind time only.
  AlignedFloats hot_slab;
  AlignedFloats cold_slab;
  int32_t capacity_blocks = 0;
  std::vector<int32_t> lane_owner;     // chain slot per lane, -1 for padding
  std::vector<int32_t> lane_strand;    // which of its owner's strands a lane holds
  int32_t lanes_used = 0;              // awake lanes, packed at the front
  int32_t bound = 0;                   // chains bound
  int32_t bound_lanes = 0;             // their strands: the lanes they take when all are awake
  int32_t max_strands = 1;             // the most lanes one chain of the group takes
  int32_t matrix_stream_chains = 0;    // bound chains with matrix pose streams (their blocks fill world matrices)
  int32_t world_frame_chains = 0;      // bound chains with output_world (their blocks fill world frames)
  int32_t full_pose_chains = 0;        // bound chains without ChainArchetype::vrm_roots_pose
  // The writeback's scatter, flattened per block: one entry per host bone of each awake
  // lane, in lane order, so that a block whose lanes all came out finite and have no pose
  // streams writes its bones in one loop, with no per-lane lookups of owner, strand and
  // slot. Rebuilt by the budget when lanes or bindings changed (lists_stale); sized at
  // bind time (ReserveGroup), so the rebuild does not allocate.
  using ScatterEntry = detail::ChainScatterEntry;
  std::vector<ScatterEntry> scatter;
  // The pose kernel's input per lane, from the same rebuild: the frame its root hangs
  // from and its locals (the chain's last good copy, at its strand's offset).
  std::vector<const Transform*> pose_root_parent;
  std::vector<const std::vector<Transform>*> pose_locals;
  std::vector<int32_t> pose_offset;
  // The block's lanes' root parents and locals from those lists (what the pose kernel and
  // the writeback's world frames compose from); leaves roots_only as it is.
  void FillPoseInput(int32_t first_lane, detail::ChainPoseInput* input) const {
    for (int32_t l = 0; l < kBlockLanes; ++l) {
      input->root_parent[l] = pose_root_parent[first_lane + l];
      input->locals[l] = pose_locals[first_lane + l]->data() + pose_offset[first_lane + l];
    }
  }
  // Per lane, written by its chain's read each frame: 1 when the lane needs
  // LaneRareWork after the pose kernel (a snap, held input, colliders on its own nodes).
  std::vector<uint8_t> lane_rare;
  std::vector<int32_t> scatter_begin = std::vector<int32_t>(1, 0);  // per block, and one past the last
  std::vector<uint8_t> scatter_by_lane;    // per block: some lane has pose streams (emitted lane by lane)
  bool lists_stale = true;
  // Whether kPos1x rather than kPos0x holds the current position in every block (all of
  // a group's blocks are solved in the same frames, so they share it; see kPos0x).
  bool positions_swapped = false;

  int32_t Rows() const { return hot_rows + cold_rows; }
  // flipped: the view after this frame's solve when it swapped the position slots (an odd
  // number of substeps) and EndFrame has not yet recorded it.
  ChainBlockView View(int32_t block, bool flipped = false) {
    const bool swapped = positions_swapped != flipped;
    ChainBlockView v;
    v.parent = parent.data();
    v.first_child = first_child.data();
    v.collider_kind = collider_kind.data();
    v.collider_mask = collider_mask.data();
    v.node_count = node_count;
    v.collider_count = collider_count;
    v.host_box_count = host_box_count;
    v.vrm = vrm;
    v.hot = hot_slab.data() + static_cast<std::size_t>(block) * hot_rows * kBlockLanes;
    v.cold = cold_slab.data() + static_cast<std::size_t>(block) * cold_rows * kBlockLanes;
    v.position = swapped ? detail::kPos1x : detail::kPos0x;
    v.previous = swapped ? detail::kPos0x : detail::kPos1x;
    return v;
  }
  void SetLaneToPadding(int32_t lane) {
    const ChainBlockView v = View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) v.Row(r)[l] = padding_column[r];
  }
  void CopyLane(int32_t from, int32_t to) {
    const ChainBlockView src = View(from / kBlockLanes);
    const ChainBlockView dst = View(to / kBlockLanes);
    const int32_t ls = from % kBlockLanes, ld = to % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) dst.Row(r)[ld] = src.Row(r)[ls];
  }
  // Grows both slabs to `blocks` blocks, keeping the lanes in use and padding the new ones.
  void Grow(int32_t blocks) {
    if (blocks <= capacity_blocks) return;
    const std::size_t hot_floats = static_cast<std::size_t>(hot_rows) * kBlockLanes;
    const std::size_t cold_floats = static_cast<std::size_t>(cold_rows) * kBlockLanes;
    AlignedFloats hot(hot_floats * blocks), cold(cold_floats * blocks);
    if (capacity_blocks > 0) {
      std::memcpy(hot.data(), hot_slab.data(), sizeof(float) * hot_floats * capacity_blocks);
      std::memcpy(cold.data(), cold_slab.data(), sizeof(float) * cold_floats * capacity_blocks);
    }
    hot_slab = std::move(hot);
    cold_slab = std::move(cold);
    const int32_t first_new_lane = capacity_blocks * kBlockLanes;
    capacity_blocks = blocks;
    lane_owner.resize(static_cast<std::size_t>(blocks) * kBlockLanes, -1);
    lane_strand.resize(static_cast<std::size_t>(blocks) * kBlockLanes, 0);
    scatter.resize(static_cast<std::size_t>(blocks) * kBlockLanes * node_count);
    scatter_begin.resize(static_cast<std::size_t>(blocks) + 1, 0);
    pose_root_parent.resize(static_cast<std::size_t>(blocks) * kBlockLanes);
    pose_locals.resize(static_cast<std::size_t>(blocks) * kBlockLanes);
    pose_offset.resize(static_cast<std::size_t>(blocks) * kBlockLanes);
    lane_rare.resize(static_cast<std::size_t>(blocks) * kBlockLanes, 0);
    scatter_by_lane.resize(static_cast<std::size_t>(blocks), 0);
    lists_stale = true;
    for (int32_t lane = first_new_lane; lane < blocks * kBlockLanes; ++lane) SetLaneToPadding(lane);
  }
};

struct ChainSystem::ArchetypeSlot {
  ChainArchetype archetype;
  int32_t group = -1;
  bool removed = false;  // RemoveArchetype: its id is stale from then on
  // Its id's generation: a removed slot is built into again under the next one, so kinds
  // built and removed over and over (VRM avatar kinds) reuse their slots.
  uint32_t generation = 1;
  bool Is(ChainArchetypeId id) const { return !removed && id.generation == generation; }
};

struct ChainSystem::Slot {
  int32_t archetype = -1;
  int32_t group = -1;
  std::vector<int32_t> lanes;  // per strand: its lane within the group while awake, else -1
  bool Awake() const { return !lanes.empty() && lanes[0] >= 0; }
  int32_t live_index = -1;
  const Transform* root_parent_world = nullptr;
  const Transform* animated = nullptr;
  Transform* output = nullptr;
  std::vector<int32_t> bone_map;  // per node (lane order): its host buffer index; empty: identity
  // The nodes with a host bone (not virtual tips), in lane order, with their host index;
  // strand s's are [strand_real_begin[s], strand_real_begin[s + 1]).
  std::vector<int32_t> real_node, real_host, strand_real_begin;
  int32_t bone_count = 0;
  const Transform* collider_frames = nullptr;
  int32_t collider_frame_count = 0;
  // This frame's colliders on host frames (ChainArchetype::host_collider), field by field:
  // kCax..kCr, each a row of host_collider_stride floats; made once per chain by the pose
  // phase's read and copied into each of its lanes.
  std::vector<float> collider_world;
  // Where its read writes those colliders into its lanes: one entry per (strand, slot
  // switched on), its destination relative to its group's block 0 collider rows. Rebuilt
  // by the read when its lanes moved (collider_writes_dirty); reserved at bind.
  struct ColliderWrite {
    std::size_t dest;     // floats from block 0's first collider row
    int32_t source;       // the collider's place among the host colliders (its column)
    uint8_t segment;      // 1: the kind reads the second point (capsules, planes)
    uint8_t radius;       // 1: the kind reads the radius (all but planes)
  };
  std::vector<ColliderWrite> collider_writes;
  bool collider_writes_dirty = true;
  uint8_t rare_written = 0;  // the Group::lane_rare value its lanes hold (see ReadChain)
  std::vector<Transform> last_good;  // last finite animated locals, in archetype order
  std::vector<Transform> staging;    // with a bone map: this frame's locals, gathered and checked
  std::vector<uint8_t> virtual_tip;  // per node when the archetype has virtual tips; else empty
  bool Virtual(int32_t k) const { return !virtual_tip.empty() && virtual_tip[k] != 0; }
  // kVrm: the nodes' world positions at bind, where its first lane starts at rest.
  std::vector<Vec3> bind_positions;
  bool start_at_bind = false;  // until its first step: the step only clears it (frees nothing)
  Transform& Output(int32_t k) const { return output[bone_map.empty() ? k : bone_map[k]]; }
  const Transform& Animated(int32_t k) const { return animated[bone_map.empty() ? k : bone_map[k]]; }
  Transform last_good_root_parent{};
  // Roots on host frames (ChainBone::parent_frame): the last good copy of each frame the
  // archetype's roots name (its root_frames_used), and per strand which one it hangs from
  // (-1: root_parent_world). Both empty when no root names a frame.
  std::vector<Transform> last_good_root_frames;
  std::vector<int32_t> strand_root_slot;
  const Transform& RootParent(int32_t strand) const {
    const int32_t r = strand_root_slot.empty() ? -1 : strand_root_slot[strand];
    return r < 0 ? last_good_root_parent : last_good_root_frames[r];
  }
  // The root bone's world pose at the last pose phase (teleport guard).
  Vec3 prev_root_pos{};
  Quat prev_root_rot{};
  bool wake_pending = false;
  uint64_t selected_frame = 0;  // frame in which the budget last selected this chain
  // The pose phase's per-chain decisions, applied to each of its lanes: the host input was
  // good; the lanes snap to the animated pose (woken or teleported), from the bind pose.
  bool frame_good = true, frame_snap = false, frame_from_bind = false;
  bool node_colliders = false;  // the archetype's any_node_collider
  // The host's pose streams (tendon/pose_layout.h), their bones in lane order.
  std::vector<detail::BoundPoseStream> streams;
  bool matrix_streams = false;  // some stream is not kLocalTrs: the writeback fills world matrices
  bool world_frame_stream = false;  // output_world is bound: the writeback fills world frames
  // A host buffer of this chain is one a ragdoll or character reads or writes in its phase
  // (MarkDependents): the chain's pass waits for theirs (World::BeginStep).
  bool depends_on_bodies = false;
  bool late = false;  // this frame: in the second pass (PartitionPasses)
};

// Stack space for a chain's world pose, left uninitialised (Transform is trivially
// destructible; entries are constructed as they are computed).
struct PoseScratch {
  alignas(Transform) unsigned char bytes[sizeof(Transform) * detail::kMaxChainNodes];
  Transform* world() { return reinterpret_cast<Transform*>(bytes); }
};

// A collider that acts on nothing: far away, radius 0 (padding lanes, and a chain's
// colliders on host frames before its first good frame).
inline void FarCollider(uint8_t kind, float* fields) {
  const bool plane = kind == kPlaneKind;
  for (int32_t f = 0; f < kCon; ++f) fields[f] = 0.0f;
  fields[kCay] = plane ? -1e6f : 1e6f;
  fields[kCby] = plane ? 1.0f : 1e6f;
}

inline bool ChainSystem::Flipped(const Group& g) const {
  return frame_open_ && (g.vrm ? vrm_params_.substeps : solve_params_.substeps) % 2 == 1;
}

}  // namespace tendon::detail
