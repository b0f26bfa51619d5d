// kernel/tbb/tbb_task_system.cpp: the only file in Tendon that includes oneTBB.
//
// enqueue runs the whole range synchronously inside the arena (parallel_for with a grain
// of min_range), which the TaskHooks contract allows; the worker index is the thread's
// slot in the arena, always < worker_count.
#include "tendon/tbb_task_system.h"

#include <algorithm>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace tendon {

struct TbbTaskSystem::Impl {
  explicit Impl(int32_t workers) : worker_count(workers), arena(workers) {}
  int32_t worker_count;
  tbb::task_arena arena;
};

namespace {

void* Enqueue(TaskFn* task, int32_t item_count, int32_t min_range, void* task_context, void* user_context) {
  auto* impl = static_cast<TbbTaskSystem::Impl*>(user_context);
  const int32_t grain = std::max(min_range, 1);
  if (impl->worker_count == 1 || item_count <= grain) {
    task(0, item_count, 0u, task_context);
    return nullptr;
  }
  impl->arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<int32_t>(0, item_count, static_cast<std::size_t>(grain)),
                      [&](const tbb::blocked_range<int32_t>& r) {
                        const int index = tbb::this_task_arena::current_thread_index();
                        task(r.begin(), r.end(), static_cast<uint32_t>(index < 0 ? 0 : index), task_context);
                      });
  });
  return nullptr;
}

void Finish(void*, void*) {}

}  // namespace

TbbTaskSystem::TbbTaskSystem(int32_t worker_count) {
  if (worker_count <= 0) worker_count = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  impl_ = std::make_unique<Impl>(worker_count);
}

TbbTaskSystem::~TbbTaskSystem() = default;

TaskHooks TbbTaskSystem::hooks() { return TaskHooks{&Enqueue, &Finish, impl_.get(), impl_->worker_count}; }

int32_t TbbTaskSystem::worker_count() const { return impl_->worker_count; }

}  // namespace tendon
