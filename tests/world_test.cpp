// The World around the kernel: handles, budgets, culling, snapping, bad input, stats,
// wind, trace, memory and floating-point mode.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "kernel/core/fpu.h"
#include "kernel/world/wind.h"
#include "test_util.h"

#include "allocation_counter.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Animated world positions of a host chain (what a snapped chain must equal).
std::vector<Vec3> AnimatedPositions(const HostChain& h) {
  std::vector<Vec3> out;
  Transform world = h.root_parent;
  for (const Transform& local : h.animated) {
    world = Compose(world, local);
    out.push_back(world.translation);
  }
  return out;
}

struct Scene {
  std::unique_ptr<World> world;
  ChainArchetypeSettings settings;
  ChainArchetypeId archetype;
  std::vector<std::unique_ptr<HostChain>> hosts;
  std::vector<ChainId> ids;

  explicit Scene(WorldSettings ws = {}, int nodes = 5) : world(MakeWorld(ws)), settings(Strand(nodes)) {
    settings.settings.stiffness = 0.0f;
    archetype = world->BuildChainArchetype(settings).value();
  }
  ChainId Add(Vec3 position) {
    hosts.push_back(std::make_unique<HostChain>(settings, position));
    ids.push_back(world->BindChain(hosts.back()->Binding(archetype)).value());
    return ids.back();
  }
};

TEST(Handles, AStaleHandleIsDetectedOnEveryCall) {
  Scene s;
  const ChainId id = s.Add({});
  EXPECT_TRUE(s.world->IsValid(id));
  EXPECT_FALSE(s.world->IsValid(ChainId{}));
  EXPECT_EQ(s.world->UnbindChain(id).code, ErrorCode::kNone);
  EXPECT_FALSE(s.world->IsValid(id));
  EXPECT_EQ(s.world->UnbindChain(id).code, ErrorCode::kStaleHandle);
  std::vector<Vec3> p(5);
  EXPECT_EQ(s.world->GetChainNodePositions(id, p).code, ErrorCode::kStaleHandle);
  EXPECT_FALSE(s.world->IsSimulated(id));
  // The slot is reused with a new generation; the old handle stays stale.
  const ChainId again = s.world->BindChain(s.hosts[0]->Binding(s.archetype)).value();
  EXPECT_EQ(again.index, id.index);
  EXPECT_NE(again.generation, id.generation);
  EXPECT_FALSE(s.world->IsValid(id));
  EXPECT_TRUE(s.world->IsValid(again));
}

TEST(Handles, BindingTheSameHostBonesTwiceReturnsTheExistingHandle) {
  Scene s;
  const ChainId id = s.Add({});
  const auto again = s.world->BindChain(s.hosts[0]->Binding(s.archetype));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value(), id);
  EXPECT_EQ(s.world->Step(kStep).bound_chains, 1);
  // Another archetype over the same bones is refused rather than fighting the first.
  const ChainArchetypeId other = s.world->BuildChainArchetype(Strand(5, 0.2f)).value();
  EXPECT_EQ(s.world->BindChain(s.hosts[0]->Binding(other)).error().code, ErrorCode::kBadReference);
}

TEST(Binding, ABoneMapPlacesAChainInsideAWholeSkeletonBuffer) {
  WorldSettings ws;
  ws.render_interpolation = false;  // compared with the last substep's positions
  auto w = MakeWorld(ws);
  ChainArchetypeSettings st = Strand(4);
  st.settings.stiffness = 0.0f;
  const ChainArchetypeId a = w->BuildChainArchetype(st).value();
  // A 10-bone skeleton; the strand's bones are 7, 2, 5, 9 and the rest belong to the body.
  std::vector<Transform> animated(10, Transform{{0.5f, 0, 0}, {}, {1, 1, 1}}), output = animated;
  const std::vector<int32_t> map = {7, 2, 5, 9};
  for (int k = 0; k < 4; ++k) animated[map[k]] = st.bones[k].rest_local;
  output = animated;
  Transform root{};
  ChainBinding b;
  b.archetype = a;
  b.root_parent_world = &root;
  b.animated_local = animated;
  b.output_local = output;
  b.bone_map = map;
  const ChainId id = w->BindChain(b).value();
  for (int i = 0; i < 60; ++i) w->Step(kStep);
  for (int i : {0, 1, 3, 4, 6, 8}) EXPECT_EQ(output[i], animated[i]) << "body bone " << i << " was touched";
  EXPECT_NE(output[7], animated[7]);  // the root swings toward its simulated child
  // The world pose through the mapped locals matches the simulation.
  const auto p = Positions(*w, id, 4);
  Transform world = root;
  for (int k = 0; k < 4; ++k) {
    world = Compose(world, output[map[k]]);
    EXPECT_LT(Length(world.translation - p[k]), 1e-4f) << k;
  }
  // Another chain over other bones of the same buffer is a different binding.
  ChainBinding other = b;
  const std::vector<int32_t> map2 = {0, 1, 3, 4};
  other.bone_map = map2;
  const ChainId id2 = w->BindChain(other).value();
  EXPECT_NE(id2, id);
  EXPECT_EQ(w->BindChain(b).value(), id);
  EXPECT_EQ(w->UnbindChain(id).code, ErrorCode::kNone);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(output[map[k]], animated[map[k]]);
  // Bad maps are refused.
  const std::vector<int32_t> short_map = {7, 2}, out_of_range = {7, 2, 5, 10}, twice = {7, 2, 7, 9};
  b.bone_map = short_map;
  EXPECT_EQ(w->BindChain(b).error().code, ErrorCode::kBadReference);
  b.bone_map = out_of_range;
  EXPECT_EQ(w->BindChain(b).error().item, 3);
  b.bone_map = twice;
  EXPECT_EQ(w->BindChain(b).error().field, "bone_map");
}

TEST(Unbind, RestoresTheAnimatedLocalsBitExactly) {
  Scene s;
  s.Add({});
  s.hosts[0]->animated[2].rotation = Normalize(Quat{0.1f, 0.2f, 0.3f, 0.9f});
  for (int i = 0; i < 60; ++i) s.world->Step(kStep);
  EXPECT_NE(s.hosts[0]->output, s.hosts[0]->animated) << "the chain should have swung";
  EXPECT_EQ(s.world->UnbindChain(s.ids[0]).code, ErrorCode::kNone);
  EXPECT_EQ(s.hosts[0]->output, s.hosts[0]->animated);
}

TEST(Unbind, RestoresTheLastAnimatedPoseWhenOutputAliasesInput) {
  auto w = MakeWorld();
  ChainArchetypeSettings st = Strand(4);
  st.settings.stiffness = 0.0f;
  const ChainArchetypeId a = w->BuildChainArchetype(st).value();
  HostChain host(st);
  ChainBinding b = host.Binding(a);
  b.output_local = host.animated;  // one buffer: the host re-animates it every frame
  const ChainId id = w->BindChain(b).value();
  const std::vector<Transform> pose = host.animated;
  for (int i = 0; i < 30; ++i) {
    host.animated = pose;  // the host's animation writes the pose, Tendon overwrites it
    w->Step(kStep);
  }
  EXPECT_NE(host.animated, pose);
  EXPECT_EQ(w->UnbindChain(id).code, ErrorCode::kNone);
  EXPECT_EQ(host.animated, pose);
}

TEST(Budget, PicksExactlyTheNearestChains) {
  WorldSettings ws;
  ws.max_chains = 10;
  Scene s(ws);
  // 37 chains at distinct distances from the camera, bound in a shuffled order.
  for (int i = 0; i < 37; ++i) s.Add(Vec3{static_cast<float>((i * 17) % 37) * 1.5f + 0.5f, 0, 0});
  s.world->SetCamera({});
  const FrameStats& st = s.world->Step(kStep);
  EXPECT_EQ(st.simulated_chains, 10);
  EXPECT_EQ(st.culled_by_budget, 27);
  for (int i = 0; i < 37; ++i) {
    const bool nearest = (i * 17) % 37 < 10;
    EXPECT_EQ(s.world->IsSimulated(s.ids[i]), nearest) << i;
  }
  // The camera moves to the far end: the far ten win.
  s.world->SetCamera({100, 0, 0});
  s.world->Step(kStep);
  for (int i = 0; i < 37; ++i) EXPECT_EQ(s.world->IsSimulated(s.ids[i]), (i * 17) % 37 >= 27) << i;
}

TEST(Budget, StaysExactlyTheNearestAsTheCameraGlidesThroughTheCrowd) {
  WorldSettings ws;
  ws.max_chains = 25;
  ws.max_distance = 30.0f;
  Scene s(ws, 3);
  for (int i = 0; i < 400; ++i) s.Add(Vec3{static_cast<float>(i % 20) * 2.0f, 0, static_cast<float>(i / 20) * 2.0f});
  for (int f = 0; f < 120; ++f) {
    const Vec3 cam{f * 0.35f, 1.0f, 20.0f + std::sin(f * 0.1f) * 10.0f};
    s.world->SetCamera(cam);
    s.world->Step(kStep);
    // Brute force: the 25 nearest by (distance, slot) must be exactly the simulated ones.
    std::vector<std::pair<float, uint32_t>> all;
    for (std::size_t i = 0; i < s.ids.size(); ++i) {
      all.push_back({LengthSquared(s.hosts[i]->root_parent.translation - cam), s.ids[i].index});
    }
    std::sort(all.begin(), all.end());
    std::vector<bool> nearest(s.ids.size(), false);
    int expected = 0;
    for (std::size_t r = 0; r < all.size() && expected < 25; ++r) {
      if (all[r].first > 30.0f * 30.0f) break;
      nearest[all[r].second] = true;
      ++expected;
    }
    int simulated = 0;
    for (std::size_t i = 0; i < s.ids.size(); ++i) {
      ASSERT_EQ(s.world->IsSimulated(s.ids[i]), static_cast<bool>(nearest[s.ids[i].index])) << "frame " << f << " chain " << i;
      simulated += s.world->IsSimulated(s.ids[i]) ? 1 : 0;
    }
    ASSERT_EQ(simulated, expected);
    ASSERT_EQ(s.world->LastStats().simulated_chains, expected);
  }
}

TEST(Budget, DistanceCullsAndSleepingChainsAreNotWritten) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  Scene s(ws);
  const ChainId near = s.Add({5, 0, 0});
  const ChainId far = s.Add({50, 0, 0});
  std::fill(s.hosts[1]->output.begin(), s.hosts[1]->output.end(), Transform{{7, 7, 7}, {}, {1, 1, 1}});
  const auto sentinel = s.hosts[1]->output;
  for (int i = 0; i < 30; ++i) s.world->Step(kStep);
  EXPECT_TRUE(s.world->IsSimulated(near));
  EXPECT_FALSE(s.world->IsSimulated(far));
  EXPECT_EQ(s.hosts[1]->output, sentinel);
  const FrameStats& st = s.world->LastStats();
  EXPECT_EQ(st.culled_by_distance, 1);
  EXPECT_EQ(st.sleeping_chains, 1);
}

TEST(Budget, AHostPredicateReplacesTheDistanceTest) {
  WorldSettings ws;
  ws.max_distance = 1.0f;
  Scene s(ws);
  const ChainId a = s.Add({50, 0, 0});
  const ChainId b = s.Add({0.5f, 0, 0});
  SimulatePredicate p;
  p.should_simulate = [](ChainId, Vec3 root, void*) { return root.x > 10.0f; };
  s.world->SetSimulatePredicate(p);
  s.world->Step(kStep);
  EXPECT_TRUE(s.world->IsSimulated(a));
  EXPECT_FALSE(s.world->IsSimulated(b));
}

TEST(Budget, CostFollowsTheSimulatedChainsNotTheBoundOnes) {
  WorldSettings ws;
  ws.max_chains = 12;
  Scene s(ws);
  for (int i = 0; i < 1000; ++i) s.Add(Vec3{static_cast<float>(i), 0, 0});
  const FrameStats& st = s.world->Step(kStep);
  EXPECT_EQ(st.simulated_chains, 12);
  EXPECT_EQ(st.chain_blocks, (12 + s.world->LaneWidth() - 1) / s.world->LaneWidth());
  EXPECT_EQ(st.lanes_used, 12);
  EXPECT_NEAR(st.lane_occupancy, 12.0f / (st.chain_blocks * s.world->LaneWidth()), 1e-6f);
  EXPECT_EQ(st.simulated_instance_substeps, 12);
}

TEST(Budget, LanesStayPackedAsChainsComeAndGo) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  Scene s(ws);
  for (int i = 0; i < 20; ++i) s.Add(Vec3{static_cast<float>(i) * 0.1f, 0, 0});
  s.world->Step(kStep);
  // Send every other chain away: the survivors are repacked into fewer blocks.
  for (int i = 0; i < 20; i += 2) s.hosts[i]->root_parent.translation = {1000, 0, 0};
  for (int f = 0; f < 3; ++f) s.world->Step(kStep);
  const FrameStats& st = s.world->LastStats();
  EXPECT_EQ(st.simulated_chains, 10);
  EXPECT_EQ(st.chain_blocks, (10 + s.world->LaneWidth() - 1) / s.world->LaneWidth());
  // The survivors kept simulating correctly through the moves: links intact.
  for (int i = 1; i < 20; i += 2) {
    const auto p = Positions(*s.world, s.ids[i], 5);
    for (int k = 1; k < 5; ++k) EXPECT_NEAR(Length(p[k] - p[k - 1]), 0.1f, 1e-5f);
  }
}

// The budget's steady state (every chain eligible, awake and under the cap, no lane moved:
// the selection and the blocks are last frame's) gives what the whole selection gives. A
// host predicate that applies the same distance test takes the whole selection every
// frame; through binds, unbinds, chains leaving and coming back, a cap that binds and a
// non-finite root, both worlds write the same bits and count the same frames.
TEST(Budget, TheSteadyStateSelectsWhatTheWholeSelectionSelects) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  Scene steady(ws), whole(ws);
  SimulatePredicate within;  // Gather's own test, on the same float expression
  within.should_simulate = [](ChainId, Vec3 root, void*) { return LengthSquared(root - Vec3{}) <= 10.0f * 10.0f; };
  whole.world->SetSimulatePredicate(within);
  for (Scene* s : {&steady, &whole})
    for (int i = 0; i < 12; ++i) s->Add(Vec3{static_cast<float>(i) * 0.1f, 0, 0});
  for (int f = 0; f < 80; ++f) {
    for (Scene* s : {&steady, &whole}) {
      for (auto& h : s->hosts) h->root_parent.rotation = AxisAngle(Vec3{0, 0, 1}, 0.5f * std::sin(0.3f * static_cast<float>(f)));
      if (f == 10) s->Add(Vec3{2, 0, 0});                                  // bound
      Error e{};
      if (f == 20) e = s->world->UnbindChain(s->ids[3]);                 // unbound
      if (f == 30) s->hosts[5]->root_parent.translation.x = 1000.0f;       // leaves
      if (f == 40) s->hosts[5]->root_parent.translation.x = 0.5f;          // comes back
      if (f == 50) e = s->world->SetMaxChains(6);                         // the cap binds
      if (f == 60) e = s->world->SetMaxChains(100);
      ASSERT_EQ(e.code, ErrorCode::kNone) << "frame " << f;
      if (f == 65) s->hosts[7]->root_parent.translation.y = kNaN;          // bad input
      if (f == 70) s->hosts[7]->root_parent.translation.y = 0.0f;
    }
    const FrameStats a = steady.world->Step(kStep);
    const FrameStats b = whole.world->Step(kStep);
    EXPECT_EQ(a.simulated_chains, b.simulated_chains) << "frame " << f;
    EXPECT_EQ(a.sleeping_chains, b.sleeping_chains) << "frame " << f;
    EXPECT_EQ(a.chain_blocks, b.chain_blocks) << "frame " << f;
    EXPECT_EQ(a.lanes_used, b.lanes_used) << "frame " << f;
    EXPECT_EQ(a.snapped_wake, b.snapped_wake) << "frame " << f;
    for (std::size_t i = 0; i < steady.hosts.size(); ++i) {
      ASSERT_EQ(std::memcmp(steady.hosts[i]->output.data(), whole.hosts[i]->output.data(),
                            sizeof(Transform) * steady.hosts[i]->output.size()),
                0)
          << "chain " << i << " frame " << f;
    }
  }
  EXPECT_EQ(steady.world->LastStats().simulated_chains, 12);
}

// The writeback writes each awake lane's bones into its own chain's output however the
// budget repacked the lanes, and never into a chain that went to sleep: the survivors'
// outputs are bit for bit those of a world that only ever had them, and a culled chain's
// output keeps what it last held.
TEST(Budget, OutputsFollowTheirChainsAsLanesAreRepacked) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  Scene s(ws), alone(ws);
  for (int i = 0; i < 20; ++i) {
    const Vec3 at{static_cast<float>(i) * 0.1f, 0, 0};
    s.Add(at);
    if (i % 2 == 1) alone.Add(at);
  }
  auto same_bits = [](const std::vector<Transform>& a, const std::vector<Transform>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(Transform) * a.size()) == 0;
  };
  std::vector<std::vector<Transform>> held(20);
  for (int f = 0; f < 40; ++f) {
    const Quat swing = AxisAngle(Vec3{0, 0, 1}, 0.4f * std::sin(0.2f * static_cast<float>(f)));
    for (int i = 1; i < 20; i += 2) s.hosts[i]->root_parent.rotation = swing;
    for (auto& h : alone.hosts) h->root_parent.rotation = swing;
    if (f == 10) {
      // Every other chain leaves: the survivors move into their lanes.
      for (int i = 0; i < 20; i += 2) {
        s.hosts[i]->root_parent.translation = {1000, 0, 0};
        held[i] = s.hosts[i]->output;
      }
    }
    s.world->Step(kStep);
    alone.world->Step(kStep);
    for (int i = 1; i < 20; i += 2) ASSERT_TRUE(same_bits(s.hosts[i]->output, alone.hosts[i / 2]->output)) << i << " frame " << f;
    for (int i = 0; f >= 10 && i < 20; i += 2) ASSERT_TRUE(same_bits(s.hosts[i]->output, held[i])) << i << " frame " << f;
  }
  EXPECT_EQ(s.world->LastStats().simulated_chains, 10);
}

// The same with a sphere on a host frame per chain, which each chain's swing runs into:
// after the move each chain's read writes its own sphere into the lane it holds now, not
// into the one it held before (a survivor would collide with a departed chain's sphere).
TEST(Budget, CollidersFollowTheirChainsAsLanesAreRepacked) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  ChainArchetypeSettings st = Strand(5);
  st.settings.stiffness = 0.0f;
  st.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 0, .a = {0.2f, -0.15f, 0}, .radius = 0.06f});
  auto all = MakeWorld(ws), alone = MakeWorld(ws);
  const ChainArchetypeId in_all = all->BuildChainArchetype(st).value();
  const ChainArchetypeId in_alone = alone->BuildChainArchetype(st).value();
  std::vector<std::unique_ptr<HostChain>> hosts, alone_hosts;
  for (int i = 0; i < 20; ++i) {
    auto host = std::make_unique<HostChain>(st, Vec3{static_cast<float>(i) * 0.1f, 0, static_cast<float>(i) * 0.5f});
    host->collider_frames.assign(1, host->root_parent);
    ASSERT_TRUE(all->BindChain(host->Binding(in_all)).ok());
    if (i % 2 == 1) {
      auto twin = std::make_unique<HostChain>(*host);
      ASSERT_TRUE(alone->BindChain(twin->Binding(in_alone)).ok());
      alone_hosts.push_back(std::move(twin));
    }
    hosts.push_back(std::move(host));
  }
  auto same_bits = [](const std::vector<Transform>& a, const std::vector<Transform>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(Transform) * a.size()) == 0;
  };
  for (int f = 0; f < 60; ++f) {
    // The spheres sway, so a lane holding a stale sphere would show.
    const float sway = 0.05f * std::sin(0.3f * static_cast<float>(f));
    for (int i = 1; i < 20; i += 2) {
      hosts[i]->collider_frames[0].translation.x = hosts[i]->root_parent.translation.x + sway;
      alone_hosts[i / 2]->collider_frames[0].translation.x = hosts[i]->collider_frames[0].translation.x;
    }
    if (f == 10) {
      for (int i = 0; i < 20; i += 2) {
        hosts[i]->root_parent.translation = {1000, 0, 0};
        hosts[i]->collider_frames[0].translation = {1000, 0, 0};
      }
    }
    all->Step(kStep);
    alone->Step(kStep);
    for (int i = 1; i < 20; i += 2) ASSERT_TRUE(same_bits(hosts[i]->output, alone_hosts[i / 2]->output)) << i << " frame " << f;
  }
  EXPECT_EQ(all->LastStats().simulated_chains, 10);
}

TEST(Snapping, AChainThatWakesSnapsToTheAnimatedPose) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  Scene s(ws);
  const ChainId id = s.Add({0, 0, 0});
  for (int i = 0; i < 60; ++i) s.world->Step(kStep);  // hangs down
  s.world->SetCamera({100, 0, 0});
  s.world->Step(kStep);
  EXPECT_FALSE(s.world->IsSimulated(id));
  s.hosts[0]->root_parent.translation = {3, 1, 2};  // moved while asleep
  s.world->SetCamera({});
  const FrameStats& st = s.world->Step(1.0f / 240.0f);  // no substep: the snapped pose is what is read
  EXPECT_EQ(st.snapped_wake, 1);
  const auto p = Positions(*s.world, id, 5);
  const auto anim = AnimatedPositions(*s.hosts[0]);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(p[k], anim[k]) << k;
}

TEST(Snapping, ATeleportedRootSnapsItsChain) {
  Scene s;
  const ChainId id = s.Add({});
  for (int i = 0; i < 60; ++i) EXPECT_EQ(s.world->Step(kStep).snapped_teleport, 0);
  s.hosts[0]->root_parent.translation = {6, 0, 0};  // past the 5 m guard
  const FrameStats& st = s.world->Step(1.0f / 240.0f);
  EXPECT_EQ(st.snapped_teleport, 1);
  const auto anim = AnimatedPositions(*s.hosts[0]);
  const auto p = Positions(*s.world, id, 5);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(p[k], anim[k]) << k;
  // A turn past 90 degrees snaps too; a small one does not.
  for (int i = 0; i < 10; ++i) s.world->Step(kStep);
  s.hosts[0]->root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, 0.5f);
  EXPECT_EQ(s.world->Step(kStep).snapped_teleport, 0);
  s.hosts[0]->root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, 0.5f + 1.8f);
  EXPECT_EQ(s.world->Step(kStep).snapped_teleport, 1);
}

TEST(BadInput, ANaNPoseNeverReachesTheOutput) {
  Scene s;
  const ChainId id = s.Add({});
  for (int i = 0; i < 30; ++i) s.world->Step(kStep);
  const auto good_output = s.hosts[0]->output;
  const auto good_positions = Positions(*s.world, id, 5);
  s.hosts[0]->animated[3].translation.x = kNaN;
  for (int i = 0; i < 10; ++i) {
    const FrameStats& st = s.world->Step(kStep);
    EXPECT_EQ(st.snapped_bad_input, 1);
    for (const Transform& t : s.hosts[0]->output) ASSERT_TRUE(IsFinite(t));
    for (const Vec3& p : Positions(*s.world, id, 5)) ASSERT_TRUE(IsFinite(p));
  }
  // Held at the last good pose: the root does not move and the chain settles under it.
  EXPECT_EQ(Positions(*s.world, id, 5)[0], good_positions[0]);
  s.hosts[0]->root_parent.rotation.w = kNaN;
  s.hosts[0]->animated[3].translation.x = 0.1f;
  s.world->Step(kStep);
  for (const Transform& t : s.hosts[0]->output) ASSERT_TRUE(IsFinite(t));
  s.hosts[0]->root_parent.rotation.w = 1.0f;
  EXPECT_EQ(s.world->Step(kStep).snapped_bad_input, 0);
  (void)good_output;
}

// A pose that is finite but so large that the simulated state overflows (here the sum of
// positions the writeback checks in lanes) resets the chain and is counted; nothing
// non-finite reaches the host, and sane input simulates again.
TEST(BadInput, AChainWhoseSimulationOverflowsIsResetAndCounted) {
  WorldSettings ws;
  ws.max_distance = INFINITY;
  Scene s(ws);
  s.Add({});
  s.Add({1, 0, 0});  // a finite neighbour in the same block is not reset
  for (int i = 0; i < 5; ++i) s.world->Step(kStep);
  Scene neighbour_alone(ws);
  neighbour_alone.Add({1, 0, 0});
  for (int i = 0; i < 5; ++i) neighbour_alone.world->Step(kStep);
  s.hosts[0]->root_parent.translation = {2e38f, 2e38f, 2e38f};
  const FrameStats& st = s.world->Step(kStep);
  neighbour_alone.world->Step(kStep);
  EXPECT_EQ(st.reset_non_finite, 1);
  for (const auto& host : s.hosts) {
    for (const Transform& t : host->output) ASSERT_TRUE(IsFinite(t));
  }
  // The neighbour's bones are written as they would be without the chain that overflowed.
  EXPECT_EQ(std::memcmp(s.hosts[1]->output.data(), neighbour_alone.hosts[0]->output.data(),
                        sizeof(Transform) * s.hosts[1]->output.size()),
            0);
  s.hosts[0]->root_parent.translation = {0, 0, 0};
  EXPECT_EQ(s.world->Step(kStep).reset_non_finite, 0);
}

TEST(BadInput, NonFiniteColliderFramesAreHeld) {
  auto w = MakeWorld();
  ChainArchetypeSettings st = Strand(4);
  st.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 0, .a = {0.2f, -0.1f, 0}, .radius = 0.05f});
  const ChainArchetypeId a = w->BuildChainArchetype(st).value();
  HostChain host(st);
  host.collider_frames.assign(1, Transform{});
  w->BindChain(host.Binding(a)).value();
  host.collider_frames[0].translation.y = INFINITY;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1);
  for (const Transform& t : host.output) EXPECT_TRUE(IsFinite(t));
}

// The per-frame read checks exactly the host floats a chain uses: every float of each bone
// its bone map names, of its root frame and of the collider frames its colliders sit on,
// against NaN and both infinities; host bones and frames it does not use are not read.
TEST(BadInput, EveryFloatAChainReadsThroughItsBoneMapIsCheckedAndNoOther) {
  auto w = MakeWorld(LastSubstepOutputs());
  ChainArchetypeSettings st = Strand(4);
  st.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 1, .a = {0.2f, -0.3f, 0}, .radius = 0.05f});
  const ChainArchetypeId a = w->BuildChainArchetype(st).value();
  const std::vector<int32_t> bone_map = {6, 1, 4, 3};
  Transform root_parent{};
  std::vector<Transform> animated(8), output(8), frames(2);
  for (int k = 0; k < 4; ++k) animated[bone_map[k]] = st.bones[k].rest_local;
  output = animated;
  ChainBinding b;
  b.archetype = a;
  b.root_parent_world = &root_parent;
  b.animated_local = animated;
  b.output_local = output;
  b.bone_map = bone_map;
  b.collider_frames = frames;
  ASSERT_TRUE(w->BindChain(b).ok());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(w->Step(kStep).snapped_bad_input, 0);
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(), INFINITY, -INFINITY};
  auto poke = [&](Transform& t, const char* what, bool read) {
    for (int f = 0; f < 10; ++f) {
      for (float bad : bad_values) {
        float* floats = reinterpret_cast<float*>(&t);
        const float kept = floats[f];
        floats[f] = bad;
        EXPECT_EQ(w->Step(kStep).snapped_bad_input, read ? 1 : 0) << what << " float " << f << " = " << bad;
        for (const Transform& o : output) ASSERT_TRUE(IsFinite(o)) << what << " float " << f;
        floats[f] = kept;
        EXPECT_EQ(w->Step(kStep).snapped_bad_input, 0) << what << " float " << f << " restored";
      }
    }
  };
  for (int h = 0; h < 8; ++h) {
    const bool mapped = std::find(bone_map.begin(), bone_map.end(), h) != bone_map.end();
    poke(animated[h], mapped ? "mapped host bone" : "unmapped host bone", mapped);
  }
  poke(root_parent, "root frame", true);
  poke(frames[1], "collider frame 1", true);
  poke(frames[0], "collider frame 0 (no collider on it)", false);
  // A mapped rotation a little off unit is normalised, not refused; one far off is refused.
  animated[4].rotation = Quat{0, 0, 0, 1.0005f};
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 0);
  animated[4].rotation = Quat{0, 0, 0, 3.0f};
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1);
  for (const Transform& o : output) {
    ASSERT_TRUE(IsFinite(o));
    EXPECT_NEAR(Dot(o.rotation, o.rotation), 1.0f, 1e-4f);
  }
}

TEST(Stats, CountWhatTheFrameDid) {
  WorldSettings ws;
  ws.max_distance = 10.0f;
  Scene s(ws);
  for (int i = 0; i < 11; ++i) s.Add({static_cast<float>(i) * 0.1f, 0, 0});
  s.Add({100, 0, 0});
  Transform joint{}, offset{{0, -0.2f, 0}, {}, {1, 1, 1}};
  PendulumBinding pb;
  pb.joint_world = &joint;
  pb.accessory_offset = &offset;
  ASSERT_TRUE(s.world->BindPendulum(pb).ok());
  const FrameStats& st = s.world->Step(2.5f / 60.0f);
  EXPECT_EQ(st.frame, 1u);
  EXPECT_EQ(st.substeps, 2);
  EXPECT_EQ(st.bound_chains, 12);
  EXPECT_EQ(st.bound_pendulums, 1);
  EXPECT_EQ(st.simulated_chains, 11);
  EXPECT_EQ(st.simulated_pendulums, 1);
  EXPECT_EQ(st.sleeping_chains, 1);
  EXPECT_EQ(st.snapped_wake, 12);
  EXPECT_EQ(st.simulated_instance_substeps, 24);
  EXPECT_EQ(st.chain_blocks, 2);
  EXPECT_NEAR(st.lane_occupancy, 11.0f / 16.0f, 1e-6f);
  EXPECT_GE(st.times.total_ms, st.times.solve_ms);
  EXPECT_EQ(s.world->Step(kStep).snapped_wake, 0);
}

TEST(Memory, StepDoesNotAllocate) {
  WorldSettings ws;
  ws.max_chains = 20;
  ws.max_distance = 30.0f;
  ws.ambient_wind = {1, 0, 0};
  Scene s(ws);
  for (int i = 0; i < 50; ++i) s.Add({static_cast<float>(i), 0, 0});
  Transform joint{}, offset{{0, -0.2f, 0}, {}, {1, 1, 1}};
  PendulumBinding pb;
  pb.joint_world = &joint;
  pb.accessory_offset = &offset;
  ASSERT_TRUE(s.world->BindPendulum(pb).ok());
  ASSERT_EQ(s.world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, -1.0f}}}).code, ErrorCode::kNone);
  RagdollSettings crate;
  crate.parts.push_back(PartSettings{});
  crate.parts.push_back(PartSettings{});
  crate.parts[1].parent = 0;
  crate.parts[1].pose.translation = {0, -0.3f, 0};
  crate.parts[1].joint.anchor = {0, -0.15f, 0};
  const RagdollArchetypeId crate_id = s.world->BuildRagdollArchetype(crate).value();
  std::vector<Transform> crate_parts(2), other_parts(2);
  RagdollBinding rb;
  rb.archetype = crate_id;
  rb.output_parts = crate_parts;
  ASSERT_TRUE(s.world->BindRagdoll(rb).ok());
  rb.placement.translation = {0.05f, 0.3f, 0};  // falls onto the first: contacts between them
  rb.output_parts = other_parts;
  ASSERT_TRUE(s.world->BindRagdoll(rb).ok());
  s.world->Step(kStep);
  const long before = g_allocations.load();
  for (int f = 0; f < 200; ++f) {
    s.world->SetCamera({static_cast<float>(f % 60), 0, 0});  // chains wake and sleep
    if (f == 100) s.hosts[3]->animated[1].rotation.x = kNaN;
    if (f == 120) s.hosts[4]->root_parent.translation.x += 20.0f;
    s.world->Step(f % 7 == 0 ? 0.3f : kStep);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(s.world->LastStats().ragdoll_pairs + s.world->LastStats().sleeping_ragdolls, 0);
}

// The islands, the colouring of a big island and the pairs' contacts use storage sized at
// bind time: a heap of 288 touching crates (one island of more than 512 pairs with a
// contact) steps
// without allocating.
TEST(Memory, StepDoesNotAllocateWithABigIsland) {
  auto w = MakeWorld();
  std::vector<std::vector<Transform>> out;
  BindCrateHeap(*w, &out);
  w->Step(kStep);
  const long before = g_allocations.load();
  bool coloured = false;
  for (int f = 0; f < 30; ++f) {
    w->Step(kStep);
    coloured = coloured || w->LastStats().coloured_ragdoll_pairs > 0;
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_TRUE(coloured);
  EXPECT_GT(w->LastStats().ragdoll_islands, 0);
}

TEST(FloatingPoint, StepFlushesDenormalsAndRestoresTheCallersMode) {
  Scene s;
  s.Add({});
  const uint32_t mode = detail::CurrentFpuMode();
  static uint32_t seen = 0;
  WindSampler sampler;
  sampler.sample = [](double, void*) {
    seen = detail::CurrentFpuMode();
    return Vec3{};
  };
  s.world->SetWindSampler(sampler);
  s.world->Step(kStep);
#if defined(TENDON_HAS_MXCSR) || defined(TENDON_HAS_FPCR)  // MXCSR's FTZ and DAZ, or FPCR's FZ
  EXPECT_EQ(seen & detail::DenormalGuard::kFlushToZero, detail::DenormalGuard::kFlushToZero);
  EXPECT_EQ(seen & detail::DenormalGuard::kDenormalsAreZero, detail::DenormalGuard::kDenormalsAreZero);
#else
  (void)seen;
#endif
  EXPECT_EQ(detail::CurrentFpuMode(), mode);
}

// A caller that already flushes is left as it was, bit for bit, even when a host callback
// inside the Step changes the mode (the guard does not write on entry then, but always
// writes the caller's value back).
TEST(FloatingPoint, ACallerAlreadyFlushingGetsItsExactModeBack) {
#if defined(TENDON_HAS_MXCSR) || defined(TENDON_HAS_FPCR)
  Scene s;
  s.Add({});
  const uint32_t original = detail::CurrentFpuMode();
  const uint32_t flushing = original | detail::DenormalGuard::kFlushToZero | detail::DenormalGuard::kDenormalsAreZero;
  WindSampler sampler;
  sampler.sample = [](double, void*) {
    // A callback that turns flushing off for the rest of the Step.
    detail::WriteFpuControl(detail::CurrentFpuMode() & ~(detail::DenormalGuard::kFlushToZero |
                                                         detail::DenormalGuard::kDenormalsAreZero));
    return Vec3{};
  };
  s.world->SetWindSampler(sampler);
  detail::WriteFpuControl(flushing);
  s.world->Step(kStep);
  const uint32_t after = detail::CurrentFpuMode();
  detail::WriteFpuControl(original);
  EXPECT_EQ(after, flushing);
#else
  GTEST_SKIP() << "no floating-point control register here";
#endif
}

TEST(Isa, ForceScalarEnvironmentVariableSelectsTheScalarReference) {
  ASSERT_EQ(setenv("TENDON_FORCE_SCALAR", "1", 1), 0);
  auto forced = MakeWorld();
  ASSERT_EQ(unsetenv("TENDON_FORCE_SCALAR"), 0);
  EXPECT_EQ(forced->ActiveIsa(), Isa::kScalar);
  auto automatic = MakeWorld();
  if (IsIsaSupported(Isa::kSse2)) {
    EXPECT_NE(automatic->ActiveIsa(), Isa::kScalar);
  }
  WorldSettings ws;
  ws.isa = Isa::kSse2;
  if (IsIsaSupported(Isa::kSse2)) {
    EXPECT_EQ(MakeWorld(ws)->ActiveIsa(), Isa::kSse2);
  }
}

TEST(Wind, TheSamplerIsCalledOncePerFrameAndPushesChains) {
  Scene s;
  const ChainId id = s.Add({});
  static int calls = 0;
  WindSampler sampler;
  sampler.sample = [](double, void*) {
    ++calls;
    return Vec3{0, 0, 20};
  };
  s.world->SetWindSampler(sampler);
  s.world->Step(3.0f / 60.0f);  // three substeps, one call
  EXPECT_EQ(calls, 1);
  for (int i = 0; i < 60; ++i) s.world->Step(kStep);
  EXPECT_EQ(calls, 61);
  EXPECT_GT(Positions(*s.world, id, 5)[4].z, 0.1f);
}

TEST(Wind, AmbientGustsStayBetweenATenthAndFullStrengthAndAreSeeded) {
  float lo = 1.0f, hi = 0.0f;
  for (int i = 0; i < 20000; ++i) {
    const float g = detail::GustFactor(42, i * 0.01);
    lo = std::min(lo, g);
    hi = std::max(hi, g);
    ASSERT_EQ(g, detail::GustFactor(42, i * 0.01));
  }
  EXPECT_GE(lo, 0.1f);
  EXPECT_LE(hi, 1.0f);
  EXPECT_LT(lo, 0.3f);  // it really gusts
  EXPECT_GT(hi, 0.8f);
  EXPECT_NE(detail::GustFactor(1, 3.3), detail::GustFactor(2, 3.3));
}

// ---- pendulums ----

struct PendulumRig {
  std::unique_ptr<World> world = MakeWorld();
  Transform joint{{0, 2, 0}, {}, {1, 1, 1}};
  Transform offset{{0, -0.3f, 0}, {}, {1, 1, 1}};
  PendulumId id{};
  explicit PendulumRig(PendulumSettings s = {}) {
    PendulumBinding b;
    b.settings = s;
    b.joint_world = &joint;
    b.accessory_offset = &offset;
    id = world->BindPendulum(b).value();
  }
};

TEST(Pendulum, NeverSwingsPastItsClamp) {
  PendulumSettings s;
  s.max_swing_degrees = 20.0f;
  s.stiffness = 0.0f;
  s.gravity_scale = 1.0f;
  PendulumRig rig(s);
  const Transform rest = rig.offset;
  float widest = 0.0f;
  for (int f = 0; f < 600; ++f) {
    // Violent joint motion: shakes and spins.
    const float t = f * kStep;
    rig.joint.translation = {std::sin(t * 9.0f) * 0.8f, 2.0f + std::cos(t * 7.0f) * 0.5f, 0};
    rig.joint.rotation = AxisAngle(Vec3{0, 0, 1}, std::sin(t * 3.0f) * 1.2f);
    rig.world->Step(f % 5 == 0 ? 0.04f : kStep);
    float swing = 0.0f;
    EXPECT_TRUE(rig.world->GetPendulumState(rig.id, nullptr, &swing).ok());
    widest = std::max(widest, swing);
    ASSERT_LE(swing, 20.0f * 3.14159265f / 180.0f + 1e-4f) << "frame " << f;
    // The written offset is the rest offset turned by at most the clamp.
    const float written = RotationAngle(Normalize(rig.offset.rotation * Conjugate(rest.rotation)));
    ASSERT_LE(written, 20.0f * 3.14159265f / 180.0f + 1e-3f) << "frame " << f;
  }
  EXPECT_GT(widest, 15.0f * 3.14159265f / 180.0f) << "the shaking should reach the clamp";
}

TEST(Pendulum, FollowsTheJointAndSwingsWithGravity) {
  PendulumSettings s;
  s.stiffness = 0.0f;
  s.gravity_scale = 1.0f;
  s.max_swing_degrees = 90.0f;
  PendulumRig rig(s);
  // Tilt the joint 60 degrees: the worn pose tilts, gravity swings the bob back down.
  rig.joint.rotation = AxisAngle(Vec3{0, 0, 1}, 1.0f);
  for (int f = 0; f < 300; ++f) rig.world->Step(kStep);
  Vec3 bob;
  float swing = 0;
  EXPECT_TRUE(rig.world->GetPendulumState(rig.id, &bob, &swing).ok());
  EXPECT_NEAR(swing, 1.0f, 0.05f);
  EXPECT_NEAR(bob.x, 0.0f, 0.02f);
  EXPECT_NEAR(bob.y, 2.0f - 0.3f, 0.02f);
  // The hinge moves: the bob follows it.
  rig.joint.translation = {1, 2, 0};
  for (int f = 0; f < 300; ++f) rig.world->Step(kStep);
  EXPECT_TRUE(rig.world->GetPendulumState(rig.id, &bob, nullptr).ok());
  EXPECT_NEAR(bob.x, 1.0f, 0.02f);
}

TEST(Pendulum, AJointFrameThatOverflowsIsBadInputAndNothingNonFiniteComesOut) {
  PendulumSettings s;
  PendulumRig rig(s);
  for (int f = 0; f < 10; ++f) rig.world->Step(kStep);
  Vec3 good_bob;
  ASSERT_TRUE(rig.world->GetPendulumState(rig.id, &good_bob, nullptr).ok());
  const Transform good_joint = rig.joint;
  // Each finite, each unusable: a rotation whose square overflows, one near zero, and a
  // scale that throws the accessory past float range.
  const Transform bad[] = {
      {good_joint.translation, Quat{1e20f, 0, 0, 1e20f}, {1, 1, 1}},
      {good_joint.translation, Quat{1e-20f, 0, 0, 1e-20f}, {1, 1, 1}},
      {{3.4e38f, 2, 0}, AxisAngle(Vec3{0, 0, 1}, 1.5707964f), {1e38f, 1e38f, 1e38f}},
  };
  for (const Transform& joint : bad) {
    rig.joint = joint;
    int32_t bad_inputs = 0;
    for (int f = 0; f < 5; ++f) bad_inputs += rig.world->Step(kStep).snapped_bad_input;
    EXPECT_EQ(bad_inputs, 5);
    Vec3 bob;
    float swing = -1;
    ASSERT_TRUE(rig.world->GetPendulumState(rig.id, &bob, &swing).ok());
    EXPECT_TRUE(IsFinite(bob));
    EXPECT_TRUE(std::isfinite(swing));
    EXPECT_TRUE(IsFinite(rig.offset));
    EXPECT_NEAR(Length(bob - good_bob), 0.0f, 0.05f);  // held at the last good joint
  }
  // Bound on such a frame, it is refused by name.
  Transform offset{{0, -0.3f, 0}, {}, {1, 1, 1}};
  for (const Transform& joint : bad) {
    Transform at = joint;
    PendulumBinding b;
    b.joint_world = &at;
    b.accessory_offset = &offset;
    const auto refused = rig.world->BindPendulum(b);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().field.rfind("joint_world", 0), 0u) << refused.error().field;
  }
}

TEST(Pendulum, AShortLeverBecomesASyntheticLeverDownTheUpAxis) {
  PendulumSettings s;
  PendulumRig rig(s);
  Transform joint{{0, 1, 0}, {}, {1, 1, 1}}, offset{{0.02f, 0, 0}, {}, {1, 1, 1}};  // centred on the joint
  PendulumBinding b;
  b.joint_world = &joint;
  b.accessory_offset = &offset;
  const PendulumId id = rig.world->BindPendulum(b).value();
  rig.world->Step(kStep);
  Vec3 bob;
  EXPECT_TRUE(rig.world->GetPendulumState(id, &bob, nullptr).ok());
  EXPECT_NEAR(Length(bob - joint.translation), 0.21f, 1e-4f);  // 0.75 studs, in metres
  EXPECT_LT(bob.y, 1.0f);
}

TEST(Pendulum, UnbindRestoresTheOffsetExactlyAndBindingTwiceReturnsTheHandle) {
  PendulumSettings s;
  s.stiffness = 0.0f;
  PendulumRig rig(s);
  const Transform rest = rig.offset;
  PendulumBinding again;
  again.joint_world = &rig.joint;
  again.accessory_offset = &rig.offset;
  EXPECT_EQ(rig.world->BindPendulum(again).value(), rig.id);
  for (int f = 0; f < 60; ++f) {
    rig.joint.rotation = AxisAngle(Vec3{0, 0, 1}, f * 0.02f);
    rig.world->Step(kStep);
  }
  EXPECT_NE(rig.offset, rest);
  EXPECT_EQ(rig.world->UnbindPendulum(rig.id).code, ErrorCode::kNone);
  EXPECT_EQ(rig.offset, rest);
  EXPECT_EQ(rig.world->UnbindPendulum(rig.id).code, ErrorCode::kStaleHandle);
}

TEST(Pendulum, IsDistanceCulledAndIgnoresTheChainBudget) {
  WorldSettings ws;
  ws.max_chains = 0;
  ws.pendulum_max_distance = 10.0f;
  auto w = MakeWorld(ws);
  Transform near_joint{{1, 0, 0}, {}, {1, 1, 1}}, far_joint{{50, 0, 0}, {}, {1, 1, 1}};
  Transform near_offset{{0, -0.3f, 0}, {}, {1, 1, 1}}, far_offset = near_offset;
  PendulumBinding b;
  b.joint_world = &near_joint;
  b.accessory_offset = &near_offset;
  ASSERT_TRUE(w->BindPendulum(b).ok());
  b.joint_world = &far_joint;
  b.accessory_offset = &far_offset;
  ASSERT_TRUE(w->BindPendulum(b).ok());
  const FrameStats& st = w->Step(kStep);
  EXPECT_EQ(st.simulated_pendulums, 1);
  EXPECT_EQ(st.sleeping_pendulums, 1);
}

TEST(Pendulum, ANaNJointNeverReachesTheOffset) {
  PendulumRig rig;
  for (int f = 0; f < 10; ++f) rig.world->Step(kStep);
  rig.joint.rotation.x = kNaN;
  const FrameStats& st = rig.world->Step(kStep);
  EXPECT_EQ(st.snapped_bad_input, 1);
  EXPECT_TRUE(IsFinite(rig.offset));
}

}  // namespace
}  // namespace tendon::test
