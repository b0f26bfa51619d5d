// tendon/task_hooks.h: the host's job system, as two callbacks (after Box2D v3's b2WorldDef).
//
// What it does: the World splits a phase into `item_count` items (blocks of lanes,
// groups of instances) and calls `enqueue` once per phase. The host runs
// `task(begin, end, worker_index, task_context)` over disjoint ranges covering
// [0, item_count), on any threads, in any order, then the World calls `finish` with the
// value `enqueue` returned and expects every range to have run when it returns.
// `enqueue` may also run everything before returning (and return nullptr).
// Items never write each other's memory, so results do not depend on the split.
// What it does NOT do: create threads. With `enqueue == nullptr` the World runs every
// phase on the calling thread. tendon_tbb (tendon/tbb_task_system.h) implements it.
// Threading: `enqueue` and `finish` are called from the thread that called World::Step, in
// pairs, one phase at a time. Under World::BeginStep they are also called from inside a
// task (the frame is one job of two lanes, and each lane's phases are jobs of their own):
// a job system used with BeginStep must allow that nesting (a worker waiting in `finish`
// should run other work meanwhile, or nested jobs may deadlock). tendon::TbbTaskSystem
// does. `worker_index` must be < worker_count and unique among the tasks running at one
// time. Memory: Tendon allocates nothing for tasks.
#pragma once

// C and C++: tendon/tendon_c.h includes this header from C11.
#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef void TendonTaskFn(int32_t begin, int32_t end, uint32_t worker_index, void* task_context);

typedef struct TendonTaskHooks {
  // Runs task over [0, item_count) in ranges of at least min_range items (except the last).
  void* (*enqueue)(TendonTaskFn* task, int32_t item_count, int32_t min_range, void* task_context,
                   void* user_context);
  // Waits for the work `enqueue` returned; called even when enqueue returned nullptr.
  void (*finish)(void* user_task, void* user_context);
  void* user_context;
  // Upper bound on worker_index + 1, within [1, 1024]. 1 when enqueue is null.
  int32_t worker_count;
} TendonTaskHooks;

#ifdef __cplusplus
}
namespace tendon {
using TaskHooks = TendonTaskHooks;
using TaskFn = TendonTaskFn;
}  // namespace tendon
#endif
