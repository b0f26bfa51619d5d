// kernel/net/net_quantize.h: the quantisation of a pose message (tendon/net_snapshot.h):
// positions relative to the root in steps, smallest-three rotations, velocities in steps,
// and what "unchanged from the baseline" means.
//
// What it does: turns one part's frame and velocities into the unsigned fields the
// message carries (QuantizedPart) and back. Smallest three: a unit quaternion's largest
// component (by magnitude) is implied by the other three, and after folding the sign so
// that it is positive, the other three lie in [-1/sqrt(2), 1/sqrt(2)]; only those are sent,
// with two bits naming the one dropped. The idea is Glenn Fiedler's ("Snapshot
// Compression", gafferongames.com, 2015); the code is ours. The steps are symmetric about
// 0 (M = 2^bits - 2 steps, M/2 is 0) so the identity and a still body quantise exactly.
// What it does NOT do: read or write bits (kernel/net/bit_stream.h), check its inputs
// (the codec does, before quantising).
// Threading: pure functions. Memory: none.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "tendon/math.h"
#include "tendon/net_snapshot.h"

namespace tendon::detail {

// A far part's, or the root's, coordinate beyond this is garbage (the decoder refuses it).
inline constexpr float kMaxNetCoordinate = 1e9f;
inline constexpr float kSqrtHalf = 0.70710678118654752f;

struct QuantizedPart {
  bool far = false;        // the position is far_position (the root's always is)
  Vec3 far_position{};
  std::array<uint32_t, 3> position{};  // offset by position_steps
  uint32_t dropped = 3;                // which component the rotation dropped (x, y, z, w)
  std::array<uint32_t, 3> rotation{};  // in [0, rotation_max]
  std::array<uint32_t, 3> linear{};    // offset by linear_steps
  std::array<uint32_t, 3> angular{};
};

// Steps of `precision` within +-range, rounded to nearest; `steps` is the bound.
inline int32_t StepsOf(float range, float precision) {
  return static_cast<int32_t>(std::ceil(static_cast<double>(range) / static_cast<double>(precision)));
}
inline int32_t BitsFor(int32_t steps) {
  return static_cast<int32_t>(std::bit_width(2u * static_cast<uint32_t>(steps)));
}

struct NetLayout {
  float position_precision = 0, linear_precision = 0, angular_precision = 0;
  int32_t position_steps = 0, linear_steps = 0, angular_steps = 0;
  int32_t position_bits = 0, linear_bits = 0, angular_bits = 0;
  int32_t rotation_bits = 0;
  uint32_t rotation_max = 0;
  // How far (per axis) the root may be from the baseline's and count as unchanged.
  float root_tolerance = 0;

  // Settings already range-checked (ValidateNetPoseSettings, but for Fits()).
  explicit NetLayout(const NetPoseSettings& s)
      : position_precision(s.position_precision), linear_precision(s.linear_precision),
        angular_precision(s.angular_precision), rotation_bits(s.rotation_bits),
        rotation_max((1u << s.rotation_bits) - 2u) {
    root_tolerance = s.position_precision / 32.0f;
    position_steps = StepsOf(s.position_range, s.position_precision);
    position_bits = BitsFor(position_steps);
    if (s.include_velocities) {
      linear_steps = StepsOf(s.linear_range, s.linear_precision);
      angular_steps = StepsOf(s.angular_range, s.angular_precision);
      linear_bits = BitsFor(linear_steps);
      angular_bits = BitsFor(angular_steps);
    }
  }
  bool Fits() const { return position_bits <= 24 && linear_bits <= 24 && angular_bits <= 24; }

  void QuantizeOffset(Vec3 offset, Vec3 absolute, QuantizedPart* q) const {
    const float c[3] = {offset.x, offset.y, offset.z};
    for (int a = 0; a < 3; ++a) {
      const float n = std::floor(c[a] / position_precision + 0.5f);
      if (!(std::fabs(n) <= static_cast<float>(position_steps))) {
        q->far = true;
        q->far_position = absolute;
        q->position = {};
        return;
      }
      q->position[static_cast<std::size_t>(a)] = static_cast<uint32_t>(static_cast<int32_t>(n) + position_steps);
    }
  }
  Vec3 DequantizeOffset(const QuantizedPart& q) const {
    auto one = [&](uint32_t v) {
      return static_cast<float>(static_cast<int32_t>(v) - position_steps) * position_precision;
    };
    return {one(q.position[0]), one(q.position[1]), one(q.position[2])};
  }
  static uint32_t Clamped(float value, float precision, int32_t steps) {
    const float bound = static_cast<float>(steps);
    const float n = std::clamp(std::floor(value / precision + 0.5f), -bound, bound);
    return static_cast<uint32_t>(static_cast<int32_t>(n) + steps);
  }
  void QuantizeVelocity(Vec3 linear, Vec3 angular, QuantizedPart* q) const {
    q->linear = {Clamped(linear.x, linear_precision, linear_steps), Clamped(linear.y, linear_precision, linear_steps),
                 Clamped(linear.z, linear_precision, linear_steps)};
    q->angular = {Clamped(angular.x, angular_precision, angular_steps),
                  Clamped(angular.y, angular_precision, angular_steps),
                  Clamped(angular.z, angular_precision, angular_steps)};
  }
  void DequantizeVelocity(const QuantizedPart& q, Vec3* linear, Vec3* angular) const {
    auto one = [](uint32_t v, int32_t steps, float precision) {
      return static_cast<float>(static_cast<int32_t>(v) - steps) * precision;
    };
    *linear = {one(q.linear[0], linear_steps, linear_precision), one(q.linear[1], linear_steps, linear_precision),
               one(q.linear[2], linear_steps, linear_precision)};
    *angular = {one(q.angular[0], angular_steps, angular_precision),
                one(q.angular[1], angular_steps, angular_precision),
                one(q.angular[2], angular_steps, angular_precision)};
  }
};

// Smallest three of a (near) unit quaternion: the largest component by magnitude (the
// first of equals, so ties quantise the same on every machine) is dropped; q and -q give
// the same fields.
inline void QuantizeRotation(Quat rotation, int32_t bits, QuantizedPart* q) {
  const Quat u = Normalize(rotation);
  const float c[4] = {u.x, u.y, u.z, u.w};
  uint32_t m = 0;
  for (uint32_t i = 1; i < 4; ++i)
    if (std::fabs(c[i]) > std::fabs(c[m])) m = i;
  const float sign = c[m] < 0 ? -1.0f : 1.0f;
  const uint32_t max = (1u << bits) - 2u;
  const float half = static_cast<float>(max / 2);
  const float scale = half / kSqrtHalf;  // steps per unit
  uint32_t k = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    if (i == m) continue;
    const float n = std::clamp(std::floor(c[i] * sign * scale + 0.5f), -half, half);
    q->rotation[k++] = static_cast<uint32_t>(static_cast<int32_t>(n) + static_cast<int32_t>(max / 2));
  }
  q->dropped = m;
}

// Always a unit quaternion, whatever the fields (garbage included).
inline Quat DequantizeRotation(const QuantizedPart& q, int32_t bits) {
  const uint32_t max = (1u << bits) - 2u;
  const float inv_scale = kSqrtHalf / static_cast<float>(max / 2);
  float c[4];
  float sum = 0;
  uint32_t k = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    if (i == q.dropped) continue;
    c[i] = static_cast<float>(static_cast<int32_t>(q.rotation[k++]) - static_cast<int32_t>(max / 2)) * inv_scale;
    sum += c[i] * c[i];
  }
  c[q.dropped & 3u] = std::sqrt(std::max(0.0f, 1.0f - sum));
  return Normalize(Quat{c[0], c[1], c[2], c[3]});
}

// Whether a part is "unchanged" from its baseline: the same fields, a far position (the
// root's) within `tolerance` per axis (and, for a part other than the root, only while the
// root is unchanged: a receiver copies an unchanged far part where it was).
inline bool SameAsBaseline(const QuantizedPart& a, const QuantizedPart& b, int32_t part, bool root_changed,
                           float tolerance) {
  if (a.far != b.far || a.dropped != b.dropped || a.rotation != b.rotation || a.linear != b.linear ||
      a.angular != b.angular)
    return false;
  if (!a.far) return a.position == b.position;
  if (part != 0 && root_changed) return false;
  return std::fabs(a.far_position.x - b.far_position.x) <= tolerance &&
         std::fabs(a.far_position.y - b.far_position.y) <= tolerance &&
         std::fabs(a.far_position.z - b.far_position.z) <= tolerance;
}

}  // namespace tendon::detail
