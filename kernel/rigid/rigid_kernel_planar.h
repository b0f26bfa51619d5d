// kernel/rigid/rigid_kernel_planar.h: planar mode in the XPBD kernel (rigid_kernel_impl.h).
//
// Owns: ProjectPlanar: a part back into its ragdoll's plane along the normal, and back to
// a pure turn about the normal from its bind orientation (the twist part of q q0^-1 about
// n). A projection, not a compliant constraint: the plane holds exactly, and the joints'
// limits then hold about the plane's normal.
// Does not: decide when it runs (the driver, rigid_kernel_impl.h: before and after the
// velocity half's joint passes) or which lanes are planar (the block's kPlanarNx..z rows).
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none; it reads the block's plane rows and changes the caller's bodies.
#pragma once

#include "kernel/rigid/rigid_kernel_body.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// Planar mode: back into the plane (along its normal) and back to a pure turn about the
// normal from the bind orientation (the twist part of q q0^-1 about n). Only lanes whose
// normal is set change.
template <class V, class M>
inline void ProjectPlanar(const RigidBlockView& blk, int32_t part, int32_t lane, Body<V>& b, const V3<V>& n,
                          const M& planar) {
  using O = Ops<V>;
  auto ld = [&](int32_t f) { return O::Load(blk.Part(f, part) + lane); };
  const V offset = Dot3(b.x, n) - ld(kPlanarD);
  const V3<V> x = Sub(b.x, Scale(n, offset));
  const Q4<V> q0{ld(kPlanarQx), ld(kPlanarQy), ld(kPlanarQz), ld(kPlanarQw)};
  const Q4<V> d = QMul(b.q, QConj(q0));
  const V along = d.x * n.x + d.y * n.y + d.z * n.z;
  const Q4<V> twist = QNormalize(Q4<V>{n.x * along, n.y * along, n.z * along, d.w});
  const Q4<V> q = QMul(twist, q0);
  b.x = Select3(planar, x, b.x);
  b.q = Q4<V>{O::Select(planar, q.x, b.q.x), O::Select(planar, q.y, b.q.y), O::Select(planar, q.z, b.q.z),
              O::Select(planar, q.w, b.q.w)};
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
