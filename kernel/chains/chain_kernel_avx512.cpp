// kernel/chains/chain_kernel_avx512.cpp: the chains' AVX2 solve (eight lanes) with AVX-512VL's
// 32 vector registers, for Isa::kAvx512 on a CPU that has AVX-512VL.
//
// Why: the chains keep AVX2's eight lanes (a block is eight instances), but the kVrm solve's
// joint holds more live vectors than AVX2's 16 registers, and g++ spilled them to the stack
// (the avx2+fma Solve: 167 spills and reloads in 1571 instructions). Compiled with
// -mavx512vl the same code reaches ymm16-31 through EVEX encodings. The arithmetic is the
// avx2+fma kernel's, operation for operation, so its results are the same bits. Only the
// solve comes from here: the other kernels, compiled so, made the pose phase slower (3 ns
// of a lone avatar's 0.14 us, 5 of 5 alternated pairs), so they stay the avx2+fma ones.
//
// The batch's architecture is a type of this file's own (Avx2Evex, an fma3<avx2> to
// xsimd): every function instantiated here, xsimd's included, is a symbol apart from the
// avx2+fma kernel's, so the linker can never hand an AVX2-only CPU an EVEX copy.
#define TENDON_CHAIN_KERNEL_NS chain_kernel_avx512

#include <xsimd/xsimd.hpp>

namespace tendon::detail::chain_kernel_avx512 {
struct Avx2Evex : xsimd::fma3<xsimd::avx2> {
  static constexpr char const* name() noexcept { return "avx2+fma+evex"; }
};
}  // namespace tendon::detail::chain_kernel_avx512

namespace xsimd::types {
XSIMD_DECLARE_SIMD_REGISTER_ALIAS(tendon::detail::chain_kernel_avx512::Avx2Evex, xsimd::fma3<xsimd::avx2>);
}  // namespace xsimd::types

#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsAvx2Evex() {
  static const ChainKernels kernels = [] {
    ChainKernels k = ChainKernelsAvx2Fma();
    k.solve = &chain_kernel_avx512::Solve<xsimd::batch<float, chain_kernel_avx512::Avx2Evex>>;
    k.name = "avx2+fma (solve with AVX-512VL registers)";
    return k;
  }();
  return kernels;
}

}  // namespace tendon::detail
