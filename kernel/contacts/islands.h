// kernel/contacts/islands.h: the order in which the pairs between ragdolls are solved, and
// which of them may be solved at the same time.
//
// What it does: islands are ragdolls joined by pairs in which both are awake (a sleeping
// ragdoll is static in its pairs and only read, so it joins nothing). Order takes the
// frame's pairs with contacts (PairContacts::Find drops the rest), so an island is a
// heap of ragdolls that touch. Every island's pairs are coloured greedily (each takes the
// lowest colour neither of its awake bodies has used; a sleeping body is only read, so it
// takes none) and solved colour by colour: a pass that sweeps a heap in independent sets
// settles it sooner than one in broad-phase order (Jolt's pile scene: asleep at 7.6 s
// instead of 10.9 s); colour kPairColours - 1 takes the overflow. Islands share no awake
// body, so they run in parallel, one task each.
// One island that holds more than half the frame's pairs and more than kColouredIsland
// (one big heap, which would keep one thread busy while the others wait) is instead split
// by colour: its colours one after another, each colour's pairs in parallel, the overflow
// serially. Either way each island's pairs run in the same order, so results are the same
// bit for bit for any worker count and whichever way an island is run.
// What it does NOT do: find pairs (BroadPhase) or solve them (PairContacts).
// Threading: Order is serial; ForEachBatch (and ForEach) run a stage over the host's task
// hooks with no two concurrent calls touching one body; RunIsland runs one island's
// batches on the calling thread. Memory: sized by Reserve at bind time.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernel/contacts/broad_phase.h"
#include "kernel/core/parallel.h"
#include "kernel/rigid/pair_lanes.h"
#include "kernel/rigid/ragdoll_store.h"
#include "tendon/stats.h"

namespace tendon::detail {

inline constexpr int32_t kPairColours = 64;
inline constexpr int32_t kColouredIsland = 512;  // pairs; a bigger island holding most pairs is split by colour

class Islands {
 public:
  void Reserve(int32_t total_parts, std::size_t pair_capacity, int32_t slot_count);
  // Orders this frame's pairs (their `colour` field is used as scratch). Writes
  // ragdoll_islands and coloured_ragdoll_pairs.
  void Order(std::span<PartPair> pairs, std::span<const PairBody> bodies, int32_t body_count,
             const std::vector<RagdollSlot>& slots, FrameStats& stats);

  // The i-th pair in solve order (i < the pair count given to Order).
  const PartPair& pair(int32_t i) const { return ordered_pairs_[i]; }

  // Runs `stage(begin, count, worker)` over the ordered pairs in batches: up to kPairLanes
  // consecutive pairs of one colour of one island (no two share an awake body, so they may
  // be solved side by side in lanes); each overflow-colour pair is a batch of its own. The
  // islands run in parallel, each one's batches in order; then the split island's colours
  // one after another, the batches of a colour in parallel, its overflow colour serially.
  // Islands go to the workers one at a time, the largest first (a shared counter, not
  // ranges fixed in advance: a few large islands would otherwise leave one worker waiting
  // on the other); which worker runs an island never changes its result. `worker` indexes
  // per-worker scratch (< WorkerSlots); the serial parts run as worker 0.
  template <class F>
  void ForEachBatch(const TaskHooks& tasks, const F& stage, TaskProfile profile = {}) const {
    auto runs = [&](int32_t begin, int32_t end, uint32_t worker) { RunBatches(begin, end, stage, worker); };
    ParallelForDealt(tasks, island_count_, [&](int32_t k, uint32_t worker) { runs(island_start_[k], island_start_[k + 1], worker); },
                     profile);
    for (int32_t c = 0; c < kPairColours; ++c) {
      const int32_t begin = colour_start_[c], end = colour_start_[c + 1];
      if (begin == end) continue;
      if (c == kPairColours - 1) {
        runs(begin, end, 0u);
        continue;
      }
      auto task = [&](int32_t b, int32_t e, uint32_t worker) { runs(begin + b, begin + e, worker); };
      ParallelFor(tasks, end - begin, kPairLanes, task, profile);
    }
  }
  // The islands run one task each (not the split one), [0, island_count()), and each one's
  // ordered pairs, [IslandBegin(k), IslandEnd(k)).
  int32_t island_count() const { return island_count_; }
  int32_t IslandBegin(int32_t k) const { return island_start_[k]; }
  int32_t IslandEnd(int32_t k) const { return island_start_[k + 1]; }
  // Whether this frame has an island split by colour (its pairs follow every island's).
  bool HasSplitIsland() const { return colour_start_[0] != colour_start_[kPairColours]; }
  // Island k's batches in order on the calling thread, as ForEachBatch runs them: for a
  // schedule that keeps an island with its bodies' blocks (RagdollSystem's domains).
  template <class F>
  void RunIsland(int32_t k, const F& stage, uint32_t worker) const {
    RunBatches(island_start_[k], island_start_[k + 1], stage, worker);
  }
  // `stage(i)` for every ordered pair, in the same order and with the same parallelism.
  template <class F>
  void ForEach(const TaskHooks& tasks, const F& stage, TaskProfile profile = {}) const {
    ForEachBatch(tasks, [&](int32_t begin, int32_t count, uint32_t) {
      for (int32_t i = begin; i < begin + count; ++i) stage(i);
    }, profile);
  }

 private:
  int32_t IslandOf(int32_t slot);
  // [begin, end) of the ordered pairs in batches: up to kPairLanes consecutive pairs of
  // one colour, each overflow-colour pair alone.
  template <class F>
  void RunBatches(int32_t begin, int32_t end, const F& stage, uint32_t worker) const {
    for (int32_t i = begin; i < end;) {
      const int32_t colour = ordered_pairs_[i].colour;
      int32_t j = i + 1;
      if (colour != kPairColours - 1) {
        while (j < end && j - i < kPairLanes && ordered_pairs_[j].colour == colour) ++j;
      }
      stage(i, j - i, worker);
      i = j;
    }
  }

  std::vector<PartPair> ordered_pairs_;  // by island, each island's by colour; the split island last
  std::vector<PartPair> by_island_;      // scratch: the pairs by island, in broad-phase order
  std::vector<int32_t> island_parent_, island_size_, island_fill_;  // per ragdoll slot
  std::vector<int32_t> island_root_;   // per island run as one task: its root slot, in solve order
  std::vector<int32_t> island_start_;  // per island run as one task, and one past the last
  int32_t island_count_ = 0;
  std::vector<uint64_t> body_colours_;  // per body: the colours its pairs took
  std::array<int32_t, kPairColours + 1> colour_start_{};  // the split island's colours (empty: none)
};

}  // namespace tendon::detail
