// kernel/chains/chain_kernels.cpp: run-time choice of the chain kernels.
//
// Compiled with the baseline flags only: it hands out the table of the translation unit
// of an instruction set the CPU runs (kernel/core/isa.cpp says which). Which kernels a
// build has is its target's (kernel/CMakeLists.txt): TENDON_KERNELS_X86 (SSE2, SSE4.2,
// AVX2+FMA) on x86-64, TENDON_KERNELS_NEON on ARM64, the scalar ones everywhere.
#include "kernel/chains/chain_kernels.h"

namespace tendon {

namespace detail {

const ChainKernels& ChainKernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kScalarFma: return ChainKernelsScalarFma();
#if TENDON_KERNELS_X86
    case Isa::kSse2: return ChainKernelsSse2();
    case Isa::kSse42: return ChainKernelsSse42();
    case Isa::kAvx2Fma: return ChainKernelsAvx2Fma();
    case Isa::kAvx512:
      // AVX2's eight lanes (a block is eight instances), with AVX-512VL's 32 registers
      // where the CPU has them (every AVX-512 CPU since Skylake-SP; not Knights Landing).
      return __builtin_cpu_supports("avx512vl") ? ChainKernelsAvx2Evex() : ChainKernelsAvx2Fma();
#endif
#if TENDON_KERNELS_NEON
    case Isa::kNeon: return ChainKernelsNeon();
#endif
#if TENDON_KERNELS_WASM_SIMD
    case Isa::kSse42: return ChainKernelsSse42();  // SIMD128 through Emscripten's SSE headers
#endif
    default: return ChainKernelsScalar();
  }
}

GatherCheck GatherTransformsBaseline(const Transform* src, const int32_t* from, Transform* dst, const int32_t* to,
                                     int32_t count) {
  return GatherTransforms(src, from, dst, to, count);
}

}  // namespace detail
}  // namespace tendon
