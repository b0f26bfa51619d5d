// kernel/chains/chain_solve.cpp: a frame's solve parameters and the solve phase.
//
// What it owns: BeginFrame (substeps, dt, gravity and wind for the kernels), the solve
// (per block: the SIMD kernel's substeps) and EndFrame (which position slab is current).
// What it does NOT do: choose the kernel (the World hands one over at creation).
// Threading: blocks over the host's task hooks. Memory: none.
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

void ChainSystem::BeginFrame(int32_t substeps, float dt, Vec3 wind, float frame_dt) {
  solve_params_ = {};
  solve_params_.substeps = substeps;
  solve_params_.dt = dt;
  solve_params_.gravity[0] = gravity_.x;
  solve_params_.gravity[1] = gravity_.y;
  solve_params_.gravity[2] = gravity_.z;
  solve_params_.wind[0] = wind.x;
  solve_params_.wind[1] = wind.y;
  solve_params_.wind[2] = wind.z;
  // kVrm topologies take one step of the frame's dt.
  vrm_params_ = solve_params_;
  vrm_params_.substeps = frame_dt > 0.0f ? 1 : 0;
  vrm_params_.dt = frame_dt;
  frame_open_ = true;
}

void ChainSystem::EndFrame() {
  for (Group& g : groups_) {
    if (Flipped(g)) g.positions_swapped = !g.positions_swapped;
  }
  frame_open_ = false;
}

void ChainSystem::Solve(const ChainPass& pass) {
  const detail::ChainKernels* k = kernels_;
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    // Runs of consecutive blocks of one topology go to the kernel together. The views are
    // constructed as they are filled (an array of them value-initialised all four: 44
    // instructions a call).
    union Views {
      ChainBlockView at[detail::kSolveInterleave];
      Views() {}
    } views;
    int32_t i = pass.first_work + begin;
    while (i < pass.first_work + end) {
      const int32_t group = work_[i].group;
      int32_t count = 0;
      while (i < pass.first_work + end && count < detail::kSolveInterleave && work_[i].group == group) {
        new (&views.at[count++]) ChainBlockView(groups_[group].View(work_[i].block));
        ++i;
      }
      k->solve(views.at, count, groups_[group].vrm ? vrm_params_ : solve_params_);
    }
  };
  ParallelFor(tasks_, pass.end_work - pass.first_work, detail::kSolveInterleave, task,
              {profiler_, "chains.solve/task", kChainColor});
}

}  // namespace tendon::detail
