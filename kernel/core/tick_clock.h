// kernel/core/tick_clock.h: a cheap clock for the World's phase timings.
//
// What it does: Ticks() reads the CPU's own counter where there is one (the time-stamp
// counter on x86-64, CNTVCT_EL0 on ARM64: a few nanoseconds, where steady_clock::now()
// costs 20-25 ns through the vDSO on this machine kind, and a Step times 8 phases).
// TickClock turns ticks into milliseconds with a ratio measured against steady_clock over
// the World's life so far, refreshed every 64 frames (a Step reads steady_clock once then,
// never otherwise). Elsewhere Ticks() is steady_clock in nanoseconds and the ratio is 1e-6.
// What it does NOT do: order events across threads, or serve as a time source for the
// simulation (the fixed clock takes the host's dt): it only measures phases for FrameStats
// and the trace.
// Threading: a TickClock is its World's, used on the World's thread. Memory: none.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#if defined(_MSC_VER)
#include <intrin.h>
#else
#include <x86intrin.h>
#endif
#define TENDON_TICKS_CPU 1
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define TENDON_TICKS_CPU 1
#else
#define TENDON_TICKS_CPU 0
#endif

namespace tendon::detail {

inline uint64_t Ticks() {
#if defined(__x86_64__) || defined(_M_X64)
  return __rdtsc();  // invariant on every x86-64 CPU with constant_tsc (all of the last 15 years)
#elif TENDON_TICKS_CPU
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
#endif
}

// Ticks from t0 to now; 0 if the counter reads lower (a thread moved between cores whose
// counters disagree, on some VMs), never a wrapped-around 2^64.
inline uint64_t TicksSince(uint64_t t0) {
  const uint64_t now = Ticks();
  return now > t0 ? now - t0 : 0;
}

class TickClock {
 public:
  TickClock() : steady0_(std::chrono::steady_clock::now()), ticks0_(Ticks()) {}
  // Milliseconds in `ticks` ticks.
  // (Converted as signed, one instruction where an unsigned 64-bit one is several: the
  // phases' spans are far below 2^63 ticks.)
  double Ms(uint64_t ticks) const { return static_cast<double>(static_cast<int64_t>(ticks)) * ms_per_tick_; }
  // Milliseconds from the clock's creation to `ticks`.
  double MsSinceStart(uint64_t ticks) const { return Ms(ticks - ticks0_); }
  // Called once a frame: every 64th (and each of the first 64) measures the ratio again.
  // True when it did (it read steady_clock).
  bool Calibrate(uint64_t frame) {
    if (!TENDON_TICKS_CPU || (frame > 64 && (frame & 63) != 0)) return false;
    const uint64_t ticks = Ticks();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - steady0_).count();
    if (ticks > ticks0_ && ms > 0.0) ms_per_tick_ = ms / static_cast<double>(ticks - ticks0_);
    return true;
  }

 private:
  std::chrono::steady_clock::time_point steady0_;
  uint64_t ticks0_;
  // Until the first calibration: a 3 GHz guess (ticks are nanoseconds where there is no CPU counter).
  double ms_per_tick_ = TENDON_TICKS_CPU ? 1.0 / 3.0e6 : 1e-6;
};

}  // namespace tendon::detail
