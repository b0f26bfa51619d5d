// kernel/chains/chain_system.cpp: chain lanes by topology and the chain phases of a frame.
//
// Storage: a topology's blocks keep their hot parts side by side in one slab and their
// cold parts in another (chain_block.h), grown at bind time only, geometrically. Lanes
// [0, lanes_used) of a topology hold its awake chains, densely: a chain that sleeps gives
// its lane to the last awake one (ReleaseLane), and one that wakes takes the next
// (AcquireLane) and snaps to its animated pose. Padding lanes hold the first archetype's
// rest pose, pinned, with far-away colliders, so the kernels need no masks.
// The budget is O(bound) only in Gather's one tight pass over dense distances; everything
// after it is O(selected): last frame's cut-off (plus a margin) pre-filters candidates, so
// the selection sorts about max_chains entries. Either way the result is exactly the
// max_chains nearest, ties broken by slot index.
#include "kernel/chains/chain_system.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "kernel/chains/chain_kernels.h"
#include "kernel/core/finite.h"
#include "kernel/core/parallel.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"

#if defined(__GNUC__) || defined(__clang__)
#define TENDON_NOINLINE __attribute__((noinline))
#else
#define TENDON_NOINLINE
#endif

namespace tendon::detail {

namespace {
constexpr int32_t kGatherChunk = 512;
constexpr int32_t kReadChunk = 64;  // chains per task of the pose phase's per-chain read
}  // namespace


struct ChainSystem::Group {
  int32_t node_count = 0;
  int32_t collider_count = 0;
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
  // Per lane, written by its chain's read each frame: 1 when the lane needs
  // LaneRareWork after the pose kernel (a snap, held input, colliders on its own nodes).
  std::vector<uint8_t> lane_rare;
  std::vector<int32_t> scatter_begin = std::vector<int32_t>(1, 0);  // per block, and one past the last
  std::vector<uint8_t> scatter_by_lane;    // per block: some lane has pose streams (the per-lane path)
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
};


struct ChainSystem::Slot {
  uint32_t generation = 1;
  bool live = false;
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


ChainSystem::ChainSystem(const ChainSystemSettings& s)
    : tasks_(s.tasks),
      kernels_(s.kernels),
      max_chains_(s.max_chains),
      max_distance_(s.max_distance),
      gravity_(s.gravity),
      teleport_distance2_(s.teleport_distance * s.teleport_distance),
      teleport_cos_half_angle_(std::isinf(s.teleport_angle_degrees)
                                   ? -2.0f
                                   : std::cos(std::min(s.teleport_angle_degrees, 360.0f) * kPi / 180.0f * 0.5f)) {}
ChainSystem::~ChainSystem() = default;

ChainSystem::Slot* ChainSystem::Find(ChainId id) {
  if (id.generation == 0 || id.index >= chains_.size()) return nullptr;
  Slot& s = chains_[id.index];
  return s.live && s.generation == id.generation ? &s : nullptr;
}
const ChainSystem::Slot* ChainSystem::Find(ChainId id) const { return const_cast<ChainSystem*>(this)->Find(id); }

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
// A collider that acts on nothing: far away, radius 0 (padding lanes, and a chain's
// colliders on host frames before its first good frame).
void FarCollider(uint8_t kind, float* fields) {
  const bool plane = kind == kPlaneKind;
  for (int32_t f = 0; f < kCon; ++f) fields[f] = 0.0f;
  fields[kCay] = plane ? -1e6f : 1e6f;
  fields[kCby] = plane ? 1.0f : 1e6f;
}
// A collider's world shape on `frame` into fields kCax..kCr. VRM does not scale collider
// radii; Tendon's rule scales them with the frame.
void ColliderWorld(const ColliderSettings& col, uint8_t kind, bool vrm, const Transform& frame, float* fields) {
  const Vec3 pa = TransformPoint(frame, col.a);
  Vec3 pb = pa;
  float radius = 0.0f;
  if (kind == kPlaneKind) {
    pb = Rotate(frame.rotation, col.b);
  } else {
    if (kind == kCapsuleOutside || kind == kCapsuleInside) pb = TransformPoint(frame, col.b);
    const float scale = vrm ? 1.0f : std::max(std::fabs(frame.scale.x), std::max(std::fabs(frame.scale.y), std::fabs(frame.scale.z)));
    radius = col.radius * scale;
  }
  fields[kCax] = pa.x, fields[kCay] = pa.y, fields[kCaz] = pa.z;
  fields[kCbx] = pb.x, fields[kCby] = pb.y, fields[kCbz] = pb.z;
  fields[kCr] = radius;
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
  Group g;
  g.node_count = a.lane_nodes;
  g.collider_count = static_cast<int32_t>(a.topology.collider_kind.size());
  g.vrm = a.topology.model == ChainModel::kVrm;
  g.parent = a.topology.parent;
  g.first_child = a.first_child;
  g.collider_kind = a.topology.collider_kind;
  g.collider_mask = a.topology.collider_mask;
  g.padding_locals.assign(a.rest_local.begin(), a.rest_local.begin() + a.lane_nodes);  // strand 0's
  g.hot_rows = detail::HotRows(g.node_count, g.collider_count);
  g.cold_rows = detail::ColdRows(g.node_count, g.vrm);
  // A padding lane: the first archetype's rest pose, pinned, with far-away colliders.
  // Built as a one-block image through the ordinary accessors, then read off by row.
  std::vector<float> image_hot(static_cast<std::size_t>(g.hot_rows) * kBlockLanes, 0.0f);
  std::vector<float> image_cold(static_cast<std::size_t>(g.cold_rows) * kBlockLanes, 0.0f);
  ChainBlockView v;
  v.node_count = g.node_count;
  v.collider_count = g.collider_count;
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

// ---- phases ----
// The only pass over every bound chain: its squared camera distance, measured at the
// origin of the frame its roots hang from (one host read per chain; many chains_ share a
// frame), counted against max_distance, and, when the budget bound last frame, kept as a
// candidate only if it is within last frame's cut-off plus a margin. Each chunk writes
// its candidates_ to its own stretch of `candidates_`; Budget compacts them in order.
void ChainSystem::Gather(Vec3 camera, const SimulatePredicate& predicate) {
  const auto live = static_cast<int32_t>(live_chains_.size());
  const float max_d2 = std::isinf(max_distance_) ? INFINITY : max_distance_ * max_distance_;
  const bool prefilter = predicate.should_simulate == nullptr && last_cutoff2_ >= 0.0f && MaxChains() < live;
  gather_cutoff2_ = prefilter ? std::min(max_d2, last_cutoff2_ * 1.21f) : max_d2;
  const float cutoff2 = gather_cutoff2_;
  const int32_t chunks = (live + kGatherChunk - 1) / kGatherChunk;
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t chunk = begin; chunk < end; ++chunk) {
      const int32_t first = chunk * kGatherChunk;
      const int32_t last = std::min(live, first + kGatherChunk);
      int32_t eligible = 0, kept = 0, bad = 0;
      for (int32_t i = first; i < last; ++i) {
        const Vec3 d = live_root_parent_[i]->translation - camera;
        float d2 = LengthSquared(d);
        // A root frame whose position is not finite (or beyond 1e19 m) is bad input: it
        // sorts last, fails every test, and is counted as such, not as culled.
        const bool not_finite = !(d2 < INFINITY);
        bad += not_finite ? 1 : 0;
        d2 = not_finite ? INFINITY : d2;
        live_distance2_[i] = d2;
        eligible += d2 <= max_d2 ? 1 : 0;
        if (d2 <= cutoff2) candidates_[first + kept++] = {d2, live_chains_[i]};
      }
      chunk_eligible_[chunk] = eligible;
      chunk_kept_[chunk] = kept;
      chunk_bad_[chunk] = bad;
    }
  };
  ParallelFor(tasks_, chunks, 1, task, {profiler_, "chains.gather/task", kChainColor});
}

// Eligibility and the nearest-N budget, then lane changes. O(bound) only in one tight
// pass over the dense distances; everything else is O(selected). When the budget binds,
// last frame's cut-off distance (plus a margin) pre-filters the candidates_ so that the
// selection sorts about max_chains entries, not every eligible chain; if the filter lets
// through fewer than max_chains, the full eligible set is collected instead. Either way
// the result is exactly the max_chains nearest, ties broken by slot index.
void ChainSystem::Budget(const SimulatePredicate& predicate, FrameStats& stats) {
  const float max_d2 = std::isinf(max_distance_) ? INFINITY : max_distance_ * max_distance_;
  const auto live = static_cast<int32_t>(live_chains_.size());
  const int32_t max_chains = MaxChains();
  int32_t eligible = 0;
  int32_t count = 0;
  const int32_t gather_chunks = (live + kGatherChunk - 1) / kGatherChunk;
  int32_t bad = 0;
  for (int32_t c = 0; c < gather_chunks; ++c) bad += chunk_bad_[c];
  // The steady state: no predicate, every chain finite, within max_distance, awake and
  // under the cap (not at it, where the cut-off is kept for the pre-filter), no kVrm chain
  // just bound, and no lane moved since work_ was built. The selection is then every chain
  // as the gather left them in candidates_ (in live order: every chunk kept all of its
  // own), no lane is released or taken, and work_ stands. The frame's passes and counters
  // are all that is left to write (a lone avatar's budget was ~300 instructions).
  if (predicate.should_simulate == nullptr && bad == 0 && live < max_chains && awake_chains_ == live &&
      fresh_vrm_chains_.empty() && work_epoch_ == lane_epoch_) {
    for (int32_t c = 0; c < gather_chunks; ++c) eligible += chunk_eligible_[c];
    if (eligible == live) {
      last_cutoff2_ = -1.0f;
      stats.culled_by_distance = 0;
      stats.culled_by_budget = 0;
      stats.snapped_wake = 0;
      FinishSelection(live, /*rebuild_work=*/false, stats);
      return;
    }
    eligible = 0;
  }
  if (predicate.should_simulate != nullptr) {
    for (int32_t i = 0; i < live; ++i) {
      if (!(live_distance2_[i] < INFINITY)) continue;  // bad input: not asked about
      const int32_t slot = live_chains_[i];
      const ChainId id{static_cast<uint32_t>(slot), chains_[slot].generation};
      if (predicate.should_simulate(id, live_root_parent_[i]->translation, predicate.user)) {
        candidates_[count++] = {live_distance2_[i], slot};
      }
    }
    eligible = count;
  } else {
    const int32_t chunks = (live + kGatherChunk - 1) / kGatherChunk;
    for (int32_t c = 0; c < chunks; ++c) {
      eligible += chunk_eligible_[c];
      const int32_t from = c * kGatherChunk;
      for (int32_t j = 0; j < chunk_kept_[c]; ++j) candidates_[count++] = candidates_[from + j];
    }
    if (count < std::min(eligible, max_chains)) {
      count = 0;
      for (int32_t i = 0; i < live; ++i) {
        if (live_distance2_[i] <= max_d2) candidates_[count++] = {live_distance2_[i], live_chains_[i]};
      }
    }
  }
  stats.culled_by_distance = live - eligible - bad;
  stats.snapped_bad_input += bad;
  const int32_t keep = std::min(eligible, max_chains);
  if (count > keep) std::nth_element(candidates_.begin(), candidates_.begin() + keep, candidates_.begin() + count);
  stats.culled_by_budget = eligible - keep;
  float cutoff = -1.0f;
  const uint64_t frame = stats.frame;
  for (int32_t i = 0; i < keep; ++i) {
    chains_[candidates_[i].second].selected_frame = frame;
    cutoff = std::max(cutoff, candidates_[i].first);
  }
  last_cutoff2_ = keep == max_chains && keep > 0 && std::isfinite(cutoff) ? cutoff : -1.0f;
  // Release lanes of chains_ no longer selected (from the back, so a lane moved into a
  // hole has already been visited), then give lanes to the newly selected. When every
  // awake chain was selected again (the steady state) there is nothing to release, and
  // the pass over every awake lane is skipped.
  int32_t selected_awake = 0;
  for (int32_t i = 0; i < keep; ++i) selected_awake += chains_[candidates_[i].second].Awake() ? 1 : 0;
  for (Group& g : groups_) {
    if (selected_awake == awake_chains_) break;
    for (int32_t lane = g.lanes_used - 1; lane >= 0; --lane) {
      // A chain is released whole, decided at its first strand's lane (one look per chain).
      if (lane >= g.lanes_used || g.lane_strand[lane] != 0) continue;
      const int32_t owner = g.lane_owner[lane];
      if (chains_[owner].selected_frame != frame) ReleaseLane(owner);
    }
  }
  int32_t woke = 0;
  for (int32_t i = 0; i < keep; ++i) {
    if (!chains_[candidates_[i].second].Awake()) {
      AcquireLane(candidates_[i].second);
      ++woke;
    }
  }
  stats.snapped_wake = woke;
  for (const auto& [slot_index, generation] : fresh_vrm_chains_) {
    Slot& fresh = chains_[slot_index];
    if (fresh.live && fresh.generation == generation && !fresh.Awake()) fresh.start_at_bind = false;
  }
  fresh_vrm_chains_.clear();
  FinishSelection(keep, /*rebuild_work=*/true, stats);
}

// The end of Budget's selection of `keep` chains (candidates_[0, keep)), on either path:
// the blocks to run (rebuilt from the groups' lanes when asked), the passes, and the
// frame's lane counters.
void ChainSystem::FinishSelection(int32_t keep, bool rebuild_work, FrameStats& stats) {
  if (rebuild_work) {
    work_count_ = 0;
    work_lanes_ = 0;
    for (int32_t gi = 0; gi < static_cast<int32_t>(groups_.size()); ++gi) {
      const int32_t blocks = (groups_[gi].lanes_used + kBlockLanes - 1) / kBlockLanes;
      for (int32_t b = 0; b < blocks; ++b) work_[work_count_++] = {gi, b};
      work_lanes_ += groups_[gi].lanes_used;
    }
    work_epoch_ = lane_epoch_;
  }
  RefreshLists();
  selected_count_ = keep;  // candidates_[0, keep) are the selected chains (the pose phase reads them)
  PartitionPasses();
  stats.simulated_chains = keep;
  stats.sleeping_chains = static_cast<int32_t>(live_chains_.size()) - keep;
  stats.chain_blocks = work_count_;
  stats.lanes_used = work_lanes_;
  stats.lane_occupancy =
      work_count_ > 0 ? static_cast<float>(work_lanes_) / static_cast<float>(work_count_ * kBlockLanes) : 0.0f;
}

// Reads a lane's host input: a finite pose becomes its last good pose; a non-finite
// one is counted and the last good pose is used again. Returns whether it was good.
inline bool ChainSystem::ReadLaneInput(Slot& slot, WorkCounters& counters) {
  const int32_t n = slot.bone_count;
  // The host transforms a chain reads are checked by the dispatched kernel's test, or
  // (one transform, or a chain's two or fewer collider frames) inline by AllFinite.
  auto all_finite = [this](const Transform* t, int32_t count) {
    return kernels_->all_finite(reinterpret_cast<const float*>(t), count * static_cast<int32_t>(sizeof(Transform) / sizeof(float)));
  };
  // One transform is checked inline (ten floats' exponent bits): through the kernel's
  // table a call cost more than the test.
  uint32_t non_finite = NonFiniteBit(*slot.root_parent_world);
  // Only the host frames the colliders use and the roots hang from (ChainBone::parent_frame)
  // are read, each once (an avatar's colliders and roots name a few bones of its whole
  // world pose). When the colliders use every frame, the roots' are among them.
  const ChainArchetype& arch = archetypes_[slot.archetype].archetype;
  const std::vector<int32_t>& root_frames = arch.root_frames_used;
  if (static_cast<int32_t>(arch.collider_frames_used.size()) == slot.collider_frame_count &&
      slot.collider_frame_count > 2) {
    non_finite |= all_finite(slot.collider_frames, slot.collider_frame_count) ? 0u : 1u;
  } else {
    for (int32_t f : arch.frames_checked) non_finite |= NonFiniteBit(slot.collider_frames[f]);
  }
  bool good = non_finite == 0;
  // Rotations at the door: a unit one passes as it is; one a little off unit is normalised
  // in the copy (a non-unit quaternion would scale what it composes: |q| = 1.01 came out
  // as 1.0201); one far from unit (or one whose length overflows) is bad input.
  int32_t off_unit = 0;
  auto rotation_ok = [&off_unit](const Quat& q) {
    if (NearUnit(q)) return true;
    ++off_unit;
    return UsableRotation(q);
  };
  good = good && rotation_ok(slot.root_parent_world->rotation);
  for (std::size_t r = 0; good && r < root_frames.size(); ++r) good = rotation_ok(slot.collider_frames[root_frames[r]].rotation);
  // Every rotation near unit (the common case) is one pass without early exits; only when
  // one is not does the per-rotation rule run.
  auto rotations_ok = [&](const Transform* t, const int32_t* nodes, int32_t count) {
    bool unit = true;
    for (int32_t i = 0; i < count; ++i) unit &= NearUnit(t[nodes != nullptr ? nodes[i] : i].rotation);
    if (unit) return true;
    bool ok = true;
    for (int32_t i = 0; ok && i < count; ++i) ok = rotation_ok(t[nodes != nullptr ? nodes[i] : i].rotation);
    return ok;
  };
  if (slot.bone_map.empty() && slot.virtual_tip.empty()) {
    good = good && all_finite(slot.animated, n) && rotations_ok(slot.animated, nullptr, n);
    if (good) std::memcpy(static_cast<void*>(slot.last_good.data()), slot.animated, sizeof(Transform) * n);
  } else {
    // Gathered through the bone map into the staging copy, checked in one pass, and then
    // swapped in as the last good pose. A virtual tip has no host bone: its entry is its
    // rest local in both copies, always, and it is neither read nor checked.
    // The copy and both checks are one pass over the real nodes.
    Transform* staged = slot.staging.data();
    const auto real = static_cast<int32_t>(slot.real_node.size());
    const int32_t* node = slot.real_node.data();
    const GatherCheck check = kernels_->gather_check(slot.animated, slot.real_host.data(), staged, node, real);
    good = good && check.finite && (check.unit || rotations_ok(staged, node, real));
    if (good) slot.last_good.swap(slot.staging);
  }
  if (good) {
    slot.last_good_root_parent = *slot.root_parent_world;
    for (std::size_t r = 0; r < root_frames.size(); ++r) slot.last_good_root_frames[r] = slot.collider_frames[root_frames[r]];
    if (off_unit > 0) {
      // A root frame is normalised only when it is off unit (a unit one keeps its bits).
      for (Transform& t : slot.last_good_root_frames)
        if (!NearUnit(t.rotation)) t.rotation = Normalize(t.rotation);
      slot.last_good_root_parent.rotation = Normalize(slot.last_good_root_parent.rotation);
      for (int32_t k = 0; k < n; ++k) {
        if (!NearUnit(slot.last_good[k].rotation)) slot.last_good[k].rotation = Normalize(slot.last_good[k].rotation);
      }
    }
  } else {
    ++counters.bad_input;
  }
  return good;
}

// Once per selected chain, before the pose kernel: its host input, its colliders on host
// frames, the teleport guard (on the first root's animated world pose), and whether its
// lanes snap this frame. Whatever is decided per chain is decided here, so that a chain
// whose strands sit in several blocks is decided once.
void ChainSystem::ReadChain(Slot& slot, WorkCounters& counters) {
  const ChainArchetype& a = archetypes_[slot.archetype].archetype;
  const bool good = ReadLaneInput(slot, counters);
  for (detail::BoundPoseStream& stream : slot.streams) detail::RefreshModel(stream);
  slot.frame_good = good;
  // A host frame that is not trusted this frame keeps last frame's colliders.
  const bool vrm = a.topology.model == ChainModel::kVrm;
  // (Colliders on the chain's own nodes come after the pose kernel: LaneRareWork.)
  if (good && !a.host_collider.empty()) {
    const detail::ChainColliderInput input{slot.collider_frames,         a.host_collider_frame.data(),
                                           a.host_collider_local.data(), static_cast<int32_t>(a.host_collider.size()),
                                           a.host_collider_stride,       vrm};
    kernels_->collider_worlds(input, slot.collider_world.data());
  }
  // Into each of the chain's lanes, for each collider on a host frame switched on there
  // (colliders on the chain's own nodes come after the pose kernel: LaneRareWork). Lanes of
  // other chains in the same blocks are other floats: the read's tasks never write one twice.
  // Only the fields the collider's kind reads: a sphere's centre and radius, a plane's
  // point and normal, all seven for a capsule.
  if (a.host_colliders != 0) {
    Group& g = groups_[slot.group];
    constexpr std::size_t field_stride = kBlockLanes;  // a collider's fields (ChainBlockView::Collider)
    if (slot.collider_writes_dirty) {
      // Its lanes moved (or it just woke): where each (strand, slot) pair's fields go.
      const std::size_t block_floats = static_cast<std::size_t>(g.hot_rows) * kBlockLanes;
      const uint8_t* const kind = a.collider_kind.data();
      slot.collider_writes.clear();  // reserved at bind: no allocation
      for (int32_t strand = 0; strand < a.strands; ++strand) {
        const auto lane = static_cast<uint32_t>(slot.lanes[strand]);  // awake: not -1
        const std::size_t rows = (lane / kBlockLanes) * block_floats + lane % kBlockLanes;
        for (uint32_t on = a.strand_host_slots[strand]; on != 0; on &= on - 1) {
          const int32_t j = std::countr_zero(on);               // the lane's collider slot
          const int32_t c = a.strand_slot_collider[strand][j];  // the chain's collider in it
          slot.collider_writes.push_back(
              {rows + static_cast<std::size_t>(j) * detail::kColliderFieldCount * kBlockLanes, a.host_collider_place[c],
               static_cast<uint8_t>(kind[c] != kSphereOutside && kind[c] != kSphereInside ? 1 : 0),
               static_cast<uint8_t>(kind[c] != kPlaneKind ? 1 : 0)});
        }
      }
      slot.collider_writes_dirty = false;
    }
    float* const first_rows = g.View(0).Collider(0, 0);
    const float* const world = slot.collider_world.data();
    const auto world_stride = static_cast<std::size_t>(a.host_collider_stride);
    for (const Slot::ColliderWrite& write : slot.collider_writes) {
      float* const dest = first_rows + write.dest;
      const float* const w = world + write.source;
      dest[kCax * field_stride] = w[kCax * world_stride];
      dest[kCay * field_stride] = w[kCay * world_stride];
      dest[kCaz * field_stride] = w[kCaz * world_stride];
      if (write.segment != 0) {
        dest[kCbx * field_stride] = w[kCbx * world_stride];
        dest[kCby * field_stride] = w[kCby * world_stride];
        dest[kCbz * field_stride] = w[kCbz * world_stride];
      }
      if (write.radius != 0) dest[kCr * field_stride] = w[kCr * world_stride];
    }
  }
  // Teleport guard: the root bone jumped or turned too far since the last pose phase.
  bool teleported = false;
  if (a.teleport_guard) {
    const Transform root = Compose(slot.RootParent(0), slot.last_good[0]);
    const Vec3 root_pos = root.translation;
    const Quat root_rot = Normalize(root.rotation);
    if (!slot.wake_pending && good) {
      const float moved2 = LengthSquared(root_pos - slot.prev_root_pos);
      // |dot(q0, q1)| = cos(angle / 2) for unit quaternions.
      teleported =
          moved2 > teleport_distance2_ || std::fabs(Dot(root_rot, slot.prev_root_rot)) < teleport_cos_half_angle_;
    }
    slot.prev_root_pos = root_pos;
    slot.prev_root_rot = root_rot;
  }
  if (teleported) ++counters.teleport;
  slot.frame_snap = slot.wake_pending || teleported;
  // A kVrm chain's first lanes start at rest where it was bound (three-vrm's load): the
  // first frame's motion of its root is inertia, as in three-vrm.
  slot.frame_from_bind = slot.frame_snap && slot.start_at_bind;
  if (slot.frame_snap || !good) slot.start_at_bind = false;
  slot.wake_pending = false;
  // Whether its lanes need LaneRareWork after the pose kernel. Every lane of an awake chain
  // holds its rare_written (ReleaseLane moves a lane's flag with it; AcquireLane takes
  // padding lanes, flag 0), so the lanes are written only when the value changes. Each lane
  // is this chain's alone: the read's tasks never write one twice.
  const uint8_t rare = slot.frame_snap || !good || slot.node_colliders ? 1 : 0;
  if (rare != slot.rare_written) {
    uint8_t* const lane_rare = groups_[slot.group].lane_rare.data();
    for (const int32_t lane : slot.lanes) lane_rare[lane] = rare;
    slot.rare_written = rare;
  }
}

// After the pose kernel, for one lane (strand `strand` of its chain) whose read marked it
// (Group::lane_rare): colliders on the chain's own nodes (kTendon) and the chain's snap,
// both rare, out of line. (Colliders on host frames went into the lanes with the chain's
// read.)
TENDON_NOINLINE void ChainSystem::LaneRareWork(Group& g, const ChainBlockView& v, int32_t l, const Slot& slot,
                                               int32_t strand) {
  const ChainArchetype& a = archetypes_[slot.archetype].archetype;
  const int32_t n = v.node_count;
  constexpr int32_t kFields = detail::kColliderFieldCount - 1;
  for (int32_t c = 0; a.any_node_collider && c < g.collider_count; ++c) {
    const ColliderSettings& col = a.colliders[c];
    if (col.bone < 0) continue;  // on a host frame: written by the chain's read
    // On a node of a one-strand chain: its animated world pose from the pose kernel (the
    // last good pose on a frame whose input was not, so a chain woken then has colliders).
    const int32_t k = col.bone;
    const Transform frame{{v.Node(detail::kBx, k)[l], v.Node(detail::kBy, k)[l], v.Node(detail::kBz, k)[l]},
                          {v.Node(detail::kRx, k)[l], v.Node(detail::kRy, k)[l], v.Node(detail::kRz, k)[l],
                           v.Node(detail::kRw, k)[l]},
                          {v.Node(detail::kSx, k)[l], v.Node(detail::kSy, k)[l], v.Node(detail::kSz, k)[l]}};
    float fields[detail::kColliderFieldCount];
    ColliderWorld(col, g.collider_kind[c], g.vrm, frame, fields);
    for (int32_t f = 0; f < kFields; ++f) v.Collider(f, c)[l] = fields[f];
  }
  const bool snap = slot.frame_snap;
  if (snap || !slot.frame_good) {
    const int32_t base = strand * n;
    for (int32_t k = 0; k < n; ++k) {
      for (int32_t axis = 0; axis < 3; ++axis) {
        const float b = v.Node(detail::kBx + axis, k)[l];
        v.Node(detail::kAx + axis, k)[l] = b;
        if (snap) {
          const float start = slot.frame_from_bind ? (&slot.bind_positions[base + k].x)[axis] : b;
          v.Node(detail::kPos0x + axis, k)[l] = start;
          v.Node(detail::kPos1x + axis, k)[l] = start;
        }
      }
    }
  }
}

void ChainSystem::PartitionPasses() {
  // Which selected chains and blocks wait for the ragdoll phase: a chain that depends on
  // it, every block with one of its lanes, every chain with a lane in such a block, and so
  // on until nothing changes (a chain's read must come before the pose of each of its
  // blocks, and a block is posed in one pass). Without dependent chains, all in pass 0.
  int32_t independent = selected_count_;
  int32_t independent_work = work_count_;
  if (any_dependent_) {
    for (int32_t i = 0; i < selected_count_; ++i) {
      Slot& c = chains_[candidates_[i].second];
      c.late = c.depends_on_bodies;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int32_t i = 0; i < work_count_; ++i) {
        const Group& g = groups_[work_[i].group];
        const int32_t* owners = g.lane_owner.data() + work_[i].block * kBlockLanes;
        bool late = false;
        for (int32_t l = 0; l < kBlockLanes && !late; ++l) late = owners[l] >= 0 && chains_[owners[l]].late;
        work_late_[i] = late ? 1 : 0;
        for (int32_t l = 0; late && l < kBlockLanes; ++l) {
          if (owners[l] >= 0 && !chains_[owners[l]].late) {
            chains_[owners[l]].late = true;
            changed = true;
          }
        }
      }
    }
    // Selected chains: pass 0 first (an unstable partition: each chain's read touches only
    // its own slot and lanes, so their order is moot).
    const auto first_late =
        std::partition(candidates_.begin(), candidates_.begin() + selected_count_,
                       [&](const std::pair<float, int32_t>& c) { return !chains_[c.second].late; });
    independent = static_cast<int32_t>(first_late - candidates_.begin());
    // Blocks: each part keeps its order (runs of a topology stay runs, which the solve
    // interleaves).
    int32_t n = 0;
    for (int32_t i = 0; i < work_count_; ++i) {
      if (work_late_[i] == 0) work_partitioned_[n++] = work_[i];
    }
    independent_work = n;
    for (int32_t i = 0; i < work_count_; ++i) {
      if (work_late_[i] != 0) work_partitioned_[n++] = work_[i];
    }
    std::copy(work_partitioned_.begin(), work_partitioned_.begin() + work_count_, work_.begin());
  }
  const int32_t chunks_a = (independent + kReadChunk - 1) / kReadChunk;
  passes_[0] = {0, independent, 0, independent_work, 0};
  passes_[1] = {independent, selected_count_, independent_work, work_count_, chunks_a};
  read_chunk_count_ = chunks_a + (selected_count_ - independent + kReadChunk - 1) / kReadChunk;
}

void ChainSystem::MarkDependents(bool (*overlaps)(const void* data, std::size_t bytes, const void* context),
                                 const void* context) {
  any_dependent_ = false;
  for (int32_t index : live_chains_) {
    Slot& c = chains_[index];
    int32_t span = c.bone_count;
    for (int32_t k : c.bone_map) span = std::max(span, k + 1);
    const std::size_t bytes = static_cast<std::size_t>(span) * sizeof(Transform);
    bool depends = overlaps(c.root_parent_world, sizeof(Transform), context) || overlaps(c.animated, bytes, context) ||
                   overlaps(c.output, bytes, context) ||
                   overlaps(c.collider_frames, static_cast<std::size_t>(c.collider_frame_count) * sizeof(Transform), context);
    for (const detail::BoundPoseStream& stream : c.streams) {
      depends = depends || overlaps(stream.base, stream.extent, context) ||
                (stream.model_world != nullptr && overlaps(stream.model_world, sizeof(Transform), context));
    }
    c.depends_on_bodies = depends;
    any_dependent_ = any_dependent_ || depends;
  }
}

void ChainSystem::BeginFrame(int32_t substeps, float dt, Vec3 wind, float frame_dt) {
  solve_params_ = {};
  solve_params_.substeps = substeps;
  solve_params_.dt = dt;
  solve_params_.gravity[0] = gravity_.x;
  solve_params_.gravity[1] = gravity_.y;
  solve_params_.gravity[2] = gravity_.z;
  solve_params_.wind[0] = wind.x;
  solve_params_.wind[1] = wind.y;
  solve_params_.wind[2] = wind.z;
  // kVrm topologies take one step of the frame's dt.
  vrm_params_ = solve_params_;
  vrm_params_.substeps = frame_dt > 0.0f ? 1 : 0;
  vrm_params_.dt = frame_dt;
  frame_open_ = true;
}

void ChainSystem::EndFrame() {
  for (Group& g : groups_) {
    if (Flipped(g)) g.positions_swapped = !g.positions_swapped;
  }
  frame_open_ = false;
}

bool ChainSystem::Flipped(const Group& g) const {
  return frame_open_ && (g.vrm ? vrm_params_.substeps : solve_params_.substeps) % 2 == 1;
}

void ChainSystem::Pose(const ChainPass& pass) {
  // 1. Per selected chain (chunks of kReadChunk): see ReadChain.
  const int32_t first = pass.first_selected;
  const int32_t selected = pass.end_selected;
  const int32_t read_chunks = (selected - first + kReadChunk - 1) / kReadChunk;
  auto read = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t chunk = begin; chunk < end; ++chunk) {
      WorkCounters& counters = read_counters_[pass.first_read_chunk + chunk];
      counters = {};
      const int32_t last = std::min(selected, first + (chunk + 1) * kReadChunk);
      for (int32_t i = first + chunk * kReadChunk; i < last; ++i) ReadChain(chains_[candidates_[i].second], counters);
    }
  };
  ParallelFor(tasks_, read_chunks, 1, read, {profiler_, "chains.read/task", kChainColor});
  // 2. Per block: the animated pose in lanes, then each lane's colliders and snap.
  const detail::ChainKernels* kernel_set = kernels_;
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t i = pass.first_work + begin; i < pass.first_work + end; ++i) {
      Group& g = groups_[work_[i].group];
      const ChainBlockView v = g.View(work_[i].block);
      work_counters_[i] = {};
      detail::ChainPoseInput input;
      const int32_t first_lane = work_[i].block * kBlockLanes;
      // From the budget's per-lane lists (BuildLaneLists): no lookups of owner and strand.
      const Transform* const* root_parent = g.pose_root_parent.data() + first_lane;
      const std::vector<Transform>* const* locals = g.pose_locals.data() + first_lane;
      const int32_t* offset = g.pose_offset.data() + first_lane;
      for (int32_t l = 0; l < kBlockLanes; ++l) {
        input.root_parent[l] = root_parent[l];
        input.locals[l] = locals[l]->data() + offset[l];
      }
      const uint8_t* rare = g.lane_rare.data() + first_lane;
      uint32_t any_rare = 0;
      for (int32_t l = 0; l < kBlockLanes; ++l) any_rare |= rare[l];
      // A snap or held input (LaneRareWork) and the world matrices read every node's
      // animated frame; otherwise a kVrm block's chains may need only their roots'.
      input.roots_only = g.vrm && g.full_pose_chains == 0 && g.matrix_stream_chains == 0 && any_rare == 0;
      kernel_set->pose(v, input);
      for (int32_t l = 0; any_rare != 0 && l < kBlockLanes; ++l) {
        if (rare[l] != 0) LaneRareWork(g, v, l, chains_[g.lane_owner[first_lane + l]], g.lane_strand[first_lane + l]);
      }
    }
  };
  ParallelFor(tasks_, pass.end_work - pass.first_work, 1, task, {profiler_, "chains.pose/task", kChainColor});
}

void ChainSystem::Solve(const ChainPass& pass) {
  const detail::ChainKernels* k = kernels_;
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    // Runs of consecutive blocks of one topology go to the kernel together. The views are
    // constructed as they are filled (an array of them value-initialised all four: 44
    // instructions a call).
    union Views {
      ChainBlockView at[detail::kSolveInterleave];
      Views() {}
    } views;
    int32_t i = pass.first_work + begin;
    while (i < pass.first_work + end) {
      const int32_t group = work_[i].group;
      int32_t count = 0;
      while (i < pass.first_work + end && count < detail::kSolveInterleave && work_[i].group == group) {
        new (&views.at[count++]) ChainBlockView(groups_[group].View(work_[i].block));
        ++i;
      }
      k->solve(views.at, count, groups_[group].vrm ? vrm_params_ : solve_params_);
    }
  };
  ParallelFor(tasks_, pass.end_work - pass.first_work, detail::kSolveInterleave, task,
              {profiler_, "chains.solve/task", kChainColor});
}

void ChainSystem::ResetLane(const ChainBlockView& v, int32_t l, Slot& slot, int32_t strand) {
  const int32_t base = strand * v.node_count;
  if (v.vrm) {
    // The pose kernel may have composed only the roots (ChainArchetype::vrm_roots_pose):
    // the lane's animated frames again, from its last good input.
    // Parents first, each node's frame into its lane's kB, kR and kS rows.
    auto frame_of = [&](int32_t k) {
      return Transform{{v.Node(detail::kBx, k)[l], v.Node(detail::kBy, k)[l], v.Node(detail::kBz, k)[l]},
                       {v.Node(detail::kRx, k)[l], v.Node(detail::kRy, k)[l], v.Node(detail::kRz, k)[l],
                        v.Node(detail::kRw, k)[l]},
                       {v.Node(detail::kSx, k)[l], v.Node(detail::kSy, k)[l], v.Node(detail::kSz, k)[l]}};
    };
    for (int32_t k = 0; k < v.node_count; ++k) {
      const int32_t p = v.parent[k];
      const Transform w = Compose(p < 0 ? slot.RootParent(strand) : frame_of(p), slot.last_good[base + k]);
      const float fields[] = {w.translation.x, w.translation.y, w.translation.z, w.rotation.x, w.rotation.y,
                              w.rotation.z,    w.rotation.w,    w.scale.x,       w.scale.y,    w.scale.z};
      const int32_t rows[] = {detail::kBx, detail::kBy, detail::kBz, detail::kRx, detail::kRy,
                              detail::kRz, detail::kRw, detail::kSx, detail::kSy, detail::kSz};
      for (int32_t f = 0; f < 10; ++f) v.Node(rows[f], k)[l] = fields[f];
    }
  }
  for (int32_t k = 0; k < v.node_count; ++k) {
    for (int32_t axis = 0; axis < 3; ++axis) {
      const float b = v.Node(detail::kBx + axis, k)[l];
      v.Node(detail::kAx + axis, k)[l] = b;
      v.Node(detail::kPos0x + axis, k)[l] = b;
      v.Node(detail::kPos1x + axis, k)[l] = b;
    }
  }
  for (int32_t k = base; k < base + v.node_count; ++k) {
    if (!slot.Virtual(k)) slot.Output(k) = slot.last_good[k];
  }
  if (!slot.streams.empty()) {
    EmitStreams(slot, archetypes_[slot.archetype].archetype, base, base + v.node_count, slot.last_good.data(),
                slot.RootParent(strand));
  }
}

void ChainSystem::EmitStreams(const Slot& slot, const ChainArchetype& a, int32_t begin, int32_t end,
                              const Transform* locals, const Transform& root_parent) {
  // Parents come before children in lane order, and a strand's nodes are contiguous.
  PoseScratch scratch;
  Transform* world = scratch.world();
  for (int32_t k = begin; k < end; ++k) {
    const int32_t p = a.parent[k];
    world[k - begin] = Compose(p < 0 ? root_parent : world[p - begin], locals[k]);
  }
  for (const detail::BoundPoseStream& stream : slot.streams) {
    for (int32_t k = begin; k < end; ++k) {
      if (slot.Virtual(k)) continue;
      if (stream.layout == PoseLayout::kLocalTrs) {
        detail::EmitLocal(stream, k, locals[k]);
      } else {
        const detail::Affine m = detail::AffineOf(world[k - begin]);
        detail::EmitWorld(stream, k, m.data());
      }
    }
  }
}

void ChainSystem::CheckHostBuffers(ChainId only) const {
  auto check = [](uint32_t index, const Slot& c) {
    const HostBufferOwner owner{"chain", index, c.generation};
    int32_t span = c.bone_count;  // the transforms Tendon touches in animated_local / output_local
    for (int32_t k : c.bone_map) span = std::max(span, k + 1);
    const std::size_t bytes = static_cast<std::size_t>(span) * sizeof(Transform);
    CheckHostBuffer(owner, "root_parent_world", c.root_parent_world, sizeof(Transform));
    CheckHostBuffer(owner, "animated_local", c.animated, bytes);
    CheckHostBuffer(owner, "output_local", c.output, bytes);
    CheckHostBuffer(owner, "collider_frames", c.collider_frames,
                    static_cast<std::size_t>(c.collider_frame_count) * sizeof(Transform));
    CheckStreamBuffers(owner, c.streams);
  };
  if (only.generation != 0) {
    if (const Slot* c = Find(only)) check(only.index, *c);
    return;
  }
  for (int32_t slot : live_chains_) check(static_cast<uint32_t>(slot), chains_[slot]);
}

void ChainSystem::Writeback(const ChainPass& pass, float alpha) {
  const detail::ChainKernels* k = kernels_;
  auto task = [&](int32_t begin, int32_t end, uint32_t worker) {
    float* scratch = writeback_scratch_[worker].data();
    for (int32_t i = pass.first_work + begin; i < pass.first_work + end; ++i) {
      Group& g = groups_[work_[i].group];
      ChainBlockView v = g.View(work_[i].block, Flipped(g));  // after this frame's solve
      v.virtual_leaves = g.vrm && g.full_pose_chains == 0;
      const int32_t first_lane = work_[i].block * kBlockLanes;
      // World matrices only for a block where some lane's chain has pose streams.
      float* world_rows = nullptr;
      if (g.matrix_stream_chains > 0) {
        for (int32_t l = 0; l < kBlockLanes && world_rows == nullptr; ++l) {
          const int32_t owner = g.lane_owner[first_lane + l];
          if (owner >= 0 && chains_[owner].matrix_streams) world_rows = world_matrix_scratch_[worker].data();
        }
      }
      alignas(64) float finite_probe[kBlockLanes];
      k->writeback(v, scratch, finite_probe, g.vrm ? 1.0f : alpha, world_rows);  // kVrm: no render interpolation
      // Each lane's probe is +-0 or NaN, so their sum is +-0 exactly when every lane is
      // finite (8 adds and one test, where 8 tests cost 37 instructions).
      float probe_sum = 0.0f;
      for (int32_t l = 0; l < kBlockLanes; ++l) probe_sum += finite_probe[l];
      const bool all_finite = probe_sum == 0.0f;
      const int32_t block = work_[i].block;
      if (all_finite && g.scatter_by_lane[block] == 0) {
        // The common block: every lane finite and no pose streams, one flat loop.
        k->scatter(g.scatter.data() + g.scatter_begin[block], g.scatter.data() + g.scatter_begin[block + 1], scratch);
        continue;
      }
      const int32_t* const owners = g.lane_owner.data() + first_lane;
      const int32_t* const strands = g.lane_strand.data() + first_lane;
      Slot* const chains = chains_.data();
      for (int32_t l = 0; l < kBlockLanes; ++l) {
        const int32_t owner = owners[l];
        if (owner < 0) continue;
        Slot& slot = chains[owner];
        const int32_t strand = strands[l];
        if (!(finite_probe[l] == 0.0f)) {
          ResetLane(v, l, slot, strand);
          ++work_counters_[i].reset;
          continue;
        }
        const int32_t base = strand * v.node_count;
        // The slot's arrays in locals: a store to a host Transform may alias them as far as
        // the compiler knows, and it re-read them per bone (callgrind: the scatter went from
        // 38.5 to 37.8 M instructions over 404 Steps of 100 Godettes).
        const Transform* const good = slot.last_good.data();
        const int32_t* const real_node = slot.real_node.data();
        const int32_t* const real_host = slot.real_host.data();
        Transform* const output = slot.output;
        const int32_t real_end = slot.strand_real_begin[strand + 1];
        for (int32_t r = slot.strand_real_begin[strand]; r < real_end; ++r) {
          const int32_t node = real_node[r];
          const float* local = detail::WrittenLocalRotation(scratch, node - base) + l;
          Transform written = good[node];
          written.rotation = Quat{local[0], local[kBlockLanes], local[2 * kBlockLanes], local[3 * kBlockLanes]};
          output[real_host[r]] = written;
        }
        if (!slot.streams.empty()) EmitLaneStreams(slot, strand, base, world_rows, l);
      }
    }
  };
  ParallelFor(tasks_, pass.end_work - pass.first_work, 1, task, {profiler_, "chains.writeback/task", kChainColor});
}

void ChainSystem::EmitLaneStreams(const Slot& slot, int32_t strand, int32_t base, const float* world_rows, int32_t l) {
  for (const detail::BoundPoseStream& stream : slot.streams) {
    for (int32_t r = slot.strand_real_begin[strand]; r < slot.strand_real_begin[strand + 1]; ++r) {
      const int32_t node = slot.real_node[r];
      if (stream.layout == PoseLayout::kLocalTrs) {
        detail::EmitLocal(stream, node, slot.output[slot.real_host[r]]);
        continue;
      }
      detail::EmitWorld(stream, node, detail::WrittenWorldMatrix(const_cast<float*>(world_rows), node - base, l));
    }
  }
}

Error ChainSystem::BindStreams(const ChainBinding& b, const ChainArchetype& a, std::vector<detail::BoundPoseStream>* out) const {
  // The host names bones in its settings' order; the slot keeps them in lane order.
  std::vector<int32_t> default_element(a.node_count);
  for (int32_t j = 0; j < a.node_count; ++j) {
    const bool is_virtual = a.virtual_tip[a.lane_node[j]] != 0;
    default_element[j] = is_virtual ? -1 : (b.bone_map.empty() ? j : b.bone_map[j]);
  }
  if (Error e = detail::BindPoseStreams(b.pose_streams, default_element, "pose_streams", out); !Ok(e)) return e;
  for (detail::BoundPoseStream& stream : *out) {
    std::vector<int32_t> element(a.node_count);
    std::vector<detail::Affine> inverse_bind(stream.inverse_bind.empty() ? 0 : a.node_count);
    for (int32_t k = 0; k < a.node_count; ++k) {
      const int32_t j = a.settings_node[k];
      element[k] = stream.element[j];  // -1 for a virtual tip (BindPoseStreams)
      if (!inverse_bind.empty()) inverse_bind[k] = stream.inverse_bind[j];
    }
    stream.element = std::move(element);
    stream.inverse_bind = std::move(inverse_bind);
  }
  return {};
}

void ChainSystem::SetStreams(Slot& slot, std::vector<detail::BoundPoseStream> streams) {
  bool matrices = false;
  for (const detail::BoundPoseStream& s : streams) matrices = matrices || s.layout != PoseLayout::kLocalTrs;
  groups_[slot.group].matrix_stream_chains += (matrices ? 1 : 0) - (slot.matrix_streams ? 1 : 0);
  slot.streams = std::move(streams);
  slot.matrix_streams = matrices;
  groups_[slot.group].lists_stale = true;  // a block with streams takes the per-lane path
}

Result<ChainArchetypeId> ChainSystem::BuildArchetype(const ChainArchetypeSettings& settings) {
  ArchetypeSlot slot;
  if (Error e = detail::BuildChainArchetype(settings, &slot.archetype); e.code != ErrorCode::kNone) return e;
  auto found = group_by_topology_.find(slot.archetype.topology);
  if (found == group_by_topology_.end()) {
    slot.group = NewGroup(slot.archetype);
    group_by_topology_.emplace(slot.archetype.topology, slot.group);
  } else {
    slot.group = found->second;
  }
  archetypes_.push_back(std::move(slot));
  return ChainArchetypeId{static_cast<uint32_t>(archetypes_.size() - 1), 1};
}


int32_t ChainSystem::BoneCount(ChainArchetypeId id) const {
  if (id.generation != 1 || id.index >= archetypes_.size() || archetypes_[id.index].removed) return 0;
  return archetypes_[id.index].archetype.node_count;
}


Error ChainSystem::CheckBinding(const ChainBinding& b, const ArchetypeSlot& arch, Transform** identity_out) const {
  const int32_t n = arch.archetype.node_count;
  if (b.root_parent_world == nullptr)
    return Fail(ErrorCode::kNullBuffer, -1, "root_parent_world", "root_parent_world is null");
  const bool mapped = !b.bone_map.empty();
  if (mapped && static_cast<int32_t>(b.bone_map.size()) != n)
    return Fail(ErrorCode::kBadReference, -1, "bone_map",
                "bone_map has " + std::to_string(b.bone_map.size()) + " entries; the archetype has " +
                    std::to_string(n) + " bones");
  const int32_t needed = mapped ? 0 : n;  // with a map, every index is checked below
  if (b.animated_local.data() == nullptr || static_cast<int32_t>(b.animated_local.size()) < std::max(needed, 1))
    return Fail(ErrorCode::kNullBuffer, -1, "animated_local",
                "animated_local needs " + std::to_string(n) + " transforms, got " + std::to_string(b.animated_local.size()));
  if (b.output_local.data() == nullptr || static_cast<int32_t>(b.output_local.size()) < std::max(needed, 1))
    return Fail(ErrorCode::kNullBuffer, -1, "output_local",
                "output_local needs " + std::to_string(n) + " transforms, got " + std::to_string(b.output_local.size()));
  if (mapped) {
    const auto limit = static_cast<int32_t>(std::min(b.animated_local.size(), b.output_local.size()));
    std::vector<int32_t> sorted(b.bone_map.begin(), b.bone_map.end());
    const ChainArchetype& a = arch.archetype;
    sorted.clear();
    for (int32_t k = 0; k < n; ++k) {
      if (a.virtual_tip[a.lane_node[k]] != 0) continue;  // no host bone: its entry is not read
      sorted.push_back(b.bone_map[k]);
      if (b.bone_map[k] < 0 || b.bone_map[k] >= limit)
        return Fail(ErrorCode::kBadReference, k, "bone_map",
                    "bone_map[" + std::to_string(k) + "] = " + std::to_string(b.bone_map[k]) + " is outside [0, " +
                        std::to_string(limit) + ")");
    }
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return Fail(ErrorCode::kBadReference, -1, "bone_map", "bone_map names one buffer element twice");
  }
  *identity_out = &b.output_local[mapped ? b.bone_map[0] : 0];
  if (static_cast<int32_t>(b.collider_frames.size()) < arch.archetype.collider_frames_needed)
    return Fail(ErrorCode::kNullBuffer, -1, "collider_frames",
                "the archetype's colliders and root frames use " + std::to_string(arch.archetype.collider_frames_needed) +
                    " host frames, got " + std::to_string(b.collider_frames.size()));
  return {};
}

Error ChainSystem::CheckFiniteAtBind(const ChainBinding& b, const ChainArchetype& a) const {
  const bool mapped = !b.bone_map.empty();
  if (!IsFinite(*b.root_parent_world))
    return Fail(ErrorCode::kNotFinite, -1, "root_parent_world", "the root's parent transform is not finite at bind");
  for (int32_t f : a.root_frames_used) {
    if (!IsFinite(b.collider_frames[f]))
      return Fail(ErrorCode::kNotFinite, f, "collider_frames",
                  "collider_frames[" + std::to_string(f) + "], which a root hangs from, is not finite at bind");
    if (!UsableRotation(b.collider_frames[f].rotation))
      return Fail(ErrorCode::kNotUnitRotation, f, "collider_frames",
                  "collider_frames[" + std::to_string(f) + "], which a root hangs from, has a rotation far from unit");
  }
  for (int32_t k = 0; k < a.node_count; ++k) {
    if (a.virtual_tip[a.lane_node[k]] == 0 && !IsFinite(b.animated_local[mapped ? b.bone_map[k] : k]))
      return Fail(ErrorCode::kNotFinite, k, "animated_local",
                  "animated_local[" + std::to_string(k) + "] is not finite at bind");
  }
  return {};
}

// The host index of every node, in lane order: the binding's bone map (or the identity)
// read through the archetype's lane order; empty when that is the identity.
void ChainSystem::SetHostMap(Slot& slot, const ChainArchetype& a, std::span<const int32_t> bone_map) const {
  const bool identity_order = a.strands == 1;
  slot.bone_map.clear();
  if (!bone_map.empty() || !identity_order) {
    slot.bone_map.resize(a.node_count);
    for (int32_t k = 0; k < a.node_count; ++k) {
      const int32_t node = a.settings_node[k];
      slot.bone_map[k] = bone_map.empty() ? node : bone_map[node];
    }
  }
  // The nodes with a host bone, strand by strand: what the read gathers and the writeback writes.
  slot.real_node.clear();
  slot.real_host.clear();
  slot.strand_real_begin.assign(a.strands + 1, 0);
  for (int32_t k = 0; k < a.node_count; ++k) {
    if (a.virtual_tip[k] != 0) continue;
    slot.real_node.push_back(k);
    slot.real_host.push_back(slot.bone_map.empty() ? k : slot.bone_map[k]);
    ++slot.strand_real_begin[k / a.lane_nodes + 1];
  }
  for (int32_t s = 0; s < a.strands; ++s) slot.strand_real_begin[s + 1] += slot.strand_real_begin[s];
}

Result<ChainId> ChainSystem::Bind(const ChainBinding& b) {
  if (b.archetype.generation != 1 || b.archetype.index >= archetypes_.size() || archetypes_[b.archetype.index].removed)
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the archetype id is null or was not built by this world");
  const ArchetypeSlot& arch = archetypes_[b.archetype.index];
  const int32_t n = arch.archetype.node_count;
  Transform* identity = nullptr;
  if (Error e = CheckBinding(b, arch, &identity); e.code != ErrorCode::kNone) return e;
  if (auto it = chain_by_output_.find(identity); it != chain_by_output_.end()) {
    const Slot& existing = chains_[it->second];
    if (existing.archetype != static_cast<int32_t>(b.archetype.index))
      return Fail(ErrorCode::kBadReference, -1, "output_local",
                  "this output buffer is already bound to a chain of another archetype");
    return ChainId{static_cast<uint32_t>(it->second), existing.generation};
  }
  if (Error e = CheckFiniteAtBind(b, arch.archetype); e.code != ErrorCode::kNone) return e;
  std::vector<detail::BoundPoseStream> streams;
  if (Error e = BindStreams(b, arch.archetype, &streams); !Ok(e)) return e;
  int32_t index;
  if (!free_chains_.empty()) {
    index = free_chains_.back();
    free_chains_.pop_back();
  } else {
    index = static_cast<int32_t>(chains_.size());
    const Slot* const before = chains_.data();
    chains_.emplace_back();
    // The lists point into the chains' slots: when the slots moved, every group's goes
    // stale. (A new chain holds no lanes until the budget wakes it.)
    if (chains_.data() != before) MarkLaneListsStale();
  }
  Slot& slot = chains_[index];
  const uint32_t generation = slot.generation;
  slot = Slot{};
  slot.generation = generation;
  slot.live = true;
  slot.archetype = static_cast<int32_t>(b.archetype.index);
  slot.group = arch.group;
  slot.root_parent_world = b.root_parent_world;
  slot.animated = b.animated_local.data();
  slot.output = b.output_local.data();
  slot.bone_count = n;
  slot.collider_frames = b.collider_frames.data();
  slot.collider_frame_count = arch.archetype.collider_frames_needed;
  const ChainArchetype& a = arch.archetype;
  SetHostMap(slot, a, b.bone_map);
  if (a.any_virtual_tip) slot.virtual_tip = a.virtual_tip;
  slot.lanes.assign(a.strands, -1);
  std::size_t writes = 0;
  for (uint32_t on : a.strand_host_slots) writes += static_cast<std::size_t>(std::popcount(on));
  slot.collider_writes.reserve(writes);
  slot.node_colliders = a.any_node_collider;
  // The host colliders' world shapes, field by field (rows of host_collider_stride), far
  // away until the chain's first good frame.
  const auto world_stride = static_cast<std::size_t>(a.host_collider_stride);
  slot.collider_world.assign((detail::kColliderFieldCount - 1) * world_stride, 0.0f);
  for (std::size_t i = 0; i < a.host_collider.size(); ++i) {
    float far[detail::kColliderFieldCount];
    FarCollider(a.collider_kind[a.host_collider[i]], far);
    for (int32_t f = 0; f < detail::kColliderFieldCount - 1; ++f) slot.collider_world[f * world_stride + i] = far[f];
  }
  slot.last_good.resize(n);
  for (int32_t k = 0; k < n; ++k) slot.last_good[k] = slot.Virtual(k) ? a.rest_local[k] : slot.Animated(k);
  slot.staging = slot.last_good;
  slot.last_good_root_parent = *b.root_parent_world;
  slot.last_good_root_frames.clear();
  for (int32_t f : a.root_frames_used) {
    Transform frame = b.collider_frames[f];  // UsableRotation (CheckFiniteAtBind): normalised when off unit
    if (!NearUnit(frame.rotation)) frame.rotation = Normalize(frame.rotation);
    slot.last_good_root_frames.push_back(frame);
  }
  slot.strand_root_slot = a.strand_root_slot;  // a copy beside the frames: no archetype lookup per lane
  if (a.topology.model == ChainModel::kVrm) {
    slot.bind_positions.resize(n);
    Transform world[kMaxChainNodes];
    for (int32_t k = 0; k < n; ++k) {
      const int32_t p = a.parent[k];
      world[k] = Compose(p < 0 ? slot.RootParent(k / a.lane_nodes) : world[p], slot.last_good[k]);
      slot.bind_positions[k] = world[k].translation;
    }
    slot.start_at_bind = true;
    fresh_vrm_chains_.emplace_back(index, generation);
  }
  slot.live_index = static_cast<int32_t>(live_chains_.size());
  live_chains_.push_back(index);
  live_root_parent_.push_back(b.root_parent_world);
  live_distance2_.push_back(INFINITY);
  chain_by_output_.emplace(identity, index);
  candidates_.resize(live_chains_.size());
  chunk_eligible_.resize((live_chains_.size() + kGatherChunk - 1) / kGatherChunk);
  chunk_kept_.resize(chunk_eligible_.size());
  chunk_bad_.resize(chunk_eligible_.size());
  read_counters_.resize((live_chains_.size() + kReadChunk - 1) / kReadChunk + 1);  // two passes: one more
  Group& g = groups_[arch.group];
  ++g.bound;
  g.bound_lanes += a.strands;
  g.full_pose_chains += a.vrm_roots_pose ? 0 : 1;
  g.max_strands = std::max(g.max_strands, a.strands);
  ReserveGroup(g);
  SetStreams(slot, std::move(streams));
  return ChainId{static_cast<uint32_t>(index), generation};
}


Error ChainSystem::Rebind(ChainId id, const ChainBinding& b) {
  Slot* slot = Find(id);
  if (slot == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "chain", "the chain handle is null or stale");
  if (b.archetype.index != static_cast<uint32_t>(slot->archetype) || b.archetype.generation != 1)
    return Fail(ErrorCode::kBadReference, -1, "archetype", "a rebind keeps the chain's archetype");
  const ArchetypeSlot& arch = archetypes_[slot->archetype];
  Transform* identity = nullptr;
  if (Error e = CheckBinding(b, arch, &identity); e.code != ErrorCode::kNone) return e;
  Transform* const old_identity = &slot->Output(0);
  if (identity != old_identity) {
    if (auto it = chain_by_output_.find(identity); it != chain_by_output_.end())
      return Fail(ErrorCode::kBadReference, -1, "output_local", "this output buffer is already bound to another chain");
  }
  if (Error e = CheckFiniteAtBind(b, arch.archetype); e.code != ErrorCode::kNone) return e;
  std::vector<detail::BoundPoseStream> streams;
  if (Error e = BindStreams(b, arch.archetype, &streams); !Ok(e)) return e;
  SetStreams(*slot, std::move(streams));
  // The simulated state stays in its lane; only where the host's numbers live changes.
  chain_by_output_.erase(old_identity);
  chain_by_output_.emplace(identity, static_cast<int32_t>(id.index));
  slot->root_parent_world = b.root_parent_world;
  slot->animated = b.animated_local.data();
  slot->output = b.output_local.data();
  slot->collider_frames = b.collider_frames.data();
  SetHostMap(*slot, arch.archetype, b.bone_map);
  live_root_parent_[slot->live_index] = b.root_parent_world;
  groups_[slot->group].lists_stale = true;  // its outputs moved
  return {};
}

Error ChainSystem::RemoveArchetype(ChainArchetypeId id) {
  if (id.generation != 1 || id.index >= archetypes_.size() || archetypes_[id.index].removed)
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the archetype id is null, stale or was not built by this world");
  int32_t bound = 0;
  for (const Slot& s : chains_) bound += s.live && s.archetype == static_cast<int32_t>(id.index) ? 1 : 0;
  if (bound > 0)
    return Fail(ErrorCode::kInUse, -1, "archetype", std::to_string(bound) + " chains of this archetype are still bound");
  archetypes_[id.index].removed = true;
  archetypes_[id.index].archetype = ChainArchetype{};  // its memory goes; its topology's blocks stay
  return {};
}

int32_t ChainSystem::UnbindAll() {
  int32_t count = 0;
  for (std::size_t i = 0; i < chains_.size(); ++i) {
    if (chains_[i].live && Unbind(ChainId{static_cast<uint32_t>(i), chains_[i].generation}).code == ErrorCode::kNone) ++count;
  }
  return count;
}

Error ChainSystem::Unbind(ChainId id) {
  Slot* slot = Find(id);
  if (slot == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "chain", "the chain handle is null or stale");
  if (slot->Awake()) ReleaseLane(static_cast<int32_t>(id.index));
  // Put every bone back to its animated local transform: the current animation when it is
  // readable and distinct from the output, else the last good animated input.
  const bool aliased = slot->animated == slot->output;
  bool current_ok = !aliased;
  for (int32_t k = 0; current_ok && k < slot->bone_count; ++k) current_ok = slot->Virtual(k) || IsFinite(slot->Animated(k));
  for (int32_t k = 0; k < slot->bone_count; ++k) {
    if (!slot->Virtual(k)) slot->Output(k) = current_ok ? slot->Animated(k) : slot->last_good[k];
  }
  if (!slot->streams.empty()) {
    const ChainArchetype& a = archetypes_[slot->archetype].archetype;
    PoseScratch locals;
    for (int32_t k = 0; k < slot->bone_count; ++k)
      new (&locals.world()[k]) Transform(current_ok && !slot->Virtual(k) ? slot->Animated(k) : slot->last_good[k]);
    for (detail::BoundPoseStream& stream : slot->streams) detail::RefreshModel(stream);
    for (int32_t strand = 0; strand < a.strands; ++strand) {
      // The strand's root parent now when it is readable, else its last good one.
      // (A usable rotation off unit is normalised, as the read does.)
      const int32_t frame = a.strand_root_frame[strand];
      Transform root = frame < 0 ? *slot->root_parent_world : slot->collider_frames[frame];
      const bool root_ok = current_ok && IsFinite(root) && UsableRotation(root.rotation);
      if (root_ok && !NearUnit(root.rotation)) root.rotation = Normalize(root.rotation);
      EmitStreams(*slot, a, strand * a.lane_nodes, (strand + 1) * a.lane_nodes, locals.world(),
                  root_ok ? root : slot->RootParent(strand));
    }
    SetStreams(*slot, {});
  }
  chain_by_output_.erase(&slot->Output(0));
  const int32_t li = slot->live_index;
  const int32_t moved = live_chains_.back();
  live_chains_[li] = moved;
  live_root_parent_[li] = live_root_parent_.back();
  live_distance2_[li] = live_distance2_.back();
  chains_[moved].live_index = li;
  live_chains_.pop_back();
  live_root_parent_.pop_back();
  live_distance2_.pop_back();
  --groups_[slot->group].bound;
  groups_[slot->group].full_pose_chains -= archetypes_[slot->archetype].archetype.vrm_roots_pose ? 0 : 1;
  groups_[slot->group].bound_lanes -= static_cast<int32_t>(slot->lanes.size());
  slot->live = false;
  slot->live_index = -1;
  slot->generation = slot->generation == UINT32_MAX ? 1 : slot->generation + 1;
  std::vector<Transform>().swap(slot->last_good);
  std::vector<Transform>().swap(slot->staging);
  free_chains_.push_back(static_cast<int32_t>(id.index));  // its lanes, if any, went with ReleaseLane
  return {};
}


void ChainSystem::SetMaxChains(int32_t max_chains) {
  max_chains_ = std::max(max_chains, 0);
  for (Group& g : groups_) ReserveGroup(g);
}


bool ChainSystem::IsSimulated(ChainId id) const {
  const Slot* s = Find(id);
  return s != nullptr && s->Awake();
}


Error ChainSystem::GetNodePositions(ChainId id, std::span<Vec3> out) const {
  const Slot* s = Find(id);
  if (s == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "chain", "the chain handle is null or stale");
  if (static_cast<int32_t>(out.size()) < s->bone_count)
    return Fail(ErrorCode::kNullBuffer, -1, "out", "out is smaller than the chain's bone count");
  // Finite host numbers can still overflow once composed: nothing non-finite is returned.
  auto not_finite = [] {
    return Fail(ErrorCode::kNotFinite, -1, "out", "the chain's pose is not finite (its host transforms overflow)");
  };
  const ChainArchetype& a = archetypes_[s->archetype].archetype;
  if (s->Awake()) {
    Group& g = const_cast<Group&>(groups_[s->group]);
    for (int32_t pass = 0; pass < 2; ++pass) {  // every position finite, then write them
      for (int32_t strand = 0; strand < a.strands; ++strand) {
        const ChainBlockView v = g.View(s->lanes[strand] / kBlockLanes);
        const int32_t l = s->lanes[strand] % kBlockLanes;
        for (int32_t k = 0; k < v.node_count; ++k) {
          const Vec3 p{v.Node(v.position, k)[l], v.Node(v.position + 1, k)[l], v.Node(v.position + 2, k)[l]};
          if (pass == 0 && !IsFinite(p)) return not_finite();
          if (pass == 1) out[a.settings_node[strand * v.node_count + k]] = p;
        }
      }
    }
    return {};
  }
  PoseScratch scratch;
  Transform* world = scratch.world();
  for (int32_t k = 0; k < s->bone_count; ++k) {
    const int32_t p = a.parent[k];
    new (&world[k]) Transform(Compose(p < 0 ? s->RootParent(k / a.lane_nodes) : world[p], s->last_good[k]));
    if (!IsFinite(world[k].translation)) return not_finite();
  }
  for (int32_t k = 0; k < s->bone_count; ++k) out[a.settings_node[k]] = world[k].translation;
  return {};
}

void ChainSystem::HashState(StateHasher& hasher) const {
for (std::size_t i = 0; i < chains_.size(); ++i) {
  const Slot& s = chains_[i];
  if (!s.live || !s.Awake()) continue;
  hasher.Mix(&i, sizeof(i));
  Group& g = const_cast<Group&>(groups_[s.group]);
  for (std::size_t strand = 0; strand < s.lanes.size(); ++strand) {
    const ChainBlockView v = g.View(s.lanes[strand] / kBlockLanes);
    const int32_t l = s.lanes[strand] % kBlockLanes;
    for (int32_t j = 0; j < v.node_count; ++j) {
      for (int32_t slot : {v.position, v.previous}) {
        for (int32_t axis = 0; axis < 3; ++axis) hasher.Mix(v.Node(slot + axis, j) + l, sizeof(float));
      }
      const int32_t k = static_cast<int32_t>(strand) * v.node_count + j;
      if (!s.Virtual(k)) hasher.Mix(&s.Output(k), sizeof(Transform));
    }
  }
}
}

void ChainSystem::AddCounters(FrameStats& stats) const {
  for (int32_t i = 0; i < read_chunk_count_; ++i) {
    stats.snapped_bad_input += read_counters_[i].bad_input;
    stats.snapped_teleport += read_counters_[i].teleport;
  }
  for (int32_t i = 0; i < work_count_; ++i) {
    stats.snapped_bad_input += work_counters_[i].bad_input;
    stats.reset_non_finite += work_counters_[i].reset;
    stats.snapped_teleport += work_counters_[i].teleport;
  }
}

}  // namespace tendon::detail
