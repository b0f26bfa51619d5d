// kernel/chains/chain_kernel_collider_worlds.h: the read's colliders placed on their host
// frames, in lanes (chain_kernel_impl.h's collider_worlds kernel).
//
// Owns: ColliderWorlds: each collider's frame transposed into lanes, then the scalar
// ColliderWorld's arithmetic in its order (TransformPoint: t + Rotate(q, scale * p), a
// plane's normal only turned; the radius scaled by the largest scale, except for VRM), so
// the result is its bits; RotateAsScalar, tendon::Rotate (q v q*) in that order.
// Does not: read the colliders in the solve (chain_kernel_colliders.h).
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none of its own (a transposed table on the stack); it writes the caller's rows.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"
#include "kernel/chains/chain_kernel_transposes.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// tendon::Rotate (q v q*) in lanes, with its operations in its order: the read's colliders
// come out bit for bit as the scalar ColliderWorld (this file is compiled without
// contraction, and no Fma here).
template <class V>
inline V3<V> RotateAsScalar(const V& qx, const V& qy, const V& qz, const V& qw, const V3<V>& v) {
  const V two = Ops<V>::Splat(2.0f);
  const V3<V> t{(qy * v.z - qz * v.y) * two, (qz * v.x - qx * v.z) * two, (qx * v.y - qy * v.x) * two};
  return {v.x + t.x * qw + (qy * t.z - qz * t.y), v.y + t.y * qw + (qz * t.x - qx * t.z),
          v.z + t.z * qw + (qx * t.y - qy * t.x)};
}

// The read's colliders on host frames, a block of eight at a time: their frames transposed
// into lanes, then ColliderWorld's arithmetic in lanes (see ChainKernels::collider_worlds).
// Four colliders in scalar calls cost a lone avatar's read 348 instructions.
template <class V>
void ColliderWorlds(const ChainColliderInput& in, float* out) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  alignas(64) float frame[kTransformFloats][kBlockLanes];
  for (int32_t first = 0; first < in.count; first += kBlockLanes) {
    const Transform* frames[kBlockLanes];
    for (int32_t l = 0; l < kBlockLanes; ++l)
      frames[l] = in.frames + in.frame[first + l < in.count ? first + l : first];  // padding: a real frame
    TransposeTransforms(frames, frame);
    for (int32_t lane = 0; lane < kBlockLanes; lane += kW) {
      const int32_t at = first + lane;
      // (std::vector's floats: unaligned loads and stores.)
      auto local = [&](int32_t row) {
        return O::LoadUnaligned(in.local + static_cast<std::size_t>(row) * in.stride + at);
      };
      const V3<V> t{O::Load(frame[0] + lane), O::Load(frame[1] + lane), O::Load(frame[2] + lane)};
      const V qx = O::Load(frame[3] + lane), qy = O::Load(frame[4] + lane), qz = O::Load(frame[5] + lane),
              qw = O::Load(frame[6] + lane);
      const V3<V> sc{O::Load(frame[7] + lane), O::Load(frame[8] + lane), O::Load(frame[9] + lane)};
      const V3<V> a{local(kLax), local(kLay), local(kLaz)};
      const V3<V> b{local(kLbx), local(kLby), local(kLbz)};
      const auto plane = local(kLplane) > O::Splat(0.5f);
      const auto capsule = local(kLcapsule) > O::Splat(0.5f);
      // TransformPoint: t + Rotate(q, scale * p); a plane's normal is only turned.
      const V3<V> ra = RotateAsScalar(qx, qy, qz, qw, V3<V>{sc.x * a.x, sc.y * a.y, sc.z * a.z});
      const V3<V> pa{t.x + ra.x, t.y + ra.y, t.z + ra.z};
      const V3<V> rb = RotateAsScalar(
          qx, qy, qz, qw, Select3(plane, b, V3<V>{sc.x * b.x, sc.y * b.y, sc.z * b.z}));
      const V3<V> pb = Select3(plane, rb, Select3(capsule, V3<V>{t.x + rb.x, t.y + rb.y, t.z + rb.z}, pa));
      // ColliderWorld's std::max(|x|, std::max(|y|, |z|)): (a < b) ? b : a, in that order.
      auto max_as_std = [](const V& x, const V& y) { return O::Select(x < y, y, x); };
      const V scale = in.vrm ? O::Splat(1.0f) : max_as_std(O::Abs(sc.x), max_as_std(O::Abs(sc.y), O::Abs(sc.z)));
      const V radius = O::Select(plane, O::Splat(0.0f), local(kLradius) * scale);
      const V fields[kCr + 1] = {pa.x, pa.y, pa.z, pb.x, pb.y, pb.z, radius};
      for (int32_t f = 0; f <= kCr; ++f)
        O::StoreUnaligned(out + static_cast<std::size_t>(f) * in.stride + at, fields[f]);
    }
  }
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
