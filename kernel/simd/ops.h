// kernel/simd/ops.h: one vocabulary for scalar floats and xsimd batches.
//
// Design: the chain kernels are written once, as templates over a value type V that is
// either `float` (the scalar reference, one lane at a time) or xsimd::batch<float, Arch>
// for an explicit Arch (never the default batch: this header is included by translation
// units compiled with different instruction-set flags, so every batch type here names its
// architecture). Ops<V> supplies load/store, select, sqrt and multiply-add. (An rsqrt
// estimate with a Newton step was measured: no faster here, and it loses the bit-level
// agreement with the references, so every kernel divides by an exact sqrt.) Multiply-add
// is fused (one rounding) exactly where the instruction set fuses it: plain float rounds
// twice, like SSE; FusedFloat rounds once, like AVX2+FMA. The kernels are compiled with
// -ffp-contract=off, so no other expression is fused behind the code's back, and the
// scalar reference of each kernel evaluates the same arithmetic.
#pragma once

#include <cmath>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tendon::detail {

template <class V>
struct Ops;

template <>
struct Ops<float> {
  using Mask = bool;
  static constexpr int32_t kSize = 1;
  static float Load(const float* p) { return *p; }
  static float LoadUnaligned(const float* p) { return *p; }
  static void Store(float* p, float v) { *p = v; }
  static void StoreUnaligned(float* p, float v) { *p = v; }
  static float Splat(float v) { return v; }
  static float Sqrt(float v) { return std::sqrt(v); }
  static float Fma(float a, float b, float c) { return a * b + c; }
  static float Select(bool m, float a, float b) { return m ? a : b; }
  static float Max(float a, float b) { return a > b ? a : b; }
  static float Min(float a, float b) { return a < b ? a : b; }
  static float Abs(float a) { return std::fabs(a); }
  static bool AnyOf(bool m) { return m; }
  static bool AllOf(bool m) { return m; }
  static bool And(bool a, bool b) { return a && b; }
  static bool Or(bool a, bool b) { return a || b; }
};

// A float whose multiply-adds are fused (one rounding, std::fma): the scalar reference for
// kernels that use FMA instructions, so that both evaluate the same arithmetic.
struct FusedFloat {
  float v;
  friend FusedFloat operator+(FusedFloat a, FusedFloat b) { return {a.v + b.v}; }
  friend FusedFloat operator-(FusedFloat a, FusedFloat b) { return {a.v - b.v}; }
  friend FusedFloat operator*(FusedFloat a, FusedFloat b) { return {a.v * b.v}; }
  friend FusedFloat operator/(FusedFloat a, FusedFloat b) { return {a.v / b.v}; }
  friend FusedFloat operator-(FusedFloat a) { return {-a.v}; }
  friend bool operator<(FusedFloat a, FusedFloat b) { return a.v < b.v; }
  friend bool operator>(FusedFloat a, FusedFloat b) { return a.v > b.v; }
  friend bool operator==(FusedFloat a, FusedFloat b) { return a.v == b.v; }
  friend bool operator<=(FusedFloat a, FusedFloat b) { return a.v <= b.v; }
  friend bool operator>=(FusedFloat a, FusedFloat b) { return a.v >= b.v; }
};

template <>
struct Ops<FusedFloat> {
  using V = FusedFloat;
  using Mask = bool;
  static constexpr int32_t kSize = 1;
  static V Load(const float* p) { return {*p}; }
  static V LoadUnaligned(const float* p) { return {*p}; }
  static void Store(float* p, V v) { *p = v.v; }
  static void StoreUnaligned(float* p, V v) { *p = v.v; }
  static V Splat(float v) { return {v}; }
  static V Sqrt(V v) { return {std::sqrt(v.v)}; }
  static V Fma(V a, V b, V c) { return {std::fma(a.v, b.v, c.v)}; }
  static V Select(bool m, V a, V b) { return m ? a : b; }
  static V Max(V a, V b) { return a.v > b.v ? a : b; }
  static V Min(V a, V b) { return a.v < b.v ? a : b; }
  static V Abs(V a) { return {std::fabs(a.v)}; }
  static bool AnyOf(bool m) { return m; }
  static bool AllOf(bool m) { return m; }
  static bool And(bool a, bool b) { return a && b; }
  static bool Or(bool a, bool b) { return a || b; }
};

// xsimd declares no batch operations where the target has no SIMD it knows (the scalar
// WebAssembly build): there only Ops<float> and FusedFloat exist.
#if !defined(XSIMD_NO_SUPPORTED_ARCHITECTURE)
template <class Arch>
struct Ops<xsimd::batch<float, Arch>> {
  using B = xsimd::batch<float, Arch>;
  using Mask = xsimd::batch_bool<float, Arch>;
  static constexpr int32_t kSize = static_cast<int32_t>(B::size);
  static B Load(const float* p) { return B::load_aligned(p); }
  static B LoadUnaligned(const float* p) { return B::load_unaligned(p); }
  static void Store(float* p, const B& v) { v.store_aligned(p); }
  static void StoreUnaligned(float* p, const B& v) { v.store_unaligned(p); }
  static B Splat(float v) { return B(v); }
  static B Sqrt(const B& v) { return xsimd::sqrt(v); }
  static B Fma(const B& a, const B& b, const B& c) { return xsimd::fma(a, b, c); }
  static B Select(const Mask& m, const B& a, const B& b) { return xsimd::select(m, a, b); }
  static B Max(const B& a, const B& b) { return xsimd::max(a, b); }
  static B Min(const B& a, const B& b) { return xsimd::min(a, b); }
  static B Abs(const B& a) { return xsimd::abs(a); }
  static bool AnyOf(const Mask& m) { return xsimd::any(m); }
  static Mask And(const Mask& a, const Mask& b) { return a & b; }
  static Mask Or(const Mask& a, const Mask& b) { return a | b; }
  static bool AllOf(const Mask& m) { return xsimd::all(m); }
};
#endif  // !XSIMD_NO_SUPPORTED_ARCHITECTURE

#if defined(__aarch64__) && defined(__ARM_NEON)
// NEON's four floats with every operation the exact instruction. xsimd 8.1's neon64 batch
// divides and takes square roots by reciprocal estimates refined with Newton steps: its
// kernels came out 1.9e-5 m (chains) and 7.5e-4 m (ragdolls) off the scalar reference
// under qemu. vdivq_f32 and vsqrtq_f32 are IEEE-exact, vfmaq_f32 fuses, and Max / Min
// compare and select as the scalar reference does, so the NEON kernels evaluate exactly
// the scalar FMA reference's arithmetic (Isa::kScalarFma).
struct NeonMask {
  uint32x4_t m;
};
struct NeonF32 {
  float32x4_t v;
  friend NeonF32 operator+(NeonF32 a, NeonF32 b) { return {vaddq_f32(a.v, b.v)}; }
  friend NeonF32 operator-(NeonF32 a, NeonF32 b) { return {vsubq_f32(a.v, b.v)}; }
  friend NeonF32 operator*(NeonF32 a, NeonF32 b) { return {vmulq_f32(a.v, b.v)}; }
  friend NeonF32 operator/(NeonF32 a, NeonF32 b) { return {vdivq_f32(a.v, b.v)}; }
  friend NeonF32 operator-(NeonF32 a) { return {vnegq_f32(a.v)}; }
  friend NeonMask operator<(NeonF32 a, NeonF32 b) { return {vcltq_f32(a.v, b.v)}; }
  friend NeonMask operator>(NeonF32 a, NeonF32 b) { return {vcgtq_f32(a.v, b.v)}; }
  friend NeonMask operator<=(NeonF32 a, NeonF32 b) { return {vcleq_f32(a.v, b.v)}; }
  friend NeonMask operator>=(NeonF32 a, NeonF32 b) { return {vcgeq_f32(a.v, b.v)}; }
  friend NeonMask operator==(NeonF32 a, NeonF32 b) { return {vceqq_f32(a.v, b.v)}; }
  NeonF32& operator+=(NeonF32 b) { return *this = *this + b; }
  NeonF32& operator-=(NeonF32 b) { return *this = *this - b; }
  NeonF32& operator*=(NeonF32 b) { return *this = *this * b; }
};

template <>
struct Ops<NeonF32> {
  using V = NeonF32;
  using Mask = NeonMask;
  static constexpr int32_t kSize = 4;
  static V Load(const float* p) { return {vld1q_f32(p)}; }
  static V LoadUnaligned(const float* p) { return {vld1q_f32(p)}; }
  static void Store(float* p, V v) { vst1q_f32(p, v.v); }
  static void StoreUnaligned(float* p, V v) { vst1q_f32(p, v.v); }
  static V Splat(float v) { return {vdupq_n_f32(v)}; }
  static V Sqrt(V v) { return {vsqrtq_f32(v.v)}; }
  static V Fma(V a, V b, V c) { return {vfmaq_f32(c.v, a.v, b.v)}; }
  static V Select(Mask m, V a, V b) { return {vbslq_f32(m.m, a.v, b.v)}; }
  static V Max(V a, V b) { return Select(a > b, a, b); }
  static V Min(V a, V b) { return Select(a < b, a, b); }
  static V Abs(V a) { return {vabsq_f32(a.v)}; }
  static bool AnyOf(Mask m) { return vmaxvq_u32(m.m) != 0; }
  static bool AllOf(Mask m) { return vminvq_u32(m.m) != 0; }
  static Mask And(Mask a, Mask b) { return {vandq_u32(a.m, b.m)}; }
  static Mask Or(Mask a, Mask b) { return {vorrq_u32(a.m, b.m)}; }
};
#endif

#if defined(__AVX512F__)
// AVX-512F's sixteen floats with every operation the exact instruction (only the rigid
// kernel's translation unit is compiled with AVX-512 flags). xsimd 8.1's avx512f batch is
// not used: its multiply-add rounds twice (no fused specialisation; the generic fallback
// is x * y + z) and its negation is 0 - x (+0 for a zero, where the scalar reference and
// the AVX2 batch give -0), and either moves the kernel off its scalar FMA reference. Here
// the multiply-add fuses, negation flips the sign bit, and Max / Min are vmaxps / vminps
// (a > b ? a : b, as the scalar reference), so the AVX-512 kernel evaluates exactly the
// scalar FMA reference's arithmetic (Isa::kScalarFma), bit for bit like AVX2+FMA's.
struct Avx512Mask {
  __mmask16 m;
};
struct Avx512F32 {
  __m512 v;
  friend Avx512F32 operator+(Avx512F32 a, Avx512F32 b) { return {_mm512_add_ps(a.v, b.v)}; }
  friend Avx512F32 operator-(Avx512F32 a, Avx512F32 b) { return {_mm512_sub_ps(a.v, b.v)}; }
  friend Avx512F32 operator*(Avx512F32 a, Avx512F32 b) { return {_mm512_mul_ps(a.v, b.v)}; }
  friend Avx512F32 operator/(Avx512F32 a, Avx512F32 b) { return {_mm512_div_ps(a.v, b.v)}; }
  friend Avx512F32 operator-(Avx512F32 a) {
    return {_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a.v), _mm512_set1_epi32(INT32_MIN)))};
  }
  friend Avx512Mask operator<(Avx512F32 a, Avx512F32 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
  friend Avx512Mask operator>(Avx512F32 a, Avx512F32 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
  friend Avx512Mask operator<=(Avx512F32 a, Avx512F32 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ)}; }
  friend Avx512Mask operator>=(Avx512F32 a, Avx512F32 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GE_OQ)}; }
  friend Avx512Mask operator==(Avx512F32 a, Avx512F32 b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }
  Avx512F32& operator+=(Avx512F32 b) { return *this = *this + b; }
  Avx512F32& operator-=(Avx512F32 b) { return *this = *this - b; }
  Avx512F32& operator*=(Avx512F32 b) { return *this = *this * b; }
};

template <>
struct Ops<Avx512F32> {
  using V = Avx512F32;
  using Mask = Avx512Mask;
  static constexpr int32_t kSize = 16;
  static V Load(const float* p) { return {_mm512_load_ps(p)}; }
  static V LoadUnaligned(const float* p) { return {_mm512_loadu_ps(p)}; }
  static void Store(float* p, V v) { _mm512_store_ps(p, v.v); }
  static void StoreUnaligned(float* p, V v) { _mm512_storeu_ps(p, v.v); }
  static V Splat(float v) { return {_mm512_set1_ps(v)}; }
  static V Sqrt(V v) { return {_mm512_sqrt_ps(v.v)}; }
  static V Fma(V a, V b, V c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
  static V Select(Mask m, V a, V b) { return {_mm512_mask_blend_ps(m.m, b.v, a.v)}; }
  static V Max(V a, V b) { return {_mm512_max_ps(a.v, b.v)}; }
  static V Min(V a, V b) { return {_mm512_min_ps(a.v, b.v)}; }
  static V Abs(V a) {
    return {_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a.v), _mm512_set1_epi32(INT32_MAX)))};
  }
  static bool AnyOf(Mask m) { return m.m != 0; }
  static bool AllOf(Mask m) { return m.m == 0xffff; }
  static Mask And(Mask a, Mask b) { return {static_cast<__mmask16>(a.m & b.m)}; }
  static Mask Or(Mask a, Mask b) { return {static_cast<__mmask16>(a.m | b.m)}; }
};
#endif

// Three lanes-wide components; V3<float> is a plain vector.
template <class V>
struct V3 {
  V x, y, z;
};

template <class V>
inline V3<V> Sub(const V3<V>& a, const V3<V>& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
template <class V>
inline V3<V> Add(const V3<V>& a, const V3<V>& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
template <class V>
inline V3<V> Scale(const V3<V>& a, const V& s) { return {a.x * s, a.y * s, a.z * s}; }
template <class V>
inline V Dot3(const V3<V>& a, const V3<V>& b) {
  using O = Ops<V>;
  return O::Fma(a.x, b.x, O::Fma(a.y, b.y, a.z * b.z));
}
template <class V>
inline V3<V> Cross3(const V3<V>& a, const V3<V>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
// a + (b - a) * t
template <class V>
inline V3<V> Lerp3(const V3<V>& a, const V3<V>& b, const V& t) {
  using O = Ops<V>;
  return {O::Fma(b.x - a.x, t, a.x), O::Fma(b.y - a.y, t, a.y), O::Fma(b.z - a.z, t, a.z)};
}
template <class V, class M>
inline V3<V> Select3(const M& m, const V3<V>& a, const V3<V>& b) {
  using O = Ops<V>;
  return {O::Select(m, a.x, b.x), O::Select(m, a.y, b.y), O::Select(m, a.z, b.z)};
}

// atan2(y, x) in [-pi, pi], written once for every value type so that the SIMD kernels
// and their scalar references evaluate exactly the same arithmetic (library atan2s differ
// in their last bits). atan on [0, 1] by the odd polynomial of Abramowitz & Stegun,
// "Handbook of Mathematical Functions", 4.4.49 (|error| <= 2e-8), then octant folding.
template <class V>
inline V Atan2(const V& y, const V& x) {
  using O = Ops<V>;
  const V ax = O::Abs(x), ay = O::Abs(y);
  const V hi = O::Max(ax, ay), lo = O::Min(ax, ay);
  const V a = lo / O::Max(hi, O::Splat(1e-30f));
  const V s = a * a;
  V p = O::Splat(-0.0040540580f);
  p = O::Fma(p, s, O::Splat(0.0218612288f));
  p = O::Fma(p, s, O::Splat(-0.0559098861f));
  p = O::Fma(p, s, O::Splat(0.0964200441f));
  p = O::Fma(p, s, O::Splat(-0.1390853351f));
  p = O::Fma(p, s, O::Splat(0.1994653599f));
  p = O::Fma(p, s, O::Splat(-0.3332985605f));
  p = O::Fma(p, s, O::Splat(0.9999993329f));
  V r = p * a;
  r = O::Select(ay > ax, O::Splat(1.57079632679f) - r, r);
  r = O::Select(x < O::Splat(0.0f), O::Splat(3.14159265359f) - r, r);
  return O::Select(y < O::Splat(0.0f), O::Splat(0.0f) - r, r);
}

template <class V>
struct Q4 {
  V x, y, z, w;
};

template <class V>
inline Q4<V> QMul(const Q4<V>& a, const Q4<V>& b) {
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
// QMul with its multiply-adds fused through Ops::Fma (one rounding where the instruction set
// fuses, a * b + c where it does not, so every kernel still gives its scalar reference's
// bits): 20 operations instead of 28. For the kVrm rule only, which is held to three-vrm's
// trajectories within 1e-3 of a bone, not to the recorded state hashes QMul's bits are.
template <class V>
inline Q4<V> QMulFused(const Q4<V>& a, const Q4<V>& b) {
  using O = Ops<V>;
  const V nx = -a.x, ny = -a.y, nz = -a.z;
  // Each component as two independent product-plus-multiply-adds and one add: a latency of
  // 3 + 4 + 3 cycles instead of a chain of three multiply-adds after a product (3 + 3 x 4),
  // which the kVrm solve, a chain of joints, waits on once per joint.
  return {O::Fma(a.w, b.x, a.x * b.w) + O::Fma(a.y, b.z, nz * b.y),
          O::Fma(a.w, b.y, nx * b.z) + O::Fma(a.y, b.w, a.z * b.x),
          O::Fma(a.w, b.z, a.x * b.y) + O::Fma(ny, b.x, a.z * b.w),
          O::Fma(a.w, b.w, nx * b.x) + O::Fma(ny, b.y, nz * b.z)};
}
template <class V>
inline Q4<V> QConj(const Q4<V>& q) { return {-q.x, -q.y, -q.z, q.w}; }
template <class V>
inline V3<V> QRotate(const Q4<V>& q, const V3<V>& v) {
  const V3<V> u{q.x, q.y, q.z};
  const V two = Ops<V>::Splat(2.0f);
  const V3<V> t = Scale(Cross3(u, v), two);
  return Add(Add(v, Scale(t, q.w)), Cross3(u, t));
}
// QRotate's arithmetic with its doubling moved onto v: 2 (u x v) = u x (2 v) exactly, so
// the same bits, without a multiply on the chain from q (the kVrm solve's joints wait on
// their parent's rotation through this).
template <class V>
inline V3<V> QRotateDoubled(const Q4<V>& q, const V3<V>& v) {
  const V3<V> u{q.x, q.y, q.z};
  const V3<V> t = Cross3(u, Scale(v, Ops<V>::Splat(2.0f)));
  return Add(Add(v, Scale(t, q.w)), Cross3(u, t));
}

}  // namespace tendon::detail
