// World::DrawDebug (tendon/debug_draw.h): a recording host sees every chain node, link and
// collider, every part shape at its frame with its dimensions, every joint, and the
// contacts of a body lying on the floor; the flags pick; null callbacks are skipped; a
// frame in flight, a callback and bad input are refused; drawing changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "character_test_util.h"
#include "stickman_rig.h"
#include "tendon/debug_draw.h"
#include "tendon/world.h"

namespace tendon {
namespace {

constexpr float kStep = 1.0f / 60.0f;

struct Line {
  Vec3 from, to;
  DebugColor color;
};
struct Point {
  Vec3 at;
  float size;
  DebugColor color;
};
struct Sphere {
  Vec3 centre;
  float radius;
  DebugColor color;
};
struct Capsule {
  Vec3 a, b;
  float ra, rb;
  DebugColor color;
};
struct Box {
  Transform frame;
  Vec3 half;
  DebugColor color;
};

// A host renderer that records every primitive.
struct Recorder {
  std::vector<Line> lines;
  std::vector<Point> points;
  std::vector<Sphere> spheres;
  std::vector<Capsule> capsules;
  std::vector<Box> boxes;
  std::size_t Total() const { return lines.size() + points.size() + spheres.size() + capsules.size() + boxes.size(); }
  std::vector<DebugColor> Colors() const {
    std::vector<DebugColor> c;
    for (const auto& x : lines) c.push_back(x.color);
    for (const auto& x : points) c.push_back(x.color);
    for (const auto& x : spheres) c.push_back(x.color);
    for (const auto& x : capsules) c.push_back(x.color);
    for (const auto& x : boxes) c.push_back(x.color);
    return c;
  }
  DebugDraw Draw() {
    DebugDraw d;
    d.user = this;
    d.draw_line = [](Vec3 a, Vec3 b, DebugColor c, void* u) { static_cast<Recorder*>(u)->lines.push_back({a, b, c}); };
    d.draw_point = [](Vec3 p, float s, DebugColor c, void* u) { static_cast<Recorder*>(u)->points.push_back({p, s, c}); };
    d.draw_sphere = [](Vec3 p, float r, DebugColor c, void* u) { static_cast<Recorder*>(u)->spheres.push_back({p, r, c}); };
    d.draw_capsule = [](Vec3 a, Vec3 b, float ra, float rb, DebugColor c, void* u) {
      static_cast<Recorder*>(u)->capsules.push_back({a, b, ra, rb, c});
    };
    d.draw_box = [](Transform f, Vec3 h, DebugColor c, void* u) { static_cast<Recorder*>(u)->boxes.push_back({f, h, c}); };
    return d;
  }
};

float Distance(Vec3 a, Vec3 b) { return Length(a - b); }

// A limb of three parts, one of each shape kind but the sphere's (the stickman has no
// other): a capsule, a tapered capsule and a box, each shape offset in its part.
RagdollSettings Limb() {
  RagdollSettings s;
  s.name = "limb";
  PartSettings upper;
  upper.name = "upper";
  upper.pose = Transform{{0, 0, 0}, {}, {1, 1, 1}};
  upper.shape.type = PartShape::kCapsule;
  upper.shape.radius = 0.06f;
  upper.shape.half_height = 0.15f;
  upper.shape.offset = Transform{{0.2f, 0, 0}, AxisAngle({0, 0, 1}, 1.5707964f), {1, 1, 1}};
  PartSettings lower = upper;
  lower.name = "lower";
  lower.parent = 0;
  lower.pose = Transform{{0.4f, 0, 0}, {}, {1, 1, 1}};
  lower.shape.type = PartShape::kTaperedCapsule;
  lower.shape.top_radius = 0.05f;
  lower.shape.bottom_radius = 0.035f;
  lower.joint.anchor = {0.4f, 0, 0};
  lower.joint.twist_axis = {1, 0, 0};
  lower.joint.plane_axis = {0, 1, 0};
  PartSettings hand;
  hand.name = "hand";
  hand.parent = 1;
  hand.pose = Transform{{0.8f, 0, 0}, {}, {1, 1, 1}};
  hand.shape.type = PartShape::kBox;
  hand.shape.half_extents = {0.05f, 0.02f, 0.04f};
  hand.shape.offset = Transform{{0.05f, 0, 0}, {}, {1, 1, 1}};
  hand.joint.type = JointType::kHinge;
  hand.joint.anchor = {0.8f, 0, 0};
  hand.joint.twist_axis = {0, 0, 1};
  hand.joint.plane_axis = {1, 0, 0};
  hand.joint.hinge_min_degrees = -60;
  hand.joint.hinge_max_degrees = 60;
  s.parts = {upper, lower, hand};
  return s;
}

// One chain with a capsule collider, the limb and an activated stickman over a floor.
struct Scene {
  std::unique_ptr<World> world;
  Transform chain_root{{3, 2, 0}, {}, {1, 1, 1}};
  std::vector<Transform> chain_animated, chain_output;
  std::vector<Transform> collider_frames{Transform{{3, 1.6f, 0.05f}, {}, {1, 1, 1}}};
  ChainId chain{};
  RagdollSettings limb = Limb();
  std::vector<Transform> limb_output = std::vector<Transform>(3);
  RagdollId limb_id{};
  CharacterArchetypeId stickman{};
  std::unique_ptr<test::HostCharacter> host;
  CharacterId character{};

  explicit Scene(bool activate = true) {
    WorldSettings ws;
    ws.render_interpolation = false;  // outputs are the last substep's state, as DrawDebug draws
    world = World::Create(ws).value();
    StaticWorldSettings floor;
    floor.planes.push_back(StaticPlane{{0, 1, 0}, 0});
    EXPECT_TRUE(world->BuildStaticWorld(floor).ok());

    ChainArchetypeSettings cs;
    cs.name = "tail";
    for (int i = 0; i < 4; ++i)
      cs.bones.push_back(ChainBone{.parent = i - 1, .rest_local = Transform{{0, i == 0 ? 0.0f : -0.15f, 0}, {}, {1, 1, 1}}});
    ColliderSettings capsule;
    capsule.shape = ColliderShape::kCapsule;
    capsule.frame = 0;
    capsule.a = {-0.3f, 0, 0};
    capsule.b = {0.3f, 0, 0};
    capsule.radius = 0.1f;
    cs.colliders.push_back(capsule);
    const ChainArchetypeId ca = world->BuildChainArchetype(cs).value();
    for (const ChainBone& b : cs.bones) chain_animated.push_back(b.rest_local);
    chain_output = chain_animated;
    ChainBinding cb;
    cb.archetype = ca;
    cb.root_parent_world = &chain_root;
    cb.animated_local = chain_animated;
    cb.output_local = chain_output;
    cb.collider_frames = collider_frames;
    chain = world->BindChain(cb).value();

    const RagdollArchetypeId la = world->BuildRagdollArchetype(limb).value();
    RagdollBinding rb;
    rb.archetype = la;
    rb.placement = Transform{{-2, 0.4f, 0}, {}, {1, 1, 1}};
    rb.output_parts = limb_output;
    limb_id = world->BindRagdoll(rb).value();

    stickman = world->BuildCharacterArchetype(test::StickmanCharacter()).value();
    host = std::make_unique<test::HostCharacter>(test::StickmanSkeleton(), Transform{{0, 0.9f, 0}, {}, {1, 1, 1}});
    character = world->BindCharacter(host->Binding(stickman)).value();
    world->Step(kStep);
    if (activate) {
      CharacterActivateOptions push;
      push.launch_velocity = {0, 0, 1.5f};  // falls on its back
      EXPECT_TRUE(world->ActivateCharacter(character, push));
    }
  }
  void Settle(int frames = 150) {
    for (int i = 0; i < frames; ++i) world->Step(kStep);
  }
  Recorder Draw(uint32_t flags, DebugDraw* tweak = nullptr) const {
    Recorder r;
    DebugDraw d = r.Draw();
    if (tweak != nullptr) {
      d.point_size = tweak->point_size;
      d.normal_length = tweak->normal_length;
      d.limit_length = tweak->limit_length;
    }
    EXPECT_TRUE(world->DrawDebug(d, flags).ok());
    return r;
  }
};

TEST(DebugDraw, EveryChainNodeLinkAndColliderIsDrawnOnceWhereTheSolverHasIt) {
  Scene s;
  s.Settle(30);
  ASSERT_TRUE(s.world->IsSimulated(s.chain));
  std::vector<Vec3> nodes(4);
  ASSERT_TRUE(s.world->GetChainNodePositions(s.chain, nodes).ok());
  const Recorder r = s.Draw(DebugDrawFlags::kChainNodes | DebugDrawFlags::kChainLinks | DebugDrawFlags::kChainColliders);
  ASSERT_EQ(r.points.size(), 4u);
  for (const Vec3& n : nodes)
    EXPECT_EQ(std::count_if(r.points.begin(), r.points.end(), [&](const Point& p) { return p.at == n; }), 1);
  ASSERT_EQ(r.lines.size(), 3u);
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(std::count_if(r.lines.begin(), r.lines.end(),
                            [&](const Line& l) { return l.from == nodes[k - 1] && l.to == nodes[k]; }),
              1)
        << "link " << k;
  ASSERT_EQ(r.capsules.size(), 1u);
  EXPECT_LT(Distance(r.capsules[0].a, Vec3{2.7f, 1.6f, 0.05f}), 1e-5f);
  EXPECT_LT(Distance(r.capsules[0].b, Vec3{3.3f, 1.6f, 0.05f}), 1e-5f);
  EXPECT_FLOAT_EQ(r.capsules[0].ra, 0.1f);
  EXPECT_FLOAT_EQ(r.capsules[0].rb, 0.1f);
  EXPECT_EQ(r.spheres.size() + r.boxes.size(), 0u);
  EXPECT_EQ(r.points[0].size, DebugDraw{}.point_size);
}

TEST(DebugDraw, EveryPartShapeIsDrawnOnceAtItsOutputFrameWithItsDimensions) {
  Scene s;
  s.Settle(20);
  const Recorder r = s.Draw(DebugDrawFlags::kRagdollParts);
  const int32_t stickman_parts = s.world->CharacterPartCount(s.stickman);
  ASSERT_EQ(stickman_parts, 10);
  ASSERT_EQ(r.boxes.size(), 1u);
  ASSERT_EQ(r.capsules.size(), 2u + static_cast<std::size_t>(stickman_parts));
  EXPECT_EQ(r.spheres.size(), 0u);
  // The limb's three, against its output frames and shape settings.
  for (int32_t j = 0; j < 2; ++j) {
    const PartShapeSettings& shape = s.limb.parts[j].shape;
    const Transform frame = Compose(s.limb_output[j], shape.offset);
    const Vec3 top = TransformPoint(frame, {0, shape.half_height, 0});
    const Vec3 bottom = TransformPoint(frame, {0, -shape.half_height, 0});
    const float ra = j == 0 ? shape.radius : shape.top_radius, rb = j == 0 ? shape.radius : shape.bottom_radius;
    const auto n = std::count_if(r.capsules.begin(), r.capsules.end(), [&](const Capsule& c) {
      return Distance(c.a, top) < 1e-4f && Distance(c.b, bottom) < 1e-4f && c.ra == ra && c.rb == rb;
    });
    EXPECT_EQ(n, 1) << "part " << j;
  }
  const Transform hand = Compose(s.limb_output[2], s.limb.parts[2].shape.offset);
  EXPECT_LT(Distance(r.boxes[0].frame.translation, hand.translation), 1e-4f);
  EXPECT_GT(std::fabs(Dot(r.boxes[0].frame.rotation, hand.rotation)), 0.99999f);
  EXPECT_EQ(r.boxes[0].half, s.limb.parts[2].shape.half_extents);
  // The stickman's, at its bones: each capsule's middle lies within its own bone's reach.
  for (const Capsule& c : r.capsules) EXPECT_TRUE(IsFinite(c.a) && IsFinite(c.b) && c.ra > 0 && c.rb > 0);
}

TEST(DebugDraw, EveryJointIsDrawnAtTheAnchorBothPartsHold) {
  Scene s;
  s.Settle(60);
  const Recorder r = s.Draw(DebugDrawFlags::kJoints);
  const std::size_t joints = 2 + static_cast<std::size_t>(s.world->CharacterPartCount(s.stickman) - 1);
  ASSERT_EQ(r.points.size(), joints);
  ASSERT_EQ(r.lines.size(), 2 * joints);
  // Per joint: parent centre -> anchor (as the parent holds it), then child anchor -> child
  // centre; the solver keeps the two anchors together.
  for (std::size_t j = 0; j < joints; ++j) {
    EXPECT_EQ(r.lines[2 * j].to, r.points[j].at);
    EXPECT_LT(Distance(r.lines[2 * j + 1].from, r.points[j].at), 0.01f) << "joint " << j;
  }
  // The limb's hinge: its anchor where the lower part's output frame puts (0.4, 0, 0) of the build pose.
  EXPECT_LT(Distance(r.points[1].at, TransformPoint(s.limb_output[1], {0.4f, 0, 0})), 0.01f);
  // Limits: fans of lines from every anchor; none when their length is 0.
  const Recorder limits = s.Draw(DebugDrawFlags::kJointLimits);
  EXPECT_GT(limits.lines.size(), 2 * joints);
  EXPECT_TRUE(limits.points.empty());
  DebugDraw no_limits;
  no_limits.limit_length = 0;
  EXPECT_EQ(s.Draw(DebugDrawFlags::kJointLimits, &no_limits).Total(), 0u);
}

TEST(DebugDraw, ContactsAfterSettlingHaveNormalsPointingUpFromThePlane) {
  Scene s;
  s.Settle(150);
  const Recorder r = s.Draw(DebugDrawFlags::kContacts);
  ASSERT_GE(r.points.size(), 4u) << "the limb and the stickman lie on the floor";
  ASSERT_EQ(r.lines.size(), r.points.size()) << "one normal per contact point";
  const float length = DebugDraw{}.normal_length;
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    const Line& l = r.lines[i];
    EXPECT_EQ(l.from, r.points[i].at);
    EXPECT_NEAR(l.from.y, 0.0f, 0.02f) << "on the floor";
    EXPECT_NEAR(l.to.y - l.from.y, length, 1e-5f) << "straight up, normal_length long";
    EXPECT_NEAR(Distance(l.from, l.to), length, 1e-5f);
  }
  DebugDraw no_normals;
  no_normals.normal_length = 0;
  const Recorder points_only = s.Draw(DebugDrawFlags::kContacts, &no_normals);
  EXPECT_EQ(points_only.points.size(), r.points.size());
  EXPECT_TRUE(points_only.lines.empty());
}

// Two boxes stacked: the pair's contacts (between ragdolls) lie between them, normals vertical.
TEST(DebugDraw, ContactsBetweenRagdollsLieWhereTheyTouchWithVerticalNormals) {
  WorldSettings ws;
  ws.render_interpolation = false;
  auto w = World::Create(ws).value();
  StaticWorldSettings floor;
  floor.planes.push_back(StaticPlane{{0, 1, 0}, 0});
  ASSERT_TRUE(w->BuildStaticWorld(floor).ok());
  RagdollSettings box;
  PartSettings p;
  p.shape.type = PartShape::kBox;
  p.shape.half_extents = {0.2f, 0.1f, 0.2f};
  box.parts = {p};
  const RagdollArchetypeId a = w->BuildRagdollArchetype(box).value();
  // A smaller box on top: its bottom corners (its contact samples) stand on the lower
  // box's top face, and the lower box's top corners are out of the small one's reach.
  box.parts[0].shape.half_extents = {0.1f, 0.1f, 0.1f};
  const RagdollArchetypeId small = w->BuildRagdollArchetype(box).value();
  std::vector<Transform> out0(1), out1(1);
  RagdollBinding b;
  b.archetype = a;
  b.placement = Transform{{0, 0.1f, 0}, {}, {1, 1, 1}};
  b.output_parts = out0;
  ASSERT_TRUE(w->BindRagdoll(b).ok());
  b.archetype = small;
  b.placement = Transform{{0.02f, 0.31f, 0}, {}, {1, 1, 1}};
  b.output_parts = out1;
  const RagdollId top = w->BindRagdoll(b).value();
  for (int i = 0; i < 30; ++i) w->Step(kStep);
  Recorder r;
  ASSERT_TRUE(w->DrawDebug(r.Draw(), DebugDrawFlags::kContacts).ok());
  int between = 0;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (r.points[i].at.y < 0.1f) continue;  // the lower box on the floor
    ++between;
    EXPECT_NEAR(r.points[i].at.y, 0.2f, 0.02f) << "at the boxes' shared face";
    const Vec3 n = r.lines[i].to - r.lines[i].from;
    EXPECT_GT(std::fabs(n.y), 0.99f * Length(n)) << "vertical";
  }
  EXPECT_EQ(between, 4) << "the small box's four bottom corners";
  // The top box unbound after the frame: its pair's contacts went with it.
  ASSERT_TRUE(w->UnbindRagdoll(top).ok());
  Recorder after;
  ASSERT_TRUE(w->DrawDebug(after.Draw(), DebugDrawFlags::kContacts).ok());
  EXPECT_TRUE(std::none_of(after.points.begin(), after.points.end(), [](const Point& q) { return q.at.y > 0.1f; }));
  EXPECT_FALSE(after.points.empty()) << "the lower box still lies on the floor";
}

TEST(DebugDraw, EachFlagAloneDrawsOnlyItsKind) {
  Scene s;
  s.Settle(150);
  const DebugDrawColors c;
  struct Case {
    uint32_t flag;
    std::vector<DebugColor> colors;
  };
  const Case cases[] = {
      {DebugDrawFlags::kChainNodes, {c.chain_node}},
      {DebugDrawFlags::kChainLinks, {c.chain_link}},
      {DebugDrawFlags::kChainColliders, {c.chain_collider}},
      {DebugDrawFlags::kRagdollParts, {c.ragdoll_part, c.ragdoll_part_kinematic}},
      {DebugDrawFlags::kJoints, {c.joint}},
      {DebugDrawFlags::kJointLimits, {c.joint_swing_limit, c.joint_twist_limit, c.joint}},
      {DebugDrawFlags::kContacts, {c.contact_point, c.contact_normal}},
  };
  std::size_t sum = 0;
  for (const Case& k : cases) {
    const Recorder r = s.Draw(k.flag);
    EXPECT_GT(r.Total(), 0u) << "flag " << k.flag;
    sum += r.Total();
    for (DebugColor col : r.Colors())
      EXPECT_NE(std::find(k.colors.begin(), k.colors.end(), col), k.colors.end()) << "flag " << k.flag << " drew " << col;
  }
  EXPECT_EQ(s.Draw(DebugDrawFlags::kAll & ~DebugDrawFlags::kSleeping).Total(), sum) << "all is the sum of its parts";
  EXPECT_EQ(s.Draw(0).Total(), 0u);
  EXPECT_EQ(s.Draw(DebugDrawFlags::kSleeping).Total(), 0u) << "a modifier alone draws nothing";
  EXPECT_EQ(s.Draw(DebugDrawFlags::kHostBodies).Total(), 0u) << "no host bodies yet";
  // A host box, far from everything: drawn by kHostBodies alone, where it is, in its colour.
  HostBodySettings hs;
  hs.shape = HostBodyShape::kBox;
  hs.half_extents = {0.5f, 0.25f, 1.0f};
  hs.transform.translation = {20, 1, 0};
  const std::size_t parts_before = s.Draw(DebugDrawFlags::kRagdollParts).Total();
  ASSERT_TRUE(s.world->AddHostBody(hs).ok());
  s.world->Step(1.0f / 60.0f);
  const Recorder host = s.Draw(DebugDrawFlags::kHostBodies);
  ASSERT_EQ(host.Total(), 1u);
  ASSERT_EQ(host.boxes.size(), 1u);
  EXPECT_EQ(host.boxes[0].color, c.host_body);
  EXPECT_NEAR(host.boxes[0].frame.translation.x, 20.0f, 1e-5f);
  EXPECT_NEAR(host.boxes[0].half.z, 1.0f, 1e-6f);
  EXPECT_EQ(s.Draw(DebugDrawFlags::kRagdollParts).Total(), parts_before) << "a host body is not a ragdoll part";
}

TEST(DebugDraw, SleepingFlagColoursCulledChainsAndSleepingRagdolls) {
  Scene s(false);  // the stickman stays animated: the limb alone falls asleep
  s.world->SetCamera({1e4f, 0, 0});  // past max_distance: the chain is culled
  for (int i = 0; i < 600 && !s.world->IsRagdollAsleep(s.limb_id); ++i) s.world->Step(kStep);
  ASSERT_FALSE(s.world->IsSimulated(s.chain));
  ASSERT_TRUE(s.world->IsRagdollAsleep(s.limb_id));
  const DebugDrawColors c;
  const uint32_t what = DebugDrawFlags::kChainNodes | DebugDrawFlags::kRagdollParts;
  const Recorder awake_colours = s.Draw(what);
  const Recorder sleep_colours = s.Draw(what | DebugDrawFlags::kSleeping);
  ASSERT_EQ(awake_colours.points.size(), 4u) << "a culled chain still shows its animated pose";
  ASSERT_EQ(sleep_colours.points.size(), 4u);
  for (const Point& p : awake_colours.points) EXPECT_EQ(p.color, c.chain_node);
  for (const Point& p : sleep_colours.points) EXPECT_EQ(p.color, c.chain_node_sleeping);
  ASSERT_EQ(sleep_colours.capsules.size(), 2u) << "the limb only: the stickman's ragdoll is switched off";
  for (const Capsule& k : sleep_colours.capsules) EXPECT_EQ(k.color, c.ragdoll_part_sleeping);
  for (const Capsule& k : awake_colours.capsules) EXPECT_EQ(k.color, c.ragdoll_part);
  EXPECT_TRUE(s.Draw(DebugDrawFlags::kChainColliders).capsules.empty()) << "a culled chain has no collider this frame";
}

TEST(DebugDraw, NullCallbacksAreSkipped) {
  Scene s;
  s.Settle(100);
  const Recorder full = s.Draw(DebugDrawFlags::kAll);
  Recorder lines_only;
  DebugDraw d = lines_only.Draw();
  d.draw_point = nullptr;
  d.draw_sphere = nullptr;
  d.draw_capsule = nullptr;
  d.draw_box = nullptr;
  ASSERT_TRUE(s.world->DrawDebug(d, DebugDrawFlags::kAll).ok());
  EXPECT_EQ(lines_only.lines.size(), full.lines.size());
  EXPECT_EQ(lines_only.Total(), full.lines.size());
  ASSERT_TRUE(s.world->DrawDebug(DebugDraw{}, DebugDrawFlags::kAll).ok()) << "no callbacks at all: nothing to do";
}

struct Reentry {
  World* world;
  Error from_callback;
  Error nested;
  bool called = false;
};

TEST(DebugDraw, IsRefusedMidFrameFromItsCallbacksAndForBadInput) {
  Scene s;
  s.Settle(5);
  Recorder r;
  ASSERT_TRUE(s.world->BeginStep(kStep));
  const Error mid = s.world->DrawDebug(r.Draw(), DebugDrawFlags::kAll);
  EXPECT_EQ(mid.code, ErrorCode::kReentrant);
  EXPECT_EQ(mid.field, "world");
  EXPECT_EQ(r.Total(), 0u);
  s.world->FinishStep();
  EXPECT_TRUE(s.world->DrawDebug(r.Draw(), DebugDrawFlags::kAll).ok());
  EXPECT_GT(r.Total(), 0u);

  const Error flags = s.world->DrawDebug(r.Draw(), 1u << 20);
  EXPECT_EQ(flags.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(flags.field, "flags");
  for (float bad : {NAN, -1.0f, INFINITY, 1e4f}) {
    DebugDraw d = r.Draw();
    d.normal_length = bad;
    const Error e = s.world->DrawDebug(d, DebugDrawFlags::kAll);
    EXPECT_EQ(e.code, ErrorCode::kOutOfRange) << bad;
    EXPECT_EQ(e.field, "draw.normal_length") << bad;
  }
  DebugDraw d;
  d.point_size = NAN;
  EXPECT_EQ(s.world->DrawDebug(d, 0).field, "draw.point_size");
  d = DebugDraw{};
  d.limit_length = -1;
  EXPECT_EQ(s.world->DrawDebug(d, 0).field, "draw.limit_length");
  d = DebugDraw{};
  d.plane_size = NAN;
  EXPECT_EQ(s.world->DrawDebug(d, 0).field, "draw.plane_size");

  // From inside a callback: changing the world and drawing again are refused.
  Reentry re{s.world.get(), {}, {}};
  DebugDraw inner;
  inner.user = &re;
  inner.draw_point = [](Vec3, float, DebugColor, void* u) {
    auto& x = *static_cast<Reentry*>(u);
    if (x.called) return;
    x.called = true;
    x.from_callback = x.world->SetMaxChains(3);
    x.nested = x.world->DrawDebug(DebugDraw{}, 0);
  };
  ASSERT_TRUE(s.world->DrawDebug(inner, DebugDrawFlags::kChainNodes).ok());
  ASSERT_TRUE(re.called);
  EXPECT_EQ(re.from_callback.code, ErrorCode::kReentrant);
  EXPECT_EQ(re.nested.code, ErrorCode::kReentrant);
  EXPECT_TRUE(s.world->SetMaxChains(3).ok()) << "after the draw the world takes calls again";
}

TEST(DebugDraw, DrawingEveryFrameChangesNothingTheWorldComputes) {
  Scene drawn, plain;
  for (int i = 0; i < 90; ++i) {
    drawn.world->Step(kStep);
    plain.world->Step(kStep);
    (void)drawn.Draw(DebugDrawFlags::kAll);
  }
  EXPECT_EQ(drawn.world->StateHash(), plain.world->StateHash());
}

}  // namespace
}  // namespace tendon
