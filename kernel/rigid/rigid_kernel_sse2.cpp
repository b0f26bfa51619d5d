// kernel/rigid/rigid_kernel_sse2.cpp: the rigid (XPBD) kernels instantiated for "sse2".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_sse2
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsSse2() {
  return rigid_kernel_sse2::KernelTable<xsimd::batch<float, xsimd::sse2>>("sse2");
}

}  // namespace tendon::detail
