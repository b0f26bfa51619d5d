// kernel/world/frame_budget.h: holds a World's Step under WorldSettings::frame_budget_ms.
//
// What it does: after each frame, FrameBudget::Observe takes what the frame cost and what
// it simulated, keeps running estimates of the cost of one simulated chain and of one
// ragdoll substep per fixed step, and sets the next frame's limits: a chain cap (the
// chain system's nearest-N selection, under the host's max_chains) and the ragdoll
// substeps per fixed step (under the host's ragdoll_substeps, down to a floor).
//   - The frame's cost is smoothed (half the last estimate, half the new frame); each
//     change of the limits resets the estimate to what the model predicts for them, so a
//     cut is not made twice for one overload.
//   - The band is [90%, 100%] of the budget. Over 100%: cut to 95%, chains first (the
//     farthest go: they are the cheapest to lose), then ragdoll substeps. Under 90% with
//     something cut: give back to 95%, substeps first, then chains, the cap at most
//     doubling (plus 8) a frame, so an estimate taken on a few chains cannot overshoot
//     far. Inside the band nothing changes: that is the hysteresis.
//   - Under BeginStep the World hands it the serial phases plus the longer lane, not the
//     wall time to FinishStep (which holds the host's own work); a chain's cost is its
//     phases' time either way, so a chain in the lane beside the ragdolls counts in full.
//   - Costs are per frame at the usual fixed-substep count (a running average): a frame
//     that ran more fixed substeps (a hitch) is scaled down to it, and a frame that ran
//     none (a high frame rate on the fixed clock) is not measured.
// What it does NOT do: time anything (the World hands it its phase times), or decide which
// chains are cut (the chain system's budget keeps the nearest).
// Threading: the World's, between frames. Memory: none.
#pragma once

#include <cstdint>

#include "tendon/stats.h"

namespace tendon::detail {

// One frame, as the World measured it.
struct FrameBudgetSample {
  double total_ms = 0;
  double chain_ms = 0;    // pose + solve + writeback: what scales with simulated chains
  double ragdoll_ms = 0;  // the ragdoll phase: what scales with ragdoll substeps
  int32_t simulated_chains = 0;
  int32_t budget_culled_chains = 0;  // eligible chains a cap (the host's or the budget's) left out
  int32_t simulated_ragdolls = 0;
  int32_t substeps = 0;  // fixed substeps the frame ran
};

class FrameBudget {
 public:
  // budget_ms 0: off (Observe does nothing, the limits are the host's). The host's own
  // caps are the ceilings: a chain cap at or above max_chains is no cap.
  FrameBudget(float budget_ms, int32_t max_chains, int32_t ragdoll_substeps, int32_t min_ragdoll_substeps);
  // The host changed max_chains (World::SetMaxChains).
  void SetHostMaxChains(int32_t max_chains) { max_chains_ = max_chains; }

  bool enabled() const { return budget_ms_ > 0.0; }
  // The limits for the next frame: a chain cap (INT32_MAX: none) and ragdoll substeps.
  int32_t chain_cap() const { return chain_cap_; }
  int32_t ragdoll_substeps() const { return ragdoll_substeps_; }
  // The smoothed cost of a frame at the usual substep count, ms (0 before the first).
  double estimate_ms() const { return estimate_ms_; }
  // Takes the frame just stepped (run under the current limits) and sets the next frame's;
  // returns what it decided.
  BudgetAction Observe(const FrameBudgetSample& frame);

 private:
  double budget_ms_;
  int32_t max_chains_;
  int32_t max_ragdoll_substeps_;
  int32_t min_ragdoll_substeps_;
  int32_t chain_cap_;
  int32_t ragdoll_substeps_;
  double estimate_ms_ = 0;
  double chain_cost_ms_ = 0;    // one simulated chain
  double substep_cost_ms_ = 0;  // one ragdoll substep per fixed step, every ragdoll
  double usual_substeps_ = 0;   // running average of the fixed substeps a measured frame ran
};

}  // namespace tendon::detail
