// kernel/ragdolls/ragdoll_domains.h: a frame's domains: the stepped blocks that the pairs
// between ragdolls join, each with the islands of its pairs.
//
// What it does: Build, once per frame with pairs (after the islands are ordered), joins
// the work items (blocks) the kernel steps this frame by every pair between their lanes
// (union-find), so that each domain's kernels and pairs write only its own blocks' lanes.
// A block no lane of which is stepped is written by no one this frame (a sleeping body is
// fixed in its pairs), so it joins nothing and any domain may read it. Each domain can then
// run all of the frame's substeps in one task, without a barrier between the halves of a
// substep, in the same order per block and per island as the substep-by-substep schedule:
// no result changes. Build also deals the domains to the workers heaviest first and says
// when that would leave them unbalanced.
// What it does NOT do: run anything (RagdollSystem::Solve runs the domains it lists), find
// pairs or islands (BroadPhase, PairContacts, Islands), or move lanes.
// Threading: Build runs on the frame's thread between the islands and the substeps; the
// accessors are read by the domain tasks, one domain each.
// Memory: Reserve sizes everything at bind time; Build allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernel/contacts/broad_phase.h"
#include "kernel/contacts/islands.h"
#include "kernel/rigid/ragdoll_store.h"

namespace tendon::detail {

// A frame's unit of work: a block of a group with enabled lanes.
struct RagdollWorkItem {
  int32_t group = 0;
  int32_t block = 0;
};

class RagdollDomains {
 public:
  // The most workers Build's balance test counts.
  static constexpr int32_t kMaxWorkers = 64;

  // Room for `work_items` blocks (every group's, bound or reserved) and an island per
  // ragdoll slot (bind time).
  void ReserveWork(int32_t work_items);
  void ReserveIslands(std::size_t slot_count);

  // The frame's domains over work items [0, count) (work[i]; group_first_work[g]: group g's
  // first item) and the first `pair_count` ordered pairs of `islands`. Returns the number of
  // domains to run: 0 when an island is split by colour (its colours need the barriers), 1
  // (run substep by substep) when there are fewer than two, or when, with more than one of
  // `workers`, the domains dealt to the workers heaviest first would take over 4/3 of an
  // even share (substep by substep spreads the work better).
  int32_t Build(std::span<const RagdollWorkItem> work, std::span<const int32_t> group_first_work,
                std::vector<RagdollGroup>& groups, const BroadPhase& broad, const Islands& islands, int32_t pair_count,
                int32_t workers);

  // Domain k in dealing order (the heaviest first), k < Build's result: its work items in
  // work order, and its islands in island order.
  std::span<const int32_t> Blocks(int32_t k) const {
    const int32_t d = order_[k];
    return {blocks_.data() + block_start_[d], static_cast<std::size_t>(block_start_[d + 1] - block_start_[d])};
  }
  std::span<const int32_t> IslandsOf(int32_t k) const {
    const int32_t d = order_[k];
    return {islands_.data() + island_start_[d], static_cast<std::size_t>(island_start_[d + 1] - island_start_[d])};
  }

 private:
  // Per work item: its union-find parent, then its domain; whether the kernel steps a lane
  // of it. The work items and islands by domain ([start[d], start[d + 1])) and the sorts'
  // fill positions; each domain's weight; the domains, heaviest first.
  std::vector<int32_t> parent_, domain_of_, blocks_, block_start_, fill_;
  std::vector<int32_t> islands_, island_start_, weight_, order_;
  std::vector<uint8_t> runs_;
};

}  // namespace tendon::detail
