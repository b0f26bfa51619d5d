// kernel/chains/chain_kernel_colliders.h: the colliders' shapes as the chain solve reads
// them (chain_kernel_impl.h), shared by both rules.
//
// Owns: a collider's two points this frame in lanes (LoadCollider: a sphere's centre, a
// capsule's ends, a plane's point and unit normal) and the closest point of a sphere's or
// capsule's core to a node (ClosestOnCore, the clamped projection onto the segment).
// Does not: push a node out (the verlet's Collide, chain_kernel_verlet.h; the VRM rule's
// CollideVrm, chain_kernel_vrm.h) or place the colliders on their host frames
// (chain_kernel_collider_worlds.h).
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none; it reads the caller's ChainBlockView.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// Collider c's two points this frame, in lanes: sphere centre, capsule end A or plane point
// (a); capsule end B or the plane's unit normal (b).
template <class V>
struct ColliderPoints {
  V3<V> a, b;
};
template <class V>
TENDON_CHAIN_INLINE ColliderPoints<V> LoadCollider(const ChainBlockView& b, int32_t c, int32_t lane) {
  using O = Ops<V>;
  return {{O::Load(b.Collider(kCax, c) + lane), O::Load(b.Collider(kCay, c) + lane), O::Load(b.Collider(kCaz, c) + lane)},
          {O::Load(b.Collider(kCbx, c) + lane), O::Load(b.Collider(kCby, c) + lane), O::Load(b.Collider(kCbz, c) + lane)}};
}
// The closest point to p of a sphere's core (its centre) or a capsule's (its segment).
template <class V>
TENDON_CHAIN_INLINE V3<V> ClosestOnCore(uint8_t kind, const ColliderPoints<V>& shape, const V3<V>& p) {
  using O = Ops<V>;
  if (kind != kCapsuleOutside && kind != kCapsuleInside) return shape.a;
  const V3<V> ab = Sub(shape.b, shape.a);
  const V len2 = O::Max(Dot3(ab, ab), O::Splat(1e-12f));
  const V t = O::Min(O::Max(Dot3(Sub(p, shape.a), ab) / len2, O::Splat(0.0f)), O::Splat(1.0f));
  return Add(shape.a, Scale(ab, t));
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
