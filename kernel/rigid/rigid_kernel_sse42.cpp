// kernel/rigid/rigid_kernel_sse42.cpp: the rigid (XPBD) kernels instantiated for "sse4.2".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_sse42
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsSse42() {
  return rigid_kernel_sse42::KernelTable<xsimd::batch<float, xsimd::sse4_2>>("sse4.2");
}

}  // namespace tendon::detail
