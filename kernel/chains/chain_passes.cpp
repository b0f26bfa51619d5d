// kernel/chains/chain_passes.cpp: which chains wait for the ragdolls.
//
// What it owns: MarkDependents (a chain whose host buffers a ragdoll or character also
// reads or writes depends on the ragdoll phase) and PartitionPasses (such chains, every
// block with one of their lanes, and every chain with a lane in such a block run in the
// second pass, after the ragdolls; the rest in the first, beside them).
// What it does NOT do: run the passes (the World schedules them).
// Threading: the World's thread. Memory: none (scratch sized at bind).
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

void ChainSystem::PartitionPasses() {
  // Which selected chains and blocks wait for the ragdoll phase: a chain that depends on
  // it, every block with one of its lanes, every chain with a lane in such a block, and so
  // on until nothing changes (a chain's read must come before the pose of each of its
  // blocks, and a block is posed in one pass). Without dependent chains, all in pass 0.
  int32_t independent = selected_count_;
  int32_t independent_work = work_count_;
  if (any_dependent_) {
    for (int32_t i = 0; i < selected_count_; ++i) {
      Slot& c = chains_[candidates_[i].second];
      c.late = c.depends_on_bodies;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int32_t i = 0; i < work_count_; ++i) {
        const Group& g = groups_[work_[i].group];
        const int32_t* owners = g.lane_owner.data() + work_[i].block * kBlockLanes;
        bool late = false;
        for (int32_t l = 0; l < kBlockLanes && !late; ++l) late = owners[l] >= 0 && chains_[owners[l]].late;
        work_late_[i] = late ? 1 : 0;
        for (int32_t l = 0; late && l < kBlockLanes; ++l) {
          if (owners[l] >= 0 && !chains_[owners[l]].late) {
            chains_[owners[l]].late = true;
            changed = true;
          }
        }
      }
    }
    // Selected chains: pass 0 first (an unstable partition: each chain's read touches only
    // its own slot and lanes, so their order is moot).
    const auto first_late =
        std::partition(candidates_.begin(), candidates_.begin() + selected_count_,
                       [&](const std::pair<float, int32_t>& c) { return !chains_[c.second].late; });
    independent = static_cast<int32_t>(first_late - candidates_.begin());
    // Blocks: each part keeps its order (runs of a topology stay runs, which the solve
    // interleaves).
    int32_t n = 0;
    for (int32_t i = 0; i < work_count_; ++i) {
      if (work_late_[i] == 0) work_partitioned_[n++] = work_[i];
    }
    independent_work = n;
    for (int32_t i = 0; i < work_count_; ++i) {
      if (work_late_[i] != 0) work_partitioned_[n++] = work_[i];
    }
    std::copy(work_partitioned_.begin(), work_partitioned_.begin() + work_count_, work_.begin());
  }
  const int32_t chunks_a = (independent + kReadChunk - 1) / kReadChunk;
  passes_[0] = {0, independent, 0, independent_work, 0};
  passes_[1] = {independent, selected_count_, independent_work, work_count_, chunks_a};
  read_chunk_count_ = chunks_a + (selected_count_ - independent + kReadChunk - 1) / kReadChunk;
}

void ChainSystem::MarkDependents(bool (*overlaps)(const void* data, std::size_t bytes, const void* context),
                                 const void* context) {
  any_dependent_ = false;
  for (int32_t index : live_chains_) {
    Slot& c = chains_[index];
    int32_t span = c.bone_count;
    for (int32_t k : c.bone_map) span = std::max(span, k + 1);
    const std::size_t bytes = static_cast<std::size_t>(span) * sizeof(Transform);
    bool depends = overlaps(c.root_parent_world, sizeof(Transform), context) || overlaps(c.animated, bytes, context) ||
                   overlaps(c.output, bytes, context) ||
                   overlaps(c.collider_frames, static_cast<std::size_t>(c.collider_frame_count) * sizeof(Transform), context);
    for (const detail::BoundPoseStream& stream : c.streams) {
      depends = depends || overlaps(stream.base, stream.extent, context) ||
                (stream.model_world != nullptr && overlaps(stream.model_world, sizeof(Transform), context));
    }
    c.depends_on_bodies = depends;
    any_dependent_ = any_dependent_ || depends;
  }
}

}  // namespace tendon::detail
