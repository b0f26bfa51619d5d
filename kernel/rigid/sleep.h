// kernel/rigid/sleep.h: sleep, settling and waking of ragdolls.
//
// What it does: after a frame's substeps, per awake lane, each part's speed over the
// frame (UpdateFrameSpeeds) and the sleep clocks (Update): still_seconds (no point strayed
// past the tolerance since the window opened), slow_seconds (every point slower than the
// sleep speed), calm_seconds (every frame speed below 4 x the sleep speed: the lane is
// damped by settle_damping while it lasts). Past sleep_seconds on either of the first two,
// or past the slot's freeze_after_seconds, the lane falls asleep (and freezes when asked):
// its velocities are zeroed and the kernel skips it. WakesOnTouch is the rule the broad
// phase applies to a sleeping ragdoll that another part may touch.
// What it does NOT do: wake ragdolls by itself (the broad phase, the host's calls and
// moving kinematic roots do), or touch lanes other than the one it is given.
// Threading: per lane; safe from the task that owns the lane's block.
// Memory: none.
#pragma once

#include <cstdint>

#include "kernel/rigid/ragdoll_store.h"

namespace tendon::detail {

struct SleepSettings {
  float sleep_speed = 0;     // m/s (WorldSettings::ragdoll_sleep_speed; 0: never sleeps)
  float sleep_seconds = 0;   // s (WorldSettings::ragdoll_sleep_seconds)
  float settle_damping = 0;  // 1/s (WorldSettings::ragdoll_settle_damping; 0: no settling)
};

class Sleep {
 public:
  explicit Sleep(const SleepSettings& settings) : settings_(settings) {}

  // Each part's speed over the frame: the lesser of its displacement since the last frame
  // (over the frame's time) and its velocity, for the centre and for the turn times the
  // part's extent; then the frame's pose is remembered for the next.
  static void UpdateFrameSpeeds(RagdollSlot& slot, const RigidBlockView& view, int32_t l, const RagdollGroup& g,
                                float frame_seconds);
  // The sleep clocks and settling of an awake lane after a frame; it may fall asleep.
  void Update(RagdollSlot& slot, const RigidBlockView& view, int32_t l, const RagdollGroup& g,
              float frame_seconds) const;
  // Whether a sleeping ragdoll wakes when a part of `toucher` moving at `toucher_speed`
  // (its frame speed) may touch it: faster than twice the sleep speed, unless the toucher
  // is itself settling. One touched more gently stays asleep and acts as static.
  bool WakesOnTouch(float toucher_speed, const RagdollSlot& toucher) const {
    return !(toucher_speed <= 2.0f * settings_.sleep_speed || toucher.calm_seconds >= settings_.sleep_seconds);
  }
  const SleepSettings& settings() const { return settings_; }

 private:
  SleepSettings settings_;
};

}  // namespace tendon::detail
