// kernel/rigid/rigid_kernel_avx2.cpp: the rigid (XPBD) kernels instantiated for "avx2+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_avx2
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsAvx2Fma() {
  return rigid_kernel_avx2::KernelTable<xsimd::batch<float, xsimd::fma3<xsimd::avx2>>>("avx2+fma");
}

}  // namespace tendon::detail
