// kernel/core/errors.cpp: the names of error codes, and what misusing a Result does.
#include <cstdio>
#include <cstdlib>

#include "tendon/errors.h"

namespace tendon {

const char* ToString(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNone: return "none";
    case ErrorCode::kEmpty: return "empty";
    case ErrorCode::kParentOutOfRange: return "parent_out_of_range";
    case ErrorCode::kParentNotBefore: return "parent_not_before";
    case ErrorCode::kCycle: return "cycle";
    case ErrorCode::kZeroLengthSegment: return "zero_length_segment";
    case ErrorCode::kNotFinite: return "not_finite";
    case ErrorCode::kNotUnitRotation: return "not_unit_rotation";
    case ErrorCode::kOutOfRange: return "out_of_range";
    case ErrorCode::kBadReference: return "bad_reference";
    case ErrorCode::kStaleHandle: return "stale_handle";
    case ErrorCode::kNullBuffer: return "null_buffer";
    case ErrorCode::kCapacity: return "capacity";
    case ErrorCode::kDisconnected: return "disconnected";
    case ErrorCode::kInactive: return "inactive";
    case ErrorCode::kReentrant: return "reentrant";
    case ErrorCode::kInUse: return "in_use";
    case ErrorCode::kIo: return "io";
  }
  return "unknown";
}

namespace detail {

void AbortOnValueOfError(const Error& error) {
  std::fprintf(stderr, "tendon: Result::value() on an error: %s %s: %s\n", ToString(error.code), error.field.c_str(),
               error.message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace detail
}  // namespace tendon
