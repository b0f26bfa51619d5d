// Bodies that start inside the static world or inside each other (issue 11, defect 4):
// they are separated at a bounded speed (WorldSettings::ragdoll_max_push_speed), as Jolt
// bounds its position correction (mMaxPenetrationDistance, mBaumgarte) and Box2D its push
// (b2WorldDef::contactPushMaxVelocity, 3 m/s), instead of being launched by a whole
// penetration corrected in one substep.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "character_test_util.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "stickman_rig.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;

// What a run did: the highest any part's centre rose above where it was bound, the most
// kinetic energy (linear and angular) the bodies held at once, the fastest part, the
// fastest the centre of mass rose (a launch; a fall is not one), the resets, and where
// the lowest part centre ended.
struct Flight {
  float rise = 0;         // m
  float energy = 0;       // J
  float speed = 0;        // m/s
  float climb = 0;        // m/s, upward, of the centre of mass of each body
  int resets = 0;
  float lowest_end = 0;   // m
};

struct Watched {
  RagdollId id{};
  std::vector<Transform>* parts = nullptr;
  std::vector<float> bind_height{};
  std::vector<float> mass{};
  std::vector<Vec3> inertia{};
};

Watched Watch(const World& w, RagdollArchetypeId a, RagdollId id, std::vector<Transform>* parts) {
  Watched o;
  o.id = id;
  o.parts = parts;
  for (int32_t p = 0; p < w.RagdollPartCount(a); ++p) {
    RagdollPartInfo info;
    EXPECT_EQ(w.GetRagdollPartInfo(a, p, &info).code, ErrorCode::kNone);
    o.mass.push_back(info.mass);
    o.inertia.push_back(info.principal_inertia);
    o.bind_height.push_back((*parts)[p].translation.y);
  }
  return o;
}

Flight Fly(World& w, std::vector<Watched>& bodies, int frames) {
  Flight f;
  for (int frame = 0; frame < frames; ++frame) {
    f.resets += w.Step(kStep).reset_non_finite;
    float energy = 0;
    for (Watched& b : bodies) {
      std::vector<Vec3> v(b.mass.size()), av(b.mass.size());
      EXPECT_EQ(w.GetRagdollVelocities(b.id, v, av).code, ErrorCode::kNone);
      float momentum_y = 0, mass = 0;
      for (std::size_t p = 0; p < b.mass.size(); ++p) {
        // Angular energy about the principal axes, the spin taken into the part's frame.
        const Vec3 wl = Rotate(Conjugate((*b.parts)[p].rotation), av[p]);
        energy += 0.5f * b.mass[p] * Dot(v[p], v[p]) +
                  0.5f * (b.inertia[p].x * wl.x * wl.x + b.inertia[p].y * wl.y * wl.y + b.inertia[p].z * wl.z * wl.z);
        f.speed = std::max(f.speed, Length(v[p]));
        f.rise = std::max(f.rise, (*b.parts)[p].translation.y - b.bind_height[p]);
        momentum_y += b.mass[p] * v[p].y;
        mass += b.mass[p];
      }
      f.climb = std::max(f.climb, momentum_y / mass);
    }
    f.energy = std::max(f.energy, energy);
  }
  f.lowest_end = 1e30f;
  for (Watched& b : bodies)
    for (const Transform& t : *b.parts) f.lowest_end = std::min(f.lowest_end, t.translation.y);
  return f;
}

void Print(const char* what, const Flight& f) {
  std::printf("%s: rise %.3f m, peak energy %.1f J, fastest part %.2f m/s, centre of mass rising at most %.2f m/s, "
              "resets %d, lowest part centre %.3f m\n",
              what, f.rise, f.energy, f.speed, f.climb, f.resets, f.lowest_end);
}

std::unique_ptr<World> FloorWorld(WorldSettings ws = {}) {
  auto w = MakeWorld(ws);
  EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  return w;
}

// A thigh and a shin, 8 kg together, standing upright on the foot end of the shin.
RagdollSettings Leg() {
  RagdollSettings s;
  PartSettings thigh;
  thigh.name = "thigh";
  thigh.pose.translation = {0, 0.62f, 0};
  thigh.shape.radius = 0.07f;
  thigh.shape.half_height = 0.16f;
  thigh.mass = 5;
  PartSettings shin;
  shin.name = "shin";
  shin.parent = 0;
  shin.pose.translation = {0, 0.22f, 0};
  shin.shape.radius = 0.05f;
  shin.shape.half_height = 0.17f;
  shin.mass = 3;
  shin.joint.type = JointType::kHinge;
  shin.joint.anchor = {0, 0.42f, 0};
  shin.joint.twist_axis = {1, 0, 0};
  shin.joint.plane_axis = {0, 1, 0};
  shin.joint.hinge_min_degrees = -150;
  shin.joint.hinge_max_degrees = 0;
  s.parts = {thigh, shin};
  return s;
}

// The shin's foot sphere (its lowest point 0 m above the floor at y = 0 in the build pose)
// starts `depth` under the floor.
TEST(Depenetration, ALegBoundIntoTheGroundIsPushedOutNotLaunched) {
  for (const float depth : {0.05f, 0.10f, 0.30f, 1.0f}) {
    auto w = FloorWorld();
    const RagdollArchetypeId a = w->BuildRagdollArchetype(Leg()).value();
    std::vector<Transform> out(2);
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {0, -depth, 0};
    b.output_parts = out;
    const RagdollId id = w->BindRagdoll(b).value();
    std::vector<Watched> bodies{Watch(*w, a, id, &out)};
    const Flight f = Fly(*w, bodies, 180);
    char what[64];
    std::snprintf(what, sizeof(what), "leg %.0f cm deep", depth * 100);
    Print(what, f);
    EXPECT_EQ(f.resets, 0) << what;
    // Pushed out by the depth, and not thrown higher than a few centimetres past it.
    EXPECT_LT(f.rise, depth + 0.05f) << what;
    EXPECT_LT(f.climb, 1.1f) << what << ": at the push speed";
    EXPECT_GT(f.lowest_end, 0.045f) << what << ": it ends out of the ground, lying on it";
  }
}

// A Jolt human bound standing with its middle at the floor: its legs and hips start under
// it. It comes up at the bounded speed, lies down and stays out of the floor.
TEST(Depenetration, ARagdollBoundHalfUnderTheFloorComesOutAtTheBoundedSpeed) {
  TENDON_NEED_SHARED_DATA();
  auto human = ports::LoadJoltHumanRagdoll(SharedData("jolt-human/ragdoll.json"), true);
  ASSERT_TRUE(human.ok()) << human.error().message;
  float low = 1e30f, high = -1e30f;
  for (const PartSettings& p : human.value().parts)
    low = std::min(low, p.pose.translation.y), high = std::max(high, p.pose.translation.y);
  auto w = FloorWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(human.value()).value();
  std::vector<Transform> out(human.value().parts.size());
  RagdollBinding b;
  b.archetype = a;
  b.placement.translation = {0, -0.5f * (low + high), 0};
  b.output_parts = out;
  const RagdollId id = w->BindRagdoll(b).value();
  std::vector<Watched> bodies{Watch(*w, a, id, &out)};
  const Flight f = Fly(*w, bodies, 300);
  Print("Jolt human half under the floor", f);
  EXPECT_EQ(f.resets, 0);
  EXPECT_LT(f.climb, 1.1f) << "it rises at the push speed, not faster";
  // Its feet come up by the buried half and a part's radius; nothing is thrown past that.
  EXPECT_LT(f.rise, 0.5f * (high - low) + 0.25f);
  EXPECT_GT(f.lowest_end, 0.0f) << "every part ends above the floor";
}

// Two Jolt humans bound 30 cm apart side by side, without gravity: shoulders, arms and
// hips start inside each other. The pairs push them apart at the bounded speed; with the
// bound off the same start throws them (measured in the same test).
Flight TwoHumansBoundInsideEachOther(float max_push_speed, float* mass, float* apart) {
  auto human = ports::LoadJoltHumanRagdoll(SharedData("jolt-human/ragdoll.json"), true);
  EXPECT_TRUE(human.ok()) << human.error().message;
  WorldSettings ws;
  ws.gravity = {};
  ws.ragdoll_max_push_speed = max_push_speed;
  auto w = MakeWorld(ws);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(human.value()).value();
  const std::size_t n = human.value().parts.size();
  std::vector<Transform> out_a(n), out_b(n);
  std::vector<Watched> bodies;
  *mass = 0;
  for (int side = 0; side < 2; ++side) {
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {side * 0.3f, 0, 0};
    b.output_parts = side == 0 ? out_a : out_b;
    const RagdollId id = w->BindRagdoll(b).value();
    bodies.push_back(Watch(*w, a, id, side == 0 ? &out_a : &out_b));
    for (float m : bodies.back().mass) *mass += m;
  }
  const Flight f = Fly(*w, bodies, 60);
  *apart = 0;
  for (std::size_t p = 0; p < n; ++p) *apart += (out_b[p].translation.x - out_a[p].translation.x) / static_cast<float>(n);
  return f;
}

TEST(Depenetration, TwoRagdollsBoundInsideEachOtherSeparateWithoutGainingEnergy) {
  TENDON_NEED_SHARED_DATA();
  float mass = 0, apart = 0, apart_unbounded = 0;
  const Flight f = TwoHumansBoundInsideEachOther(1.0f, &mass, &apart);
  const Flight unbounded = TwoHumansBoundInsideEachOther(INFINITY, &mass, &apart_unbounded);
  Print("two Jolt humans bound 30 cm apart", f);
  Print("the same without the bound", unbounded);
  EXPECT_EQ(f.resets, 0);
  // Every part moving at the push speed (1 m/s) would hold mass / 2 J: at most twice that.
  EXPECT_LT(f.energy, mass) << "of " << mass << " kg";
  EXPECT_LT(f.energy * 5, unbounded.energy) << "the bound is what keeps them from being thrown";
  EXPECT_GT(apart, 0.35f) << "they were pushed apart";
}

// The stickman activated with its feet 20 cm in the ground (a character handed to physics
// where the animation had sunk it) stands up out of it rather than flying (12.9 m before).
TEST(Depenetration, ACharacterActivatedWithItsFeetInTheGroundIsNotLaunched) {
  auto w = FloorWorld();
  const CharacterArchetypeId a = w->BuildCharacterArchetype(StickmanCharacter()).value();
  HostCharacter host(StickmanSkeleton(), Transform{{0, 1, 0}, {}, {1, 1, 1}});
  const CharacterId id = w->BindCharacter(host.Binding(a)).value();
  w->Step(kStep);
  float lowest = 1e30f;
  for (const Transform& t : host.world) lowest = std::min(lowest, t.translation.y);
  host.model.translation.y -= lowest + 0.2f;  // the lowest bone 20 cm under the floor
  w->Step(kStep);
  w->Step(kStep);  // standing still there: the animation hands over no velocity
  const float hips_start = host.world[0].translation.y;
  ASSERT_TRUE(w->ActivateCharacter(id));
  const RagdollId body = w->CharacterRagdoll(id);
  const int32_t parts = w->CharacterPartCount(a);
  std::vector<Vec3> v(parts), av(parts);
  std::vector<float> mass(parts);
  float total = 0;
  for (int32_t p = 0; p < parts; ++p) {
    CharacterPartInfo info;
    ASSERT_EQ(w->GetCharacterPartInfo(a, p, &info).code, ErrorCode::kNone);
    mass[p] = info.mass, total += info.mass;
  }
  float rise = 0, climb = 0;
  int resets = 0;
  for (int frame = 0; frame < 180; ++frame) {
    resets += w->Step(kStep).reset_non_finite;
    ASSERT_EQ(w->GetRagdollVelocities(body, v, av).code, ErrorCode::kNone);
    float momentum_y = 0;
    for (int32_t p = 0; p < parts; ++p) momentum_y += mass[p] * v[p].y;
    climb = std::max(climb, momentum_y / total);
    rise = std::max(rise, host.world[0].translation.y - hips_start);
  }
  std::printf("stickman activated 20 cm deep: hips rose %.3f m, centre of mass rising at most %.2f m/s, resets %d\n", rise,
              climb, resets);
  EXPECT_EQ(resets, 0);
  EXPECT_LT(rise, 0.3f) << "it comes up by the depth, not thrown";
  EXPECT_LT(climb, 1.1f) << "at the push speed";
}

// With the bound switched off the leg is launched as before: the test above measures the
// bound, not some other damping.
TEST(Depenetration, WithoutTheBoundADeepStartIsCorrectedAtOnce) {
  WorldSettings ws;
  ws.ragdoll_max_push_speed = INFINITY;
  auto w = FloorWorld(ws);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Leg()).value();
  std::vector<Transform> out(2);
  RagdollBinding b;
  b.archetype = a;
  b.placement.translation = {0, -0.1f, 0};
  b.output_parts = out;
  const RagdollId id = w->BindRagdoll(b).value();
  std::vector<Watched> bodies{Watch(*w, a, id, &out)};
  const Flight f = Fly(*w, bodies, 60);
  EXPECT_GT(f.climb, 5.0f);
}

// A switched-off ragdoll collides with nothing, so another can come to rest inside it;
// switched back on, it is pushed out of that one at the bounded speed, as a placement is
// (the soak's pinned limb was driven 26 cm into the ground when the whole overlap was
// corrected in one substep).
Flight OneSwitchedOnInsideAnother(float push_speed, float* overlap) {
  WorldSettings ws;
  ws.ragdoll_max_push_speed = push_speed;
  auto w = FloorWorld(ws);
  RagdollSettings log;
  PartSettings part;
  part.shape = {.type = PartShape::kCapsule, .radius = 0.1f, .half_height = 0.2f};
  log.parts = {part};
  const RagdollArchetypeId a = w->BuildRagdollArchetype(log).value();
  const Quat lying = AxisAngle(Vec3{0, 0, 1}, 1.5707963f);
  std::vector<Transform> off(1), resting(1);
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = off;
  b.placement = Transform{{0, 0.1f, 0}, lying, {1, 1, 1}};
  b.enabled = false;
  const RagdollId switched = w->BindRagdoll(b).value();
  b.output_parts = resting;
  b.placement = Transform{{0, 0.15f, 0.05f}, lying, {1, 1, 1}};
  b.enabled = true;
  const RagdollId other = w->BindRagdoll(b).value();
  for (int f = 0; f < 60; ++f) w->Step(kStep);  // it falls through the switched-off one's space to the floor
  EXPECT_GT(0.2f - Length(resting[0].translation - off[0].translation), 0.14f) << "m of overlap to start from";
  EXPECT_EQ(w->SetRagdollEnabled(switched, true).code, ErrorCode::kNone);
  std::vector<Watched> bodies{Watch(*w, a, switched, &off), Watch(*w, a, other, &resting)};
  const Flight f = Fly(*w, bodies, 60);
  *overlap = 0.2f - Length(resting[0].translation - off[0].translation);  // what is left
  return f;
}

TEST(Depenetration, ARagdollSwitchedBackOnInsideAnotherIsPushedOutAtTheBoundedSpeed) {
  float left = 0, left_unbounded = 0;
  const Flight f = OneSwitchedOnInsideAnother(1.0f, &left);
  const Flight unbounded = OneSwitchedOnInsideAnother(INFINITY, &left_unbounded);
  Print("switched on 15 cm inside another", f);
  Print("the same without the bound", unbounded);
  EXPECT_EQ(f.resets, 0);
  // Two logs pushed apart at the bound, 1 m/s each (measured: 1.00); the margin is for
  // rounding on other instruction sets, not a second cause.
  EXPECT_LT(f.speed, 1.5f);
  // Without the bound the whole 15 cm comes out in one substep and throws them (measured:
  // 1.80 m/s and 51 J at the peak against 1.00 and 8.8 J; over 3 m/s before issue 38 chose
  // a pair's contacts by spread and swept its passes three times, so that its velocity
  // pass takes back more of the push-out's speed).
  EXPECT_GT(unbounded.speed, 1.5f) << "the bound is what keeps the overlap from throwing them";
  EXPECT_GT(unbounded.energy, 3.0f * f.energy);
  EXPECT_LT(left, 0.01f) << "m of overlap left: they were pushed apart";
  EXPECT_LT(left_unbounded, 0.01f);
}

TEST(Depenetration, ThePushSpeedSettingIsChecked) {
  for (const float bad : {0.0f, -1.0f, NAN}) {
    WorldSettings ws;
    ws.ragdoll_max_push_speed = bad;
    auto made = World::Create(ws);
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(made.error().code, ErrorCode::kOutOfRange);
    EXPECT_EQ(made.error().field, "ragdoll_max_push_speed");
  }
}

}  // namespace
}  // namespace tendon::test
