// kernel/chains/chain_lanes.cpp: a topology's blocks of lanes and who holds them.
//
// What it owns: a topology's group (its blocks, grown at bind time only, geometrically),
// the padding lanes (the first archetype's rest pose, pinned, with far-away colliders, so
// the kernels need no masks), and lane moves: lanes [0, lanes_used) of a topology hold
// its awake chains, densely; a chain that sleeps gives its lane to the last awake one
// (ReleaseLane), and one that wakes takes the next (AcquireLane) and snaps to its
// animated pose. The lists the phases walk are rebuilt when lanes change.
// What it does NOT do: decide who is awake (chain_budget.cpp does).
// Threading: the World's thread (the budget phase is serial). Memory: ReserveGroup grows
// the slabs at bind time; lane moves allocate nothing.
#include <algorithm>
#include <cassert>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "kernel/chains/chain_kernels.h"
#include "kernel/chains/chain_storage.h"
#include "kernel/chains/chain_system.h"
#include "kernel/core/finite.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/parallel.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

namespace {

// A kVrm lane's constant rows for node k (and its simulated rotation's starting value; the
// solve writes it before the writeback reads it).
// k: the archetype's node (lane order), j: its node in the block (k modulo the strand).
void SetVrmRows(const ChainBlockView& v, int32_t l, const ChainArchetype& a, int32_t k, int32_t j, Quat world_rotation) {
  const Vec3 push = a.gravity_push[k], dir = a.rest_direction[k];
  const Quat rest = a.rest_local[k].rotation;
  const float values[kVrmFieldCount] = {push.x, push.y, push.z, dir.x, dir.y, dir.z, rest.x, rest.y,
                                        rest.z, rest.w, world_rotation.x, world_rotation.y, world_rotation.z,
                                        world_rotation.w};
  for (int32_t f = 0; f < kVrmFieldCount; ++f) v.Vrm(f, j)[l] = values[f];
}

}  // namespace

// ---- capacity (bind time only) ----
void ChainSystem::ReserveGroup(Group& g) {
  const auto need = static_cast<int32_t>(
      std::min<int64_t>(g.bound_lanes, static_cast<int64_t>(max_chains_) * g.max_strands));
  const int32_t blocks_needed = (need + kBlockLanes - 1) / kBlockLanes;
  if (blocks_needed > g.capacity_blocks) {
    // Grow geometrically so that binding many chains_ one by one copies O(n) in all.
    g.Grow(std::max(blocks_needed, g.capacity_blocks + g.capacity_blocks / 2));
  }
  int32_t total = 0;
  for (const Group& other : groups_) total += other.capacity_blocks;
  if (static_cast<int32_t>(work_.size()) < total) {
    work_.resize(total);
    work_partitioned_.resize(total);
    work_late_.resize(total);
    work_counters_.resize(total);
  }
}

int32_t ChainSystem::NewGroup(const ChainArchetype& a) {
  // One writeback scratch per worker, as long as the longest chain needs.
  const std::size_t scratch_floats =
      static_cast<std::size_t>(a.lane_nodes) * detail::kWritebackRowsPerNode * kBlockLanes;
  writeback_scratch_.resize(std::max(1, tasks_.enqueue != nullptr ? tasks_.worker_count : 1));
  for (AlignedFloats& scratch : writeback_scratch_) {
    if (scratch.size() < scratch_floats) scratch.Resize(scratch_floats);
  }
  const std::size_t matrix_floats = static_cast<std::size_t>(a.lane_nodes) * detail::kWorldFloatsPerNode;
  world_matrix_scratch_.resize(writeback_scratch_.size());
  for (AlignedFloats& scratch : world_matrix_scratch_) {
    if (scratch.size() < matrix_floats) scratch.Resize(matrix_floats);
  }
  const std::size_t frame_floats =
      static_cast<std::size_t>(a.lane_nodes) * detail::kWorldFrameFloatsPerNode;
  world_frame_scratch_.resize(writeback_scratch_.size());
  for (AlignedFloats& scratch : world_frame_scratch_) {
    if (scratch.size() < frame_floats) scratch.Resize(frame_floats);
  }
  Group g;
  g.node_count = a.lane_nodes;
  g.collider_count = static_cast<int32_t>(a.topology.collider_kind.size());
  g.vrm = a.topology.model == ChainModel::kVrm;
  g.parent = a.topology.parent;
  g.first_child = a.first_child;
  g.collider_kind = a.topology.collider_kind;
  g.collider_mask = a.topology.collider_mask;
  g.padding_locals.assign(a.rest_local.begin(), a.rest_local.begin() + a.lane_nodes);  // strand 0's
  g.host_box_count = a.topology.host_slots;
  g.hot_rows = detail::HotRows(g.node_count, g.collider_count, g.host_box_count);
  g.cold_rows = detail::ColdRows(g.node_count, g.vrm);
  // A padding lane: the first archetype's rest pose, pinned, with far-away colliders.
  // Built as a one-block image through the ordinary accessors, then read off by row.
  std::vector<float> image_hot(static_cast<std::size_t>(g.hot_rows) * kBlockLanes, 0.0f);
  std::vector<float> image_cold(static_cast<std::size_t>(g.cold_rows) * kBlockLanes, 0.0f);
  ChainBlockView v;
  v.node_count = g.node_count;
  v.collider_count = g.collider_count;
  v.host_box_count = g.host_box_count;  // its box rows stay 0: off (kBon)
  v.vrm = g.vrm;
  v.hot = image_hot.data();
  v.cold = image_cold.data();
  std::vector<Transform> world(a.lane_nodes);
  for (int32_t k = 0; k < a.lane_nodes; ++k) {
    const int32_t p = a.topology.parent[k];
    world[k] = p < 0 ? a.rest_local[k] : Compose(world[p], a.rest_local[k]);
    const Vec3 t = world[k].translation;
    for (int32_t f : {detail::kPos0x, detail::kPos1x, detail::kAx, detail::kBx}) {
      v.Node(f, k)[0] = t.x;
      v.Node(f + 1, k)[0] = t.y;
      v.Node(f + 2, k)[0] = t.z;
    }
    const Quat r = world[k].rotation;
    v.Node(detail::kRx, k)[0] = r.x;
    v.Node(detail::kRy, k)[0] = r.y;
    v.Node(detail::kRz, k)[0] = r.z;
    v.Node(detail::kRw, k)[0] = r.w;
    v.Node(detail::kSx, k)[0] = world[k].scale.x;
    v.Node(detail::kSy, k)[0] = world[k].scale.y;
    v.Node(detail::kSz, k)[0] = world[k].scale.z;
    v.Node(detail::kRest, k)[0] = -a.rest_length[k];  // negative: pinned
    if (g.vrm) SetVrmRows(v, 0, a, k, k, r);
  }
  v.Lane(detail::kRootParentRw)[0] = 1.0f;
  v.Lane(detail::kUniform)[0] = 1.0f;
  for (int32_t c = 0; c < g.collider_count; ++c) {
    float far[detail::kColliderFieldCount];
    FarCollider(g.collider_kind[c], far);
    for (int32_t f = 0; f < detail::kCon; ++f) v.Collider(f, c)[0] = far[f];
    v.Collider(detail::kCon, c)[0] = 0.0f;
  }
  g.padding_column.resize(g.Rows());
  for (int32_t r = 0; r < g.Rows(); ++r) g.padding_column[r] = v.Row(r)[0];
  groups_.push_back(std::move(g));
  ++lane_epoch_;
  MarkLaneListsStale();  // the groups moved: their padding poses' addresses changed
  return static_cast<int32_t>(groups_.size()) - 1;
}

// ---- lanes (budget phase) ----
// A chain takes one lane per strand. Its lanes are released highest first, each refilled
// from the group's last lane, which keeps the awake lanes packed; the last lane is then
// never one of this chain's still to be released (those are all below the hole).
void ChainSystem::ReleaseLane(int32_t slot_index) {
  Slot& slot = chains_[slot_index];
  Group& g = groups_[slot.group];
  g.lists_stale = true;
  ++lane_epoch_;
  --awake_chains_;  // called only for an awake chain
  const auto strands = static_cast<int32_t>(slot.lanes.size());
  for (int32_t done = 0; done < strands; ++done) {
    int32_t strand = -1;
    for (int32_t s = 0; s < strands; ++s) {
      if (slot.lanes[s] >= 0 && (strand < 0 || slot.lanes[s] > slot.lanes[strand])) strand = s;
    }
    const int32_t hole = slot.lanes[strand];
    const int32_t last = g.lanes_used - 1;
    if (hole != last) {
      g.CopyLane(last, hole);
      const int32_t moved = g.lane_owner[last];
      g.lane_owner[hole] = moved;
      g.lane_strand[hole] = g.lane_strand[last];
      chains_[moved].lanes[g.lane_strand[last]] = hole;
      chains_[moved].collider_writes_dirty = true;
      g.lane_rare[hole] = g.lane_rare[last];
    }
    g.lane_owner[last] = -1;
    g.lane_rare[last] = 0;
    g.SetLaneToPadding(last);
    --g.lanes_used;
    slot.lanes[strand] = -1;
  }
}

void ChainSystem::AcquireLane(int32_t slot_index) {
  Slot& slot = chains_[slot_index];
  Group& g = groups_[slot.group];
  g.lists_stale = true;
  ++lane_epoch_;
  slot.collider_writes_dirty = true;
  slot.rare_written = 0;  // its new lanes were padding: flag 0
  slot.wake_pending = true;
  ++awake_chains_;
  const ChainArchetype& a = archetypes_[slot.archetype].archetype;
  const int32_t n = a.lane_nodes;
  for (int32_t s = 0; s < a.strands; ++s) {
    // Lanes are reserved for max_chains awake chains (ReserveGroup): a caller that takes
    // more (a restore that wakes before it puts to sleep did) would write past the slab.
    assert(g.lanes_used < g.capacity_blocks * kBlockLanes && "AcquireLane beyond the reserved lanes");
    const int32_t lane = g.lanes_used++;
    g.lane_owner[lane] = slot_index;
    g.lane_strand[lane] = s;
    slot.lanes[s] = lane;
    const ChainBlockView v = g.View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    for (int32_t j = 0; j < n; ++j) {
      const int32_t k = s * n + j;
      v.Node(detail::kRest, j)[l] = a.pinned[k] > 0.5f ? -a.rest_length[k] : a.rest_length[k];
      v.Node(detail::kDamping, j)[l] = a.damping[k];
      v.Node(detail::kStiffness, j)[l] = a.stiffness[k];
      v.Node(detail::kGravityScale, j)[l] = a.gravity_scale[k];
      v.Node(detail::kWindScale, j)[l] = a.wind_scale[k];
      if (v.collider_count > 0) v.Radius(j)[l] = a.radius[k];
      if (v.vrm) SetVrmRows(v, l, a, k, j, Quat{});
    }
    v.Lane(detail::kLaneDamping)[l] = a.damping[s * n];
    v.Lane(detail::kLaneStiffness)[l] = a.stiffness[s * n];
    v.Lane(detail::kLaneGravityScale)[l] = a.gravity_scale[s * n];
    v.Lane(detail::kLaneWindScale)[l] = a.wind_scale[s * n];
    v.Lane(detail::kUniform)[l] = a.uniform_parameters ? 1.0f : 0.0f;
    for (int32_t c = 0; c < v.collider_count; ++c) {
      v.Collider(detail::kCon, c)[l] = (a.strand_colliders[s] >> c) & 1u ? 1.0f : 0.0f;
    }
  }
}

// A group's per-lane lists: the writeback's flat scatter of its awake blocks
// (Group::scatter) and the pose kernel's input per lane. Serial, in the budget, after its
// lane changes; writes within the sizes ReserveGroup gave.
void ChainSystem::BuildLaneLists(Group& g) {
  const int32_t blocks = (g.lanes_used + kBlockLanes - 1) / kBlockLanes;
  int32_t count = 0;
  for (int32_t b = 0; b < blocks; ++b) {
    g.scatter_begin[b] = count;
    g.scatter_by_lane[b] = 0;
    for (int32_t l = 0; l < kBlockLanes; ++l) {
      const int32_t lane = b * kBlockLanes + l;
      const int32_t owner = g.lane_owner[lane];
      if (owner < 0) {
        g.pose_root_parent[lane] = &g.padding_root_parent;
        g.pose_locals[lane] = &g.padding_locals;
        g.pose_offset[lane] = 0;
        continue;
      }
      const Slot& slot = chains_[owner];
      if (!slot.streams.empty()) g.scatter_by_lane[b] = 1;
      const int32_t strand = g.lane_strand[lane];
      const int32_t base = strand * g.node_count;
      g.pose_root_parent[lane] = &slot.RootParent(strand);
      g.pose_locals[lane] = &slot.last_good;
      g.pose_offset[lane] = base;
      for (int32_t r = slot.strand_real_begin[strand]; r < slot.strand_real_begin[strand + 1]; ++r) {
        const int32_t node = slot.real_node[r];
        g.scatter[count++] = {slot.output + slot.real_host[r], &slot.last_good, node,
                              detail::WrittenLocalRotationOffset(node - base) + l};
      }
    }
  }
  g.scatter_begin[blocks] = count;
  g.lists_stale = false;
}

void ChainSystem::MarkLaneListsStale() {
  for (Group& g : groups_) g.lists_stale = true;
}

void ChainSystem::RefreshLists() {
  for (Group& g : groups_) {
    if (g.lists_stale) BuildLaneLists(g);
  }
}

}  // namespace tendon::detail
