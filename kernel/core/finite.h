// kernel/core/finite.h: the finiteness check of host transforms for code outside the
// dispatched kernels (characters, a chain's single frames); a chain's contiguous locals use
// ChainKernels::all_finite, the same test in lanes, and its locals gathered through a bone
// map ChainKernels::gather_check (GatherTransforms below, or the same decisions in AVX2).
// And the one rule for host rotations (NearUnit, UsableRotation).
//
// A float is finite when its exponent bits are not all set: the test is on the bits, in
// integers, three vector compares per transform (NonFiniteBit), with no float chain of
// adds that the compiler may not reorder (x * 0 is NaN for non-finite x; it cost a tenth of
// the pose phase in BM_ChainBudget). No allocation; safe on the step's hot path.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "tendon/math.h"

namespace tendon::detail {

static_assert(sizeof(Transform) == 10 * sizeof(float), "Transform is ten packed floats");

// One transform's finiteness, with no loop over a count: 0 when every float is finite,
// non-zero otherwise. SSE2 (every x86-64) and NEON test the ten floats' exponent bits in
// three vector compares; elsewhere, (bits & 0x7f800000) + 0x00800000 carries into bit 31
// only when the exponent bits are all set. (A single frame checked by the counted loop over
// all its floats that this replaced cost about 40 instructions.)
inline uint32_t NonFiniteBit(const Transform& t) {
#if defined(__SSE2__) || defined(_M_X64)
  const auto* p = reinterpret_cast<const unsigned char*>(&t);
  const __m128i exponent = _mm_set1_epi32(0x7f800000);
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
  const __m128i c = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 32));  // upper lanes 0: finite
  const __m128i all_set = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi32(_mm_and_si128(a, exponent), exponent), _mm_cmpeq_epi32(_mm_and_si128(b, exponent), exponent)),
      _mm_cmpeq_epi32(_mm_and_si128(c, exponent), exponent));
  return static_cast<uint32_t>(_mm_movemask_epi8(all_set));
#elif defined(__ARM_NEON) && defined(__aarch64__)
  const auto* p = reinterpret_cast<const uint32_t*>(&t);
  const uint32x4_t exponent = vdupq_n_u32(0x7f800000u);
  const uint32x4_t c = vcombine_u32(vld1_u32(p + 8), vdup_n_u32(0));
  const uint32x4_t all_set = vorrq_u32(vorrq_u32(vceqq_u32(vandq_u32(vld1q_u32(p), exponent), exponent),
                                                 vceqq_u32(vandq_u32(vld1q_u32(p + 4), exponent), exponent)),
                                       vceqq_u32(vandq_u32(c, exponent), exponent));
  return vmaxvq_u32(all_set);
#else
  uint32_t w[10];
  std::memcpy(w, &t, sizeof w);
  uint32_t any = 0;
  for (uint32_t bits : w) any |= (bits & 0x7f800000u) + 0x00800000u;
  return any & 0x80000000u;
#endif
}
inline bool Finite(const Transform& t) { return NonFiniteBit(t) == 0; }
// True when every float of `count` transforms is finite.
inline bool AllFinite(const Transform* t, int64_t count) {
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < count; ++i) non_finite |= NonFiniteBit(t[i]);
  return non_finite == 0;
}

// Host rotations, one rule for every system (docs/contracts.md): |q|^2 within
// 1 +- kUnitRotationTolerance is used as it is (unit input keeps its bits); a rotation
// that is UsableRotation but not NearUnit is normalised where it is used; one outside
// [0.25, 4] (or whose length overflows) is bad input, refused at bind and held in Step.
inline constexpr float kUnitRotationTolerance = 1e-4f;
inline bool NearUnit(const Quat& q) { return std::fabs(Dot(q, q) - 1.0f) <= kUnitRotationTolerance; }
inline bool UsableRotation(const Quat& q) {
  const float n2 = Dot(q, q);
  return n2 >= 0.25f && n2 <= 4.0f;
}


// Copies src[from[i]] to dst[to[i]] for i < count (a chain's host locals through its bone
// map) and checks them in the same pass: `finite` when every float is, `unit` when every
// rotation is NearUnit (when not, the caller applies the per-rotation rule).
struct GatherCheck {
  bool finite;
  bool unit;
};
inline GatherCheck GatherTransforms(const Transform* src, const int32_t* from, Transform* dst, const int32_t* to,
                                    int32_t count) {
  uint32_t non_finite = 0;
  bool unit = true;
  for (int32_t i = 0; i < count; ++i) {
    const Transform& t = src[from[i]];
    dst[to[i]] = t;
    non_finite |= NonFiniteBit(t);
    unit &= NearUnit(t.rotation);
  }
  return {non_finite == 0, unit};
}

}  // namespace tendon::detail
