// kernel/chains/chain_kernels.h: the chain kernel sets, one per instruction set, and the
// choice among them. Only chain_kernels.cpp (compiled without ISA flags) asks the CPU.
#pragma once

#include "kernel/chains/chain_block.h"
#include "tendon/world.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsScalar();
const ChainKernels& ChainKernelsScalarFma();
const ChainKernels& ChainKernelsSse2();
const ChainKernels& ChainKernelsSse42();
const ChainKernels& ChainKernelsAvx2Fma();
const ChainKernels& ChainKernelsAvx2Evex();  // AVX-512VL's registers, AVX2's lanes
const ChainKernels& ChainKernelsNeon();

// The best ISA this CPU runs, or kScalar when TENDON_FORCE_SCALAR is set to non-zero, or
// the one TENDON_ISA names when the CPU runs it.
Isa ResolveIsa(Isa requested);
// The instruction set the environment picks for kAuto (TENDON_FORCE_SCALAR, TENDON_ISA), or
// kAuto when it picks none.
Isa EnvironmentIsa();
// Kernels for a supported ISA (callers check IsIsaSupported first).
const ChainKernels& ChainKernelsFor(Isa isa);

}  // namespace tendon::detail
