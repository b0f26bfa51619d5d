// kernel/ragdolls/ragdoll_lanes.cpp: groups of lanes by archetype, and every lane move.
//
// What it owns: a group holds every instance of one archetype with (or without) a
// kinematic root side by side in blocks (RagdollGroup, kernel/rigid/ragdoll_store.h), with
// the archetype's kernel constants (RigidConstants, kernel/rigid/rigid_constants.h). Lanes
// [0, lanes_enabled) are enabled instances, [lanes_enabled, lanes_used) disabled ones, the
// rest padding. Every move keeps that order and each slot's lane index true: enabling or
// disabling swaps a lane across the boundary, unbinding fills the hole with the last lane,
// a kinematic root switched on or off moves the instance to the other group (landing
// directly among the enabled or the disabled lanes: one move), and PackAwakeLanes puts the
// awake in front of the sleeping where that frees a block. A lane's arithmetic never
// depends on where it is, so no move changes a result.
// What it does NOT do: decide when to move (the controls, Bind and the World do), or
// touch a lane's state beyond copying it whole.
// Threading: the World's thread, between Steps. Memory: FindOrAddGroup and EnsureLanes
// allocate (bind time, and a move into a group with no lane reserved); the moves do not.
#include <algorithm>

#include "kernel/core/parallel.h"
#include "kernel/core/profile.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/rigid_constants.h"

namespace tendon::detail {

// The group of an archetype's instances with (kinematic) or without a kinematic root,
// created on first use (bind time).
int32_t RagdollSystem::FindOrAddGroup(int32_t archetype, bool kinematic) {
  for (int32_t i = 0; i < static_cast<int32_t>(store_.groups.size()); ++i) {
    if (store_.groups[i].archetype == archetype && store_.groups[i].kinematic_root == kinematic) return i;
  }
  store_.groups.push_back(MakeGroup(archetype, kinematic));
  group_first_work_.resize(store_.groups.size());
  return static_cast<int32_t>(store_.groups.size()) - 1;
}

RagdollGroup RagdollSystem::MakeGroup(int32_t archetype, bool kinematic) const {
  const RagdollArchetype& a = archetypes_[archetype];
  const auto n = static_cast<int32_t>(a.parts.size());
  RagdollGroup g;
  g.archetype = archetype;
  g.kinematic_root = kinematic;
  g.kinematic_bodies = a.kinematic_bodies;
  g.trigger = a.trigger;
  g.part_count = n;
  g.constants = RigidConstants(a, kinematic);
  g.self_pairs = a.self_collision_pairs;
  g.collision_group = a.collision_group;
  g.collision_mask = a.collision_mask;
  for (const RigidPartArchetype& p : a.parts) {
    g.shapes.push_back(p.shape);
    g.shape_in_body.push_back(p.shape_in_body);
    g.pair_points.push_back(PairSamplePoints(p));
    g.body_in_part.push_back(p.body_in_part);
    const Quat parent = p.parent >= 0 ? a.parts[p.parent].body_pose.rotation : Quat{};
    g.neutral_motor.push_back(Normalize(Conjugate(parent) * p.body_pose.rotation));
  }
  g.block_lanes = kernels_->block_lanes;
  g.floats_per_block = RigidFloatsPerBlock(n, g.block_lanes);
  return g;
}

// Grows group `gi`'s blocks to hold `lanes` lanes plus its reserve (never in Step), and
// the per-block work arrays with them. New padding lanes hold the archetype's build pose.
// The reserve keeps room for every instance that may move in later without allocating.
void RagdollSystem::EnsureLanes(int32_t gi, int32_t lanes, bool with_reserve) {
  RagdollGroup& g = store_.groups[gi];
  if (with_reserve) lanes += g.reserved;
  if (lanes <= static_cast<int32_t>(g.blocks.size()) * g.block_lanes) return;
  const RagdollArchetype& a = archetypes_[g.archetype];
  Transform bodies[kMaxRagdollParts];
  for (int32_t j = 0; j < g.part_count; ++j) bodies[j] = a.parts[j].body_pose;
  while (static_cast<int32_t>(g.blocks.size()) * g.block_lanes < lanes) {
    g.blocks.emplace_back(g.floats_per_block);
    g.lane_owner.resize(g.blocks.size() * static_cast<std::size_t>(g.block_lanes), -1);
    const int32_t first = static_cast<int32_t>(g.blocks.size() - 1) * g.block_lanes;
    for (int32_t l = 0; l < g.block_lanes; ++l) g.SetLane(first + l, bodies, Vec3{}, Vec3{}, false);
  }
  int32_t total = 0;
  for (const RagdollGroup& other : store_.groups) total += static_cast<int32_t>(other.blocks.size());
  work_.resize(total);
  resets_.resize(total);
  bad_inputs_.resize(total);
  domains_.ReserveWork(total);
}

// Lane bookkeeping. Swapping keeps every slot's lane index true.
void RagdollSystem::SwapLanes(RagdollGroup& g, int32_t a, int32_t b) {
  g.SwapLanes(a, b);
  for (int32_t lane : {a, b}) {
    if (g.lane_owner[lane] >= 0) store_.slots[g.lane_owner[lane]].lane = lane;
  }
}
// Sleeping ragdolls cost the kernels nothing only where a whole slice of lanes sleeps
// (RunStages); scattered among awake ones (a pile that settles while its neighbours in the
// block still move) they ride along in every substep. A lane's arithmetic never depends
// on where it is, so packing moves no result. Packed only when it frees a block, so lanes
// do not move every time one ragdoll sleeps or wakes.
void RagdollSystem::PackAwakeLanes(uint32_t thread) {
  ProfileZone zone(profiler_, "ragdolls.pack_awake", kRagdollColor, thread);
  for (RagdollGroup& g : store_.groups) PackAwakeLanesOf(g);
}
void RagdollSystem::PackAwakeLanesOf(RagdollGroup& g) {
  auto awake = [&](int32_t lane) {
    const int32_t owner = g.lane_owner[lane];
    return owner >= 0 && !store_.slots[owner].asleep;
  };
  // With workers, the blocks are cut into a run per worker and each run is packed on its
  // own: a lane never leaves its run, so ragdolls bound together (a pile, a crowd hit by
  // one blast) stay in blocks of their own and the frame's domains (BuildDomains) can
  // keep them apart, instead of sleepers and wakers of every pile sharing the blocks.
  const int32_t blocks = (g.lanes_enabled + g.block_lanes - 1) / g.block_lanes;
  const int32_t runs = std::max(1, std::min(WorkerSlots(settings_.tasks), blocks));
  for (int32_t run = 0; run < runs; ++run) {
    const int32_t lo = (run * blocks / runs) * g.block_lanes;
    const int32_t hi = std::min(g.lanes_enabled, ((run + 1) * blocks / runs) * g.block_lanes);
    int32_t awake_count = 0, blocks_awake = 0;
    for (int32_t block = lo; block < hi; block += g.block_lanes) {
      const int32_t end = std::min(hi, block + g.block_lanes);
      int32_t in_block = 0;
      for (int32_t lane = block; lane < end; ++lane) in_block += awake(lane) ? 1 : 0;
      awake_count += in_block;
      blocks_awake += in_block > 0 ? 1 : 0;
    }
    if (blocks_awake <= (awake_count + g.block_lanes - 1) / g.block_lanes) continue;
    int32_t front = lo, back = hi - 1;
    for (;;) {
      while (front < back && awake(front)) ++front;
      while (front < back && !awake(back)) --back;
      if (front >= back) break;
      SwapLanes(g, front++, back--);
    }
  }
}
void RagdollSystem::EnableLane(RagdollSlot& slot) {
  RagdollGroup& g = store_.groups[slot.group];
  if (slot.lane >= g.lanes_enabled) SwapLanes(g, slot.lane, g.lanes_enabled++);
  g.SetActiveFlag(slot.lane, true);
}
void RagdollSystem::DisableLane(RagdollSlot& slot) {
  RagdollGroup& g = store_.groups[slot.group];
  if (slot.lane < g.lanes_enabled) SwapLanes(g, slot.lane, --g.lanes_enabled);
  g.SetActiveFlag(slot.lane, false);
}
// Takes the slot's lane out of its group (the last lane fills the hole).
void RagdollSystem::RemoveLane(RagdollSlot& slot) {
  DisableLane(slot);
  RagdollGroup& g = store_.groups[slot.group];
  const int32_t last = --g.lanes_used;
  SwapLanes(g, slot.lane, last);
  g.lane_owner[last] = -1;
  g.SetActiveFlag(last, false);
}
// Moves a ragdoll to another group of its archetype (a kinematic root on or off), state
// and all, in one move: an enabled instance lands at the end of the enabled lanes (their
// first disabled lane moving to the end of the used ones), a disabled one at the end of
// the used lanes. That is where landing at the end and then EnableLane would leave both.
// Allocates only when the target group has no lane reserved for it.
void RagdollSystem::MoveToGroup(int32_t index, int32_t target) {
  RagdollSlot& slot = store_.slots[index];
  if (slot.group == target) return;
  EnsureLanes(target, store_.groups[target].lanes_used + 1, false);
  RagdollGroup& to = store_.groups[target];
  int32_t lane = to.lanes_used++;
  if (slot.enabled) {
    const int32_t first_disabled = to.lanes_enabled++;
    if (first_disabled != lane) {
      to.CopyLane(first_disabled, lane);
      const int32_t owner = to.lane_owner[first_disabled];
      to.lane_owner[lane] = owner;
      store_.slots[owner].lane = lane;
      lane = first_disabled;
    }
  }
  to.CopyLaneFrom(store_.groups[slot.group], slot.lane, lane);
  RemoveLane(slot);
  to.lane_owner[lane] = index;
  slot.group = target;
  slot.lane = lane;
  to.SetActiveFlag(lane, slot.enabled);
  if (to.kinematic_root) {
    // A kinematic root does not move by itself: its stale velocities must not feed the
    // joints' velocity terms.
    for (int32_t f : {kRbVx, kRbVy, kRbVz, kRbWx, kRbWy, kRbWz}) to.PartField(lane, f, 0) = 0.0f;
  }
}

}  // namespace tendon::detail
