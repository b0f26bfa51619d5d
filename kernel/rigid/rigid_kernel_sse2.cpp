// kernel/rigid/rigid_kernel_sse2.cpp: the rigid (XPBD) kernels instantiated for "sse2".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_sse2
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {
namespace {
using Value = xsimd::batch<float, xsimd::sse2>;
void SolveBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_sse2::Solve<Value>(blocks, count, params);
}
void PositionBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_sse2::Positions<Value>(blocks, count, params);
}
void VelocityBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_sse2::Velocities<Value>(blocks, count, params);
}
}  // namespace

const RigidKernels& RigidKernelsSse2() {
  static const RigidKernels kernels{&SolveBlocks, &PositionBlocks, &VelocityBlocks, "sse2"};
  return kernels;
}

}  // namespace tendon::detail
