// kernel/core/profile.h: zones and task zones on the host's profiler hooks.
//
// What it does: ProfileZone opens a zone for its scope when the World has profiler hooks
// (tendon/profiler_hooks.h); TaskProfile names the tasks a ParallelFor hands out. A null
// `hooks` pointer means none: the World keeps it null unless zone_begin and zone_end are
// both set, so every check is one pointer test.
// What it does NOT do: time anything (the World's phase times come from tick_clock.h).
// Threading: the hooks are called on the zone's thread. Memory: none.
#pragma once

#include <cstdint>

#include "tendon/profiler_hooks.h"

namespace tendon::detail {

// Zone colours, 0xRRGGBB: one per system.
inline constexpr uint32_t kFrameColor = 0x6C7A89;
inline constexpr uint32_t kChainColor = 0x2E9E5B;
inline constexpr uint32_t kRagdollColor = 0xE67E22;
inline constexpr uint32_t kCharacterColor = 0x8E44AD;
inline constexpr uint32_t kPendulumColor = 0x2980B9;

class ProfileZone {
 public:
  ProfileZone(const ProfilerHooks* hooks, const char* name, uint32_t color, uint32_t worker)
      : hooks_(hooks), name_(name), worker_(worker) {
    if (hooks_ != nullptr) hooks_->zone_begin(name_, color, worker_, hooks_->user_context);
  }
  ~ProfileZone() {
    if (hooks_ != nullptr) hooks_->zone_end(name_, worker_, hooks_->user_context);
  }
  ProfileZone(const ProfileZone&) = delete;
  ProfileZone& operator=(const ProfileZone&) = delete;

 private:
  const ProfilerHooks* hooks_;
  const char* name_;
  uint32_t worker_;
};

// What a ParallelFor's tasks are called in the profiler (no hooks: nothing).
struct TaskProfile {
  const ProfilerHooks* hooks = nullptr;
  const char* name = nullptr;
  uint32_t color = 0;
};

}  // namespace tendon::detail
