// tendon/tbb_task_system.h: TaskHooks on oneTBB (library tendon_tbb).
//
// What it does: owns a tbb::task_arena of `worker_count` threads (the caller's thread
// counts as one) and hands out TaskHooks whose enqueue runs the World's items with
// tbb::parallel_for inside that arena, before returning; finish has nothing left to wait for.
// What it does NOT do: expose TBB. This header includes no TBB header, so hosts with
// their own job system never see it; tendon_tbb is the only target that links TBB.
// Threading: one World::Step at a time per TbbTaskSystem. Memory: the arena, at construction.
#pragma once

#include <cstdint>
#include <memory>

#include "tendon/task_hooks.h"

namespace tendon {

class TbbTaskSystem {
 public:
  // worker_count >= 1; 0 means "as many as the hardware has".
  explicit TbbTaskSystem(int32_t worker_count = 0);
  ~TbbTaskSystem();
  TbbTaskSystem(const TbbTaskSystem&) = delete;
  TbbTaskSystem& operator=(const TbbTaskSystem&) = delete;

  // Valid while this object lives; put it in WorldSettings::tasks.
  TaskHooks hooks();
  int32_t worker_count() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tendon
