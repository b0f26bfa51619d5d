// Contact and impact events (tendon/contact_events.h): one event per impact, thresholds,
// pairs, ended events, the queue's capacity, and the same events at any worker count.
#include <cmath>
#include <string>
#include <vector>

#include "allocation_counter.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/json/json.h"
#include "ports/shared_data.h"
#include "tendon/tbb_task_system.h"
#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;
constexpr float kGravity = 9.81f;
// Roblox's stud is 0.28 m: the Fling reference's "above 70 studs/s" in metres per second.
constexpr float kStud = 0.28f;

struct Scene {
  std::unique_ptr<World> world;
  std::vector<std::vector<Transform>> outputs;
  std::vector<RagdollId> ids;
};

std::unique_ptr<World> GroundWorld(WorldSettings ws = {}) {
  auto w = MakeWorld(ws);
  if (w != nullptr) {
    EXPECT_EQ(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code, ErrorCode::kNone);
  }
  return w;
}

RagdollId BindAt(World& w, RagdollArchetypeId a, Vec3 at, std::vector<Transform>* out, int parts = 1,
                 Vec3 velocity = {}, Quat rotation = {}) {
  out->assign(static_cast<std::size_t>(parts), Transform{});
  RagdollBinding b;
  b.archetype = a;
  b.placement = Transform{at, rotation, {1, 1, 1}};
  b.linear_velocity = velocity;
  b.output_parts = *out;
  return w.BindRagdoll(b).value();
}

// Steps `frames` frames, draining after each into `all`.
void StepAndDrain(World& w, int frames, std::vector<ContactEvent>* all) {
  std::vector<ContactEvent> buffer(64);
  for (int f = 0; f < frames; ++f) {
    w.Step(kStep);
    for (;;) {
      const int32_t n = w.DrainContactEvents(buffer);
      all->insert(all->end(), buffer.begin(), buffer.begin() + n);
      if (n < static_cast<int32_t>(buffer.size())) break;
    }
  }
}

int CountBegan(const std::vector<ContactEvent>& events) {
  int n = 0;
  for (const ContactEvent& e : events) n += e.kind == ContactEventKind::kBegan ? 1 : 0;
  return n;
}

TEST(ContactEvents, ACrateDroppedFromTwoMetresReportsOneImpactAtItsFallSpeed) {
  auto w = GroundWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate()).value();
  std::vector<Transform> out;
  const RagdollId id = BindAt(*w, a, {0, 2.25f, 0}, &out);  // its lowest face 2 m up
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 180, &events);
  ASSERT_EQ(events.size(), 1u) << "one impact, not one per substep or corner";
  const ContactEvent& e = events[0];
  EXPECT_EQ(e.kind, ContactEventKind::kBegan);
  EXPECT_EQ(e.ragdoll, id);
  EXPECT_EQ(e.part, 0);
  EXPECT_TRUE(e.character.IsNull());
  EXPECT_EQ(e.b_kind, ContactSideKind::kStaticWorld);
  EXPECT_NEAR(e.normal.y, 1.0f, 1e-4f);
  EXPECT_NEAR(e.point.y, 0.0f, 0.05f);
  const float expected = std::sqrt(2.0f * kGravity * 2.0f);  // 6.26 m/s
  EXPECT_NEAR(e.normal_speed, expected, 0.03f * expected);
  // The solver stops 10 kg at that speed (plus the weight it carries over the frame's
  // rest of substeps), and restitution 0 sends nothing back.
  EXPECT_GT(e.impulse, 10.0f * expected * 0.9f);
  EXPECT_LT(e.impulse, 10.0f * expected * 1.3f);
  EXPECT_GT(e.time, 0.5);
  EXPECT_EQ(w->LastStats().dropped_contact_events, 0);
}

TEST(ContactEvents, AHumanDroppedFromTwoMetresReportsEachImpactOnceAndNothingOnceAtRest) {
  const std::string path = ports::SharedDataPath("jolt-human/ragdoll.json");
  if (!json::ParseFile(path).ok) GTEST_SKIP() << path << " is not available";
  auto w = GroundWorld(LastSubstepOutputs());
  const RagdollSettings human = ports::LoadJoltHumanRagdoll(path).value();
  const auto part_count = static_cast<int>(human.parts.size());
  const RagdollArchetypeId a = w->BuildRagdollArchetype(human).value();
  std::vector<Transform> out;
  // Lying face down, 2 m up.
  const RagdollId id = BindAt(*w, a, {0, 2.2f, 0}, &out, part_count, {}, AxisAngle(Vec3{1, 0, 0}, 1.5708f));
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 120, &events);  // the fall (0.64 s) and the landing
  std::vector<int> began(static_cast<std::size_t>(part_count), 0);
  std::vector<double> last_began(static_cast<std::size_t>(part_count), -1.0);
  std::vector<float> first_speed(static_cast<std::size_t>(part_count), 0.0f);
  for (const ContactEvent& e : events) {
    ASSERT_EQ(e.ragdoll, id);
    ASSERT_EQ(e.b_kind, ContactSideKind::kStaticWorld);
    ASSERT_EQ(e.kind, ContactEventKind::kBegan) << "report_ended is off";
    ASSERT_GE(e.part, 0);
    ASSERT_LT(e.part, part_count);
    const auto j = static_cast<std::size_t>(e.part);
    // One event per impact: a part reports again only after it left the ground for
    // frames and came back down (a limb that rebounds lands a second, softer time).
    if (began[j] > 0) {
      EXPECT_GT(e.time - last_began[j], 0.1) << "part " << e.part << " reported one impact twice";
      EXPECT_LT(e.normal_speed, first_speed[j]) << "part " << e.part << ": a rebound lands slower";
    } else {
      first_speed[j] = e.normal_speed;
    }
    ++began[j];
    last_began[j] = e.time;
  }
  int parts_that_hit = 0;
  for (int j = 0; j < part_count; ++j) parts_that_hit += began[static_cast<std::size_t>(j)] > 0 ? 1 : 0;
  EXPECT_GE(parts_that_hit, part_count / 2) << "a body landing flat hits with most of its parts";
  ASSERT_FALSE(events.empty());
  // The first part down fell about 2 m (the lowest point was 2 m up, give or take the
  // shapes' extent below their parts' origins).
  EXPECT_GT(events[0].normal_speed, 5.0f);
  EXPECT_LT(events[0].normal_speed, 7.0f);
  // At rest: nothing more.
  std::vector<ContactEvent> resting;
  StepAndDrain(*w, 120, &resting);  // settling
  resting.clear();
  StepAndDrain(*w, 120, &resting);
  EXPECT_TRUE(resting.empty()) << resting.size() << " events from a body at rest, the first part "
                               << resting[0].part << " at " << resting[0].normal_speed << " m/s";
}

TEST(ContactEvents, DropsBelowTheThresholdsReportNothing) {
  auto w = GroundWorld();
  // A 2 cm drop hits at 0.63 m/s, under the default 1 m/s.
  const RagdollArchetypeId low = w->BuildRagdollArchetype(Crate()).value();
  RagdollSettings strict = Crate();
  strict.contact_events.min_normal_speed = 7.0f;  // above a 2 m fall's 6.26 m/s
  const RagdollArchetypeId high = w->BuildRagdollArchetype(strict).value();
  RagdollSettings heavy = Crate();
  heavy.contact_events.min_impulse = 1000.0f;  // far above what stops 10 kg at 6.26 m/s
  const RagdollArchetypeId heavy_id = w->BuildRagdollArchetype(heavy).value();
  std::vector<Transform> o1, o2, o3;
  BindAt(*w, low, {0, 0.27f, 0}, &o1);
  BindAt(*w, high, {3, 2.25f, 0}, &o2);
  BindAt(*w, heavy_id, {6, 2.25f, 0}, &o3);
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 180, &events);
  EXPECT_TRUE(events.empty()) << events.size() << " events, the first " << events[0].normal_speed << " m/s";
}

TEST(ContactEvents, AnArchetypeWithEventsDisabledReportsNothing) {
  auto w = GroundWorld();
  RagdollSettings quiet = Crate();
  quiet.contact_events.enabled = false;
  const RagdollArchetypeId a = w->BuildRagdollArchetype(quiet).value();
  std::vector<Transform> out;
  BindAt(*w, a, {0, 2.25f, 0}, &out);
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 120, &events);
  EXPECT_TRUE(events.empty());
}

TEST(ContactEvents, TwoRagdollsCollidingReportOnePairEvent) {
  WorldSettings ws;
  ws.gravity = {0, 0, 0};
  auto w = MakeWorld(ws);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate()).value();
  std::vector<Transform> oa, ob;
  const RagdollId ia = BindAt(*w, a, {-1, 0, 0}, &oa, 1, {2, 0, 0});
  const RagdollId ib = BindAt(*w, a, {1, 0, 0}, &ob, 1, {-2, 0, 0});
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 90, &events);
  ASSERT_EQ(events.size(), 1u);
  const ContactEvent& e = events[0];
  EXPECT_EQ(e.kind, ContactEventKind::kBegan);
  EXPECT_EQ(e.ragdoll, ia) << "side A is the lower slot";
  EXPECT_EQ(e.part, 0);
  EXPECT_EQ(e.b_kind, ContactSideKind::kRagdollPart);
  EXPECT_EQ(e.b_ragdoll, ib);
  EXPECT_EQ(e.b_part, 0);
  EXPECT_NEAR(e.normal.x, -1.0f, 1e-3f) << "from B (at +x) toward A";
  EXPECT_NEAR(e.normal_speed, 4.0f, 0.1f) << "they close at 2 + 2 m/s";
  EXPECT_GT(e.impulse, 0.0f);
  EXPECT_NEAR(e.point.x, 0.0f, 0.05f);
}

TEST(ContactEvents, ReportEndedSaysWhenAReportedContactIsGone) {
  WorldSettings ws;
  ws.gravity = {0, 0, 0};
  auto w = MakeWorld(ws);
  RagdollSettings bouncy = Crate({.half = 0.25f, .mass = 10.0f, .restitution = 0.8f});
  bouncy.contact_events.report_ended = true;
  const RagdollArchetypeId a = w->BuildRagdollArchetype(bouncy).value();
  std::vector<Transform> oa, ob;
  const RagdollId ia = BindAt(*w, a, {-1, 0, 0}, &oa, 1, {2, 0, 0});
  BindAt(*w, a, {1, 0, 0}, &ob, 1, {-2, 0, 0});
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 90, &events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, ContactEventKind::kBegan);
  EXPECT_EQ(events[1].kind, ContactEventKind::kEnded);
  EXPECT_EQ(events[1].ragdoll, ia);
  EXPECT_EQ(events[1].b_kind, ContactSideKind::kRagdollPart);
  EXPECT_EQ(events[1].normal_speed, 0.0f);
  EXPECT_GT(events[1].time, events[0].time);

  // Against the static world: a crate that lands, then is thrown up off the ground.
  auto g = GroundWorld();
  RagdollSettings ended = Crate();
  ended.contact_events.report_ended = true;
  const RagdollArchetypeId c = g->BuildRagdollArchetype(ended).value();
  std::vector<Transform> oc;
  const RagdollId ic = BindAt(*g, c, {0, 1.25f, 0}, &oc);
  std::vector<ContactEvent> landing;
  StepAndDrain(*g, 120, &landing);
  ASSERT_EQ(landing.size(), 1u);
  EXPECT_EQ(landing[0].kind, ContactEventKind::kBegan);
  ASSERT_TRUE(g->ApplyRagdollImpulse(ic, 0, {0, 50, 0}, oc[0].translation).ok());
  std::vector<ContactEvent> thrown;
  StepAndDrain(*g, 10, &thrown);
  ASSERT_EQ(thrown.size(), 1u);
  EXPECT_EQ(thrown[0].kind, ContactEventKind::kEnded);
  EXPECT_EQ(thrown[0].b_kind, ContactSideKind::kStaticWorld);
}

TEST(ContactEvents, EventsPastTheCapacityAndUndrainedOnesAreDroppedAndCounted) {
  WorldSettings ws;
  ws.contact_event_capacity = 2;
  auto w = GroundWorld(ws);
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate()).value();
  std::vector<std::vector<Transform>> outs(5);
  for (int i = 0; i < 5; ++i) BindAt(*w, a, {2.0f * static_cast<float>(i), 1.25f, 0}, &outs[static_cast<std::size_t>(i)]);
  // All five land in the same frame; two fit.
  int frame = 0;
  for (; frame < 120 && w->LastStats().contact_events == 0; ++frame) w->Step(kStep);
  ASSERT_LT(frame, 120);
  EXPECT_EQ(w->LastStats().contact_events, 2);
  EXPECT_EQ(w->LastStats().dropped_contact_events, 3);
  // Not drained: the next Step drops them, and says so.
  w->Step(kStep);
  EXPECT_EQ(w->LastStats().contact_events, 0);
  EXPECT_EQ(w->LastStats().dropped_contact_events, 2);
  std::vector<ContactEvent> buffer(8);
  EXPECT_EQ(w->DrainContactEvents(buffer), 0);
}

TEST(ContactEvents, CapacityZeroReportsNothingAndChangesNoResult) {
  WorldSettings off;
  off.contact_event_capacity = 0;
  auto w_off = GroundWorld(off);
  auto w_on = GroundWorld();
  std::vector<Transform> o1, o2;
  for (World* w : {w_off.get(), w_on.get()}) {
    const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate({.half = 0.25f, .mass = 10.0f, .restitution = 0.3f})).value();
    BindAt(*w, a, {0, 2.25f, 0}, w == w_off.get() ? &o1 : &o2, 1, {1, 0, 0});
  }
  std::vector<ContactEvent> e_off, e_on;
  StepAndDrain(*w_off, 120, &e_off);
  StepAndDrain(*w_on, 120, &e_on);
  EXPECT_TRUE(e_off.empty());
  EXPECT_FALSE(e_on.empty());
  EXPECT_EQ(w_off->LastStats().dropped_contact_events, 0);
  EXPECT_EQ(w_off->StateHash(), w_on->StateHash()) << "recording impacts is bookkeeping only";
}

TEST(ContactEvents, AHostCanTakeTheScreenAboveSeventyStudsPerSecond) {
  auto w = GroundWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate()).value();
  std::vector<Transform> low, high;
  BindAt(*w, a, {0, 2.25f, 0}, &low);                        // lands at 6.3 m/s (22 studs/s)
  const RagdollId far = BindAt(*w, a, {5, 25.25f, 0}, &high);  // 22.1 m/s (79 studs/s)
  std::vector<ContactEvent> events;
  StepAndDrain(*w, 180, &events);
  EXPECT_EQ(CountBegan(events), 2) << "an impact sound for each";
  int screen_effects = 0;
  for (const ContactEvent& e : events) {
    if (e.kind == ContactEventKind::kBegan && e.normal_speed > 70.0f * kStud) {
      ++screen_effects;
      EXPECT_EQ(e.ragdoll, far);
    }
  }
  EXPECT_EQ(screen_effects, 1);
}

std::vector<ContactEvent> PileEvents(TaskHooks tasks, Isa isa = Isa::kAuto) {
  WorldSettings ws;
  ws.tasks = tasks;
  ws.isa = isa;
  auto w = GroundWorld(ws);
  std::vector<ContactEvent> events;
  if (w == nullptr) return events;
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate({.half = 0.2f, .mass = 5.0f, .restitution = 0.2f})).value();
  std::vector<std::vector<Transform>> outs(24);
  for (int i = 0; i < 24; ++i) {
    const float x = 0.3f * static_cast<float>(i % 3), z = 0.25f * static_cast<float>(i % 2);
    BindAt(*w, a, {x, 0.5f + 0.45f * static_cast<float>(i), z}, &outs[static_cast<std::size_t>(i)], 1, {},
           AxisAngle(Vec3{0, 1, 0}, 0.4f * static_cast<float>(i)));
  }
  StepAndDrain(*w, 150, &events);
  return events;
}

// The queue and the pairs' lists are sized before the first Step (Create, Bind): a pile
// whose parts land on the ground and on each other queues events with no allocation.
TEST(ContactEvents, StepAndDrainAllocateNothingWhileEventsAreQueued) {
  auto w = GroundWorld();
  const RagdollArchetypeId a = w->BuildRagdollArchetype(Crate({.half = 0.2f, .mass = 5.0f, .restitution = 0.2f})).value();
  std::vector<std::vector<Transform>> outs(12);
  for (int i = 0; i < 12; ++i) {
    BindAt(*w, a, {0.3f * static_cast<float>(i % 3), 0.5f + 0.45f * static_cast<float>(i), 0}, &outs[static_cast<std::size_t>(i)]);
  }
  std::vector<ContactEvent> buffer(512);
  int events = 0, pair_events = 0;
  const long before = g_allocations.load();
  for (int f = 0; f < 120; ++f) {
    w->Step(kStep);
    const int32_t n = w->DrainContactEvents(buffer);
    events += n;
    for (int32_t i = 0; i < n; ++i) pair_events += buffer[static_cast<std::size_t>(i)].b_kind == ContactSideKind::kRagdollPart ? 1 : 0;
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(events, 12);
  EXPECT_GT(pair_events, 0);
}

bool SameEvent(const ContactEvent& x, const ContactEvent& y) {
  return x.kind == y.kind && x.ragdoll == y.ragdoll && x.part == y.part && x.b_kind == y.b_kind &&
         x.b_ragdoll == y.b_ragdoll && x.b_part == y.b_part && x.point == y.point && x.normal == y.normal &&
         x.normal_speed == y.normal_speed && x.impulse == y.impulse && x.time == y.time;
}

TEST(ContactEvents, OrderAndContentAreTheSameAtOneAndTwoWorkers) {
  const std::vector<ContactEvent> serial = PileEvents(TaskHooks{nullptr, nullptr, nullptr, 1});
  TbbTaskSystem one(1), two(2);
  const std::vector<ContactEvent> at_one = PileEvents(one.hooks());
  const std::vector<ContactEvent> at_two = PileEvents(two.hooks());
  int pairs = 0;
  for (const ContactEvent& e : serial) pairs += e.b_kind == ContactSideKind::kRagdollPart ? 1 : 0;
  EXPECT_GT(pairs, 5) << "the pile's crates land on each other";
  ASSERT_EQ(at_one.size(), serial.size());
  ASSERT_EQ(at_two.size(), serial.size());
  for (std::size_t i = 0; i < serial.size(); ++i) {
    EXPECT_TRUE(SameEvent(serial[i], at_one[i])) << "event " << i << " at 1 worker";
    EXPECT_TRUE(SameEvent(serial[i], at_two[i])) << "event " << i << " at 2 workers";
  }
}

// The impact rows are written by every kernel (rigid_kernel_contact_solve.h's
// RecordImpact): each gives its scalar reference's figures, bit for bit.
TEST(ContactEvents, EverySimdKernelGivesItsScalarReferencesEvents) {
  int compared = 0;
  for (const Isa isa : kConcreteIsas) {
    if (isa == Isa::kScalar || isa == Isa::kScalarFma || !IsIsaSupported(isa)) continue;
    const std::vector<ContactEvent> reference = PileEvents(TaskHooks{nullptr, nullptr, nullptr, 1}, ScalarReferenceOf(isa));
    const std::vector<ContactEvent> simd = PileEvents(TaskHooks{nullptr, nullptr, nullptr, 1}, isa);
    ASSERT_EQ(simd.size(), reference.size()) << ToString(isa);
    ASSERT_FALSE(simd.empty());
    for (std::size_t i = 0; i < simd.size(); ++i) EXPECT_TRUE(SameEvent(simd[i], reference[i])) << ToString(isa) << " event " << i;
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "this CPU runs no SIMD kernel";
}

TEST(ContactEvents, BadSettingsAreRefusedNamingTheField) {
  auto w = MakeWorld();
  RagdollSettings s = Crate();
  s.contact_events.min_impulse = -1.0f;
  auto r = w->BuildRagdollArchetype(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOutOfRange);
  EXPECT_EQ(r.error().field, "contact_events.min_impulse");
  s = Crate();
  s.contact_events.min_normal_speed = NAN;
  r = w->BuildRagdollArchetype(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFinite);
  EXPECT_EQ(r.error().field, "contact_events.min_normal_speed");
  WorldSettings ws;
  ws.contact_event_capacity = -1;
  auto bad = World::Create(ws);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kOutOfRange);
  EXPECT_EQ(bad.error().field, "contact_event_capacity");
  // Draining into nothing moves nothing.
  EXPECT_EQ(w->DrainContactEvents({}), 0);
}

}  // namespace
}  // namespace tendon::test
