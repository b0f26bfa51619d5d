// kernel/chains/chain_kernel_avx2.cpp: the chain kernels instantiated for "avx2+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_avx2
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsAvx2Fma() {
  return chain_kernel_avx2::KernelTable<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>>("avx2+fma");
}

}  // namespace tendon::detail
