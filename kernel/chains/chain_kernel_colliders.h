// kernel/chains/chain_kernel_colliders.h: the colliders' shapes as the chain solve reads
// them (chain_kernel_impl.h), shared by both rules.
//
// Owns: a collider's two points this frame in lanes (LoadCollider: a sphere's centre, a
// capsule's ends, a plane's point and unit normal) and the closest point of a sphere's or
// capsule's core to a node (ClosestOnCore, the clamped projection onto the segment); a host
// box's signed distance from a point and the direction out (HostBoxDistance).
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

// Host-body slot j's box (ChainBlockView::HostBox) measured from p: s, the signed distance
// to its surface (negative inside), and the unit direction out through the nearest surface
// point. In the box's frame, l = the point's coordinates and q = |l| - half per axis:
// outside (some q > 0) the nearest point is l clamped to the box, s = |max(q, 0)| and the
// direction is sign(l) max(q, 0) / s; inside, the nearest face is the axis of the largest
// q (ties to x, then y), s = that q, the direction that axis signed by l (l = 0: +). `on`:
// the lanes whose slot holds a box. Every step is lane-wise, so any instruction set gives
// its scalar reference's bits.
template <class V>
struct HostBoxSigned {
  V s;
  V3<V> dir;
  typename Ops<V>::Mask on;
};
template <class V>
TENDON_CHAIN_INLINE HostBoxSigned<V> HostBoxDistance(const ChainBlockView& b, int32_t j, int32_t lane, const V3<V>& p) {
  using O = Ops<V>;
  auto load = [&](int32_t f) { return O::Load(b.HostBox(f, j) + lane); };
  const V3<V> c{load(kBcx), load(kBcy), load(kBcz)};
  const V3<V> ux{load(kBuxx), load(kBuxy), load(kBuxz)};
  const V3<V> uy{load(kBuyx), load(kBuyy), load(kBuyz)};
  const V3<V> uz{load(kBuzx), load(kBuzy), load(kBuzz)};
  const V zero = O::Splat(0.0f), one = O::Splat(1.0f);
  const V3<V> e = Sub(p, c);
  const V lx = Dot3(e, ux), ly = Dot3(e, uy), lz = Dot3(e, uz);
  const V minus = O::Splat(-1.0f);
  const V sx = O::Select(lx < zero, minus, one), sy = O::Select(ly < zero, minus, one),
          sz = O::Select(lz < zero, minus, one);
  const V qx = O::Abs(lx) - load(kBhx), qy = O::Abs(ly) - load(kBhy), qz = O::Abs(lz) - load(kBhz);
  const V ox = O::Max(qx, zero), oy = O::Max(qy, zero), oz = O::Max(qz, zero);
  const V out2 = ox * ox + oy * oy + oz * oz;
  const auto outside = out2 > zero;
  const V dist = O::Sqrt(O::Max(out2, O::Splat(1e-24f)));
  // Inside: the face of the largest q.
  const auto pick_x = O::And(qx >= qy, qx >= qz);
  const auto pick_y = O::And(qy > qx, qy >= qz);
  const V in_s = O::Max(qx, O::Max(qy, qz));
  const V inv = one / dist;
  const V dx = O::Select(outside, sx * ox * inv, O::Select(pick_x, sx, zero));
  const V dy = O::Select(outside, sy * oy * inv, O::Select(pick_y, sy, zero));
  const V dz = O::Select(outside, sz * oz * inv, O::Select(O::Or(pick_x, pick_y), zero, sz));
  const V3<V> dir = Add(Add(Scale(ux, dx), Scale(uy, dy)), Scale(uz, dz));
  return {O::Select(outside, dist, in_s), dir, load(kBon) > O::Splat(0.5f)};
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
