// kernel/chains/chain_kernel_sse2.cpp: the chain kernels instantiated for "sse2".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_sse2
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {
namespace {
using Value = xsimd::batch<float, xsimd::sse2>;
void SolveBlocks(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& params) {
  chain_kernel_sse2::Solve<Value>(blocks, count, params);
}
void PoseBlock(const ChainBlockView& block, const ChainPoseInput& input) {
  chain_kernel_sse2::Pose<Value>(block, input);
}
void WritebackBlock(const ChainBlockView& block) { chain_kernel_sse2::Writeback<Value>(block); }
}  // namespace

const ChainKernels& ChainKernelsSse2() {
  static const ChainKernels kernels{&SolveBlocks, &WritebackBlock, &PoseBlock, "sse2"};
  return kernels;
}

}  // namespace tendon::detail
