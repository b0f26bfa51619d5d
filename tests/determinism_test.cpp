// Results are bit-identical for any number of workers: the state hash of a busy scene is
// the same, frame after frame, with no task system and with oneTBB at 1, 2 and 8 workers.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "kernel/world/world_access.h"
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

// A host job system that allows what World::BeginStep needs: enqueue returns at once, and
// enqueue / finish may be called again from inside a task. Whoever waits in finish runs
// ranges of any job meanwhile (its own index: the caller is worker 0), so nested waits
// never deadlock. One mutex guards everything, which ThreadSanitizer sees entirely.
class NestingPoolHooks {
 public:
  explicit NestingPoolHooks(int workers) : workers_(workers) {
    for (int i = 1; i < workers; ++i) threads_.emplace_back([this, i] { Loop(static_cast<uint32_t>(i)); });
  }
  ~NestingPoolHooks() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  TaskHooks hooks() { return TaskHooks{&Enqueue, &Finish, this, workers_}; }
  int max_jobs_in_flight() const { return max_jobs_; }

 private:
  struct Job {
    TaskFn* task;
    void* ctx;
    int32_t count, grain, next = 0, done = 0;
  };
  static thread_local uint32_t t_index;

  static void* Enqueue(TaskFn* task, int32_t count, int32_t min_range, void* ctx, void* user) {
    auto* self = static_cast<NestingPoolHooks*>(user);
    auto* job = new Job{task, ctx, count, min_range < 1 ? 1 : min_range};
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->jobs_.push_back(job);
      self->max_jobs_ = std::max(self->max_jobs_, static_cast<int>(self->jobs_.size()));
    }
    self->wake_.notify_all();
    return job;
  }
  static void Finish(void* handle, void* user) {
    auto* self = static_cast<NestingPoolHooks*>(user);
    auto* job = static_cast<Job*>(handle);
    std::unique_lock<std::mutex> lock(self->mutex_);
    while (job->done < job->count) {
      if (!self->RunOne(lock)) self->wake_.wait(lock);
    }
    self->jobs_.erase(std::find(self->jobs_.begin(), self->jobs_.end(), job));
    delete job;
  }
  // Claims a range of the oldest job with ranges left and runs it unlocked.
  bool RunOne(std::unique_lock<std::mutex>& lock) {
    for (Job* job : jobs_) {
      if (job->next >= job->count) continue;
      const int32_t begin = job->next;
      const int32_t end = std::min(job->count, begin + job->grain);
      job->next = end;
      lock.unlock();
      job->task(begin, end, t_index, job->ctx);
      lock.lock();
      job->done += end - begin;
      if (job->done == job->count) wake_.notify_all();
      return true;
    }
    return false;
  }
  void Loop(uint32_t worker) {
    t_index = worker;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      if (!RunOne(lock)) wake_.wait(lock);
    }
  }

  int32_t workers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Job*> jobs_;
  bool stop_ = false;
  int max_jobs_ = 0;
};
thread_local uint32_t NestingPoolHooks::t_index = 0;

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

TEST(Determinism, ACrateThrownIntoASleepingStackWakesItWithTheSameBitsForAnyWorkerCount) {
  int32_t woken = 0;
  const std::vector<uint64_t> serial = RunWakingStacks(TaskHooks{nullptr, nullptr, nullptr, 1}, &woken);
  EXPECT_GT(woken, 0) << "the throw must wake sleeping crates";
  EXPECT_LT(woken, 24) << "the other stack must sleep on";
  for (int workers : {2, 8}) {
    ThreadPoolHooks pool(workers);
    int32_t threaded_woken = 0;
    const std::vector<uint64_t> threaded = RunWakingStacks(pool.hooks(), &threaded_woken);
    EXPECT_EQ(threaded_woken, woken) << workers << " workers";
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
  }
}

// Host bodies among ragdolls: capsules walking through crates lying on the ground, a
// platform carrying some, a trigger counting, and standing characters whose kinematic
// copies follow their animation: the same bits for any worker count.
std::vector<uint64_t> RunHostBodyYard(TaskHooks hooks, int32_t* overlapping) {
  WorldSettings ws;
  ws.tasks = hooks;
  auto w = MakeWorld(ws);
  EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
  RagdollSettings crate;
  PartSettings p;
  p.shape = {.type = PartShape::kBox, .half_extents = {0.2f, 0.2f, 0.2f}};
  p.mass = 8;
  crate.parts.push_back(p);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(crate).value();
  std::vector<std::vector<Transform>> out(24, std::vector<Transform>(1));
  for (int i = 0; i < 24; ++i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {0.5f * static_cast<float>(i % 10), 0.2f + 0.5f * static_cast<float>(i / 10), 0.3f * static_cast<float>(i % 3)};
    b.output_parts = out[i];
    EXPECT_TRUE(w->BindRagdoll(b).ok());
  }
  CharacterSettings cs = StickmanCharacter();
  cs.inactive_bodies = CharacterInactiveBodies::kKinematic;
  const CharacterArchetypeId ca = w->BuildCharacterArchetype(cs).value();
  std::vector<std::vector<Transform>> locals(3), outputs(3);
  std::vector<Transform> models(3);
  for (int k = 0; k < 3; ++k) {
    models[k] = Transform{{1.5f * static_cast<float>(k), 0.73f, 2.0f}, {}, {1, 1, 1}};
    locals[k] = StickmanSkeleton().rest_local;
    outputs[k] = locals[k];
    CharacterBinding cb;
    cb.archetype = ca;
    cb.model_world = &models[k];
    cb.animated_local = locals[k];
    cb.output_local = outputs[k];
    EXPECT_TRUE(w->BindCharacter(cb).ok());
  }
  std::vector<HostBodyId> walkers;
  for (int k = 0; k < 6; ++k) {
    HostBodySettings hs;
    hs.transform.translation = {-2.0f, 0.9f, 0.4f * static_cast<float>(k)};
    walkers.push_back(w->AddHostBody(hs).value());
  }
  HostBodySettings trigger;
  trigger.shape = HostBodyShape::kSphere;
  trigger.radius = 1.0f;
  trigger.trigger = true;
  trigger.transform.translation = {2, 0.5f, 0};
  const HostBodyId zone = w->AddHostBody(trigger).value();
  std::vector<uint64_t> hashes;
  const float dt = 1.0f / 60.0f;
  for (int f = 0; f < 100; ++f) {
    for (int k = 0; k < 6; ++k) {
      const Vec3 v{1.5f + 0.1f * static_cast<float>(k), 0, 0};
      EXPECT_TRUE(w->SetHostBodyMotion(walkers[k], Transform{{-2.0f + v.x * dt * static_cast<float>(f), 0.9f, 0.4f * static_cast<float>(k)}, {}, {1, 1, 1}}, v, {}).ok());
    }
    for (int k = 0; k < 3; ++k) models[k].translation.x = 1.5f * static_cast<float>(k) - 0.01f * static_cast<float>(f);
    w->Step(dt);
    hashes.push_back(w->StateHash());
  }
  HostBodyState st;
  EXPECT_TRUE(w->GetHostBodyState(zone, &st).ok());
  *overlapping = st.overlapping_parts;
  return hashes;
}

TEST(Determinism, HostBodiesAndCharactersKinematicCopiesGiveTheSameBitsForAnyWorkerCount) {
  int32_t overlapping = 0;
  const std::vector<uint64_t> serial = RunHostBodyYard(TaskHooks{nullptr, nullptr, nullptr, 1}, &overlapping);
  for (int workers : {2, 8}) {
    ThreadPoolHooks pool(workers);
    int32_t threaded_overlapping = -1;
    const std::vector<uint64_t> threaded = RunHostBodyYard(pool.hooks(), &threaded_overlapping);
    EXPECT_EQ(threaded_overlapping, overlapping) << workers << " workers";
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
  }
}

// BeginStep / FinishStep: the frame's two lanes (characters, ragdolls and the chains
// hanging from them; every other chain) side by side give Step's bits, frame after frame,
// on a nesting std::thread pool (which ThreadSanitizer checks) and on oneTBB.
TEST(Determinism, BeginStepAndFinishStepGiveStepsBitsForAnyWorkerCount) {
  const std::vector<uint64_t> serial = RunScene(TaskHooks{nullptr, nullptr, nullptr, 1}, Isa::kAuto, true, false, true);
  const std::vector<uint64_t> split = RunScene(TaskHooks{nullptr, nullptr, nullptr, 1}, Isa::kAuto, true, true, true);
  ASSERT_EQ(split, serial) << "without task hooks";
  for (int workers : {1, 2, 4}) {
    NestingPoolHooks pool(workers);
    const std::vector<uint64_t> threaded = RunScene(pool.hooks(), Isa::kAuto, true, true, true);
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
    EXPECT_GE(pool.max_jobs_in_flight(), 2) << "the lanes' phases nest inside the frame's job";
  }
#ifndef TENDON_TSAN
  for (int workers : {1, 2, 8}) {
    TbbTaskSystem tasks(workers);
    const std::vector<uint64_t> threaded = RunScene(tasks.hooks(), Isa::kAuto, true, true, true);
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << "oneTBB, " << workers << " workers, frame " << f;
  }
#endif
}

// While a frame is in flight the World refuses changes, and a second BeginStep; FinishStep
// without a frame returns the last stats; a World destroyed mid-frame waits for it.
TEST(Determinism, AFrameInFlightRefusesChangesAndIsWaitedForOnDestruction) {
  NestingPoolHooks pool(2);
  WorldSettings ws;
  ws.tasks = pool.hooks();
  auto w = MakeWorld(ws);
  const ChainArchetypeSettings s = Strand(4);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain chain(s), other(s);
  ASSERT_TRUE(w->BindChain(chain.Binding(a)).ok());
  ASSERT_TRUE(w->BeginStep(1.0f / 60.0f));
  EXPECT_TRUE(w->FrameInFlight());
  EXPECT_EQ(w->LastStats().frame, 0u) << "mid-frame: the last whole frame's stats, not the ones being written";
  EXPECT_FALSE(w->BeginStep(1.0f / 60.0f)) << "one frame at a time";
  auto refused = w->BindChain(other.Binding(a));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kReentrant);
  const FrameStats& st = w->FinishStep();
  EXPECT_EQ(st.frame, 1u);
  EXPECT_EQ(st.simulated_chains, 1);
  EXPECT_EQ(w->FinishStep().frame, 1u) << "no frame in flight: the last stats";
  EXPECT_TRUE(w->BindChain(other.Binding(a)).ok());
  ASSERT_TRUE(w->BeginStep(1.0f / 60.0f));
  w.reset();  // waits for the frame's tasks before the World goes
  EXPECT_TRUE(IsFinite(chain.output[3]));
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

// Piles whose blocks no pair joins run each one's substeps as one task (domains): the bits
// of the substep-by-substep schedule, frame after frame, for any worker count; the same
// where a slab under two piles joins them into one domain once they wake it, where,
// frozen, it is read by both piles' domains, and where, frozen in a block the kernel
// steps, it joins them again.
TEST(Determinism, DomainsOfSeparatePilesGiveTheSubstepBySubstepBitsForAnyWorkerCount) {
  for (Slab slab : {Slab::kNone, Slab::kSlabWakes, Slab::kSlabFrozen, Slab::kSlabFrozenBesideAwake}) {
    const int kind = static_cast<int>(slab);
    int32_t domains = 0;
    const std::vector<uint64_t> reference = RunDomainPiles(TaskHooks{nullptr, nullptr, nullptr, 1}, false, &domains, slab);
    EXPECT_EQ(domains, 0) << "domains off: substep by substep";
    const std::vector<uint64_t> serial = RunDomainPiles(TaskHooks{nullptr, nullptr, nullptr, 1}, true, &domains, slab);
    const int32_t expected = slab == Slab::kSlabWakes || slab == Slab::kSlabFrozenBesideAwake ? 3 : 4;
    EXPECT_EQ(domains, expected) << "a domain per pile; a slab whose block runs and its piles one; slab " << kind;
    ASSERT_EQ(serial, reference) << "domains on one thread, slab " << kind;
    for (int workers : {2, 8}) {
      ThreadPoolHooks pool(workers);
      const std::vector<uint64_t> threaded = RunDomainPiles(pool.hooks(), true, &domains, slab);
      // Eight workers: three or four domains would leave most of them idle, so the frames
      // run substep by substep (BuildDomains' balance test), with the same bits.
      EXPECT_EQ(domains, workers == 2 ? expected : 1) << workers << " workers, slab " << kind;
      ASSERT_EQ(threaded.size(), reference.size());
      for (std::size_t f = 0; f < reference.size(); ++f)
        ASSERT_EQ(threaded[f], reference[f]) << workers << " workers, slab " << kind << ", frame " << f;
    }
#ifndef TENDON_TSAN
    TbbTaskSystem tasks(2);
    ASSERT_EQ(RunDomainPiles(tasks.hooks(), true, &domains, slab), reference) << "oneTBB, 2 workers, slab " << kind;
    EXPECT_EQ(domains, expected) << "oneTBB ran the domains, slab " << kind;
#endif
  }
}

// With workers, sleepers are packed behind the awake lanes run by run (a run of blocks per
// worker): no lane leaves its run, lanes do move, and every ragdoll's pose is bit-equal,
// frame after frame, to a world stepped on the caller's thread alone (one run).
TEST(Determinism, PackingWithWorkersKeepsEachLaneInItsRunAndMovesNoResult) {
  RagdollSettings s;
  PartSettings crate;
  crate.shape = {.type = PartShape::kBox, .half_extents = {0.25f, 0.25f, 0.25f}};
  crate.mass = 20.0f;
  s.parts.push_back(crate);
  constexpr int kCount = 64;  // ragdolls 3 m apart: movers falling and tumbling, sleepers standing
  ThreadPoolHooks pool(2);
  std::vector<std::vector<Transform>> out_serial(kCount, std::vector<Transform>(1)), out_pool = out_serial;
  std::vector<RagdollId> ids_pool;
  auto make = [&](const TaskHooks& hooks, std::vector<std::vector<Transform>>& out, std::vector<RagdollId>* ids) {
    WorldSettings ws;
    ws.tasks = hooks;
    auto w = MakeWorld(ws);
    EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
    const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
    for (int i = 0; i < kCount; ++i) {
      // In each quarter, its first three in four fall from 6-60 m (later ones longer), the
      // rest stand: every run gets sleepers among falling ragdolls.
      const bool mover = (i % 16) < 12;
      RagdollBinding b;
      b.archetype = a;
      b.placement.translation = {3.0f * static_cast<float>(i), mover ? 6.0f + 0.8f * static_cast<float>(i % 64) : 0.25f, 0};
      if (mover) b.angular_velocity = {0.5f, 0.2f * static_cast<float>(i % 5), 0.1f};
      b.output_parts = out[i];
      const RagdollId id = w->BindRagdoll(b).value();
      if (ids != nullptr) ids->push_back(id);
    }
    return w;
  };
  auto serial = make(TaskHooks{nullptr, nullptr, nullptr, 1}, out_serial, nullptr);
  auto pooled = make(pool.hooks(), out_pool, &ids_pool);
  const int32_t width = pooled->RagdollLaneWidth();
  const int32_t blocks = (kCount + width - 1) / width;
  auto run_of = [&](int32_t lane) { return lane / width >= blocks / 2 ? 1 : 0; };
  std::vector<int32_t> first_lane;
  for (RagdollId id : ids_pool) first_lane.push_back(detail::WorldAccess::RagdollLane(*pooled, id));
  bool moved = false;
  for (int f = 0; f < 240; ++f) {
    serial->Step(1.0f / 60.0f);
    pooled->Step(1.0f / 60.0f);
    for (int i = 0; i < kCount; ++i) {
      const int32_t lane = detail::WorldAccess::RagdollLane(*pooled, ids_pool[i]);
      ASSERT_EQ(run_of(lane), run_of(first_lane[i])) << "ragdoll " << i << " left its run at frame " << f;
      moved = moved || lane != first_lane[i];
      ASSERT_EQ(std::memcmp(out_pool[i].data(), out_serial[i].data(), sizeof(Transform)), 0) << "ragdoll " << i << " frame " << f;
    }
  }
  EXPECT_TRUE(moved) << "sleepers were packed behind awake lanes";
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
