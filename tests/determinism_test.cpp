// Results are bit-identical for any number of workers: the state hash of a busy scene is
// the same, frame after frame, with no task system and with oneTBB at 1, 2 and 8 workers.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "tendon/tbb_task_system.h"
#include "determinism_scenes.h"

#if defined(__SANITIZE_THREAD__)
#define TENDON_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TENDON_TSAN 1
#endif
#endif

namespace tendon::test {
namespace {

// A host job system made of std::thread, mutex and atomics only, so that ThreadSanitizer
// (which cannot see inside an uninstrumented libtbb) checks Tendon's own task code.
class ThreadPoolHooks {
 public:
  explicit ThreadPoolHooks(int workers) : workers_(workers) {
    for (int i = 1; i < workers; ++i) threads_.emplace_back([this, i] { Loop(static_cast<uint32_t>(i)); });
  }
  ~ThreadPoolHooks() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  TaskHooks hooks() { return TaskHooks{&Enqueue, &Finish, this, workers_}; }

 private:
  static void* Enqueue(TaskFn* task, int32_t count, int32_t min_range, void* ctx, void* user) {
    auto* self = static_cast<ThreadPoolHooks*>(user);
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->task_ = task;
      self->ctx_ = ctx;
      self->count_ = count;
      self->grain_ = min_range < 1 ? 1 : min_range;
      self->next_.store(0);
      self->busy_ = self->workers_ - 1;
      ++self->generation_;
    }
    self->wake_.notify_all();
    self->Work(0);
    return self;
  }
  static void Finish(void* job, void*) {
    auto* self = static_cast<ThreadPoolHooks*>(job);
    std::unique_lock<std::mutex> lock(self->mutex_);
    self->done_.wait(lock, [self] { return self->busy_ == 0; });
  }
  void Work(uint32_t worker) {
    for (;;) {
      const int32_t begin = next_.fetch_add(grain_);
      if (begin >= count_) return;
      task_(begin, std::min(count_, begin + grain_), worker, ctx_);
    }
  }
  void Loop(uint32_t worker) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      Work(worker);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --busy_;
      }
      done_.notify_all();
    }
  }

  int32_t workers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  int busy_ = 0;
  TaskFn* task_ = nullptr;
  void* ctx_ = nullptr;
  int32_t count_ = 0;
  int32_t grain_ = 1;
  std::atomic<int32_t> next_{0};
};

TEST(Determinism, StateHashIsIdenticalForOneTwoAndEightWorkers) {
  const std::vector<uint64_t> serial = RunScene(TaskHooks{nullptr, nullptr, nullptr, 1});
  for (int workers : {1, 2, 8}) {
    ThreadPoolHooks pool(workers);
    const std::vector<uint64_t> threaded = RunScene(pool.hooks());
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
  }
}

TEST(Determinism, StateHashIsIdenticalOnOneTbbForOneTwoAndEightWorkers) {
#ifdef TENDON_TSAN
  GTEST_SKIP() << "libtbb is not instrumented for ThreadSanitizer; the std::thread pool covers Tendon's side";
#endif
  const std::vector<uint64_t> serial = RunScene(TaskHooks{nullptr, nullptr, nullptr, 1});
  for (int workers : {1, 2, 8}) {
    TbbTaskSystem tasks(workers);
    const std::vector<uint64_t> threaded = RunScene(tasks.hooks());
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
  }
}

TEST(Determinism, ABigIslandSolvedByColourIsIdenticalForOneTwoAndEightWorkers) {
  bool coloured = false;
  const std::vector<uint64_t> serial = RunHeap(TaskHooks{nullptr, nullptr, nullptr, 1}, &coloured);
  EXPECT_TRUE(coloured) << "the heap must be one island big enough to be coloured";
  for (int workers : {1, 2, 8}) {
    ThreadPoolHooks pool(workers);
    bool unused = false;
    const std::vector<uint64_t> threaded = RunHeap(pool.hooks(), &unused);
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
  }
}

TEST(Determinism, WorkerIndicesStayBelowTheWorkerCount) {
#ifdef TENDON_TSAN
  GTEST_SKIP() << "libtbb is not instrumented for ThreadSanitizer";
#endif
  TbbTaskSystem tasks(4);
  struct Probe {
    std::atomic<uint32_t> max_index{0};
  } probe;
  TaskHooks hooks = tasks.hooks();
  auto fn = [](int32_t, int32_t, uint32_t worker, void* ctx) {
    auto* p = static_cast<Probe*>(ctx);
    uint32_t seen = p->max_index.load();
    while (worker > seen && !p->max_index.compare_exchange_weak(seen, worker)) {
    }
  };
  void* h = hooks.enqueue(fn, 10000, 1, &probe, hooks.user_context);
  hooks.finish(h, hooks.user_context);
  EXPECT_LT(probe.max_index.load(), 4u);
}

}  // namespace
}  // namespace tendon::test
