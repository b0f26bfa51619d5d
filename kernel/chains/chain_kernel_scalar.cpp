// kernel/chains/chain_kernel_scalar.cpp: the chain kernels instantiated for "scalar".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_scalar
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {
namespace {
using Value = float;
void SolveBlocks(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& params) {
  chain_kernel_scalar::Solve<Value>(blocks, count, params);
}
void PoseBlock(const ChainBlockView& block, const ChainPoseInput& input) {
  chain_kernel_scalar::Pose<Value>(block, input);
}
void WritebackBlock(const ChainBlockView& block) { chain_kernel_scalar::Writeback<Value>(block); }
}  // namespace

const ChainKernels& ChainKernelsScalar() {
  static const ChainKernels kernels{&SolveBlocks, &WritebackBlock, &PoseBlock, "scalar"};
  return kernels;
}

}  // namespace tendon::detail
