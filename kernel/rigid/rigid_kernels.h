// kernel/rigid/rigid_kernels.h: the rigid kernel sets, one per instruction set.
#pragma once

#include "kernel/rigid/rigid_block.h"
#include "tendon/isa.h"

namespace tendon::detail {

const RigidKernels& RigidKernelsScalar();
const RigidKernels& RigidKernelsScalarFma();
const RigidKernels& RigidKernelsSse2();
const RigidKernels& RigidKernelsSse42();
const RigidKernels& RigidKernelsAvx2Fma();
const RigidKernels& RigidKernelsAvx512();
const RigidKernels& RigidKernelsNeon();
// Kernels for a resolved, supported ISA (see chain_kernels.h for the choice).
const RigidKernels& RigidKernelsFor(Isa isa);

}  // namespace tendon::detail
