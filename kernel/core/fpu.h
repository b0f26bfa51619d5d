// kernel/core/fpu.h: flush denormals to zero for the length of a scope.
//
// Why: a chain that settles has velocities that decay geometrically; without FTZ/DAZ they
// become denormal floats, and every operation on them costs 10-100x. The guard sets the
// flush bits of the thread's floating-point control register and restores the caller's
// value: MXCSR's FTZ and DAZ on x86-64, FPCR's FZ on ARM64 (one bit that flushes both
// denormal inputs and outputs). The register is per thread, so every task sets its own.
// Elsewhere (another architecture or compiler) the guard does nothing. WebAssembly
// (Emscripten) is such a place even where its SSE headers define __SSE__ (-msse4.2 in the
// SIMD build): it has no floating-point control register and no flush-to-zero mode, its
// float arithmetic is IEEE 754 with subnormals, always, and _mm_setcsr does not exist
// there. A settling chain may so meet denormals in a browser; they are slower on some CPUs
// but give the same bits as a native run that meets no denormal.
#pragma once

#include <cstdint>

#if defined(__EMSCRIPTEN__) || defined(__wasm__)
// No control register: the guard does nothing (see above).
#elif defined(__SSE__) || defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define TENDON_HAS_MXCSR 1
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define TENDON_HAS_FPCR 1
#endif

namespace tendon::detail {

#if defined(TENDON_HAS_MXCSR)
inline uint32_t ReadFpuControl() { return _mm_getcsr(); }
inline void WriteFpuControl(uint32_t v) { _mm_setcsr(v); }
#elif defined(TENDON_HAS_FPCR)
inline uint32_t ReadFpuControl() {
  uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return static_cast<uint32_t>(v);
}
inline void WriteFpuControl(uint32_t v) {
  const uint64_t wide = v;
  asm volatile("msr fpcr, %0" : : "r"(wide));
}
#endif

class DenormalGuard {
 public:
  // A caller already flushing (most engines set FTZ/DAZ per thread) is not written on entry
  // (a write costs about 5 ns). The exit always writes the caller's value back: that also
  // clears the exception flags the Step raised and undoes any mode change a host callback
  // made inside it.
  DenormalGuard() {
#if defined(TENDON_HAS_MXCSR) || defined(TENDON_HAS_FPCR)
    saved_ = ReadFpuControl();
    const uint32_t flushing = saved_ | kFlushToZero | kDenormalsAreZero;
    if (flushing != saved_) WriteFpuControl(flushing);
#endif
  }
  ~DenormalGuard() {
#if defined(TENDON_HAS_MXCSR) || defined(TENDON_HAS_FPCR)
    WriteFpuControl(saved_);
#endif
  }
  DenormalGuard(const DenormalGuard&) = delete;
  DenormalGuard& operator=(const DenormalGuard&) = delete;

#if defined(TENDON_HAS_FPCR)
  static constexpr uint32_t kFlushToZero = 1u << 24;       // FPCR.FZ
  static constexpr uint32_t kDenormalsAreZero = 1u << 24;  // the same bit: FZ flushes inputs too
#else
  static constexpr uint32_t kFlushToZero = 0x8000;       // MXCSR.FTZ
  static constexpr uint32_t kDenormalsAreZero = 0x0040;  // MXCSR.DAZ
#endif

 private:
#if defined(TENDON_HAS_MXCSR) || defined(TENDON_HAS_FPCR)
  uint32_t saved_ = 0;
#endif
};

// The current control register (MXCSR or FPCR; 0 where there is none); for tests.
inline uint32_t CurrentFpuMode() {
#if defined(TENDON_HAS_MXCSR) || defined(TENDON_HAS_FPCR)
  return ReadFpuControl();
#else
  return 0;
#endif
}

}  // namespace tendon::detail
