// kernel/chains/chain_kernel_verlet.h: the verlet rule of the chain solve
// (ChainModel::kVerlet), one substep over interleaved blocks (chain_kernel_impl.h).
//
// The solve follows the behaviour of the Roblox BonePhysics reference, in lanes. Per
// substep s of S, parents first:
//   roots and pinned lanes:  P = lerp(A, B, (s + 1) / S), the animated pose interpolated
//                            across the frame so a fast root does not jerk its chain once
//                            per frame (A: the pose at the frame's start, B: at its end)
//   others:  v = (P - Q) * damping;  P' = P + v + (g * gravity_scale + w * wind_scale) dt^2
//            P' = lerp(P', B, stiffness)
//            push P' out of (or into) every collider, by the node radius, and out of
//            every host box its host-body slots hold (CollideHostBox)
//            push the link parent..P' out of every outside sphere and capsule, moving
//            both ends (CollideLink: a link across a thin capsule does not pass it)
//            P' = parent + (P' - parent) * rest / |P' - parent|   (exact link length)
//   Q = P;  P = P'   (P' is written over Q's slot and the slots swap roles; see kPos0x)
// Padding lanes are pinned, and hold a valid pose, so no lane needs a mask.
//
// Owns: that rule: SolveRoot and SolveLinked per node and lane group, the collider push
// (Collide), the link's (CollideLink), the per-node parameters (NodeParams: damping, stiffness, the external
// acceleration times dt^2), the pinned pose (PinnedPose) and one substep over the blocks
// (SolveSubstep, with what the substeps of a call share: SolveShared).
// Does not: run the substeps or pick the rule (Solve, chain_kernel_impl.h), or step the
// VRM rule (chain_kernel_vrm.h).
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
#include "kernel/chains/chain_kernel_colliders.h"

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

// Pushes p out of (or, for inside kinds, into) collider c, keeping `node_radius` clear.
template <class V>
TENDON_CHAIN_INLINE V3<V> Collide(const ChainBlockView& b, int32_t c, int32_t lane, V3<V> p, const V& node_radius) {
  using O = Ops<V>;
  const uint8_t kind = b.collider_kind[c];
  const ColliderPoints<V> shape = LoadCollider<V>(b, c, lane);
  if (kind == kPlaneKind) {
    // b is the unit normal; the signed distance less the radius must not be negative.
    const V s = Dot3(Sub(p, shape.a), shape.b) - node_radius;
    const V push = O::Min(s, O::Splat(0.0f));
    return Sub(p, Scale(shape.b, push));
  }
  const V3<V> q = ClosestOnCore(kind, shape, p);
  const V r = O::Load(b.Collider(kCr, c) + lane);
  const V3<V> d = Sub(p, q);
  const V dist2 = Dot3(d, d);
  const V dist = O::Sqrt(O::Max(dist2, O::Splat(1e-24f)));
  if (kind == kSphereInside || kind == kCapsuleInside) {
    const V limit = O::Max(r - node_radius, O::Splat(0.0f));
    const auto outside = dist > limit;
    return Select3(outside, Add(q, Scale(d, limit / dist)), p);
  }
  const V limit = r + node_radius;
  // A node exactly at the core has no direction to leave by; it stays (rare, harmless).
  const auto inside = O::And(dist < limit, dist2 > O::Splat(1e-20f));
  return Select3(inside, Add(q, Scale(d, limit / dist)), p);
}

// Pushes p out of host-body slot j's box (in the lanes whose slot holds one) to its surface
// grown by `node_radius`: the nearest surface point plus the radius along the direction
// out (HostBoxDistance). Only the node is tested, not its link as a segment: the closest
// points of a segment and an oriented box are a clipping problem with a case per face and
// edge, not the few lane-wise operations the capsule's closed form is; links are short
// against the boxes host bodies are (a cape's 8 cm links, a player's 30 cm box), and the
// host box moves the nodes every substep.
template <class V>
TENDON_CHAIN_INLINE V3<V> CollideHostBox(const ChainBlockView& b, int32_t j, int32_t lane, const V3<V>& p,
                                         const V& node_radius) {
  using O = Ops<V>;
  if (!O::AnyOf(O::Load(b.HostBox(kBon, j) + lane) > O::Splat(0.5f))) return p;
  const HostBoxSigned<V> box = HostBoxDistance<V>(b, j, lane, p);
  const auto hit = O::And(box.on, box.s < node_radius);
  if (!O::AnyOf(hit)) return p;
  return Select3(hit, Add(p, Scale(box.dir, node_radius - box.s)), p);
}

// Pushes link parent..child (pp..n) out of outside sphere or capsule collider c (kTendon
// only: the VRM rule tests its tails as points, as three-vrm does). The node test alone
// lets a link whose nodes sit on either side of a thin capsule through it; this finds the
// link's point nearest the collider's core (clamped segment-segment closest points; a
// sphere's core is its centre) and moves it out to the collider's radius plus the node
// radius there (the two nodes' radii interpolated). A link that swept across the core this
// substep (the same link point was on the other side at the substep's start, pp_old..p_old,
// and its path passed within reach) goes back to the side it came from, where the nearest
// direction alone would push it on through. The move is split between the two nodes by
// where the point lies (s from the parent, 0..1) and by their inverse masses (w: 1 free,
// 0 pinned), so that the point itself moves by exactly the push: dp = w_p (1 - s) / D,
// dc = w_c s / D with D = w_p (1 - s)^2 + w_c s^2, kept >= 1/16 so a point near a pinned
// parent moves its child at most 4 times the push (the lever would be unbounded).
template <class V>
TENDON_CHAIN_INLINE void CollideLink(const ChainBlockView& b, int32_t c, int32_t lane, V3<V>& pp, V3<V>& n,
                                     const V3<V>& pp_old, const V3<V>& p_old, const V& radius_parent,
                                     const V& radius_child, const V& w_parent, const V& w_child) {
  using O = Ops<V>;
  const uint8_t kind = b.collider_kind[c];
  const ColliderPoints<V> shape = LoadCollider<V>(b, c, lane);
  const V zero = O::Splat(0.0f), one = O::Splat(1.0f);
  auto clamp01 = [&](const V& x) { return O::Min(O::Max(x, zero), one); };
  // A sphere's second point is not kept up to date (only a capsule's is): its core is a.
  const V3<V> core_b = kind == kCapsuleOutside ? shape.b : shape.a;
  const V3<V> d2 = Sub(core_b, shape.a);
  const V r = O::Load(b.Collider(kCr, c) + lane);
  // Cull: every point the test below can act on (the link now and at the substep's start,
  // and the paths between) lies in the hull of the four ends, so in the sphere about their
  // mean through the farthest; when no lane's sphere comes within reach of the core, nothing
  // can hit. The margin keeps the cull conservative under rounding, so a lane culled here
  // is one the full test leaves as it is, and every instruction set gives the same bits.
  {
    const V quarter = O::Splat(0.25f);
    const V3<V> m = Scale(Add(Add(pp, n), Add(pp_old, p_old)), quarter);
    auto d2m = [&](const V3<V>& q) {
      const V3<V> e = Sub(q, m);
      return Dot3(e, e);
    };
    const V reach2 = O::Max(O::Max(d2m(pp), d2m(n)), O::Max(d2m(pp_old), d2m(p_old)));
    const V tm = clamp01(Dot3(Sub(m, shape.a), d2) / O::Max(Dot3(d2, d2), O::Splat(1e-12f)));
    const V3<V> off = Sub(m, Add(shape.a, Scale(d2, tm)));
    const V reach = (O::Sqrt(reach2) + r + O::Max(radius_parent, radius_child)) * O::Splat(1.001f) +
                    O::Splat(1e-4f);
    if (!O::AnyOf(Dot3(off, off) < reach * reach)) return;
  }
  const V3<V> d1 = Sub(n, pp);
  const V3<V> r0 = Sub(pp, shape.a);
  const V a = O::Max(Dot3(d1, d1), O::Splat(1e-12f));
  const V e = O::Max(Dot3(d2, d2), O::Splat(1e-12f));
  const V bb = Dot3(d1, d2), cc = Dot3(d1, r0), f = Dot3(d2, r0);
  const V denom = a * e - bb * bb;
  // The lines' closest point on the link (parallel lines: the one nearest the core's start),
  // then the core's point nearest it, then the link's point nearest that.
  const V s_line = O::Select(denom > O::Splat(1e-12f) * a * e, (bb * f - cc * e) / O::Max(denom, O::Splat(1e-30f)),
                             zero - cc / a);
  const V t = clamp01((bb * clamp01(s_line) + f) / e);
  const V s = clamp01((bb * t - cc) / a);
  const V3<V> pl = Add(pp, Scale(d1, s));
  const V3<V> pc = Add(shape.a, Scale(d2, t));
  const V3<V> dv = Sub(pl, pc);
  const V dist2 = Dot3(dv, dv);
  const V dist = O::Sqrt(O::Max(dist2, O::Splat(1e-24f)));
  const V limit = r + radius_parent + (radius_child - radius_parent) * s;
  // The same link point at the substep's start, and its straight path to where it is now.
  const V3<V> pl_old = Add(pp_old, Scale(Sub(p_old, pp_old), s));
  const V3<V> old_sep = Sub(pl_old, pc);
  const V3<V> path = Sub(pl, pl_old);
  const V u = clamp01((zero - Dot3(old_sep, path)) / O::Max(Dot3(path, path), O::Splat(1e-20f)));
  const V3<V> miss = Add(old_sep, Scale(path, u));
  const auto crossed = O::And(Dot3(old_sep, dv) < zero, Dot3(miss, miss) < limit * limit);
  const auto inside = O::And(dist < limit, dist2 > O::Splat(1e-20f));
  const auto hit = O::Or(crossed, inside);
  if (!O::AnyOf(hit)) return;
  const V old_len = O::Sqrt(O::Max(Dot3(old_sep, old_sep), O::Splat(1e-24f)));
  const V3<V> normal = Select3(crossed, Scale(old_sep, one / old_len), Scale(dv, one / dist));
  const V3<V> push = Sub(Add(pc, Scale(normal, limit)), pl);
  const V wp = (one - s) * w_parent, wc = s * w_child;
  const V d = O::Max((one - s) * wp + s * wc, O::Splat(1.0f / 16.0f));
  const V kp = O::Select(hit, wp / d, zero), kc = O::Select(hit, wc / d, zero);
  pp = Add(pp, Scale(push, kp));
  n = Add(n, Scale(push, kc));
}

// A lane group's integration parameters for one node: damping, stiffness, and the
// external acceleration times dt^2, (g * gravity_scale + w * wind_scale) dt^2.
template <class V>
struct NodeParams {
  V damping, stiffness;
  V3<V> force;
};
template <class V>
inline NodeParams<V> MakeParams(const V& damping, const V& stiffness, const V& gs, const V& ws,
                                const V3<V>& gravity_dt2, const V3<V>& wind_dt2) {
  using O = Ops<V>;
  return {damping, stiffness,
          {O::Fma(gravity_dt2.x, gs, wind_dt2.x * ws), O::Fma(gravity_dt2.y, gs, wind_dt2.y * ws),
           O::Fma(gravity_dt2.z, gs, wind_dt2.z * ws)}};
}

// A pinned node (a root, or a lane whose node copies the animated pose) follows the pose
// interpolated across the frame; the frame's last substep also makes this frame's end the
// next frame's start (A = B).
template <class V>
TENDON_CHAIN_INLINE V3<V> PinnedPose(const ChainBlockView& b, int32_t k, int32_t lane, const V3<V>& anim,
                                     const V& alpha, bool last) {
  float* a = b.Node(kAx, k) + lane;
  const V3<V> pose = Lerp3(LoadAt<V>(a, 0), anim, alpha);
  if (last) StoreAt(a, 0, anim);
  return pose;
}

// One substep's update of a root node in one lane group (see the file note).
template <class V, int32_t kCurrent>
TENDON_CHAIN_INLINE void SolveRoot(const ChainBlockView& b, int32_t k, int32_t lane, const V& alpha, bool last) {
  float* node = HotNode(b, k) + lane;
  StoreAt(node, kPreviousSlot<kCurrent>, PinnedPose(b, k, lane, LoadAt<V>(node, kBx), alpha, last));
}

// One substep's update of linked node k (its parent is `parent`) in one lane group.
template <class V, int32_t kCurrent>
TENDON_CHAIN_INLINE void SolveLinked(const ChainBlockView& b, int32_t k, int32_t parent, int32_t lane,
                                     const NodeParams<V>& params, const V& alpha, bool last) {
  using O = Ops<V>;
  float* node = HotNode(b, k) + lane;
  const float* parent_node = HotNode(b, parent) + lane;
  const V3<V> p = LoadAt<V>(node, kCurrent);
  const V3<V> q = LoadAt<V>(node, kPreviousSlot<kCurrent>);
  // Stiffness pulls toward this frame's animated pose; nodes pinned by override follow the
  // pose interpolated across the frame, like roots (their A is only read when one is).
  const V3<V> anim = LoadAt<V>(node, kBx);
  const V rest = O::Load(node + kRest * kBlockLanes);
  // Integrate: P' = P + (P - Q) * damping + (g * gs + w * ws) * dt^2.
  V3<V> n{O::Fma(p.x - q.x, params.damping, p.x), O::Fma(p.y - q.y, params.damping, p.y),
          O::Fma(p.z - q.z, params.damping, p.z)};
  n = Add(n, params.force);
  // Stiffness: pose-hold strength toward the animated pose.
  n = Lerp3(n, anim, params.stiffness);
  if (b.collider_count > 0) {
    const V radius = O::Load(b.Radius(k) + lane);
    const uint32_t mask = b.collider_mask[k];
    for (int32_t c = 0; c < b.collider_count; ++c) {
      if ((mask >> c) & 1u) n = Collide<V>(b, c, lane, n, radius);
    }
    for (int32_t j = 0; j < b.host_box_count; ++j) n = CollideHostBox<V>(b, j, lane, n, radius);
  }
  // Inextensible link: the parent is final for this substep (parents first), in the slot
  // this substep writes; only the link test below may still move it.
  V3<V> pp = LoadAt<V>(parent_node, kPreviousSlot<kCurrent>);
  if (b.collider_count > 0) {
    // The link as a segment against the outside spheres and capsules acting on the node
    // (CollideLink). Roots and pinned nodes have inverse mass 0 (a root's rest row is -0,
    // so roots are told by the topology).
    const uint32_t mask = b.collider_mask[k];
    bool any = false;
    for (int32_t c = 0; c < b.collider_count; ++c) {
      const uint8_t kind = b.collider_kind[c];
      any = any || (((mask >> c) & 1u) != 0 && (kind == kSphereOutside || kind == kCapsuleOutside));
    }
    if (any) {
      const V zero = O::Splat(0.0f), one = O::Splat(1.0f);
      const V3<V> pp_old = LoadAt<V>(parent_node, kCurrent);
      const V3<V> p_old = p;
      const V w_parent = b.parent[parent] < 0
                             ? zero
                             : O::Select(O::Load(parent_node + kRest * kBlockLanes) < zero, zero, one);
      const V w_child = O::Select(rest < zero, zero, one);
      const V radius_parent = O::Load(b.Radius(parent) + lane);
      const V radius_child = O::Load(b.Radius(k) + lane);
      for (int32_t c = 0; c < b.collider_count; ++c) {
        const uint8_t kind = b.collider_kind[c];
        if (((mask >> c) & 1u) == 0 || (kind != kSphereOutside && kind != kCapsuleOutside)) continue;
        CollideLink<V>(b, c, lane, pp, n, pp_old, p_old, radius_parent, radius_child, w_parent, w_child);
      }
      StoreAt(HotNode(b, parent) + lane, kPreviousSlot<kCurrent>, pp);
    }
  }
  V3<V> d = Sub(n, pp);
  V len2 = Dot3(d, d);
  const auto degenerate = len2 < O::Splat(1e-20f);
  if (O::AnyOf(degenerate)) {
    // Collapsed onto the parent: fall back to the animated segment direction.
    const V3<V> anim_d = Sub(anim, LoadAt<V>(parent_node, kBx));
    d = Select3(degenerate, anim_d, d);
    len2 = O::Max(Dot3(d, d), O::Splat(1e-30f));
  }
  const V scale = rest / O::Sqrt(len2);  // pinned lanes' (negative) result is replaced below
  n = {O::Fma(d.x, scale, pp.x), O::Fma(d.y, scale, pp.y), O::Fma(d.z, scale, pp.z)};
  const auto pinned = rest < O::Splat(0.0f);
  if (O::AnyOf(pinned)) n = Select3(pinned, PinnedPose(b, k, lane, anim, alpha, last), n);
  StoreAt(node, kPreviousSlot<kCurrent>, n);
}

// What every substep of one solve call shares: per block, whether all its lanes use their
// chain's parameters (no per-node overrides, the common case) and those parameters
// combined once per call; and the external accelerations times dt^2.
template <class V>
struct SolveShared {
  bool uniform[kMaxSolveBlocks];
  NodeParams<V> chain_params[kMaxSolveBlocks][kBlockLanes / Ops<V>::kSize];
  V3<V> gravity_dt2, wind_dt2;
};

// One substep over `count` blocks, parents first. The blocks are interleaved node by node:
// node k of one block depends on its parent's result from the line before (a chain of
// sqrt and divide latencies), so giving the CPU several independent blocks at each node
// is what keeps its pipelines full.
template <class V, int32_t kCurrent>
void SolveSubstep(const ChainBlockView* blocks, int32_t count, const SolveShared<V>& shared, const V& alpha,
                  bool last) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  constexpr int32_t kGroups = kBlockLanes / kW;
  const ChainBlockView& topology = blocks[0];
  for (int32_t k = 0; k < topology.node_count; ++k) {
    const int32_t parent = topology.parent[k];
    if (parent < 0) {
      for (int32_t g = 0; g < count; ++g) {
        for (int32_t i = 0; i < kGroups; ++i) SolveRoot<V, kCurrent>(blocks[g], k, i * kW, alpha, last);
      }
      continue;
    }
    for (int32_t g = 0; g < count; ++g) {
      const ChainBlockView& b = blocks[g];
      for (int32_t i = 0; i < kGroups; ++i) {
        const int32_t lane = i * kW;
        if (shared.uniform[g]) {
          SolveLinked<V, kCurrent>(b, k, parent, lane, shared.chain_params[g][i], alpha, last);
        } else {
          const NodeParams<V> node_params =
              MakeParams(O::Load(b.Node(kDamping, k) + lane), O::Load(b.Node(kStiffness, k) + lane),
                         O::Load(b.Node(kGravityScale, k) + lane), O::Load(b.Node(kWindScale, k) + lane),
                         shared.gravity_dt2, shared.wind_dt2);
          SolveLinked<V, kCurrent>(b, k, parent, lane, node_params, alpha, last);
        }
      }
    }
  }
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
