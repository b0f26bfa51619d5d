// kernel/follow/follow_system.cpp: following received samples (kernel/follow/follow_system.h).
//
// The steering is a velocity, not a position: a part keeps its place in the solver, so its
// joints and contacts act on it within the frame and it pushes what it meets, and a
// velocity set at the frame's start is what the part shows at its end (gravity is
// cancelled through the lane's acceleration while it is steered, so nothing bends the
// path in between but what it meets). Positions on a cubic Hermite curve when both samples
// carry velocities (a falling body between samples 50 ms apart bends by g dt^2 / 8 = 3 mm
// off the chord; the curve follows it), else linear; rotations by nlerp (samples are a few
// degrees apart at most at 20 per second).
#include "kernel/follow/follow_system.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"
#include "kernel/rigid/ragdoll_archetype.h"

namespace tendon::detail {

namespace {

// q turned by the rotation vector r.
Quat Turned(Quat q, Vec3 r) {
  const float angle = Length(r);
  if (!(angle > 1e-9f)) return q;
  return Normalize(AxisAngle(r * (1.0f / angle), angle) * q);
}

Vec3 Capped(Vec3 v, float cap) {
  const float len = Length(v);
  return len > cap ? v * (cap / len) : v;
}

Error NotFollowed() {
  return Fail(ErrorCode::kInactive, -1, "ragdoll", "the ragdoll is not followed (FollowRagdoll first)");
}

Error CheckFloat(float v, float lo, float hi, bool lo_open, const char* field, const char* range) {
  if (std::isnan(v) || v < lo || (lo_open && v == lo) || v > hi)
    return Fail(ErrorCode::kOutOfRange, -1, std::string("settings.") + field,
                std::string(field) + " must be within " + range);
  return {};
}

// Stillness below which a still target leaves a sleeping ragdoll asleep (m, rad, m/s, rad/s).
constexpr float kStillDistance = 2e-3f, kStillAngle = 0.01f, kStillSpeed = 1e-2f, kStillSpin = 2e-2f;

}  // namespace

Error FollowSystem::CheckSettings(const FollowSettings& s) {
  if (Error e = CheckFloat(s.interpolation_delay_seconds, 0, 10, true, "interpolation_delay_seconds", "(0, 10] s");
      !Ok(e))
    return e;
  if (Error e = CheckFloat(s.max_extrapolation_seconds, 0, 10, false, "max_extrapolation_seconds", "[0, 10] s"); !Ok(e))
    return e;
  if (Error e = CheckFloat(s.response_seconds, 0, 10, false, "response_seconds", "[0, 10] s"); !Ok(e)) return e;
  if (Error e = CheckFloat(s.max_speed, 0, 1e4f, true, "max_speed", "(0, 1e4] m/s"); !Ok(e)) return e;
  if (std::isnan(s.snap_distance) || !(s.snap_distance > 0))
    return Fail(ErrorCode::kOutOfRange, -1, "settings.snap_distance",
                "snap_distance must be > 0 m (INFINITY: never placed)");
  return {};
}

FollowSystem::Follower* FollowSystem::Find(RagdollId id) {
  if (id.index >= followers_.size()) return nullptr;
  Follower& f = followers_[id.index];
  return f.active && f.id == id ? &f : nullptr;
}
const FollowSystem::Follower* FollowSystem::Find(RagdollId id) const {
  return const_cast<FollowSystem*>(this)->Find(id);
}

bool FollowSystem::IsFollowing(RagdollId id) const { return Find(id) != nullptr; }

Error FollowSystem::Follow(RagdollSystem& ragdolls, RagdollId id, const FollowSettings& settings) {
  if (Error e = CheckSettings(settings); !Ok(e)) return e;
  if (Follower* f = Find(id)) {
    f->settings = settings;
    return {};
  }
  if (followers_.size() <= id.index) followers_.resize(id.index + 1);
  Follower& f = followers_[id.index];
  const auto n = static_cast<int32_t>(ragdolls.BodyInPart(id).size());
  f.id = id;
  f.settings = settings;
  f.parts = n;
  f.count = 0;
  f.any_played = false;
  f.gravity_cancelled = false;
  f.host_acceleration = ragdolls.Acceleration(id);
  const auto size = static_cast<std::size_t>(kFollowSampleCapacity * n);
  f.frames.resize(size);
  f.linear.resize(size);
  f.angular.resize(size);
  f.active = true;
  ++count_;
  return {};
}

Error FollowSystem::Push(const RagdollSystem& ragdolls, RagdollId id, double sample_time,
                         std::span<const Transform> parts, std::span<const Vec3> linear, std::span<const Vec3> angular) {
  Follower* f = Find(id);
  if (f == nullptr) return NotFollowed();
  const int32_t n = f->parts;
  if (!std::isfinite(sample_time))
    return Fail(ErrorCode::kNotFinite, -1, "sample_time", "the sample's time is not finite");
  if (static_cast<int32_t>(parts.size()) != n)
    return Fail(ErrorCode::kNullBuffer, -1, "parts",
                "one frame per part is needed: " + std::to_string(n) + " parts, " + std::to_string(parts.size()) +
                    " frames given");
  if (linear.size() != angular.size() || (!linear.empty() && static_cast<int32_t>(linear.size()) != n))
    return Fail(ErrorCode::kNullBuffer, -1, "linear",
                "velocities are optional, but when given both spans need one entry per part (" + std::to_string(n) +
                    ")");
  for (int32_t j = 0; j < n; ++j) {
    if (!IsFinite(parts[j]) || !(Dot(parts[j].rotation, parts[j].rotation) > 0.5f))
      return Fail(ErrorCode::kNotFinite, j, "parts", "parts[" + std::to_string(j) + "] is not a finite frame");
    if (!linear.empty() && (!IsFinite(linear[j]) || !IsFinite(angular[j])))
      return Fail(ErrorCode::kNotFinite, j, "linear", "the velocities of part " + std::to_string(j) + " are not finite");
  }
  // A sample older than the newest one already played is of no use (the played time only
  // moves on), nor is a second copy of one held: dropped, which is not an error (late and
  // duplicated packets are the network's normal).
  double played_floor = -INFINITY;
  for (int32_t k = 0; k < f->count; ++k) {
    const double t = f->times[f->order[k]];
    if (t == sample_time) return {};
    if (f->any_played && t <= f->played) played_floor = t;
  }
  if (sample_time < played_floor) return {};
  int32_t slot = 0;
  if (f->count < kFollowSampleCapacity) {
    // The free slot: the first not listed in order[0, count).
    for (slot = 0; slot < kFollowSampleCapacity; ++slot) {
      bool used = false;
      for (int32_t m = 0; m < f->count; ++m) used |= f->order[m] == slot;
      if (!used) break;
    }
  } else {
    if (sample_time < f->times[f->order[0]]) return {};  // older than everything held
    slot = f->order[0];                                  // the oldest goes
    std::copy(f->order + 1, f->order + f->count, f->order);
    --f->count;
  }
  // Insert by time.
  int32_t at = f->count;
  while (at > 0 && f->times[f->order[at - 1]] > sample_time) {
    f->order[at] = f->order[at - 1];
    --at;
  }
  f->order[at] = slot;
  ++f->count;
  f->times[slot] = sample_time;
  f->has_velocity[slot] = !linear.empty();
  const std::span<const Transform> bip = ragdolls.BodyInPart(id);
  const std::size_t base = static_cast<std::size_t>(slot * n);
  for (int32_t j = 0; j < n; ++j) {
    const Transform frame{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}};
    f->frames[base + j] = frame;
    if (linear.empty()) {
      f->linear[base + j] = f->angular[base + j] = Vec3{};
      continue;
    }
    // Given at the centre of mass (as GetRagdollVelocities reads them): moved to the part's
    // origin, which is what the frames place. origin - com = -(R bip.t).
    f->linear[base + j] = linear[j] + Cross(angular[j], Rotate(frame.rotation, bip[j].translation) * -1.0f);
    f->angular[base + j] = angular[j];
  }
  return {};
}

Error FollowSystem::Stop(RagdollSystem& ragdolls, RagdollId id) {
  Follower* f = Find(id);
  if (f == nullptr) return NotFollowed();
  // The parts keep the positions and velocities they have; only the acceleration that
  // cancelled gravity goes (the host's comes back).
  if (f->gravity_cancelled) (void)ragdolls.SetAcceleration(id, f->host_acceleration);  // checked when it was set
  f->active = false;
  --count_;
  return {};
}

void FollowSystem::Forget(RagdollId id) {
  if (Follower* f = Find(id)) {
    f->active = false;
    --count_;
  }
}

void FollowSystem::ForgetAll() {
  for (Follower& f : followers_) f.active = false;
  count_ = 0;
}

Error FollowSystem::SetHostAcceleration(RagdollSystem& ragdolls, RagdollId id, Vec3 acceleration) {
  Follower* f = Find(id);
  if (f == nullptr) return NotFollowed();
  if (!f->gravity_cancelled) {
    if (Error e = ragdolls.SetAcceleration(id, acceleration); !Ok(e)) return e;
  } else if (!IsFinite(acceleration)) {
    return Fail(ErrorCode::kNotFinite, -1, "acceleration", "acceleration is not finite");
  } else if (Length(acceleration) > 1e5f) {
    return Fail(ErrorCode::kOutOfRange, -1, "acceleration", "|acceleration| must be at most 1e5 m/s^2");
  }
  f->host_acceleration = acceleration;
  return {};
}

Error FollowSystem::SetClock(double now, double world_time) {
  if (!std::isfinite(now)) return Fail(ErrorCode::kNotFinite, -1, "now", "the follow clock's time is not finite");
  clock_offset_ = now - world_time;
  return {};
}

bool FollowSystem::Evaluate(const Follower& f, double t, std::span<Transform> out) const {
  if (f.count == 0) return false;
  const int32_t n = f.parts;
  // The newest sample at or before t (a), and the one after it (b).
  int32_t a = -1;
  while (a + 1 < f.count && f.times[f.order[a + 1]] <= t) ++a;
  const auto frames = [&](int32_t k) { return &f.frames[static_cast<std::size_t>(f.order[k] * n)]; };
  const auto lin = [&](int32_t k) { return &f.linear[static_cast<std::size_t>(f.order[k] * n)]; };
  const auto ang = [&](int32_t k) { return &f.angular[static_cast<std::size_t>(f.order[k] * n)]; };
  if (a < 0) {  // before every sample: the oldest, held
    std::copy(frames(0), frames(0) + n, out.begin());
    return true;
  }
  const double ta = f.times[f.order[a]];
  if (a + 1 < f.count) {
    const double tb = f.times[f.order[a + 1]];
    const double span = tb - ta;
    const auto u = static_cast<float>((t - ta) / span);
    const bool hermite = f.has_velocity[f.order[a]] && f.has_velocity[f.order[a + 1]];
    const Transform* fa = frames(a);
    const Transform* fb = frames(a + 1);
    const Vec3* va = lin(a);
    const Vec3* vb = lin(a + 1);
    const float h = static_cast<float>(span);
    // Hermite basis.
    const float u2 = u * u, u3 = u2 * u;
    const float h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    for (int32_t j = 0; j < n; ++j) {
      const Vec3 p = hermite ? fa[j].translation * h00 + va[j] * (h10 * h) + fb[j].translation * h01 + vb[j] * (h11 * h)
                             : fa[j].translation + (fb[j].translation - fa[j].translation) * u;
      out[j] = Transform{p, Nlerp(fa[j].rotation, fb[j].rotation, u), {1, 1, 1}};
    }
    return true;
  }
  // Past the newest sample: extrapolated along its velocities (or, without them, the two
  // newest samples' difference) for at most max_extrapolation_seconds, then held.
  const auto ahead = static_cast<float>(std::min(t - ta, static_cast<double>(f.settings.max_extrapolation_seconds)));
  const Transform* fa = frames(a);
  const bool given = f.has_velocity[f.order[a]];
  const bool derived = !given && a > 0 && ahead > 0;
  const float inv = derived ? static_cast<float>(1.0 / (ta - f.times[f.order[a - 1]])) : 0.0f;
  for (int32_t j = 0; j < n; ++j) {
    Vec3 v{}, w{};
    if (given) {
      v = lin(a)[j];
      w = ang(a)[j];
    } else if (derived) {
      const Transform& f0 = frames(a - 1)[j];
      v = (fa[j].translation - f0.translation) * inv;
      w = RotationVector(fa[j].rotation * Conjugate(f0.rotation)) * inv;
    }
    out[j] = ahead > 0 ? Transform{fa[j].translation + v * ahead, Turned(fa[j].rotation, w * ahead), {1, 1, 1}} : fa[j];
  }
  return true;
}

void FollowSystem::Step(RagdollSystem& ragdolls, double world_time_end, double frame_seconds, Vec3 gravity) {
  if (!(frame_seconds > 0)) return;
  for (Follower& f : followers_) {
    if (!f.active || !ragdolls.IsEnabled(f.id)) continue;  // a switched-off ragdoll is not stepped
    const double play_end = world_time_end + clock_offset_ - f.settings.interpolation_delay_seconds;
    Steer(ragdolls, f, play_end, frame_seconds, gravity);
  }
}

void FollowSystem::Steer(RagdollSystem& ragdolls, Follower& f, double play_end, double frame_seconds, Vec3 gravity) {
  const int32_t n = f.parts;
  Transform target[kMaxRagdollParts], before[kMaxRagdollParts], body[kMaxRagdollParts];
  if (!Evaluate(f, play_end, std::span<Transform>(target, n))) return;  // no sample yet: it simulates on its own
  (void)Evaluate(f, play_end - frame_seconds, std::span<Transform>(before, n));
  f.played = play_end;
  f.any_played = true;
  // Samples older than the newest one at or before the played time are no longer needed.
  int32_t a = -1;
  while (a + 1 < f.count && f.times[f.order[a + 1]] <= play_end) ++a;
  // Kept: one before the newest played sample too (a derived extrapolation needs two).
  if (const int32_t drop = a - 1; drop > 0) {
    // The dropped slots move behind the kept ones, past count: free from then on.
    std::rotate(f.order, f.order + drop, f.order + f.count);
    f.count -= drop;
  }
  (void)ragdolls.ReadBodyFrames(f.id, std::span<Transform>(body, n));
  const std::span<const Transform> bip = ragdolls.BodyInPart(f.id);
  const auto seconds = static_cast<float>(frame_seconds);
  const float pull = std::max(seconds, f.settings.response_seconds);
  const float keep = 1.0f - seconds / pull;  // the share of the target's motion kept as feed-forward
  Vec3 linear[kMaxRagdollParts], angular[kMaxRagdollParts];
  float worst = 0;
  bool still = true;
  for (int32_t j = 0; j < n; ++j) {
    const Transform goal = Compose(target[j], bip[j]);
    const Transform from = Compose(before[j], bip[j]);
    const Vec3 ff_v = (goal.translation - from.translation) * (1.0f / seconds);
    const Vec3 ff_w = RotationVector(goal.rotation * Conjugate(from.rotation)) * (1.0f / seconds);
    const Vec3 error = goal.translation - body[j].translation;
    const Vec3 turn = RotationVector(goal.rotation * Conjugate(body[j].rotation));
    if (ragdolls.IsDynamicPart(f.id, j)) {
      worst = std::max(worst, Length(error));
      still = still && Length(error) < kStillDistance && Length(turn) < kStillAngle && Length(ff_v) < kStillSpeed &&
              Length(ff_w) < kStillSpin;
    }
    linear[j] = Capped(ff_v * keep + error * (1.0f / pull), f.settings.max_speed);
    angular[j] = ff_w * keep + turn * (1.0f / pull);
  }
  if (worst > f.settings.snap_distance) {
    // Too far to steer: placed at the target with the target's motion (at part origins).
    Vec3 origin_v[kMaxRagdollParts], spin[kMaxRagdollParts];
    for (int32_t j = 0; j < n; ++j) {
      origin_v[j] = (target[j].translation - before[j].translation) * (1.0f / seconds);
      spin[j] = RotationVector(target[j].rotation * Conjugate(before[j].rotation)) * (1.0f / seconds);
    }
    (void)ragdolls.SetPartStates(f.id, std::span<const Transform>(target, n), std::span<const Vec3>(origin_v, n),
                                 std::span<const Vec3>(spin, n));  // evaluated from checked samples
  } else if (still && ragdolls.IsAsleep(f.id)) {
    return;  // the samples say still, and it sleeps where they say: left asleep
  } else {
    // Still: steered without waking, so its sleep clocks run on and it may fall asleep.
    ragdolls.WriteBodyVelocities(f.id, std::span<const Vec3>(linear, n), std::span<const Vec3>(angular, n), !still);
  }
  if (!f.gravity_cancelled) {
    f.host_acceleration = ragdolls.Acceleration(f.id);
    // -gravity is within SetAcceleration's range for any gravity the World accepts.
    (void)ragdolls.SetAcceleration(f.id, gravity * -1.0f);
    f.gravity_cancelled = true;
  }
}

}  // namespace tendon::detail
