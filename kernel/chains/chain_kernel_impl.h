// kernel/chains/chain_kernel_impl.h: the verlet chain solve and writeback, written once.
//
// Design: every function here is a template over the value type V (float for the scalar
// reference, xsimd::batch<float, Arch> for an explicit Arch) and is instantiated only in
// the per-instruction-set translation units (chain_kernel_<isa>.cpp). Each of them defines
// TENDON_CHAIN_KERNEL_NS to a namespace of its own before including this file, so that no
// function compiled with AVX flags shares a symbol with one compiled without them (the
// linker could otherwise keep the AVX copy and run it on a CPU without AVX).
//
// The solve follows the behaviour of the Roblox BonePhysics reference, in lanes. Per
// substep s of S, parents first:
//   roots and pinned lanes:  P = lerp(A, B, (s + 1) / S), the animated pose interpolated
//                            across the frame so a fast root does not jerk its chain once
//                            per frame (A: the pose at the frame's start, B: at its end)
//   others:  v = (P - Q) * damping;  P' = P + v + (g * gravity_scale + w * wind_scale) dt^2
//            P' = lerp(P', B, stiffness)
//            push P' out of (or into) every collider, by the node radius
//            P' = parent + (P' - parent) * rest / |P' - parent|   (exact link length)
//   Q = P;  P = P'   (P' is written over Q's slot and the slots swap roles; see kPos0x)
// Padding lanes are pinned, and hold a valid pose, so no lane needs a mask.

#include <cstdint>

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE__)
#include <xmmintrin.h>
#endif

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

// A substep reads the current position from slot kCurrent (kPos0x or kPos1x) and writes
// the new one over the previous, in the other slot. The slots are template parameters so
// that every field offset is a constant: as run-time values they cost the solve a tenth
// more instructions, in spilled offsets.
template <int32_t kCurrent>
inline constexpr int32_t kPreviousSlot = kCurrent == kPos0x ? kPos1x : kPos0x;

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
  }
  // Inextensible link: the parent is final for this substep (parents first), in the slot
  // this substep writes.
  const V3<V> pp = LoadAt<V>(parent_node, kPreviousSlot<kCurrent>);
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

// The kVrm rule's one step per frame (below).
template <class V>
void SolveVrm(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& sp);

// Runs params.substeps substeps over `count` blocks that share a topology, and so which
// slot holds the current position (the caller swaps its blocks' roles after an odd number
// of substeps).
template <class V>
void Solve(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& sp) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  static_assert(kBlockLanes % kW == 0, "the block width must be a multiple of the batch width");
  if (sp.substeps <= 0 || count <= 0 || count > kMaxSolveBlocks) return;
  if (blocks[0].vrm) return SolveVrm<V>(blocks, count, sp);
  const float dt2 = sp.dt * sp.dt;
  SolveShared<V> shared;
  shared.gravity_dt2 = {O::Splat(sp.gravity[0] * dt2), O::Splat(sp.gravity[1] * dt2), O::Splat(sp.gravity[2] * dt2)};
  shared.wind_dt2 = {O::Splat(sp.wind[0] * dt2), O::Splat(sp.wind[1] * dt2), O::Splat(sp.wind[2] * dt2)};
  for (int32_t g = 0; g < count; ++g) {
    const ChainBlockView& b = blocks[g];
    const float* flags = b.Lane(kUniform);
    bool all = true;
    for (int32_t l = 0; l < kBlockLanes; ++l) all = all && flags[l] > 0.5f;
    shared.uniform[g] = all;
    for (int32_t i = 0; i < kBlockLanes / kW; ++i) {
      const int32_t lane = i * kW;
      shared.chain_params[g][i] =
          MakeParams(O::Load(b.Lane(kLaneDamping) + lane), O::Load(b.Lane(kLaneStiffness) + lane),
                     O::Load(b.Lane(kLaneGravityScale) + lane), O::Load(b.Lane(kLaneWindScale) + lane),
                     shared.gravity_dt2, shared.wind_dt2);
    }
  }
  const float inv_substeps = 1.0f / static_cast<float>(sp.substeps);
  bool slot0_current = blocks[0].position == kPos0x;
  for (int32_t s = 0; s < sp.substeps; ++s, slot0_current = !slot0_current) {
    const bool last = s + 1 == sp.substeps;
    const V alpha = O::Splat(last ? 1.0f : static_cast<float>(s + 1) * inv_substeps);
    if (slot0_current) {
      SolveSubstep<V, kPos0x>(blocks, count, shared, alpha, last);
    } else {
      SolveSubstep<V, kPos1x>(blocks, count, shared, alpha, last);
    }
  }
}

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

// ---- ChainModel::kVrm: three-vrm 3.5.5's spring-bone update, in lanes ----
// (docs/vrm.md, "ChainModel::kVrm"; the rule is three-vrm's, the code is ours.)

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

// A quaternion in four consecutive rows of kBlockLanes floats (the writeback scratch).
template <class V>
inline Q4<V> LoadRows(const float* row) {
  return LoadQ4<V>(row, row + kBlockLanes, row + 2 * kBlockLanes, row + 3 * kBlockLanes);
}
template <class V>
inline void StoreRows(float* row, const Q4<V>& q) {
  using O = Ops<V>;
  O::Store(row, q.x);
  O::Store(row + kBlockLanes, q.y);
  O::Store(row + 2 * kBlockLanes, q.z);
  O::Store(row + 3 * kBlockLanes, q.w);
}

#if defined(__AVX__)
// out[i][l] = r[l][i] for 8 rows of 8 floats: unpack, shuffle, then swap 128-bit halves.
inline void Transpose8x8(const __m256* r, __m256* out) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  out[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  out[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  out[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  out[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  out[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  out[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  out[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  out[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
#endif

// Twelve rows of kW lanes (table[r][i]) to each lane's 12 floats side by side (out + 12 i):
// SIMD transposes where the kernel's width has one (8x8 and 4x8 on AVX, three 4x4 on SSE).
template <int32_t kW>
inline void RowsToLanes12(const float (*table)[kW], float* out) {
#if defined(__AVX__)
  if constexpr (kW == 8) {
    __m256 r[8], t[8];
    for (int32_t i = 0; i < 8; ++i) r[i] = _mm256_load_ps(table[i]);
    Transpose8x8(r, t);
    for (int32_t i = 0; i < 8; ++i) _mm256_storeu_ps(out + 12 * i, t[i]);
    // Rows 8..11: four floats per lane, lanes 0-3 in the low halves, 4-7 in the high ones.
    const __m256 a = _mm256_load_ps(table[8]), b = _mm256_load_ps(table[9]);
    const __m256 c = _mm256_load_ps(table[10]), d = _mm256_load_ps(table[11]);
    const __m256 ab_lo = _mm256_unpacklo_ps(a, b), ab_hi = _mm256_unpackhi_ps(a, b);
    const __m256 cd_lo = _mm256_unpacklo_ps(c, d), cd_hi = _mm256_unpackhi_ps(c, d);
    const __m256 lane[4] = {_mm256_shuffle_ps(ab_lo, cd_lo, 0x44), _mm256_shuffle_ps(ab_lo, cd_lo, 0xEE),
                            _mm256_shuffle_ps(ab_hi, cd_hi, 0x44), _mm256_shuffle_ps(ab_hi, cd_hi, 0xEE)};
    for (int32_t i = 0; i < 4; ++i) {
      _mm_storeu_ps(out + 12 * i + 8, _mm256_castps256_ps128(lane[i]));
      _mm_storeu_ps(out + 12 * (i + 4) + 8, _mm256_extractf128_ps(lane[i], 1));
    }
    return;
  }
#endif
#if defined(__SSE__)
  if constexpr (kW == 4) {
    for (int32_t block = 0; block < 3; ++block) {
      __m128 r0 = _mm_load_ps(table[4 * block]), r1 = _mm_load_ps(table[4 * block + 1]);
      __m128 r2 = _mm_load_ps(table[4 * block + 2]), r3 = _mm_load_ps(table[4 * block + 3]);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(out + 4 * block, r0);
      _mm_storeu_ps(out + 12 + 4 * block, r1);
      _mm_storeu_ps(out + 24 + 4 * block, r2);
      _mm_storeu_ps(out + 36 + 4 * block, r3);
    }
    return;
  }
#endif
  for (int32_t i = 0; i < kW; ++i) {
    for (int32_t r = 0; r < 12; ++r) out[12 * i + r] = table[r][i];
  }
}

// Node k's written world matrix (see WritebackLanes) into its WrittenWorldMatrix rows.
template <class V>
inline void StoreWorldMatrix(const ChainBlockView& b, float* scratch, float* world_rows, int32_t k, int32_t parent,
                             int32_t lane, const Q4<V>& world) {
  using O = Ops<V>;
  const V3<V> animated = LoadV3<V>(b, kBx, k, lane);
  V3<V> p = animated;
  if (parent >= 0) {
    const float* pm = WrittenWorldPosition(world_rows, parent) + lane;
    const V3<V> parent_p{O::Load(pm), O::Load(pm + kBlockLanes), O::Load(pm + 2 * kBlockLanes)};
    const Q4<V> swing = QMul(LoadRows<V>(WrittenWorldRotation(scratch, parent) + lane), QConj(LoadNodeQ<V>(b, kRx, parent, lane)));
    p = Add(parent_p, QRotate(swing, Sub(animated, LoadV3<V>(b, kBx, parent, lane))));
  }
  constexpr int32_t kW = O::kSize;
  const V3<V> s = LoadV3<V>(b, kSx, k, lane);
  // The rotation matrix of a unit quaternion (Shoemake 1985), columns scaled.
  const V one = O::Splat(1.0f), two = O::Splat(2.0f);
  const V xx = world.x * world.x, yy = world.y * world.y, zz = world.z * world.z;
  const V xy = world.x * world.y, xz = world.x * world.z, yz = world.y * world.z;
  const V wx = world.w * world.x, wy = world.w * world.y, wz = world.w * world.z;
  const V rows[kWorldMatrixFloats] = {
      (one - two * (yy + zz)) * s.x, two * (xy - wz) * s.y, two * (xz + wy) * s.z, p.x,
      two * (xy + wz) * s.x, (one - two * (xx + zz)) * s.y, two * (yz - wx) * s.z, p.y,
      two * (xz - wy) * s.x, two * (yz + wx) * s.y, (one - two * (xx + yy)) * s.z, p.z};
  float* position = WrittenWorldPosition(world_rows, k) + lane;
  O::Store(position, p.x);
  O::Store(position + kBlockLanes, p.y);
  O::Store(position + 2 * kBlockLanes, p.z);
  // Rows to lanes: each lane's 12 floats side by side.
  alignas(64) float table[kWorldMatrixFloats][kW];
  for (int32_t r = 0; r < kWorldMatrixFloats; ++r) O::Store(table[r], rows[r]);
  static_assert(kWorldMatrixFloats == 12, "RowsToLanes12");
  RowsToLanes12<kW>(table, WrittenWorldMatrix(world_rows, k, lane));
}

// Writeback, parents first: a node's written world rotation is its animated rotation
// swung by the shortest arc from the animated direction to its first child to the
// simulated one (a leaf keeps its parent's swing); its local rotation is the parent's
// written world rotation inverted, times its own. With alpha < 1 the simulated direction
// is the previous substep's (the verlet's other position slot), alpha of the way to the
// last substep's: the links' directions do not depend on where the root is, so the
// rendered chain hangs from this frame's animated root however fast it moves, with its
// shape one substep behind ("Fix your timestep!", Fiedler 2004: render interpolation).
//
// With kWorld, each node's written world matrix too: a root sits at its animated position
// (root parent * its local translation); a child at its written parent's position plus
// its animated offset from the parent turned by the parent's swing (written world
// rotation * animated world rotation^-1), which is the parent's written frame applied to
// the child's local translation (the animated offset is the animated parent's frame
// applied to it: Pose). Its scale is the animated world scale (the locals' scales are).
template <class V, bool kInterpolate, bool kWorld>
void WritebackLanes(const ChainBlockView& b, float* scratch, float* finite_probe, float alpha, float* world_rows) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  const V a = O::Splat(alpha);
  for (int32_t lane = 0; lane < kBlockLanes; lane += kW) {
    // x * 0 is 0 for finite x and NaN otherwise; the sum carries a NaN to the end.
    V probe = O::Splat(0.0f);
    for (int32_t k = 0; k < b.node_count; ++k) {
      const int32_t child = b.first_child[k];
      const int32_t parent = b.parent[k];
      if constexpr (!kWorld) {
        if (b.virtual_leaves && child < 0 && parent >= 0) {
          // A virtual tip: nothing reads its rotation; its position is still checked.
          const V3<V> p = LoadV3<V>(b, b.position, k, lane);
          probe = probe + (p.x + p.y + p.z) * O::Splat(0.0f);
          continue;
        }
      }
      const Q4<V> r = LoadNodeQ<V>(b, kRx, k, lane);
      Q4<V> world = r;
      if (b.vrm && child >= 0) {
        world = LoadVrmQ<V>(b, kVrmQx, k, lane);  // the solve's rotation (kVrm)
      } else if (child >= 0) {
        const V3<V> from = Sub(LoadV3<V>(b, kBx, child, lane), LoadV3<V>(b, kBx, k, lane));
        V3<V> to = Sub(LoadV3<V>(b, b.position, child, lane), LoadV3<V>(b, b.position, k, lane));
        if constexpr (kInterpolate) {
          const V3<V> was = Sub(LoadV3<V>(b, b.previous, child, lane), LoadV3<V>(b, b.previous, k, lane));
          to = Add(was, Scale(Sub(to, was), a));
        }
        world = QMul(ShortestArc(from, to), r);
      } else if (parent >= 0) {
        // Keep the animated local rotation under the written parent.
        const Q4<V> parent_written = LoadRows<V>(WrittenWorldRotation(scratch, parent) + lane);
        const Q4<V> parent_anim = LoadNodeQ<V>(b, kRx, parent, lane);
        world = QMul(parent_written, QMul(QConj(parent_anim), r));
      }
      StoreRows(WrittenWorldRotation(scratch, k) + lane, world);
      const Q4<V> parent_world =
          parent >= 0 ? LoadRows<V>(WrittenWorldRotation(scratch, parent) + lane)
                      : LoadQ4<V>(b.Lane(kRootParentRx) + lane, b.Lane(kRootParentRy) + lane,
                                  b.Lane(kRootParentRz) + lane, b.Lane(kRootParentRw) + lane);
      const Q4<V> local = QMul(QConj(parent_world), world);
      StoreRows(WrittenLocalRotation(scratch, k) + lane, local);
      if constexpr (kWorld) StoreWorldMatrix<V>(b, scratch, world_rows, k, parent, lane, world);
      const V3<V> p = LoadV3<V>(b, b.position, k, lane);
      const V sum = local.x + local.y + local.z + local.w + p.x + p.y + p.z;
      probe = probe + sum * O::Splat(0.0f);
    }
    O::Store(finite_probe + lane, probe);
  }
}

template <class V>
void Writeback(const ChainBlockView& b, float* scratch, float* finite_probe, float alpha, float* world_rows) {
  if (world_rows != nullptr) {
    if (alpha >= 1.0f) {
      WritebackLanes<V, false, true>(b, scratch, finite_probe, 1.0f, world_rows);
    } else {
      WritebackLanes<V, true, true>(b, scratch, finite_probe, alpha, world_rows);
    }
  } else if (alpha >= 1.0f) {
    WritebackLanes<V, false, false>(b, scratch, finite_probe, 1.0f, nullptr);
  } else {
    WritebackLanes<V, true, false>(b, scratch, finite_probe, alpha, nullptr);
  }
}

// Transform: translation 3, rotation 4, scale 3 floats, packed.
inline constexpr int32_t kTransformFloats = 10;
static_assert(sizeof(Transform) == kTransformFloats * sizeof(float), "Transform is ten packed floats");

// Copies the ten floats of each lane's host Transform into table[float][lane], the layout
// the pose is composed in. Exact, so every instruction set gets the same table.
#if defined(__AVX__)
// Where AVX is enabled (this file is compiled once per instruction set), the first eight
// floats of the eight lanes are one 8x8 transpose in registers (unpack, shuffle, then
// swap 128-bit halves): it took the scalar copy's 128 loads and stores per node down to
// 16, and the copy was 40% of the pose kernel.
inline void TransposeTransforms(const Transform* const* src, float (*table)[kBlockLanes]) {
  static_assert(kBlockLanes == 8, "one 8x8 transpose per node");
  __m256 r[8];
  for (int32_t l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(reinterpret_cast<const float*>(src[l]));
  __m256 t[8];
  Transpose8x8(r, t);
  for (int32_t i = 0; i < 8; ++i) _mm256_store_ps(table[i], t[i]);
  // Floats 8 and 9 (the scale's y and z): two lanes' pairs per register, then split (the
  // sixteen scalar moves were a tenth of a lone avatar's pose kernel).
  auto pair = [&](int32_t l) { return reinterpret_cast<const double*>(reinterpret_cast<const float*>(src[l]) + 8); };
  for (int32_t l = 0; l < 8; l += 4) {
    const __m128 a = _mm_castpd_ps(_mm_loadh_pd(_mm_load_sd(pair(l)), pair(l + 1)));
    const __m128 b = _mm_castpd_ps(_mm_loadh_pd(_mm_load_sd(pair(l + 2)), pair(l + 3)));
    _mm_store_ps(table[8] + l, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_store_ps(table[9] + l, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  }
}
#else
inline void TransposeTransforms(const Transform* const* src, float (*table)[kBlockLanes]) {
  for (int32_t l = 0; l < kBlockLanes; ++l) {
    const auto* f = reinterpret_cast<const float*>(src[l]);
    for (int32_t i = 0; i < kTransformFloats; ++i) table[i][l] = f[i];
  }
}
#endif

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

// True when every one of `count` floats is finite: x * 0 is 0 for finite x and NaN
// otherwise, and a NaN survives every sum. In lanes, a lane's 80 floats of host transforms
// take ten batch steps instead of twenty 4-wide integer tests (the pose phase of 1,000
// chains measured 3-5 us faster).
template <class V>
bool AllFiniteFloats(const float* values, int32_t count) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  V sum = O::Splat(0.0f);
  int32_t i = 0;
  for (; i + kW <= count; i += kW) sum = sum + O::LoadUnaligned(values + i) * O::Splat(0.0f);
  alignas(64) float lanes[kW];
  O::Store(lanes, sum);
  float total = 0.0f;
  for (int32_t l = 0; l < kW; ++l) total += lanes[l];
  for (; i < count; ++i) total += values[i] * 0.0f;
  return total == 0.0f;
}

// A chain's host locals through its bone map, copied and checked in one pass (see
// ChainKernels::gather_check), with AVX2: each transform is one 32-byte and one 8-byte
// copy; finiteness is the largest magnitude's bits seen in each float slot (a float is
// finite when its bits without the sign are below 0x7f800000), tested once at the end;
// the rotations are checked four at a time, transposed, with NearUnit's arithmetic in its
// order (this file is compiled without contraction), so each decision is NearUnit's. The
// scalar loop cost about 44 instructions a bone (callgrind, 100 Godettes). Other
// instruction sets take GatherTransformsBaseline (chain_block.h): finite.h's inline
// helpers compiled here, with this file's flags, could become the copy the linker keeps
// for the baseline callers (see the top of this file).
#if defined(__AVX2__)
inline GatherCheck GatherCheckTransforms(const Transform* src, const int32_t* from, Transform* dst, const int32_t* to,
                                         int32_t count) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  __m256i largest = _mm256_setzero_si256();
  __m128i largest_tail = _mm_setzero_si128();
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 tolerance = _mm_set1_ps(kUnitRotationTolerance);
  const __m128 no_sign = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  int unit = 0xF;
  // Copies transform j and returns its rotation (floats 3..6).
  auto copy = [&](int32_t j) {
    const float* s = reinterpret_cast<const float*>(src + from[j]);
    float* d = reinterpret_cast<float*>(dst + to[j]);
    const __m256 head = _mm256_loadu_ps(s);
    const __m128d tail = _mm_load_sd(reinterpret_cast<const double*>(s + 8));
    _mm256_storeu_ps(d, head);
    _mm_store_sd(reinterpret_cast<double*>(d + 8), tail);
    largest = _mm256_max_epu32(largest, _mm256_and_si256(_mm256_castps_si256(head), magnitude));
    largest_tail = _mm_max_epu32(largest_tail, _mm_and_si128(_mm_castpd_si128(tail), _mm256_castsi256_si128(magnitude)));
    return _mm_loadu_ps(s + 3);
  };
  auto check = [&](__m128 x, __m128 y, __m128 z, __m128 w) {
    _MM_TRANSPOSE4_PS(x, y, z, w);
    const __m128 n2 = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)), _mm_mul_ps(z, z)),
                                 _mm_mul_ps(w, w));
    unit &= _mm_movemask_ps(_mm_cmple_ps(_mm_and_ps(_mm_sub_ps(n2, one), no_sign), tolerance));
  };
  int32_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const __m128 a = copy(i), b = copy(i + 1), c = copy(i + 2), e = copy(i + 3);
    check(a, b, c, e);
  }
  if (i < count) {  // one to three left: the last one fills the check's empty slots
    __m128 r[4];
    for (int32_t k = 0; k < 4; ++k) r[k] = i + k < count ? copy(i + k) : r[k - 1];
    check(r[0], r[1], r[2], r[3]);
  }
  const __m256i finite_limit = _mm256_set1_epi32(0x7f7fffff);  // |bits| above it: Inf or NaN
  const int non_finite =
      _mm256_movemask_epi8(_mm256_cmpgt_epi32(largest, finite_limit)) |
      _mm_movemask_epi8(_mm_cmpgt_epi32(largest_tail, _mm256_castsi256_si128(finite_limit)));
  return {non_finite == 0, unit == 0xF};
}
#endif

// The writeback's flat scatter (see ChainKernels::scatter). With AVX2 each bone is one
// 32-byte load blended with its rotation, one 32-byte store and an 8-byte copy; the
// scalar loop cost about 35 instructions a bone (callgrind, 100 Godettes).
inline void ScatterLocals(const ChainScatterEntry* e, const ChainScatterEntry* end, const float* scratch) {
#if defined(__AVX2__)
  const __m256i into_rotation = _mm256_setr_epi32(0, 0, 0, 0, 1, 2, 3, 3);  // xyzw to floats 3..6
  for (; e < end; ++e) {
    const float* s = reinterpret_cast<const float*>(e->good->data() + e->node);
    float* d = reinterpret_cast<float*>(e->output);
    const float* r = scratch + e->rotation;
    __m128 q = _mm_load_ss(r);
    q = _mm_insert_ps(q, _mm_load_ss(r + kBlockLanes), 0x10);
    q = _mm_insert_ps(q, _mm_load_ss(r + 2 * kBlockLanes), 0x20);
    q = _mm_insert_ps(q, _mm_load_ss(r + 3 * kBlockLanes), 0x30);
    const __m256 rotation = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(q), into_rotation);
    _mm256_storeu_ps(d, _mm256_blend_ps(_mm256_loadu_ps(s), rotation, 0x78));
    _mm_store_sd(reinterpret_cast<double*>(d + 8), _mm_load_sd(reinterpret_cast<const double*>(s + 8)));
  }
#else
  for (; e < end; ++e) {
    Transform written = (*e->good)[e->node];
    const float* local = scratch + e->rotation;
    written.rotation = Quat{local[0], local[kBlockLanes], local[2 * kBlockLanes], local[3 * kBlockLanes]};
    *e->output = written;
  }
#endif
}

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

// This translation unit's kernel set for lane type V (its instruction set), built once.
template <class V>
const ChainKernels& KernelTable(const char* name) {
  static const ChainKernels kernels{&Solve<V>,          &Writeback<V>,          &Pose<V>, &AllFiniteFloats<V>,
#if defined(__AVX2__)
                                    &GatherCheckTransforms,
#else
                                    &GatherTransformsBaseline,
#endif
                                    &ScatterLocals, &ColliderWorlds<V>, name};
  return kernels;
}

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
