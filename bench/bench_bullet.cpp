// bench/bench_bullet.cpp: Bullet 3's classic ragdoll beside Tendon's, in the pile layout of
// bench_piles.cpp, so users can compare the two on their own machine. Built only where
// libbullet-dev is installed (bench/CMakeLists.txt finds it with pkg-config).
//
//   BM_BulletRagdolls/bullet                 Bullet 3 (btDiscreteDynamicsWorld, sequential
//       impulses, 10 iterations, one step of 1/60 s per frame) with 160 copies of the
//       11-part ragdoll of its RagdollDemo: capsules of the demo's sizes and places, 1 kg
//       each, cone-twist hips, shoulders and neck, hinged knees, elbows and waist with the
//       demo's limits, damping 0.05 / 0.85, the demo's sleep thresholds.
//   BM_BulletRagdolls/tendon/workers:<w>     the same 160 ragdolls built as a Tendon
//       archetype (same capsules, masses, joint places, axes and limits), kPileSubsteps.
// Both lie down (the demo's T-pose turned face up) in 16 piles (4 x 4, 4 m apart) of 10:
// the i-th has its pelvis 0.6 (i + 1) m up and is turned 36 i degrees about the vertical;
// dropped onto a static box; 500 steps of 1/60 s, timed over the steps only. Counters as in
// BM_RagdollPiles: steps_per_s, worst and resting joint attachment error (each joint's two
// pivots), deepest penetration into the ground, and when every body slept (-1: not within
// the 500 steps).
// The joints use one anchor per joint (the mid-point of the demo's two pivots, which the
// demo leaves 1-10 cm apart) on both sides, so both engines start from the same pose.
#include <benchmark/benchmark.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "tendon/tbb_task_system.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;

constexpr int kPiles = 16, kPerPile = 10, kSteps = 500, kParts = 11;
constexpr float kStep = 1.0f / 60.0f;
constexpr int kTendonSubsteps = 8;  // as BM_RagdollPiles (bench_piles.cpp, kPileSubsteps)
constexpr float kPi = 3.14159265f;

// The classic ragdoll in its build pose (standing, arms out along x, facing +z), from the
// numbers of Bullet's RagdollDemo: capsule radius and cylinder height, centre, and a turn
// about z for the arms.
struct ClassicPart {
  const char* name;
  int parent;
  float radius, height;
  Vec3 centre;
  float roll;  // about z, radians
};
constexpr ClassicPart kClassic[kParts] = {
    {"pelvis", -1, 0.15f, 0.20f, {0, 1.0f, 0}, 0},
    {"spine", 0, 0.15f, 0.28f, {0, 1.2f, 0}, 0},
    {"head", 1, 0.10f, 0.05f, {0, 1.6f, 0}, 0},
    {"left_upper_leg", 0, 0.07f, 0.45f, {-0.18f, 0.65f, 0}, 0},
    {"left_lower_leg", 3, 0.05f, 0.37f, {-0.18f, 0.2f, 0}, 0},
    {"right_upper_leg", 0, 0.07f, 0.45f, {0.18f, 0.65f, 0}, 0},
    {"right_lower_leg", 5, 0.05f, 0.37f, {0.18f, 0.2f, 0}, 0},
    {"left_upper_arm", 1, 0.05f, 0.33f, {-0.35f, 1.45f, 0}, kPi / 2},
    {"left_lower_arm", 7, 0.04f, 0.25f, {-0.7f, 1.45f, 0}, kPi / 2},
    {"right_upper_arm", 1, 0.05f, 0.33f, {0.35f, 1.45f, 0}, -kPi / 2},
    {"right_lower_arm", 9, 0.04f, 0.25f, {0.7f, 1.45f, 0}, -kPi / 2},
};
// The joint of part j (j >= 1) to its parent: the anchor (build pose), the axis (hinge axis,
// or the cone's twist axis) and the limits, radians: hinges [lo, hi]; cones the two swing
// spans and a twist span (the demo's btConeTwistConstraint::setLimit).
struct ClassicJoint {
  bool hinge;
  Vec3 anchor, axis;
  float lo, hi;  // hinge limits, or the two swing spans
  float twist;   // cone: twist span (+-)
};
const ClassicJoint kJoints[kParts] = {
    {},
    {true, {0, 1.10f, 0}, {1, 0, 0}, -kPi / 4, kPi / 2, 0},              // waist
    {false, {0, 1.48f, 0}, {0, 1, 0}, kPi / 4, kPi / 4, kPi / 2},         // neck
    {false, {-0.18f, 0.8875f, 0}, {0, -1, 0}, kPi / 4, kPi / 4, 0},       // left hip
    {true, {-0.18f, 0.405f, 0}, {1, 0, 0}, 0, kPi / 2, 0},                // left knee
    {false, {0.18f, 0.8875f, 0}, {0, -1, 0}, kPi / 4, kPi / 4, 0},        // right hip
    {true, {0.18f, 0.405f, 0}, {1, 0, 0}, 0, kPi / 2, 0},                 // right knee
    {false, {-0.185f, 1.40f, 0}, {-1, 0, 0}, kPi / 2, kPi / 2, 0},        // left shoulder
    {true, {-0.545f, 1.45f, 0}, {0, 1, 0}, 0, kPi / 2, 0},                // left elbow
    {false, {0.185f, 1.40f, 0}, {1, 0, 0}, kPi / 2, kPi / 2, 0},          // right shoulder
    {true, {0.545f, 1.45f, 0}, {0, -1, 0}, 0, kPi / 2, 0},                // right elbow
};

float Degrees(float radians) { return radians * 180.0f / kPi; }

RagdollSettings ClassicRagdoll() {
  RagdollSettings s;
  for (int j = 0; j < kParts; ++j) {
    const ClassicPart& c = kClassic[j];
    PartSettings p;
    p.name = c.name;
    p.parent = c.parent;
    p.pose = Transform{c.centre, AxisAngle(Vec3{0, 0, 1}, c.roll), {1, 1, 1}};
    p.shape.type = PartShape::kCapsule;
    p.shape.radius = c.radius;
    p.shape.half_height = 0.5f * c.height;
    p.mass = 1.0f;
    p.friction = 0.5f;  // btRigidBody's default
    p.linear_damping = 0.05f;
    p.angular_damping = 0.85f;
    if (j > 0) {
      const ClassicJoint& k = kJoints[j];
      p.joint.anchor = k.anchor;
      p.joint.twist_axis = k.axis;
      // Any axis normal to the twist axis.
      p.joint.plane_axis = std::fabs(k.axis.x) > 0.5f ? Vec3{0, 0, 1} : Vec3{1, 0, 0};
      if (k.hinge) {
        p.joint.type = JointType::kHinge;
        p.joint.hinge_min_degrees = Degrees(k.lo);
        p.joint.hinge_max_degrees = Degrees(k.hi);
      } else {
        p.joint.normal_half_cone_degrees = Degrees(k.lo);
        p.joint.plane_half_cone_degrees = Degrees(k.hi);
        p.joint.twist_min_degrees = -Degrees(k.twist);
        p.joint.twist_max_degrees = Degrees(k.twist);
      }
    }
    s.parts.push_back(p);
  }
  return s;
}

// Where the k-th ragdoll of the scene lies: its pelvis 0.6 (i + 1) m up in pile k / 10,
// turned 36 i degrees about y, the standing build pose laid face up (turned -90 degrees
// about x through the pelvis).
Transform Placement(int k) {
  const int pile = k / kPerPile, i = k % kPerPile;
  const Vec3 centre{4.0f * static_cast<float>(pile % 4) - 6.0f, 0, 4.0f * static_cast<float>(pile / 4) - 6.0f};
  const Quat turn = AxisAngle(Vec3{0, 1, 0}, 0.62831853f * static_cast<float>(i)) * AxisAngle(Vec3{1, 0, 0}, -kPi / 2);
  const Vec3 pelvis = kClassic[0].centre;
  // x -> centre + (0, h, 0) + turn (x - pelvis)
  return Transform{centre + Vec3{0, 0.6f * static_cast<float>(i + 1), 0} - Rotate(turn, pelvis), turn, {1, 1, 1}};
}

struct Figures {
  double worst_joint = 0, rest_joint = 0, worst_depth = 0, worst_swing = 0, worst_twist = 0;
};

// One frame's worst joint gap and limit excess (MeasureJoint, from the part frames and the
// classic ragdoll's settings) and deepest point below y = 0 (capsules along their y).
void Measure(const std::vector<Transform>& parts, int step, Figures* f) {
  static const RagdollSettings classic = ClassicRagdoll();
  double joint = 0, depth = 0;
  for (std::size_t r = 0; r < parts.size() / kParts; ++r) {
    const std::span<const Transform> mine(&parts[r * kParts], kParts);
    for (int j = 1; j < kParts; ++j) {
      const JointMeasure m = MeasureJoint(classic, mine, j);
      joint = std::max(joint, static_cast<double>(m.gap));
      f->worst_swing = std::max(f->worst_swing, static_cast<double>(m.SwingExcess()) * 57.29578);
      f->worst_twist = std::max(f->worst_twist, static_cast<double>(m.TwistExcess()) * 57.29578);
    }
    for (int j = 0; j < kParts; ++j) {
      const Vec3 axis = Rotate(mine[j].rotation, Vec3{0, 0.5f * kClassic[j].height, 0});
      const float lowest = std::min(mine[j].translation.y + axis.y, mine[j].translation.y - axis.y) - kClassic[j].radius;
      depth = std::max(depth, static_cast<double>(-lowest));
    }
  }
  f->worst_joint = std::max(f->worst_joint, joint);
  f->worst_depth = std::max(f->worst_depth, depth);
  if (step >= kSteps - 60) f->rest_joint = std::max(f->rest_joint, joint);
}

void Report(benchmark::State& state, double seconds, const Figures& f, double asleep_at) {
  state.counters["steps_per_s"] = kSteps / seconds;
  state.counters["part_steps_per_s"] = kSteps * static_cast<double>(kPiles * kPerPile * kParts) / seconds;
  state.counters["worst_joint_error_mm"] = f.worst_joint * 1e3;
  state.counters["rest_joint_error_mm"] = f.rest_joint * 1e3;
  state.counters["worst_penetration_mm"] = f.worst_depth * 1e3;
  state.counters["all_asleep_s"] = asleep_at;
  state.counters["worst_swing_excess_deg"] = f.worst_swing;
  state.counters["worst_twist_excess_deg"] = f.worst_twist;
}

btTransform ToBullet(const Transform& t) {
  return btTransform(btQuaternion(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w),
                     btVector3(t.translation.x, t.translation.y, t.translation.z));
}
Transform FromBullet(const btTransform& t) {
  const btQuaternion q = t.getRotation();
  const btVector3& o = t.getOrigin();
  return Transform{{static_cast<float>(o.x()), static_cast<float>(o.y()), static_cast<float>(o.z())},
                   {static_cast<float>(q.x()), static_cast<float>(q.y()), static_cast<float>(q.z()), static_cast<float>(q.w())},
                   {1, 1, 1}};
}

void BulletRagdolls(benchmark::State& state) {
  Figures figures;
  double seconds = 0, asleep_at = -1;
  for (auto _ : state) {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, -9.81f, 0));
    std::vector<std::unique_ptr<btCollisionShape>> shapes;
    std::vector<std::unique_ptr<btDefaultMotionState>> states;
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    std::vector<std::unique_ptr<btTypedConstraint>> joints;
    shapes.push_back(std::make_unique<btBoxShape>(btVector3(80, 1, 80)));
    states.push_back(std::make_unique<btDefaultMotionState>(btTransform(btQuaternion::getIdentity(), btVector3(0, -1, 0))));
    bodies.push_back(std::make_unique<btRigidBody>(0.0f, states.back().get(), shapes.back().get()));
    world.addRigidBody(bodies.back().get());
    for (int j = 0; j < kParts; ++j) shapes.push_back(std::make_unique<btCapsuleShape>(kClassic[j].radius, kClassic[j].height));
    const RagdollSettings classic = ClassicRagdoll();
    std::vector<btRigidBody*> parts;  // kParts per ragdoll, in ragdoll order
    for (int k = 0; k < kPiles * kPerPile; ++k) {
      const Transform place = Placement(k);
      btRigidBody* mine[kParts];
      for (int j = 0; j < kParts; ++j) {
        btCollisionShape* shape = shapes[1 + j].get();
        btVector3 inertia(0, 0, 0);
        shape->calculateLocalInertia(1.0f, inertia);
        states.push_back(std::make_unique<btDefaultMotionState>(ToBullet(Compose(place, classic.parts[j].pose))));
        btRigidBody::btRigidBodyConstructionInfo info(1.0f, states.back().get(), shape, inertia);
        bodies.push_back(std::make_unique<btRigidBody>(info));
        btRigidBody* body = bodies.back().get();
        body->setDamping(0.05f, 0.85f);
        body->setDeactivationTime(0.8f);
        body->setSleepingThresholds(1.6f, 2.5f);
        world.addRigidBody(body);
        mine[j] = body;
        parts.push_back(body);
      }
      for (int j = 1; j < kParts; ++j) {
        const ClassicJoint& c = kJoints[j];
        btRigidBody* a = mine[kClassic[j].parent];
        btRigidBody* b = mine[j];
        // The joint frame in world: origin at the anchor, the hinge's z (or the cone's
        // twist x) along the axis.
        const Vec3 from = c.hinge ? Vec3{0, 0, 1} : Vec3{1, 0, 0};
        const Transform frame = Compose(place, Transform{c.anchor, ShortestArc(from, c.axis), {1, 1, 1}});
        const btTransform in_a = a->getWorldTransform().inverse() * ToBullet(frame);
        const btTransform in_b = b->getWorldTransform().inverse() * ToBullet(frame);
        if (c.hinge) {
          auto hinge = std::make_unique<btHingeConstraint>(*a, *b, in_a, in_b);
          hinge->setLimit(c.lo, c.hi);
          joints.push_back(std::move(hinge));
        } else {
          auto cone = std::make_unique<btConeTwistConstraint>(*a, *b, in_a, in_b);
          cone->setLimit(c.lo, c.hi, c.twist);
          joints.push_back(std::move(cone));
        }
        world.addConstraint(joints.back().get(), /*disableCollisionsBetweenLinkedBodies=*/true);
      }
    }
    std::vector<Transform> out(parts.size());
    figures = Figures{};
    seconds = 0;
    asleep_at = -1;
    for (int step = 0; step < kSteps; ++step) {
      const auto t0 = std::chrono::steady_clock::now();
      world.stepSimulation(kStep, 1, kStep);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      bool all_asleep = true;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        out[i] = FromBullet(parts[i]->getWorldTransform());
        all_asleep = all_asleep && parts[i]->getActivationState() == ISLAND_SLEEPING;
      }
      Measure(out, step, &figures);
      if (asleep_at < 0 && all_asleep) asleep_at = (step + 1) * kStep;
      if (!all_asleep) asleep_at = -1;
    }
    for (auto& j : joints) world.removeConstraint(j.get());
    for (auto& b : bodies) world.removeRigidBody(b.get());
    state.SetIterationTime(seconds);
  }
  Report(state, seconds, figures, asleep_at);
}

void TendonRagdolls(benchmark::State& state, int workers) {
  Figures figures;
  double seconds = 0, asleep_at = -1;
  for (auto _ : state) {
    std::unique_ptr<TbbTaskSystem> tasks;
    WorldSettings ws;
    ws.ragdoll_substeps = kTendonSubsteps;
    if (workers > 1) {
      tasks = std::make_unique<TbbTaskSystem>(workers);
      ws.tasks = tasks->hooks();
    }
    auto world = World::Create(ws).value();
    world->BuildStaticWorld(StaticWorldSettings{.boxes = {StaticBox{Transform{{0, -1, 0}, {}, {1, 1, 1}}, {80, 1, 80}}}});
    const RagdollArchetypeId a = world->BuildRagdollArchetype(ClassicRagdoll()).value();
    std::vector<Transform> out(static_cast<std::size_t>(kPiles * kPerPile * kParts));
    for (int k = 0; k < kPiles * kPerPile; ++k) {
      RagdollBinding b;
      b.archetype = a;
      b.placement = Placement(k);
      b.output_parts = std::span<Transform>(out).subspan(static_cast<std::size_t>(k) * kParts, kParts);
      world->BindRagdoll(b).value();
    }
    figures = Figures{};
    seconds = 0;
    asleep_at = -1;
    for (int step = 0; step < kSteps; ++step) {
      const auto t0 = std::chrono::steady_clock::now();
      const FrameStats& st = world->Step(kStep);
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      Measure(out, step, &figures);
      const bool all_asleep = st.sleeping_ragdolls == kPiles * kPerPile;
      if (asleep_at < 0 && all_asleep) asleep_at = (step + 1) * kStep;
      if (!all_asleep) asleep_at = -1;
    }
    state.SetIterationTime(seconds);
  }
  Report(state, seconds, figures, asleep_at);
}

}  // namespace

void RegisterBulletBenchmarks() {
  benchmark::RegisterBenchmark("BM_BulletRagdolls/bullet", BulletRagdolls)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kSecond);
  for (int w : tendon::bench::WorkerCounts()) {
    const std::string name = "BM_BulletRagdolls/tendon/workers:" + std::to_string(w);
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { TendonRagdolls(s, w); })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kSecond);
  }
}
