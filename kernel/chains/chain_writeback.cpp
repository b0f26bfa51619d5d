// kernel/chains/chain_writeback.cpp: the writeback phase: lanes to the host's bones.
//
// What it owns: per block, local rotations from the lanes scattered into each chain's
// host buffer (through the flat list of the block's host bones), render interpolation,
// the finite test that resets a lane gone non-finite (ResetLane: back to its animated
// pose, counted), and each lane's pose streams.
// What it does NOT do: read host input (the pose phase did).
// Threading: blocks over the host's task hooks; each writes only its own chains' buffers.
// Memory: none (per-worker scratch sized at bind).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "kernel/chains/chain_kernels.h"
#include "kernel/chains/chain_storage.h"
#include "kernel/chains/chain_system.h"
#include "kernel/core/finite.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/parallel.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

void ChainSystem::ResetLane(const ChainBlockView& v, int32_t l, Slot& slot, int32_t strand) {
  const int32_t base = strand * v.node_count;
  if (v.vrm) {
    // The pose kernel may have composed only the roots (ChainArchetype::vrm_roots_pose):
    // the lane's animated frames again, from its last good input.
    // Parents first, each node's frame into its lane's kB, kR and kS rows.
    auto frame_of = [&](int32_t k) {
      return Transform{{v.Node(detail::kBx, k)[l], v.Node(detail::kBy, k)[l], v.Node(detail::kBz, k)[l]},
                       {v.Node(detail::kRx, k)[l], v.Node(detail::kRy, k)[l], v.Node(detail::kRz, k)[l],
                        v.Node(detail::kRw, k)[l]},
                       {v.Node(detail::kSx, k)[l], v.Node(detail::kSy, k)[l], v.Node(detail::kSz, k)[l]}};
    };
    for (int32_t k = 0; k < v.node_count; ++k) {
      const int32_t p = v.parent[k];
      const Transform w = Compose(p < 0 ? slot.RootParent(strand) : frame_of(p), slot.last_good[base + k]);
      const float fields[] = {w.translation.x, w.translation.y, w.translation.z, w.rotation.x, w.rotation.y,
                              w.rotation.z,    w.rotation.w,    w.scale.x,       w.scale.y,    w.scale.z};
      const int32_t rows[] = {detail::kBx, detail::kBy, detail::kBz, detail::kRx, detail::kRy,
                              detail::kRz, detail::kRw, detail::kSx, detail::kSy, detail::kSz};
      for (int32_t f = 0; f < 10; ++f) v.Node(rows[f], k)[l] = fields[f];
    }
  }
  for (int32_t k = 0; k < v.node_count; ++k) {
    for (int32_t axis = 0; axis < 3; ++axis) {
      const float b = v.Node(detail::kBx + axis, k)[l];
      v.Node(detail::kAx + axis, k)[l] = b;
      v.Node(detail::kPos0x + axis, k)[l] = b;
      v.Node(detail::kPos1x + axis, k)[l] = b;
    }
  }
  for (int32_t k = base; k < base + v.node_count; ++k) {
    if (!slot.Virtual(k)) slot.Output(k) = slot.last_good[k];
  }
  if (!slot.streams.empty()) {
    EmitStreams(slot, archetypes_[slot.archetype].archetype, base, base + v.node_count, slot.last_good.data(),
                slot.RootParent(strand));
  }
}

void ChainSystem::Writeback(const ChainPass& pass, float alpha) {
  const detail::ChainKernels* k = kernels_;
  auto task = [&](int32_t begin, int32_t end, uint32_t worker) {
    float* scratch = writeback_scratch_[worker].data();
    for (int32_t i = pass.first_work + begin; i < pass.first_work + end; ++i) {
      Group& g = groups_[work_[i].group];
      ChainBlockView v = g.View(work_[i].block, Flipped(g));  // after this frame's solve
      v.virtual_leaves = g.vrm && g.full_pose_chains == 0;
      const int32_t first_lane = work_[i].block * kBlockLanes;
      // World matrices only for a block where some lane's chain has pose streams.
      float* world_rows = nullptr;
      if (g.matrix_stream_chains > 0) {
        for (int32_t l = 0; l < kBlockLanes && world_rows == nullptr; ++l) {
          const int32_t owner = g.lane_owner[first_lane + l];
          if (owner >= 0 && chains_[owner].matrix_streams) world_rows = world_matrix_scratch_[worker].data();
        }
      }
      alignas(64) float finite_probe[kBlockLanes];
      k->writeback(v, scratch, finite_probe, g.vrm ? 1.0f : alpha, world_rows);  // kVrm: no render interpolation
      // Each lane's probe is +-0 or NaN, so their sum is +-0 exactly when every lane is
      // finite (8 adds and one test, where 8 tests cost 37 instructions).
      float probe_sum = 0.0f;
      for (int32_t l = 0; l < kBlockLanes; ++l) probe_sum += finite_probe[l];
      const bool all_finite = probe_sum == 0.0f;
      const int32_t block = work_[i].block;
      if (all_finite) {
        // The common block, every lane finite: its host bones in one flat loop, then the
        // pose streams of the lanes that have them.
        k->scatter(g.scatter.data() + g.scatter_begin[block], g.scatter.data() + g.scatter_begin[block + 1], scratch);
        if (g.scatter_by_lane[block] == 0) continue;
      }
      const int32_t* const owners = g.lane_owner.data() + first_lane;
      const int32_t* const strands = g.lane_strand.data() + first_lane;
      Slot* const chains = chains_.data();
      // output_world's frames in lanes, for a block where some lane's chain has it (the
      // same root parents and locals the pose phase composed from).
      float* world_frames = nullptr;
      for (int32_t l = 0; g.world_frame_chains > 0 && l < kBlockLanes && world_frames == nullptr; ++l) {
        if (owners[l] >= 0 && chains[owners[l]].world_frame_stream) {
          world_frames = world_frame_scratch_[worker].data();
          detail::ChainPoseInput input;
          g.FillPoseInput(first_lane, &input);
          k->world_frames(v, input, scratch, world_frames);
        }
      }
      for (int32_t l = 0; l < kBlockLanes; ++l) {
        const int32_t owner = owners[l];
        if (owner < 0) continue;
        Slot& slot = chains[owner];
        const int32_t strand = strands[l];
        const int32_t base = strand * v.node_count;
        if (all_finite) {
          if (!slot.streams.empty()) EmitLaneStreams(slot, strand, base, world_rows, world_frames, l);
          continue;
        }
        if (!(finite_probe[l] == 0.0f)) {
          ResetLane(v, l, slot, strand);
          ++work_counters_[i].reset;
          continue;
        }
        // The slot's arrays in locals: a store to a host Transform may alias them as far as
        // the compiler knows, and it re-read them per bone (callgrind: the scatter went from
        // 38.5 to 37.8 M instructions over 404 Steps of 100 Godettes).
        const Transform* const good = slot.last_good.data();
        const int32_t* const real_node = slot.real_node.data();
        const int32_t* const real_host = slot.real_host.data();
        Transform* const output = slot.output;
        const int32_t real_end = slot.strand_real_begin[strand + 1];
        for (int32_t r = slot.strand_real_begin[strand]; r < real_end; ++r) {
          const int32_t node = real_node[r];
          const float* local = detail::WrittenLocalRotation(scratch, node - base) + l;
          Transform written = good[node];
          written.rotation = Quat{local[0], local[kBlockLanes], local[2 * kBlockLanes], local[3 * kBlockLanes]};
          output[real_host[r]] = written;
        }
        if (!slot.streams.empty()) EmitLaneStreams(slot, strand, base, world_rows, world_frames, l);
      }
    }
  };
  ParallelFor(tasks_, pass.end_work - pass.first_work, 1, task, {profiler_, "chains.writeback/task", kChainColor});
}

void ChainSystem::EmitLaneStreams(const Slot& slot, int32_t strand, int32_t base, const float* world_rows,
                                  const float* world_frames, int32_t l) {
  for (const detail::BoundPoseStream& stream : slot.streams) {
    if (stream.world_frames) {
      // output_world: the strand's world frames, composed in lanes from the locals just
      // written (ChainKernels::world_frames, Compose's bits); here only the copy of each
      // bone with a host element whose frame is finite (its probe is +-0). The buffer is
      // the host's Transform array itself.
      const int32_t* const element = stream.element.data();
      Transform* const out = reinterpret_cast<Transform*>(stream.base);
      for (int32_t r = slot.strand_real_begin[strand]; r < slot.strand_real_begin[strand + 1]; ++r) {
        const int32_t node = slot.real_node[r];
        const int32_t e = element[node];
        const float* const f = detail::WrittenWorldFrameOfLane(world_frames, node - base, l);
        if (e < 0 || !(f[detail::kWorldFrameFields] == 0.0f)) continue;
        std::memcpy(static_cast<void*>(&out[e]), f, sizeof(Transform));
      }
      continue;
    }
    for (int32_t r = slot.strand_real_begin[strand]; r < slot.strand_real_begin[strand + 1]; ++r) {
      const int32_t node = slot.real_node[r];
      if (stream.layout == PoseLayout::kLocalTrs) {
        detail::EmitLocal(stream, node, slot.output[slot.real_host[r]]);
        continue;
      }
      detail::EmitWorld(stream, node, detail::WrittenWorldMatrix(const_cast<float*>(world_rows), node - base, l));
    }
  }
}

}  // namespace tendon::detail
