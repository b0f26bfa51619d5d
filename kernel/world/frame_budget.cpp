#include "kernel/world/frame_budget.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace tendon::detail {

namespace {

constexpr double kHigh = 1.0;     // over this share of the budget: cut
constexpr double kLow = 0.9;      // under it, with something cut: give back
constexpr double kTarget = 0.95;  // where a cut or a give-back aims
constexpr double kCostBlend = 0.3;  // weight of a new frame in the per-item costs
constexpr double kSubstepBlend = 0.1;

double Blend(double old_value, double new_value, double weight) {
  return old_value > 0.0 ? old_value + weight * (new_value - old_value) : new_value;
}

}  // namespace

FrameBudget::FrameBudget(float budget_ms, int32_t max_chains, int32_t ragdoll_substeps, int32_t min_ragdoll_substeps)
    : budget_ms_(budget_ms > 0.0f && std::isfinite(budget_ms) ? budget_ms : 0.0),
      max_chains_(max_chains),
      max_ragdoll_substeps_(ragdoll_substeps),
      min_ragdoll_substeps_(std::clamp(min_ragdoll_substeps, 1, ragdoll_substeps)),
      chain_cap_(INT32_MAX),
      ragdoll_substeps_(ragdoll_substeps) {}

BudgetAction FrameBudget::Observe(const FrameBudgetSample& frame) {
  if (!enabled()) return BudgetAction::kOff;
  if (frame.substeps <= 0 || !(frame.total_ms >= 0.0) || !std::isfinite(frame.total_ms)) return BudgetAction::kHeld;
  usual_substeps_ = Blend(usual_substeps_, frame.substeps, kSubstepBlend);
  const double scale = std::min(1.0, std::max(1.0, std::round(usual_substeps_)) / frame.substeps);
  const double total = frame.total_ms * scale;
  if (frame.simulated_chains > 0)
    chain_cost_ms_ = Blend(chain_cost_ms_, frame.chain_ms * scale / frame.simulated_chains, kCostBlend);
  if (frame.simulated_ragdolls > 0)
    substep_cost_ms_ = Blend(substep_cost_ms_, frame.ragdoll_ms * scale / ragdoll_substeps_, kCostBlend);
  estimate_ms_ = estimate_ms_ > 0.0 ? 0.5 * (estimate_ms_ + total) : total;

  // What the host's own cap would let simulate: the most the budget ever gives back.
  const int32_t eligible = std::min(frame.simulated_chains + frame.budget_culled_chains, max_chains_);
  if (estimate_ms_ > kHigh * budget_ms_) {
    // Over: chains first (the farthest), then ragdoll substeps.
    double excess = estimate_ms_ - kTarget * budget_ms_;
    bool changed = false;
    if (frame.simulated_chains > 0 && chain_cost_ms_ > 0.0) {
      const auto cut = static_cast<int32_t>(
          std::min<double>(frame.simulated_chains, std::ceil(excess / chain_cost_ms_)));
      chain_cap_ = std::min(frame.simulated_chains - cut, max_chains_);
      excess -= cut * chain_cost_ms_;
      estimate_ms_ -= cut * chain_cost_ms_;
      changed = cut > 0;
    }
    if (excess > 0.0 && frame.simulated_ragdolls > 0 && substep_cost_ms_ > 0.0 &&
        ragdoll_substeps_ > min_ragdoll_substeps_) {
      const auto cut = static_cast<int32_t>(
          std::min<double>(ragdoll_substeps_ - min_ragdoll_substeps_, std::ceil(excess / substep_cost_ms_)));
      ragdoll_substeps_ -= cut;
      estimate_ms_ -= cut * substep_cost_ms_;
      changed = changed || cut > 0;
    }
    return changed ? BudgetAction::kCut : BudgetAction::kAtFloor;
  }
  const bool something_cut = chain_cap_ != INT32_MAX || ragdoll_substeps_ < max_ragdoll_substeps_;
  if (estimate_ms_ >= kLow * budget_ms_ || !something_cut) return BudgetAction::kHeld;
  // Under, with something cut: substeps back first, then chains.
  double spare = kTarget * budget_ms_ - estimate_ms_;  // > 0.05 budget here
  bool changed = false;
  if (ragdoll_substeps_ < max_ragdoll_substeps_) {
    // Without a measured cost (no ragdoll simulated since), one substep at a time.
    const double cost = substep_cost_ms_ > 0.0 ? substep_cost_ms_ : spare;
    const auto add = static_cast<int32_t>(
        std::min<double>(max_ragdoll_substeps_ - ragdoll_substeps_, std::floor(spare / cost)));
    ragdoll_substeps_ += add;
    spare -= add * cost;
    estimate_ms_ += add * cost;
    changed = add > 0;
  }
  if (ragdoll_substeps_ == max_ragdoll_substeps_ && chain_cap_ != INT32_MAX) {
    const double cost = chain_cost_ms_ > 0.0 ? chain_cost_ms_ : spare;
    const int32_t base = std::min({chain_cap_, frame.simulated_chains, max_chains_});
    const auto add = static_cast<int32_t>(
        std::min<double>({std::floor(spare / cost), base + 8.0, static_cast<double>(INT32_MAX - base)}));
    if (base + add >= eligible) {
      // Every eligible chain fits: no cap. (More may become eligible; the next cut finds them.)
      estimate_ms_ += (eligible - frame.simulated_chains) * cost;
      changed = changed || chain_cap_ != INT32_MAX;
      chain_cap_ = INT32_MAX;
    } else if (add > 0) {
      chain_cap_ = base + add;
      estimate_ms_ += add * cost;
      changed = true;
    }
  }
  return changed ? BudgetAction::kRestored : BudgetAction::kHeld;
}

}  // namespace tendon::detail
