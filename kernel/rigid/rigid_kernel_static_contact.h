// kernel/rigid/rigid_kernel_static_contact.h: collision detection of ragdoll parts against
// the static world, in the XPBD kernel (rigid_kernel_impl.h).
//
// Owns: ShapeDistance (the signed distance from a point to a static box, sphere or capsule,
// with the normal and surface point of the nearest feature), StaticContact (a sphere's
// deepest contact against the world's planes and shapes, speculative: the contact plane is
// measured from where the sphere's path starts, so a fast part meets the face it came
// through; docs/ragdolls.md, XPBD step: contacts, the speculative margin),
// MeshContact (meshes and heightfields, lane by lane through the host's BVH callback), and
// FindStaticContacts, once a frame: each contact sphere's plane over the path it would take
// this frame, kept in the block (and its static friction hold kept on the same face).
// Does not: solve the contacts (rigid_kernel_contact_solve.h); the contacts between
// ragdolls are found in kernel/contacts and solved in pair_kernel_impl.h.
//
// Compiled once per instruction set: rigid_kernel_impl.h includes it inside every
// rigid_kernel_<isa>.cpp, under that file's flags and TENDON_RIGID_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch).
// Memory: none of its own; it writes the block's contact rows, and MeshContact spills a
// batch's lanes to the stack for the callback.
#pragma once

#include "kernel/rigid/rigid_kernel_body.h"

namespace tendon::detail::TENDON_RIGID_KERNEL_NS {

// Signed distance from point c to a static shape and the outward normal there (the
// nearest feature). A point inside a box leaves through its nearest face.
template <class V>
inline void ShapeDistance(const StaticShape& sh, const V3<V>& c, V* dist, V3<V>* normal, V3<V>* surface) {
  using O = Ops<V>;
  const V zero = O::Splat(0.0f);
  if (sh.kind == kStaticBox) {
    const Q4<V> q = SplatQ<V>(sh.q);
    const V3<V> centre = Splat3<V>(sh.a);
    const V3<V> local = QRotate(QConj(q), Sub(c, centre));
    const V hx = O::Splat(sh.half[0]), hy = O::Splat(sh.half[1]), hz = O::Splat(sh.half[2]);
    const V3<V> clamped{O::Min(O::Max(local.x, zero - hx), hx), O::Min(O::Max(local.y, zero - hy), hy),
                        O::Min(O::Max(local.z, zero - hz), hz)};
    const V3<V> out = Sub(local, clamped);
    const V out_len = Length3(out);
    // Inside: the face with the least depth.
    const V dx = hx - O::Abs(local.x), dy = hy - O::Abs(local.y), dz = hz - O::Abs(local.z);
    const V one = O::Splat(1.0f);
    const V sx = O::Select(local.x < zero, zero - one, one), sy = O::Select(local.y < zero, zero - one, one),
            sz = O::Select(local.z < zero, zero - one, one);
    const auto x_face = O::And(dx <= dy, dx <= dz);
    const auto y_face = O::And(dy < dx, dy <= dz);
    V3<V> in_n{zero, zero, sz};
    in_n = Select3(y_face, V3<V>{zero, sy, zero}, in_n);
    in_n = Select3(x_face, V3<V>{sx, zero, zero}, in_n);
    const V in_d = zero - O::Min(dx, O::Min(dy, dz));
    const auto outside = out_len > O::Splat(1e-7f);
    const V3<V> n_local = Select3(outside, Scale(out, one / O::Max(out_len, O::Splat(1e-7f))), in_n);
    *dist = O::Select(outside, out_len, in_d);
    *normal = QRotate(q, n_local);
    *surface = Add(centre, QRotate(q, Select3(outside, clamped, Add(local, Scale(n_local, zero - in_d)))));
    return;
  }
  V3<V> core = Splat3<V>(sh.a);
  if (sh.kind == kStaticCapsule) {
    const V3<V> b = Splat3<V>(sh.b);
    const V3<V> ab = Sub(b, core);
    const V t = O::Min(O::Max(Dot3(Sub(c, core), ab) / O::Max(Dot3(ab, ab), O::Splat(1e-12f)), zero), O::Splat(1.0f));
    core = Add(core, Scale(ab, t));
  }
  const V3<V> d = Sub(c, core);
  const V len = Length3(d);
  *normal = Select3(len > O::Splat(1e-7f), Scale(d, O::Splat(1.0f) / O::Max(len, O::Splat(1e-7f))),
                    V3<V>{zero, O::Splat(1.0f), zero});
  *dist = len - O::Splat(sh.radius);
  *surface = Add(core, Scale(*normal, O::Splat(sh.radius)));
}

// The deepest contact of a sphere (centre c, previous centre c_prev, radius r) against the
// static world's planes and shapes (MeshContact adds the meshes). Speculative: the contact
// plane (normal and surface point) comes from c_prev, where the sphere's path starts (the
// frame's start in FindStaticContacts, the substep's for meshes), so a fast part meets the
// face it came through instead of being pushed out of the far side of a thin wall.
// Returns the signed depth (< 0: penetrating) and the normal.
template <class V>
inline void StaticContact(const RigidSolveParams& sp, const V3<V>& c, const V3<V>& c_prev, const V& r, V* depth,
                          V3<V>* normal) {
  using O = Ops<V>;
  const V zero = O::Splat(0.0f);
  V best = O::Splat(1e30f);
  V3<V> best_n{zero, O::Splat(1.0f), zero};
  for (int32_t pl = 0; pl < sp.plane_count; ++pl) {
    const V3<V> pn = Splat3<V>(sp.planes[pl]);
    const V d = Dot3(c, pn) - O::Splat(sp.planes[pl][3]) - r;
    const auto deeper = d < best;
    best = O::Select(deeper, d, best);
    best_n = Select3(deeper, pn, best_n);
  }
  for (int32_t k = 0; k < sp.shape_count; ++k) {
    V prev_dist, now_dist;
    V3<V> prev_n, prev_surface, now_n, now_surface;
    ShapeDistance(sp.shapes[k], c_prev, &prev_dist, &prev_n, &prev_surface);
    ShapeDistance(sp.shapes[k], c, &now_dist, &now_n, &now_surface);
    // Came from outside and crossed the supporting plane at the previous closest point:
    // if the path meets the shape where it crosses that plane, the contact is on that face
    // (even when the sphere is now inside, or already through the far side).
    const V prev_gap = prev_dist - r;
    const auto from_outside = prev_gap > zero;
    const V spec = Dot3(Sub(c, prev_surface), prev_n) - r;
    const V t = prev_gap / O::Max(prev_gap - spec, O::Splat(1e-12f));
    V cross_dist;
    V3<V> cross_n, cross_surface;
    ShapeDistance(sp.shapes[k], Lerp3(c_prev, c, O::Min(O::Max(t, zero), O::Splat(1.0f))), &cross_dist, &cross_n,
                  &cross_surface);
    const auto hit = O::And(O::And(from_outside, spec < zero), cross_dist - r < O::Splat(1e-3f));
    const V d = O::Select(hit, spec, now_dist - r);
    const V3<V> n = Select3(hit, prev_n, now_n);
    const auto deeper = d < best;
    best = O::Select(deeper, d, best);
    best_n = Select3(deeper, n, best_n);
  }
  *depth = best;
  *normal = best_n;
}

// Meshes and heightfields: each lane queries the BVH for itself; a contact deeper than
// (depth, normal) replaces it.
template <class V>
inline void MeshContact(const RigidSolveParams& sp, const V3<V>& c, const V3<V>& c_prev, const V& r, V* depth,
                        V3<V>* normal) {
  using O = Ops<V>;
  V best = *depth;
  V3<V> best_n = *normal;
  {
    alignas(64) float cx[O::kSize], cy[O::kSize], cz[O::kSize], px[O::kSize], py[O::kSize], pz[O::kSize];
    alignas(64) float rr[O::kSize], bd[O::kSize], nx[O::kSize], ny[O::kSize], nz[O::kSize];
    O::Store(cx, c.x), O::Store(cy, c.y), O::Store(cz, c.z);
    O::Store(px, c_prev.x), O::Store(py, c_prev.y), O::Store(pz, c_prev.z);
    O::Store(rr, r), O::Store(bd, best);
    O::Store(nx, best_n.x), O::Store(ny, best_n.y), O::Store(nz, best_n.z);
    for (int32_t i = 0; i < O::kSize; ++i) {
      const float centre[3] = {cx[i], cy[i], cz[i]}, prev[3] = {px[i], py[i], pz[i]};
      float d = 0, n[3] = {0, 0, 0};
      if (sp.mesh_contact(sp.mesh, centre, prev, rr[i], &d, n) && d < bd[i]) {
        bd[i] = d;
        nx[i] = n[0], ny[i] = n[1], nz[i] = n[2];
      }
    }
    best = O::Load(bd);
    best_n = {O::Load(nx), O::Load(ny), O::Load(nz)};
  }
  *depth = best;
  *normal = best_n;
}

// The contact planes of one part's spheres against the static world, once per frame:
// each sphere's deepest contact over the path it would take this frame at its current
// velocity (the speculative test in StaticContact: a fast part meets the face it is
// heading for), kept as a plane (normal, offset) in the block. Within a frame a sphere
// moves a few centimetres at most at ragdoll speeds, so the plane of its nearest feature
// stays a close stand-in for the feature (a box's face exactly; a sphere or capsule of
// radius R off by s^2 / 2R after a slide s); a 50 m/s part moves 0.8 m and is held at the
// face it came through.
template <class V>
inline void FindStaticContacts(const RigidBlockView& blk, int32_t part, int32_t lane, const Body<V>& b,
                               const RigidPartConstants& c, const RigidSolveParams& sp,
                               const typename Ops<V>::Mask& keep) {
  using O = Ops<V>;
  const V ahead = O::Splat(sp.frame_seconds);
  for (int32_t k = 0; k < c.point_count; ++k) {
    const V3<V> local{O::Splat(c.points[k][0]), O::Splat(c.points[k][1]), O::Splat(c.points[k][2])};
    const V radius = O::Splat(c.points[k][3]);
    const V3<V> arm = QRotate(b.qp, local);
    const V3<V> start = Add(b.xp, arm);
    const V3<V> end = Add(start, Scale(Add(b.v, Cross3(b.w, arm)), ahead));
    V depth;
    V3<V> n;
    StaticContact(sp, end, start, radius, &depth, &n);
    if (sp.mesh_contact != nullptr) MeshContact(sp, end, start, radius, &depth, &n);
    // A point resting on the same face keeps its static friction hold across frames; one
    // that meets another face starts afresh.
    const V3<V> was{O::Load(blk.Contact(kCnx, part, k) + lane), O::Load(blk.Contact(kCny, part, k) + lane),
                    O::Load(blk.Contact(kCnz, part, k) + lane)};
    const auto same_face = Dot3(was, n) > O::Splat(0.95f);
    float* sum = blk.Contact(kLambdaSum, part, k) + lane;
    StoreStepped(sum, O::Select(same_face, O::Load(sum), O::Splat(0.0f)), keep);
    StoreStepped(blk.Contact(kCnx, part, k) + lane, n.x, keep);
    StoreStepped(blk.Contact(kCny, part, k) + lane, n.y, keep);
    StoreStepped(blk.Contact(kCnz, part, k) + lane, n.z, keep);
    StoreStepped(blk.Contact(kPlaneOffset, part, k) + lane, Dot3(end, n) - radius - depth, keep);
  }
}

}  // namespace tendon::detail::TENDON_RIGID_KERNEL_NS
