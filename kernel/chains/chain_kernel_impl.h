// kernel/chains/chain_kernel_impl.h: the chain kernels, written once: the per-block driver,
// which includes every part.
//
// Design: every function of the kernel (this file and its parts) is a template over the
// value type V (float for the scalar reference, xsimd::batch<float, Arch> for an explicit
// Arch) and is instantiated only in the per-instruction-set translation units
// (chain_kernel_<isa>.cpp). Each of them defines TENDON_CHAIN_KERNEL_NS to a namespace of
// its own before including this file, so that no function compiled with AVX flags shares a
// symbol with one compiled without them (the linker could otherwise keep the AVX copy and
// run it on a CPU without AVX).
//
// The kernel is split by part, one header each (as Jolt's Constraints/ConstraintPart/), all
// included here, so each instruction set is still one translation unit:
//   chain_kernel_fields.h           the block's fields in lanes; the two position slots
//   chain_kernel_colliders.h        the colliders' shapes as the solve reads them
//   chain_kernel_verlet.h           the verlet rule (Roblox BonePhysics), one substep
//   chain_kernel_arcs.h             shortest-arc rotations
//   chain_kernel_vrm.h              the VRM rule (three-vrm 3.5.5), one step a frame
//   chain_kernel_transposes.h       host transforms and matrix rows to and from lanes
//   chain_kernel_writeback.h        written rotations and world matrices; the scatter
//   chain_kernel_pose.h             the animated pose, composed in lanes
//   chain_kernel_input_checks.h     finiteness; the bone map's gather, checked
//   chain_kernel_collider_worlds.h  the read's colliders on their host frames
// This file owns what joins them: Solve (which rule a block runs, and the verlet's
// substeps) and the kernel table the dispatch hands out.
// Memory: none of its own.

#include <cstdint>

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "kernel/chains/chain_block.h"
#include "kernel/simd/ops.h"

#ifndef TENDON_CHAIN_KERNEL_NS
#error "define TENDON_CHAIN_KERNEL_NS to a namespace unique to the translation unit"
#endif

#include "kernel/chains/chain_kernel_fields.h"
#include "kernel/chains/chain_kernel_colliders.h"
#include "kernel/chains/chain_kernel_verlet.h"
#include "kernel/chains/chain_kernel_arcs.h"
#include "kernel/chains/chain_kernel_vrm.h"
#include "kernel/chains/chain_kernel_transposes.h"
#include "kernel/chains/chain_kernel_writeback.h"
#include "kernel/chains/chain_kernel_pose.h"
#include "kernel/chains/chain_kernel_input_checks.h"
#include "kernel/chains/chain_kernel_collider_worlds.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// Runs params.substeps substeps over `count` blocks that share a topology, and so which
// slot holds the current position (the caller swaps its blocks' roles after an odd number
// of substeps).
template <class V>
void Solve(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& sp) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  static_assert(kBlockLanes % kW == 0, "the block width must be a multiple of the batch width");
  if (sp.substeps <= 0 || count <= 0 || count > kMaxSolveBlocks) return;
  if (blocks[0].vrm) return SolveVrm<V>(blocks, count, sp);
  const float dt2 = sp.dt * sp.dt;
  SolveShared<V> shared;
  shared.gravity_dt2 = {O::Splat(sp.gravity[0] * dt2), O::Splat(sp.gravity[1] * dt2), O::Splat(sp.gravity[2] * dt2)};
  shared.wind_dt2 = {O::Splat(sp.wind[0] * dt2), O::Splat(sp.wind[1] * dt2), O::Splat(sp.wind[2] * dt2)};
  for (int32_t g = 0; g < count; ++g) {
    const ChainBlockView& b = blocks[g];
    const float* flags = b.Lane(kUniform);
    bool all = true;
    for (int32_t l = 0; l < kBlockLanes; ++l) all = all && flags[l] > 0.5f;
    shared.uniform[g] = all;
    for (int32_t i = 0; i < kBlockLanes / kW; ++i) {
      const int32_t lane = i * kW;
      shared.chain_params[g][i] =
          MakeParams(O::Load(b.Lane(kLaneDamping) + lane), O::Load(b.Lane(kLaneStiffness) + lane),
                     O::Load(b.Lane(kLaneGravityScale) + lane), O::Load(b.Lane(kLaneWindScale) + lane),
                     shared.gravity_dt2, shared.wind_dt2);
    }
  }
  const float inv_substeps = 1.0f / static_cast<float>(sp.substeps);
  bool slot0_current = blocks[0].position == kPos0x;
  for (int32_t s = 0; s < sp.substeps; ++s, slot0_current = !slot0_current) {
    const bool last = s + 1 == sp.substeps;
    const V alpha = O::Splat(last ? 1.0f : static_cast<float>(s + 1) * inv_substeps);
    if (slot0_current) {
      SolveSubstep<V, kPos0x>(blocks, count, shared, alpha, last);
    } else {
      SolveSubstep<V, kPos1x>(blocks, count, shared, alpha, last);
    }
  }
}

// This translation unit's kernel set for lane type V (its instruction set), built once.
template <class V>
const ChainKernels& KernelTable(const char* name) {
  static const ChainKernels kernels{&Solve<V>,          &Writeback<V>,          &Pose<V>, &WorldFrames<V>,
                                    &AllFiniteFloats<V>,
#if defined(__AVX2__)
                                    &GatherCheckTransforms,
#else
                                    &GatherTransformsBaseline,
#endif
                                    &ScatterLocals, &ColliderWorlds<V>, name};
  return kernels;
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
