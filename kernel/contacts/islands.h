// kernel/contacts/islands.h: the order in which the pairs between ragdolls are solved, and
// which of them may be solved at the same time.
//
// What it does: islands are ragdolls joined by pairs in which both are awake (a sleeping
// ragdoll is static in its pairs and only read, so it joins nothing). The pairs of an
// island touch no body of another island, so islands are solved in parallel, each one's
// pairs in order on one thread: one task per island and stage instead of one parallel
// pass per colour. An island of more than kColouredIsland pairs (one big heap, which would
// keep one thread busy while the others wait) is coloured instead: the greedy lowest
// colour neither body has used, colours one after another, each colour's pairs in
// parallel; colour kPairColours - 1 takes the overflow and runs serially. The split
// depends on the scene only, never on the worker count, so results are the same for any
// worker count. Once the pairs' contacts are found, KeepPairs drops the pairs that have
// none from that order without reordering the rest (the substeps never visit them).
// What it does NOT do: find pairs (BroadPhase) or solve them (PairContacts).
// Threading: Order is serial; ForEach runs a stage over the host's task hooks with no two
// concurrent calls touching one body. Memory: sized by Reserve at bind time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernel/contacts/broad_phase.h"
#include "kernel/core/parallel.h"
#include "kernel/rigid/ragdoll_store.h"
#include "tendon/stats.h"

namespace tendon::detail {

inline constexpr int32_t kPairColours = 64;
inline constexpr int32_t kColouredIsland = 512;  // pairs; bigger islands are coloured

class Islands {
 public:
  void Reserve(int32_t total_parts, std::size_t pair_capacity, int32_t slot_count);
  // Orders this frame's pairs (their `colour` field is used as scratch). Writes
  // ragdoll_islands and coloured_ragdoll_pairs.
  void Order(std::span<PartPair> pairs, std::span<const PairBody> bodies, int32_t body_count,
             const std::vector<RagdollSlot>& slots, FrameStats& stats);

  // The i-th pair in solve order (i < the pair count given to Order, or after KeepPairs
  // the count it returned).
  const PartPair& pair(int32_t i) const { return ordered_pairs_[i]; }

  // Drops the ordered pairs for which keep(i) is false (i: the index Order gave them),
  // keeping every island's and colour's pairs in their order, so that the solve order of
  // the rest, and so every result, is unchanged. Each kept pair's `found` is its index
  // from Order. Returns how many are kept. Serial, O(pairs).
  template <class Keep>
  int32_t KeepPairs(const Keep& keep) {
    int32_t kept = 0;
    int32_t begin = 0;
    auto range = [&](int32_t end) {
      for (int32_t i = begin; i < end; ++i) {
        if (!keep(i)) continue;
        PartPair p = ordered_pairs_[i];
        p.found = i;
        ordered_pairs_[kept++] = p;
      }
      begin = end;
    };
    for (int32_t k = 0; k < island_count_; ++k) {
      const int32_t end = island_start_[k + 1];
      island_start_[k] = kept;
      range(end);
    }
    island_start_[island_count_] = kept;
    for (int32_t c = 0; c < kPairColours; ++c) {
      const int32_t end = colour_start_[c + 1];
      colour_start_[c] = kept;
      range(end);
    }
    colour_start_[kPairColours] = kept;
    return kept;
  }

  // Runs `stage(i)` over the ordered pairs: the small islands in parallel, each one's
  // pairs in order; then the big islands' colours one after another, the pairs of a
  // colour in parallel (they share no body), the overflow colour serially.
  template <class F>
  void ForEach(const TaskHooks& tasks, const F& stage, TaskProfile profile = {}) const {
    auto islands = [&](int32_t b, int32_t e, uint32_t) {
      for (int32_t k = b; k < e; ++k)
        for (int32_t i = island_start_[k]; i < island_start_[k + 1]; ++i) stage(i);
    };
    ParallelFor(tasks, island_count_, 1, islands, profile);
    for (int32_t c = 0; c < kPairColours; ++c) {
      const int32_t begin = colour_start_[c], end = colour_start_[c + 1];
      if (begin == end) continue;
      if (c == kPairColours - 1) {
        for (int32_t i = begin; i < end; ++i) stage(i);
        continue;
      }
      auto task = [&](int32_t b, int32_t e, uint32_t) {
        for (int32_t i = begin + b; i < begin + e; ++i) stage(i);
      };
      ParallelFor(tasks, end - begin, 16, task, profile);
    }
  }

 private:
  int32_t IslandOf(int32_t slot);

  std::vector<PartPair> ordered_pairs_;  // by island, then the big islands' pairs by colour
  std::vector<int32_t> island_parent_, island_size_, island_fill_;  // per ragdoll slot
  std::vector<int32_t> island_start_;  // per small island, and one past the last
  int32_t island_count_ = 0;
  std::vector<uint64_t> body_colours_;  // per body: the colours its pairs took
  std::array<int32_t, kPairColours + 1> colour_start_{};
};

}  // namespace tendon::detail
