// kernel/core/host_buffers.cpp: see host_buffers.h.
#include "kernel/core/host_buffers.h"

#include <cstdio>
#include <cstdlib>

#include "tendon/math.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TENDON_HAVE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TENDON_HAVE_ASAN 1
#endif
#if defined(TENDON_HAVE_ASAN) && __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#else
#undef TENDON_HAVE_ASAN
#endif
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define TENDON_HAVE_MEMCHECK 1
#endif

namespace tendon::detail {

namespace {
[[noreturn]] void Report(const HostBufferOwner& owner, const char* buffer, const void* data, std::size_t bytes,
                         const char* why) {
  std::fprintf(stderr,
               "tendon debug validation: %s %u (generation %u): its host buffer %s [%p, +%zu bytes) %s. The host "
               "freed or moved this buffer while the instance was bound: move it with the Rebind call, or unbind "
               "first.\n",
               owner.kind, owner.index, owner.generation, buffer, data, bytes, why);
  std::fflush(stderr);
  std::abort();
}
}  // namespace

void CheckHostBuffer(const HostBufferOwner& owner, const char* buffer, const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  if (data == nullptr) Report(owner, buffer, data, bytes, "is null");
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(Transform) != 0)
    Report(owner, buffer, data, bytes, "is not aligned for tendon::Transform");
#if defined(TENDON_HAVE_ASAN)
  if (const void* bad = __asan_region_is_poisoned(const_cast<void*>(data), bytes); bad != nullptr) {
    char why[96];
    std::snprintf(why, sizeof why, "is freed or unallocated memory from byte %td",
                  static_cast<const char*>(bad) - static_cast<const char*>(data));
    Report(owner, buffer, data, bytes, why);
  }
#endif
#if defined(TENDON_HAVE_MEMCHECK)
  if (VALGRIND_CHECK_MEM_IS_ADDRESSABLE(data, bytes) != 0) Report(owner, buffer, data, bytes, "is not addressable (memcheck)");
#endif
}

}  // namespace tendon::detail
