// kernel/rigid/rigid_kernel_neon.cpp: the rigid kernels instantiated for "neon64" (ARM64).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_neon
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsNeon() {
  return rigid_kernel_neon::KernelTable<NeonF32>("neon64");
}

}  // namespace tendon::detail
