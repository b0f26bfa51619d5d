// kernel/chains/chain_kernel_neon.cpp: the chain kernels instantiated for "neon64" (ARM64;
// NEON is the baseline there, so no flags). 4 lanes a batch: a block is two batches a node.
// The lane type is NeonF32 (kernel/simd/ops.h): exact division and square root.
#define TENDON_CHAIN_KERNEL_NS chain_kernel_neon
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsNeon() {
  return chain_kernel_neon::KernelTable<NeonF32>("neon64");
}

}  // namespace tendon::detail
