// kernel/chains/chain_queries.cpp: what the host and the World may ask of chains.
//
// What it owns: whether a chain simulated, its nodes' world positions (never a
// non-finite one), the state hash for determinism checks, and the frame's counters.
// What it does NOT do: change anything. Threading: the World's thread, between phases.
// Memory: none.
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

void ChainSystem::VisitForDraw(void (*visit)(const DrawnChain& chain, void* context), void* context) const {
  Vec3 nodes[kMaxChainNodes];
  DrawnCollider colliders[kMaxChainColliders];
  for (std::size_t i = 0; i < chains_.size(); ++i) {
    const Slot& s = chains_[i];
    if (!handles_.IsLiveAt(static_cast<uint32_t>(i))) continue;
    const ChainArchetype& a = archetypes_[s.archetype].archetype;
    const auto n = static_cast<std::size_t>(s.bone_count);
    bool finite = true;
    int32_t collider_count = 0;
    if (s.Awake()) {
      Group& g = const_cast<Group&>(groups_[s.group]);
      uint32_t drawn = 0;  // a collider several strands hold is drawn once
      for (int32_t strand = 0; strand < a.strands; ++strand) {
        const ChainBlockView v = g.View(s.lanes[strand] / kBlockLanes);
        const int32_t l = s.lanes[strand] % kBlockLanes;
        for (int32_t k = 0; k < v.node_count; ++k) {
          const Vec3 p{v.Node(v.position, k)[l], v.Node(v.position + 1, k)[l], v.Node(v.position + 2, k)[l]};
          finite = finite && IsFinite(p);
          nodes[strand * v.node_count + k] = p;
        }
        const std::vector<int32_t>& held = a.strand_slot_collider[strand];
        for (int32_t j = 0; j < static_cast<int32_t>(held.size()) && j < v.collider_count; ++j) {
          const int32_t c = held[j];
          if (c < 0 || ((a.strand_colliders[strand] >> j) & 1u) == 0 || ((drawn >> c) & 1u) != 0) continue;
          drawn |= 1u << c;
          DrawnCollider& out = colliders[collider_count++];
          out.kind = a.collider_kind[c];
          out.a = {v.Collider(kCax, j)[l], v.Collider(kCay, j)[l], v.Collider(kCaz, j)[l]};
          out.b = {v.Collider(kCbx, j)[l], v.Collider(kCby, j)[l], v.Collider(kCbz, j)[l]};
          out.radius = v.Collider(kCr, j)[l];
          if (!IsFinite(out.a) || !IsFinite(out.b) || !std::isfinite(out.radius)) --collider_count;
        }
      }
    } else {
      // Its animated pose, as GetNodePositions answers for it.
      PoseScratch scratch;
      Transform* world = scratch.world();
      for (std::size_t k = 0; k < n && finite; ++k) {
        const int32_t p = a.parent[k];
        new (&world[k]) Transform(Compose(p < 0 ? s.RootParent(static_cast<int32_t>(k) / a.lane_nodes) : world[p],
                                          s.last_good[k]));
        nodes[k] = world[k].translation;
        finite = IsFinite(nodes[k]);
      }
    }
    if (!finite) continue;  // nothing non-finite reaches the host's renderer
    DrawnChain chain;
    chain.simulated = s.Awake();
    chain.nodes = {nodes, n};
    chain.parent = {a.parent.data(), n};
    chain.colliders = {colliders, static_cast<std::size_t>(collider_count)};
    visit(chain, context);
  }
}

void ChainSystem::HashState(StateHasher& hasher) const {
for (std::size_t i = 0; i < chains_.size(); ++i) {
  const Slot& s = chains_[i];
  if (!handles_.IsLiveAt(static_cast<uint32_t>(i)) || !s.Awake()) continue;
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
