// kernel/chains/chain_kernel_sse42.cpp: the chain kernels instantiated for "sse4.2".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_sse42
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsSse42() {
  return chain_kernel_sse42::KernelTable<xsimd::batch<float, xsimd::sse4_2>>("sse4.2");
}

}  // namespace tendon::detail
