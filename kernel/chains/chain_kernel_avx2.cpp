// kernel/chains/chain_kernel_avx2.cpp: the chain kernels instantiated for "avx2+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_avx2
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {
namespace {
using Value = xsimd::batch<float, xsimd::fma3<xsimd::avx2>>;
void SolveBlocks(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& params) {
  chain_kernel_avx2::Solve<Value>(blocks, count, params);
}
void PoseBlock(const ChainBlockView& block, const ChainPoseInput& input) {
  chain_kernel_avx2::Pose<Value>(block, input);
}
void WritebackBlock(const ChainBlockView& block) { chain_kernel_avx2::Writeback<Value>(block); }
}  // namespace

const ChainKernels& ChainKernelsAvx2Fma() {
  static const ChainKernels kernels{&SolveBlocks, &WritebackBlock, &PoseBlock, "avx2+fma"};
  return kernels;
}

}  // namespace tendon::detail
