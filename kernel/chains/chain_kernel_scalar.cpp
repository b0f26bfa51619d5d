// kernel/chains/chain_kernel_scalar.cpp: the chain kernels instantiated for "scalar".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_CHAIN_KERNEL_NS chain_kernel_scalar
#include "kernel/chains/chain_kernel_impl.h"
#include "kernel/chains/chain_kernels.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsScalar() {
  return chain_kernel_scalar::KernelTable<float>("scalar");
}

}  // namespace tendon::detail
