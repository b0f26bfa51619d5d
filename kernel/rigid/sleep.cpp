// kernel/rigid/sleep.cpp: when a ragdoll sleeps, settles and wakes.
//
// Two ways to fall asleep, either enough: no point of any part strays farther than
// sleep_speed x sleep_seconds from where it was when the current window opened, for
// sleep_seconds (an average speed: a pile that jitters in place sleeps, one that still
// slides does not); or every point stays slower than sleep_speed for sleep_seconds in a
// row (a body creeping smoothly to rest gets there sooner). Frame speeds (the lesser of a
// part's displacement over the frame and its velocity) drive settling and waking, because
// contacts that settle a pile leave velocities of 0.1-0.5 m/s that go back and forth
// within a frame while the parts move a few mm/s.
#include "kernel/rigid/sleep.h"

#include <algorithm>
#include <cmath>

namespace tendon::detail {

// Each part's speed over the frame: the lesser of its displacement since the last frame
// (over the frame's time) and its velocity, for the centre and for the turn times the
// part's extent. The velocity bounds it where the host placed the part (a teleport is
// not speed), the displacement where contacts make the velocity go back and forth.
void Sleep::UpdateFrameSpeeds(RagdollSlot& slot, const RigidBlockView& view, int32_t l, const RagdollGroup& g,
                              float frame_seconds) {
  const float inv_t = frame_seconds > 0 ? 1.0f / frame_seconds : 0.0f;
  for (int32_t j = 0; j < g.part_count; ++j) {
    BodyState b{};
    ReadMotion(view, l, j, &b);
    const Quat d = b.q * Conjugate(slot.frame_q[j]);
    const float turn = 2.0f * std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);  // ~ angle for small turns
    slot.frame_speed[j] = std::min(Length(b.x - slot.frame_x[j]) * inv_t, Length(b.v)) +
                          std::min(turn * inv_t, Length(b.w)) * g.constants[j].extent;
    slot.frame_x[j] = b.x;
    slot.frame_q[j] = b.q;
  }
}

// After a step: sleep when no point of any part moved farther than sleep_speed x
// sleep_seconds from where it was when the current window opened, for sleep_seconds (an
// average speed below sleep_speed: a pile that jitters in place sleeps, one that still
// slides does not); freeze when asked. still_seconds = 0 (set wherever a ragdoll is
// woken or moved) opens a new window here.
void Sleep::Update(RagdollSlot& slot, const RigidBlockView& view, int32_t l, const RagdollGroup& g,
                   float frame_seconds) const {
  slot.age_seconds += frame_seconds;
  const float limit = settings_.sleep_speed;
  const float tolerance = limit * settings_.sleep_seconds;
  auto snapshot = [&] {
    for (int32_t j = 0; j < g.part_count; ++j) {
      slot.sleep_x[j] = Vec3{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
      slot.sleep_q[j] = Quat{view.Part(kRbQx, j)[l], view.Part(kRbQy, j)[l], view.Part(kRbQz, j)[l],
                             view.Part(kRbQw, j)[l]};
    }
    slot.still_seconds = 1e-30f;  // the window is open
  };
  if (!(limit > 0) || !slot.can_sleep) {
    slot.still_seconds = slot.slow_seconds = 0;
  } else if (slot.still_seconds <= 0.0f) {
    snapshot();
  } else {
    float moved = 0;  // the farthest any point went: centre displacement + turn x extent
    for (int32_t j = 0; j < g.part_count; ++j) {
      const Vec3 x{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
      const Quat q{view.Part(kRbQx, j)[l], view.Part(kRbQy, j)[l], view.Part(kRbQz, j)[l],
                   view.Part(kRbQw, j)[l]};
      const Quat d = q * Conjugate(slot.sleep_q[j]);
      const float turn = 2.0f * std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);  // ~ angle for small turns
      moved = std::max(moved, Length(x - slot.sleep_x[j]) + turn * g.constants[j].extent);
    }
    if (moved > tolerance) {
      snapshot();
    } else {
      slot.still_seconds += frame_seconds;
    }
  }
  // Or every point slower than sleep_speed right now, for sleep_seconds in a row (a body
  // creeping smoothly to rest gets there sooner this way).
  float fastest = 0;
  for (int32_t j = 0; j < g.part_count; ++j) {
    const Vec3 v{view.Part(kRbVx, j)[l], view.Part(kRbVy, j)[l], view.Part(kRbVz, j)[l]};
    const Vec3 w{view.Part(kRbWx, j)[l], view.Part(kRbWy, j)[l], view.Part(kRbWz, j)[l]};
    fastest = std::max(fastest, Length(v) + Length(w) * g.constants[j].extent);
  }
  slot.slow_seconds = limit > 0 && slot.can_sleep && fastest < limit ? slot.slow_seconds + frame_seconds : 0.0f;
  // Settling (WorldSettings::ragdoll_settle_damping), on frame speeds.
  float fastest_frame = 0;
  for (int32_t j = 0; j < g.part_count; ++j) fastest_frame = std::max(fastest_frame, slot.frame_speed[j]);
  slot.calm_seconds =
      limit > 0 && slot.can_sleep && fastest_frame < 4.0f * limit ? slot.calm_seconds + frame_seconds : 0.0f;
  view.Lane(kSettleDamping)[l] =
      slot.calm_seconds >= settings_.sleep_seconds ? settings_.settle_damping : 0.0f;
  const bool force_freeze = slot.age_seconds >= slot.freeze_after_seconds;
  if (slot.still_seconds >= settings_.sleep_seconds || slot.slow_seconds >= settings_.sleep_seconds ||
      force_freeze) {
    slot.asleep = true;
    slot.frozen = force_freeze || slot.freeze_when_asleep;
    view.Lane(kAsleep)[l] = 1.0f;
    slot.calm_seconds = 0;  // woken, it starts settling afresh
    view.Lane(kSettleDamping)[l] = 0.0f;
    for (int32_t j = 0; j < g.part_count; ++j) {
      for (int32_t f : {kRbVx, kRbVy, kRbVz, kRbWx, kRbWy, kRbWz})
        view.Part(f, j)[l] = 0.0f;
    }
  }
}

}  // namespace tendon::detail
