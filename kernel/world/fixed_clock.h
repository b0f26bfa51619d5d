// kernel/world/fixed_clock.h: the fixed-step accumulator with a hitch clamp.
//
// A frame's dt feeds an accumulator that drains in 1/fixed_hz substeps, at most
// max_substeps per frame. Whole substeps beyond the clamp are dropped, not carried, so a
// long hitch costs at most max_substeps and the simulation does not spiral. The fraction
// of a substep left over is carried, so frame rates that do not divide fixed_hz still
// average to the right rate. A dt that is zero, negative or not finite steps nothing; any
// finite dt, however large, runs at most max_substeps and reports the rest as dropped.
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
    double due_steps = std::floor(accumulator_ / step_ + 1e-9);
    if (!(due_steps < kHugeSteps)) {
      // A dt of years (a raw timestamp passed as seconds): nothing of it but the clamp's
      // substeps can run, and no fraction of it is worth carrying. Converting the count
      // to an integer would overflow, so it is dropped here whole.
      tick.dropped_seconds = accumulator_ - static_cast<double>(max_substeps_) * step_;
      accumulator_ = static_cast<double>(max_substeps_) * step_;
      due_steps = std::floor(accumulator_ / step_ + 1e-9);
    }
    auto due = static_cast<int64_t>(due_steps);  // (one divide a frame: it is on the Step's serial path)
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
  // Past this many due substeps a frame's time is dropped whole (see Advance).
  static constexpr double kHugeSteps = 1e12;
  double time() const { return time_; }  // simulated seconds
  // The carried fraction (s) and the time, for saved states (tendon/snapshot.h).
  double accumulator() const { return accumulator_; }
  void Restore(double accumulator, double time) {
    accumulator_ = accumulator;
    time_ = time;
  }
  // How far the frame's time is past the last substep, in substeps: [0, 1). Render
  // interpolation shows alpha of the way from the substep before the last to the last.
  float Alpha() const {
    const double a = accumulator_ / step_;
    return static_cast<float>(a < 0.0 ? 0.0 : (a < 1.0 ? a : 1.0));
  }

 private:
  double step_;
  int32_t max_substeps_;
  double accumulator_ = 0.0;
  double time_ = 0.0;
};

}  // namespace tendon::detail
