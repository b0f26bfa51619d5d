// kernel/rigid/rigid_kernel_scalar.cpp: the rigid (XPBD) kernels instantiated for "scalar".
// Compiled with that instruction set's flags only (see kernel/CMakeLists.txt).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_scalar
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {
namespace {
using Value = float;
void SolveBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_scalar::Solve<Value>(blocks, count, params);
}
void PositionBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_scalar::Positions<Value>(blocks, count, params);
}
void VelocityBlocks(const RigidBlockView* blocks, int32_t count, const RigidSolveParams& params) {
  rigid_kernel_scalar::Velocities<Value>(blocks, count, params);
}
}  // namespace

const RigidKernels& RigidKernelsScalar() {
  static const RigidKernels kernels{&SolveBlocks, &PositionBlocks, &VelocityBlocks, "scalar"};
  return kernels;
}

}  // namespace tendon::detail
