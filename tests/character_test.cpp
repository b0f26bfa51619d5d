// Ragdoll characters at run time: toggling, momentum at activation, whole-body impulses,
// powered and anchored bodies, hits, going limp, the hand-back crossfade, reading the
// fallen body, the budget and events, output of the whole pose, chains riding the
// ragdoll, the planar stickman's toggle soak, and the landing and throwing rules.
#include <atomic>
#include <algorithm>
#include <cmath>
#include <string>
#include <cstdlib>
#include <limits>
#include <new>

#include "character_test_util.h"
#include "kernel/character/character_archetype.h"
#include "stickman_rig.h"

#include "allocation_counter.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;
constexpr float kPi = 3.14159265f;
constexpr float kRadToDeg = 180.0f / kPi;

// A world with a ground plane and one archetype of Godette's humanoid.
struct Scene {
  std::unique_ptr<World> world;
  SkeletonSettings skeleton = Godette(VrmNames());
  CharacterArchetypeId archetype;
  std::vector<std::unique_ptr<HostCharacter>> hosts;

  explicit Scene(WorldSettings ws = {}, bool ground = true) {
    world = MakeWorld(ws);
    if (ground) {
      EXPECT_TRUE(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
    }
    CharacterSettings s;
    s.skeleton = skeleton;
    auto built = world->BuildCharacterArchetype(s);
    EXPECT_TRUE(built.ok()) << built.error().message;
    archetype = built.value();
  }
  HostCharacter& Add(Transform at = {}) {
    hosts.push_back(std::make_unique<HostCharacter>(skeleton, at));
    HostCharacter& h = *hosts.back();
    auto id = world->BindCharacter(h.Binding(archetype));
    EXPECT_TRUE(id.ok()) << id.error().message;
    h.id = id.value();
    return h;
  }
  int32_t Bone(const char* name) const {
    for (std::size_t b = 0; b < skeleton.names.size(); ++b)
      if (skeleton.names[b] == name) return static_cast<int32_t>(b);
    return -1;
  }
  int32_t Part(const char* name) const { return world->FindCharacterPart(archetype, name); }
  void Steps(int n) {
    for (int i = 0; i < n; ++i) world->Step(kStep);
  }
  std::vector<CharacterEvent> Events() {
    std::vector<CharacterEvent> all(64);
    all.resize(world->DrainCharacterEvents(all));
    return all;
  }
};

void ForwardKinematicsOf(const SkeletonSettings& sk, const Transform& model, const std::vector<Transform>& local,
                         std::vector<Transform>& world) {
  detail::ForwardKinematics(sk.parents, model, local.data(), world.data());
}
void ForwardKinematics(const HostCharacter& h, const Scene& s, std::vector<Transform>& world) {
  ForwardKinematicsOf(s.skeleton, h.model, h.animated, world);
}

bool SamePose(const std::vector<Transform>& a, const std::vector<Transform>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

TEST(Character, InactiveCharactersShowTheAnimationCostNothingAndStillTakeRays) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& a = s.Add(Transform{{0, 0, 0}, {}, {1, 1, 1}});
  s.Add(Transform{{3, 0, 0}, {}, {1, 1, 1}});
  const int32_t arm = s.Bone("leftLowerArm");
  a.animated[arm].rotation = Normalize(AxisAngle(Vec3{0, 0, 1}, 0.5f) * a.animated[arm].rotation);
  const FrameStats& st = s.world->Step(kStep);
  EXPECT_EQ(st.bound_characters, 2);
  EXPECT_EQ(st.active_characters, 0);
  EXPECT_EQ(st.disabled_ragdolls, 2);
  EXPECT_EQ(st.simulated_ragdolls, 0) << "switched-off ragdolls are not stepped";
  EXPECT_TRUE(SamePose(a.output, a.animated));
  // A ray at the animated forearm finds it, as part LeftLowerArm of this character.
  const Vec3 mid = Lerp(a.world[arm].translation, a.world[s.Bone("leftHand")].translation, 0.5f);
  RaycastHit hit;
  ASSERT_TRUE(s.world->RaycastRagdolls(mid + Vec3{0, 0, 2}, {0, 0, -1}, 5, &hit));
  EXPECT_EQ(s.world->CharacterOfRagdoll(hit.ragdoll), a.id);
  EXPECT_EQ(hit.part, s.Part("LeftLowerArm"));
}

TEST(Character, ActivationKeepsTheMotionOfTheLastTwoFrames) {
  TENDON_NEED_SHARED_DATA();
  Scene s(LastSubstepOutputs(), false);
  HostCharacter& h = s.Add(Transform{{0, 1, 0}, {}, {1, 1, 1}});
  // Runs at 3 m/s along +X while turning at 1 rad/s about Y.
  for (int f = 0; f < 10; ++f) {
    h.model.translation.x += 3.0f * kStep;
    h.model.rotation = Normalize(AxisAngle(Vec3{0, 1, 0}, 1.0f * kStep) * h.model.rotation);
    s.world->Step(kStep);
  }
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  const int32_t n = s.world->CharacterPartCount(s.archetype);
  std::vector<Vec3> v(n), w(n);
  ASSERT_EQ(s.world->GetRagdollVelocities(s.world->CharacterRagdoll(h.id), v, w).code, ErrorCode::kNone);
  CharacterState state;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_NEAR(state.root_velocity.x + 0.0f, 3.0f, 0.2f) << "the hips keep running";
  for (int32_t j = 0; j < n; ++j) EXPECT_NEAR(w[j].y, 1.0f, 0.02f) << "part " << j << " keeps turning";
  // The mass-weighted speed: 3 m/s plus the turn about the model's origin (at most ~0.3).
  EXPECT_NEAR(state.speed, 3.0f, 0.35f);
  const float hips_x = h.world[s.Bone("hips")].translation.x;
  s.world->Step(kStep);
  EXPECT_NEAR(h.world[s.Bone("hips")].translation.x - hips_x, 3.0f * kStep, 0.01f);
}

TEST(Character, AWholeBodyImpulseGivesEveryPartTheSameVelocityChange) {
  TENDON_NEED_SHARED_DATA();
  Scene s(WorldSettings{}, false);
  HostCharacter& h = s.Add();
  s.world->Step(kStep);
  const Vec3 impulse{70, 140, 0};
  EXPECT_EQ(s.world->ApplyCharacterImpulse(h.id, impulse).code, ErrorCode::kInactive);
  CharacterActivateOptions o;
  o.impulse = impulse;
  ASSERT_TRUE(s.world->ActivateCharacter(h.id, o));
  CharacterState state;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  const Vec3 dv = impulse * (1.0f / state.total_mass);
  const int32_t n = s.world->CharacterPartCount(s.archetype);
  std::vector<Vec3> v0(n), w0(n), v1(n), w1(n);
  const RagdollId rag = s.world->CharacterRagdoll(h.id);
  EXPECT_TRUE(s.world->GetRagdollVelocities(rag, v0, w0).ok());
  for (int32_t j = 0; j < n; ++j) EXPECT_LT(Length(v0[j] - dv), 1e-4f) << "activation impulse, part " << j;
  ASSERT_EQ(s.world->ApplyCharacterImpulse(h.id, impulse).code, ErrorCode::kNone);
  EXPECT_TRUE(s.world->GetRagdollVelocities(rag, v1, w1).ok());
  for (int32_t j = 0; j < n; ++j) {
    EXPECT_LT(Length(v1[j] - v0[j] - dv), 1e-4f) << "part " << j;
    EXPECT_LT(Length(w1[j] - w0[j]), 1e-3f) << "part " << j << " must not spin";
  }
}

TEST(Character, ActivateSaysFalseInsteadOfFailing) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  EXPECT_FALSE(s.world->ActivateCharacter(CharacterId{}));
  EXPECT_FALSE(s.world->ActivateCharacter(h.id, {.strength = 2.0f}));
  EXPECT_TRUE(s.world->ActivateCharacter(h.id));
  EXPECT_FALSE(s.world->ActivateCharacter(h.id)) << "already active";
  WorldSettings none;
  none.max_active_characters = 0;
  Scene empty(none);
  HostCharacter& e = empty.Add();
  EXPECT_FALSE(empty.world->ActivateCharacter(e.id)) << "nothing may simulate";
  EXPECT_EQ(s.world->DeactivateCharacter(h.id, -1.0f).field, "blend_seconds");
  EXPECT_EQ(s.world->GoLimp(CharacterId{}).code, ErrorCode::kStaleHandle);
}

TEST(Character, BindingChecksItsBuffers) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter h(s.skeleton);
  CharacterBinding b = h.Binding(s.archetype);
  b.model_world = nullptr;
  EXPECT_EQ(s.world->BindCharacter(b).error().field, "model_world");
  b = h.Binding(s.archetype);
  b.output_local = std::span<Transform>(h.output).first(3);
  EXPECT_EQ(s.world->BindCharacter(b).error().field, "output_local");
  b = h.Binding(s.archetype);
  h.animated[4].translation.y = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(s.world->BindCharacter(b).error().code, ErrorCode::kNotFinite);
  h.animated[4] = s.skeleton.rest_local[4];
  b.archetype = CharacterArchetypeId{9, 1};
  EXPECT_EQ(s.world->BindCharacter(b).error().code, ErrorCode::kStaleHandle);
  b = h.Binding(s.archetype);
  const CharacterId first = s.world->BindCharacter(b).value();
  EXPECT_EQ(s.world->BindCharacter(b).value(), first) << "the same output binds once";
}

// The mean angle (degrees) between each joint's relative rotation in the output and in
// the animation.
float TrackingError(const Scene& s, const HostCharacter& h, std::vector<Transform>& animated_world) {
  const int32_t n = s.world->CharacterPartCount(s.archetype);
  float sum = 0;
  for (int32_t j = 1; j < n; ++j) {
    CharacterPartInfo info, parent;
    EXPECT_TRUE(s.world->GetCharacterPartInfo(s.archetype, j, &info).ok());
    EXPECT_TRUE(s.world->GetCharacterPartInfo(s.archetype, info.parent, &parent).ok());
    const Quat out = Conjugate(h.world[parent.bone].rotation) * h.world[info.bone].rotation;
    const Quat want = Conjugate(animated_world[parent.bone].rotation) * animated_world[info.bone].rotation;
    sum += RotationAngle(Normalize(Conjugate(want) * out)) * kRadToDeg;
  }
  return sum / static_cast<float>(n - 1);
}

// The angle (degrees) at a joint between two bones: 0 when straight.
float BendDegrees(const HostCharacter& h, int32_t a, int32_t b, int32_t c) {
  const Vec3 u = NormalizeOr(h.world[b].translation - h.world[a].translation, Vec3{});
  const Vec3 v = NormalizeOr(h.world[c].translation - h.world[b].translation, Vec3{});
  return std::acos(std::clamp(Dot(u, v), -1.0f, 1.0f)) * kRadToDeg;
}

// Kicks a limb's end toward `push` (hips anchored in the air, no gravity, limp) and
// returns how much the bend at its middle joint changed in a third of a second.
float BendAfterKick(bool a_pose, const char* top, const char* middle, const char* end, Vec3 push) {
  WorldSettings ws;
  ws.gravity = {};
  Scene s(ws, false);
  if (a_pose) {
    // Arms down 40 degrees from the T: the same rig in an A-pose.
    CharacterSettings cs;
    cs.skeleton = s.skeleton;
    for (const char* side : {"leftShoulder", "rightShoulder"}) {
      const int32_t b = s.Bone(side);
      const float sign = std::string(side) == "leftShoulder" ? 1.0f : -1.0f;
      cs.skeleton.rest_local[b].rotation = Normalize(AxisAngle(Vec3{0, 0, 1}, sign * 0.7f) * cs.skeleton.rest_local[b].rotation);
    }
    s.skeleton = cs.skeleton;
    s.archetype = s.world->BuildCharacterArchetype(cs).value();
  }
  HostCharacter& h = s.Add(Transform{{0, 1, 0}, {}, {1, 1, 1}});
  s.Steps(2);
  EXPECT_TRUE(s.world->ActivateCharacter(h.id, {.strength = 0.0f, .anchored = true}));
  const int32_t part = s.world->FindCharacterPart(s.archetype, end);
  EXPECT_GE(part, 0) << end;
  EXPECT_EQ(s.world->ApplyCharacterPartImpulse(h.id, part, push, h.world[s.Bone(end)].translation).code, ErrorCode::kNone);
  const float rest = BendDegrees(h, s.Bone(top), s.Bone(middle), s.Bone(end));
  s.Steps(20);
  return BendDegrees(h, s.Bone(top), s.Bone(middle), s.Bone(end)) - rest;
}

TEST(Character, KneesAndElbowsFoldTheNaturalWayInTAndAPose) {
  TENDON_NEED_SHARED_DATA();
  // Godette faces -Z: forward is -Z, back is +Z.
  const Vec3 forward{0, 0, -1};
  EXPECT_GT(BendAfterKick(false, "leftUpperLeg", "leftLowerLeg", "leftFoot", -forward * 2.0f), 20.0f) << "a knee folds back";
  EXPECT_LT(BendAfterKick(false, "leftUpperLeg", "leftLowerLeg", "leftFoot", forward * 2.0f), 3.0f) << "not forward";
  for (bool a_pose : {false, true}) {
    EXPECT_GT(BendAfterKick(a_pose, "rightUpperArm", "rightLowerArm", "rightHand", forward * 1.0f), 20.0f)
        << (a_pose ? "A" : "T") << "-pose: an elbow folds forward";
    EXPECT_LT(BendAfterKick(a_pose, "rightUpperArm", "rightLowerArm", "rightHand", -forward * 1.0f), 3.0f)
        << (a_pose ? "A" : "T") << "-pose: not backward";
  }
}

TEST(Character, APoweredAnchoredBodyTracksTheAnimationAndAnUnpoweredOneFalls) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& powered = s.Add(Transform{{0, 0, 0}, {}, {1, 1, 1}});
  HostCharacter& limp = s.Add(Transform{{3, 0, 0}, {}, {1, 1, 1}});
  std::vector<Transform> animated_world(s.skeleton.names.size());
  // The left elbow folds toward the front and back (about its hinge: forearm x forward).
  const int32_t elbow = s.Bone("leftLowerArm");
  std::vector<Transform> rest_world(s.skeleton.names.size());
  ForwardKinematicsOf(s.skeleton, Transform{}, s.skeleton.rest_local, rest_world);
  const Vec3 forearm = NormalizeOr(rest_world[s.Bone("leftHand")].translation - rest_world[elbow].translation, Vec3{});
  const Vec3 axis = Rotate(Conjugate(Normalize(rest_world[elbow].rotation)), NormalizeOr(Cross(forearm, Vec3{0, 0, -1}), Vec3{}));
  auto animate = [&](HostCharacter& h, int f) {
    const float a = 0.6f + 0.5f * std::sin(static_cast<float>(f) * 0.1f);
    h.animated[elbow].rotation = Normalize(s.skeleton.rest_local[elbow].rotation * AxisAngle(axis, a));
  };
  for (int f = 0; f < 3; ++f) {
    animate(powered, f);
    s.world->Step(kStep);
  }
  ASSERT_TRUE(s.world->ActivateCharacter(powered.id, {.strength = 1.0f, .anchored = true}));
  ASSERT_TRUE(s.world->ActivateCharacter(limp.id, {.strength = 0.0f, .anchored = false}));
  float worst = 0;
  for (int f = 3; f < 180; ++f) {
    animate(powered, f);
    s.world->Step(kStep);
    ForwardKinematics(powered, s, animated_world);
    if (f > 30) worst = std::max(worst, TrackingError(s, powered, animated_world));
    // Anchored: the hips are exactly where the animation puts them.
    ASSERT_LT(Length(powered.world[s.Bone("hips")].translation - animated_world[s.Bone("hips")].translation), 1e-5f);
  }
  EXPECT_LT(worst, 4.0f) << "mean joint tracking error, degrees";
  CharacterState state;
  EXPECT_TRUE(s.world->GetCharacterState(powered.id, &state).ok());
  EXPECT_TRUE(state.anchored);
  EXPECT_FALSE(state.settled) << "a powered body never settles";
  EXPECT_LT(limp.world[s.Bone("hips")].translation.y, 0.35f) << "the unpowered body collapsed";
}

TEST(Character, AHitFlinchesAnchoredAndHandsTheBonesBack) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(2);
  s.Events();
  const int32_t arm = s.Part("LeftLowerArm");
  const Vec3 at = h.world[s.Bone("leftLowerArm")].translation;
  ASSERT_TRUE(s.world->HitCharacter(h.id, arm, Vec3{0, 0, 4}, at));
  CharacterState state;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_TRUE(state.active);
  EXPECT_TRUE(state.anchored);
  EXPECT_EQ(state.strength, 1.0f);
  float flinch = 0, hips_drift = 0;
  int frames = 0;
  std::vector<Transform> animated_world(h.animated.size());
  ForwardKinematics(h, s, animated_world);
  const int32_t hand = s.Bone("leftHand"), hips = s.Bone("hips");
  while (s.world->GetCharacterState(h.id, &state).ok() && state.active) {
    s.world->Step(kStep);
    ++frames;
    flinch = std::max(flinch, Length(h.world[hand].translation - animated_world[hand].translation));
    hips_drift = std::max(hips_drift, Length(h.world[hips].translation - animated_world[hips].translation));
    ASSERT_LT(frames, 120);
  }
  EXPECT_GT(flinch, 0.03f) << "the struck arm moved";
  EXPECT_LT(hips_drift, 1e-5f) << "anchored: a stagger, not a fall";
  EXPECT_NEAR(frames * kStep, 0.6f, 2.5f * kStep) << "handed back after the duration";
  EXPECT_TRUE(state.blending_out);
  EXPECT_EQ(state.strength, 0.0f) << "its own strength is back";
  EXPECT_FALSE(state.anchored);
  const auto events = s.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, CharacterEvent::Type::kStarted);
  EXPECT_EQ(events[1].type, CharacterEvent::Type::kEnded);
  EXPECT_EQ(events[1].reason, CharacterEndReason::kReleased);
  s.Steps(16);  // the 0.25 s blend
  EXPECT_TRUE(SamePose(h.output, h.animated)) << "the animation shows again";
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_FALSE(state.blending_out);
}

TEST(Character, GoingLimpEasesTheStrengthAndActivatingCancelsIt) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(2);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id, {.strength = 1.0f, .anchored = true}));
  s.Steps(10);
  const float hips = h.world[s.Bone("hips")].translation.y;
  ASSERT_EQ(s.world->GoLimp(h.id, 0.4f).code, ErrorCode::kNone);
  CharacterState state;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_FALSE(state.anchored) << "the anchor comes off at once";
  s.Steps(12);
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_NEAR(state.strength, 0.5f, 0.03f) << "halfway through 0.4 s";
  s.Steps(12);
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_EQ(state.strength, 0.0f);
  s.Steps(60);
  EXPECT_LT(h.world[s.Bone("hips")].translation.y, hips - 0.2f) << "limp, it collapses";
  // A go-limp interrupted by a new activation stops easing.
  EXPECT_TRUE(s.world->DeactivateCharacter(h.id).ok());
  s.Steps(2);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id, {.strength = 1.0f}));
  ASSERT_EQ(s.world->GoLimp(h.id, 1.0f).code, ErrorCode::kNone);
  s.Steps(6);
  EXPECT_TRUE(s.world->DeactivateCharacter(h.id).ok());
  ASSERT_TRUE(s.world->ActivateCharacter(h.id, {.strength = 0.8f}));
  s.Steps(30);
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  EXPECT_EQ(state.strength, 0.8f);
  EXPECT_EQ(s.world->GoLimp(s.Add().id).code, ErrorCode::kInactive);
}

TEST(Character, LettingGoOfTheAnchorKeepsTheHipsMoving) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(2);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id, {.strength = 1.0f, .anchored = true}));
  for (int f = 0; f < 20; ++f) {  // staggering forward at 2 m/s, anchored
    h.model.translation.z -= 2.0f * kStep;
    s.world->Step(kStep);
  }
  ASSERT_EQ(s.world->GoLimp(h.id, 0.4f).code, ErrorCode::kNone);
  CharacterState st;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &st).ok());
  EXPECT_NEAR(st.root_velocity.z, -2.0f, 0.1f) << "the hips keep the animation's motion";
  EXPECT_FALSE(st.anchored);
}

TEST(Character, DeactivatingCrossfadesFromTheRagdollPoseToTheAnimation) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(2);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  s.Steps(60);
  const std::vector<Transform> fallen = h.output;
  ASSERT_EQ(s.world->DeactivateCharacter(h.id, 0.5f).code, ErrorCode::kNone);
  const int32_t hips = s.Bone("hips");
  s.Steps(15);  // a quarter second: halfway
  const float d_fallen = Length(h.output[hips].translation - fallen[hips].translation);
  const float d_animated = Length(h.output[hips].translation - h.animated[hips].translation);
  const float total = Length(fallen[hips].translation - h.animated[hips].translation);
  EXPECT_GT(total, 0.2f);
  EXPECT_NEAR(d_fallen / total, 0.5f, 0.05f);
  EXPECT_NEAR(d_animated / total, 0.5f, 0.05f);
  s.Steps(15);
  EXPECT_TRUE(SamePose(h.output, h.animated));
  // A cut: the animation at once.
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  s.Steps(20);
  EXPECT_TRUE(s.world->DeactivateCharacter(h.id, 0.0f).ok());
  s.world->Step(kStep);
  EXPECT_TRUE(SamePose(h.output, h.animated));
}

struct Fallen {
  CharacterFacing facing;
  float heading;
  CharacterState state;
};
Fallen DropLying(Quat lie, bool walls = false, float height = 0.25f) {
  Scene s;
  if (walls) {
    // A slot that keeps a body lying on its side from rolling over: walls at z = +-0.11, just
    // wider than the torso, so the arms (a span of 0.9 m) cannot turn out of the slot.
    StaticWorldSettings slot{{StaticPlane{{0, 1, 0}, 0}}};
    for (float side : {-1.0f, 1.0f})
      slot.boxes.push_back(StaticBox{Transform{{0, 0.5f, side * 0.61f}, {}, {1, 1, 1}}, {3, 1, 0.5f}});
    EXPECT_TRUE(s.world->BuildStaticWorld(slot).ok());
  }
  HostCharacter& h = s.Add(Transform{{0, height, 0}, lie, {1, 1, 1}});
  s.Steps(2);
  EXPECT_TRUE(s.world->ActivateCharacter(h.id));
  CharacterState state;
  for (int f = 0; f < 600; ++f) {
    s.world->Step(kStep);
    EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
    if (state.settled) break;
  }
  EXPECT_TRUE(state.settled) << "at rest (and frozen) within 10 s";
  return {state.facing, state.heading_degrees, state};
}

TEST(Character, AFallenBodySaysWhichWayItLiesAndWhereItsHeadPoints) {
  TENDON_NEED_SHARED_DATA();
  // Godette faces -Z with Y up.
  const Fallen down = DropLying(AxisAngle(Vec3{1, 0, 0}, -kPi / 2));  // face to the ground, head to -Z
  EXPECT_EQ(down.facing, CharacterFacing::kDown);
  EXPECT_NEAR(std::fabs(down.heading), 180.0f, 20.0f);
  const Fallen up = DropLying(AxisAngle(Vec3{1, 0, 0}, kPi / 2));  // on its back, head to +Z
  EXPECT_EQ(up.facing, CharacterFacing::kUp);
  EXPECT_NEAR(up.heading, 0.0f, 20.0f);
  const Fallen side = DropLying(AxisAngle(Vec3{0, 0, 1}, kPi / 2), true, 0.55f);  // on its side, head to -X
  EXPECT_EQ(side.facing, CharacterFacing::kSide);
  EXPECT_NEAR(side.heading, -90.0f, 20.0f);
  EXPECT_LT(down.state.root.translation.y, 0.3f) << "the hips lie low";
}

TEST(Character, TheRecoveryRootStandsUprightKeepsTheYawAndAddsLegRoom) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  const Quat yaw = AxisAngle(Vec3{0, 1, 0}, 1.0f);
  HostCharacter& h = s.Add(Transform{{2, 0, 1}, yaw, {1, 1, 1}});
  s.Steps(2);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  s.Steps(120);  // fallen over
  CharacterState state;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &state).ok());
  Transform root;
  ASSERT_EQ(s.world->GetCharacterRecoveryRoot(h.id, 0.6f, &root).code, ErrorCode::kNone);
  EXPECT_LT(Length(root.translation - (state.root.translation + Vec3{0, 0.6f, 0})), 1e-5f);
  // Upright: the hips' rest rotation (in the model) turned about +Y only.
  std::vector<Transform> rest_world(s.skeleton.names.size());
  ForwardKinematicsOf(s.skeleton, Transform{}, s.skeleton.rest_local, rest_world);
  const Quat turn = Normalize(root.rotation * Conjugate(Normalize(rest_world[s.Bone("hips")].rotation)));
  EXPECT_LT(std::fabs(turn.x) + std::fabs(turn.z), 1e-4f) << "a pure yaw";
  // Standing, nothing fallen: the yaw is the model's own.
  HostCharacter& still = s.Add(Transform{{5, 0, 0}, yaw, {1, 1, 1}});
  s.Steps(1);
  ASSERT_EQ(s.world->GetCharacterRecoveryRoot(still.id, 0.0f, &root).code, ErrorCode::kNone);
  const Quat still_turn = Normalize(root.rotation * Conjugate(Normalize(rest_world[s.Bone("hips")].rotation)));
  EXPECT_LT(RotationAngle(Normalize(still_turn * Conjugate(yaw))), 1e-3f);
  EXPECT_EQ(s.world->GetCharacterRecoveryRoot(h.id, -1.0f, &root).field, "leg_room");
}

TEST(Character, TheBudgetReleasesTheOldestAndEventsSaySo) {
  TENDON_NEED_SHARED_DATA();
  WorldSettings ws;
  ws.max_active_characters = 2;
  Scene s(ws);
  HostCharacter& a = s.Add(Transform{{0, 0, 0}, {}, {1, 1, 1}});
  HostCharacter& b = s.Add(Transform{{2, 0, 0}, {}, {1, 1, 1}});
  HostCharacter& c = s.Add(Transform{{4, 0, 0}, {}, {1, 1, 1}});
  s.Steps(1);
  ASSERT_TRUE(s.world->ActivateCharacter(a.id));
  s.Steps(1);
  ASSERT_TRUE(s.world->ActivateCharacter(b.id));
  s.Steps(1);
  ASSERT_TRUE(s.world->ActivateCharacter(c.id));
  EXPECT_EQ(s.world->ActiveCharacterCount(), 2);
  CharacterState st;
  EXPECT_TRUE(s.world->GetCharacterState(a.id, &st).ok());
  EXPECT_FALSE(st.active) << "the oldest went";
  const auto events = s.Events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].character, a.id);
  EXPECT_EQ(events[1].character, b.id);
  EXPECT_EQ(events[2].character, a.id);
  EXPECT_EQ(events[2].type, CharacterEvent::Type::kEnded);
  EXPECT_EQ(events[2].reason, CharacterEndReason::kEvicted);
  EXPECT_EQ(events[3].character, c.id);
  EXPECT_EQ(events[3].type, CharacterEvent::Type::kStarted);
  // Then b is the oldest.
  ASSERT_TRUE(s.world->ActivateCharacter(a.id));
  EXPECT_TRUE(s.world->GetCharacterState(b.id, &st).ok());
  EXPECT_FALSE(st.active);
  EXPECT_TRUE(s.world->GetCharacterState(a.id, &st).ok());
  EXPECT_EQ(st.generation, 2u) << "a's second ragdoll";
}

TEST(Character, ADurationReleasesOnTheWorldClockAndAnEarlierReleaseCancelsIt) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& a = s.Add(Transform{{0, 0, 0}, {}, {1, 1, 1}});
  HostCharacter& b = s.Add(Transform{{2, 0, 0}, {}, {1, 1, 1}});
  s.Steps(1);
  s.Events();
  ASSERT_TRUE(s.world->ActivateCharacter(a.id, {.duration_seconds = 0.5f}));
  ASSERT_TRUE(s.world->ActivateCharacter(b.id, {.duration_seconds = 0.5f}));
  s.Steps(15);
  EXPECT_TRUE(s.world->DeactivateCharacter(b.id).ok());
  int expired_frame = -1;
  for (int f = 15; f < 90; ++f) {
    s.world->Step(kStep);
    CharacterState st;
    EXPECT_TRUE(s.world->GetCharacterState(a.id, &st).ok());
    if (!st.active && expired_frame < 0) expired_frame = f + 1;
  }
  EXPECT_NEAR(expired_frame * kStep, 0.5f, 1.5f * kStep);
  const auto events = s.Events();
  int b_ended = 0, a_expired = 0;
  for (const CharacterEvent& e : events) {
    if (e.type != CharacterEvent::Type::kEnded) continue;
    if (e.character == b.id) {
      ++b_ended;
      EXPECT_EQ(e.reason, CharacterEndReason::kReleased);
    }
    if (e.character == a.id && e.reason == CharacterEndReason::kExpired) ++a_expired;
  }
  EXPECT_EQ(b_ended, 1) << "released once, never expired";
  EXPECT_EQ(a_expired, 1);
}

TEST(Character, RemovingAnActiveCharacterReleasesAndTearsItDown) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(1);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  s.Steps(30);
  s.Events();
  const RagdollId rag = s.world->CharacterRagdoll(h.id);
  ASSERT_EQ(s.world->UnbindCharacter(h.id).code, ErrorCode::kNone);
  EXPECT_FALSE(s.world->IsValid(h.id));
  EXPECT_FALSE(s.world->IsValid(rag));
  EXPECT_TRUE(SamePose(h.output, h.animated)) << "the bones go back to the animation";
  const auto events = s.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, CharacterEndReason::kRemoved);
  EXPECT_EQ(s.world->Step(kStep).bound_ragdolls, 0);
  EXPECT_EQ(s.world->UnbindCharacter(h.id).code, ErrorCode::kStaleHandle);
}

TEST(Character, TheWholePoseIsWrittenAndBonesWithoutAPartRideTheirAncestor) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(1);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  s.Steps(40);
  const int32_t finger = s.Bone("Finger.l_Armature");  // VRM leftIndexProximal
  const int32_t chest = s.Bone("chest");
  ASSERT_GE(finger, 0);
  for (int32_t b : {finger, chest}) {
    ASSERT_LT(s.world->FindCharacterPart(s.archetype, s.skeleton.names[b]), 0) << "no part on it";
    const Transform expect = Compose(h.world[s.skeleton.parents[b]], h.animated[b]);
    EXPECT_LT(Length(h.world[b].translation - expect.translation), 1e-5f) << s.skeleton.names[b];
    EXPECT_EQ(h.output[b], h.animated[b]);
  }
  // Every bone's local composes to its world frame.
  for (std::size_t b = 0; b < h.output.size(); ++b) {
    const int32_t p = s.skeleton.parents[b];
    const Transform world = Compose(p >= 0 ? h.world[p] : h.model, h.output[b]);
    ASSERT_LT(Length(world.translation - h.world[b].translation), 1e-4f) << s.skeleton.names[b];
  }
}

TEST(Character, ChainsOnTheCharacterSwingFromThisFramesRagdollPose) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  const int32_t head = s.Bone("head");
  const ChainArchetypeId hair = s.world->BuildChainArchetype(Strand(4, 0.05f, {0, -1, 0})).value();
  HostChain strand(Strand(4, 0.05f, {0, -1, 0}));
  ChainBinding cb = strand.Binding(hair);
  cb.root_parent_world = &h.world[head];
  const ChainId chain = s.world->BindChain(cb).value();
  s.Steps(2);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  for (int f = 0; f < 60; ++f) {
    s.world->Step(kStep);
    std::vector<Vec3> nodes(4);
    ASSERT_EQ(s.world->GetChainNodePositions(chain, nodes).code, ErrorCode::kNone);
    ASSERT_LT(Length(nodes[0] - h.world[head].translation), 1e-4f) << "frame " << f << ": the hair root is on the head";
  }
  EXPECT_LT(h.world[head].translation.y, 1.0f) << "the head fell, the hair with it";
}

TEST(Character, NonFiniteAnimationHoldsThePoseAndIsReported) {
  TENDON_NEED_SHARED_DATA();
  Scene s;
  HostCharacter& h = s.Add();
  s.Steps(2);
  const std::vector<Transform> before = h.output;
  h.animated[3].rotation.w = std::numeric_limits<float>::quiet_NaN();
  const FrameStats& st = s.world->Step(kStep);
  EXPECT_GE(st.snapped_bad_input, 1);
  EXPECT_TRUE(SamePose(h.output, before));
  ASSERT_TRUE(s.world->ActivateCharacter(h.id));
  for (int f = 0; f < 10; ++f) s.world->Step(kStep);
  for (const Transform& t : h.output) ASSERT_TRUE(IsFinite(t));
}

TEST(Character, TheStickmanTogglesAHundredThousandTimesWithoutGrowing) {
  auto w = MakeWorld();
  EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
  auto built = w->BuildCharacterArchetype(StickmanCharacter());
  ASSERT_TRUE(built.ok()) << built.error().field << ": " << built.error().message;
  ASSERT_EQ(w->CharacterPartCount(built.value()), 10);
  const SkeletonSettings sk = StickmanSkeleton();
  HostCharacter h(sk, Transform{{0, 0.8f, 0}, {}, {1, 1, 1}});
  CharacterBinding b = h.Binding(built.value());
  b.planar_normal = {0, 0, 1};
  h.id = w->BindCharacter(b).value();
  std::vector<CharacterEvent> events(16);
  w->Step(kStep);
  ASSERT_TRUE(w->ActivateCharacter(h.id, {.anchored = true}));
  w->Step(kStep);
  EXPECT_TRUE(w->DeactivateCharacter(h.id, 0.1f).ok());
  w->Step(kStep);
  w->DrainCharacterEvents(events);
  const long before = g_allocations.load();
  for (int i = 0; i < 100000; ++i) {
    // Every other one anchored (the ragdoll moves to its kinematic-root lanes and back).
    ASSERT_TRUE(w->ActivateCharacter(h.id, {.launch_velocity = {0.5f, 0, 0}, .anchored = i % 2 == 0}));
    ASSERT_EQ(w->DeactivateCharacter(h.id, 0.1f).code, ErrorCode::kNone);
    ASSERT_EQ(w->DrainCharacterEvents(events), 2);
    if (i % 100 == 0) {
      ASSERT_TRUE(w->ActivateCharacter(h.id));
      const FrameStats& st = w->Step(kStep);
      ASSERT_EQ(st.bound_ragdolls, 1);
      ASSERT_EQ(st.bound_characters, 1);
      for (const Transform& t : h.world) ASSERT_LT(std::fabs(t.translation.z), 1e-4f) << "planar";
      EXPECT_TRUE(w->DeactivateCharacter(h.id).ok());
      while (w->DrainCharacterEvents(events) > 0) {
      }
    }
  }
  EXPECT_EQ(g_allocations.load() - before, 0) << "toggling allocates nothing";
  EXPECT_EQ(w->BoundCharacterCount(), 1);
  EXPECT_EQ(w->ActiveCharacterCount(), 0);
  EXPECT_EQ(w->LastStats().dropped_character_events, 0);
}

TEST(Landing, TheRulesHoldAtEachBoundary) {
  const LandingRules r;
  LandingWatch w = StartLandingWatch(10.0, 3);
  // Inside the grace, slow and grounded does not count.
  w = AdvanceLandingWatch(w, r, 10.0, 1.0f, 1.0f);
  w = AdvanceLandingWatch(w, r, 10.34, 1.0f, 1.0f);
  EXPECT_EQ(w.verdict, LandingVerdict::kFlying);
  EXPECT_LT(w.resting_since, 0);
  // From the grace on: held 0.25 s lands; 0.24 s does not.
  w = AdvanceLandingWatch(w, r, 10.35, 1.0f, 1.0f);
  EXPECT_EQ(w.resting_since, 10.35);
  w = AdvanceLandingWatch(w, r, 10.59, 1.0f, 1.0f);
  EXPECT_EQ(w.verdict, LandingVerdict::kFlying);
  w = AdvanceLandingWatch(w, r, 10.60, 1.0f, 1.0f);
  EXPECT_EQ(w.verdict, LandingVerdict::kLanded);
  // Exactly the threshold speed is not slow; exactly the ground distance is near.
  LandingWatch v = StartLandingWatch(0.0, 1);
  v = AdvanceLandingWatch(v, r, 0.5, r.speed_threshold, 1.0f);
  EXPECT_LT(v.resting_since, 0);
  v = AdvanceLandingWatch(v, r, 0.6, r.speed_threshold - 0.01f, r.ground_distance);
  EXPECT_EQ(v.resting_since, 0.6);
  // A bounce (fast again) restarts the hold; no ground below never lands.
  v = AdvanceLandingWatch(v, r, 0.7, 30.0f, 1.0f);
  EXPECT_LT(v.resting_since, 0);
  EXPECT_EQ(v.peak_speed, 30.0f) << "the fastest it really went";
  v = AdvanceLandingWatch(v, r, 0.8, 1.0f, -1.0f);
  v = AdvanceLandingWatch(v, r, 5.0, 1.0f, r.ground_distance + 0.01f);
  EXPECT_EQ(v.verdict, LandingVerdict::kFlying);
  // The ceiling.
  v = AdvanceLandingWatch(v, r, 19.99, 1.0f, -1.0f);
  EXPECT_EQ(v.verdict, LandingVerdict::kFlying);
  v = AdvanceLandingWatch(v, r, 20.0, 50.0f, -1.0f);
  EXPECT_EQ(v.verdict, LandingVerdict::kCeiling);
  // Stale watchers.
  EXPECT_FALSE(IsStale(w, 3));
  EXPECT_TRUE(IsStale(w, 4));
}

TEST(Landing, ThrowSpeedIsMassRelativeAndClamped) {
  EXPECT_FLOAT_EQ(ThrowSpeed(700, 70, 5, 50), 10.0f);
  EXPECT_FLOAT_EQ(ThrowSpeed(700, 70, 5, 50), ThrowSpeed(700, 70, 5, 50));  // crate or person: same mass, same speed
  EXPECT_FLOAT_EQ(ThrowSpeed(700, 1, 5, 50), 50.0f) << "a pebble does not break the sound barrier";
  EXPECT_FLOAT_EQ(ThrowSpeed(700, 1000, 5, 50), 5.0f) << "a piano still moves";
  EXPECT_FLOAT_EQ(ThrowSpeed(700, 0, 5, 50), 50.0f);
}

TEST(Landing, ACharactersStateFeedsTheWatch) {
  TENDON_NEED_SHARED_DATA();
  // A thrown character: generation and speed from CharacterState, ground from a raycast.
  Scene s;
  HostCharacter& h = s.Add(Transform{{0, 0, 0}, {}, {1, 1, 1}});
  s.Steps(1);
  ASSERT_TRUE(s.world->ActivateCharacter(h.id, {.launch_velocity = {6, 5, 0}}));
  CharacterState st;
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &st).ok());
  LandingWatch watch = StartLandingWatch(0.0, st.generation);
  double t = 0;
  const LandingRules rules{.speed_threshold = 0.5f, .ground_distance = 0.5f};
  for (int f = 0; f < 600 && watch.verdict == LandingVerdict::kFlying; ++f) {
    s.world->Step(kStep);
    t += kStep;
    EXPECT_TRUE(s.world->GetCharacterState(h.id, &st).ok());
    RaycastHit ground;
    const bool below = s.world->RaycastStatic(st.root.translation, {0, -1, 0}, 10, &ground);
    watch = AdvanceLandingWatch(watch, rules, t, st.speed, below ? ground.distance : -1.0f);
  }
  EXPECT_EQ(watch.verdict, LandingVerdict::kLanded);
  EXPECT_GT(watch.peak_speed, 7.0f) << "launched at about 7.8 m/s";
  EXPECT_GT(t, 0.6) << "not while still in the air";
  EXPECT_TRUE(s.world->DeactivateCharacter(h.id).ok());
  s.world->ActivateCharacter(h.id);
  EXPECT_TRUE(s.world->GetCharacterState(h.id, &st).ok());
  EXPECT_TRUE(IsStale(watch, st.generation)) << "a newer ragdoll began";
}

}  // namespace
}  // namespace tendon::test
