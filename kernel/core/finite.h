// kernel/core/finite.h: the finiteness check of host transforms for code outside the
// dispatched kernels (characters); chains use ChainKernels::all_finite, the same test in lanes.
//
// True when every float of `count` transforms is finite, that is, when no float has all
// its exponent bits set. The test is on the bits, in integers, so that the loop vectorises:
// a float sum (x * 0 is NaN for non-finite x) would be one serial chain of adds, which the
// compiler may not reorder (it cost a tenth of the pose phase in BM_ChainBudget). No
// allocation; safe on the step's hot path.
#pragma once

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

}  // namespace tendon::detail
