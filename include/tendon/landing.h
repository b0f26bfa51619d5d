// tendon/landing.h: when a thrown or knocked-down body has landed, and how fast a throw
// leaves the hands: the rules of a fling-and-throw sandbox (docs/characters.md), as
// pure functions of their inputs with time as a parameter, so a host can run them on any
// clock (a server's, a replay's) and test them without a world.
//
// What it does: LandingWatch advances one body's watch by a sample (time, speed, distance
// to the ground) and says whether it landed, why, and the peak speed actually reached.
// ThrowSpeed turns a throw strength into a mass-relative, clamped launch speed.
// What it does NOT do: sample speeds or ground distances (CharacterState::speed and
// World::RaycastStatic do), or own any state beyond the plain LandingWatch value.
// Threading: pure. Memory: none.
#pragma once

#include <cstdint>

#include "tendon/export.h"

namespace tendon {

// The reference states its thresholds in Roblox studs (12 studs/s, 4.5 studs); Tendon's
// are metres at 1 stud = 0.28 m (Roblox's own conversion for characters).
struct LandingRules {
  float speed_threshold = 3.36f;  // m/s (12 studs/s): slower than this counts as resting
  float ground_distance = 1.26f;  // m (4.5 studs): ground at most this far below counts as on it
  float hold_seconds = 0.25f;     // both must hold this long (a bounce does not land)
  float grace_seconds = 0.35f;    // ignored this long after the start (still on the floor)
  float ceiling_seconds = 20.0f;  // landed regardless after this long (water, the void)
};

enum class LandingVerdict : uint8_t {
  kFlying,   // not landed yet
  kLanded,   // slow and near the ground for hold_seconds
  kCeiling,  // ceiling_seconds passed without landing
};
TENDON_API const char* ToString(LandingVerdict verdict);  // "flying", "landed", "ceiling"

// One body's watch. Start it with the time the ragdoll began and the body's generation (a
// counter the host bumps, e.g. CharacterState::generation): a watch whose generation no
// longer matches is stale and should stop.
struct LandingWatch {
  double start_time = 0;
  uint32_t generation = 0;
  double resting_since = -1;  // when the current slow-and-grounded run began, -1: none
  float peak_speed = 0;       // the fastest sample seen (after the grace too)
  LandingVerdict verdict = LandingVerdict::kFlying;
};

TENDON_API LandingWatch StartLandingWatch(double start_time, uint32_t generation);
// Advances the watch by one sample taken at `time` (seconds, not before the previous one).
// ground_distance < 0 means no ground was found below. Once landed (or past the ceiling)
// the verdict stays.
TENDON_API LandingWatch AdvanceLandingWatch(const LandingWatch& watch, const LandingRules& rules, double time, float speed,
                                 float ground_distance);
inline bool IsStale(const LandingWatch& watch, uint32_t current_generation) {
  return watch.generation != current_generation;
}

// A throw: strength (an impulse, mass x speed units) over the summed mass of the parts that
// are not anchored, clamped to [min_speed, max_speed], so a crate and a person of the same
// mass leave the hands at the same speed. A massless body gets max_speed.
TENDON_API float ThrowSpeed(float strength, float unanchored_mass, float min_speed, float max_speed);

}  // namespace tendon
