// kernel/chains/chain_kernel_sse2.cpp: the chain kernels instantiated for "sse2".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_sse2
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsSse2() {
  return chain_kernel_sse2::KernelTable<xsimd::batch<float, xsimd::sse2>>("sse2");
}

}  // namespace tendon::detail
