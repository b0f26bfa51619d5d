// kernel/chains/chain_kernel_input_checks.h: the chain kernel's checks of the host's input
// (chain_kernel_impl.h).
//
// Owns: AllFiniteFloats (x * 0 is 0 for finite x and NaN otherwise, and a NaN survives
// every sum) and, with AVX2, GatherCheckTransforms: a chain's host locals copied through its
// bone map and checked in the same pass (finite: the largest magnitude's bits; unit
// rotations: NearUnit's arithmetic in its order, so each decision is NearUnit's).
// Does not: decide what a failed check does (the chain system), or gather for the other
// instruction sets (GatherTransformsBaseline, chain_block.h, compiled for the baseline).
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none; it reads the host's transforms and writes the caller's copies.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// True when every one of `count` floats is finite: x * 0 is 0 for finite x and NaN
// otherwise, and a NaN survives every sum. In lanes, a lane's 80 floats of host transforms
// take ten batch steps instead of twenty 4-wide integer tests (the pose phase of 1,000
// chains measured 3-5 us faster).
template <class V>
bool AllFiniteFloats(const float* values, int32_t count) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  V sum = O::Splat(0.0f);
  int32_t i = 0;
  for (; i + kW <= count; i += kW) sum = sum + O::LoadUnaligned(values + i) * O::Splat(0.0f);
  alignas(64) float lanes[kW];
  O::Store(lanes, sum);
  float total = 0.0f;
  for (int32_t l = 0; l < kW; ++l) total += lanes[l];
  for (; i < count; ++i) total += values[i] * 0.0f;
  return total == 0.0f;
}

// A chain's host locals through its bone map, copied and checked in one pass (see
// ChainKernels::gather_check), with AVX2: each transform is one 32-byte and one 8-byte
// copy; finiteness is the largest magnitude's bits seen in each float slot (a float is
// finite when its bits without the sign are below 0x7f800000), tested once at the end;
// the rotations are checked four at a time, transposed, with NearUnit's arithmetic in its
// order (this file is compiled without contraction), so each decision is NearUnit's. The
// scalar loop cost about 44 instructions a bone (callgrind, 100 Godettes). Other
// instruction sets take GatherTransformsBaseline (chain_block.h): finite.h's inline
// helpers compiled here, with this file's flags, could become the copy the linker keeps
// for the baseline callers (see the top of chain_kernel_impl.h).
#if defined(__AVX2__)
inline GatherCheck GatherCheckTransforms(const Transform* src, const int32_t* from, Transform* dst, const int32_t* to,
                                         int32_t count) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  __m256i largest = _mm256_setzero_si256();
  __m128i largest_tail = _mm_setzero_si128();
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 tolerance = _mm_set1_ps(kUnitRotationTolerance);
  const __m128 no_sign = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  int unit = 0xF;
  // Copies transform j and returns its rotation (floats 3..6).
  auto copy = [&](int32_t j) {
    const float* s = reinterpret_cast<const float*>(src + from[j]);
    float* d = reinterpret_cast<float*>(dst + to[j]);
    const __m256 head = _mm256_loadu_ps(s);
    const __m128d tail = _mm_load_sd(reinterpret_cast<const double*>(s + 8));
    _mm256_storeu_ps(d, head);
    _mm_store_sd(reinterpret_cast<double*>(d + 8), tail);
    largest = _mm256_max_epu32(largest, _mm256_and_si256(_mm256_castps_si256(head), magnitude));
    largest_tail = _mm_max_epu32(largest_tail, _mm_and_si128(_mm_castpd_si128(tail), _mm256_castsi256_si128(magnitude)));
    return _mm_loadu_ps(s + 3);
  };
  auto check = [&](__m128 x, __m128 y, __m128 z, __m128 w) {
    _MM_TRANSPOSE4_PS(x, y, z, w);
    const __m128 n2 = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z)),
                                 _mm_mul_ps(w, w));
    unit &= _mm_movemask_ps(_mm_cmple_ps(_mm_and_ps(_mm_sub_ps(n2, one), no_sign), tolerance));
  };
  int32_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const __m128 a = copy(i), b = copy(i + 1), c = copy(i + 2), e = copy(i + 3);
    check(a, b, c, e);
  }
  if (i < count) {  // one to three left: the last one fills the check's empty slots
    __m128 r[4];
    for (int32_t k = 0; k < 4; ++k) r[k] = i + k < count ? copy(i + k) : r[k - 1];
    check(r[0], r[1], r[2], r[3]);
  }
  const __m256i finite_limit = _mm256_set1_epi32(0x7f7fffff);  // |bits| above it: Inf or NaN
  const int non_finite =
      _mm256_movemask_epi8(_mm256_cmpgt_epi32(largest, finite_limit)) |
      _mm_movemask_epi8(_mm_cmpgt_epi32(largest_tail, _mm256_castsi256_si128(finite_limit)));
  return {non_finite == 0, unit == 0xF};
}
#endif

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
