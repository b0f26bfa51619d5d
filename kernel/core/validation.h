// kernel/core/validation.h: the helpers every builder and binder reports bad input with.
//
// An Error names the item, the field as a host would write it, and the reason. These keep
// the wording the same everywhere: "<field> is not finite", "<field> = v is outside [lo, hi]",
// "<field> must be positive". Build and bind time only (they allocate strings).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "tendon/errors.h"

namespace tendon::detail {

inline Error Fail(ErrorCode code, int32_t item, std::string field, std::string message) {
  return Error{code, item, std::move(field), std::move(message)};
}

inline bool Ok(const Error& e) { return e.code == ErrorCode::kNone; }

// A finite value within [lo, hi].
inline Error CheckRange(float value, float lo, float hi, int32_t item, const std::string& field) {
  if (!std::isfinite(value)) return Fail(ErrorCode::kNotFinite, item, field, field + " is not finite");
  if (value < lo || value > hi) {
    return Fail(ErrorCode::kOutOfRange, item, field,
                field + " = " + std::to_string(value) + " is outside [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
  }
  return {};
}

// A value > 0; infinity passes only when allowed (it means "disabled" for some settings).
inline Error CheckPositive(float value, int32_t item, const std::string& field, bool allow_infinity = false) {
  if (std::isnan(value) || (!allow_infinity && std::isinf(value)))
    return Fail(ErrorCode::kNotFinite, item, field, field + " is not finite");
  if (!(value > 0))
    return Fail(ErrorCode::kOutOfRange, item, field, field + " must be positive, got " + std::to_string(value));
  return {};
}

}  // namespace tendon::detail
