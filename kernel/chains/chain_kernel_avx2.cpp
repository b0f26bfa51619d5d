// kernel/chains/chain_kernel_avx2.cpp: the chain kernels instantiated for "avx2+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_avx2
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {
namespace {
using Value = xsimd::batch<float, xsimd::fma3<xsimd::avx2>>;
void SolveBlock(const ChainBlockView& block, const ChainSolveParams& params) {
  chain_kernel_avx2::Solve<Value>(block, params);
}
void WritebackBlock(const ChainBlockView& block) { chain_kernel_avx2::Writeback<Value>(block); }
}  // namespace

const ChainKernels& ChainKernelsAvx2Fma() {
  static const ChainKernels kernels{&SolveBlock, &WritebackBlock, "avx2+fma"};
  return kernels;
}

}  // namespace tendon::detail
