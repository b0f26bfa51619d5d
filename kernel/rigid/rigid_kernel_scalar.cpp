// kernel/rigid/rigid_kernel_scalar.cpp: the rigid (XPBD) kernels instantiated for "scalar".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_scalar
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsScalar() {
  return rigid_kernel_scalar::KernelTable<float>("scalar");
}

}  // namespace tendon::detail
