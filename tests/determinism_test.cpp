// Results are bit-identical for any number of workers: the state hash of a busy scene is
// the same, frame after frame, with no task system and with oneTBB at 1, 2 and 8 workers.
#include <cmath>

#include "tendon/tbb_task_system.h"
#include "test_util.h"

namespace tendon::test {
namespace {

std::vector<uint64_t> RunScene(TaskHooks hooks) {
  WorldSettings ws;
  ws.tasks = hooks;
  ws.max_chains = 150;
  ws.max_distance = 25.0f;
  ws.ambient_wind = {3, 0, 1};
  auto w = MakeWorld(ws);
  std::vector<ChainArchetypeSettings> kinds = {Strand(5, 0.08f), Strand(8, 0.05f, {0, -1, 0}), Strand(3, 0.2f)};
  kinds[1].colliders.push_back({.shape = ColliderShape::kSphere, .bone = 0, .a = {0, -0.2f, 0.05f}, .radius = 0.1f});
  kinds[2].settings.stiffness = 0.3f;
  std::vector<ChainArchetypeId> ids;
  for (const auto& k : kinds) ids.push_back(w->BuildChainArchetype(k).value());
  std::vector<std::unique_ptr<HostChain>> hosts;
  for (int i = 0; i < 300; ++i) {
    const int kind = i % 3;
    hosts.push_back(std::make_unique<HostChain>(kinds[kind], Vec3{static_cast<float>(i % 20) * 2.0f, 0,
                                                                  static_cast<float>(i / 20) * 2.0f}));
    EXPECT_TRUE(w->BindChain(hosts.back()->Binding(ids[kind])).ok());
  }
  std::vector<Transform> joints(100), offsets(100, Transform{{0, -0.3f, 0}, {}, {1, 1, 1}});
  for (int i = 0; i < 100; ++i) {
    joints[i].translation = {static_cast<float>(i % 10) * 3.0f, 1, static_cast<float>(i / 10) * 3.0f};
    PendulumBinding b;
    b.joint_world = &joints[i];
    b.accessory_offset = &offsets[i];
    EXPECT_TRUE(w->BindPendulum(b).ok());
  }
  std::vector<uint64_t> hashes;
  for (int f = 0; f < 240; ++f) {
    const float t = f / 60.0f;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      hosts[i]->root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, std::sin(t * 2.0f + i));
      hosts[i]->root_parent.translation.y = std::sin(t * 3.0f + i) * 0.3f;
    }
    for (std::size_t i = 0; i < joints.size(); ++i) joints[i].rotation = AxisAngle(Vec3{0, 0, 1}, std::sin(t * 4.0f + i));
    w->SetCamera(Vec3{std::sin(t) * 20.0f + 20.0f, 0, std::cos(t * 0.5f) * 15.0f + 15.0f});
    w->Step(f % 11 == 0 ? 0.05f : 1.0f / (45.0f + (f % 5) * 20.0f));
    hashes.push_back(w->StateHash());
  }
  return hashes;
}

TEST(Determinism, StateHashIsIdenticalForOneTwoAndEightWorkers) {
  const std::vector<uint64_t> serial = RunScene(TaskHooks{nullptr, nullptr, nullptr, 1});
  for (int workers : {1, 2, 8}) {
    TbbTaskSystem tasks(workers);
    const std::vector<uint64_t> threaded = RunScene(tasks.hooks());
    ASSERT_EQ(threaded.size(), serial.size());
    for (std::size_t f = 0; f < serial.size(); ++f) ASSERT_EQ(threaded[f], serial[f]) << workers << " workers, frame " << f;
  }
}

TEST(Determinism, WorkerIndicesStayBelowTheWorkerCount) {
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
