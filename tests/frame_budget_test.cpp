// The millisecond budget (WorldSettings::frame_budget_ms), on a test clock that gives each
// phase an exact cost (detail::WorldAccess::SetPhaseClock): it settles a scene that costs
// twice the budget, recovers when the load drops, cuts chains before ragdoll substeps and
// never below the floor, holds still inside its band, ignores a hitch, and changes
// nothing when it is off or never binds.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "kernel/world/world_access.h"
#include "test_util.h"

namespace tendon {
namespace {

using detail::FramePhase;

// What the test scene costs, in ms per item of each phase.
struct CostModel {
  double per_bound_chain = 0.001;  // gather and budget, each
  double per_chain_phase = 0.01;   // pose, solve and writeback, each
  double per_ragdoll_substep = 0.002;
  int32_t substeps = 1;  // the frame's fixed substeps: the solve costs that many times
  double noise = 0;      // +- this share, deterministic
  uint32_t seed = 12345;

  static double Ms(FramePhase phase, int32_t items, void* user) {
    auto* m = static_cast<CostModel*>(user);
    double ms = 0;
    switch (phase) {
      case FramePhase::kGather:
      case FramePhase::kBudget: ms = m->per_bound_chain * items; break;
      case FramePhase::kPose:
      case FramePhase::kWriteback: ms = m->per_chain_phase * items; break;
      case FramePhase::kSolve: ms = m->per_chain_phase * items * m->substeps; break;
      case FramePhase::kRagdolls: ms = m->per_ragdoll_substep * items; break;
      case FramePhase::kPendulums: ms = 0; break;
    }
    if (m->noise > 0) {
      m->seed = m->seed * 1664525u + 1013904223u;
      ms *= 1.0 + m->noise * (static_cast<double>(m->seed >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0);
    }
    return ms;
  }
};

constexpr int kChains = 64;
constexpr int kRagdolls = 8;

// 64 four-node strands 1..64 m from the camera, and 8 two-part pendulums that never sleep.
struct Scene {
  std::unique_ptr<World> world;
  std::vector<std::unique_ptr<test::HostChain>> hosts;
  std::vector<ChainId> chains;
  std::vector<std::vector<Transform>> parts;
  CostModel cost;

  explicit Scene(WorldSettings s, bool test_clock = true) {
    s.ragdoll_sleep_speed = 0;  // every ragdoll is stepped every frame
    s.max_distance = INFINITY;
    world = test::MakeWorld(s);
    const ChainArchetypeSettings strand = test::Strand(4);
    const ChainArchetypeId a = world->BuildChainArchetype(strand).value();
    for (int i = 0; i < kChains; ++i) {
      hosts.push_back(std::make_unique<test::HostChain>(strand, Vec3{1.0f + static_cast<float>(i), 2, 0}));
      chains.push_back(world->BindChain(hosts.back()->Binding(a)).value());
    }
    const RagdollArchetypeId r = world->BuildRagdollArchetype(test::TwoPartPendulum()).value();
    parts.assign(kRagdolls, std::vector<Transform>(2));
    for (int i = 0; i < kRagdolls; ++i) {
      RagdollBinding b;
      b.archetype = r;
      b.placement.translation = {static_cast<float>(i) * 3.0f, 5, -5};
      b.angular_velocity = {0, 0, 1};
      b.output_parts = parts[i];
      EXPECT_TRUE(world->BindRagdoll(b).ok());
    }
    world->SetCamera({0, 2, 0});
    if (test_clock) detail::WorldAccess::SetPhaseClock(*world, {&CostModel::Ms, &cost});
  }
  // What the whole scene costs per frame on the test clock, nothing cut.
  double FullCost() const {
    return 2 * cost.per_bound_chain * kChains + 3 * cost.per_chain_phase * kChains +
           cost.per_ragdoll_substep * kRagdolls * 16;
  }
  const FrameStats& Step() { return world->Step(1.0f / 60.0f); }
};

WorldSettings Budgeted(float ms) {
  WorldSettings s;
  s.frame_budget_ms = ms;
  return s;
}

TEST(FrameBudget, ASceneCostingTwiceTheBudgetSettlesWithinTenFramesToWithinTenPercent) {
  Scene unbudgeted(WorldSettings{});
  const double full = unbudgeted.FullCost();
  EXPECT_NEAR(unbudgeted.Step().times.total_ms, full, 1e-9);  // the test clock is what the World reads

  const float budget = static_cast<float>(full / 2);
  Scene scene(Budgeted(budget));
  for (int frame = 1; frame <= 60; ++frame) {
    const FrameStats& s = scene.Step();
    if (frame == 1) {
      EXPECT_NEAR(s.times.total_ms, full, 1e-9) << "the first frame runs uncut";
    }
    if (frame > 10) {
      EXPECT_NEAR(s.times.total_ms, budget, 0.1 * budget) << "frame " << frame;
      EXPECT_LE(s.times.total_ms, budget * 1.0001) << "frame " << frame;
    }
    if (frame == 60) {
      // The chains took the cut (the ragdolls kept every substep), and the farthest went.
      EXPECT_EQ(s.budget_ragdoll_substeps, 16);
      EXPECT_EQ(s.ragdoll_substeps, 16);
      EXPECT_GT(s.culled_by_budget, 0);
      EXPECT_EQ(s.simulated_chains + s.culled_by_budget, kChains);
      EXPECT_EQ(s.budget_max_chains, s.simulated_chains);
      for (int i = 0; i < kChains; ++i) EXPECT_EQ(scene.world->IsSimulated(scene.chains[i]), i < s.simulated_chains);
    }
  }
}

TEST(FrameBudget, WhenTheLoadDropsEveryChainComesBackAndSnapsToTheAnimation) {
  Scene scene(WorldSettings{});
  const float budget = static_cast<float>(scene.FullCost() / 2);
  Scene budgeted(Budgeted(budget));
  for (int frame = 0; frame < 30; ++frame) budgeted.Step();
  const int32_t cut = budgeted.world->LastStats().culled_by_budget;
  ASSERT_GT(cut, 0);
  budgeted.cost.per_chain_phase /= 4;  // the load drops: the whole scene now fits
  ASSERT_LT(budgeted.FullCost(), 0.9 * budget);
  int restored_at = -1;
  int32_t woken = 0;
  for (int frame = 1; frame <= 30; ++frame) {
    const FrameStats& s = budgeted.Step();
    woken += s.snapped_wake;
    if (restored_at < 0 && s.culled_by_budget == 0) restored_at = frame;
  }
  ASSERT_GT(restored_at, 0) << "the budget never gave the chains back";
  EXPECT_LE(restored_at, 10);
  const FrameStats& s = budgeted.world->LastStats();
  EXPECT_EQ(s.simulated_chains, kChains);
  EXPECT_EQ(s.budget_max_chains, -1);
  EXPECT_EQ(s.budget_action, BudgetAction::kHeld);
  EXPECT_EQ(woken, cut) << "each chain the budget cut starts again at its animated pose";
}

TEST(FrameBudget, RagdollSubstepsGoOnlyAfterEveryChainAndNeverBelowTheFloor) {
  WorldSettings s;
  // Without chains the scene costs gather and budget (0.128 ms) plus 16 substeps of 8
  // ragdolls (0.256 ms); the budget leaves room for 9 substeps.
  s.frame_budget_ms = 0.3f;
  Scene nine(s);
  for (int frame = 0; frame < 30; ++frame) nine.Step();
  const FrameStats& a = nine.world->LastStats();
  EXPECT_EQ(a.simulated_chains, 0);
  EXPECT_EQ(a.budget_max_chains, 0);
  EXPECT_EQ(a.budget_ragdoll_substeps, 9);
  EXPECT_EQ(a.ragdoll_substeps, 9);
  EXPECT_LE(a.times.total_ms, 0.3);
  EXPECT_GE(a.times.total_ms, 0.9 * 0.3);
  // A budget under even 4 substeps: they stop at the floor and the budget says so.
  s.frame_budget_ms = 0.15f;
  s.budget_min_ragdoll_substeps = 4;
  Scene floor(s);
  int32_t fewest = 16;
  for (int frame = 0; frame < 30; ++frame) {
    const FrameStats& f = floor.Step();
    fewest = std::min(fewest, f.ragdoll_substeps);
  }
  EXPECT_EQ(fewest, 4);
  EXPECT_EQ(floor.world->LastStats().budget_ragdoll_substeps, 4);
  EXPECT_EQ(floor.world->LastStats().budget_action, BudgetAction::kAtFloor);
  // Room again: the substeps come back before any chain does.
  floor.cost.per_ragdoll_substep /= 8;
  floor.cost.per_bound_chain /= 8;
  bool substeps_first = true;
  for (int frame = 0; frame < 40; ++frame) {
    const FrameStats& f = floor.Step();
    if (f.simulated_chains > 0 && f.budget_ragdoll_substeps < 16) substeps_first = false;
  }
  EXPECT_TRUE(substeps_first);
  EXPECT_EQ(floor.world->LastStats().budget_ragdoll_substeps, 16);
  EXPECT_GT(floor.world->LastStats().simulated_chains, 0);
}

TEST(FrameBudget, InsideItsBandTheLimitsHoldStillThroughNoisyFrames) {
  Scene scene(WorldSettings{});
  const float budget = static_cast<float>(scene.FullCost() / 2);
  Scene noisy(Budgeted(budget));
  noisy.cost.noise = 0.1;  // every phase +-10%
  for (int frame = 0; frame < 20; ++frame) noisy.Step();
  int changes = 0;
  double sum = 0;
  int32_t cap = noisy.world->LastStats().budget_max_chains;
  for (int frame = 0; frame < 200; ++frame) {
    const FrameStats& s = noisy.Step();
    if (s.budget_max_chains != cap) ++changes;
    cap = s.budget_max_chains;
    sum += s.times.total_ms;
  }
  EXPECT_LE(changes, 2) << "the chain cap oscillates";
  EXPECT_NEAR(sum / 200, budget, 0.1 * budget);
  EXPECT_LE(sum / 200, budget);
}

TEST(FrameBudget, AHitchFrameCountsAtTheUsualSubstepCountAndCutsNothing) {
  Scene scene(WorldSettings{});
  const float budget = static_cast<float>(scene.FullCost() * 1.2);  // the scene fits at 1 substep
  Scene budgeted(Budgeted(budget));
  for (int frame = 0; frame < 20; ++frame) EXPECT_EQ(budgeted.Step().budget_action, BudgetAction::kHeld);
  budgeted.cost.substeps = 3;
  const FrameStats& hitch = budgeted.world->Step(3.0f / 60.0f);
  EXPECT_EQ(hitch.substeps, 3);
  EXPECT_GT(hitch.times.total_ms, budget);
  EXPECT_EQ(hitch.budget_action, BudgetAction::kHeld);
  budgeted.cost.substeps = 1;
  EXPECT_EQ(budgeted.Step().culled_by_budget, 0);
}

TEST(FrameBudget, OffOrNeverBindingItChangesNoBit) {
  // Real timing: a budget of a second a frame never binds.
  Scene off(WorldSettings{}, false);
  Scene loose(Budgeted(1000.0f), false);
  for (int frame = 0; frame < 120; ++frame) {
    const FrameStats& a = off.Step();
    const FrameStats& b = loose.Step();
    EXPECT_EQ(a.budget_action, BudgetAction::kOff);
    EXPECT_EQ(a.budget_max_chains, -1);
    EXPECT_EQ(a.budget_ragdoll_substeps, 0);
    EXPECT_EQ(b.budget_action, BudgetAction::kHeld);
    EXPECT_EQ(b.budget_max_chains, -1);
    EXPECT_EQ(b.budget_ragdoll_substeps, 16);
    EXPECT_GT(b.budget_estimate_ms, 0.0f);
    ASSERT_EQ(off.world->StateHash(), loose.world->StateHash()) << "frame " << frame;
  }
}

TEST(FrameBudget, ItCapsTheHostsMaxChainsAndNeverRaisesIt) {
  WorldSettings s;
  s.max_chains = 10;
  Scene capped(s);
  s.frame_budget_ms = static_cast<float>(capped.FullCost() * 10);  // ample
  Scene budgeted(s);
  for (int frame = 0; frame < 20; ++frame) EXPECT_EQ(budgeted.Step().simulated_chains, 10);
  EXPECT_EQ(budgeted.world->LastStats().budget_max_chains, -1);
  // Under a host cap of 40 chains, a budget that binds cuts below it, and when the load
  // drops it gives back exactly the host's cap and then no cap at all.
  WorldSettings t;
  t.max_chains = 40;
  Scene probe(t);
  // 40 chains cost 40 x 0.03 ms; the fixed part (gather, budget, ragdolls) 0.384 ms.
  t.frame_budget_ms = static_cast<float>(0.384 + 20 * 0.03);
  Scene tight(t);
  for (int frame = 0; frame < 30; ++frame) tight.Step();
  const FrameStats& cut = tight.world->LastStats();
  EXPECT_LT(cut.simulated_chains, 40);
  EXPECT_GT(cut.budget_max_chains, 0);
  EXPECT_LE(cut.budget_max_chains, 40);
  tight.cost.per_chain_phase /= 4;
  int actions_after = 0;
  for (int frame = 0; frame < 40; ++frame) {
    const FrameStats& f = tight.Step();
    EXPECT_LE(f.budget_max_chains, 40);
    if (frame >= 20 && f.budget_action != BudgetAction::kHeld) ++actions_after;
  }
  const FrameStats& back = tight.world->LastStats();
  EXPECT_EQ(back.simulated_chains, 40);
  EXPECT_EQ(back.budget_max_chains, -1) << "back to the host's cap, and no cap of its own";
  EXPECT_EQ(actions_after, 0) << "it keeps giving back what the host's cap forbids";
}

TEST(FrameBudget, AFloorAboveTheSubstepsIsTheSubstepsAndFewSubstepsNeedNoBudget) {
  WorldSettings s;
  s.ragdoll_substeps = 2;  // the floor's default, 4, is above it
  EXPECT_NE(test::MakeWorld(s), nullptr);
  s.frame_budget_ms = 0.05f;
  Scene scene(s);
  int32_t fewest = 99;
  for (int frame = 0; frame < 20; ++frame) fewest = std::min(fewest, scene.Step().ragdoll_substeps);
  EXPECT_EQ(fewest, 2) << "a floor above ragdoll_substeps never cuts them";
}

TEST(FrameBudget, UnderBeginStepTheHostsWorkBetweenTheCallsIsNotTendonsCost) {
  // Real time, with wide margins: 8 short chains cost microseconds (a millisecond under
  // emulation), the budget is 10 ms, and the host works 40 ms between BeginStep and
  // FinishStep. Counting the host's work would cut every chain.
  WorldSettings s;
  s.max_distance = INFINITY;
  s.frame_budget_ms = 10.0f;
  auto world = test::MakeWorld(s);
  const ChainArchetypeSettings strand = test::Strand(4);
  const ChainArchetypeId a = world->BuildChainArchetype(strand).value();
  std::vector<std::unique_ptr<test::HostChain>> hosts;
  for (int i = 0; i < 8; ++i) {
    hosts.push_back(std::make_unique<test::HostChain>(strand, Vec3{static_cast<float>(i), 0, 0}));
    ASSERT_TRUE(world->BindChain(hosts.back()->Binding(a)).ok());
  }
  for (int frame = 0; frame < 4; ++frame) {
    ASSERT_TRUE(world->BeginStep(1.0f / 60.0f));
    std::this_thread::sleep_for(std::chrono::milliseconds(40));  // the host's own work
    const FrameStats& f = world->FinishStep();
    EXPECT_GE(f.times.total_ms, 40.0) << "the frame's wall time holds the host's work";
    EXPECT_EQ(f.budget_action, BudgetAction::kHeld) << "frame " << frame;
    EXPECT_EQ(f.simulated_chains, 8);
    EXPECT_LT(f.budget_estimate_ms, 10.0f);
  }
}

TEST(FrameBudget, ARejectedFrameStillReportsTheLimitsInForce) {
  Scene scene(WorldSettings{});
  const float budget = static_cast<float>(scene.FullCost() / 2);
  Scene budgeted(Budgeted(budget));
  for (int frame = 0; frame < 20; ++frame) budgeted.Step();
  const int32_t cap = budgeted.world->LastStats().budget_max_chains;
  ASSERT_GT(cap, 0);
  const FrameStats& rejected = budgeted.world->Step(-1.0f);
  EXPECT_TRUE(rejected.dt_rejected);
  EXPECT_EQ(rejected.budget_max_chains, cap);
  EXPECT_EQ(rejected.budget_ragdoll_substeps, 16);
  EXPECT_EQ(rejected.budget_action, BudgetAction::kHeld);
}

TEST(FrameBudget, BadBudgetSettingsAreRefusedNamingTheField) {
  for (float ms : {-1.0f, NAN, INFINITY}) {
    WorldSettings s;
    s.frame_budget_ms = ms;
    auto r = World::Create(s);
    ASSERT_FALSE(r.ok()) << ms;
    EXPECT_EQ(r.error().code, ErrorCode::kOutOfRange);
    EXPECT_EQ(r.error().field, "frame_budget_ms");
  }
  for (int32_t floor : {0, 65, -3}) {
    WorldSettings s;
    s.budget_min_ragdoll_substeps = floor;
    auto r = World::Create(s);
    ASSERT_FALSE(r.ok()) << floor;
    EXPECT_EQ(r.error().field, "budget_min_ragdoll_substeps");
  }
}

}  // namespace
}  // namespace tendon
