// kernel/chains/chain_kernel_arcs.h: shortest-arc rotations in lanes, for the VRM rule
// (chain_kernel_vrm.h) and the writeback (chain_kernel_writeback.h).
//
// Owns: the rotation taking one direction to another, q = (from x to, |from||to| +
// from . to) normalised, with its edge cases (opposite directions: half a circle about a
// perpendicular axis; a zero vector: the identity): ShortestArc, ShortestArcOfLengths
// (given |from||to|) and UnnormalisedArc (before the normalisation, which the VRM rule
// does its own way). three-vrm's fromUnitVectors is the same rotation.
// Does not: touch a block.
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// The shortest-arc rotation taking the direction of `from` to that of `to`. Neither need
// be unit; a zero vector gives the identity; for opposite directions it turns half a
// circle about an axis perpendicular to `from`. q = (from x to, |from||to| + from . to),
// normalised: two square roots and one divide, where normalising both vectors first took
// three of each (the divider was the writeback kernel's bottleneck).
template <class V>
inline Q4<V> ShortestArcOfLengths(const V3<V>& from, const V3<V>& to, const V& lengths);
template <class V>
inline Q4<V> ShortestArc(const V3<V>& from, const V3<V>& to) {
  using O = Ops<V>;
  return ShortestArcOfLengths(from, to, O::Sqrt(Dot3(from, from) * Dot3(to, to)));
}
// The arc's unnormalised q = (from x to, lengths + from . to), with its two edge cases:
// opposite directions turn half a circle about an axis perpendicular to `from`, and a zero
// vector gives the identity.
// `edge` (when given) gets the lanes that took either.
template <class V>
inline Q4<V> UnnormalisedArc(const V3<V>& from, const V3<V>& to, const V& lengths,
                             typename Ops<V>::Mask* edge = nullptr) {
  using O = Ops<V>;
  const V d = Dot3(from, to);
  const V3<V> c = Cross3(from, to);
  Q4<V> q{c.x, c.y, c.z, lengths + d};
  const auto degenerate = lengths < O::Splat(1e-20f);
  const auto opposite = d < O::Splat(-0.999999f) * lengths;
  if (edge != nullptr) *edge = O::Or(degenerate, opposite);
  if (O::AnyOf(opposite)) {
    // axis = x cross from, or y cross from when from is along x (normalised with q after).
    const V3<V> axis_x{O::Splat(0.0f), -from.z, from.y};
    const auto along_x = Dot3(axis_x, axis_x) < O::Splat(1e-6f) * Dot3(from, from);
    const V3<V> axis = Select3(along_x, V3<V>{from.z, O::Splat(0.0f), -from.x}, axis_x);
    q = {O::Select(opposite, axis.x, q.x), O::Select(opposite, axis.y, q.y),
         O::Select(opposite, axis.z, q.z), O::Select(opposite, O::Splat(0.0f), q.w)};
  }
  if (O::AnyOf(degenerate)) {
    q = {O::Select(degenerate, O::Splat(0.0f), q.x), O::Select(degenerate, O::Splat(0.0f), q.y),
         O::Select(degenerate, O::Splat(0.0f), q.z), O::Select(degenerate, O::Splat(1.0f), q.w)};
  }
  return q;
}

// ShortestArc, given |from| |to| (a caller that knows them saves a square root on its
// dependency chain).
template <class V>
inline Q4<V> ShortestArcOfLengths(const V3<V>& from, const V3<V>& to, const V& lengths) {
  using O = Ops<V>;
  const Q4<V> q = UnnormalisedArc(from, to, lengths);
  const V inv = O::Splat(1.0f) / O::Sqrt(O::Max(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w,
                                                O::Splat(1e-30f)));
  return {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
