// bench/bench_chains.cpp: tendon_bench, the chain kernel's benchmarks (Google Benchmark).
//
//   BM_ChainStep/<impl>/nodes:<n>/chains:<c>/workers:<w>   one substep of the solve over c
//       chains of n nodes, scalar reference or the best SIMD kernel, on w oneTBB workers;
//       counters node_substeps_per_s and ns_per_lane (per chain-substep).
//   BM_ChainWriteback/nodes:<n>/chains:<c>                 writeback kernel + scatter into
//       the host buffers; counter bones_per_s.
//   BM_PoseLayout/<layout>/chains:<c>                       the same writeback with one pose
//       stream per chain (tendon/pose_layout.h) in each layout, against none; bones_per_s.
//   BM_ChainBudget/bound:<b>/simulated:<s>                 a whole World::Step (one substep)
//       with b bound chains of which the budget lets s simulate.
//   BM_ChainColliders/<impl>/<case>/chains:<c>             a whole World::Step of chains with
//       no colliders, their own (node and link tests), and host bodies (see ChainColliders).
//
// Chains are bound and packed through the public API; the solve and writeback phases are
// then run alone through detail::WorldAccess. Run with --benchmark_out=FILE.json for JSON.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "kernel/world/world_access.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "tendon/tbb_task_system.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

struct Rig {
  std::unique_ptr<TbbTaskSystem> tasks;
  std::unique_ptr<World> world;
  std::vector<Transform> roots;
  std::vector<std::vector<Transform>> animated, output;
  std::vector<ChainId> ids;
  // Pose streams (BM_PoseLayout): per chain its stream's array; one model and inverse binds.
  std::vector<std::vector<float>> stream_out;
  std::vector<float> inverse_bind;
  Transform model{{0.5f, 0, 0.5f}, {}, {1, 1, 1}};
};

// The layouts BM_PoseLayout measures; "none" writes output_local only.
enum class StreamKind { kNone, kLocalTrs, kModel4x4, kModel3x4, kPalette3x4, kPalette4x4 };
const char* StreamName(StreamKind k) {
  switch (k) {
    case StreamKind::kNone: return "none";
    case StreamKind::kLocalTrs: return "local_trs";
    case StreamKind::kModel4x4: return "model_4x4";
    case StreamKind::kModel3x4: return "model_3x4";
    case StreamKind::kPalette3x4: return "palette_3x4";
    case StreamKind::kPalette4x4: return "palette_4x4";
  }
  return "?";
}
PoseStream StreamOf(StreamKind k, Rig& rig, int chain, int n) {
  PoseStream p;
  std::vector<float>& out = rig.stream_out[chain];
  out.assign(static_cast<std::size_t>(16) * n, 0.0f);
  p.base = out.data();
  p.element_count = n;
  if (k == StreamKind::kLocalTrs) return p;
  p.layout = k == StreamKind::kPalette3x4 || k == StreamKind::kPalette4x4 ? PoseLayout::kSkinningMatrix : PoseLayout::kModelMatrix;
  p.matrix_form = k == StreamKind::kModel3x4 || k == StreamKind::kPalette3x4 ? MatrixForm::kRowMajor3x4 : MatrixForm::kColumnMajor4x4;
  p.model_world = &rig.model;
  if (p.layout == PoseLayout::kSkinningMatrix) p.inverse_bind = rig.inverse_bind;
  return p;
}

// c chains of n nodes in a grid; all simulate unless `max_chains` says otherwise.
std::unique_ptr<Rig> MakeRig(Isa isa, int n, int c, int workers, int max_chains, bool colliders,
                             StreamKind streams = StreamKind::kNone) {
  auto rig = std::make_unique<Rig>();
  WorldSettings ws;
  ws.isa = isa;
  ws.max_chains = max_chains;
  ws.max_distance = INFINITY;
  ws.ambient_wind = {2, 0, 1};
  if (workers > 1) {
    rig->tasks = std::make_unique<TbbTaskSystem>(workers);
    ws.tasks = rig->tasks->hooks();
  }
  auto created = World::Create(ws);
  if (!created.ok()) return nullptr;
  rig->world = std::move(created.value());
  ChainArchetypeSettings s;
  for (int i = 0; i < n; ++i) s.bones.push_back({i - 1, {{i == 0 ? 0.0f : 0.07f, 0, 0}, {}, {1, 1, 1}}});
  s.settings.stiffness = 0.05f;
  if (colliders) {
    s.settings.node_radius = 0.01f;
    s.colliders.push_back({.shape = ColliderShape::kSphere, .bone = 0, .a = {0.1f, -0.15f, 0}, .radius = 0.1f});
  }
  const ChainArchetypeId a = rig->world->BuildChainArchetype(s).value();
  rig->roots.resize(c);
  rig->animated.resize(c);
  rig->output.resize(c);
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(c))));
  for (int i = 0; i < c; ++i) {
    rig->roots[i].translation = {static_cast<float>(i % side), 1.0f, static_cast<float>(i / side)};
    for (const ChainBone& b : s.bones) rig->animated[i].push_back(b.rest_local);
    rig->output[i] = rig->animated[i];
  }
  rig->stream_out.resize(c);
  rig->inverse_bind.assign(static_cast<std::size_t>(16) * n, 0.0f);
  for (int k = 0; k < n; ++k) {
    float* m = &rig->inverse_bind[static_cast<std::size_t>(16) * k];
    m[0] = m[5] = m[10] = m[15] = 1.0f;
    m[12] = -0.07f * static_cast<float>(k);  // the bind pose's inverse: back along x
  }
  for (int i = 0; i < c; ++i) {
    ChainBinding b;
    b.archetype = a;
    b.root_parent_world = &rig->roots[i];
    b.animated_local = rig->animated[i];
    b.output_local = rig->output[i];
    PoseStream stream;
    if (streams != StreamKind::kNone) {
      stream = StreamOf(streams, *rig, i, n);
      b.pose_streams = std::span<const PoseStream>(&stream, 1);
    }
    rig->ids.push_back(rig->world->BindChain(b).value());
  }
  rig->world->SetCamera({0, 1, 0});
  for (int f = 0; f < 30; ++f) rig->world->Step(1.0f / 60.0f);  // pack lanes, let chains swing
  return rig;
}

void ChainStep(benchmark::State& state, Isa isa, int n, int c, int workers) {
  auto rig = MakeRig(isa, n, c, workers, INT32_MAX, false);
  if (!rig) {
    state.SkipWithError("this CPU cannot run the kernel");
    return;
  }
  for (auto _ : state) detail::WorldAccess::SolveOnly(*rig->world, 1);
  const double node_substeps = static_cast<double>(n) * c;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(node_substeps));
  state.counters["node_substeps_per_s"] = benchmark::Counter(node_substeps, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns_per_lane"] =
      benchmark::Counter(static_cast<double>(c) * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetLabel(ToString(rig->world->ActiveIsa()));
}

void ChainWriteback(benchmark::State& state, int n, int c) {
  auto rig = MakeRig(Isa::kAuto, n, c, 1, INT32_MAX, false);
  for (auto _ : state) detail::WorldAccess::WritebackOnly(*rig->world);
  const double bones = static_cast<double>(n) * c;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(bones));
  state.counters["bones_per_s"] = benchmark::Counter(bones, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(ToString(rig->world->ActiveIsa()));
}

void PoseLayoutWriteback(benchmark::State& state, StreamKind kind, int n, int c) {
  auto rig = MakeRig(Isa::kAuto, n, c, 1, INT32_MAX, false, kind);
  for (auto _ : state) detail::WorldAccess::WritebackOnly(*rig->world);
  const double bones = static_cast<double>(n) * c;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(bones));
  state.counters["bones_per_s"] = benchmark::Counter(bones, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns_per_bone"] =
      benchmark::Counter(bones * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetLabel(ToString(rig->world->ActiveIsa()));
}

void ChainBudget(benchmark::State& state, int bound, int simulated) {
  auto rig = MakeRig(Isa::kAuto, 8, bound, 1, simulated, false);
  // Every frame reads every bound root (gather) and selects the nearest `simulated`.
  PhaseTimes sum{};
  for (auto _ : state) {
    const FrameStats& st = rig->world->Step(1.0f / 60.0f);
    sum.gather_ms += st.times.gather_ms;
    sum.budget_ms += st.times.budget_ms;
    sum.pose_ms += st.times.pose_ms;
    sum.solve_ms += st.times.solve_ms;
    sum.writeback_ms += st.times.writeback_ms;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["gather_us"] = sum.gather_ms * 1e3 / n;
  state.counters["budget_us"] = sum.budget_ms * 1e3 / n;
  state.counters["pose_us"] = sum.pose_ms * 1e3 / n;
  state.counters["solve_us"] = sum.solve_ms * 1e3 / n;
  state.counters["writeback_us"] = sum.writeback_ms * 1e3 / n;
  const FrameStats& st = rig->world->LastStats();
  state.counters["simulated"] = st.simulated_chains;
  state.counters["ns_per_simulated_chain"] = benchmark::Counter(
      static_cast<double>(st.simulated_chains) * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetItemsProcessed(state.iterations() * st.simulated_chains);
}

// A whole World::Step (one fixed step, ragdoll_substeps XPBD substeps) with n Jolt humans
// standing on a plane, spaced so that they do not touch (no pairs), or lying in a heap
// (`heap`: contacts between them every substep).
void RagdollStep(benchmark::State& state, int n, bool heap) {
  const std::string path = ports::SharedDataPath("jolt-human/ragdoll.json");
  auto loaded = ports::LoadJoltHumanRagdoll(path);
  if (!loaded.ok()) {
    state.SkipWithError("../shared/data/jolt-human/ragdoll.json is not available (set TENDON_SHARED_DATA)");
    return;
  }
  WorldSettings ws;
  ws.ragdoll_sleep_speed = 0;  // measure stepping, not sleeping
  auto world = World::Create(ws).value();
  bench::MustSucceed(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}));
  const RagdollArchetypeId a = world->BuildRagdollArchetype(loaded.value()).value();
  std::vector<std::vector<Transform>> parts(n, std::vector<Transform>(23));
  for (int i = 0; i < n; ++i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement = heap ? Transform{{0.1f * (i % 3), 0.4f + 0.35f * i, 0}, AxisAngle(Vec3{1, 0, 0}, 1.5708f), {1, 1, 1}}
                       : Transform{{2.0f * i, 0.02f, 0}, {}, {1, 1, 1}};
    b.output_parts = parts[i];
    if (!world->BindRagdoll(b).ok()) {
      state.SkipWithError("binding a ragdoll failed");
      return;
    }
  }
  for (int f = 0; f < 120; ++f) world->Step(1.0f / 60.0f);  // let it land
  for (auto _ : state) world->Step(1.0f / 60.0f);
  state.counters["pairs"] = world->LastStats().ragdoll_pairs;
  state.counters["part_substeps_per_s"] = benchmark::Counter(
      static_cast<double>(n) * 23 * ws.ragdoll_substeps, benchmark::Counter::kIsIterationInvariantRate);
  state.SetItemsProcessed(state.iterations() * n);
}

// BM_ChainColliders/<case>/chains:<c>: a whole World::Step (one substep a frame) of c
// 8-node kTendon chains, one worker, scalar reference or best kernel:
//   none        no colliders
//   own         a sphere and a capsule on the root (the node test and the link test)
//   host4       own, and host_body_mask set with max_host_bodies 4: four host capsules
//               (World::AddHostBody, moved each frame) crossing the first chains
//   host4_each  own, and four host capsules over every chain (4 c host bodies)
//   far<N>      host4, and N more host bodies (spheres, capsules and boxes) standing still
//               10 m above the chains, spread over their square: each chain's pick finds
//               none of them (with the broad phase it looks at the few in its slice)
//   far<N>_nomask  far<N> with host_body_mask 0: what the N bodies cost the World alone
// Counter ns_per_joint: nanoseconds per node per frame.
struct ColliderCase {
  bool own = false;
  uint32_t mask = 0;
  int owners = 0;  // chains with four moving host capsules over them
  int far = 0;     // still host bodies far above
};
void ChainColliders(benchmark::State& state, Isa isa, ColliderCase which, int c) {
  constexpr int n = 8;
  WorldSettings ws;
  ws.isa = isa;
  ws.max_distance = INFINITY;
  ws.ambient_wind = {2, 0, 1};
  auto created = World::Create(ws);
  if (!created.ok()) {
    state.SkipWithError("this CPU cannot run the kernel");
    return;
  }
  std::unique_ptr<World> world = std::move(created.value());
  ChainArchetypeSettings s;
  for (int i = 0; i < n; ++i) s.bones.push_back({i - 1, {{0, i == 0 ? 0.0f : -0.07f, 0}, {}, {1, 1, 1}}});
  s.settings.stiffness = 0.05f;
  if (which.own) {
    s.settings.node_radius = 0.01f;
    s.colliders.push_back({.shape = ColliderShape::kSphere, .bone = 0, .a = {0.1f, -0.15f, 0}, .radius = 0.1f});
    s.colliders.push_back({.shape = ColliderShape::kCapsule, .bone = 0, .a = {-0.2f, -0.3f, -0.1f},
                           .b = {0.2f, -0.3f, 0.1f}, .radius = 0.015f});
  }
  s.host_body_mask = which.mask;
  const ChainArchetypeId a = world->BuildChainArchetype(s).value();
  std::vector<Transform> roots(c);
  std::vector<std::vector<Transform>> animated(c), output(c);
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(c))));
  for (int i = 0; i < c; ++i) {
    roots[i].translation = {static_cast<float>(i % side), 1.0f, static_cast<float>(i / side)};
    for (const ChainBone& b : s.bones) animated[i].push_back(b.rest_local);
    output[i] = animated[i];
    ChainBinding b;
    b.archetype = a;
    b.root_parent_world = &roots[i];
    b.animated_local = animated[i];
    b.output_local = output[i];
    world->BindChain(b).value();
  }
  world->SetCamera({0, 1, 0});
  // Capsules of 5 cm radius along y, 0.3 m long, moved each frame.
  std::vector<HostBodyId> moving;
  for (int i = 0; i < which.owners * 4; ++i) {
    HostBodySettings b;
    b.shape = HostBodyShape::kCapsule;
    b.radius = 0.05f;
    b.half_height = 0.15f;
    moving.push_back(world->AddHostBody(b).value());
  }
  for (int i = 0; i < which.far; ++i) {
    HostBodySettings b;
    b.shape = static_cast<HostBodyShape>(i % 3);
    b.radius = 0.2f;
    b.half_extents = {0.2f, 0.4f, 0.2f};
    const float u = static_cast<float>(i % 64) / 64.0f, v = static_cast<float>(i / 64) / (which.far / 64.0f + 1.0f);
    b.transform.translation = {u * side, 11.0f, v * side};
    world->AddHostBody(b).value();
  }
  int frame = 0;
  auto place = [&] {
    for (int i = 0; i < which.owners; ++i) {
      for (int j = 0; j < 4; ++j) {
        const float x = static_cast<float>(i % side) + 0.3f * std::sin(0.05f * frame + j);
        const float z = static_cast<float>(i / side) + 0.1f * j - 0.15f;
        Transform t;
        t.translation = {x, 0.65f + 0.1f * j, z};
        if (world->SetHostBodyMotion(moving[4 * i + j], t, {}, {}).code != ErrorCode::kNone) std::abort();
      }
    }
  };
  for (; frame < 30; ++frame) {
    place();
    world->Step(1.0f / 60.0f);
  }
  for (auto _ : state) {
    place();
    world->Step(1.0f / 60.0f);
    ++frame;
  }
  state.counters["ns_per_joint"] = benchmark::Counter(static_cast<double>(n) * c * 1e-9,
                                                      benchmark::Counter::kIsIterationInvariantRate |
                                                          benchmark::Counter::kInvert);
  state.SetLabel(ToString(world->ActiveIsa()));
}

void RegisterAll() {
  for (const char* impl : {"scalar", "simd"}) {
    const Isa isa = std::string(impl) == "scalar" ? Isa::kScalar : Isa::kAuto;
    const std::pair<ColliderCase, std::string> cases[] = {
        {{}, "none"},
        {{.own = true}, "own"},
        {{.own = true, .mask = 1, .owners = 1}, "host4"},
        {{.own = true, .mask = 1, .owners = 1024}, "host4_each"},
        {{.own = true, .mask = 1, .owners = 1, .far = 16}, "far16"},
        {{.own = true, .mask = 1, .owners = 1, .far = 1024}, "far1024"},
        {{.own = true, .mask = 1, .owners = 1, .far = 4096}, "far4096"},
        {{.own = true, .mask = 0, .owners = 1, .far = 4096}, "far4096_nomask"}};
    for (const auto& [which, label] : cases) {
      const std::string name = std::string("BM_ChainColliders/") + impl + "/" + label + "/chains:1024";
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { ChainColliders(st, isa, which, 1024); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (const char* impl : {"scalar", "simd"}) {
    const Isa isa = std::string(impl) == "scalar" ? Isa::kScalar : Isa::kAuto;
    for (int n : {5, 8}) {
      for (int c : {1024, 8192, 65536}) {
        for (int w : tendon::bench::WorkerCounts()) {
          const std::string name = std::string("BM_ChainStep/") + impl + "/nodes:" + std::to_string(n) +
                                   "/chains:" + std::to_string(c) + "/workers:" + std::to_string(w);
          benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { ChainStep(s, isa, n, c, w); })
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  for (int c : {1024, 8192}) {
    const std::string name = "BM_ChainWriteback/nodes:8/chains:" + std::to_string(c);
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { ChainWriteback(s, 8, c); })
        ->Unit(benchmark::kMicrosecond);
  }
  for (StreamKind k : {StreamKind::kNone, StreamKind::kLocalTrs, StreamKind::kModel4x4, StreamKind::kModel3x4,
                       StreamKind::kPalette3x4, StreamKind::kPalette4x4}) {
    for (int c : {64, 1024}) {
      const std::string name = std::string("BM_PoseLayout/") + StreamName(k) + "/chains:" + std::to_string(c);
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { PoseLayoutWriteback(s, k, 8, c); })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  for (int n : {8, 64}) {
    const std::string name = "BM_RagdollStep/humans:" + std::to_string(n) + "/apart";
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { RagdollStep(s, n, false); })
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("BM_RagdollStep/humans:20/heap", [](benchmark::State& s) { RagdollStep(s, 20, true); })
      ->Unit(benchmark::kMicrosecond);
  for (int bound : {1000, 100000}) {
    const std::string name = "BM_ChainBudget/bound:" + std::to_string(bound) + "/simulated:1000";
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { ChainBudget(s, bound, 1000); })
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

void RegisterCharacterBenchmarks();  // bench_characters.cpp
void RegisterPileBenchmarks();       // bench_piles.cpp
void RegisterVrmBenchmarks();        // bench_vrm.cpp
void RegisterHostBodyBenchmarks();   // bench_host_bodies.cpp
void RegisterContactEventBenchmarks();  // bench_contact_events.cpp
void RegisterDriveBenchmarks();      // bench_drives.cpp
void RegisterSnapshotBenchmarks();   // bench_snapshots.cpp
#ifdef TENDON_HAVE_BULLET
void RegisterBulletBenchmarks();  // bench_bullet.cpp, where libbullet-dev is installed
#endif

int main(int argc, char** argv) {
  RegisterAll();
  RegisterCharacterBenchmarks();
  RegisterPileBenchmarks();
  RegisterVrmBenchmarks();
  RegisterHostBodyBenchmarks();
  RegisterContactEventBenchmarks();
  RegisterDriveBenchmarks();
  RegisterSnapshotBenchmarks();
#ifdef TENDON_HAVE_BULLET
  RegisterBulletBenchmarks();
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
