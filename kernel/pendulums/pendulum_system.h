// kernel/pendulums/pendulum_system.h: accessory pendulums (charms, earrings, lanterns):
// one bob hinged at a host joint, swinging the accessory's offset.
//
// What it does: BindPendulum validates the settings and keeps the accessory's rest offset
// and lever (the joint to the accessory's centre, or 0.75 m down its up axis when that is
// shorter than 0.1 m). Each frame, per chunk of pendulums: the joint's host pose (the last
// good one when it is not finite), distance culling against the camera, the teleport
// guard, then per substep a verlet bob with damping, gravity, wind and stiffness toward the
// rest bob, kept at the lever's length and within max_swing of the rest direction. The
// swing becomes the written offset; unbinding restores the rest offset exactly.
// What it does NOT do: budgets or sleep by rest (only distance culling), lanes (the solve
// is scalar: a pendulum is one bob, a few dozen flops a substep), or collisions.
// Threading: Step splits pendulums into chunks over the host's task hooks; a chunk writes
// only its pendulums and its own counters, summed serially in chunk order. Everything
// else is the World's thread.
// Memory: slots and per-chunk counters are sized at bind time; Step allocates nothing.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kernel/core/frame_counters.h"
#include "kernel/core/snapshot_io.h"
#include "kernel/core/handle_table.h"
#include "tendon/profiler_hooks.h"
#include "tendon/errors.h"
#include "tendon/ids.h"
#include "tendon/math.h"
#include "tendon/pendulum_settings.h"
#include "tendon/stats.h"
#include "tendon/task_hooks.h"

namespace tendon::detail {

struct PendulumSystemSettings {
  TaskHooks tasks{};
  Vec3 gravity{};
  float max_distance = 0;       // m (WorldSettings::pendulum_max_distance)
  float teleport_distance = 0;  // m
};

class PendulumSystem {
 public:
  explicit PendulumSystem(const PendulumSystemSettings& settings) : settings_(settings) {}

  Result<PendulumId> Bind(const PendulumBinding& binding);
  Error Unbind(PendulumId id);
  // Unbinds every pendulum (each offset back to its rest); returns how many.
  int32_t UnbindAll();
  bool IsValid(PendulumId id) const { return Find(id) != nullptr; }
  Error GetState(PendulumId id, Vec3* bob, float* swing_radians) const;
  int32_t BoundCount() const { return static_cast<int32_t>(live_pendulums_.size()); }

  // The frame: `substeps` substeps of dt seconds each; alpha < 1 writes each offset alpha
  // of the way from the substep before the last to the last (render interpolation). Adds
  // bad input, resets, teleports and wakes to `stats`, and writes simulated_pendulums and
  // sleeping_pendulums.
  void Step(int32_t substeps, float dt, float alpha, Vec3 camera, Vec3 wind, FrameStats& stats);
  // Feeds every awake pendulum's bob, in slot order.
  void HashState(StateHasher& hasher) const;
  // Saved states (tendon/snapshot.h): every bound pendulum's motion, in slot order; a
  // restore is called twice over the same bytes: a checking pass, then the writing one
  // (r.apply()).
  void SaveState(SnapshotWriter& w) const;
  void RestoreState(SnapshotReader& r);
  // Debug validation (kernel/core/host_buffers.h): every bound pendulum's host buffers, or
  // the one of `only` when it is live.
  void CheckHostBuffers(PendulumId only = PendulumId{}) const;

  // The World's profiler hooks, or null (kernel/core/profile.h): names its tasks.
  void SetProfiler(const ProfilerHooks* profiler) { profiler_ = profiler; }

 private:
  struct Slot {
    int32_t live_index = -1;
    PendulumSettings settings{};
    const Transform* joint = nullptr;
    Transform* offset_out = nullptr;
    Transform rest_offset{};
    Vec3 lever_local{};  // hinge -> rest bob, in the joint's frame (before its scale)
    float lever_length = 0;
    float max_swing = 0;  // radians
    Transform last_good_joint{};
    bool awake = false;
    Vec3 bob{}, prev_bob{}, prev_hinge{}, prev_rest_bob{};
    Vec3 dir{};  // unit hinge -> bob after the last substep
    // The swing (world, from the rest direction to the bob's) after the substep before the
    // last: render interpolation writes alpha of the way from it to the last one.
    Quat prev_swing{};
    float swing = 0;
  };

  Slot* Find(PendulumId id);
  const Slot* Find(PendulumId id) const;
  void StepOne(Slot& p, int32_t substeps, float dt, float alpha, Vec3 camera, Vec3 wind, WorkCounters& counters,
               uint8_t& awake_flag) const;

  PendulumSystemSettings settings_;
  const ProfilerHooks* profiler_ = nullptr;
  HandleTable<PendulumId> handles_;
  std::vector<Slot> pendulums_;  // by PendulumId::index
  std::vector<int32_t> live_pendulums_;
  std::unordered_map<const void*, int32_t> pendulum_by_offset_;
  std::vector<WorkCounters> chunk_counters_;    // per chunk
  std::vector<uint8_t> awake_this_frame_;       // per live index: 1 awake, 2 woke this frame
};

}  // namespace tendon::detail
