// tendon/tbb_task_system.h: TaskHooks on oneTBB (library tendon_tbb).
//
// What it does: owns a tbb::task_arena of `worker_count` threads (the caller's thread
// counts as one) and hands out TaskHooks. enqueue from the caller's thread starts the
// World's items as a task group in the arena (a tbb::parallel_for) and returns; finish
// joins the arena and helps until they are done. So World::Step's phases keep the caller
// busy as before, and World::BeginStep's frame runs on the arena's other threads while the
// caller does other work. enqueue from inside one of its own tasks (the phases nested in
// BeginStep's lanes) runs its parallel_for in place before returning.
// What it does NOT do: expose TBB. This header includes no TBB header, so hosts with
// their own job system never see it; tendon_tbb is the only target that links TBB.
// Threading: one World frame at a time per TbbTaskSystem (Step, or BeginStep .. FinishStep).
// Memory: the arena and 8 job slots, at construction; oneTBB's own task pool after that.
#pragma once

#include <cstdint>
#include <memory>

#include "tendon/export.h"
#include "tendon/task_hooks.h"

namespace tendon {

class TENDON_TBB_API TbbTaskSystem {
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
