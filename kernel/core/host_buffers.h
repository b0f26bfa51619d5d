// kernel/core/host_buffers.h: the debug validation of the host's buffers
// (TENDON_DEBUG_VALIDATION, a CMake option; off by default).
//
// What it does: with the option on, every Step (and every bind, rebind and unbind, for the
// instance concerned) checks that each host buffer a bound instance reads or writes is
// still memory the host owns, before Tendon touches it. A buffer freed or reallocated
// behind Tendon's back (an ECS chunk moved without RebindChain, a std::vector that grew) is
// the host's bug; this build names it (which instance, which buffer, which bytes) and
// aborts, instead of crashing somewhere inside a kernel. Under AddressSanitizer it asks
// ASan whether the bytes are addressable; under Valgrind's memcheck it asks memcheck; in
// any other build it can only check that the pointer is non-null and aligned.
// What it does NOT do: anything with the option off (kDebugValidation is false and the
// calls compile away), or check what the buffers hold (Step does that always).
// Threading: called from the World's thread, between phases. Memory: none.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef TENDON_DEBUG_VALIDATION
#define TENDON_DEBUG_VALIDATION 0
#endif

namespace tendon::detail {

inline constexpr bool kDebugValidation = TENDON_DEBUG_VALIDATION != 0;

// The instance a buffer belongs to, for the message: "chain 3 (generation 2)".
struct HostBufferOwner {
  const char* kind;
  uint32_t index;
  uint32_t generation;
};

// Aborts with a message naming `owner` and `buffer` when [data, data + bytes) is not
// memory the host still owns (as far as this build can tell).
void CheckHostBuffer(const HostBufferOwner& owner, const char* buffer, const void* data, std::size_t bytes);

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte (null or empty: never). Used
// to find chains whose host buffers a ragdoll or character also reads or writes.
inline bool RangesOverlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes == 0 || b_bytes == 0) return false;
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

}  // namespace tendon::detail
