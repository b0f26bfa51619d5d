// kernel/chains/chain_kernels.h: the chain kernel sets, one per instruction set, and the
// choice among them. Only chain_kernels.cpp (compiled without ISA flags) asks the CPU.
#pragma once

#include "kernel/chains/chain_block.h"
#include "kernel/core/isa.h"

namespace tendon::detail {

const ChainKernels& ChainKernelsScalar();
const ChainKernels& ChainKernelsScalarFma();
const ChainKernels& ChainKernelsSse2();
const ChainKernels& ChainKernelsSse42();
const ChainKernels& ChainKernelsAvx2Fma();
const ChainKernels& ChainKernelsAvx2Evex();  // AVX-512VL's registers, AVX2's lanes
const ChainKernels& ChainKernelsNeon();

// Kernels for a supported ISA (callers check IsIsaSupported first).
const ChainKernels& ChainKernelsFor(Isa isa);

}  // namespace tendon::detail
