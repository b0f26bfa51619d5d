// Ragdoll archetypes: mass properties, joint frames, the Jolt "Human" asset, and every bad
// input named. (The rigid solver itself is not built yet.)
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "kernel/collide/part_distance.h"
#include "kernel/rigid/ragdoll_archetype.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "ports/json/json.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string SharedData(const std::string& relative) { return ports::SharedDataPath(relative); }

PartSettings Part(int32_t parent, Vec3 position, PartShape shape = PartShape::kCapsule) {
  PartSettings p;
  p.parent = parent;
  p.pose.translation = position;
  p.shape.type = shape;
  p.joint.anchor = position;
  return p;
}

RagdollSettings TwoParts() {
  RagdollSettings s;
  s.parts.push_back(Part(-1, {0, 1, 0}));
  s.parts.push_back(Part(0, {0, 0.7f, 0}));
  return s;
}

Error BuildError(const RagdollSettings& s) {
  auto w = MakeWorld();
  auto r = w->BuildRagdollArchetype(s);
  return r.ok() ? Error{} : r.error();
}

TEST(ShapeMass, SphereBoxAndCapsuleMatchClosedForms) {
  PartShapeSettings sphere{.type = PartShape::kSphere, .radius = 0.2f};
  const detail::ShapeMass s = detail::ComputeShapeMass(sphere);
  EXPECT_NEAR(s.volume, 4.0 / 3.0 * kPi * 0.008, 1e-6);
  EXPECT_NEAR(s.inertia[0][0], 0.4 * s.volume * 0.04, 1e-7);
  PartShapeSettings box{.type = PartShape::kBox, .half_extents = {0.1f, 0.2f, 0.3f}};
  const detail::ShapeMass b = detail::ComputeShapeMass(box);
  EXPECT_NEAR(b.volume, 0.048, 1e-6);
  EXPECT_NEAR(b.inertia[0][0], 0.048 * (0.04 + 0.09) / 3.0, 1e-7);
  EXPECT_NEAR(b.inertia[2][2], 0.048 * (0.01 + 0.04) / 3.0, 1e-7);
}

// A tapered capsule with equal radii is a capsule: the sliced integration must agree with
// the closed form, which is independent code.
TEST(ShapeMass, TaperedCapsuleIntegrationAgreesWithTheCapsuleClosedForm) {
  PartShapeSettings capsule{.type = PartShape::kCapsule, .radius = 0.05f, .half_height = 0.15f};
  PartShapeSettings tapered{.type = PartShape::kTaperedCapsule, .top_radius = 0.05f, .bottom_radius = 0.05f,
                            .half_height = 0.15f};
  const detail::ShapeMass c = detail::ComputeShapeMass(capsule);
  const detail::ShapeMass t = detail::ComputeShapeMass(tapered);
  EXPECT_NEAR(t.volume / c.volume, 1.0, 1e-5);
  EXPECT_NEAR(t.inertia[0][0] / c.inertia[0][0], 1.0, 1e-4);
  EXPECT_NEAR(t.inertia[1][1] / c.inertia[1][1], 1.0, 1e-4);
  EXPECT_NEAR(t.centre.y, 0.0f, 1e-6f);
  // Tapering moves the centre of mass toward the larger sphere.
  tapered.top_radius = 0.08f;
  EXPECT_GT(detail::ComputeShapeMass(tapered).centre.y, 0.0f);
}

// The hull of two spheres is a frustum between the tangent circles plus two spherical
// caps; their closed-form volumes check the sliced integration for unequal radii.
TEST(ShapeMass, TaperedCapsuleVolumeMatchesFrustumPlusCaps) {
  const double r1 = 0.08, r2 = 0.05, h = 0.15;
  const double sn = (r2 - r1) / (2 * h), cs = std::sqrt(1 - sn * sn);
  const double frustum_height = (h + r1 * sn) - (-h + r2 * sn);
  const double a = r1 * cs, b = r2 * cs;
  const double frustum = kPi / 3.0 * frustum_height * (a * a + a * b + b * b);
  auto cap = [](double r, double height) { return kPi * height * height * (3 * r - height) / 3.0; };
  const double expected = frustum + cap(r1, r1 * (1 - sn)) + cap(r2, r2 * (1 + sn));
  PartShapeSettings tapered{.type = PartShape::kTaperedCapsule, .top_radius = static_cast<float>(r1),
                            .bottom_radius = static_cast<float>(r2), .half_height = static_cast<float>(h)};
  EXPECT_NEAR(detail::ComputeShapeMass(tapered).volume / expected, 1.0, 1e-5);
}

// One shape of each kind, and a frame they are placed in, for the distance tests.
std::vector<PartShapeSettings> EveryShape() {
  return {
      {.type = PartShape::kSphere, .radius = 0.2f},
      {.type = PartShape::kBox, .half_extents = {0.1f, 0.2f, 0.3f}},
      {.type = PartShape::kCapsule, .radius = 0.1f, .half_height = 0.3f},
      {.type = PartShape::kTaperedCapsule, .top_radius = 0.05f, .bottom_radius = 0.15f, .half_height = 0.3f},
  };
}
Transform ShapeFrame() { return {{0.3f, -0.2f, 0.5f}, Normalize(Quat{0.2f, 0.4f, -0.1f, 0.9f}), {1, 1, 1}}; }

// The closed-form normals the pair contacts use agree with the distance function's
// numerical gradient, and the distances with PartShapeDistance, around every shape.
TEST(PartDistance, ClosedFormNormalsMatchTheNumericalGradient) {
  const std::vector<PartShapeSettings> shapes = EveryShape();
  const Transform frame = ShapeFrame();
  uint32_t seed = 12345;
  auto rnd = [&]() {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
  };
  for (const PartShapeSettings& sh : shapes) {
    int checked = 0;
    for (int i = 0; i < 400; ++i) {
      const Vec3 p = frame.translation + Vec3{rnd(), rnd(), rnd()} * 0.6f;
      Vec3 n;
      const float d = detail::PartShapeDistanceNormal(sh, frame, p, &n);
      EXPECT_NEAR(d, detail::PartShapeDistance(sh, frame, p), 1e-5f);
      auto sdf = [&](Vec3 x) { return detail::PartShapeDistance(sh, frame, x); };
      // Away from the medial creases (where the gradient is not defined) they agree.
      const Vec3 numeric = detail::DistanceNormal(sdf, p);
      if (std::fabs(Length(n) - 1.0f) > 1e-4f) ADD_FAILURE() << "not unit";
      if (Dot(numeric, n) > 0.99f) ++checked;
    }
    EXPECT_GT(checked, 380) << static_cast<int>(sh.type);
  }
}

// The pair contacts skip a pair whose shapes' cores (less their radii) are out of reach:
// the segment distance is the least over both segments (against a fine sampling of them,
// for crossing, parallel, collinear and point segments), and every shape lies within its
// core's radius (no point inside a shape is farther than that from its core).
TEST(PartDistance, SegmentDistanceIsTheLeastAndCoresHoldTheirShapes) {
  uint32_t seed = 777;
  auto rnd = [&]() {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
  };
  auto brute = [](Vec3 p0, Vec3 p1, Vec3 q0, Vec3 q1) {
    float best = 1e30f;
    for (int i = 0; i <= 200; ++i)
      for (int j = 0; j <= 200; ++j) {
        const float s = static_cast<float>(i) / 200.0f, t = static_cast<float>(j) / 200.0f;
        best = std::min(best, Length((p0 + (p1 - p0) * s) - (q0 + (q1 - q0) * t)));
      }
    return best;
  };
  for (int i = 0; i < 60; ++i) {
    const Vec3 p0{rnd(), rnd(), rnd()};
    Vec3 q0{rnd(), rnd(), rnd()};
    Vec3 p1{rnd(), rnd(), rnd()}, q1{rnd(), rnd(), rnd()};
    if (i % 6 == 1) q1 = q0 + (p1 - p0) * 0.7f;  // parallel
    if (i % 6 == 2) q0 = p0 + (p1 - p0) * 1.5f, q1 = p0 + (p1 - p0) * 2.5f;  // collinear, apart
    if (i % 6 == 3) p1 = p0;  // a point
    if (i % 6 == 4) p1 = p0, q1 = q0;  // two points
    const float d = std::sqrt(detail::SegmentDistance2(p0, p1, q0, q1));
    const float b = brute(p0, p1, q0, q1);
    EXPECT_LE(d, b + 1e-5f) << i;                                      // never above the least
    EXPECT_GE(d, b - 0.02f * (Length(p1 - p0) + Length(q1 - q0)) - 1e-5f) << i;  // the sampling's step
  }
  const std::vector<PartShapeSettings> shapes = EveryShape();
  const Transform frame = ShapeFrame();
  for (const PartShapeSettings& sh : shapes) {
    const detail::PartCore core = detail::CoreOf(sh, frame);
    int inside = 0;
    for (int i = 0; i < 4000; ++i) {
      const Vec3 p = frame.translation + Vec3{rnd(), rnd(), rnd()} * 0.5f;
      if (detail::PartShapeDistance(sh, frame, p) > 0) continue;
      ++inside;
      EXPECT_LE(std::sqrt(detail::SegmentDistance2(p, p, core.a, core.b)), core.radius + 1e-5f)
          << static_cast<int>(sh.type);
    }
    EXPECT_GT(inside, 50) << static_cast<int>(sh.type);
  }
}

TEST(ShapeMass, DiagonalisingRecoversPrincipalAxes) {
  // A box's inertia turned 30 degrees about Z.
  const Quat q = AxisAngle(Vec3{0, 0, 1}, 0.5235988f);
  const float d[3] = {1.0f, 2.0f, 3.0f};
  float m[3][3] = {};
  const Vec3 cols[3] = {Rotate(q, {1, 0, 0}), Rotate(q, {0, 1, 0}), Rotate(q, {0, 0, 1})};
  auto comp = [](Vec3 v, int i) { return i == 0 ? v.x : (i == 1 ? v.y : v.z); };
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) m[r][c] += comp(cols[k], r) * d[k] * comp(cols[k], c);
  Quat axes;
  Vec3 values;
  detail::DiagonaliseSymmetric(m, &axes, &values);
  const float got[3] = {values.x, values.y, values.z};
  for (int k = 0; k < 3; ++k) {
    const Vec3 axis = Rotate(axes, k == 0 ? Vec3{1, 0, 0} : (k == 1 ? Vec3{0, 1, 0} : Vec3{0, 0, 1}));
    // axis must be an eigenvector with eigenvalue got[k]: M axis = got[k] axis.
    const Vec3 mv{m[0][0] * axis.x + m[0][1] * axis.y + m[0][2] * axis.z,
                  m[1][0] * axis.x + m[1][1] * axis.y + m[1][2] * axis.z,
                  m[2][0] * axis.x + m[2][1] * axis.y + m[2][2] * axis.z};
    EXPECT_LT(Length(mv - axis * got[k]), 1e-5f);
  }
}

TEST(RagdollBuild, JointAnchorsMeetInTheBuildPose) {
  RagdollSettings s = TwoParts();
  s.parts[1].pose.rotation = AxisAngle(Vec3{1, 0, 0}, 0.4f);
  s.parts[1].shape.offset = Transform{{0, -0.15f, 0}, AxisAngle(Vec3{0, 0, 1}, 0.2f), {1, 1, 1}};
  auto w = MakeWorld();
  auto r = w->BuildRagdollArchetype(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  RagdollPartInfo parent, child;
  ASSERT_EQ(w->GetRagdollPartInfo(r.value(), 0, &parent).code, ErrorCode::kNone);
  ASSERT_EQ(w->GetRagdollPartInfo(r.value(), 1, &child).code, ErrorCode::kNone);
  // The body frame sits at the shape's centre of mass.
  EXPECT_LT(Length(child.body_pose.translation - TransformPoint(s.parts[1].pose, {0, -0.15f, 0})), 1e-5f);
  EXPECT_GT(child.mass, 0.0f);
  EXPECT_EQ(w->RagdollPartCount(r.value()), 2);
}

TEST(RagdollBuild, MassComesFromValueShareOrDensity) {
  RagdollSettings s = TwoParts();
  s.total_mass = 10.0f;
  s.parts[0].mass = 3.0f;
  s.parts[1].mass_share = 0.25f;
  auto w = MakeWorld();
  const RagdollArchetypeId id = w->BuildRagdollArchetype(s).value();
  RagdollPartInfo a, b;
  EXPECT_TRUE(w->GetRagdollPartInfo(id, 0, &a).ok());
  EXPECT_TRUE(w->GetRagdollPartInfo(id, 1, &b).ok());
  EXPECT_FLOAT_EQ(a.mass, 3.0f);
  EXPECT_FLOAT_EQ(b.mass, 2.5f);
  s.parts[1].mass_share = 0.0f;
  s.parts[1].density = 500.0f;
  const RagdollArchetypeId id2 = w->BuildRagdollArchetype(s).value();
  EXPECT_TRUE(w->GetRagdollPartInfo(id2, 1, &b).ok());
  EXPECT_NEAR(b.mass, 500.0f * b.volume, 1e-4f);
}

TEST(RagdollBuild, StabilisationBoundsTheMassRatioAndKeepsTheTotal) {
  RagdollSettings s = TwoParts();
  s.parts[0].mass = 100.0f;
  s.parts[1].mass = 1.0f;
  s.stabilize.enabled = true;
  s.stabilize.max_mass_ratio = 4.0f;
  auto w = MakeWorld();
  const RagdollArchetypeId id = w->BuildRagdollArchetype(s).value();
  RagdollPartInfo a, b;
  EXPECT_TRUE(w->GetRagdollPartInfo(id, 0, &a).ok());
  EXPECT_TRUE(w->GetRagdollPartInfo(id, 1, &b).ok());
  EXPECT_NEAR(a.mass + b.mass, 101.0f, 1e-3f);
  EXPECT_LE(a.mass / b.mass, 4.0f + 1e-4f);
}

TEST(JoltHuman, LoadsAndBuildsWithTheFilesMassesAndShapes) {
  const std::string path = SharedData("jolt-human/ragdoll.json");
  if (!json::ParseFile(path).ok) GTEST_SKIP() << path << " is not available";
  auto loaded = ports::LoadJoltHumanRagdoll(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const RagdollSettings& s = loaded.value();
  ASSERT_EQ(s.parts.size(), 23u);
  EXPECT_NEAR(s.total_mass, 73.2119f, 1e-3f);
  auto w = MakeWorld();
  auto built = w->BuildRagdollArchetype(s);
  ASSERT_TRUE(built.ok()) << built.error().field << ": " << built.error().message;
  // Jolt computed each part's mass as volume x 1000 kg/m^3. Ours must agree for capsules
  // and boxes. Jolt approximates a tapered capsule's mass properties by a box (twice the
  // average radius wide, the full length tall: 8.4987 kg for R_Leg_sjnt_0 is exactly that
  // box), so those are checked against the exact hull elsewhere; the compound neck parts
  // are approximated by the loader.
  const json::ParseResult raw = json::ParseFile(path);
  int compared = 0;
  for (int i = 0; i < 23; ++i) {
    const json::Value& part = raw.value["parts"][static_cast<std::size_t>(i)];
    const std::string& type = part["shape"]["type"].String();
    if (type == "tapered_capsule") {
      const json::Value& sh = part["shape"];
      const double r = 0.5 * (sh["top_radius"].Number() + sh["bottom_radius"].Number());
      const double len = 2.0 * sh["half_height_of_tapered_cylinder"].Number() + sh["top_radius"].Number() +
                         sh["bottom_radius"].Number();
      EXPECT_NEAR(4.0 * r * r * len * 1000.0, part["mass"].Number(), part["mass"].Number() * 1e-4) << part["name"].String();
      continue;
    }
    if (type == "compound") continue;
    ++compared;
    RagdollPartInfo info;
    ASSERT_EQ(w->GetRagdollPartInfo(built.value(), i, &info).code, ErrorCode::kNone);
    EXPECT_NEAR(info.volume * 1000.0, part["mass"].Number(), part["mass"].Number() * 2e-3) << part["name"].String();
    // Principal inertia: compare the trace (rotation invariant) with Jolt's tensor.
    const json::Value& I = part["computed_mass_properties"]["inertia"];
    const double jolt_trace = I[0][0].Number() + I[1][1].Number() + I[2][2].Number();
    const double ours = info.principal_inertia.x + info.principal_inertia.y + info.principal_inertia.z;
    EXPECT_NEAR(ours, jolt_trace, jolt_trace * 1e-2) << part["name"].String();
  }
  EXPECT_EQ(compared, 13);  // 11 capsules, 2 boxes
}

// MeasureJoint reads a pose the way an observer would: a child turned 30 degrees about
// its hinge (range -10..20) is 10 degrees past it; one moved 5 mm off its anchor has a
// 5 mm gap; a swing-twist child swung 50 degrees in a 40-degree cone is 10 past it.
TEST(RagdollMeasure, MeasureJointReadsGapsAnglesAndExcesses) {
  RagdollSettings s;
  PartSettings root;
  s.parts.push_back(root);
  PartSettings arm;
  arm.parent = 0;
  arm.pose.translation = {0, -0.3f, 0};
  arm.joint.type = JointType::kHinge;
  arm.joint.anchor = {0, -0.1f, 0};
  arm.joint.twist_axis = {1, 0, 0};
  arm.joint.plane_axis = {0, 1, 0};
  arm.joint.hinge_min_degrees = -10;
  arm.joint.hinge_max_degrees = 20;
  s.parts.push_back(arm);
  const float kDeg = 3.14159265f / 180.0f;
  auto turned = [&](float degrees, Vec3 axis, Vec3 shift) {
    const Quat q = AxisAngle(axis, degrees * kDeg);
    // The child turned about the anchor, then shifted.
    const Vec3 anchor = arm.joint.anchor;
    return std::vector<Transform>{Transform{},
                                  Transform{anchor + Rotate(q, arm.pose.translation - anchor) + shift, q, {1, 1, 1}}};
  };
  JointMeasure m = MeasureJoint(s, turned(30, {1, 0, 0}, {}), 1);
  EXPECT_NEAR(m.twist, 30 * kDeg, 1e-4f);
  EXPECT_NEAR(m.TwistExcess(), 10 * kDeg, 1e-4f);
  EXPECT_NEAR(m.gap, 0.0f, 1e-5f);
  EXPECT_NEAR(MeasureJoint(s, turned(5, {1, 0, 0}, {}), 1).TwistExcess(), 0.0f, 1e-6f);
  EXPECT_NEAR(MeasureJoint(s, turned(-25, {1, 0, 0}, {}), 1).TwistExcess(), 15 * kDeg, 1e-4f);
  EXPECT_NEAR(MeasureJoint(s, turned(0, {1, 0, 0}, {0.005f, 0, 0}), 1).gap, 0.005f, 1e-5f);
  s.parts[1].joint.type = JointType::kSwingTwist;
  s.parts[1].joint.twist_axis = {0, -1, 0};
  s.parts[1].joint.plane_axis = {1, 0, 0};
  s.parts[1].joint.normal_half_cone_degrees = s.parts[1].joint.plane_half_cone_degrees = 40;
  m = MeasureJoint(s, turned(50, {0, 0, 1}, {}), 1);
  EXPECT_NEAR(m.swing, 50 * kDeg, 1e-4f);
  EXPECT_NEAR(m.swing_limit, 40 * kDeg, 1e-4f);
  EXPECT_NEAR(m.SwingExcess(), 10 * kDeg, 1e-4f);
  EXPECT_NEAR(m.twist, 0.0f, 1e-4f);
  EXPECT_EQ(MeasureJoint(s, turned(0, {1, 0, 0}, {}), 0).gap, 0.0f) << "the root has no joint";
  EXPECT_EQ(MeasureJoint(s, std::vector<Transform>(1), 1).gap, 0.0f) << "too few frames";
}

TEST(RagdollBuild, RejectsEveryBadInputWithItsName) {
  struct Case {
    const char* what;
    void (*mutate)(RagdollSettings&);
    ErrorCode code;
    const char* field;
  };
  const Case cases[] = {
      {"empty", [](RagdollSettings& s) { s.parts.clear(); }, ErrorCode::kEmpty, "parts"},
      {"negative mass", [](RagdollSettings& s) { s.parts[1].mass = -1; }, ErrorCode::kOutOfRange, "parts[1].mass"},
      {"zero density", [](RagdollSettings& s) { s.parts[1].density = 0; }, ErrorCode::kOutOfRange, "parts[1].density"},
      {"share without total", [](RagdollSettings& s) { s.parts[1].mass_share = 0.5f; }, ErrorCode::kOutOfRange, "total_mass"},
      {"zero radius", [](RagdollSettings& s) { s.parts[0].shape.radius = 0; }, ErrorCode::kOutOfRange, "parts[0].shape.radius"},
      {"negative extent",
       [](RagdollSettings& s) {
         s.parts[1].shape.type = PartShape::kBox;
         s.parts[1].shape.half_extents.y = -0.1f;
       },
       ErrorCode::kOutOfRange, "parts[1].shape.half_extents.y"},
      {"tapered containing", [](RagdollSettings& s) {
         s.parts[1].shape = {.type = PartShape::kTaperedCapsule, .top_radius = 0.5f, .bottom_radius = 0.05f, .half_height = 0.1f};
       }, ErrorCode::kOutOfRange, "parts[1].shape"},
      {"nan pose", [](RagdollSettings& s) { s.parts[1].pose.translation.x = std::nanf(""); }, ErrorCode::kNotFinite, "parts[1].pose"},
      {"nan friction", [](RagdollSettings& s) { s.parts[1].friction = INFINITY; }, ErrorCode::kNotFinite, "parts[1].friction"},
      {"non-unit rotation", [](RagdollSettings& s) { s.parts[1].pose.rotation = Quat{0, 0, 0, 3}; }, ErrorCode::kNotUnitRotation,
       "parts[1].pose.rotation"},
      {"scaled part", [](RagdollSettings& s) { s.parts[1].pose.scale = {2, 2, 2}; }, ErrorCode::kOutOfRange, "parts[1].pose.scale"},
      {"parent after", [](RagdollSettings& s) {
         s.parts.push_back(Part(0, {0, 0.4f, 0}));
         s.parts[1].parent = 2;
       }, ErrorCode::kParentNotBefore, "parts[1].parent"},
      {"cycle", [](RagdollSettings& s) {
         s.parts.push_back(Part(1, {0, 0.4f, 0}));
         s.parts[1].parent = 2;
       }, ErrorCode::kCycle, "parts[1].parent"},
      {"own parent", [](RagdollSettings& s) { s.parts[1].parent = 1; }, ErrorCode::kCycle, "parts[1].parent"},
      {"parent out of range", [](RagdollSettings& s) { s.parts[1].parent = 9; }, ErrorCode::kParentOutOfRange, "parts[1].parent"},
      {"disconnected", [](RagdollSettings& s) { s.parts[1].parent = -1; }, ErrorCode::kDisconnected, "parts[1].parent"},
      {"cone out of range", [](RagdollSettings& s) { s.parts[1].joint.normal_half_cone_degrees = 200; }, ErrorCode::kOutOfRange,
       "parts[1].joint.normal_half_cone_degrees"},
      {"twist inverted", [](RagdollSettings& s) {
         s.parts[1].joint.twist_min_degrees = 30;
         s.parts[1].joint.twist_max_degrees = -30;
       }, ErrorCode::kOutOfRange, "parts[1].joint.twist_min_degrees"},
      {"hinge out of range", [](RagdollSettings& s) { s.parts[1].joint.hinge_max_degrees = 270; }, ErrorCode::kOutOfRange,
       "parts[1].joint.hinge_max_degrees"},
      {"axis not unit", [](RagdollSettings& s) { s.parts[1].joint.twist_axis = {0, 2, 0}; }, ErrorCode::kOutOfRange,
       "parts[1].joint.twist_axis"},
      {"axes not perpendicular", [](RagdollSettings& s) { s.parts[1].joint.plane_axis = {0, 1, 0}; }, ErrorCode::kOutOfRange,
       "parts[1].joint.plane_axis"},
      {"bad motor", [](RagdollSettings& s) { s.parts[1].joint.motor.frequency_hz = -1; }, ErrorCode::kOutOfRange,
       "parts[1].joint.motor.frequency_hz"},
      {"bad pair", [](RagdollSettings& s) { s.self_collision_pairs.push_back({0, 5}); }, ErrorCode::kBadReference,
       "self_collision_pairs[0]"},
      {"bad stabilise", [](RagdollSettings& s) { s.stabilize.max_mass_ratio = 0.5f; }, ErrorCode::kOutOfRange,
       "stabilize.max_mass_ratio"},
  };
  for (const Case& c : cases) {
    RagdollSettings s = TwoParts();
    c.mutate(s);
    const Error e = BuildError(s);
    EXPECT_EQ(e.code, c.code) << c.what << ": " << e.message;
    EXPECT_EQ(e.field, c.field) << c.what;
    EXPECT_FALSE(e.message.empty()) << c.what;
  }
  RagdollSettings many;
  for (int i = 0; i < 65; ++i) many.parts.push_back(Part(i - 1, {0, static_cast<float>(i), 0}));
  EXPECT_EQ(BuildError(many).code, ErrorCode::kCapacity);
}

TEST(Json, ParsesValuesAndReportsWhereItFails) {
  const json::ParseResult ok = json::Parse(R"({"a": [1, 2.5e1, -3], "b": {"c": "x\ny"}, "d": null, "e": true})");
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(ok.value["a"].Size(), 3u);
  EXPECT_DOUBLE_EQ(ok.value["a"][1].Number(), 25.0);
  EXPECT_EQ(ok.value["b"]["c"].String(), "x\ny");
  EXPECT_TRUE(ok.value["d"].IsNull());
  EXPECT_TRUE(ok.value["e"].Bool());
  EXPECT_TRUE(ok.value["missing"].IsNull());
  const json::ParseResult bad = json::Parse(R"({"a": [1, 2,)");
  EXPECT_FALSE(bad.ok);
  EXPECT_GT(bad.error_offset, 5u);
  EXPECT_FALSE(json::Parse("[1] x").ok);
  EXPECT_FALSE(json::ParseFile("/nonexistent/file.json").ok);
}

}  // namespace
}  // namespace tendon::test
