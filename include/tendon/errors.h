// tendon/errors.h: what building and binding return when the input is wrong.
//
// What it does: Error names the item (a bone, node override or collider index), the field
// and the reason, in words a host can log as is (ok() when there is none). Result<T>
// carries either a value or an Error. Both are [[nodiscard]]; value() on an error aborts
// with the error's message (as std::optional::value() would throw): check ok() first.
// Building and binding are the only calls that fail; stepping never fails.
// Conventions every call keeps: a null output pointer is an error (kNullBuffer) for calls
// that return Error, and means "only tell me whether" for calls that return bool (the
// raycasts); no call dereferences a null pointer the host passed.
// What it does NOT do: throw. Tendon does not use exceptions on any path.
// Threading: plain values. Memory: the message is a std::string (building allocates).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tendon/export.h"

namespace tendon {

enum class ErrorCode : uint8_t {
  kNone = 0,
  kEmpty,              // nothing to build (no bones)
  kParentOutOfRange,   // a parent index outside [-1, count)
  kParentNotBefore,    // a parent that does not come before its child
  kCycle,              // a bone that is its own ancestor
  kZeroLengthSegment,  // a bone at the same place as its parent
  kNotFinite,          // NaN or infinity
  kNotUnitRotation,    // a rotation whose length is not 1 (within 1e-3)
  kOutOfRange,         // a setting outside its documented range
  kBadReference,       // an index that refers to nothing (a collider's bone, ...)
  kStaleHandle,        // a handle whose object is gone
  kNullBuffer,         // a host buffer that is null or too small
  kCapacity,           // more than the documented maximum
  kDisconnected,       // a part tree with more than one root
  kInactive,           // the call needs an active instance (an activated character, an enabled ragdoll)
  kReentrant,          // a World call from inside Step (a host callback): refused
  kInUse,              // the object is owned or used by another (a character's ragdoll)
  kIo,                 // a file that cannot be read or written (missing, a directory, no permission): the message has the system's reason
};

// The name of a code, for logs ("kParentNotBefore" -> "parent_not_before").
TENDON_API const char* ToString(ErrorCode code);

// [[nodiscard]]: a call that can fail says so, and dropping what it said is a bug the
// compiler reports (cast to void where ignoring it is the intent, and say why).
struct [[nodiscard]] Error {
  ErrorCode code = ErrorCode::kNone;
  int32_t item = -1;        // index of the offending item, -1 when the error is global
  std::string field{};        // "bones[3].parent", "settings.damping", ...
  std::string message{};      // why, in a sentence
  bool ok() const { return code == ErrorCode::kNone; }
};

namespace detail {
// Prints "tendon: Result::value() on an error: <code> <field>: <message>" and aborts.
[[noreturn]] TENDON_API void AbortOnValueOfError(const Error& error);
}  // namespace detail

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error)) {}  // NOLINT
  bool ok() const { return error_.code == ErrorCode::kNone; }
  explicit operator bool() const { return ok(); }
  // The value; on an error, aborts with the error's message (misuse, never a silent default).
  const T& value() const& {
    if (!ok()) detail::AbortOnValueOfError(error_);
    return value_;
  }
  T& value() & {
    if (!ok()) detail::AbortOnValueOfError(error_);
    return value_;
  }
  // On a temporary, the value moves out: auto world = World::Create(settings).value();
  T value() && {
    if (!ok()) detail::AbortOnValueOfError(error_);
    return std::move(value_);
  }
  const Error& error() const { return error_; }

 private:
  T value_{};
  Error error_{};
};

}  // namespace tendon
