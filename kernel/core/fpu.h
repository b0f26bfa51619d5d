// kernel/core/fpu.h: flush denormals to zero for the length of a scope.
//
// Why: a chain that settles has velocities that decay geometrically; without FTZ/DAZ they
// become denormal floats, and every operation on them costs 10-100x. The guard sets both
// bits of MXCSR and restores the caller's value, on the thread it runs on (MXCSR is per
// thread, so every task sets its own).
#pragma once

#include <cstdint>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define TENDON_HAS_MXCSR 1
#endif

namespace tendon::detail {

class DenormalGuard {
 public:
  DenormalGuard() {
#ifdef TENDON_HAS_MXCSR
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
#endif
  }
  ~DenormalGuard() {
#ifdef TENDON_HAS_MXCSR
    _mm_setcsr(saved_);
#endif
  }
  DenormalGuard(const DenormalGuard&) = delete;
  DenormalGuard& operator=(const DenormalGuard&) = delete;

  static constexpr uint32_t kFlushToZero = 0x8000;
  static constexpr uint32_t kDenormalsAreZero = 0x0040;

 private:
  uint32_t saved_ = 0;
};

// The current MXCSR (0 where there is none); for tests.
inline uint32_t CurrentFpuMode() {
#ifdef TENDON_HAS_MXCSR
  return _mm_getcsr();
#else
  return 0;
#endif
}

}  // namespace tendon::detail
