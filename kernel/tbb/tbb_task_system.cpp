// kernel/tbb/tbb_task_system.cpp: the only file in Tendon that includes oneTBB.
//
// A call from outside the arena (World::Step's phases, World::BeginStep's frame) starts
// its items as a task_group inside the arena and returns; finish joins the arena and
// helps until they are done, so a Step's phase keeps the caller's thread busy as before,
// and a BeginStep's frame runs on the arena's threads while the caller does other work.
// A call from inside one of its own tasks (the phases nested in BeginStep's lanes) runs a
// parallel_for there and then, before returning. The worker index is the thread's slot in
// the arena, always < worker_count.
#include "tendon/tbb_task_system.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

namespace tendon {

namespace {

// Jobs in flight at once from outside the arena: a World's frame, or one phase at a time.
constexpr std::size_t kJobSlots = 8;

struct Job {
  tbb::task_group group;
  std::atomic<bool> busy{false};
  TaskFn* task = nullptr;
  void* task_context = nullptr;
  int32_t item_count = 0;
  int32_t grain = 1;
};

}  // namespace

struct TbbTaskSystem::Impl {
  explicit Impl(int32_t workers) : worker_count(workers), arena(workers) {}
  int32_t worker_count;
  tbb::task_arena arena;
  std::array<Job, kJobSlots> jobs;
};

namespace {

// The system whose task this thread is running (nested calls run in place).
thread_local const TbbTaskSystem::Impl* t_inside = nullptr;

void RunItems(TbbTaskSystem::Impl* impl, TaskFn* task, int32_t item_count, int32_t grain, void* task_context) {
  tbb::parallel_for(tbb::blocked_range<int32_t>(0, item_count, static_cast<std::size_t>(grain)),
                    [&](const tbb::blocked_range<int32_t>& r) {
                      const TbbTaskSystem::Impl* outer = t_inside;
                      t_inside = impl;
                      const int index = tbb::this_task_arena::current_thread_index();
                      task(r.begin(), r.end(), static_cast<uint32_t>(index < 0 ? 0 : index), task_context);
                      t_inside = outer;
                    });
}

void* Enqueue(TaskFn* task, int32_t item_count, int32_t min_range, void* task_context, void* user_context) {
  auto* impl = static_cast<TbbTaskSystem::Impl*>(user_context);
  const int32_t grain = std::max(min_range, 1);
  if (t_inside == impl) {  // nested in one of our tasks: already in the arena, on its own slot
    if (item_count <= grain) {
      const int index = tbb::this_task_arena::current_thread_index();
      task(0, item_count, static_cast<uint32_t>(index < 0 ? 0 : index), task_context);
    } else {
      RunItems(impl, task, item_count, grain, task_context);
    }
    return nullptr;
  }
  // From outside (the caller's thread, which is outside the arena and so never shares a
  // slot with the arena's threads while they run this system's tasks).
  if (impl->worker_count == 1 || item_count <= grain) {
    task(0, item_count, 0u, task_context);
    return nullptr;
  }
  for (Job& job : impl->jobs) {
    bool expected = false;
    if (!job.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) continue;
    job.task = task;
    job.task_context = task_context;
    job.item_count = item_count;
    job.grain = grain;
    Job* j = &job;
    impl->arena.execute([&] { j->group.run([impl, j] { RunItems(impl, j->task, j->item_count, j->grain, j->task_context); }); });
    return j;
  }
  // Every slot busy (more worlds stepping at once than slots): run it here and now.
  impl->arena.execute([&] { RunItems(impl, task, item_count, grain, task_context); });
  return nullptr;
}

void Finish(void* user_task, void* user_context) {
  if (user_task == nullptr) return;
  auto* impl = static_cast<TbbTaskSystem::Impl*>(user_context);
  auto* job = static_cast<Job*>(user_task);
  impl->arena.execute([&] { job->group.wait(); });
  job->busy.store(false, std::memory_order_release);
}

}  // namespace

TbbTaskSystem::TbbTaskSystem(int32_t worker_count) {
  if (worker_count <= 0) worker_count = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  impl_ = std::make_unique<Impl>(worker_count);
}
TbbTaskSystem::~TbbTaskSystem() = default;

TaskHooks TbbTaskSystem::hooks() { return TaskHooks{&Enqueue, &Finish, impl_.get(), impl_->worker_count}; }
int32_t TbbTaskSystem::worker_count() const { return impl_->worker_count; }

}  // namespace tendon
