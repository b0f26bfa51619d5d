// kernel/world/wind.h: deterministic gusts for the ambient wind.
//
// The ambient wind is a vector times a gust factor that wanders between about 0.1 and 1.
// The factor is smooth value noise over time: two octaves of hashed lattice values with
// smoothstep interpolation, seeded, so the same seed and time give the same wind on every
// machine and thread count.
#pragma once

#include <cmath>
#include <cstdint>

namespace tendon::detail {

inline float HashToUnit(uint64_t seed, int64_t cell) {
  // splitmix64 finaliser over seed ^ cell: a well-mixed 64-bit hash.
  uint64_t z = seed ^ (static_cast<uint64_t>(cell) * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
}

inline float ValueNoise(uint64_t seed, double t) {
  const double cell = std::floor(t);
  const auto i = static_cast<int64_t>(cell);
  const auto f = static_cast<float>(t - cell);
  const float s = f * f * (3.0f - 2.0f * f);
  const float a = HashToUnit(seed, i);
  const float b = HashToUnit(seed, i + 1);
  return a + (b - a) * s;
}

// Gust factor in [0.1, 1] at `time_seconds`.
inline float GustFactor(uint64_t seed, double time_seconds) {
  const float slow = ValueNoise(seed, time_seconds * 0.35);
  const float fast = ValueNoise(seed ^ 0x5bd1e995ull, time_seconds * 1.7);
  const float n = (2.0f * slow + fast) * (1.0f / 3.0f);
  return 0.1f + 0.9f * n;
}

}  // namespace tendon::detail
