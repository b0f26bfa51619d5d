// kernel/world/fixed_clock.h: the fixed-step accumulator with a hitch clamp.
//
// A frame's dt feeds an accumulator that drains in 1/fixed_hz substeps, at most
// max_substeps per frame. Whole substeps beyond the clamp are dropped, not carried, so a
// long hitch costs at most max_substeps and the simulation does not spiral. The fraction
// of a substep left over is carried, so frame rates that do not divide fixed_hz still
// average to the right rate. A dt that is zero, negative or not finite steps nothing.
#pragma once

#include <cmath>
#include <cstdint>

namespace tendon::detail {

class FixedClock {
 public:
  struct Tick {
    int32_t substeps = 0;
    double dropped_seconds = 0;
    bool rejected = false;
  };

  FixedClock(double fixed_hz, int32_t max_substeps) : step_(1.0 / fixed_hz), max_substeps_(max_substeps) {}

  Tick Advance(double dt) {
    Tick tick;
    if (!std::isfinite(dt) || dt <= 0.0) {
      tick.rejected = true;
      return tick;
    }
    accumulator_ += dt;
    // A tiny epsilon so that 1/60 s fed at 60 Hz is one substep despite rounding.
    auto due = static_cast<int64_t>(std::floor(accumulator_ / step_ + 1e-9));
    if (due > max_substeps_) {
      tick.dropped_seconds = static_cast<double>(due - max_substeps_) * step_;
      accumulator_ -= tick.dropped_seconds;
      due = max_substeps_;
    }
    accumulator_ -= static_cast<double>(due) * step_;
    if (accumulator_ < 0.0) accumulator_ = 0.0;
    tick.substeps = static_cast<int32_t>(due);
    time_ += static_cast<double>(due) * step_;
    return tick;
  }

  double step() const { return step_; }
  double time() const { return time_; }  // simulated seconds

 private:
  double step_;
  int32_t max_substeps_;
  double accumulator_ = 0.0;
  double time_ = 0.0;
};

}  // namespace tendon::detail
