// kernel/chains/chain_budget.cpp: the gather and budget phases: which chains simulate.
//
// What it owns: Gather (the one pass over every bound chain: its root frame and squared
// camera distance) and Budget (eligibility by distance or the host's predicate, the
// max_chains nearest, then the lane moves that keep each topology's awake chains packed).
// The budget is O(bound) only in Gather's one tight pass over dense distances; everything
// after it is O(selected): last frame's cut-off (plus a margin) pre-filters candidates, so
// the selection sorts about max_chains entries. Either way the result is exactly the
// max_chains nearest, ties broken by slot index.
// What it does NOT do: move lanes itself (chain_lanes.cpp) or read host input (the pose).
// Threading: Gather runs in chunks over the host's task hooks; Budget is serial.
// Memory: none (scratch sized at bind).
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
      const ChainId id = handles_.HandleAt(static_cast<uint32_t>(slot));
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
  for (const ChainId fresh_id : fresh_vrm_chains_) {
    Slot& fresh = chains_[fresh_id.index];
    if (handles_.IsLive(fresh_id) && !fresh.Awake()) fresh.start_at_bind = false;
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

}  // namespace tendon::detail
