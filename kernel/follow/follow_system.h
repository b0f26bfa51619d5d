// kernel/follow/follow_system.h: the ragdolls a World follows from received samples
// (tendon/follow.h), and the steering each Step gives them.
//
// What it does: per followed ragdoll, a ring of kFollowSampleCapacity samples sorted by
// time (part frames, and velocities at the part origins when the sample had them), the
// time last played, and the host's own acceleration (kept aside while gravity is
// cancelled). Step, once per frame that runs fixed steps and before the ragdolls' lanes
// are packed, evaluates each followed ragdoll's target pose at the end of the frame and
// at its start, and either places the ragdoll there (past snap_distance) or writes
// velocities that take every dynamic part there by the frame's end (the target's motion
// over the frame plus the remaining error over max(frame, response time)).
// What it does NOT do: touch a ragdoll it does not follow, run inside the substeps (the
// rigid kernels are unchanged: a World with nothing followed gives the same bits as
// before), decode anything, or save its state.
// Threading: the World's thread: calls between Steps, Step serially in OpenFrame, in
// ragdoll slot order. Memory: Follow allocates the ring (a reused entry keeps its
// storage); Push, Step, Stop and Forget do not.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernel/ragdolls/ragdoll_system.h"
#include "tendon/errors.h"
#include "tendon/follow.h"
#include "tendon/ids.h"
#include "tendon/math.h"

namespace tendon::detail {

class FollowSystem {
 public:
  // Checks the settings (which field, why); the ragdoll is checked by the World.
  static Error CheckSettings(const FollowSettings& settings);
  // Starts (or, followed already, re-sets the settings of, keeping its samples) following.
  Error Follow(RagdollSystem& ragdolls, RagdollId id, const FollowSettings& settings);
  Error Push(const RagdollSystem& ragdolls, RagdollId id, double sample_time, std::span<const Transform> parts,
             std::span<const Vec3> linear, std::span<const Vec3> angular);
  // The handover: stops following; the host's acceleration goes back on.
  Error Stop(RagdollSystem& ragdolls, RagdollId id);
  bool IsFollowing(RagdollId id) const;
  // The ragdoll is gone (unbound): its entry is dropped without touching it.
  void Forget(RagdollId id);
  void ForgetAll();
  int32_t Count() const { return count_; }
  // SetRagdollAcceleration on a followed ragdoll: kept for the handover (checked as
  // RagdollSystem::SetAcceleration checks it).
  Error SetHostAcceleration(RagdollSystem& ragdolls, RagdollId id, Vec3 acceleration);
  // The follow clock is `now` at World time `world_time` (seconds).
  Error SetClock(double now, double world_time);
  double ClockOffset() const { return clock_offset_; }
  // One frame: world_time_end is the World's time after the frame's fixed steps,
  // frame_seconds their length (> 0).
  void Step(RagdollSystem& ragdolls, double world_time_end, double frame_seconds, Vec3 gravity);

 private:
  struct Follower {
    RagdollId id{};
    bool active = false;
    bool gravity_cancelled = false;
    FollowSettings settings{};
    int32_t parts = 0;
    int32_t count = 0;            // samples held
    int32_t order[kFollowSampleCapacity]{};  // ring slots, oldest first
    double times[kFollowSampleCapacity]{};
    bool has_velocity[kFollowSampleCapacity]{};
    double played = 0;            // the last time played (valid when any_played)
    bool any_played = false;
    Vec3 host_acceleration{};
    std::vector<Transform> frames;  // kFollowSampleCapacity x parts
    std::vector<Vec3> linear, angular;  // at the part origins
  };
  // The pose at time t into `out` (parts frames); false when there is no sample.
  bool Evaluate(const Follower& f, double t, std::span<Transform> out) const;
  Follower* Find(RagdollId id);
  const Follower* Find(RagdollId id) const;
  void Steer(RagdollSystem& ragdolls, Follower& f, double play_end, double frame_seconds, Vec3 gravity);

  std::vector<Follower> followers_;  // by ragdoll slot index
  int32_t count_ = 0;
  double clock_offset_ = 0;
};

}  // namespace tendon::detail
