// kernel/rigid/rigid_kernel_avx512.cpp: the rigid (XPBD) kernels instantiated for
// "avx512" (AVX-512F, sixteen lanes a batch: a World on this instruction set lays its
// ragdolls out 16 to a block). Compiled with AVX-512F flags only (see kernel/CMakeLists.txt).
// Its arithmetic is the scalar FMA reference's, bit for bit (Avx512F32 in kernel/simd/ops.h).
#define TENDON_RIGID_KERNEL_NS rigid_kernel_avx512
#include "kernel/rigid/rigid_kernel_impl.h"
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsAvx512() { return rigid_kernel_avx512::KernelTable<Avx512F32>("avx512"); }

}  // namespace tendon::detail
