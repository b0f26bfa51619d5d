// kernel/chains/chain_kernel_writeback.h: the chain writeback (chain_kernel_impl.h): written
// world and local rotations, world matrices, and the scatter of the locals to the host.
//
// Owns: WritebackLanes and Writeback: a node's written world rotation is its animated one
// swung by the shortest arc from the animated direction to its first child to the
// simulated one (or the VRM rule's rotation), its local rotation the written parent's
// inverse times it; with alpha < 1, the simulated direction interpolated from the previous
// substep's ("Fix your timestep!", Fiedler 2004: render interpolation). StoreWorldMatrix:
// the written world matrix, the rotation matrix of a unit quaternion (Shoemake 1985) with
// its columns scaled. WorldFrames: output_world's frames, Compose's bits in lanes.
// ScatterLocals: the written locals into the host's transforms.
// Does not: solve (chain_kernel_verlet.h, chain_kernel_vrm.h) or compose the animated pose
// it starts from (chain_kernel_pose.h).
//
// Compiled once per instruction set: chain_kernel_impl.h includes it inside every
// chain_kernel_<isa>.cpp, under that file's flags and TENDON_CHAIN_KERNEL_NS. So it must
// never use the default xsimd::batch<float>, whose architecture is whatever the including
// file's flags make it (two translation units would define one symbol two ways, and the
// linker keeps either): the lane type is the template parameter V (float, FusedFloat or an
// explicit-arch xsimd batch), and what is not a template is written for the flags at hand.
// Memory: none of its own (a matrix table on the stack); it writes the caller's scratch,
// world rows and host transforms.
#pragma once

#include "kernel/chains/chain_kernel_fields.h"
#include "kernel/chains/chain_kernel_arcs.h"
#include "kernel/chains/chain_kernel_transposes.h"

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace tendon::detail::TENDON_CHAIN_KERNEL_NS {

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

// output_world in lanes (ChainKernels::world_frames): each node's written world frame is
// its parent's (the lane's root parent for a root) composed with its written local: the
// host's animated local with the writeback's local rotation in place of its own. The
// arithmetic is tendon::Compose's in its order, unfused (QRotate and QMul are math.h's
// Rotate and operator*), so each lane's bits are the scalar Compose's on every instruction
// set. The probe is the ten floats' sum, left to right, times 0: the scalar test the
// emission made per bone. The scalar emission it replaces composed 184 instructions a bone
// (callgrind, a lone many-strand head, 43% of its Step).
template <class V>
void WorldFrames(const ChainBlockView& b, const ChainPoseInput& in, const float* scratch, float* frames) {
  using O = Ops<V>;
  constexpr int32_t kW = O::kSize;
  static_assert(kWorldFrameFields == kTransformFloats, "a world frame row per Transform float");
  alignas(64) float root[kTransformFloats][kBlockLanes];
  alignas(64) float local[kTransformFloats][kBlockLanes];
  TransposeTransforms(in.root_parent, root);
  const V zero = O::Splat(0.0f);
  for (int32_t k = 0; k < b.node_count; ++k) {
    const int32_t parent = b.parent[k];
    // The writeback wrote no local rotation for a virtual tip (and nothing reads its frame).
    if (b.virtual_leaves && b.first_child[k] < 0 && parent >= 0) continue;
    const Transform* node_locals[kBlockLanes];
    for (int32_t l = 0; l < kBlockLanes; ++l) node_locals[l] = in.locals[l] + k;
    TransposeTransforms(node_locals, local);
    float* const out = WrittenWorldFrame(frames, k);
    const float* const up = parent >= 0 ? WrittenWorldFrame(frames, parent) : nullptr;
    const float* const local_rotation = WrittenLocalRotation(scratch, k);
    for (int32_t lane = 0; lane < kBlockLanes; lane += kW) {
      V f[kTransformFloats];  // the parent's frame
      for (int32_t i = 0; i < kTransformFloats; ++i) {
        f[i] = up != nullptr ? O::Load(up + i * kBlockLanes + lane) : O::Load(root[i] + lane);
      }
      const V3<V> pt{f[0], f[1], f[2]}, ps{f[7], f[8], f[9]};
      const Q4<V> pr{f[3], f[4], f[5], f[6]};
      const V3<V> lt{O::Load(local[0] + lane), O::Load(local[1] + lane), O::Load(local[2] + lane)};
      const V3<V> ls{O::Load(local[7] + lane), O::Load(local[8] + lane), O::Load(local[9] + lane)};
      const Q4<V> lr = LoadRows<V>(local_rotation + lane);
      const V3<V> t = Add(pt, QRotate(pr, V3<V>{ps.x * lt.x, ps.y * lt.y, ps.z * lt.z}));
      const Q4<V> r = QMul(pr, lr);
      const V3<V> s{ps.x * ls.x, ps.y * ls.y, ps.z * ls.z};
      const V w[kTransformFloats] = {t.x, t.y, t.z, r.x, r.y, r.z, r.w, s.x, s.y, s.z};
      // The rows, then each lane's twelve floats side by side (the ten, the probe, one
      // unused) for the host copy.
      alignas(64) float table[kWorldFrameLaneFloats][kW];
      V sum = w[0];
      for (int32_t i = 0; i < kTransformFloats; ++i) {
        O::Store(out + i * kBlockLanes + lane, w[i]);
        O::Store(table[i], w[i]);
        if (i > 0) sum = sum + w[i];
      }
      O::Store(table[kTransformFloats], sum * zero);
      O::Store(table[kTransformFloats + 1], zero);
      static_assert(kWorldFrameLaneFloats == 12, "RowsToLanes12");
      RowsToLanes12<kW>(table, WrittenWorldFrameOfLane(frames, k, lane));
    }
  }
}

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

}  // namespace tendon::detail::TENDON_CHAIN_KERNEL_NS
