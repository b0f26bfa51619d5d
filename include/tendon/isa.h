// tendon/isa.h: which instruction set runs the kernels, and whether this CPU has it.
//
// What it does: names the kernels a build can have (Isa), says which this build and CPU
// run (IsIsaSupported), and gives each a name for logs, profiles and TENDON_ISA.
// What it does NOT do: pick one for a World (WorldSettings::isa does, kAuto by default).
// Threading: every function may be called from any thread. Memory: none.
#pragma once

#include <cstdint>

#include "tendon/export.h"

namespace tendon {

// Which kernel runs the solve. kAuto picks the best the CPU has; the environment
// variable TENDON_FORCE_SCALAR=1 turns kAuto into kScalar, and TENDON_ISA=<ToString name>
// (sse2, avx2+fma, ...) into that one where the CPU runs it. kScalar is the reference for
// the SSE kernels (separate multiply and add); kScalarFma is the reference for kAvx2Fma,
// kAvx512 and kNeon (fused multiply-add, std::fma): each pair evaluates the same
// arithmetic. A build has the kernels of its target: the SSE, AVX2 and AVX-512 ones on
// x86-64, NEON on ARM64 (4 lanes), and the scalar ones everywhere. kAvx512 (AVX-512F, with
// AVX2 and FMA) runs ragdolls 16 lanes at a time, in blocks of 16 (RagdollLaneWidth), and
// chains with the AVX2+FMA kernels; kAuto picks it where the CPU and the OS have it.
enum class Isa : uint8_t { kAuto, kScalar, kScalarFma, kSse2, kSse42, kAvx2Fma, kNeon, kAvx512 };
TENDON_API const char* ToString(Isa isa);
// Every instruction set but kAuto, the scalar references first.
inline constexpr Isa kConcreteIsas[] = {Isa::kScalar,  Isa::kScalarFma, Isa::kSse2,  Isa::kSse42,
                                        Isa::kAvx2Fma, Isa::kAvx512,    Isa::kNeon};
// Whether this build has a kernel for `isa` and this CPU can run it.
TENDON_API bool IsIsaSupported(Isa isa);

}  // namespace tendon
