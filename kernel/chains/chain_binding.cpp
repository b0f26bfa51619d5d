// kernel/chains/chain_binding.cpp: the chain system's archetypes and bindings.
//
// What it owns: building an archetype and filing it under its topology, checking a
// binding (which field, why), binding, rebinding and unbinding chains by handle (the one
// handle table, kernel/core/handle_table.h), and the max_chains limit. A chain takes no
// lane at bind: the budget wakes it (chain_lanes.cpp).
// What it does NOT do: run in a frame. Memory: allocates (bind time only).
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
  return handles_.IsLive(id) ? &chains_[id.index] : nullptr;
}
const ChainSystem::Slot* ChainSystem::Find(ChainId id) const { return const_cast<ChainSystem*>(this)->Find(id); }

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
  for (std::size_t i = 0; i < archetypes_.size(); ++i) {
    if (!archetypes_[i].removed || archetypes_[i].generation == UINT32_MAX) continue;
    slot.generation = archetypes_[i].generation + 1;  // the old id stays stale
    archetypes_[i] = std::move(slot);
    return ChainArchetypeId{static_cast<uint32_t>(i), archetypes_[i].generation};
  }
  archetypes_.push_back(std::move(slot));
  return ChainArchetypeId{static_cast<uint32_t>(archetypes_.size() - 1), 1};
}

int32_t ChainSystem::BoneCount(ChainArchetypeId id) const {
  if (id.index >= archetypes_.size() || !archetypes_[id.index].Is(id)) return 0;
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
  if (b.archetype.index >= archetypes_.size() || !archetypes_[b.archetype.index].Is(b.archetype))
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
    return handles_.HandleAt(static_cast<uint32_t>(it->second));
  }
  if (Error e = CheckFiniteAtBind(b, arch.archetype); e.code != ErrorCode::kNone) return e;
  std::vector<detail::BoundPoseStream> streams;
  if (Error e = BindStreams(b, arch.archetype, &streams); !Ok(e)) return e;
  const ChainId id = handles_.Allocate();
  const auto index = static_cast<int32_t>(id.index);
  if (chains_.size() < handles_.SlotCount()) {
    const Slot* const before = chains_.data();
    chains_.resize(handles_.SlotCount());
    // The lists point into the chains' slots: when the slots moved, every group's goes
    // stale. (A new chain holds no lanes until the budget wakes it.)
    if (chains_.data() != before) MarkLaneListsStale();
  }
  Slot& slot = chains_[index];
  slot = Slot{};
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
    fresh_vrm_chains_.push_back(id);
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
  return id;
}

Error ChainSystem::Rebind(ChainId id, const ChainBinding& b) {
  Slot* slot = Find(id);
  if (slot == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "chain", "the chain handle is null or stale");
  if (b.archetype.index != static_cast<uint32_t>(slot->archetype) || !archetypes_[slot->archetype].Is(b.archetype))
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
  if (id.index >= archetypes_.size() || !archetypes_[id.index].Is(id))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the archetype id is null, stale or was not built by this world");
  int32_t bound = 0;
  for (uint32_t i = 0; i < chains_.size(); ++i)
    bound += handles_.IsLiveAt(i) && chains_[i].archetype == static_cast<int32_t>(id.index) ? 1 : 0;
  if (bound > 0)
    return Fail(ErrorCode::kInUse, -1, "archetype", std::to_string(bound) + " chains of this archetype are still bound");
  archetypes_[id.index].removed = true;
  archetypes_[id.index].archetype = ChainArchetype{};  // its memory goes; its topology's blocks stay
  return {};
}

int32_t ChainSystem::UnbindAll() {
  int32_t count = 0;
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i) && Ok(Unbind(handles_.HandleAt(i)))) ++count;
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
  slot->live_index = -1;
  std::vector<Transform>().swap(slot->last_good);
  std::vector<Transform>().swap(slot->staging);
  handles_.Free(id);  // its lanes, if any, went with ReleaseLane
  return {};
}

void ChainSystem::SetMaxChains(int32_t max_chains) {
  max_chains_ = std::max(max_chains, 0);
  for (Group& g : groups_) ReserveGroup(g);
}

}  // namespace tendon::detail
