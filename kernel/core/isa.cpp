// kernel/core/isa.cpp: which instruction sets this build and CPU run (tendon/isa.h), and
// which one a World gets for kAuto (the environment's, else the best).
//
// Compiled with the baseline flags only: it asks xsimd which instruction sets the CPU and
// OS support. Which kernels a build has is its target's (kernel/CMakeLists.txt):
// TENDON_KERNELS_X86 (SSE2, SSE4.2, AVX2+FMA, AVX-512) on x86-64, TENDON_KERNELS_NEON on
// ARM64, TENDON_KERNELS_WASM_SIMD (SSE4.2 through SIMD128) in the WebAssembly SIMD build,
// the scalar ones everywhere.
#include "kernel/core/isa.h"

#include <cstdlib>
#include <cstring>

#include <xsimd/xsimd.hpp>

namespace tendon {

const char* ToString(Isa isa) {
  switch (isa) {
    case Isa::kAuto: return "auto";
    case Isa::kScalar: return "scalar";
    case Isa::kScalarFma: return "scalar+fma";
    case Isa::kSse2: return "sse2";
    case Isa::kSse42: return "sse4.2";
    case Isa::kAvx2Fma: return "avx2+fma";
    case Isa::kNeon: return "neon64";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

bool IsIsaSupported(Isa isa) {
  switch (isa) {
    case Isa::kAuto:
    case Isa::kScalar:
    case Isa::kScalarFma: return true;
#if TENDON_KERNELS_X86
    case Isa::kSse2: return xsimd::available_architectures().sse2 != 0;
    case Isa::kSse42: return xsimd::available_architectures().sse4_2 != 0;
    case Isa::kAvx2Fma:
      return xsimd::available_architectures().avx2 != 0 && xsimd::available_architectures().fma3_avx2 != 0;
    case Isa::kAvx512:
      // xsimd 8.1 reads AVX-512 from CPUID alone; the compiler's check also asks the OS
      // (XGETBV) whether it saves the 512-bit registers.
      return IsIsaSupported(Isa::kAvx2Fma) && __builtin_cpu_supports("avx512f");
#endif
#if TENDON_KERNELS_NEON
    case Isa::kNeon: return true;  // NEON is part of the ARMv8-A baseline
#endif
#if TENDON_KERNELS_WASM_SIMD
    // The WebAssembly SIMD build: a module that uses SIMD128 only instantiates where the
    // engine has it (the JavaScript loader picks this build or the scalar one), so the
    // SSE4.2 kernels compiled to SIMD128 always run here.
    case Isa::kSse42: return true;
#endif
    default: return false;
  }
}

namespace detail {

Isa EnvironmentIsa() {
  const char* force = std::getenv("TENDON_FORCE_SCALAR");
  if (force != nullptr && force[0] != '\0' && std::strcmp(force, "0") != 0) return Isa::kScalar;
  // TENDON_ISA=<name> (ToString's names: scalar, scalar+fma, sse2, sse4.2, avx2+fma,
  // avx512, neon64) when this CPU runs it: bench/run-matrix.sh measures every instruction set so.
  if (const char* named = std::getenv("TENDON_ISA"); named != nullptr) {
    for (Isa isa : kConcreteIsas)
      if (std::strcmp(named, ToString(isa)) == 0 && IsIsaSupported(isa)) return isa;
  }
  return Isa::kAuto;
}

Isa ResolveIsa(Isa requested) {
  if (requested != Isa::kAuto) return requested;
  if (const Isa chosen = EnvironmentIsa(); chosen != Isa::kAuto) return chosen;
  if (IsIsaSupported(Isa::kNeon)) return Isa::kNeon;
  if (IsIsaSupported(Isa::kAvx512)) return Isa::kAvx512;
  if (IsIsaSupported(Isa::kAvx2Fma)) return Isa::kAvx2Fma;
  if (IsIsaSupported(Isa::kSse42)) return Isa::kSse42;
  if (IsIsaSupported(Isa::kSse2)) return Isa::kSse2;
  return Isa::kScalar;
}

}  // namespace detail

}  // namespace tendon
