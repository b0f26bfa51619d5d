// kernel/character/landing.cpp: the landing and throwing rules (see tendon/landing.h).
#include "tendon/landing.h"

#include <algorithm>
#include <cmath>

namespace tendon {

const char* ToString(LandingVerdict verdict) {
  switch (verdict) {
    case LandingVerdict::kFlying: return "flying";
    case LandingVerdict::kLanded: return "landed";
    case LandingVerdict::kCeiling: return "ceiling";
  }
  return "unknown";
}

LandingWatch StartLandingWatch(double start_time, uint32_t generation) {
  LandingWatch w;
  w.start_time = start_time;
  w.generation = generation;
  return w;
}

LandingWatch AdvanceLandingWatch(const LandingWatch& watch, const LandingRules& rules, double time, float speed,
                                 float ground_distance) {
  LandingWatch w = watch;
  if (w.verdict != LandingVerdict::kFlying) return w;
  const double elapsed = time - w.start_time;
  if (std::isfinite(speed)) w.peak_speed = std::max(w.peak_speed, speed);
  if (elapsed >= rules.ceiling_seconds) {
    w.verdict = LandingVerdict::kCeiling;
    return w;
  }
  const bool resting = std::isfinite(speed) && speed < rules.speed_threshold && ground_distance >= 0 &&
                       ground_distance <= rules.ground_distance;
  if (elapsed < rules.grace_seconds || !resting) {
    w.resting_since = -1;
    return w;
  }
  if (w.resting_since < 0) w.resting_since = time;
  if (time - w.resting_since >= rules.hold_seconds) w.verdict = LandingVerdict::kLanded;
  return w;
}

float ThrowSpeed(float strength, float unanchored_mass, float min_speed, float max_speed) {
  if (!(unanchored_mass > 0)) return max_speed;
  const float v = strength / unanchored_mass;
  if (std::isnan(v)) return min_speed;
  return std::clamp(v, min_speed, max_speed);
}

}  // namespace tendon
