// kernel/chains/chain_kernel_pose.h: a block's animated pose, composed in lanes
// (chain_kernel_impl.h's pose kernel).
//
// Owns: Pose: world = parent_world * local, parents first (t = pt + pr * (ps * lt), r = pr *
// lr, s = ps * ls, as tendon::Compose), from the host's root parents and locals transposed
// into lanes; the root parents' rotations into the lane rows the solve reads.
// Does not: check the host's transforms (chain_kernel_input_checks.h) or solve.
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none of its own (two transposed tables on the stack); it writes the caller's
// ChainBlockView.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"
#include "kernel/chains/chain_kernel_transposes.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// The animated pose of a block, composed in lanes: world = parent_world * local, parents
// first (t = pt + pr * (ps * lt), r = pr * lr, s = ps * ls, as tendon::Compose). Host
// transforms arrive one lane at a time, so each node's ten floats per lane are first
// transposed into a small aligned table, then composed V::size lanes at a time.
template <class V>
void Pose(const ChainBlockView& b, const ChainPoseInput& in) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  alignas(64) float root[kTransformFloats][kBlockLanes];
  alignas(64) float local[kTransformFloats][kBlockLanes];
  // The root parents in one transpose (a lone avatar's block is 8 lanes of 3 nodes: the
  // scalar copy of 8 root frames was a third of its pose kernel), then their rotations
  // into the lane rows the solve reads.
  TransposeTransforms(in.root_parent, root);
  for (int32_t lane = 0; lane < kBlockLanes; lane += kW) {
    O::Store(b.Lane(kRootParentRx) + lane, O::Load(root[3] + lane));
    O::Store(b.Lane(kRootParentRy) + lane, O::Load(root[4] + lane));
    O::Store(b.Lane(kRootParentRz) + lane, O::Load(root[5] + lane));
    O::Store(b.Lane(kRootParentRw) + lane, O::Load(root[6] + lane));
  }
  for (int32_t k = 0; k < b.node_count; ++k) {
    const int32_t parent = b.parent[k];
    if (in.roots_only && parent >= 0) continue;
    const Transform* node_locals[kBlockLanes];
    for (int32_t l = 0; l < kBlockLanes; ++l) node_locals[l] = in.locals[l] + k;
    TransposeTransforms(node_locals, local);
    for (int32_t lane = 0; lane < kBlockLanes; lane += kW) {
      V3<V> pt, ps;
      Q4<V> pr;
      if (parent < 0) {
        pt = {O::Load(root[0] + lane), O::Load(root[1] + lane), O::Load(root[2] + lane)};
        pr = {O::Load(root[3] + lane), O::Load(root[4] + lane), O::Load(root[5] + lane), O::Load(root[6] + lane)};
        ps = {O::Load(root[7] + lane), O::Load(root[8] + lane), O::Load(root[9] + lane)};
      } else {
        pt = LoadV3<V>(b, kBx, parent, lane);
        pr = LoadNodeQ<V>(b, kRx, parent, lane);
        ps = LoadV3<V>(b, kSx, parent, lane);
      }
      const V3<V> lt{O::Load(local[0] + lane), O::Load(local[1] + lane), O::Load(local[2] + lane)};
      const Q4<V> lr{O::Load(local[3] + lane), O::Load(local[4] + lane), O::Load(local[5] + lane),
                     O::Load(local[6] + lane)};
      const V3<V> ls{O::Load(local[7] + lane), O::Load(local[8] + lane), O::Load(local[9] + lane)};
      const V3<V> scaled{ps.x * lt.x, ps.y * lt.y, ps.z * lt.z};
      StoreV3(b, kBx, k, lane, Add(pt, QRotate(pr, scaled)));
      StoreNodeQ(b, kRx, k, lane, QMul(pr, lr));
      StoreV3(b, kSx, k, lane, V3<V>{ps.x * ls.x, ps.y * ls.y, ps.z * ls.z});
    }
  }
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
