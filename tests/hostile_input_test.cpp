// Hostile input and misuse (issue 11): every defect found by trying Tendon as a new user
// would, pinned. Nothing non-finite reaches a host buffer or a query result, every such
// frame is counted, misuse is loud, and absurd sizes are refused.
#include <cfloat>
#include <climits>
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "character_test_util.h"
#include "kernel/world/fixed_clock.h"
#include "stickman_rig.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;

bool UnitRotations(const std::vector<Transform>& t, float tolerance = 1e-4f) {
  for (const Transform& x : t) {
    if (!(std::fabs(std::sqrt(Dot(x.rotation, x.rotation)) - 1.0f) <= tolerance)) return false;
  }
  return true;
}

bool AllFinite(const std::vector<Transform>& t) {
  for (const Transform& x : t) {
    if (!IsFinite(x)) return false;
  }
  return true;
}

// ---- the clock ----

TEST(Clock, AHugeDtRunsTheClampAndReportsTheRestAsDropped) {
  detail::FixedClock clock(60.0, 3);
  const detail::FixedClock::Tick huge = clock.Advance(1.7e18);  // a nanosecond timestamp as seconds
  EXPECT_FALSE(huge.rejected);
  EXPECT_EQ(huge.substeps, 3);
  EXPECT_GT(huge.dropped_seconds, 1.6e18);
  // The clock still runs: the next ordinary frame is one substep.
  EXPECT_EQ(clock.Advance(1.0 / 60.0).substeps, 1);
  EXPECT_EQ(clock.Advance(1.0 / 60.0).substeps, 1);
}

TEST(Clock, AWorldSteppedWithAHugeDtKeepsStepping) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(4);
  HostChain host(s);
  ASSERT_TRUE(w->BindChain(host.Binding(w->BuildChainArchetype(s).value())).ok());
  const FrameStats& huge = w->Step(FLT_MAX);
  EXPECT_EQ(huge.substeps, 3);
  EXPECT_GT(huge.dropped_seconds, 1e38f);
  EXPECT_EQ(w->Step(kStep).substeps, 1);
  EXPECT_EQ(w->LastStats().simulated_chains, 1);
}

// ---- non-finite and overflowing input ----

TEST(HostInput, ANonFiniteRootFrameIsBadInputNotCulledByDistance) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(4);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain good(s), bad(s);
  ASSERT_TRUE(w->BindChain(good.Binding(a)).ok());
  ASSERT_TRUE(w->BindChain(bad.Binding(a)).ok());
  w->Step(kStep);
  bad.root_parent.translation.x = NAN;
  const FrameStats& st = w->Step(kStep);
  EXPECT_EQ(st.culled_by_distance, 0);
  EXPECT_EQ(st.snapped_bad_input, 1);
  EXPECT_EQ(st.simulated_chains, 1);
  EXPECT_TRUE(AllFinite(bad.output));
}

TEST(HostInput, ANonFiniteCameraIsIgnoredAndCounted) {
  auto w = MakeWorld();
  w->SetCamera(Vec3{NAN, 0, 0});
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1);
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 0);
}

TEST(HostInput, ANonFiniteWindSampleIsIgnoredAndCounted) {
  auto w = MakeWorld();
  w->SetWindSampler(WindSampler{[](double, void*) { return Vec3{INFINITY, 0, 0}; }, nullptr});
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1);
}

TEST(HostInput, ARootRotationALittleOffUnitIsNormalisedNotAmplified) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(5);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain unit(s), scaled(s, {0, 0, 1});
  const Quat q = AxisAngle(NormalizeOr(Vec3{1, 2, 3}, Vec3{0, 0, 1}), 0.7f);
  unit.root_parent.rotation = q;
  scaled.root_parent.rotation = Quat{q.x * 1.01f, q.y * 1.01f, q.z * 1.01f, q.w * 1.01f};
  ASSERT_TRUE(w->BindChain(unit.Binding(a)).ok());
  ASSERT_TRUE(w->BindChain(scaled.Binding(a)).ok());
  for (int f = 0; f < 30; ++f) w->Step(kStep);
  EXPECT_TRUE(UnitRotations(scaled.output)) << "|q| = 1.01 used to come out as 1.0201";
  for (std::size_t k = 0; k < unit.output.size(); ++k) {
    EXPECT_NEAR(Dot(unit.output[k].rotation, scaled.output[k].rotation), 1.0f, 1e-4f) << k;
  }
  EXPECT_EQ(w->LastStats().snapped_bad_input, 0);
}

TEST(HostInput, RotationsFarFromUnitOrHugeAreBadInputAndNeverReachTheOutput) {
  for (const Quat bad : {Quat{0, 0, 0, 3}, Quat{1e30f, 0, 0, 1e30f}, Quat{0, 0, 0, 0.1f}}) {
    auto w = MakeWorld();
    ChainArchetypeSettings s = Strand(4);
    HostChain host(s);
    ASSERT_TRUE(w->BindChain(host.Binding(w->BuildChainArchetype(s).value())).ok());
    w->Step(kStep);
    host.root_parent.rotation = bad;
    EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1) << bad.w;
    host.root_parent.rotation = Quat{};
    host.animated[2].rotation = bad;
    EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1) << bad.w;
    EXPECT_TRUE(AllFinite(host.output));
    EXPECT_TRUE(UnitRotations(host.output));
  }
}

TEST(HostInput, TransformsThatOverflowWhenComposedReachNoOutputAndNoQuery) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(4, 0.1f, {1, 0, 0});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  const ChainId id = w->BindChain(host.Binding(a)).value();
  w->Step(kStep);
  // Every number is finite; their composition is not.
  host.root_parent = Transform{{3e38f, 0, 0}, AxisAngle(Vec3{0, 0, 1}, 0.3f), {1, 1, 1}};
  for (Transform& t : host.animated) t.translation = {3e38f, 3e38f, 0};
  host.animated[0].translation = {};
  for (int f = 0; f < 5; ++f) {
    w->Step(kStep);
    EXPECT_TRUE(AllFinite(host.output)) << f;
    std::vector<Vec3> p(4, Vec3{1, 2, 3});
    const Error e = w->GetChainNodePositions(id, p);
    if (e.code == ErrorCode::kNone) {
      for (const Vec3& x : p) EXPECT_TRUE(IsFinite(x));
    } else {
      EXPECT_EQ(e.code, ErrorCode::kNotFinite);
    }
  }
}

TEST(HostInput, ACharacterWhoseModelFrameIsNaNForAFrameWritesNothingNonFinite) {
  auto w = MakeWorld();
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton(), Transform{{0, 1, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  ASSERT_TRUE(w->ActivateCharacter(id, {.strength = 0.5f}));
  w->Step(kStep);
  host.model.translation.y = NAN;
  EXPECT_GE(w->Step(kStep).snapped_bad_input, 1);
  EXPECT_TRUE(AllFinite(host.output));
  EXPECT_TRUE(AllFinite(host.world));
  host.model.translation.y = 1;
  for (int f = 0; f < 10; ++f) w->Step(kStep);
  EXPECT_TRUE(AllFinite(host.output));
  EXPECT_TRUE(AllFinite(host.world));
}

// ---- misuse is loud ----

TEST(MisuseDeathTest, ValueOfAnErrorResultAbortsWithTheError) {
  WorldSettings bad;
  bad.fixed_hz = 0;
  EXPECT_DEATH((void)World::Create(bad).value(), "Result::value\\(\\) on an error: out_of_range fixed_hz");
}

TEST(Misuse, NullOutputsAreErrorsAndNullHitsOnlyAnswer) {
  auto w = MakeWorld();
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton(), Transform{{0, 1, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  EXPECT_EQ(w->GetCharacterPartInfo(a, 0, nullptr).code, ErrorCode::kNullBuffer);
  EXPECT_EQ(w->GetCharacterState(id, nullptr).code, ErrorCode::kNullBuffer);
  EXPECT_EQ(w->GetCharacterRecoveryRoot(id, 0.1f, nullptr).code, ErrorCode::kNullBuffer);
  EXPECT_EQ(w->GetRagdollPartInfo(RagdollArchetypeId{}, 0, nullptr).code, ErrorCode::kStaleHandle);
  EXPECT_TRUE(w->RaycastStatic(Vec3{0, 5, 0}, Vec3{0, -1, 0}, 10, nullptr));
  EXPECT_FALSE(w->RaycastStatic(Vec3{0, 5, 0}, Vec3{0, 1, 0}, 10, nullptr));
  w->Step(kStep);
  EXPECT_TRUE(w->RaycastRagdolls(Vec3{0, 1.9f, 5}, Vec3{0, 0, -1}, 10, nullptr));  // the head
}

TEST(Misuse, ActivateAndHitSayWhyTheyRefused) {
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton());
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  Error why;
  EXPECT_FALSE(w->ActivateCharacter(CharacterId{}, {}, &why));
  EXPECT_EQ(why.code, ErrorCode::kStaleHandle);
  EXPECT_FALSE(w->ActivateCharacter(id, {.release_blend_seconds = INFINITY}, &why));  // blending out forever
  EXPECT_EQ(why.code, ErrorCode::kNotFinite);
  EXPECT_EQ(why.field, "release_blend_seconds");
  EXPECT_FALSE(w->ActivateCharacter(id, {.strength = 2.0f}, &why));
  EXPECT_EQ(why.field, "strength");
  EXPECT_TRUE(w->ActivateCharacter(id, {}, &why));
  EXPECT_EQ(why.code, ErrorCode::kNone);
  EXPECT_FALSE(w->ActivateCharacter(id, {}, &why));
  EXPECT_EQ(why.code, ErrorCode::kInUse);
  EXPECT_FALSE(w->HitCharacter(id, 99, Vec3{1, 0, 0}, Vec3{}, {}, &why));
  EXPECT_EQ(why.code, ErrorCode::kBadReference);
  EXPECT_FALSE(w->HitCharacter(id, 0, Vec3{1, 0, 0}, Vec3{}, {.blend_seconds = INFINITY}, &why));
  EXPECT_EQ(why.field, "blend_seconds");
  EXPECT_TRUE(w->HitCharacter(id, 0, Vec3{1, 0, 0}, Vec3{}, {}, &why));
}

TEST(Misuse, SetMaxChainsRefusesANegativeBudget) {
  auto w = MakeWorld();
  EXPECT_EQ(w->SetMaxChains(-5).code, ErrorCode::kOutOfRange);
  EXPECT_EQ(w->SetMaxChains(10).code, ErrorCode::kNone);
}

TEST(Misuse, FindCharacterPartMatchesNamesAsTheHumanoidTableDoes) {
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  const int32_t shoulder = w->FindCharacterPart(a, "l_shoulder");
  ASSERT_GE(shoulder, 0);
  EXPECT_EQ(w->FindCharacterPart(a, "L_Shoulder"), shoulder);
  EXPECT_EQ(w->FindCharacterPart(a, "rig:L-SHOULDER"), shoulder);
  EXPECT_EQ(w->FindCharacterPart(a, "HIPS"), w->FindCharacterPart(a, "hips"));
  EXPECT_EQ(w->FindCharacterPart(a, "tail"), -1);
}

TEST(Misuse, EveryEnumAHostLogsHasAName) {
  for (auto r : {CharacterEndReason::kReleased, CharacterEndReason::kEvicted, CharacterEndReason::kExpired,
                 CharacterEndReason::kRemoved})
    EXPECT_STRNE(ToString(r), "unknown");
  for (auto f : {CharacterFacing::kUp, CharacterFacing::kDown, CharacterFacing::kSide}) EXPECT_STRNE(ToString(f), "unknown");
  for (auto v : {LandingVerdict::kFlying, LandingVerdict::kLanded, LandingVerdict::kCeiling})
    EXPECT_STRNE(ToString(v), "unknown");
  EXPECT_STREQ(ToString(ErrorCode::kReentrant), "reentrant");
  EXPECT_STREQ(ToString(ErrorCode::kInUse), "in_use");
}

// ---- absurd sizes ----

TEST(Sizes, AbsurdCountsAreRefusedWithAnError) {
  WorldSettings ws;
  ws.tasks = TaskHooks{[](TaskFn*, int32_t, int32_t, void*, void*) -> void* { return nullptr; },
                       [](void*, void*) {}, nullptr, INT32_MAX};
  auto created = World::Create(ws);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().field, "tasks.worker_count");
  auto w = MakeWorld();
  RagdollSettings box;
  box.parts.push_back({.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}}, .mass = 1});
  const RagdollArchetypeId a = w->BuildRagdollArchetype(box).value();
  EXPECT_EQ(w->ReserveRagdollKinematicToggle(a, INT32_MAX).code, ErrorCode::kCapacity);
  EXPECT_EQ(w->ReserveRagdollKinematicToggle(a, kMaxRagdollInstances + 1).code, ErrorCode::kCapacity);
  EXPECT_EQ(w->ReserveRagdollKinematicToggle(a, 16).code, ErrorCode::kNone);
  EXPECT_EQ(w->ReserveRagdollKinematicToggle(a, INT32_MIN).code, ErrorCode::kNone);  // gives back, clamped at 0
}

TEST(Sizes, BindUnbindChurnDoesNotGrowTheEventQueue) {
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(w->UnbindCharacter(w->BindCharacter(host.Binding(a)).value()).code, ErrorCode::kNone);
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  // One bound character: room for 64 + 4 events. 50 toggles make 100; the rest is dropped
  // (a queue that grew with every bind would have held them all).
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(w->ActivateCharacter(id));
    ASSERT_EQ(w->DeactivateCharacter(id).code, ErrorCode::kNone);
  }
  EXPECT_EQ(w->Step(kStep).dropped_character_events, 100 - 68);
  std::vector<CharacterEvent> events(200);
  EXPECT_EQ(w->DrainCharacterEvents(events), 68);
}

// ---- state and reports ----

TEST(State, AHugeImpulseLeavesFiniteVelocitiesAndNoReset) {
  WorldSettings ws;
  ws.gravity = {};
  auto w = MakeWorld(ws);
  RagdollSettings s;
  s.parts.push_back(PartSettings{});
  s.parts[0].mass = 0.01f;
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> out(1);
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = out;
  const RagdollId id = w->BindRagdoll(b).value();
  w->Step(kStep);
  ASSERT_EQ(w->ApplyRagdollImpulse(id, 0, Vec3{3e38f, 0, 0}, out[0].translation + Vec3{0, 3e38f, 0}).code, ErrorCode::kNone);
  ASSERT_EQ(w->ApplyRagdollImpulse(id, 0, Vec3{3e38f, 0, 0}, out[0].translation).code, ErrorCode::kNone);
  std::vector<Vec3> v(1), av(1);
  ASSERT_EQ(w->GetRagdollVelocities(id, v, av).code, ErrorCode::kNone);
  EXPECT_TRUE(IsFinite(v[0]) && IsFinite(av[0]));
  EXPECT_NEAR(Length(v[0]), s.parts[0].max_linear_speed, 1.0f);  // at the cap, along the impulse
  EXPECT_GT(v[0].x, 0);
  ASSERT_EQ(w->SetRagdollEnabled(id, false).code, ErrorCode::kNone);  // a disabled one reports them too
  ASSERT_EQ(w->GetRagdollVelocities(id, v, av).code, ErrorCode::kNone);
  EXPECT_TRUE(IsFinite(v[0]) && IsFinite(av[0]));
  ASSERT_EQ(w->SetRagdollEnabled(id, true).code, ErrorCode::kNone);
  EXPECT_EQ(w->Step(kStep).reset_non_finite, 0);
  EXPECT_TRUE(IsFinite(out[0]));
}

TEST(State, ACharactersRagdollCannotBeUnboundBehindItsBack) {
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton());
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  EXPECT_EQ(w->UnbindRagdoll(w->CharacterRagdoll(id)).code, ErrorCode::kInUse);
  EXPECT_TRUE(w->IsValid(w->CharacterRagdoll(id)));
  ASSERT_EQ(w->UnbindCharacter(id).code, ErrorCode::kNone);
}

TEST(State, ANonFiniteKinematicRootIsHeldAndCounted) {
  auto w = MakeWorld();
  RagdollSettings s;
  s.parts.push_back(PartSettings{});
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> out(1);
  Transform root{{0, 1, 0}, {}, {1, 1, 1}};
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = out;
  b.kinematic_root = &root;
  ASSERT_TRUE(w->BindRagdoll(b).ok());
  w->Step(kStep);
  root.translation.x = NAN;
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1);
  EXPECT_TRUE(IsFinite(out[0]));
}

TEST(State, OptionChecksAgreeOnDurationsAndBlends) {
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton());
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  EXPECT_EQ(w->DeactivateCharacter(id, INFINITY).code, ErrorCode::kNotFinite);
  ASSERT_TRUE(w->ActivateCharacter(id, {.strength = 1.0f}));
  // A denormal duration would flush to zero inside Step: it means at once.
  ASSERT_EQ(w->GoLimp(id, 1e-40f).code, ErrorCode::kNone);
  w->Step(kStep);
  CharacterState st;
  ASSERT_EQ(w->GetCharacterState(id, &st).code, ErrorCode::kNone);
  EXPECT_EQ(st.strength, 0.0f);
  EXPECT_EQ(w->GoLimp(id, INFINITY).code, ErrorCode::kNotFinite);
}

// ---- re-entrancy ----

struct Reentry {
  World* world = nullptr;
  ChainId chain{};
  Error unbind{};
  uint64_t nested_frame = 0;
  int calls = 0;
};

TEST(Reentrancy, ACallbackThatChangesTheWorldIsRefusedAndTheFrameIsSafe) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(4);
  HostChain host(s);
  Reentry r;
  r.world = w.get();
  r.chain = w->BindChain(host.Binding(w->BuildChainArchetype(s).value())).value();
  w->SetSimulatePredicate(SimulatePredicate{[](ChainId id, Vec3, void* user) {
                                              auto* re = static_cast<Reentry*>(user);
                                              ++re->calls;
                                              re->unbind = re->world->UnbindChain(id);
                                              re->nested_frame = re->world->Step(kStep).frame;
                                              return true;
                                            },
                                            &r});
  w->Step(kStep);
  const FrameStats& st = w->Step(kStep);
  EXPECT_EQ(r.calls, 2);
  EXPECT_EQ(r.unbind.code, ErrorCode::kReentrant);
  EXPECT_EQ(r.nested_frame, st.frame);  // a nested Step returns the frame in progress's stats
  EXPECT_TRUE(w->IsValid(r.chain));
  EXPECT_EQ(st.simulated_chains, 1);
  w->SetSimulatePredicate({});
  EXPECT_EQ(w->UnbindChain(r.chain).code, ErrorCode::kNone);  // fine again between Steps
}

// A profiler's callbacks run inside the frame from its first zone to its last mark: one
// that calls back into the World must meet a World that knows it is stepping, not recurse
// (a zone_begin calling Step opened the next frame's zone, and so on, until the stack ran
// out) or unbind what the frame is about to step.
struct ZoneReentry {
  World* world = nullptr;
  int depth = 0, most_depth = 0, calls = 0;
  int32_t unbound = 0;
  bool began = false;
};

TEST(Reentrancy, AProfilerCallbackThatStepsOrUnbindsIsRefusedFromTheFirstZoneToTheLastMark) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(4);
  HostChain host(s);
  ZoneReentry z;
  z.world = w.get();
  const ChainId chain = w->BindChain(host.Binding(w->BuildChainArchetype(s).value())).value();
  ProfilerHooks h{};
  h.user_context = &z;
  h.zone_begin = [](const char* name, uint32_t, uint32_t, void* user) {
    if (std::string_view(name) == "frame" || std::string_view(name) == "begin_step" ||
        std::string_view(name) == "finish_step") {
      auto* re = static_cast<ZoneReentry*>(user);
      ++re->calls;
      re->most_depth = std::max(re->most_depth, ++re->depth);
      (void)re->world->Step(kStep);
      re->began = re->began || re->world->BeginStep(kStep);
      (void)re->world->FinishStep();
      re->unbound += re->world->UnbindAll();
      --re->depth;
    }
  };
  h.zone_end = [](const char*, uint32_t, void*) {};
  h.frame_mark = [](uint64_t, void* user) {
    auto* re = static_cast<ZoneReentry*>(user);
    ++re->calls;
    (void)re->world->Step(kStep);
    re->unbound += re->world->UnbindAll();
  };
  ASSERT_TRUE(w->SetProfilerHooks(h).ok());
  const uint64_t before = w->Step(kStep).frame;
  EXPECT_EQ(w->Step(kStep).frame, before + 1);  // one frame per outer Step, none nested
  ASSERT_TRUE(w->BeginStep(kStep));
  EXPECT_EQ(w->FinishStep().frame, before + 2);
  EXPECT_GE(z.calls, 6);
  EXPECT_EQ(z.most_depth, 1);
  EXPECT_FALSE(z.began);
  EXPECT_EQ(z.unbound, 0);
  EXPECT_TRUE(w->IsValid(chain));
  ASSERT_TRUE(w->SetProfilerHooks({}).ok());
  EXPECT_EQ(w->UnbindAll(), 1);  // fine again between frames
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// ---- build refuses what cannot be simulated ----

TEST(Build, PartsTooSmallOrTooLargeForFiniteMassPropertiesAreRefused) {
  auto w = MakeWorld();
  for (float radius : {1e-12f, 1e10f}) {
    RagdollSettings s;
    s.parts.push_back(PartSettings{});
    s.parts[0].shape = {.type = PartShape::kSphere, .radius = radius};
    s.parts[0].mass = 1.0f;
    auto r = w->BuildRagdollArchetype(s);
    ASSERT_FALSE(r.ok()) << radius;
    EXPECT_EQ(r.error().item, 0);
    EXPECT_EQ(r.error().field, "parts[0].shape.radius");
  }
  RagdollSettings denormal;
  denormal.parts.push_back(PartSettings{});
  denormal.parts[0].mass = 1e-40f;  // its inverse mass is infinite
  auto r = w->BuildRagdollArchetype(denormal);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "parts[0].mass");
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

TEST(Units, ARigAuthoredInCentimetresIsRefusedWithTheReason) {
  auto w = MakeWorld();
  CharacterSettings cm = StickmanCharacter();
  for (Transform& t : cm.skeleton.rest_local) t.translation = t.translation * 100.0f;
  auto r = w->BuildCharacterArchetype(cm);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "skeleton.rest_local");
  EXPECT_NE(r.error().message.find("centimetres"), std::string::npos) << r.error().message;
  EXPECT_TRUE(w->BuildCharacterArchetype(StickmanCharacter()).ok());
}

TEST(Units, ThePendulumsSyntheticLeverIsInMetresNotStuds) {
  auto w = MakeWorld();
  Transform joint{{0, 2, 0}, {}, {1, 1, 1}}, offset{};
  PendulumBinding b;
  b.joint_world = &joint;
  b.accessory_offset = &offset;  // centre at the hinge: the synthetic lever
  const PendulumId id = w->BindPendulum(b).value();
  w->Step(kStep);
  Vec3 bob;
  ASSERT_EQ(w->GetPendulumState(id, &bob, nullptr).code, ErrorCode::kNone);
  EXPECT_NEAR(Length(bob - joint.translation), 0.21f, 1e-3f);  // 0.75 studs
}

TEST(Units, LandingRulesDefaultToTheReferenceInMetres) {
  const LandingRules rules;
  EXPECT_NEAR(rules.speed_threshold, 12.0f * 0.28f, 1e-4f);
  EXPECT_NEAR(rules.ground_distance, 4.5f * 0.28f, 1e-4f);
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// Found by tests/fuzz/fuzz_world.cpp: a denormal dt made the velocities a character
// estimates from its last two frames infinite (speed NaN in GetCharacterState).
TEST(HostInput, ADenormalFrameTimeLeavesEveryCharacterQueryFinite) {
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton());
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  w->Step(kStep);
  host.model.translation.x = 0.5f;
  w->Step(1e-39f);
  CharacterState st;
  ASSERT_EQ(w->GetCharacterState(id, &st).code, ErrorCode::kNone);
  EXPECT_TRUE(IsFinite(st.root_velocity) && std::isfinite(st.speed));
  ASSERT_TRUE(w->ActivateCharacter(id));
  for (int f = 0; f < 5; ++f) w->Step(kStep);
  ASSERT_EQ(w->GetCharacterState(id, &st).code, ErrorCode::kNone);
  EXPECT_TRUE(IsFinite(st.root_velocity) && std::isfinite(st.speed));
  EXPECT_TRUE(AllFinite(host.output));
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// Found by tests/fuzz/fuzz_build.cpp: a placement rotation of |q| ~ 1e30 passed the
// finiteness check, overflowed the bind pose, and the first reset wrote it back.
TEST(HostInput, ARagdollPlacementFarFromAUnitRotationIsRefusedAndOneNearItNormalised) {
  auto w = MakeWorld();
  RagdollSettings s;
  s.parts.push_back(PartSettings{});
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> far(1), near(1), unit(1);
  RagdollBinding b;
  b.archetype = a;
  b.placement = Transform{{1, 2, 3}, Quat{1e30f, 0, 0, 1e30f}, {1, 1, 1}};
  b.output_parts = far;
  auto r = w->BindRagdoll(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotUnitRotation);
  const Quat q = AxisAngle(Vec3{0, 0, 1}, 0.5f);
  b.placement.rotation = Quat{q.x * 1.2f, q.y * 1.2f, q.z * 1.2f, q.w * 1.2f};
  b.output_parts = near;
  ASSERT_TRUE(w->BindRagdoll(b).ok());
  b.placement.rotation = q;
  b.output_parts = unit;
  ASSERT_TRUE(w->BindRagdoll(b).ok());
  EXPECT_LT(Length(near[0].translation - unit[0].translation), 1e-5f);
  EXPECT_NEAR(Dot(near[0].rotation, unit[0].rotation), 1.0f, 1e-5f);
  Transform root{{0, 1, 0}, {}, {1, 1, 1}};
  EXPECT_EQ(w->SetRagdollKinematicRoot(w->BindRagdoll(RagdollBinding{.archetype = a, .output_parts = far}).value(), &root).code,
            ErrorCode::kNone);
  w->Step(kStep);
  root.rotation = Quat{1e30f, 0, 0, 1e30f};  // finite, not a rotation: held and counted
  EXPECT_EQ(w->Step(kStep).snapped_bad_input, 1);
  EXPECT_TRUE(IsFinite(far[0]));
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// Found by the soak: a kinematic root set 5 m from its ragdoll pulled the joints so far in
// one substep that the rigid kernel's Turn (one Newton step of renormalisation) went
// negative, the quaternion grew without bound, and the ragdoll reset every frame, forever.
TEST(State, AKinematicRootFarFromItsRagdollPullsItAlongWithoutResets) {
  auto w = MakeWorld();
  RagdollSettings limb;
  for (int j = 0; j < 3; ++j) {
    PartSettings p;
    p.parent = j - 1;
    p.pose.translation = {0, 0.72f - 0.36f * j, 0};
    p.shape = {.type = PartShape::kCapsule, .radius = 0.06f, .half_height = 0.12f};
    p.joint.anchor = {0, 0.9f - 0.36f * j, 0};
    limb.parts.push_back(p);
  }
  const RagdollArchetypeId a = w->BuildRagdollArchetype(limb).value();
  std::vector<Transform> out(3);
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = out;
  const RagdollId id = w->BindRagdoll(b).value();
  w->Step(kStep);
  Transform root{{0, 1.0f, 5.0f}, AxisAngle(Vec3{1, 0, 0}, 2.5f), {1, 1, 1}};
  ASSERT_EQ(w->SetRagdollKinematicRoot(id, &root).code, ErrorCode::kNone);
  int resets = 0;
  for (int f = 0; f < 120; ++f) resets += w->Step(kStep).reset_non_finite;
  EXPECT_LE(resets, 1);
  for (const Transform& t : out) EXPECT_TRUE(IsFinite(t));
  EXPECT_LT(Length(out[1].translation - root.translation), 1.0f) << "the limb hangs from its root again";
}

// Found by fuzz_world: a kinematic root moved to x = 3e38 (finite) under render
// interpolation. The child's pose relative to the root, composed back, overflowed, and a
// zero-substep frame wrote NaN into the host's part frames.
TEST(State, AKinematicRootThatOverflowsWhenComposedWritesNothingAndIsCounted) {
  for (const float dt : {1e-29f, kStep}) {
    auto w = MakeWorld();
    RagdollSettings limb;
    for (int j = 0; j < 2; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * j, 0};
      p.joint.anchor = {0, 1.15f - 0.3f * j, 0};
      limb.parts.push_back(p);
    }
    const RagdollArchetypeId a = w->BuildRagdollArchetype(limb).value();
    std::vector<Transform> out(2);
    Transform root{{0, 2, 0}, {}, {1, 1, 1}};
    RagdollBinding b;
    b.archetype = a;
    b.output_parts = out;
    b.kinematic_root = &root;
    ASSERT_TRUE(w->BindRagdoll(b).ok());
    root = Transform{{3e38f, -1.5e-4f, -0.69f}, Normalize(Quat{-0.704394f, 0.166493f, 0.653166f, 0.222449f}), {1, 1, 1}};
    int resets = 0;
    for (int f = 0; f < 3; ++f) resets += w->Step(dt).reset_non_finite;
    for (const Transform& t : out) EXPECT_TRUE(IsFinite(t)) << "dt " << dt;
    EXPECT_GE(resets, 1) << "dt " << dt << ": the frame that could not be written is counted";
    root = Transform{{0, 2, 0}, {}, {1, 1, 1}};
    for (int f = 0; f < 60; ++f) w->Step(kStep);
    for (const Transform& t : out) EXPECT_TRUE(IsFinite(t));
    EXPECT_LT(Length(out[0].translation - root.translation), 1e-4f) << "the root part follows its root again";
    EXPECT_LT(Length(out[1].translation - root.translation), 0.5f) << "and the limb hangs under it";
  }
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// ---- lifetimes a real engine needs ----

TEST(Lifetimes, ARebindToMovedBuffersKeepsTheChainsSwingBitForBit) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(6, 0.08f);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  auto reference = std::make_unique<HostChain>(s), moving = std::make_unique<HostChain>(s);
  ASSERT_TRUE(w->BindChain(reference->Binding(a)).ok());
  const ChainId id = w->BindChain(moving->Binding(a)).value();
  auto drive = [&](int f) {
    for (HostChain* h : {reference.get(), moving.get()})
      h->root_parent.translation = Vec3{0.3f * std::sin(0.1f * static_cast<float>(f)), 0, 0};
  };
  for (int f = 0; f < 30; ++f) {
    drive(f);
    w->Step(kStep);
  }
  // An ECS chunk move: the host copies its buffers elsewhere and frees the old ones.
  auto moved = std::make_unique<HostChain>(*moving);
  moving.reset();
  ASSERT_EQ(w->RebindChain(id, moved->Binding(a)).code, ErrorCode::kNone);
  for (int f = 30; f < 60; ++f) {
    for (HostChain* h : {reference.get(), moved.get()})
      h->root_parent.translation = Vec3{0.3f * std::sin(0.1f * static_cast<float>(f)), 0, 0};
    w->Step(kStep);
    for (std::size_t k = 0; k < moved->output.size(); ++k) ASSERT_EQ(moved->output[k], reference->output[k]) << f << " " << k;
  }
  // The checks of BindChain hold, and the archetype stays.
  ChainBinding other = moved->Binding(w->BuildChainArchetype(Strand(6, 0.05f)).value());
  EXPECT_EQ(w->RebindChain(id, other).code, ErrorCode::kBadReference);
  ChainBinding short_buffer = moved->Binding(a);
  short_buffer.output_local = short_buffer.output_local.first(2);
  EXPECT_EQ(w->RebindChain(id, short_buffer).code, ErrorCode::kNullBuffer);
  EXPECT_EQ(w->RebindChain(id, reference->Binding(a)).code, ErrorCode::kBadReference) << "another chain's buffer";
  EXPECT_EQ(w->RebindChain(ChainId{}, moved->Binding(a)).code, ErrorCode::kStaleHandle);
}

TEST(Lifetimes, ARebindKeepsAnActiveCharactersRagdollAndState) {
  auto w = MakeWorld();
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  auto host = std::make_unique<HostCharacter>(StickmanSkeleton(), Transform{{0, 1, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host->Binding(a)).value();
  ASSERT_TRUE(w->ActivateCharacter(id, {.impulse = {0, 0, 10}}));
  for (int f = 0; f < 20; ++f) w->Step(kStep);
  const RagdollId ragdoll = w->CharacterRagdoll(id);
  auto moved = std::make_unique<HostCharacter>(*host);
  host.reset();
  ASSERT_EQ(w->RebindCharacter(id, moved->Binding(a)).code, ErrorCode::kNone);
  EXPECT_EQ(w->CharacterRagdoll(id), ragdoll);
  CharacterState st;
  ASSERT_EQ(w->GetCharacterState(id, &st).code, ErrorCode::kNone);
  EXPECT_TRUE(st.active);
  const Transform before = moved->world[0];
  w->Step(kStep);
  EXPECT_LT(Length(moved->world[0].translation - before.translation), 0.1f) << "no snap: the body carries on";
  EXPECT_TRUE(AllFinite(moved->output));
}

TEST(Lifetimes, ArchetypesAreRemovedOnlyWhenNothingIsBoundAndTheirIdsGoStale) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(3);
  const ChainArchetypeId chain_a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  const ChainId chain = w->BindChain(host.Binding(chain_a)).value();
  EXPECT_EQ(w->RemoveChainArchetype(chain_a).code, ErrorCode::kInUse);
  ASSERT_EQ(w->UnbindChain(chain).code, ErrorCode::kNone);
  EXPECT_EQ(w->RemoveChainArchetype(chain_a).code, ErrorCode::kNone);
  EXPECT_EQ(w->ChainBoneCount(chain_a), 0);
  EXPECT_EQ(w->BindChain(host.Binding(chain_a)).error().code, ErrorCode::kStaleHandle);
  EXPECT_EQ(w->RemoveChainArchetype(chain_a).code, ErrorCode::kStaleHandle);

  RagdollSettings box;
  box.parts.push_back({.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}}, .mass = 1});
  const RagdollArchetypeId box_a = w->BuildRagdollArchetype(box).value();
  std::vector<Transform> out(1);
  const RagdollId r = w->BindRagdoll(RagdollBinding{.archetype = box_a, .output_parts = out}).value();
  EXPECT_EQ(w->RemoveRagdollArchetype(box_a).code, ErrorCode::kInUse);
  ASSERT_EQ(w->UnbindRagdoll(r).code, ErrorCode::kNone);
  EXPECT_EQ(w->RemoveRagdollArchetype(box_a).code, ErrorCode::kNone);
  EXPECT_EQ(w->RagdollPartCount(box_a), 0);

  const CharacterArchetypeId man = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter someone(StickmanSkeleton());
  const CharacterId c = w->BindCharacter(someone.Binding(man)).value();
  const RagdollId owned = w->CharacterRagdoll(c);
  EXPECT_EQ(w->RemoveCharacterArchetype(man).code, ErrorCode::kInUse);
  ASSERT_EQ(w->UnbindCharacter(c).code, ErrorCode::kNone);
  EXPECT_FALSE(w->IsValid(owned));
  EXPECT_EQ(w->RemoveCharacterArchetype(man).code, ErrorCode::kNone);
  EXPECT_EQ(w->CharacterPartCount(man), 0);
  EXPECT_EQ(w->BindCharacter(someone.Binding(man)).error().code, ErrorCode::kStaleHandle);
  w->Step(kStep);
}

TEST(Lifetimes, UnbindAllHandsEveryBoneBackAndEndsActiveCharacters) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(4);
  HostChain chain(s);
  chain.root_parent.rotation = AxisAngle(Vec3{0, 0, 1}, 1.0f);
  ASSERT_TRUE(w->BindChain(chain.Binding(w->BuildChainArchetype(s).value())).ok());
  Transform joint{{0, 1, 0}, {}, {1, 1, 1}}, offset{{0, -0.3f, 0}, {}, {1, 1, 1}};
  const Transform rest_offset = offset;
  ASSERT_TRUE(w->BindPendulum(PendulumBinding{.joint_world = &joint, .accessory_offset = &offset}).ok());
  const CharacterArchetypeId man = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter someone(StickmanSkeleton(), Transform{{0, 1, 0}, {}, {1, 1, 1}});
  const CharacterId c = w->BindCharacter(someone.Binding(man)).value();
  ASSERT_TRUE(w->ActivateCharacter(c, {.impulse = {5, 0, 0}}));
  std::vector<CharacterEvent> events(8);
  for (int f = 0; f < 30; ++f) {
    joint.rotation = AxisAngle(Vec3{0, 0, 1}, 0.05f * static_cast<float>(f));
    w->Step(kStep);
    (void)w->DrainCharacterEvents(events);
  }
  EXPECT_EQ(w->UnbindAll(), 3) << "a chain, a pendulum and a character (its ragdoll goes with it)";
  for (std::size_t k = 0; k < chain.output.size(); ++k) EXPECT_EQ(chain.output[k], chain.animated[k]);
  EXPECT_EQ(offset, rest_offset);
  for (std::size_t k = 0; k < someone.output.size(); ++k) EXPECT_EQ(someone.output[k], someone.animated[k]);
  ASSERT_EQ(w->DrainCharacterEvents(events), 1);
  EXPECT_EQ(events[0].type, CharacterEvent::Type::kEnded);
  EXPECT_EQ(events[0].reason, CharacterEndReason::kRemoved);
  EXPECT_EQ(w->BoundCharacterCount(), 0);
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// Extreme but valid: a 1 kg character struck with 20 N s at 4 XPBD substeps. The parts
// are held to their speed caps and the joints pull them back; the solver clamps, it does
// not reset every frame.
TEST(State, ALightCharacterStruckHardAtFewSubstepsClampsInsteadOfResetting) {
  WorldSettings ws;
  ws.ragdoll_substeps = 4;
  auto w = MakeWorld(ws);
  ASSERT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  CharacterSettings light = StickmanCharacter();
  light.total_mass = 1.0f;
  const CharacterArchetypeId a = w->BuildCharacterArchetype(light).value();
  HostCharacter host(StickmanSkeleton(), Transform{{0, 1, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  ASSERT_TRUE(w->ActivateCharacter(id));
  w->Step(kStep);
  ASSERT_TRUE(w->HitCharacter(id, 1, Vec3{20, 0, 0}, host.world[1].translation));
  int resets = 0;
  for (int f = 0; f < 120; ++f) resets += w->Step(kStep).reset_non_finite;
  EXPECT_EQ(resets, 0);
  EXPECT_TRUE(AllFinite(host.output));
  CharacterState st;
  ASSERT_EQ(w->GetCharacterState(id, &st).code, ErrorCode::kNone);
  EXPECT_TRUE(std::isfinite(st.speed));
}

// The get-up recipe (issue 11, defect 12): the body was thrown 1.5 m from where the host's
// model frame stood; the host moves model_world to the recovery root and deactivates with
// a crossfade in the same frame. In the world (HandBackSpace::kAuto for a fallen body) the
// pose does not jump and fades into the animation without sliding back; held under the
// model frame (kModel) it jumps by the model's move, as every hand-back did before.
struct HandBack {
  float jump = 0;          // m: the hips' move across the hand-back frame
  bool approaches = true;  // the hips only ever get closer to the animated hips
  float end_gap = 0;       // m: hips from the animated hips when the blend is done
};

HandBack GetUp(HandBackSpace space) {
  auto w = MakeWorld(LastSubstepOutputs());
  EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  const SkeletonSettings skeleton = StickmanSkeleton();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(skeleton, Transform{{0, 0.6f, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  w->Step(kStep);
  CharacterActivateOptions fall;
  fall.strength = 0.0f;
  fall.launch_velocity = {4, 0, 0};
  EXPECT_TRUE(w->ActivateCharacter(id, fall));
  for (int f = 0; f < 150; ++f) w->Step(kStep);
  const Vec3 lying = host.world[0].translation;
  EXPECT_GT(lying.x, 1.0f) << "it was thrown away from its model frame";
  Transform root;
  EXPECT_EQ(w->GetCharacterRecoveryRoot(id, 0.0f, &root).code, ErrorCode::kNone);
  host.model = Compose(root, Relative(host.animated[0], Transform{}));  // the root bone at the recovery root
  EXPECT_EQ(w->DeactivateCharacter(id, 0.5f, space).code, ErrorCode::kNone);
  HandBack r;
  w->Step(kStep);
  r.jump = Length(host.world[0].translation - lying);
  const Vec3 animated_hips = Compose(host.model, host.animated[0]).translation;
  float gap = Length(host.world[0].translation - animated_hips);
  for (int f = 0; f < 40; ++f) {
    w->Step(kStep);
    const float now = Length(host.world[0].translation - animated_hips);
    r.approaches = r.approaches && now <= gap + 1e-4f;
    gap = now;
  }
  r.end_gap = gap;
  return r;
}

TEST(HandBack, TheGetUpRecipeInOneFrameDoesNotJump) {
  const HandBack world = GetUp(HandBackSpace::kAuto);
  const HandBack model = GetUp(HandBackSpace::kModel);
  std::printf("hand-back after moving the model frame: world space jumps %.3f m, model space %.3f m\n", world.jump,
              model.jump);
  EXPECT_LT(world.jump, 0.05f);
  EXPECT_TRUE(world.approaches) << "it fades into the animation without sliding back";
  EXPECT_LT(world.end_gap, 1e-4f) << "and ends on it";
  EXPECT_GT(model.jump, 0.5f) << "in model space the pose rides the model's move";
  EXPECT_STREQ(ToString(HandBackSpace::kWorld), "world");
  auto w = MakeWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton());
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  EXPECT_EQ(w->DeactivateCharacter(id, 0.2f, static_cast<HandBackSpace>(9)).code, ErrorCode::kOutOfRange);
}

// Fuzz finding (tests/fuzz/corpus/build/regression_centre_of_mass_not_finite): a part whose
// derived centre of mass was not finite built, and every bind wrote -inf into the host's
// part frames. The build now refuses it by part, and a bind whose frames overflow once
// composed with the body frames is refused by name.
TEST(Build, AStartingFrameThatOverflowsWhenComposedIsRefusedAtBind) {
  auto w = MakeWorld();
  RagdollSettings s;
  PartSettings p;
  p.pose.translation = {3e38f, 0, 0};  // finite, built far out
  s.parts.push_back(p);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
  std::vector<Transform> out(1);
  RagdollBinding b;
  b.archetype = a;
  b.placement = Transform{{3e38f, 0, 0}, {}, {1, 1, 1}};  // finite too: the sum is not
  b.output_parts = out;
  auto bound = w->BindRagdoll(b);
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().code, ErrorCode::kNotFinite);
  EXPECT_EQ(bound.error().field, "placement");
  EXPECT_TRUE(AllFinite(out)) << "nothing was written";
}

}  // namespace
}  // namespace tendon::test
