// The planar stickman of the Godot reference (stickman-2d-ragdoll-spec-godot.txt, section
// 5): 10 bodies and 9 pin joints built from its bone table, in planar mode, falling on flat
// ground, a ramp and stairs.
#include <cmath>

#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kPx = 0.0018f;  // metres per pixel: the ~990 px figure stands 1.8 m tall
constexpr float kStep = 1.0f / 60.0f;

// A capsule part between two points (in pixels, Godot's y down) with a pin at `pin`.
PartSettings Bone(int parent, float x0, float y0, float x1, float y1, float radius_px, float mass, float lin_damp,
                  float ang_damp, float lo_deg, float hi_deg) {
  const Vec3 a{x0 * kPx, -y0 * kPx, 0}, b{x1 * kPx, -y1 * kPx, 0};
  const Vec3 along = b - a;
  const float length = Length(along);
  PartSettings p;
  p.parent = parent;
  p.pose.translation = (a + b) * 0.5f;
  p.pose.rotation = ShortestArc(Vec3{0, 1, 0}, along * (1.0f / length));
  p.shape.type = PartShape::kCapsule;
  p.shape.radius = radius_px * kPx;
  p.shape.half_height = std::max(length * 0.5f - p.shape.radius, 0.0f);
  p.mass = mass;
  p.linear_damping = lin_damp;
  p.angular_damping = ang_damp;
  p.joint.type = JointType::kHinge;
  p.joint.anchor = a;
  p.joint.twist_axis = {0, 0, 1};  // the plane's normal
  p.joint.plane_axis = {1, 0, 0};
  p.joint.hinge_min_degrees = lo_deg;
  p.joint.hinge_max_degrees = hi_deg;
  return p;
}

RagdollSettings Stickman() {
  RagdollSettings s;
  s.name = "stickman";
  // torso: hips (0,0) to neck (0,-391.5), radius 12, 8 kg.
  s.parts.push_back(Bone(-1, 0, 0, 0, -391.5f, 12, 8.0f, 1.0f, 4.0f, -180, 180));
  PartSettings head;  // circle of radius 100 on the neck, 2 kg, free
  head.parent = 0;
  head.pose.translation = {0, (391.5f + 100) * kPx, 0};
  head.shape = {.type = PartShape::kSphere, .radius = 100 * kPx};
  head.mass = 2.0f;
  head.linear_damping = 0.5f;
  head.angular_damping = 2.0f;
  head.joint.type = JointType::kHinge;
  head.joint.anchor = {0, 391.5f * kPx, 0};
  head.joint.twist_axis = {0, 0, 1};
  head.joint.plane_axis = {1, 0, 0};
  head.joint.hinge_min_degrees = -180;
  head.joint.hinge_max_degrees = 180;
  s.parts.push_back(head);
  // Arms from the shoulder (0,-248): upper 168 px, lower 200 px; legs from the hips: 200 + 200.
  s.parts.push_back(Bone(0, 0, -248, -168, -248, 8, 1.5f, 0.5f, 3.0f, -160, 160));    // 2 left upper arm
  s.parts.push_back(Bone(2, -168, -248, -368, -248, 8, 1.0f, 0.5f, 3.0f, -5, 150));   // 3 left lower arm
  s.parts.push_back(Bone(0, 0, -248, 168, -248, 8, 1.5f, 0.5f, 3.0f, -160, 160));     // 4 right upper arm
  s.parts.push_back(Bone(4, 168, -248, 368, -248, 8, 1.0f, 0.5f, 3.0f, -150, 5));     // 5 right lower arm
  s.parts.push_back(Bone(0, 0, 0, 0, 200, 8, 2.0f, 0.5f, 3.0f, -160, 160));           // 6 left upper leg
  s.parts.push_back(Bone(6, 0, 200, 0, 400, 8, 1.5f, 0.5f, 3.0f, -5, 150));           // 7 left lower leg
  s.parts.push_back(Bone(0, 0, 0, 0, 200, 8, 2.0f, 0.5f, 3.0f, -160, 160));           // 8 right upper leg
  s.parts.push_back(Bone(8, 0, 200, 0, 400, 8, 1.5f, 0.5f, 3.0f, -5, 150));           // 9 right lower leg
  return s;
}

void FallOnto(const StaticWorldSettings& ground, const char* what) {
  auto w = MakeWorld();
  ASSERT_EQ(w->BuildStaticWorld(ground).code, ErrorCode::kNone) << what;
  const RagdollSettings s = Stickman();
  auto built = w->BuildRagdollArchetype(s);
  ASSERT_TRUE(built.ok()) << built.error().field << ": " << built.error().message;
  std::vector<Transform> parts(10);
  RagdollBinding b;
  b.archetype = built.value();
  b.placement = Transform{{0, 1.2f, 0}, AxisAngle(Vec3{0, 0, 1}, 0.4f), {1, 1, 1}};
  b.output_parts = parts;
  b.linear_velocity = {1.5f, 0, 0};
  b.planar_normal = {0, 0, 1};
  const RagdollId id = w->BindRagdoll(b).value();
  float max_z = 0, min_axis = 1;
  for (int f = 0; f < 600 && !w->IsRagdollAsleep(id); ++f) {
    w->Step(kStep);
    for (const Transform& p : parts) {
      max_z = std::max(max_z, std::fabs(p.translation.z));
      min_axis = std::min(min_axis, Rotate(p.rotation, Vec3{0, 0, 1}).z);  // turns about z only
    }
    // Joint limits hold (hinge angle about z relative to the build pose, within 2 degrees).
    for (int j = 1; j < 10; ++j) {
      const PartSettings& part = s.parts[j];
      const Quat rel = Conjugate(parts[part.parent].rotation) * parts[j].rotation;
      const Quat rel0 = Conjugate(s.parts[part.parent].pose.rotation) * part.pose.rotation;
      const Quat d = Normalize(rel * Conjugate(rel0));
      const float angle = 2.0f * std::atan2(d.z, d.w) * 57.29578f;
      const float wrapped = std::remainder(angle, 360.0f);
      ASSERT_GE(wrapped, part.joint.hinge_min_degrees - 2.0f) << what << " joint " << j << " frame " << f;
      ASSERT_LE(wrapped, part.joint.hinge_max_degrees + 2.0f) << what << " joint " << j << " frame " << f;
    }
  }
  EXPECT_LT(max_z, 1e-4f) << what;
  EXPECT_GT(min_axis, 0.9999f) << what;
  EXPECT_TRUE(w->IsRagdollAsleep(id)) << what << " came to rest";
  std::vector<Vec3> v(10), wv(10);
  EXPECT_TRUE(w->GetRagdollVelocities(id, v, wv).ok());
  for (int j = 0; j < 10; ++j) EXPECT_LT(Length(v[j]), 0.05f) << what;
}

TEST(Stickman, FallsOnFlatGroundAndComesToRestInItsPlane) {
  FallOnto(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}, "flat ground");
}

TEST(Stickman, FallsOnARampAndComesToRestInItsPlane) {
  FallOnto(StaticWorldSettings{{StaticPlane{Rotate(AxisAngle(Vec3{0, 0, 1}, 0.3f), Vec3{0, 1, 0}), 0}}}, "a ramp");
}

TEST(Stickman, FallsOnStairsAndComesToRestInItsPlane) {
  StaticWorldSettings stairs;
  for (int k = 0; k < 5; ++k) {
    stairs.boxes.push_back(StaticBox{Transform{{0.4f * k, 0.1f * k - 0.4f, 0}, {}, {1, 1, 1}}, {0.2f, 0.1f * k + 0.4f, 1.0f}});
  }
  stairs.planes.push_back(StaticPlane{{0, 1, 0}, -0.8f});
  FallOnto(stairs, "stairs");
}

// Crates thrown at the (planar) stickman, held up at its hips, bounce off its torso and
// swing it; nothing passes through.
TEST(Stickman, CratesBounceOffIt) {
  WorldSettings ws;
  ws.gravity = {0, -9.81f, 0};
  auto w = MakeWorld(ws);
  const RagdollArchetypeId man = w->BuildRagdollArchetype(Stickman()).value();
  std::vector<Transform> parts(10);
  const Transform hips{{0, 1.0f, 0}, {}, {1, 1, 1}};
  Transform root = Compose(hips, Stickman().parts[0].pose);
  RagdollBinding b;
  b.archetype = man;
  b.placement = hips;
  b.output_parts = parts;
  b.planar_normal = {0, 0, 1};
  b.kinematic_root = &root;  // the torso is driven: the crate's push shows in the limbs and head
  const RagdollId man_id = w->BindRagdoll(b).value();
  RagdollSettings crate;
  PartSettings box;
  box.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  box.mass = 3.0f;
  box.restitution = 0.6f;
  box.gravity_factor = 0.0f;  // a straight throw
  crate.parts.push_back(box);
  const RagdollArchetypeId crate_id = w->BuildRagdollArchetype(crate).value();
  // At the shoulders' height, where the arms and torso are.
  std::vector<Transform> crate_parts(1);
  RagdollBinding cb;
  cb.archetype = crate_id;
  cb.placement.translation = {-1.5f, 1.0f + 248 * kPx, 0};
  cb.linear_velocity = {8, 0, 0};
  cb.output_parts = crate_parts;
  const RagdollId crate_ref = w->BindRagdoll(cb).value();
  std::vector<Vec3> v(10), wv(10), cv(1), cw(1);
  float limb_push = 0;
  for (int f = 0; f < 60; ++f) {
    w->Step(kStep);
    EXPECT_TRUE(w->GetRagdollVelocities(man_id, v, wv).ok());
    for (int j = 2; j < 6; ++j) limb_push = std::max(limb_push, Length(v[j]));
    ASSERT_LT(crate_parts[0].translation.x, 0.1f) << "frame " << f << ": the crate passed through";
  }
  EXPECT_TRUE(w->GetRagdollVelocities(crate_ref, cv, cw).ok());
  EXPECT_LT(cv[0].x, 0.0f) << "the crate bounced back";
  EXPECT_GT(limb_push, 0.5f) << "the arms were struck";
  for (const Transform& p : parts) EXPECT_LT(std::fabs(p.translation.z), 1e-4f);  // still planar
}

TEST(Stickman, PlanarNormalMustBeUnit) {
  auto w = MakeWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Stickman()).value();
  std::vector<Transform> parts(10);
  RagdollBinding b;
  b.archetype = a;
  b.output_parts = parts;
  b.planar_normal = {0, 0, 2};
  EXPECT_EQ(w->BindRagdoll(b).error().field, "planar_normal");
}

}  // namespace
}  // namespace tendon::test
