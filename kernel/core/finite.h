// kernel/core/finite.h: the finiteness check of host transforms for code outside the
// dispatched kernels (characters, and a chain's single frames); chains' poses use
// ChainKernels::all_finite, the same test in lanes. And the one rule for host rotations
// (NearUnit, UsableRotation).
//
// True when every float of `count` transforms is finite, that is, when no float has all
// its exponent bits set. The test is on the bits, in integers, so that the loop vectorises:
// a float sum (x * 0 is NaN for non-finite x) would be one serial chain of adds, which the
// compiler may not reorder (it cost a tenth of the pose phase in BM_ChainBudget). No
// allocation; safe on the step's hot path.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tendon/math.h"

namespace tendon::detail {

static_assert(sizeof(Transform) == 10 * sizeof(float), "Transform is ten packed floats");
inline bool AllFinite(const Transform* t, int64_t count) {
  const auto* f = reinterpret_cast<const float*>(t);
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < count * 10; ++i) {
    uint32_t bits;
    std::memcpy(&bits, f + i, sizeof bits);
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return non_finite == 0;
}

// Host rotations, one rule for every system (README, "Contracts"): |q|^2 within
// 1 +- kUnitRotationTolerance is used as it is (unit input keeps its bits); a rotation
// that is UsableRotation but not NearUnit is normalised where it is used; one outside
// [0.25, 4] (or whose length overflows) is bad input, refused at bind and held in Step.
inline constexpr float kUnitRotationTolerance = 1e-4f;
inline bool NearUnit(const Quat& q) { return std::fabs(Dot(q, q) - 1.0f) <= kUnitRotationTolerance; }
inline bool UsableRotation(const Quat& q) {
  const float n2 = Dot(q, q);
  return n2 >= 0.25f && n2 <= 4.0f;
}

}  // namespace tendon::detail
