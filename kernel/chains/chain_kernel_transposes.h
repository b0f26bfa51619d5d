// kernel/chains/chain_kernel_transposes.h: host layouts to and from lanes, in registers where
// the instruction set allows (for chain_kernel_impl.h's writeback, pose and collider read).
//
// Owns: the 8x8 transpose (Transpose8x8: unpack, shuffle, swap 128-bit halves, with AVX);
// twelve matrix rows of kW lanes to each lane's 12 floats (RowsToLanes12: 8x8 and 4x8 on
// AVX, three 4x4 on SSE, a loop otherwise); and each lane's host Transform to
// table[float][lane] (TransposeTransforms, kTransformFloats). Exact copies, so every
// instruction set gets the same table. No equations.
// Does not: check what it copies (chain_kernel_input_checks.h) or scatter the written
// locals to the host (ScatterLocals, chain_kernel_writeback.h).
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none; it reads and writes the caller's tables.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

#if defined(__AVX__)
// out[i][l] = r[l][i] for 8 rows of 8 floats: unpack, shuffle, then swap 128-bit halves.
inline void Transpose8x8(const __m256* r, __m256* out) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  out[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  out[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  out[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  out[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  out[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  out[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  out[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  out[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
#endif

// Twelve rows of kW lanes (table[r][i]) to each lane's 12 floats side by side (out + 12 i):
// SIMD transposes where the kernel's width has one (8x8 and 4x8 on AVX, three 4x4 on SSE).
template <int32_t kW>
inline void RowsToLanes12(const float (*table)[kW], float* out) {
#if defined(__AVX__)
  if constexpr (kW == 8) {
    __m256 r[8], t[8];
    for (int32_t i = 0; i < 8; ++i) r[i] = _mm256_load_ps(table[i]);
    Transpose8x8(r, t);
    for (int32_t i = 0; i < 8; ++i) _mm256_storeu_ps(out + 12 * i, t[i]);
    // Rows 8..11: four floats per lane, lanes 0-3 in the low halves, 4-7 in the high ones.
    const __m256 a = _mm256_load_ps(table[8]), b = _mm256_load_ps(table[9]);
    const __m256 c = _mm256_load_ps(table[10]), d = _mm256_load_ps(table[11]);
    const __m256 ab_lo = _mm256_unpacklo_ps(a, b), ab_hi = _mm256_unpackhi_ps(a, b);
    const __m256 cd_lo = _mm256_unpacklo_ps(c, d), cd_hi = _mm256_unpackhi_ps(c, d);
    const __m256 lane[4] = {_mm256_shuffle_ps(ab_lo, cd_lo, 0x44), _mm256_shuffle_ps(ab_lo, cd_lo, 0xEE),
                            _mm256_shuffle_ps(ab_hi, cd_hi, 0x44), _mm256_shuffle_ps(ab_hi, cd_hi, 0xEE)};
    for (int32_t i = 0; i < 4; ++i) {
      _mm_storeu_ps(out + 12 * i + 8, _mm256_castps256_ps128(lane[i]));
      _mm_storeu_ps(out + 12 * (i + 4) + 8, _mm256_extractf128_ps(lane[i], 1));
    }
    return;
  }
#endif
#if defined(__SSE__)
  if constexpr (kW == 4) {
    for (int32_t block = 0; block < 3; ++block) {
      __m128 r0 = _mm_load_ps(table[4 * block]), r1 = _mm_load_ps(table[4 * block + 1]);
      __m128 r2 = _mm_load_ps(table[4 * block + 2]), r3 = _mm_load_ps(table[4 * block + 3]);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(out + 4 * block, r0);
      _mm_storeu_ps(out + 12 + 4 * block, r1);
      _mm_storeu_ps(out + 24 + 4 * block, r2);
      _mm_storeu_ps(out + 36 + 4 * block, r3);
    }
    return;
  }
#endif
  for (int32_t i = 0; i < kW; ++i) {
    for (int32_t r = 0; r < 12; ++r) out[12 * i + r] = table[r][i];
  }
}

// Transform: translation 3, rotation 4, scale 3 floats, packed.
inline constexpr int32_t kTransformFloats = 10;
static_assert(sizeof(Transform) == kTransformFloats * sizeof(float), "Transform is ten packed floats");

// Copies the ten floats of each lane's host Transform into table[float][lane], the layout
// the pose is composed in. Exact, so every instruction set gets the same table.
#if defined(__AVX__)
// Where AVX is enabled (this file is compiled once per instruction set), the first eight
// floats of the eight lanes are one 8x8 transpose in registers (unpack, shuffle, then
// swap 128-bit halves): it took the scalar copy's 128 loads and stores per node down to
// 16, and the copy was 40% of the pose kernel.
inline void TransposeTransforms(const Transform* const* src, float (*table)[kBlockLanes]) {
  static_assert(kBlockLanes == 8, "one 8x8 transpose per node");
  __m256 r[8];
  for (int32_t l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(reinterpret_cast<const float*>(src[l]));
  __m256 t[8];
  Transpose8x8(r, t);
  for (int32_t i = 0; i < 8; ++i) _mm256_store_ps(table[i], t[i]);
  // Floats 8 and 9 (the scale's y and z): two lanes' pairs per register, then split (the
  // sixteen scalar moves were a tenth of a lone avatar's pose kernel).
  auto pair = [&](int32_t l) { return reinterpret_cast<const double*>(reinterpret_cast<const float*>(src[l]) + 8); };
  for (int32_t l = 0; l < 8; l += 4) {
    const __m128 a = _mm_castpd_ps(_mm_loadh_pd(_mm_load_sd(pair(l)), pair(l + 1)));
    const __m128 b = _mm_castpd_ps(_mm_loadh_pd(_mm_load_sd(pair(l + 2)), pair(l + 3)));
    _mm_store_ps(table[8] + l, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_store_ps(table[9] + l, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  }
}
#else
inline void TransposeTransforms(const Transform* const* src, float (*table)[kBlockLanes]) {
  for (int32_t l = 0; l < kBlockLanes; ++l) {
    const auto* f = reinterpret_cast<const float*>(src[l]);
    for (int32_t i = 0; i < kTransformFloats; ++i) table[i][l] = f[i];
  }
}
#endif

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
