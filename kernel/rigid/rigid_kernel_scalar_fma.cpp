// kernel/rigid/rigid_kernel_scalar_fma.cpp: the rigid (XPBD) kernels instantiated for "scalar+fma".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_scalar_fma
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {
namespace {
using Value = FusedFloat;
void SolveBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_scalar_fma::Solve<Value>(blocks, count, params);
}
void PositionBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_scalar_fma::Positions<Value>(blocks, count, params);
}
void VelocityBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_scalar_fma::Velocities<Value>(blocks, count, params);
}
}  // namespace

const RigidKernels& RigidKernelsScalarFma() {
  static const RigidKernels kernels{&SolveBlocks, &PositionBlocks, &VelocityBlocks, "scalar+fma"};
  return kernels;
}

}  // namespace tendon::detail
