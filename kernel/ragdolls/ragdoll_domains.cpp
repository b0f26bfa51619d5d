// kernel/ragdolls/ragdoll_domains.cpp: a frame's domains (ragdoll_domains.h).
//
// Union-find over the frame's work items, joined by each pair whose two blocks both run;
// then counting sorts put the running blocks (in work order) and the islands (in island
// order) under their domains, so a domain's task visits them in exactly the order the
// substep-by-substep schedule would. A domain's weight (its lanes' parts plus its pairs,
// roughly the substeps' work) orders the domains for dealing, heaviest first, and decides
// whether the domains are balanced enough to beat substep by substep.
#include "kernel/ragdolls/ragdoll_domains.h"

#include <algorithm>
#include <array>
#include <cassert>

namespace tendon::detail {

void RagdollDomains::ReserveWork(int32_t work_items) {
  for (std::vector<int32_t>* v : {&parent_, &domain_of_, &blocks_, &weight_, &order_, &fill_}) v->resize(work_items);
  runs_.resize(work_items);
  block_start_.resize(static_cast<std::size_t>(work_items) + 1);
  island_start_.resize(static_cast<std::size_t>(work_items) + 1);
}

void RagdollDomains::ReserveIslands(std::size_t slot_count) {
  islands_.resize(slot_count);  // an island per ragdoll at most
}

int32_t RagdollDomains::Build(std::span<const RagdollWorkItem> work, std::span<const int32_t> group_first_work,
                              std::vector<RagdollGroup>& groups, const BroadPhase& broad, const Islands& islands,
                              int32_t pair_count, int32_t workers) {
  if (islands.HasSplitIsland()) return 0;
  const auto count = static_cast<int32_t>(work.size());
  int32_t* parent = parent_.data();
  auto find = [parent](int32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  auto work_of = [&](int32_t body) {
    const PairBody& b = broad.body(body);
    return group_first_work[b.group] + b.lane / groups[b.group].block_lanes;
  };
  // A block runs when the kernel steps one of its lanes (live and awake: the kernel's own
  // test, RunStages). One that does not is not written this frame, by the kernel or by
  // the pairs (a sleeping body is fixed in its pairs), so any domain may read it.
  for (int32_t i = 0; i < count; ++i) {
    parent[i] = i;
    const RigidBlockView view = groups[work[i].group].View(work[i].block);
    const float* asleep = view.Lane(kAsleep);
    const float* active = view.Lane(kActive);
    bool runs = false;
    for (int32_t l = 0; l < view.lanes; ++l) runs = runs || !(asleep[l] > 0.5f || active[l] < 0.5f);
    runs_[i] = runs ? 1 : 0;
  }
  // A pair joins its two blocks when both run: the kernel writes a block's every lane that
  // runs (a sleeping one too, if the kernel stores its slice whole), and another domain's
  // pairs would read it meanwhile.
  for (int32_t i = 0; i < pair_count; ++i) {
    const PartPair& pair = islands.pair(i);
    const int32_t wa = work_of(pair.a), wb = work_of(pair.b);
    if (runs_[wa] == 0 || runs_[wb] == 0) continue;
    const int32_t ra = find(wa), rb = find(wb);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  int32_t domains = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (runs_[i] != 0 && find(i) == i) domain_of_[i] = domains++;
  }
  if (domains < 2) return domains;
  // An island's domain is that of a body of its that runs (an island has an awake body).
  auto island_domain = [&](int32_t k) {
    const PartPair& first = islands.pair(islands.IslandBegin(k));
    const int32_t wa = work_of(first.a);
    assert(runs_[wa] != 0 || runs_[work_of(first.b)] != 0);  // an awake body's block runs
    return domain_of_[find(runs_[wa] != 0 ? wa : work_of(first.b))];
  };
  // Counting sorts: the blocks that run by domain (in work order), the islands by domain
  // (in island order); a domain's weight is its lanes' parts plus its pairs, roughly the
  // substeps' work.
  for (int32_t d = 0; d <= domains; ++d) block_start_[d] = island_start_[d] = 0;
  for (int32_t d = 0; d < domains; ++d) weight_[d] = 0;
  int64_t total = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (runs_[i] == 0) continue;
    domain_of_[i] = domain_of_[find(i)];
    ++block_start_[domain_of_[i] + 1];
    const RagdollGroup& g = groups[work[i].group];
    weight_[domain_of_[i]] += g.block_lanes * g.part_count;
    total += g.block_lanes * g.part_count;
  }
  const int32_t island_count = islands.island_count();
  for (int32_t k = 0; k < island_count; ++k) {
    const int32_t d = island_domain(k);
    ++island_start_[d + 1];
    weight_[d] += islands.IslandEnd(k) - islands.IslandBegin(k);
    total += islands.IslandEnd(k) - islands.IslandBegin(k);
  }
  // The domains, heaviest first (ties in domain order): the order workers take them in.
  for (int32_t d = 0; d < domains; ++d) order_[d] = d;
  std::sort(order_.begin(), order_.begin() + domains, [&](int32_t x, int32_t y) {
    return weight_[x] > weight_[y] || (weight_[x] == weight_[y] && x < y);
  });
  // With workers to share it: the domains dealt in that order, each to the least loaded
  // worker, must finish within 4/3 of the work spread evenly over the workers, or the
  // substep-by-substep schedule (which spreads blocks and islands over all of them) runs.
  // Two workers and two domains: the heaviest may hold up to two thirds.
  workers = std::min(workers, kMaxWorkers);
  if (workers > 1) {
    std::array<int64_t, kMaxWorkers> load{};
    for (int32_t k = 0; k < domains; ++k) {
      int32_t least = 0;
      for (int32_t w = 1; w < workers; ++w) least = load[w] < load[least] ? w : least;
      load[least] += weight_[order_[k]];
    }
    const int64_t makespan = *std::max_element(load.begin(), load.begin() + workers);
    if (3 * static_cast<int64_t>(workers) * makespan > 4 * total) return 1;
  }
  for (int32_t d = 0; d < domains; ++d) {
    block_start_[d + 1] += block_start_[d];
    island_start_[d + 1] += island_start_[d];
  }
  for (int32_t d = 0; d < domains; ++d) fill_[d] = block_start_[d];
  for (int32_t i = 0; i < count; ++i) {
    if (runs_[i] != 0) blocks_[fill_[domain_of_[i]]++] = i;
  }
  for (int32_t d = 0; d < domains; ++d) fill_[d] = island_start_[d];
  for (int32_t k = 0; k < island_count; ++k) islands_[fill_[island_domain(k)]++] = k;
  return domains;
}

}  // namespace tendon::detail
