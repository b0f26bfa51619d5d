// kernel/rigid/rigid_kernel_avx2.cpp: the rigid (XPBD) kernels instantiated for "avx2+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_avx2
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {
namespace {
using Value = xsimd::batch<float, xsimd::fma3<xsimd::avx2>>;
void SolveBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_avx2::Solve<Value>(blocks, count, params);
}
void PositionBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_avx2::Positions<Value>(blocks, count, params);
}
void VelocityBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_avx2::Velocities<Value>(blocks, count, params);
}
}  // namespace

const RigidKernels& RigidKernelsAvx2Fma() {
  static const RigidKernels kernels{&SolveBlocks, &PositionBlocks, &VelocityBlocks, "avx2+fma"};
  return kernels;
}

}  // namespace tendon::detail
