// kernel/chains/chain_pose.cpp: the pose phase: each chain's host input, then the
// animated pose in lanes.
//
// What it owns: reading and checking a chain's host input once per frame (ReadChain: the
// root frames, animated locals and collider frames; a non-finite read holds the last good
// input and is counted), the teleport guard, colliders on host frames written into each
// of its lanes, and per block the pose kernel, then the rare per-lane work (a snap, held
// input, colliders on the chain's own nodes: LaneRareWork).
// What it does NOT do: integrate (chain_solve.cpp) or write host buffers (the writeback).
// Threading: chunks of chains, then blocks, over the host's task hooks; each item writes
// only its own chains and block. Memory: none.
#include <algorithm>
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
  if (a.host_body_slots > 0) WriteHostBodies(slot, a);
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

// The chain's host-body collider slots for this frame (ChainArchetype::host_body_slots),
// lane by lane (a kTendon chain has one; a kVrm chain one per strand): the nearest host
// spheres, capsules and boxes whose group matches its mask and whose bounds overlap the
// lane's (HostBroadPhase::Pick, chain_host_pick.h: nearest first, ties to the lower shape
// index, so the pick depends on nothing but the shapes and their order, the World's by
// handle). A lane's bounds are its nodes' positions at the frame's start, together with
// them moved as far as its root moved since (a chain carried into a body this frame sees
// it), grown by the archetype's largest node radius. A sphere or capsule goes into the
// slot's collider rows (a sphere as a capsule of zero length) with its box off; a box
// into the slot's box rows with its collider rows far away; an unused slot has both off.
// Scalar; chains without a mask never come here.
void ChainSystem::WriteHostBodies(const Slot& slot, const ChainArchetype& a) {
  Group& g = groups_[slot.group];
  const std::span<const HostShape> shapes = host_broad_phase_.Shapes();
  for (int32_t strand = 0; strand < static_cast<int32_t>(slot.lanes.size()); ++strand) {
    const int32_t lane = slot.lanes[strand];
    if (lane < 0) continue;
    const ChainBlockView v = g.View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    auto position = [&](int32_t k) {
      return Vec3{v.Node(v.position, k)[l], v.Node(v.position + 1, k)[l], v.Node(v.position + 2, k)[l]};
    };
    Vec3 lo = position(0), hi = lo;
    for (int32_t k = 1; k < v.node_count; ++k) {
      const Vec3 p = position(k);
      lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
      hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
    }
    const int32_t root = strand * a.lane_nodes;  // the strand's root (last_good is in lane order)
    const Vec3 moved = Compose(slot.RootParent(strand), slot.last_good[root]).translation - position(0);
    const Vec3 grow{a.max_node_radius, a.max_node_radius, a.max_node_radius};
    const Vec3 lo_moved = lo + moved, hi_moved = hi + moved;
    HostPickBounds bounds;
    bounds.lo = Vec3{std::min(lo.x, lo_moved.x), std::min(lo.y, lo_moved.y), std::min(lo.z, lo_moved.z)} - grow;
    bounds.hi = Vec3{std::max(hi.x, hi_moved.x), std::max(hi.y, hi_moved.y), std::max(hi.z, hi_moved.z)} + grow;
    int32_t picks[kMaxChainHostBodies];
    const int32_t kept = host_broad_phase_.Pick(bounds, a.host_body_mask, a.host_body_slots, picks);
    for (int32_t j = 0; j < a.host_body_slots; ++j) {
      const int32_t c = a.host_body_first_slot + j;
      float fields[detail::kColliderFieldCount];
      float box[detail::kHostBoxFieldCount] = {};
      FarCollider(kCapsuleOutside, fields);
      if (j < kept) {
        const HostShape& h = shapes[picks[j]];
        if (h.kind == kHostBox) {
          const Quat q = Normalize(Quat{h.q[0], h.q[1], h.q[2], h.q[3]});
          const Vec3 axes[3] = {Rotate(q, Vec3{1, 0, 0}), Rotate(q, Vec3{0, 1, 0}), Rotate(q, Vec3{0, 0, 1})};
          box[detail::kBcx] = h.a[0], box[detail::kBcy] = h.a[1], box[detail::kBcz] = h.a[2];
          for (int32_t i = 0; i < 3; ++i) {
            box[detail::kBuxx + 3 * i] = axes[i].x;
            box[detail::kBuxx + 3 * i + 1] = axes[i].y;
            box[detail::kBuxx + 3 * i + 2] = axes[i].z;
            box[detail::kBhx + i] = h.half[i];
          }
          box[detail::kBon] = 1.0f;
        } else {
          const float* b = h.kind == kHostCapsule ? h.b : h.a;
          const float values[detail::kCr + 1] = {h.a[0], h.a[1], h.a[2], b[0], b[1], b[2], h.radius};
          std::copy(values, values + detail::kCr + 1, fields);
        }
      }
      // kCon: a kVrm lane's slot acts (its far collider or absent box push nothing).
      fields[detail::kCon] = 1.0f;
      for (int32_t f = 0; f < detail::kColliderFieldCount; ++f) v.Collider(f, c)[l] = fields[f];
      for (int32_t f = 0; f < detail::kHostBoxFieldCount; ++f) v.HostBox(f, j)[l] = box[f];
    }
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
  for (int32_t c = 0; a.any_node_collider && c < static_cast<int32_t>(a.colliders.size()); ++c) {
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
      g.FillPoseInput(first_lane, &input);
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

void ChainSystem::SetHostShapes(std::span<const HostShape> shapes) {
  bool wanted = false;  // some awake lane has host slots (their box rows: host_box_count)
  for (const Group& g : groups_) wanted = wanted || (g.host_box_count > 0 && g.lanes_used > 0);
  host_broad_phase_.Build(wanted ? shapes : std::span<const HostShape>{});
}

}  // namespace tendon::detail
