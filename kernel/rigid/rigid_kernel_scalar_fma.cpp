// kernel/rigid/rigid_kernel_scalar_fma.cpp: the rigid (XPBD) kernels instantiated for "scalar+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_scalar_fma
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsScalarFma() {
  return rigid_kernel_scalar_fma::KernelTable<FusedFloat>("scalar+fma");
}

}  // namespace tendon::detail
