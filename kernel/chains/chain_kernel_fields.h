// kernel/chains/chain_kernel_fields.h: a chain block's fields in lanes, for every part of
// the chain kernel (chain_kernel_impl.h).
//
// Owns: loading and storing a node's vectors and quaternions V::size lanes at a time
// (LoadV3, StoreV3, LoadQ4, LoadNodeQ, StoreNodeQ) and the VRM rule's rows (LoadVrm3,
// LoadVrmQ: the solve's and the writeback's); the hot fields addressed from their node's
// start (HotNode, LoadAt, StoreAt: constant offsets the compiler folds into the loads); the
// two position slots a substep reads and writes (kPreviousSlot); and TENDON_CHAIN_INLINE,
// the inlining the solve's per-node functions need. No equations: the layout is
// chain_block.h's.
// Does not: solve, write back, transpose or check anything. Every part includes it first,
// so it checks, for them all, that the translation unit named its namespace.
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none; it reads and writes the caller's ChainBlockView.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel/chains/chain_block.h"
#include "kernel/simd/ops.h"

#ifndef TENDON_CHAIN_KERNEL_NS
#error "define TENDON_CHAIN_KERNEL_NS to a namespace unique to the translation unit"
#endif

// The per-node functions of the solve must inline into its loops: g++ 12 called them, and
// each call cost a vzeroupper and parameters passed through the stack (callgrind, AVX2,
// 8 nodes x 1024 chains: 113 instructions per 8-lane node-substep called, 87 inlined).
#if defined(__GNUC__)
#define TENDON_CHAIN_INLINE inline __attribute__((always_inline))
#else
#define TENDON_CHAIN_INLINE inline
#endif

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

template <class V>
inline V3<V> LoadV3(const ChainBlockView& b, int32_t fx, int32_t node, int32_t lane) {
  using O = Ops<V>;
  return {O::Load(b.Node(fx, node) + lane), O::Load(b.Node(fx + 1, node) + lane),
          O::Load(b.Node(fx + 2, node) + lane)};
}
template <class V>
inline void StoreV3(const ChainBlockView& b, int32_t fx, int32_t node, int32_t lane, const V3<V>& v) {
  using O = Ops<V>;
  O::Store(b.Node(fx, node) + lane, v.x);
  O::Store(b.Node(fx + 1, node) + lane, v.y);
  O::Store(b.Node(fx + 2, node) + lane, v.z);
}
template <class V>
inline Q4<V> LoadQ4(const float* x, const float* y, const float* z, const float* w) {
  using O = Ops<V>;
  return {O::Load(x), O::Load(y), O::Load(z), O::Load(w)};
}
template <class V>
inline Q4<V> LoadNodeQ(const ChainBlockView& b, int32_t fx, int32_t node, int32_t lane) {
  return LoadQ4<V>(b.Node(fx, node) + lane, b.Node(fx + 1, node) + lane, b.Node(fx + 2, node) + lane,
                   b.Node(fx + 3, node) + lane);
}
template <class V>
inline void StoreNodeQ(const ChainBlockView& b, int32_t fx, int32_t node, int32_t lane, const Q4<V>& q) {
  using O = Ops<V>;
  O::Store(b.Node(fx, node) + lane, q.x);
  O::Store(b.Node(fx + 1, node) + lane, q.y);
  O::Store(b.Node(fx + 2, node) + lane, q.z);
  O::Store(b.Node(fx + 3, node) + lane, q.w);
}

template <class V>
inline V3<V> LoadVrm3(const ChainBlockView& b, int32_t f, int32_t node, int32_t lane) {
  using O = Ops<V>;
  return {O::Load(b.Vrm(f, node) + lane), O::Load(b.Vrm(f + 1, node) + lane), O::Load(b.Vrm(f + 2, node) + lane)};
}
template <class V>
inline Q4<V> LoadVrmQ(const ChainBlockView& b, int32_t f, int32_t node, int32_t lane) {
  return LoadQ4<V>(b.Vrm(f, node) + lane, b.Vrm(f + 1, node) + lane, b.Vrm(f + 2, node) + lane,
                   b.Vrm(f + 3, node) + lane);
}

// Field f of lane `lane` of a node whose hot fields start at `node` (see HotNode).
template <class V>
inline V3<V> LoadAt(const float* node, int32_t field) {
  using O = Ops<V>;
  return {O::Load(node + field * kBlockLanes), O::Load(node + (field + 1) * kBlockLanes),
          O::Load(node + (field + 2) * kBlockLanes)};
}
template <class V>
inline void StoreAt(float* node, int32_t field, const V3<V>& v) {
  using O = Ops<V>;
  O::Store(node + field * kBlockLanes, v.x);
  O::Store(node + (field + 1) * kBlockLanes, v.y);
  O::Store(node + (field + 2) * kBlockLanes, v.z);
}
// The start of node k's hot fields in block b: the solve addresses every hot field from
// it, so that each field's offset is a constant the compiler folds into the load.
inline float* HotNode(const ChainBlockView& b, int32_t k) {
  return b.hot + static_cast<std::size_t>(k) * kHotNodeFieldCount * kBlockLanes;
}

// A substep reads the current position from slot kCurrent (kPos0x or kPos1x) and writes
// the new one over the previous, in the other slot. The slots are template parameters so
// that every field offset is a constant: as run-time values they cost the solve a tenth
// more instructions, in spilled offsets.
template <int32_t kCurrent>
inline constexpr int32_t kPreviousSlot = kCurrent == kPos0x ? kPos1x : kPos0x;

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
