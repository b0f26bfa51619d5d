// kernel/chains/chain_kernel_scalar_fma.cpp: the scalar reference with fused multiply-adds
// (std::fma), the reference of the AVX2+FMA kernel. Compiled with baseline flags.
#define TENDON_CHAIN_KERNEL_NS chain_kernel_scalar_fma
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {
namespace {
using Value = FusedFloat;
void SolveBlocks(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& params) {
  chain_kernel_scalar_fma::Solve<Value>(blocks, count, params);
}
void PoseBlock(const ChainBlockView& block, const ChainPoseInput& input) {
  chain_kernel_scalar_fma::Pose<Value>(block, input);
}
void WritebackBlock(const ChainBlockView& block) { chain_kernel_scalar_fma::Writeback<Value>(block); }
}  // namespace

const ChainKernels& ChainKernelsScalarFma() {
  static const ChainKernels kernels{&SolveBlocks, &WritebackBlock, &PoseBlock, "scalar+fma"};
  return kernels;
}

}  // namespace tendon::detail
