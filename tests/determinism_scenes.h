// tests/determinism_scenes.h: the busy scenes whose state hashes pin results down: the
// same for any worker count (determinism_test.cpp) and the same as recorded
// (golden_hash_test.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernel/world/world_access.h"
#include "stickman_rig.h"
#include "test_util.h"

namespace tendon::test {

// Chains of three topologies (one with a collider), pendulums, 20 three-part limbs falling
// onto a plane and touching, and six stickman characters (limp, powered and anchored,
// struck, deactivated), 240 frames at a varying frame rate. The state hash after each frame.
// The golden hashes were recorded before render interpolation, which changes what chains
// write (in the hash) but not what they simulate: they run it off.
// With `split_step` each frame is World::BeginStep then World::FinishStep; with
// `hanging_chains` the characters also write their world pose, and six more chains hang
// from it (from a character's neck, reading its output) and from the ragdolls' last parts:
// chains whose lane waits for the ragdoll phase. The golden hashes are of the default.
inline std::vector<uint64_t> RunScene(TaskHooks hooks, Isa isa = Isa::kAuto, bool render_interpolation = true,
                                      bool split_step = false, bool hanging_chains = false) {
  WorldSettings ws;
  ws.tasks = hooks;
  ws.isa = isa;
  ws.render_interpolation = render_interpolation;
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
  // Ragdolls: a three-part limb falling onto a plane, 20 of them (three blocks of lanes).
  EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  RagdollSettings limb;
  for (int j = 0; j < 3; ++j) {
    PartSettings p;
    p.parent = j - 1;
    p.pose.translation = {0, 1.0f - 0.3f * j, 0};
    p.joint.anchor = {0, 1.15f - 0.3f * j, 0};
    p.joint.type = j == 2 ? JointType::kHinge : JointType::kSwingTwist;
    p.joint.hinge_min_degrees = -10;
    p.joint.hinge_max_degrees = 120;
    limb.parts.push_back(p);
  }
  const RagdollArchetypeId limb_id = w->BuildRagdollArchetype(limb).value();
  std::vector<std::vector<Transform>> limbs(20, std::vector<Transform>(3));
  for (int i = 0; i < 20; ++i) {
    RagdollBinding b;
    b.archetype = limb_id;
    b.placement = Transform{{static_cast<float>(i), 1.0f + 0.1f * i, 0}, AxisAngle(Vec3{0, 0, 1}, 0.3f * i), {1, 1, 1}};
    b.angular_velocity = {0, 0, 1.0f + 0.2f * i};
    b.output_parts = limbs[i];
    EXPECT_TRUE(w->BindRagdoll(b).ok());
  }
  // Characters (the stickman's skeleton in 3D): limp, powered and anchored, struck.
  const CharacterArchetypeId man = w->BuildCharacterArchetype(StickmanCharacter()).value();
  const SkeletonSettings man_skeleton = StickmanSkeleton();
  std::vector<Transform> models(6);
  std::vector<std::vector<Transform>> man_out(6, man_skeleton.rest_local);
  std::vector<std::vector<Transform>> man_world(6, std::vector<Transform>(man_skeleton.rest_local.size()));
  std::vector<CharacterId> men;
  for (int i = 0; i < 6; ++i) {
    models[i].translation = {static_cast<float>(i) * 1.5f, 1.0f, 6.0f};
    CharacterBinding b;
    b.archetype = man;
    b.model_world = &models[i];
    b.animated_local = man_skeleton.rest_local;
    b.output_local = man_out[i];
    if (hanging_chains) b.output_world = man_world[i];
    men.push_back(w->BindCharacter(b).value());
  }
  std::vector<std::unique_ptr<HostChain>> hanging;
  if (hanging_chains) {
    for (int i = 0; i < 6; ++i) {
      hanging.push_back(std::make_unique<HostChain>(kinds[1]));
      ChainBinding b = hanging.back()->Binding(ids[1]);
      // Three hang from a character's neck; three from a limb's last part.
      b.root_parent_world = i < 3 ? &man_world[i][1] : &limbs[i][2];
      EXPECT_TRUE(w->BindChain(b).ok());
    }
  }
  std::vector<uint64_t> hashes;
  bool saw_pairs = false;
  int32_t most_islands = 0;
  for (int f = 0; f < 240; ++f) {
    const float t = f / 60.0f;
    for (std::size_t i = 0; i < models.size(); ++i) models[i].translation.x = static_cast<float>(i) * 1.5f + std::sin(t) * 0.5f;
    if (f == 20) {
      for (int i = 0; i < 3; ++i) w->ActivateCharacter(men[i], {.impulse = {5.0f * static_cast<float>(i), 20, 0}, .strength = 0.0f});
      for (int i = 3; i < 5; ++i) w->ActivateCharacter(men[i], {.strength = 1.0f, .anchored = true});
    }
    if (f == 60) w->HitCharacter(men[5], 3, Vec3{0, 0, 8}, models[5].translation);
    if (f == 90) {
      EXPECT_TRUE(w->GoLimp(men[3], 0.3f).ok());
    }
    if (f == 150) {
      EXPECT_TRUE(w->DeactivateCharacter(men[0], 0.2f).ok());
    }
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      hosts[i]->root_parent.rotation = AxisAngle(Vec3{0, 1, 0}, std::sin(t * 2.0f + i));
      hosts[i]->root_parent.translation.y = std::sin(t * 3.0f + i) * 0.3f;
    }
    for (std::size_t i = 0; i < joints.size(); ++i) joints[i].rotation = AxisAngle(Vec3{0, 0, 1}, std::sin(t * 4.0f + i));
    w->SetCamera(Vec3{std::sin(t) * 20.0f + 20.0f, 0, std::cos(t * 0.5f) * 15.0f + 15.0f});
    const float dt = f % 11 == 0 ? 0.05f : 1.0f / (45.0f + (f % 5) * 20.0f);
    if (split_step) {
      EXPECT_TRUE(w->BeginStep(dt));
      w->FinishStep();
    } else {
      w->Step(dt);
    }
    hashes.push_back(w->StateHash());
    saw_pairs = saw_pairs || w->LastStats().contact_ragdoll_pairs > 0;
    most_islands = std::max(most_islands, w->LastStats().ragdoll_islands);
  }
  EXPECT_TRUE(saw_pairs) << "the scene must exercise contacts between ragdolls";
  // Islands are handed to the workers one at a time (Islands::ForEachBatch): several at once.
  EXPECT_GE(most_islands, 3) << "the scene must solve several islands of touching ragdolls in one frame";
  return hashes;
}

// A heap of 288 crates touching in a 6 x 6 x 8 block is one island of more than 512
// pairs with a contact, which is split by colour (in parallel within a colour) instead of
// run as one task:
// that path is bit-identical for any worker count too.
inline std::vector<uint64_t> RunHeap(const TaskHooks& hooks, bool* saw_coloured, Isa isa = Isa::kAuto) {
  WorldSettings ws;
  ws.tasks = hooks;
  ws.isa = isa;
  auto w = MakeWorld(ws);
  std::vector<std::vector<Transform>> out;
  BindCrateHeap(*w, &out);
  std::vector<uint64_t> hashes;
  for (int f = 0; f < 20; ++f) {
    w->Step(1.0f / 60.0f);
    hashes.push_back(w->StateHash());
    *saw_coloured = *saw_coloured || w->LastStats().coloured_ragdoll_pairs > 0;
  }
  return hashes;
}

// Two stacks of crates settle and fall asleep; then a crate thrown into one wakes it by
// contact. The broad phase tests the pairs in parallel and wakes sleepers serially, in
// sweep order: the pairs and the wakes are the same for any worker count. `woken`: how
// many sleeping crates the throw woke (the most awake at once after it).
inline std::vector<uint64_t> RunWakingStacks(const TaskHooks& hooks, int32_t* woken) {
  WorldSettings ws;
  ws.tasks = hooks;
  ws.ragdoll_substeps = 8;
  auto w = MakeWorld(ws);
  RagdollSettings crate;
  PartSettings box;
  box.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  box.mass = 1;
  crate.parts.push_back(box);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(crate).value();
  EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  constexpr int kStacked = 24;
  std::vector<std::vector<Transform>> out(kStacked + 1, std::vector<Transform>(1));
  for (int i = 0; i < kStacked; ++i) {
    const int stack = i / 12, k = i % 12;
    RagdollBinding b;
    b.archetype = a;
    b.placement = Transform{{3.0f * static_cast<float>(stack) + 0.205f * static_cast<float>(k % 2),
                             0.1f + 0.201f * static_cast<float>(k / 4), 0.205f * static_cast<float>((k / 2) % 2)},
                            {}, {1, 1, 1}};
    b.output_parts = out[i];
    EXPECT_TRUE(w->BindRagdoll(b).ok());
  }
  std::vector<uint64_t> hashes;
  for (int f = 0; f < 240; ++f) {
    w->Step(1.0f / 60.0f);
    hashes.push_back(w->StateHash());
  }
  EXPECT_EQ(w->LastStats().sleeping_ragdolls, kStacked) << "the stacks must be asleep before the throw";
  RagdollBinding thrown;
  thrown.archetype = a;
  thrown.placement = Transform{{-1.0f, 0.35f, 0.1f}, {}, {1, 1, 1}};
  thrown.linear_velocity = {8, 1, 0};
  thrown.output_parts = out[kStacked];
  EXPECT_TRUE(w->BindRagdoll(thrown).ok());
  *woken = 0;
  for (int f = 0; f < 90; ++f) {
    w->Step(1.0f / 60.0f);
    hashes.push_back(w->StateHash());
    *woken = std::max(*woken, kStacked - w->LastStats().sleeping_ragdolls);
  }
  return hashes;
}

// Four piles of 16 two-part ragdolls (a crate and a jointed ball), 5 m apart, dropped onto
// a plane so that each pile's ragdolls land on one another. Bound pile by pile, so each
// pile fills whole blocks of lanes for any block width up to 16: the frame's pairs leave
// the piles' blocks apart, and with `domains` each pile's blocks run their substeps as one
// task (RagdollSystem::BuildDomains); without, substep by substep. `last_domains`: the
// last frame's domains, when every pile has landed. With `slab`, a slab wide enough for
// piles 0 and 1 to land on it sleeps on the plane before they fall: kSlabWakes is woken by
// them and joins their blocks into one domain; kSlabFrozen stays asleep (frozen), so its
// block is not stepped and both piles' domains only read it; kSlabFrozenBesideAwake stays
// asleep too, but a second slab falling far away shares its block, which the kernel then
// steps: the frozen slab's block joins both piles' domains again.
enum class Slab { kNone, kSlabWakes, kSlabFrozen, kSlabFrozenBesideAwake };
inline std::vector<uint64_t> RunDomainPiles(const TaskHooks& hooks, bool domains, int32_t* last_domains,
                                            Slab slab_kind = Slab::kNone) {
  WorldSettings ws;
  ws.tasks = hooks;
  ws.ragdoll_substeps = 8;
  auto w = MakeWorld(ws);
  detail::WorldAccess::SetRagdollDomains(*w, domains);
  EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  RagdollSettings s;
  PartSettings crate;
  crate.shape = {.type = PartShape::kBox, .half_extents = {0.2f, 0.2f, 0.2f}};
  crate.mass = 10.0f;
  s.parts.push_back(crate);
  PartSettings ball;
  ball.shape = {.type = PartShape::kSphere, .radius = 0.15f};
  ball.mass = 3.0f;
  ball.parent = 0;
  ball.pose = Transform{{0, 0.4f, 0}, {}, {1, 1, 1}};
  ball.joint.anchor = {0, 0.25f, 0};
  ball.joint.normal_half_cone_degrees = ball.joint.plane_half_cone_degrees = 30.0f;
  s.parts.push_back(ball);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  constexpr int kPiles = 4, kPerPile = 16;
  std::vector<std::vector<Transform>> out(kPiles * kPerPile + 2, std::vector<Transform>(2));
  std::vector<uint64_t> hashes;
  if (slab_kind != Slab::kNone) {
    RagdollSettings slab;
    PartSettings box;
    box.shape = {.type = PartShape::kBox, .half_extents = {2.6f, 0.1f, 1.0f}};
    box.mass = 50.0f;
    slab.parts.push_back(box);
    const RagdollArchetypeId slab_id = w->BuildRagdollArchetype(slab).value();
    RagdollBinding b;
    b.archetype = slab_id;
    b.placement = Transform{{2.5f, 0.1f, 0.15f}, {}, {1, 1, 1}};
    b.freeze_when_asleep = slab_kind != Slab::kSlabWakes;
    b.output_parts = std::span<Transform>(out[kPiles * kPerPile].data(), 1);
    const RagdollId id = w->BindRagdoll(b).value();
    for (int f = 0; f < 300 && !w->IsRagdollAsleep(id); ++f) {
      w->Step(1.0f / 60.0f);
      hashes.push_back(w->StateHash());
    }
    EXPECT_TRUE(w->IsRagdollAsleep(id)) << "the slab sleeps before the piles fall on it";
    if (slab_kind == Slab::kSlabFrozenBesideAwake) {
      // The next lane of the slab's group (lanes go in bind order): in the same block for
      // any block width. It falls from 60 m, 40 m away, for longer than the run.
      b.placement = Transform{{60.0f, 60.0f, 0}, {}, {1, 1, 1}};
      b.output_parts = std::span<Transform>(out[kPiles * kPerPile + 1].data(), 1);
      EXPECT_TRUE(w->BindRagdoll(b).ok());
    }
  }
  for (int i = 0; i < kPiles * kPerPile; ++i) {
    const int pile = i / kPerPile, k = i % kPerPile;
    RagdollBinding b;
    b.archetype = a;
    b.placement = Transform{{5.0f * static_cast<float>(pile) + 0.3f * static_cast<float>(k % 2),
                             0.7f + 0.7f * static_cast<float>(k / 2), 0.3f * static_cast<float>((k / 2) % 2)},
                            AxisAngle(Vec3{0.3f, 1, 0.2f}, 0.4f * static_cast<float>(k)), {1, 1, 1}};
    b.angular_velocity = {0.3f * static_cast<float>(k % 3), 0, 0.2f * static_cast<float>(pile)};
    b.output_parts = out[i];
    EXPECT_TRUE(w->BindRagdoll(b).ok());
  }

  for (int f = 0; f < 90; ++f) {
    w->Step(1.0f / 60.0f);
    hashes.push_back(w->StateHash());
    *last_domains = detail::WorldAccess::RagdollDomains(*w);
  }
  if (slab_kind != Slab::kNone) {
    EXPECT_EQ(w->LastStats().sleeping_ragdolls > 0, slab_kind != Slab::kSlabWakes) << "the slab sleeps on only if frozen";
  }
  return hashes;
}

}  // namespace tendon::test
