// kernel/rigid/rigid_kernels.cpp: the rigid kernel set for a resolved instruction set.
#include "kernel/rigid/rigid_kernels.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kScalarFma: return RigidKernelsScalarFma();
#if TENDON_KERNELS_X86
    case Isa::kSse2: return RigidKernelsSse2();
    case Isa::kSse42: return RigidKernelsSse42();
    case Isa::kAvx2Fma: return RigidKernelsAvx2Fma();
    case Isa::kAvx512: return RigidKernelsAvx512();
#endif
#if TENDON_KERNELS_NEON
    case Isa::kNeon: return RigidKernelsNeon();
#endif
#if TENDON_KERNELS_WASM_SIMD
    case Isa::kSse42: return RigidKernelsSse42();  // SIMD128 through Emscripten's SSE headers
#endif
    default: return RigidKernelsScalar();
  }
}

}  // namespace tendon::detail
