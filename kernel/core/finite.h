// kernel/core/finite.h: one check, used wherever the step reads host transforms.
//
// True when every float of `count` transforms is finite: x * 0 is 0 for finite x and NaN
// otherwise, so one sum (which vectorises) answers for the whole span. No allocation;
// safe on the step's hot path.
#pragma once

#include <cstdint>

#include "tendon/math.h"

namespace tendon::detail {

static_assert(sizeof(Transform) == 10 * sizeof(float), "Transform is ten packed floats");
inline bool AllFinite(const Transform* t, int64_t count) {
  const auto* f = reinterpret_cast<const float*>(t);
  float acc = 0.0f;
  for (int64_t i = 0; i < count * 10; ++i) acc += f[i] * 0.0f;
  return acc == 0.0f;
}

}  // namespace tendon::detail
