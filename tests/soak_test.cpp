// The soak (issue 11): minutes of a busy world with hostile-ish use. Two hundred ragdolls
// in piles, four thousand chains and a dozen characters, on two workers, with random
// impulses, toggles, kinematic switches and character hits every second. Kinetic energy
// stays bounded, nothing goes non-finite, nothing sinks deep into the ground, and after the
// warm-up neither the heap nor the resident set grows: Step allocates nothing.
// Labelled "soak": `.ci/run` runs it once on the release build (scripts/test.sh leaves it
// out; run it with `ctest --test-dir build/release -L soak`).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "allocation_counter.h"
#include "stickman_rig.h"
#include "tendon/tbb_task_system.h"
#include "test_util.h"

namespace tendon::test {
namespace {

long ResidentKilobytes() {
  long pages = 0, resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  const int read = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return read == 2 ? resident * 4 : -1;
}

TEST(Soak, ABusyWorldStaysBoundedFiniteAndAllocationFreeForMinutes) {
  TbbTaskSystem tasks(2);
  WorldSettings ws;
  ws.tasks = tasks.hooks();
  ws.max_chains = 2500;
  ws.ragdoll_substeps = 8;
  auto w = MakeWorld(ws);
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{.planes = {StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  // Ragdolls: three-capsule limbs in ten piles of twenty.
  RagdollSettings limb;
  constexpr float kRadius = 0.06f, kHalf = 0.12f;
  for (int j = 0; j < 3; ++j) {
    PartSettings p;
    p.parent = j - 1;
    p.pose.translation = {0, 0.36f * (2 - j), 0};
    p.shape = {.type = PartShape::kCapsule, .radius = kRadius, .half_height = kHalf};
    p.joint.anchor = {0, 0.36f * (2 - j) + 0.18f, 0};
    limb.parts.push_back(p);
  }
  const RagdollArchetypeId limb_id = w->BuildRagdollArchetype(limb).value();
  constexpr int kRagdolls = 200;
  std::vector<std::vector<Transform>> parts(kRagdolls, std::vector<Transform>(3));
  std::vector<RagdollId> ragdolls;
  std::vector<Transform> kinematic(kRagdolls);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int i = 0; i < kRagdolls; ++i) {
    const float x = 3.0f * static_cast<float>(i % 10), y = 0.3f + 0.5f * static_cast<float>(i / 10);
    RagdollBinding b;
    b.archetype = limb_id;
    b.placement = Transform{{x + 0.1f * unit(rng), y, 0.1f * unit(rng)}, AxisAngle(Vec3{0, 0, 1}, 1.5f * unit(rng)), {1, 1, 1}};
    b.output_parts = parts[i];
    ragdolls.push_back(w->BindRagdoll(b).value());
    kinematic[i] = Transform{{x, y + 1.0f, 5.0f}, {}, {1, 1, 1}};
  }
  ASSERT_EQ(w->ReserveRagdollKinematicToggle(limb_id, kRagdolls).code, ErrorCode::kNone);
  // Chains: 4,000 five-bone strands on a grid, their roots swaying.
  ChainArchetypeSettings strand = Strand(5, 0.08f, {0, -1, 0});
  const ChainArchetypeId strand_id = w->BuildChainArchetype(strand).value();
  std::vector<std::unique_ptr<HostChain>> chains;
  for (int i = 0; i < 4000; ++i) {
    chains.push_back(std::make_unique<HostChain>(strand, Vec3{static_cast<float>(i % 80) * 0.5f, 2, -5.0f - static_cast<float>(i / 80) * 0.5f}));
    ASSERT_TRUE(w->BindChain(chains.back()->Binding(strand_id)).ok());
  }
  // Characters: a dozen stickmen, struck and activated in turn.
  const CharacterArchetypeId man = w->BuildCharacterArchetype(StickmanCharacter()).value();
  const SkeletonSettings skeleton = StickmanSkeleton();
  std::vector<Transform> models(12);
  std::vector<std::vector<Transform>> man_out(12, skeleton.rest_local);
  std::vector<CharacterId> men;
  for (int i = 0; i < 12; ++i) {
    models[i].translation = {static_cast<float>(i) * 2.0f, 1.0f, 8.0f};
    CharacterBinding b;
    b.archetype = man;
    b.model_world = &models[i];
    b.animated_local = skeleton.rest_local;
    b.output_local = man_out[i];
    men.push_back(w->BindCharacter(b).value());
  }
  std::vector<CharacterEvent> events(256);
  std::vector<Vec3> v(3), av(3);

  constexpr int kFrames = 60 * 60 * 12;  // 12 simulated minutes (about 70 s of wall time here)
  constexpr int kWarmup = 60 * 10;
  RagdollPartInfo info;
  ASSERT_EQ(w->GetRagdollPartInfo(limb_id, 0, &info).code, ErrorCode::kNone);
  const float part_mass = info.mass;  // every part: the same capsule
  ASSERT_GT(part_mass, 0.0f);
  // Bounds: the top of a pile is 10 m up and every impulse below adds at most 25 N s to a
  // 3.6 kg part: nothing may move faster than that allows, or hold more energy than every
  // part at that speed at once.
  const float speed_bound = 40.0f;  // a fall from the top of a pile (14 m/s), an impulse, a rebound
  const double energy_bound = 0.5 * kRagdolls * 3 * part_mass * 15.0 * 15.0;  // all at a 10 m fall's speed
  long allocations_after_warmup = 0, resident_after_warmup = 0, step_allocations = 0;
  double worst_energy = 0, worst_depth = 0;
  int64_t resets = 0;
  for (int f = 0; f < kFrames; ++f) {
    const float t = static_cast<float>(f) / 60.0f;
    for (std::size_t i = 0; i < chains.size(); i += 7) chains[i]->root_parent.translation.y = 2.0f + 0.3f * std::sin(t * 3.0f + static_cast<float>(i));
    if (f % 60 == 30) {  // once a second: impulses, toggles, kinematic switches, hits
      for (int k = 0; k < 10; ++k) {
        const int i = static_cast<int>(rng() % kRagdolls);
        const auto part = static_cast<int32_t>(rng() % 3);
        const Vec3 push = Vec3{unit(rng), unit(rng) + 1.0f, unit(rng)} * 10.0f;
        // A switched-off ragdoll refuses an impulse (kInactive, and its message allocates):
        // a host hitting whatever is near asks first.
        if (w->IsRagdollEnabled(ragdolls[i])) (void)w->ApplyRagdollImpulse(ragdolls[i], part, push, parts[i][0].translation);
        const int j = static_cast<int>(rng() % kRagdolls);
        (void)w->SetRagdollEnabled(ragdolls[j], !w->IsRagdollEnabled(ragdolls[j]));
        const int m = static_cast<int>(rng() % kRagdolls);
        // Pinned where its root is now (as a character pins its hips), or let go.
        kinematic[m] = parts[m][0];
        (void)w->SetRagdollKinematicRoot(ragdolls[m], rng() % 2 ? &kinematic[m] : nullptr);
      }
      const int c = static_cast<int>(rng() % men.size());
      if (rng() % 2) {
        (void)w->HitCharacter(men[c], 2, Vec3{0, 0, 6}, models[c].translation);
      } else if (!w->ActivateCharacter(men[c], {.impulse = {unit(rng) * 20.0f, 30, 0}, .strength = 0.3f})) {
        (void)w->DeactivateCharacter(men[c], 0.3f);
      }
    }
    const long before_step = g_allocations.load();
    const FrameStats& st = w->Step(1.0f / 60.0f);
    if (f > kWarmup) step_allocations += g_allocations.load() - before_step;
    resets += st.reset_non_finite;
    while (w->DrainCharacterEvents(events) > 0) {
    }

    if (f == kWarmup) {
      allocations_after_warmup = g_allocations.load();
      resident_after_warmup = ResidentKilobytes();
    }
    if (f % 30 != 0) continue;
    // The checks, twice a second: energy, speed, finiteness, depth.
    double energy = 0;
    for (int i = 0; i < kRagdolls; ++i) {
      ASSERT_EQ(w->GetRagdollVelocities(ragdolls[i], v, av).code, ErrorCode::kNone);
      for (int j = 0; j < 3; ++j) {
        ASSERT_TRUE(IsFinite(parts[i][j]) && IsFinite(v[j]) && IsFinite(av[j])) << "ragdoll " << i << " frame " << f;
        ASSERT_LT(Length(v[j]), speed_bound) << "ragdoll " << i << " frame " << f;
        energy += 0.5 * part_mass * LengthSquared(v[j]);
        const Vec3 axis = Rotate(parts[i][j].rotation, Vec3{0, kHalf, 0});
        const float lowest = parts[i][j].translation.y - std::fabs(axis.y) - kRadius;
        worst_depth = std::max(worst_depth, static_cast<double>(-lowest));
      }
    }
    worst_energy = std::max(worst_energy, energy);
    ASSERT_LT(energy, energy_bound) << "frame " << f;
    for (std::size_t i = 0; i < chains.size(); i += 97)
      for (const Transform& x : chains[i]->output) ASSERT_TRUE(IsFinite(x));
    for (const auto& out : man_out)
      for (const Transform& x : out) ASSERT_TRUE(IsFinite(x));
  }
  // Counted before any EXPECT: a failure's message allocates.
  const long allocations = g_allocations.load() - allocations_after_warmup;
  const long resident_end = ResidentKilobytes();
  EXPECT_EQ(step_allocations, 0) << "Step allocates nothing";
  EXPECT_EQ(allocations, 0) << "Step and the controls allocate nothing after the warm-up";
  EXPECT_LT(worst_depth, 0.15) << "m into the ground (piles under random impulses)";
  EXPECT_EQ(resets, 0) << "nothing in the soak should ever go non-finite";
  if (resident_after_warmup > 0 && resident_end > 0) {
    EXPECT_LT(resident_end - resident_after_warmup, 2048) << "KB of resident growth after the warm-up";
  }
  std::printf("soak: %d frames, worst kinetic energy %.0f J (bound %.0f), worst depth %.1f mm, resident %ld -> %ld KB\n",
              kFrames, worst_energy, energy_bound, worst_depth * 1e3, resident_after_warmup, resident_end);
}

}  // namespace
}  // namespace tendon::test
