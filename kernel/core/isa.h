// kernel/core/isa.h: the instruction set a World runs (tendon/isa.h has the public part).
//
// What it does: reads the environment's choice (TENDON_FORCE_SCALAR, TENDON_ISA) and
// resolves kAuto to the best instruction set this build and CPU run.
// What it does NOT do: hand out kernels (chains/chain_kernels.h, rigid/rigid_kernels.h do).
// Threading: any thread (reads the environment). Memory: none.
#pragma once

#include "tendon/isa.h"

namespace tendon::detail {

// The best ISA this CPU runs, or kScalar when TENDON_FORCE_SCALAR is set to non-zero, or
// the one TENDON_ISA names when the CPU runs it.
Isa ResolveIsa(Isa requested);
// The instruction set the environment picks for kAuto (TENDON_FORCE_SCALAR, TENDON_ISA), or
// kAuto when it picks none.
Isa EnvironmentIsa();

}  // namespace tendon::detail
