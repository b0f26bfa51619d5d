// kernel/core/parallel.h: the one parallel-for every system splits its work with.
//
// What it does: hands [0, count) to the host's TaskHooks as one job (enqueue, then finish)
// and runs `f(begin, end, worker)` over the ranges the host gives out, with denormals
// flushed to zero in every task (MXCSR is per thread), each range a zone in the host's
// profiler when the World has one (profile.h). With no task hooks it runs f(0,
// count, 0) on the calling thread.
// What it does NOT do: split work itself, or choose grains (the caller's min_range does),
// or order anything: a caller whose result must not depend on the worker count writes
// each item's output to its own place and sums across items serially afterwards.
// Threading: f runs on the host's workers; ParallelFor returns when every range has run.
// Memory: none (f lives on the caller's stack; the host's enqueue must not allocate per
// call for Step to stay allocation-free, which TbbTaskSystem honours).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "kernel/core/fpu.h"
#include "kernel/core/profile.h"
#include "tendon/task_hooks.h"

namespace tendon::detail {

template <class F>
struct TaskCall {
  F* f;
  TaskProfile profile;
};

template <class F>
void TaskTrampoline(int32_t begin, int32_t end, uint32_t worker, void* context) {
  DenormalGuard guard;
  auto* call = static_cast<TaskCall<F>*>(context);
  ProfileZone zone(call->profile.hooks, call->profile.name, call->profile.color, worker);
  (*call->f)(begin, end, worker);
}

// `profile` names the tasks in the host's profiler: one zone per range a worker runs
// (none when the phase runs on the calling thread without task hooks: its phase zone
// covers it).
template <class F>
void ParallelFor(const TaskHooks& hooks, int32_t count, int32_t min_range, F& f, TaskProfile profile = {}) {
  if (count <= 0) return;
  if (hooks.enqueue == nullptr) {
    f(0, count, 0u);
    return;
  }
  TaskCall<F> call{&f, profile.name != nullptr ? profile : TaskProfile{}};
  void* handle = hooks.enqueue(&TaskTrampoline<F>, count, min_range, &call, hooks.user_context);
  hooks.finish(handle, hooks.user_context);
}

// How many distinct worker indices f may see: per-worker scratch is sized by this.
inline int32_t WorkerSlots(const TaskHooks& hooks) {
  return std::max(1, hooks.enqueue != nullptr ? hooks.worker_count : 1);
}

// `f(item, worker)` for every item of [0, count), dealt one at a time in item order to
// whichever worker is free (a shared counter, not ranges fixed in advance): for a few
// items of unequal size, put the largest first. Which worker runs an item must not change
// its result.
template <class F>
void ParallelForDealt(const TaskHooks& hooks, int32_t count, const F& f, TaskProfile profile = {}) {
  std::atomic<int32_t> next{0};
  auto take = [&](int32_t begin, int32_t end, uint32_t worker) {
    for (int32_t task = begin; task < end; ++task) {
      for (int32_t item = next.fetch_add(1, std::memory_order_relaxed); item < count;
           item = next.fetch_add(1, std::memory_order_relaxed)) {
        f(item, worker);
      }
    }
  };
  ParallelFor(hooks, std::min(WorkerSlots(hooks), count), 1, take, profile);
}

}  // namespace tendon::detail
