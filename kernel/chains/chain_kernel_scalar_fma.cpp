// kernel/chains/chain_kernel_scalar_fma.cpp: the scalar reference with fused multiply-adds
// (std::fma), the reference of the AVX2+FMA kernel. Compiled with baseline flags.
#define TENDON_CHAIN_KERNEL_NS chain_kernel_scalar_fma
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsScalarFma() {
  return chain_kernel_scalar_fma::KernelTable<FusedFloat>("scalar+fma");
}

}  // namespace tendon::detail
