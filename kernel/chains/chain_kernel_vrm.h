// kernel/chains/chain_kernel_vrm.h: the VRM rule of the chain solve (ChainModel::kVrm):
// three-vrm 3.5.5's spring-bone update, in lanes, one step a frame (chain_kernel_impl.h).
// (docs/vrm.md, "ChainModel::kVrm"; the rule is three-vrm's, the code is ours.)
//
// Owns: per joint (SolveVrmJoint), parents first over interleaved blocks (SolveVrmStep,
// SolveVrm): the tail moved by inertia (1 - drag), stiffness along the rest direction
// turned by the simulated parent, gravity and wind, as displacements times dt; the bone's
// length restored (RestoreLength); each collider's signed distance, the tail pushed out and
// the length restored again (CollideVrm; the colliders' radii unscaled, as VRM says); and
// the bone's world rotation, its rest rotation under the simulated parent swung by
// fromUnitVectors onto the solved direction (VrmBoneRotation). The arithmetic is ordered
// for the latency of a lone avatar's chain of joints (OverRoot, VrmTail).
// Does not: the verlet rule (chain_kernel_verlet.h), the choice of rule (Solve,
// chain_kernel_impl.h), or the written local rotations (chain_kernel_writeback.h).
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none; it reads and writes the caller's ChainBlockViews.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"
#include "kernel/chains/chain_kernel_arcs.h"
#include "kernel/chains/chain_kernel_colliders.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// a / sqrt(x) for x >= 1e-30, as sqrt(x) * (a / x): the square root and the divide start
// together. A lone avatar's solve is one block's chain of joints, each waiting on its
// parent's rotation, so its time is the latency of that chain; chained, a square root and
// a divide were about 26 of each joint's ~145 cycles (Zen 4: vsqrtps ~15, vdivps ~11).
template <class V>
TENDON_CHAIN_INLINE V OverRoot(const V& a, const V& x) {
  return Ops<V>::Sqrt(x) * (a / x);
}

// A tail restored to its bone's length, with what the joint's arc is built from: `d`, the
// tail's direction from the head before its last restore, and root = |d|, so that
// n = h + d * length / root. The arc takes (d, root) rather than n - h: its cross and dot
// products start while the restore's square root and divide run, where n - h waited for
// them and for the restore's multiply-add and a subtraction.
template <class V>
struct VrmTail {
  V3<V> n, d;
  V root;
};

// h + d * length / |d|: VRM restores the bone's length after every move; a tail collapsed
// onto its head goes back along `fallback`.
template <class V>
TENDON_CHAIN_INLINE VrmTail<V> RestoreLength(V3<V> d, const V3<V>& h, const V& length, const V3<V>& fallback) {
  using O = Ops<V>;
  V len2 = Dot3(d, d);
  const auto degenerate = len2 < O::Splat(1e-20f);
  if (O::AnyOf(degenerate)) {
    d = Select3(degenerate, fallback, d);
    len2 = O::Max(Dot3(d, d), O::Splat(1e-30f));
  }
  // The square root and the divide start together (see OverRoot).
  const V root = O::Sqrt(len2);
  const V scale = root * (length / len2);
  return {{O::Fma(d.x, scale, h.x), O::Fma(d.y, scale, h.y), O::Fma(d.z, scale, h.z)}, d, root};
}

// The joint's world rotation: three-vrm's fromUnitVectors(axis, d / root) premultiplied
// onto `base`, for |axis| = 1 and root = |d|. The unnormalised arc q = (axis x d, root +
// axis . d) has |q|^2 = 2 root (root + axis . d) = 2 root q.w (expand |axis x d|^2 =
// root^2 - (axis . d)^2), known as soon as q.w is: no sum of q's squares on the joint's
// chain. The product with `base` runs while that is square-rooted, and takes the scale
// after (|base| = 1). The arc's edge lanes (opposite directions, a zero vector) and a
// vanishing |q|^2 take the sum of squares.
template <class V>
TENDON_CHAIN_INLINE Q4<V> VrmBoneRotation(const V3<V>& axis, const V3<V>& d, const V& root, const Q4<V>& base) {
  using O = Ops<V>;
  typename O::Mask edge;
  const Q4<V> q = UnnormalisedArc(axis, d, root, &edge);
  V n2 = (root + root) * q.w;
  if (O::AnyOf(O::Or(edge, n2 < O::Splat(1e-30f)))) {
    const V squares = O::Fma(q.x, q.x, q.y * q.y) + O::Fma(q.z, q.z, q.w * q.w);
    n2 = O::Max(O::Select(edge, squares, n2), O::Splat(1e-30f));
  }
  const V inv = OverRoot(O::Splat(1.0f), n2);
  const Q4<V> bone = QMulFused(q, base);
  return {bone.x * inv, bone.y * inv, bone.z * inv, bone.w * inv};
}

// One collider as three-vrm's shapes measure it: the signed distance s of the tail (with
// its hit radius) and the direction out; a negative s moves the tail by -s along it, then
// the length is restored. The collider radius is not scaled (VRM's rule).
template <class V>
TENDON_CHAIN_INLINE VrmTail<V> CollideVrm(const ChainBlockView& b, int32_t c, int32_t lane, const VrmTail<V>& tail,
                                           const V& hit_radius, const V3<V>& h, const V& length, const V3<V>& fallback) {
  using O = Ops<V>;
  const V3<V>& n = tail.n;
  const uint8_t kind = b.collider_kind[c];
  const ColliderPoints<V> shape = LoadCollider<V>(b, c, lane);
  V s;
  V3<V> dir;
  if (kind == kPlaneKind) {
    s = Dot3(Sub(n, shape.a), shape.b) - hit_radius;
    dir = shape.b;
  } else {
    const V3<V> q = ClosestOnCore(kind, shape, n);
    const V r = O::Load(b.Collider(kCr, c) + lane);
    const V3<V> d = Sub(n, q);
    const V d2 = O::Max(Dot3(d, d), O::Splat(1e-24f));
    const bool inside = kind == kSphereInside || kind == kCapsuleInside;
    // First on squared distances, with a margin far above rounding: whether any lane can
    // touch (outside: |d| < hit + r; inside: |d| > r - hit). Most joints miss most
    // colliders in most frames, and their square root and divide were most of the
    // divider's work in a lone avatar's solve. A lane that passes is decided exactly below.
    const V reach = inside ? r - hit_radius : hit_radius + r;
    const V reach2 = reach * reach;
    const auto maybe = inside ? O::Or(reach < O::Splat(0.0f), d2 >= reach2 * O::Splat(0.9999f))
                              : O::And(reach > O::Splat(0.0f), d2 <= reach2 * O::Splat(1.0001f));
    if (!O::AnyOf(maybe)) return tail;
    const V dist = O::Sqrt(d2);
    s = inside ? r - hit_radius - dist : dist - hit_radius - r;
    dir = Scale(d, (inside ? O::Splat(-1.0f) : O::Splat(1.0f)) / dist);
  }
  const auto hit = O::And(s < O::Splat(0.0f), O::Load(b.Collider(kCon, c) + lane) > O::Splat(0.5f));
  if (!O::AnyOf(hit)) return tail;
  const VrmTail<V> pushed = RestoreLength(Sub(Sub(n, Scale(dir, s)), h), h, length, fallback);
  return {Select3(hit, pushed.n, n), Select3(hit, pushed.d, tail.d), O::Select(hit, pushed.root, tail.root)};
}

// Host-body slot j's box (a host body named by the archetype's host_body_mask) under the
// same rule as the colliders above: the tail's signed distance less its hit radius, a
// negative one moves it out along the box's direction out, then the length is restored.
// Lanes whose slot holds no box are left as they are (their slot's collider rows hold the
// sphere or capsule, tested by CollideVrm).
template <class V>
TENDON_CHAIN_INLINE VrmTail<V> CollideVrmHostBox(const ChainBlockView& b, int32_t j, int32_t lane,
                                                  const VrmTail<V>& tail, const V& hit_radius, const V3<V>& h,
                                                  const V& length, const V3<V>& fallback) {
  using O = Ops<V>;
  if (!O::AnyOf(O::Load(b.HostBox(kBon, j) + lane) > O::Splat(0.5f))) return tail;
  const HostBoxSigned<V> box = HostBoxDistance<V>(b, j, lane, tail.n);
  const V s = box.s - hit_radius;
  const auto hit = O::And(box.on, s < O::Splat(0.0f));
  if (!O::AnyOf(hit)) return tail;
  const VrmTail<V> pushed = RestoreLength(Sub(Sub(tail.n, Scale(box.dir, s)), h), h, length, fallback);
  return {Select3(hit, pushed.n, tail.n), Select3(hit, pushed.d, tail.d), O::Select(hit, pushed.root, tail.root)};
}

// One VRM step of the joint whose tail is node k (its bone is `parent`) in one lane group,
// reading the current tail from slot kCurrent and writing the new one over the previous
// (as the verlet does), and the joint bone's simulated world rotation.
template <class V, int32_t kCurrent>
TENDON_CHAIN_INLINE void SolveVrmJoint(const ChainBlockView& b, int32_t k, int32_t parent, int32_t lane, const V& dt,
                                       const V3<V>& wind_dt) {
  using O = Ops<V>;
  float* node = HotNode(b, k) + lane;
  const float* parent_node = HotNode(b, parent) + lane;
  const V3<V> h = LoadAt<V>(parent_node, kPreviousSlot<kCurrent>);  // the bone's head, final this step
  const V rest = O::Load(node + kRest * kBlockLanes);
  const V length = O::Abs(rest);
  const V3<V> dir = LoadVrm3<V>(b, kVrmDirX, k, lane);
  if (b.first_child[parent] != k) {
    // A branch: carried rigidly by the bone's rotation (solved with its first child).
    const Q4<V> bone = LoadVrmQ<V>(b, kVrmQx, parent, lane);
    StoreAt(node, kPreviousSlot<kCurrent>, Add(h, Scale(QRotate(bone, dir), length)));
    return;
  }
  // The bone's rest rotation under its simulated parent, and the rest direction under it.
  const int32_t grandparent = b.parent[parent];
  const Q4<V> above = grandparent >= 0
                          ? LoadVrmQ<V>(b, kVrmQx, grandparent, lane)
                          : LoadQ4<V>(b.Lane(kRootParentRx) + lane, b.Lane(kRootParentRy) + lane,
                                      b.Lane(kRootParentRz) + lane, b.Lane(kRootParentRw) + lane);
  // axis = (above * rest) dir = above (rest dir): the rest direction under the bone's rest
  // rotation does not wait for the parent, so the parent's rotation is one QRotate from
  // the axis (the product `base` is needed only at the end, off that path).
  const Q4<V> rest_rotation = LoadVrmQ<V>(b, kVrmRestQx, parent, lane);
  const V3<V> axis = QRotateDoubled(above, QRotate(rest_rotation, dir));
  const Q4<V> base = QMulFused(above, rest_rotation);
  // Inertia, stiffness along the rest direction, gravity (and wind): displacements.
  const V3<V> c = LoadAt<V>(node, kCurrent);
  const V3<V> p = LoadAt<V>(node, kPreviousSlot<kCurrent>);
  const V damping = O::Load(b.Node(kDamping, k) + lane);
  const V stiffness_dt = O::Load(b.Node(kStiffness, k) + lane) * dt;
  const V wind_scale = O::Load(b.Node(kWindScale, k) + lane);
  const V3<V> push = LoadVrm3<V>(b, kVrmPushX, k, lane);
  // The moved tail relative to the head (the head's subtraction starts the sum, off the
  // chain that waits for `axis`).
  V3<V> d{O::Fma(c.x - p.x, damping, c.x - h.x), O::Fma(c.y - p.y, damping, c.y - h.y),
          O::Fma(c.z - p.z, damping, c.z - h.z)};
  d = {O::Fma(axis.x, stiffness_dt, O::Fma(push.x, dt, O::Fma(wind_dt.x, wind_scale, d.x))),
       O::Fma(axis.y, stiffness_dt, O::Fma(push.y, dt, O::Fma(wind_dt.y, wind_scale, d.y))),
       O::Fma(axis.z, stiffness_dt, O::Fma(push.z, dt, O::Fma(wind_dt.z, wind_scale, d.z)))};
  const V3<V> fallback = Scale(axis, length);
  VrmTail<V> tail = RestoreLength(d, h, length, fallback);
  if (b.collider_count > 0) {
    const V hit_radius = O::Load(b.Radius(k) + lane);
    const uint32_t mask = b.collider_mask[k];
    for (int32_t ci = 0; ci < b.collider_count; ++ci) {
      if ((mask >> ci) & 1u) tail = CollideVrm<V>(b, ci, lane, tail, hit_radius, h, length, fallback);
    }
    for (int32_t j = 0; j < b.host_box_count; ++j) {
      tail = CollideVrmHostBox<V>(b, j, lane, tail, hit_radius, h, length, fallback);
    }
  }
  const auto pinned = rest < O::Splat(0.0f);
  if (O::AnyOf(pinned)) {
    tail.n = Select3(pinned, LoadAt<V>(node, kBx), tail.n);
    const V3<V> to = Sub(tail.n, h);
    tail.d = Select3(pinned, to, tail.d);
    tail.root = O::Select(pinned, O::Sqrt(Dot3(to, to)), tail.root);
  }
  StoreAt(node, kPreviousSlot<kCurrent>, tail.n);
  // The bone's world rotation: its rest rotation under the simulated parent, swung from
  // the rest direction onto the solved one (three-vrm's fromUnitVectors, premultiplied).
  const Q4<V> bone = VrmBoneRotation(axis, tail.d, tail.root, base);
  O::Store(b.Vrm(kVrmQx, parent) + lane, bone.x);
  O::Store(b.Vrm(kVrmQy, parent) + lane, bone.y);
  O::Store(b.Vrm(kVrmQz, parent) + lane, bone.z);
  O::Store(b.Vrm(kVrmQw, parent) + lane, bone.w);
}

// One VRM step over `count` blocks, parents first (roots follow the animated pose).
template <class V, int32_t kCurrent>
void SolveVrmStep(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& sp) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  constexpr int32_t kGroups = kBlockLanes / kW;
  const V dt = O::Splat(sp.dt);
  const V3<V> wind_dt{O::Splat(sp.wind[0] * sp.dt), O::Splat(sp.wind[1] * sp.dt), O::Splat(sp.wind[2] * sp.dt)};
  const ChainBlockView& topology = blocks[0];
  for (int32_t k = 0; k < topology.node_count; ++k) {
    const int32_t parent = topology.parent[k];
    for (int32_t g = 0; g < count; ++g) {
      for (int32_t i = 0; i < kGroups; ++i) {
        if (parent < 0) {
          float* node = HotNode(blocks[g], k) + i * kW;
          StoreAt(node, kPreviousSlot<kCurrent>, LoadAt<V>(node, kBx));
        } else {
          SolveVrmJoint<V, kCurrent>(blocks[g], k, parent, i * kW, dt, wind_dt);
        }
      }
    }
  }
}

template <class V>
void SolveVrm(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& sp) {
  if (sp.substeps <= 0 || !(sp.dt > 0.0f) || count <= 0 || count > kMaxSolveBlocks) return;
  if (blocks[0].position == kPos0x) {
    SolveVrmStep<V, kPos0x>(blocks, count, sp);
  } else {
    SolveVrmStep<V, kPos1x>(blocks, count, sp);
  }
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
