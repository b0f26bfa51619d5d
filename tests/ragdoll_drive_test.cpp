// Grab, drag, hold, push and throw (issue 38 §3): part drives reach their target in the
// response time asked and hold a body up, two at once; a force cap keeps a heavy body
// down; a drive lets go past its break distance, says so once, and the part keeps its
// velocity; an acceleration and a part force change motion by F / m; every bad input is
// refused by field; results do not depend on the worker count, and every SIMD kernel
// gives its scalar reference's bits with the pushes on; and the Fling loop (grab, drag,
// throw, land, recover) runs end to end on a character.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "allocation_counter.h"
#include "character_test_util.h"
#include "kernel/world/world_access.h"
#include "ports/jolt_human/jolt_human.h"
#include "tendon/tbb_task_system.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;
constexpr float kStud = 0.28f;  // m (Roblox's conversion for characters, landing.h)

RagdollSettings Ball(float mass) {
  RagdollSettings s;
  s.name = "ball";
  PartSettings p;
  p.shape = {.type = PartShape::kSphere, .radius = 0.1f};
  p.mass = mass;
  p.linear_damping = 0;
  p.angular_damping = 0;
  s.parts.push_back(p);
  return s;
}

struct Human {
  RagdollSettings settings;
  int32_t right_hand = -1, left_hand = -1;
};
Human LoadHuman() {
  Human h;
  auto r = ports::LoadJoltHumanRagdoll(SharedData("jolt-human/ragdoll.json"), true);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return h;
  h.settings = r.value();
  for (std::size_t j = 0; j < h.settings.parts.size(); ++j) {
    if (h.settings.parts[j].name == "R_Wrist_sjnt_0") h.right_hand = static_cast<int32_t>(j);
    if (h.settings.parts[j].name == "L_Wrist_sjnt_0") h.left_hand = static_cast<int32_t>(j);
  }
  EXPECT_GE(h.right_hand, 0);
  EXPECT_GE(h.left_hand, 0);
  return h;
}

// One bound ragdoll and its output buffer.
struct Bound {
  RagdollArchetypeId archetype;
  RagdollId id;
  std::vector<Transform> out;
};
Bound BindOne(World& w, const RagdollSettings& s, Vec3 at = {}) {
  Bound b;
  b.archetype = w.BuildRagdollArchetype(s).value();
  b.out.resize(s.parts.size());
  RagdollBinding binding;
  binding.archetype = b.archetype;
  binding.placement.translation = at;
  binding.output_parts = b.out;
  b.id = w.BindRagdoll(binding).value();
  return b;
}

float TotalMass(const World& w, RagdollArchetypeId a) {
  float m = 0;
  for (int32_t j = 0; j < w.RagdollPartCount(a); ++j) {
    RagdollPartInfo info;
    EXPECT_TRUE(w.GetRagdollPartInfo(a, j, &info).ok());
    m += info.mass;
  }
  return m;
}

Vec3 Momentum(const World& w, const Bound& b) {
  const int32_t n = w.RagdollPartCount(b.archetype);
  std::vector<Vec3> v(n), spin(n);
  EXPECT_TRUE(w.GetRagdollVelocities(b.id, v, spin).ok());
  Vec3 p{};
  for (int32_t j = 0; j < n; ++j) {
    RagdollPartInfo info;
    EXPECT_TRUE(w.GetRagdollPartInfo(b.archetype, j, &info).ok());
    p = p + v[j] * info.mass;
  }
  return p;
}

PartDriveState StateOf(const World& w, PartDriveId d) {
  PartDriveState st;
  EXPECT_TRUE(w.GetPartDriveState(d, &st).ok());
  return st;
}

// A Jolt human in the air (no ground) grabbed by its right hand, the target 1 m above where
// the hand starts: the hand is there, within a few cm, when the response time is up, and
// the body hangs below it from then on.
TEST(PartDrive, AGrabbedHandReachesATargetOneMetreAwayWithinTheResponseTime) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  auto w = MakeWorld(LastSubstepOutputs());
  Bound b = BindOne(*w, human.settings);
  const Vec3 hand = b.out[human.right_hand].translation;
  const Vec3 target = hand + Vec3{0, 1, 0};
  constexpr float kResponse = 0.3f;
  auto drive = w->AddPartDrive(b.id, {.part = human.right_hand, .target = target, .response_time = kResponse});
  ASSERT_TRUE(drive.ok()) << drive.error().field << ": " << drive.error().message;
  EXPECT_NEAR(StateOf(*w, drive.value()).distance, 1.0f, 1e-4f) << "measured when added";
  const int frames = static_cast<int>(std::lround(kResponse / kStep));
  for (int f = 0; f < frames; ++f) w->Step(kStep);
  const PartDriveState at_t = StateOf(*w, drive.value());
  EXPECT_TRUE(at_t.active);
  // A lone body closes 98% in T (the test below); the hand of a jointed body gets there
  // too (0.6 cm left at T when recorded), then the body's swing under it and gravity's sag
  // (g / omega^2 = 2.6 cm) leave it a few cm below (3.6 cm at 2T).
  EXPECT_LT(at_t.distance, 0.05f) << "98% of the way at t = response time";
  EXPECT_LT(Length(b.out[human.right_hand].translation - target), 0.05f) << "the output agrees";
  EXPECT_GT(at_t.force, 0.0f);
  std::printf("Jolt human's hand 1 m up, T = %.2f s: %.1f cm left at T", kResponse, 100 * at_t.distance);
  for (int f = 0; f < frames; ++f) w->Step(kStep);
  std::printf(", %.1f cm at 2T\n", 100 * StateOf(*w, drive.value()).distance);
  for (int f = 0; f < 120 - frames; ++f) w->Step(kStep);
  const PartDriveState held = StateOf(*w, drive.value());
  EXPECT_LT(held.distance, 0.05f) << "held there";
  EXPECT_LT(b.out[0].translation.y, target.y - 0.3f) << "the hips hang below the hand";
  // Holding the whole body up: the pull is about its weight.
  const float weight = TotalMass(*w, b.archetype) * 9.81f;
  EXPECT_NEAR(held.force, weight, 0.25f * weight);
}

// The response time's definition: a lone body of the ragdoll's mass, critically damped,
// closes 98% of a 1 m step in the response time (without gravity).
TEST(PartDrive, ALoneBodyClosesNinetyEightPercentOfAStepInTheResponseTime) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound b = BindOne(*w, Ball(70.0f));
  const PartDriveId d = w->AddPartDrive(b.id, {.part = 0, .target = {0, 1, 0}, .response_time = 0.3f}).value();
  for (int f = 0; f < 18; ++f) w->Step(kStep);
  // 2.09 cm when recorded: the substeps' implicit integration is within 5% of the exact 2%.
  EXPECT_NEAR(StateOf(*w, d).distance, 0.02f, 0.003f);
  for (int f = 0; f < 60; ++f) w->Step(kStep);
  EXPECT_LT(StateOf(*w, d).distance, 1e-3f) << "critically damped: it settles without overshooting back out";
  EXPECT_LT(b.out[0].translation.y, 1.0f + 1e-3f) << "no overshoot past the target";
}

// Both hands, each to its own target 0.5 m above it: the body hangs between them.
TEST(PartDrive, TwoHandsHoldTheBodyBetweenTheirTargets) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  auto w = MakeWorld(LastSubstepOutputs());
  Bound b = BindOne(*w, human.settings);
  const Vec3 rt = b.out[human.right_hand].translation + Vec3{0, 0.5f, 0};
  const Vec3 lt = b.out[human.left_hand].translation + Vec3{0, 0.5f, 0};
  const PartDriveId r = w->AddPartDrive(b.id, {.part = human.right_hand, .target = rt, .response_time = 0.25f}).value();
  const PartDriveId l = w->AddPartDrive(b.id, {.part = human.left_hand, .target = lt, .response_time = 0.25f}).value();
  for (int f = 0; f < 90; ++f) w->Step(kStep);
  EXPECT_LT(StateOf(*w, r).distance, 0.05f);
  EXPECT_LT(StateOf(*w, l).distance, 0.05f);
  EXPECT_NEAR(b.out[0].translation.x, 0.5f * (rt.x + lt.x), 0.1f) << "hanging between them";
  EXPECT_LT(b.out[0].translation.y, std::min(rt.y, lt.y) - 0.3f);
  // Together they carry the weight (averaged over a second: the body still swings), plus
  // the pull between them: the arms hang in a V from targets a shoulder span apart, so
  // each pulls inward too (1.28 x the weight when recorded).
  double sum = 0;
  for (int f = 0; f < 60; ++f) {
    w->Step(kStep);
    sum += StateOf(*w, r).force + StateOf(*w, l).force;
  }
  const float weight = TotalMass(*w, b.archetype) * 9.81f;
  EXPECT_GT(sum / 60.0, 0.95 * weight);
  EXPECT_LT(sum / 60.0, 1.6 * weight);
}

// A 73 kg body pulled up by its hand with at most 100 N (a seventh of its weight) does not
// lift: it falls, and the drive reports its capped pull.
TEST(PartDrive, TheMaxForceCapsThePull) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  auto w = MakeWorld(LastSubstepOutputs());
  Bound b = BindOne(*w, human.settings);
  const Vec3 hand = b.out[human.right_hand].translation;
  const PartDriveId d =
      w->AddPartDrive(b.id, {.part = human.right_hand, .target = hand + Vec3{0, 1, 0}, .response_time = 0.2f, .max_force = 100.0f})
          .value();
  for (int f = 0; f < 30; ++f) w->Step(kStep);
  EXPECT_LT(b.out[human.right_hand].translation.y, hand.y) << "the hand went down, not up";
  EXPECT_LT(b.out[0].translation.y, 0.93f - 0.5f) << "the body falls";
  const PartDriveState st = StateOf(*w, d);
  EXPECT_LE(st.force, 100.0f * 1.0001f);
  EXPECT_GT(st.force, 99.0f) << "pulling at its cap";
  // Without the cap, the same pull lifts it (so the cap, not the drive, kept it down).
  auto w2 = MakeWorld(LastSubstepOutputs());
  Bound b2 = BindOne(*w2, human.settings);
  ASSERT_TRUE(w2->AddPartDrive(b2.id, {.part = human.right_hand, .target = hand + Vec3{0, 1, 0}, .response_time = 0.2f}).ok());
  for (int f = 0; f < 30; ++f) w2->Step(kStep);
  EXPECT_GT(b2.out[human.right_hand].translation.y, hand.y + 0.8f);
}

// A ball held at a target, the target then jerked 2 m away: at the end of that frame the
// point is past the 0.3 m break distance, so the drive lets go, is listed once and counted,
// and stays readable as broken. The ball keeps the velocity the pull gave it.
TEST(PartDrive, ADriveLetsGoPastItsBreakDistanceAndThePartKeepsItsVelocity) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound b = BindOne(*w, Ball(2.0f));
  const PartDriveId d =
      w->AddPartDrive(b.id, {.part = 0, .target = {0, 0, 0}, .response_time = 0.2f, .break_distance = 0.3f}).value();
  for (int f = 0; f < 10; ++f) {
    const FrameStats& stats = w->Step(kStep);
    EXPECT_EQ(stats.broken_drives, 0);
  }
  ASSERT_TRUE(w->SetPartDriveTarget(d, {2, 0, 0}).ok());
  const FrameStats& stats = w->Step(kStep);
  EXPECT_EQ(stats.broken_drives, 1);
  const auto broken = detail::WorldAccess::BrokenDrives(*w);
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_EQ(broken[0], d);
  const PartDriveState st = StateOf(*w, d);
  EXPECT_TRUE(st.broken);
  EXPECT_FALSE(st.active);
  EXPECT_GT(st.distance, 0.3f);
  EXPECT_EQ(st.force, 0.0f);
  EXPECT_TRUE(w->IsValid(d)) << "a broken drive keeps its handle until removed";
  std::vector<Vec3> v(1), spin(1);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v, spin).ok());
  EXPECT_GT(v[0].x, 0.5f) << "the pull toward the new target moved it";
  const Vec3 x0 = b.out[0].translation;
  const FrameStats& next = w->Step(kStep);
  EXPECT_EQ(next.broken_drives, 0) << "listed once";
  EXPECT_TRUE(detail::WorldAccess::BrokenDrives(*w).empty());
  std::vector<Vec3> v2(1);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v2, spin).ok());
  // (v is (x - x_prev) / h each substep: the same within rounding)
  EXPECT_NEAR(v2[0].x, v[0].x, 1e-5f * v[0].x) << "released: no pull, no damping, the same velocity";
  EXPECT_NEAR(b.out[0].translation.x - x0.x, v[0].x * kStep, 1e-5f);
  EXPECT_TRUE(w->RemovePartDrive(d).ok());
  EXPECT_FALSE(w->IsValid(d));
}

// Removing a drive from a jointed body mid-swing: the body's momentum carries on unchanged
// (no velocity is reset on release; without gravity the joints keep it).
// Drains every queued event of the last Step.
std::vector<ContactEvent> DrainAll(World& w) {
  std::vector<ContactEvent> all;
  ContactEvent buffer[16];
  for (int32_t n; (n = w.DrainContactEvents(buffer)) > 0;) all.insert(all.end(), buffer, buffer + n);
  return all;
}

std::vector<ContactEvent> DriveEventsOf(const std::vector<ContactEvent>& events) {
  std::vector<ContactEvent> out;
  for (const ContactEvent& e : events) {
    if (e.kind == ContactEventKind::kDriveBroken) out.push_back(e);
  }
  return out;
}

// Two balls held at their targets, the second by two drives; one of the second's drives is
// jerked 2 m away: in that frame's events, exactly one kDriveBroken, naming that drive, its
// part and ragdoll, at the distance GetPartDriveState reports (past the break distance); in
// no frame before or after, any other.
TEST(PartDriveEvents, ABrokenDriveIsOneEventNamingItsDrivePartAndRagdollInTheFrameItBroke) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound a = BindOne(*w, Ball(2.0f));
  Bound b = BindOne(*w, TwoPartPendulum(), {3, 0, 0});
  ASSERT_TRUE(w->AddPartDrive(a.id, {.part = 0, .target = {0, 0, 0}, .break_distance = 0.3f}).ok());
  ASSERT_TRUE(w->AddPartDrive(b.id, {.part = 0, .target = {3, 0, 0}, .break_distance = 0.3f}).ok());
  const PartDriveId held = w->AddPartDrive(b.id, {.part = 1, .local_point = {0, -0.2f, 0}, .target = {3, -0.6f, 0},
                                                  .response_time = 0.2f, .break_distance = 0.3f})
                               .value();
  for (int f = 0; f < 10; ++f) {
    w->Step(kStep);
    EXPECT_TRUE(DriveEventsOf(DrainAll(*w)).empty()) << "frame " << f << ": nothing broke yet";
  }
  ASSERT_TRUE(w->SetPartDriveTarget(held, {5, -0.6f, 0}).ok());
  const FrameStats& stats = w->Step(kStep);
  EXPECT_EQ(stats.broken_drives, 1);
  const std::vector<ContactEvent> events = DriveEventsOf(DrainAll(*w));
  ASSERT_EQ(events.size(), 1u);
  const ContactEvent& e = events[0];
  EXPECT_EQ(e.b_kind, ContactSideKind::kPartDrive);
  EXPECT_EQ(e.b_drive, held);
  EXPECT_EQ(e.ragdoll, b.id);
  EXPECT_EQ(e.part, 1);
  EXPECT_TRUE(e.character.IsNull());
  const PartDriveState st = StateOf(*w, held);
  EXPECT_TRUE(st.broken);
  EXPECT_GT(e.distance, 0.3f);
  EXPECT_EQ(e.distance, st.distance) << "the distance at which it let go";
  EXPECT_NEAR(Length(e.point - st.target), e.distance, 1e-5f) << "the point is the driven point";
  EXPECT_NEAR(Length(e.normal), 1.0f, 1e-5f);
  EXPECT_NEAR(Length(st.target + e.normal * e.distance - e.point), 0.0f, 1e-5f) << "from the target toward the point";
  EXPECT_NEAR(e.time, 11.0 * kStep, 1e-6) << "the world clock at the end of the frame it broke";
  for (int f = 0; f < 10; ++f) {
    EXPECT_EQ(w->Step(kStep).broken_drives, 0);
    EXPECT_TRUE(DriveEventsOf(DrainAll(*w)).empty()) << "frame " << f << " after: reported once";
  }
}

// Contact events off (capacity 0) leave the drives' events on: a break is reported, from
// the room AddPartDrive reserved, without allocating in Step.
TEST(PartDriveEvents, ABreakIsReportedWithContactEventsOffAndAllocatesNothing) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  ws.contact_event_capacity = 0;
  auto w = MakeWorld(ws);
  Bound a = BindOne(*w, Ball(2.0f));
  const PartDriveId d = w->AddPartDrive(a.id, {.part = 0, .target = {0, 0, 0}, .break_distance = 0.3f}).value();
  for (int f = 0; f < 5; ++f) w->Step(kStep);  // warm-up (the first frames size the frame's buffers)
  ASSERT_TRUE(w->SetPartDriveTarget(d, {2, 0, 0}).ok());
  const long before = g_allocations.load();
  const FrameStats& stats = w->Step(kStep);
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_EQ(stats.contact_events, 1);
  const std::vector<ContactEvent> events = DrainAll(*w);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ContactEventKind::kDriveBroken);
  EXPECT_EQ(events[0].b_drive, d);
}

// A break left undrained is dropped at the next Step and counted, as contact events are.
TEST(PartDriveEvents, AnUndrainedBreakIsDroppedAndCounted) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound a = BindOne(*w, Ball(2.0f));
  const PartDriveId d = w->AddPartDrive(a.id, {.part = 0, .target = {0, 0, 0}, .break_distance = 0.3f}).value();
  w->Step(kStep);
  ASSERT_TRUE(w->SetPartDriveTarget(d, {2, 0, 0}).ok());
  EXPECT_EQ(w->Step(kStep).contact_events, 1);
  const FrameStats& next = w->Step(kStep);
  EXPECT_EQ(next.dropped_contact_events, 1);
  EXPECT_TRUE(DrainAll(*w).empty());
}

// Pendulums dropped onto the ground (contact events) with drives on both parts, whose
// targets jump in two frames so that several break at once: the whole event stream, frame
// by frame, and every figure in it.
std::vector<ContactEvent> DriveBreakScene(TaskHooks tasks, int* breaks) {
  WorldSettings ws = LastSubstepOutputs();
  ws.tasks = tasks;
  auto w = MakeWorld(ws);
  EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
  const RagdollArchetypeId a = w->BuildRagdollArchetype(TwoPartPendulum()).value();
  constexpr int kBodies = 12;
  std::vector<std::vector<Transform>> out(kBodies, std::vector<Transform>(2));
  std::vector<PartDriveId> drives;
  for (int i = 0; i < kBodies; ++i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {0.8f * static_cast<float>(i % 4), 0.8f, 0.8f * static_cast<float>(i / 4)};
    b.output_parts = out[i];
    const RagdollId id = w->BindRagdoll(b).value();
    const Vec3 at = b.placement.translation;
    for (int32_t part = 0; part < 2; ++part) {
      drives.push_back(w->AddPartDrive(id, {.part = part, .target = at + Vec3{0, -0.2f, 0}, .response_time = 0.3f,
                                            .break_distance = 0.2f + 0.05f * static_cast<float>(i % 3)})
                           .value());
    }
  }
  std::vector<ContactEvent> all;
  *breaks = 0;
  for (int f = 0; f < 40; ++f) {
    if (f == 15 || f == 25) {
      for (std::size_t k = (f == 15 ? 0 : 1); k < drives.size(); k += 2) {
        PartDriveState st;
        EXPECT_TRUE(w->GetPartDriveState(drives[k], &st).ok());
        EXPECT_TRUE(w->SetPartDriveTarget(drives[k], st.target + Vec3{0, 0, 3}).ok());
      }
    }
    w->Step(kStep);
    const std::vector<ContactEvent> events = DrainAll(*w);
    all.insert(all.end(), events.begin(), events.end());
    for (const ContactEvent& e : events) *breaks += e.kind == ContactEventKind::kDriveBroken ? 1 : 0;
  }
  return all;
}

bool SameEvent(const ContactEvent& x, const ContactEvent& y) {
  return x.kind == y.kind && x.ragdoll == y.ragdoll && x.part == y.part && x.b_kind == y.b_kind &&
         x.b_ragdoll == y.b_ragdoll && x.b_part == y.b_part && x.b_drive == y.b_drive && x.point == y.point &&
         x.normal == y.normal && x.normal_speed == y.normal_speed && x.impulse == y.impulse &&
         x.distance == y.distance && x.time == y.time;
}

TEST(PartDriveEvents, OrderAndContentAreTheSameAtOneAndTwoWorkers) {
  int serial_breaks = 0, breaks = 0;
  const std::vector<ContactEvent> serial = DriveBreakScene(TaskHooks{nullptr, nullptr, nullptr, 1}, &serial_breaks);
  EXPECT_EQ(serial_breaks, 24) << "every drive broke, half of them in each of two frames";
  TbbTaskSystem one(1), two(2);
  for (TaskHooks hooks : {one.hooks(), two.hooks()}) {
    const std::vector<ContactEvent> events = DriveBreakScene(hooks, &breaks);
    ASSERT_EQ(events.size(), serial.size()) << hooks.worker_count << " workers";
    for (std::size_t i = 0; i < serial.size(); ++i)
      EXPECT_TRUE(SameEvent(serial[i], events[i])) << "event " << i << " at " << hooks.worker_count << " workers";
  }
  // Within a frame, the breaks come after the contacts and in drive order.
  for (std::size_t i = 1; i < serial.size(); ++i) {
    if (serial[i].time != serial[i - 1].time) continue;
    if (serial[i - 1].kind == ContactEventKind::kDriveBroken) {
      EXPECT_EQ(serial[i].kind, ContactEventKind::kDriveBroken) << "event " << i;
      EXPECT_LT(serial[i - 1].b_drive.index, serial[i].b_drive.index) << "event " << i;
    }
  }
}

TEST(PartDrive, RemovingADriveKeepsTheBodysMomentum) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound b = BindOne(*w, human.settings);
  const PartDriveId d = w->AddPartDrive(b.id, {.part = human.right_hand,
                                               .target = b.out[human.right_hand].translation + Vec3{2, 0, 0},
                                               .response_time = 0.5f})
                            .value();
  for (int f = 0; f < 10; ++f) w->Step(kStep);
  const Vec3 p0 = Momentum(*w, b);
  EXPECT_GT(p0.x, 10.0f) << "the drive set it moving";
  ASSERT_TRUE(w->RemovePartDrive(d).ok());
  for (int f = 0; f < 10; ++f) w->Step(kStep);
  // Linear damping (0.05/s) is the only loss: 10 frames take under 1%.
  EXPECT_NEAR(Momentum(*w, b).x, p0.x, 0.01f * p0.x);
}

// Air control as the Fling reference gives it: 55 studs/s^2 sideways against a gravity of
// 100 studs/s^2, on a falling ball. After 1 s it has moved a t^2 / 2 sideways (and fallen
// g t^2 / 2). The substeps integrate x_n = a h^2 n (n + 1) / 2 for n = 960 substeps of h:
// 1/960 above a t^2 / 2, so 0.5% covers it.
TEST(RagdollPush, AirControlMovesAFallingBodySidewaysByItsAcceleration) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {0, -100 * kStud, 0};
  auto w = MakeWorld(ws);
  Bound b = BindOne(*w, Ball(80.0f));
  const float a = 55 * kStud;
  ASSERT_TRUE(w->SetRagdollAcceleration(b.id, {a, 0, 0}).ok());
  for (int f = 0; f < 60; ++f) w->Step(kStep);
  EXPECT_NEAR(b.out[0].translation.x, 0.5f * a, 0.005f * 0.5f * a);
  EXPECT_NEAR(b.out[0].translation.y, -0.5f * 100 * kStud, 0.005f * 0.5f * 100 * kStud);
  // Off again: it keeps the sideways speed it has, and gains no more.
  ASSERT_TRUE(w->SetRagdollAcceleration(b.id, {}).ok());
  std::vector<Vec3> v(1), spin(1);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v, spin).ok());
  w->Step(kStep);
  std::vector<Vec3> v2(1);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v2, spin).ok());
  EXPECT_NEAR(v2[0].x, v[0].x, 1e-3f * v[0].x);
}

// A 10 N force on a 2 kg ball: 5 m/s^2, so 5 m/s after 1 s; zero switches it off.
TEST(RagdollPush, APartForceAcceleratesByForceOverMass) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound b = BindOne(*w, Ball(2.0f));
  ASSERT_TRUE(w->SetRagdollPartForce(b.id, 0, {10, 0, 0}).ok());
  for (int f = 0; f < 60; ++f) w->Step(kStep);
  std::vector<Vec3> v(1), spin(1);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v, spin).ok());
  // Velocities are rebuilt from float positions each substep ((x - x_prev) / h), which
  // rounds by up to ulp(x) / h = 2.4e-4 m/s per substep near x = 2.5 m: 0.4% over the
  // 960 substeps when recorded, so 1%.
  EXPECT_NEAR(v[0].x, 5.0f, 0.05f);
  EXPECT_NEAR(b.out[0].translation.x, 2.5f, 0.005f * 2.5f);
  ASSERT_TRUE(w->SetRagdollPartForce(b.id, 0, {}).ok());
  for (int f = 0; f < 10; ++f) w->Step(kStep);
  std::vector<Vec3> v2(1);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v2, spin).ok());
  EXPECT_NEAR(v2[0].x, v[0].x, 1e-3f * v[0].x) << "switched off: no more push";
}

// A throw gives every part ThrowSpeed(strength, mass) along the direction, and wakes it.
TEST(RagdollPush, AThrowGivesEveryPartTheMassRelativeSpeed) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  auto w = MakeWorld(LastSubstepOutputs());
  Bound b = BindOne(*w, human.settings);
  const float mass = TotalMass(*w, b.archetype);
  auto thrown = w->ThrowRagdoll(b.id, {0, 0, 3}, 500.0f, 2.0f, 40.0f);
  ASSERT_TRUE(thrown.ok());
  EXPECT_NEAR(thrown.value().z, 500.0f / mass, 1e-4f);
  EXPECT_EQ(thrown.value().x, 0.0f);
  const int32_t n = w->RagdollPartCount(b.archetype);
  std::vector<Vec3> v(n), spin(n);
  ASSERT_TRUE(w->GetRagdollVelocities(b.id, v, spin).ok());
  for (int32_t j = 0; j < n; ++j) EXPECT_EQ(v[j].z, thrown.value().z) << "part " << j;
  // Clamped both ways.
  EXPECT_EQ(w->ThrowRagdoll(b.id, {1, 0, 0}, 1e6f, 2.0f, 40.0f).value().x, 40.0f);
  EXPECT_EQ(w->ThrowRagdoll(b.id, {1, 0, 0}, 0.0f, 2.0f, 40.0f).value().x, 2.0f);
}

// Every bad input names its field (and nothing is written).
TEST(PartDrive, EveryBadInputIsRefusedByField) {
  auto w = MakeWorld();
  Bound b = BindOne(*w, TwoPartPendulum());
  auto refuse = [&](PartDriveSettings s, ErrorCode code, const char* field) {
    auto r = w->AddPartDrive(b.id, s);
    EXPECT_FALSE(r.ok()) << field;
    EXPECT_EQ(r.error().code, code) << field << ": " << r.error().message;
    EXPECT_EQ(r.error().field, field) << r.error().message;
  };
  const float nan = std::nanf(""), inf = INFINITY;
  refuse({.part = -1}, ErrorCode::kBadReference, "settings.part");
  refuse({.part = 2}, ErrorCode::kBadReference, "settings.part");
  refuse({.local_point = {nan, 0, 0}}, ErrorCode::kNotFinite, "settings.local_point");
  refuse({.target = {0, inf, 0}}, ErrorCode::kNotFinite, "settings.target");
  refuse({.response_time = 0}, ErrorCode::kOutOfRange, "settings.response_time");
  refuse({.response_time = -1}, ErrorCode::kOutOfRange, "settings.response_time");
  refuse({.response_time = nan}, ErrorCode::kNotFinite, "settings.response_time");
  refuse({.response_time = inf}, ErrorCode::kNotFinite, "settings.response_time");
  refuse({.max_force = 0}, ErrorCode::kOutOfRange, "settings.max_force");
  refuse({.max_force = nan}, ErrorCode::kNotFinite, "settings.max_force");
  refuse({.damping_ratio = -0.5f}, ErrorCode::kOutOfRange, "settings.damping_ratio");
  refuse({.damping_ratio = nan}, ErrorCode::kNotFinite, "settings.damping_ratio");
  refuse({.break_distance = 0}, ErrorCode::kOutOfRange, "settings.break_distance");
  refuse({.break_distance = nan}, ErrorCode::kNotFinite, "settings.break_distance");
  EXPECT_EQ(w->AddPartDrive(RagdollId{}, {}).error().code, ErrorCode::kStaleHandle);
  // At most kMaxPartDrives at once.
  std::vector<PartDriveId> drives;
  for (int i = 0; i < kMaxPartDrives; ++i) drives.push_back(w->AddPartDrive(b.id, {.part = i % 2}).value());
  auto fifth = w->AddPartDrive(b.id, {});
  EXPECT_EQ(fifth.error().code, ErrorCode::kCapacity);
  EXPECT_EQ(fifth.error().field, "ragdoll");
  ASSERT_TRUE(w->RemovePartDrive(drives.back()).ok());
  EXPECT_TRUE(w->AddPartDrive(b.id, {}).ok()) << "a removed drive frees its slot";
  // The other drive calls.
  EXPECT_EQ(w->SetPartDriveTarget(drives[0], {nan, 0, 0}).field, "target");
  EXPECT_EQ(w->SetPartDriveTarget(drives.back(), {}).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(w->RemovePartDrive(drives.back()).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(w->RemovePartDrive(PartDriveId{}).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(w->GetPartDriveState(drives[0], nullptr).code, ErrorCode::kNullBuffer);
  PartDriveState st;
  EXPECT_EQ(w->GetPartDriveState(drives.back(), &st).code, ErrorCode::kStaleHandle);
  // Acceleration and part forces.
  EXPECT_EQ(w->SetRagdollAcceleration(RagdollId{}, {}).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(w->SetRagdollAcceleration(b.id, {nan, 0, 0}).field, "acceleration");
  EXPECT_EQ(w->SetRagdollAcceleration(b.id, {1e6f, 0, 0}).code, ErrorCode::kOutOfRange);
  EXPECT_EQ(w->SetRagdollPartForce(b.id, 2, {1, 0, 0}).field, "part");
  EXPECT_EQ(w->SetRagdollPartForce(b.id, -1, {1, 0, 0}).code, ErrorCode::kBadReference);
  EXPECT_EQ(w->SetRagdollPartForce(b.id, 0, {0, inf, 0}).field, "force");
  EXPECT_EQ(w->SetRagdollPartForce(RagdollId{}, 0, {1, 0, 0}).code, ErrorCode::kStaleHandle);
  // Throws.
  auto throw_field = [&](Vec3 dir, float strength, float lo, float hi) {
    auto r = w->ThrowRagdoll(b.id, dir, strength, lo, hi);
    EXPECT_FALSE(r.ok());
    return r.error().field;
  };
  EXPECT_EQ(throw_field({0, 0, 0}, 1, 0, 10), "direction");
  EXPECT_EQ(throw_field({nan, 0, 1}, 1, 0, 10), "direction");
  EXPECT_EQ(throw_field({0, 0, 1}, -1, 0, 10), "strength");
  EXPECT_EQ(throw_field({0, 0, 1}, nan, 0, 10), "strength");
  EXPECT_EQ(throw_field({0, 0, 1}, 1, 5, 1), "max_speed");
  EXPECT_EQ(throw_field({0, 0, 1}, 1, -1, 10), "min_speed");
  EXPECT_EQ(w->ThrowRagdoll(RagdollId{}, {0, 0, 1}, 1, 0, 1).error().code, ErrorCode::kStaleHandle);
  // A switched-off ragdoll: its drives go, and none can be added or thrown.
  ASSERT_TRUE(w->SetRagdollEnabled(b.id, false).ok());
  EXPECT_FALSE(w->IsValid(drives[0]));
  EXPECT_EQ(w->AddPartDrive(b.id, {}).error().code, ErrorCode::kInactive);
  EXPECT_EQ(w->ThrowRagdoll(b.id, {0, 0, 1}, 1, 0, 1).error().code, ErrorCode::kInactive);
  // Unbinding takes its drives too.
  ASSERT_TRUE(w->SetRagdollEnabled(b.id, true).ok());
  const PartDriveId last = w->AddPartDrive(b.id, {}).value();
  ASSERT_TRUE(w->UnbindRagdoll(b.id).ok());
  EXPECT_FALSE(w->IsValid(last));
}

// Every part force slot, and a fifth part refused until one is switched off.
TEST(RagdollPush, AtMostKMaxPartForcesPartsPushAtOnce) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  auto w = MakeWorld();
  Bound b = BindOne(*w, human.settings);
  for (int32_t j = 0; j < kMaxPartForces; ++j) ASSERT_TRUE(w->SetRagdollPartForce(b.id, j, {0, 10, 0}).ok());
  ASSERT_TRUE(w->SetRagdollPartForce(b.id, 0, {0, 20, 0}).ok()) << "a part that has one changes it";
  const Error fifth = w->SetRagdollPartForce(b.id, kMaxPartForces, {0, 10, 0});
  EXPECT_EQ(fifth.code, ErrorCode::kCapacity);
  EXPECT_EQ(fifth.field, "part");
  ASSERT_TRUE(w->SetRagdollPartForce(b.id, 1, {}).ok());
  EXPECT_TRUE(w->SetRagdollPartForce(b.id, kMaxPartForces, {0, 10, 0}).ok());
}

// A scene with drives on different parts in neighbouring lanes, an acceleration and part
// forces, some lanes with none: per-frame state hashes.
std::vector<uint64_t> RunPushScene(const Human& human, Isa isa, TaskHooks tasks) {
  WorldSettings ws = LastSubstepOutputs();
  ws.isa = isa;
  ws.tasks = tasks;
  ws.ragdoll_substeps = 4;
  auto w = MakeWorld(ws);
  EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
  const RagdollArchetypeId a = w->BuildRagdollArchetype(human.settings).value();
  constexpr int kBodies = 10;
  std::vector<std::vector<Transform>> out(kBodies, std::vector<Transform>(human.settings.parts.size()));
  std::vector<PartDriveId> drives;
  for (int i = 0; i < kBodies; ++i) {
    RagdollBinding b;
    b.archetype = a;
    b.placement.translation = {1.5f * static_cast<float>(i % 5), 0.1f, 1.5f * static_cast<float>(i / 5)};
    b.output_parts = out[i];
    const RagdollId id = w->BindRagdoll(b).value();
    const Vec3 at = b.placement.translation;
    if (i % 3 == 0) {
      drives.push_back(w->AddPartDrive(id, {.part = human.right_hand, .local_point = {0, 0.05f, 0},
                                            .target = at + Vec3{0.3f, 2.0f, 0}, .response_time = 0.3f,
                                            .max_force = 2000.0f, .damping_ratio = 0.7f})
                           .value());
    }
    if (i % 3 == 1) {
      drives.push_back(
          w->AddPartDrive(id, {.part = static_cast<int32_t>(i % 7), .target = at + Vec3{0, 1.5f, 0.5f}, .response_time = 0.2f})
              .value());
      EXPECT_TRUE(w->SetRagdollAcceleration(id, {3, 0, 0}).ok());
    }
    if (i % 4 == 0) {
      EXPECT_TRUE(w->SetRagdollPartForce(id, 7, {0, 300, -100}).ok());
    }
  }
  std::vector<uint64_t> hashes;
  for (int f = 0; f < 24; ++f) {
    if (f == 12 && !drives.empty()) {
      EXPECT_TRUE(w->SetPartDriveTarget(drives[0], {0, 3, 3}).ok());
    }
    w->Step(kStep);
    uint64_t h = w->StateHash();
    for (PartDriveId d : drives) {
      PartDriveState st;
      EXPECT_TRUE(w->GetPartDriveState(d, &st).ok());
      uint32_t bits;
      std::memcpy(&bits, &st.force, sizeof bits);
      h = h * 1099511628211ull ^ bits;
    }
    hashes.push_back(h);
  }
  return hashes;
}

TEST(PartDrive, ResultsDoNotDependOnTheWorkerCount) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  const auto serial = RunPushScene(human, Isa::kAuto, TaskHooks{nullptr, nullptr, nullptr, 1});
  TbbTaskSystem one(1), two(2);
  EXPECT_EQ(RunPushScene(human, Isa::kAuto, one.hooks()), serial);
  EXPECT_EQ(RunPushScene(human, Isa::kAuto, two.hooks()), serial);
}

TEST(PartDrive, EverySimdKernelGivesItsScalarReferencesBitsWithPushesOn) {
  TENDON_NEED_SHARED_DATA();
  const Human human = LoadHuman();
  const TaskHooks serial{nullptr, nullptr, nullptr, 1};
  const auto scalar = RunPushScene(human, Isa::kScalar, serial);
  const auto fused = RunPushScene(human, Isa::kScalarFma, serial);
  int checked = 0;
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa) || isa == Isa::kScalar || isa == Isa::kScalarFma) continue;
    ++checked;
    EXPECT_EQ(RunPushScene(human, isa, serial), ScalarReferenceOf(isa) == Isa::kScalarFma ? fused : scalar)
        << ToString(isa);
  }
  std::printf("checked %d SIMD kernels against their scalar references\n", checked);
}

// The Fling loop on a character (Godette on a ground plane): activated, grabbed by a hand
// and lifted, dragged 2 m, thrown, watched until it lands, then handed back to the
// animation where it lies.
TEST(PartDrive, TheFlingLoopGrabDragThrowLandRecover) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld();
  ASSERT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
  const SkeletonSettings skeleton = Godette(VrmNames());
  CharacterSettings cs;
  cs.skeleton = skeleton;
  const CharacterArchetypeId archetype = w->BuildCharacterArchetype(cs).value();
  HostCharacter host(skeleton);
  host.id = w->BindCharacter(host.Binding(archetype)).value();
  w->Step(kStep);
  // Grab: the ragdoll takes over, a drive holds the right hand up.
  ASSERT_TRUE(w->ActivateCharacter(host.id));
  const RagdollId ragdoll = w->CharacterRagdoll(host.id);
  ASSERT_TRUE(w->IsValid(ragdoll));
  const int32_t hand = w->FindCharacterPart(archetype, "RightHand");
  ASSERT_GE(hand, 0);
  CharacterState st;
  ASSERT_TRUE(w->GetCharacterState(host.id, &st).ok());
  Vec3 target = st.root.translation + Vec3{0, 1.2f, 0};
  const PartDriveId grab =
      w->AddPartDrive(ragdoll, {.part = hand, .target = target, .response_time = 0.25f, .break_distance = 1.5f}).value();
  for (int f = 0; f < 60; ++f) w->Step(kStep);
  EXPECT_LT(StateOf(*w, grab).distance, 0.1f) << "held up by the hand";
  ASSERT_TRUE(w->GetCharacterState(host.id, &st).ok());
  EXPECT_TRUE(st.active);
  EXPECT_GT(st.root.translation.y, 0.5f) << "the hips off the ground";
  // Drag 2 m along +X over a second.
  const Vec3 start_hips = st.root.translation;
  for (int f = 0; f < 60; ++f) {
    target = target + Vec3{2.0f / 60.0f, 0, 0};
    ASSERT_TRUE(w->SetPartDriveTarget(grab, target).ok());
    w->Step(kStep);
  }
  for (int f = 0; f < 30; ++f) w->Step(kStep);
  ASSERT_TRUE(w->GetCharacterState(host.id, &st).ok());
  EXPECT_LT(StateOf(*w, grab).distance, 0.15f) << "the hand followed the target";
  // The body swings under the hand (nothing damps a pendulum but the air's 0.05/s).
  EXPECT_NEAR(st.root.translation.x - start_hips.x, 2.0f, 0.5f) << "dragged 2 m";
  EXPECT_FALSE(StateOf(*w, grab).broken);
  // Throw: let go and launch it up and along +X.
  ASSERT_TRUE(w->RemovePartDrive(grab).ok());
  const Vec3 launched = w->ThrowRagdoll(ragdoll, {1, 1, 0}, 600.0f, 3.0f, 12.0f).value();
  EXPECT_NEAR(Length(launched), std::clamp(600.0f / st.unanchored_mass, 3.0f, 12.0f), 1e-3f);
  ASSERT_TRUE(w->GetCharacterState(host.id, &st).ok());
  const float throw_x = st.root.translation.x;
  LandingWatch watch = StartLandingWatch(0.0, st.generation);
  const LandingRules rules{};
  double t = 0;
  for (int f = 0; f < 600 && watch.verdict == LandingVerdict::kFlying; ++f) {
    w->Step(kStep);
    t += kStep;
    ASSERT_TRUE(w->GetCharacterState(host.id, &st).ok());
    RaycastHit ground;
    const bool below = w->RaycastStatic(st.root.translation, {0, -1, 0}, 10, &ground);
    watch = AdvanceLandingWatch(watch, rules, t, st.speed, below ? ground.distance : -1.0f);
  }
  EXPECT_EQ(watch.verdict, LandingVerdict::kLanded);
  EXPECT_GT(watch.peak_speed, 0.8f * Length(launched));
  EXPECT_GT(st.root.translation.x, throw_x + 1.0f) << "it flew along the throw";
  // Recover: stand the model where the body lies and hand the bones back.
  Transform root;
  ASSERT_TRUE(w->GetCharacterRecoveryRoot(host.id, 0.0f, &root).ok());
  EXPECT_NEAR(root.translation.x, st.root.translation.x, 1e-4f);
  ASSERT_TRUE(w->DeactivateCharacter(host.id).ok());
  ASSERT_TRUE(w->GetCharacterState(host.id, &st).ok());
  EXPECT_FALSE(st.active);
}

// Stepping with drives, forces and an acceleration, and moving, breaking and removing
// drives, allocates nothing (AddPartDrive reserved what a frame's breaks need).
TEST(PartDrive, StepsAndDriveControlsAllocateNothing) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  Bound a = BindOne(*w, Ball(2.0f));
  Bound b = BindOne(*w, TwoPartPendulum(), {3, 0, 0});
  const PartDriveId da = w->AddPartDrive(a.id, {.part = 0, .target = {0, 1, 0}, .break_distance = 2.0f}).value();
  const PartDriveId db = w->AddPartDrive(b.id, {.part = 1, .target = {3, 1, 0}}).value();
  ASSERT_TRUE(w->SetRagdollAcceleration(b.id, {1, 0, 0}).ok());
  ASSERT_TRUE(w->SetRagdollPartForce(b.id, 0, {0, 5, 0}).ok());
  for (int f = 0; f < 5; ++f) w->Step(kStep);  // warm-up (the first frames size the frame's buffers)
  const long before = g_allocations.load();
  for (int f = 0; f < 20; ++f) {
    ASSERT_TRUE(w->SetPartDriveTarget(db, {3, 1, 0.05f * static_cast<float>(f)}).ok());
    w->Step(kStep);
  }
  ASSERT_TRUE(w->SetPartDriveTarget(da, {5, 0, 0}).ok());
  EXPECT_EQ(w->Step(kStep).broken_drives, 1);
  ASSERT_TRUE(w->RemovePartDrive(da).ok());
  ASSERT_TRUE(w->RemovePartDrive(db).ok());
  w->Step(kStep);
  EXPECT_EQ(g_allocations.load() - before, 0);
}

// A character that deactivates takes its ragdoll's drives with it.
TEST(PartDrive, DeactivatingACharacterRemovesItsDrives) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld();
  const SkeletonSettings skeleton = Godette(VrmNames());
  CharacterSettings cs;
  cs.skeleton = skeleton;
  const CharacterArchetypeId archetype = w->BuildCharacterArchetype(cs).value();
  HostCharacter host(skeleton);
  host.id = w->BindCharacter(host.Binding(archetype)).value();
  w->Step(kStep);
  ASSERT_TRUE(w->ActivateCharacter(host.id));
  const RagdollId ragdoll = w->CharacterRagdoll(host.id);
  const PartDriveId d = w->AddPartDrive(ragdoll, {.part = 1, .target = {0, 2, 0}}).value();
  w->Step(kStep);
  EXPECT_TRUE(w->IsValid(d));
  ASSERT_TRUE(w->DeactivateCharacter(host.id).ok());
  EXPECT_FALSE(w->IsValid(d));
  EXPECT_EQ(w->AddPartDrive(ragdoll, {.part = 1}).error().code, ErrorCode::kInactive);
}

}  // namespace
}  // namespace tendon::test
