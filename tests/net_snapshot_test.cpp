// Network snapshots (tendon/net_snapshot.h): the pose message's quantisation bounds, its
// sizes for Jolt's 23-part human (full, sleeping, deltas), its refusals, and the character
// state message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "allocation_counter.h"
#include "kernel/net/net_quantize.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"
#include "stickman_rig.h"
#include "tendon/net_snapshot.h"
#include "tendon/world.h"
#include "test_util.h"

namespace tendon {
namespace {

using test::MakeWorld;
using test::StickmanCharacter;
using test::StickmanSkeleton;

constexpr float kDegrees = 57.29577951f;

float AngleBetween(Quat a, Quat b) {
  const float d = std::min(1.0f, std::fabs(Dot(a, b)));
  return 2.0f * std::acos(d) * kDegrees;
}

Quat RandomRotation(std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  return Normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
}

// A pose's storage: the spans of a NetPose over vectors the test owns.
struct PoseBuffer {
  std::vector<Transform> parts;
  std::vector<Vec3> linear, angular;
  NetPose pose;
  explicit PoseBuffer(int n, bool velocities = false) : parts(n), linear(velocities ? n : 0), angular(velocities ? n : 0) {
    pose.parts = parts;
    pose.linear = linear;
    pose.angular = angular;
  }
  PoseBuffer(const PoseBuffer& o) : parts(o.parts), linear(o.linear), angular(o.angular), pose(o.pose) { Point(); }
  PoseBuffer& operator=(const PoseBuffer& o) {
    parts = o.parts;
    linear = o.linear;
    angular = o.angular;
    pose = o.pose;
    Point();
    return *this;
  }
  void Point() {
    pose.parts = parts;
    pose.linear = linear;
    pose.angular = angular;
  }
};

// A body-shaped random pose: the root anywhere within 1 km, the parts within 1.9 m of it.
PoseBuffer RandomPose(std::mt19937& rng, int n, bool velocities = false) {
  PoseBuffer b(n, velocities);
  std::uniform_real_distribution<float> far(-1000.0f, 1000.0f), near(-1.9f, 1.9f), speed(-40.0f, 40.0f);
  const Vec3 root{far(rng), far(rng), far(rng)};
  for (int i = 0; i < n; ++i) {
    b.parts[i].translation = i == 0 ? root : root + Vec3{near(rng), near(rng), near(rng)};
    b.parts[i].rotation = RandomRotation(rng);
    if (velocities) {
      b.linear[i] = {speed(rng), speed(rng), speed(rng)};
      b.angular[i] = {speed(rng), speed(rng), speed(rng)};
    }
  }
  return b;
}

struct PoseError {
  float position = 0;  // m, the largest
  float degrees = 0;
};
PoseError ErrorOf(const NetPose& sent, const NetPose& got) {
  PoseError e;
  for (std::size_t i = 0; i < sent.parts.size(); ++i) {
    e.position = std::max(e.position, Length(sent.parts[i].translation - got.parts[i].translation));
    e.degrees = std::max(e.degrees, AngleBetween(sent.parts[i].rotation, got.parts[i].rotation));
  }
  return e;
}

bool AllFiniteAndUnit(const NetPose& p) {
  for (const Transform& t : p.parts) {
    if (!IsFinite(t.translation) || !IsFinite(t.rotation)) return false;
    if (std::fabs(Dot(t.rotation, t.rotation) - 1.0f) > 1e-5f) return false;
  }
  for (Vec3 v : p.linear)
    if (!IsFinite(v)) return false;
  for (Vec3 v : p.angular)
    if (!IsFinite(v)) return false;
  return true;
}

std::vector<std::byte> Encode(const NetPose& pose, const NetPose* baseline, const NetPoseSettings& s = {}) {
  std::vector<std::byte> out(MaxNetPoseBytes(static_cast<int32_t>(pose.parts.size()), s));
  Result<std::size_t> n = EncodeNetPose(pose, baseline, s, out);
  EXPECT_TRUE(n.ok()) << n.error().field << ": " << n.error().message;
  out.resize(n.ok() ? n.value() : 0);
  return out;
}

// Jolt's human, falling from 1.2 m, turning, onto a plane; null without the shared data.
struct FallingHuman {
  std::unique_ptr<World> w;
  std::vector<Transform> out = std::vector<Transform>(23);
  RagdollId id;
  bool ok = false;
  explicit FallingHuman(bool render_interpolation = true) {
    auto settings = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"));
    if (!settings.ok()) return;
    WorldSettings ws;
    ws.render_interpolation = render_interpolation;
    w = MakeWorld(ws);
    const RagdollArchetypeId a = w->BuildRagdollArchetype(settings.value()).value();
    EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
    RagdollBinding b;
    b.archetype = a;
    b.placement = Transform{{3, 1.2f, -2}, AxisAngle(Vec3{1, 0, 0}, 1.2f), {1, 1, 1}};
    b.angular_velocity = {1.5f, 0.5f, 2.0f};
    b.linear_velocity = {1.0f, 2.0f, 0};
    b.output_parts = out;
    id = w->BindRagdoll(b).value();
    ok = out.size() == static_cast<std::size_t>(w->RagdollPartCount(a));
  }
};
#define NEED_HUMAN(h) \
  if (!(h).ok) GTEST_SKIP() << ports::SharedDataPath("jolt-human/ragdoll.json") << " is not available"

TEST(NetPose, SmallestThreeDropsTheLargestComponentFoldsItsSignAndGivesQAndMinusQTheSameFields) {
  detail::QuantizedPart a, b;
  const Quat q = Normalize(Quat{0.1f, -0.3f, -0.9f, 0.2f});
  detail::QuantizeRotation(q, 10, &a);
  detail::QuantizeRotation(Quat{-q.x, -q.y, -q.z, -q.w}, 10, &b);
  EXPECT_EQ(a.dropped, 2u);  // z, the largest by magnitude, negative
  EXPECT_EQ(a.rotation, b.rotation);
  EXPECT_EQ(a.dropped, b.dropped);
  const Quat back = detail::DequantizeRotation(a, 10);
  EXPECT_GT(back.z, 0.0f) << "the sign is folded so that the dropped component is positive";
  EXPECT_LT(AngleBetween(q, back), 0.5f);
  // Ties: the first of the largest is dropped, whatever the signs.
  detail::QuantizedPart t1, t2;
  detail::QuantizeRotation(Quat{0.5f, 0.5f, 0.5f, 0.5f}, 10, &t1);
  detail::QuantizeRotation(Quat{-0.5f, 0.5f, -0.5f, 0.5f}, 10, &t2);
  EXPECT_EQ(t1.dropped, 0u);
  EXPECT_EQ(t2.dropped, 0u);
  EXPECT_LT(AngleBetween(Quat{-0.5f, 0.5f, -0.5f, 0.5f}, detail::DequantizeRotation(t2, 10)), 0.5f);
  // Two components of 1/sqrt(2): the other lies at the edge of the range and still decodes.
  detail::QuantizedPart edge;
  const Quat e{0, detail::kSqrtHalf, 0, -detail::kSqrtHalf};
  detail::QuantizeRotation(e, 10, &edge);
  EXPECT_EQ(edge.dropped, 1u);
  EXPECT_LT(AngleBetween(e, detail::DequantizeRotation(edge, 10)), 0.5f);
}

TEST(NetPose, TheIdentityIsExactAndARotationNearItStaysWithinTheBound) {
  detail::QuantizedPart q;
  detail::QuantizeRotation(Quat{}, 10, &q);
  EXPECT_EQ(q.dropped, 3u);
  const Quat back = detail::DequantizeRotation(q, 10);
  EXPECT_EQ(back, (Quat{0, 0, 0, 1}));
  for (float angle : {1e-6f, 1e-4f, 1e-3f, 0.01f}) {
    const Quat r = AxisAngle(NormalizeOr(Vec3{0.3f, -0.5f, 0.81f}, Vec3{0, 1, 0}), angle);
    detail::QuantizeRotation(r, 10, &q);
    EXPECT_LT(AngleBetween(r, detail::DequantizeRotation(q, 10)), 0.2f) << angle;
  }
}

TEST(NetPose, ManyRandomRotationsDecodeWithinHalfADegreeAndUnit) {
  std::mt19937 rng(40);
  float worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const Quat r = RandomRotation(rng);
    detail::QuantizedPart q;
    detail::QuantizeRotation(r, 10, &q);
    const Quat back = detail::DequantizeRotation(q, 10);
    ASSERT_NEAR(Dot(back, back), 1.0f, 1e-5f);
    worst = std::max(worst, AngleBetween(r, back));
  }
  std::printf("rotation error over 200000 random rotations at 10 bits: max %.4f degrees\n", worst);
  RecordProperty("max_rotation_error_degrees", std::to_string(worst));
  EXPECT_LT(worst, 0.5f);
  EXPECT_GT(worst, 0.01f) << "a lossy code that loses nothing is not quantising";
}

TEST(NetPose, ManyRandomPosesDecodeWithinTwoMillimetresAndHalfADegree) {
  std::mt19937 rng(41);
  PoseError worst;
  for (int k = 0; k < 400; ++k) {
    PoseBuffer sent = RandomPose(rng, 23);
    PoseBuffer got(23);
    const std::vector<std::byte> bytes = Encode(sent.pose, nullptr);
    ASSERT_TRUE(DecodeNetPose(bytes, nullptr, {}, &got.pose).ok());
    ASSERT_TRUE(AllFiniteAndUnit(got.pose));
    EXPECT_EQ(got.parts[0].translation, sent.parts[0].translation) << "the root is sent in full";
    const PoseError e = ErrorOf(sent.pose, got.pose);
    worst.position = std::max(worst.position, e.position);
    worst.degrees = std::max(worst.degrees, e.degrees);
  }
  std::printf("400 random 23-part poses: max position error %.3f mm, rotation %.3f degrees\n",
              worst.position * 1000, worst.degrees);
  EXPECT_LT(worst.position, 0.002f);
  EXPECT_LT(worst.degrees, 0.5f);
}

TEST(NetPose, AFallingJoltHumanIsAtMost240BytesWithin2MillimetresAndHalfADegree) {
  FallingHuman h;
  NEED_HUMAN(h);
  PoseBuffer sent(23), got(23);
  std::size_t largest = 0;
  PoseError worst;
  for (int frame = 1; frame <= 60; ++frame) {
    h.w->Step(1.0f / 60);
    if (frame % 6 != 0) continue;  // mid-fall: it reaches the ground near frame 25 and tumbles on
    sent.pose.tick = static_cast<uint32_t>(frame);
    ASSERT_TRUE(h.w->CaptureRagdollPose(h.id, &sent.pose).ok());
    const std::vector<std::byte> bytes = Encode(sent.pose, nullptr);
    largest = std::max(largest, bytes.size());
    ASSERT_TRUE(DecodeNetPose(bytes, nullptr, {}, &got.pose).ok());
    EXPECT_EQ(got.pose.tick, static_cast<uint32_t>(frame));
    const PoseError e = ErrorOf(sent.pose, got.pose);
    worst.position = std::max(worst.position, e.position);
    worst.degrees = std::max(worst.degrees, e.degrees);
  }
  std::printf("Jolt human mid-fall, full pose: %zu bytes, max error %.3f mm, %.3f degrees\n", largest,
              worst.position * 1000, worst.degrees);
  RecordProperty("full_pose_bytes", std::to_string(largest));
  RecordProperty("max_position_error_mm", std::to_string(worst.position * 1000));
  RecordProperty("max_rotation_error_degrees", std::to_string(worst.degrees));
  EXPECT_LE(largest, 240u);
  EXPECT_LT(worst.position, 0.002f);
  EXPECT_LT(worst.degrees, 0.5f);
}

// A pose is stamped with the frame's tick, so it must be the state at the World's time:
// under render interpolation the output shows it a substep late (and the receiver would
// play it a substep late again). Two Worlds run the same fall, one interpolating: their
// captures are the same bits, and those of the non-interpolating World's output, while the
// interpolating World's output trails them.
TEST(NetPose, ACapturedPoseIsTheStateAtTheWorldsTimeWithOrWithoutRenderInterpolation) {
  FallingHuman shown_late(true), shown_now(false);
  NEED_HUMAN(shown_late);
  PoseBuffer late(23), now(23);
  float trail = 0;
  for (int frame = 1; frame <= 40; ++frame) {
    shown_late.w->Step(1.0f / 60);
    shown_now.w->Step(1.0f / 60);
    ASSERT_TRUE(shown_late.w->CaptureRagdollPose(shown_late.id, &late.pose).ok());
    ASSERT_TRUE(shown_now.w->CaptureRagdollPose(shown_now.id, &now.pose).ok());
    ASSERT_EQ(late.parts, now.parts) << "frame " << frame;
    ASSERT_EQ(now.parts, shown_now.out) << "frame " << frame;
    for (int j = 0; j < 23; ++j) trail = std::max(trail, Length(shown_late.out[j].translation - late.parts[j].translation));
  }
  // Mid-fall a substep is centimetres: the interpolated output is that far behind.
  EXPECT_GT(trail, 0.01f);
}

TEST(NetPose, AnUnchangedSleepingHumanIsAtMost8BytesAndDecodesToTheBaseline) {
  FallingHuman h;
  NEED_HUMAN(h);
  int frame = 0;
  while (!h.w->IsRagdollAsleep(h.id) && frame < 600) {
    h.w->Step(1.0f / 60);
    ++frame;
  }
  ASSERT_TRUE(h.w->IsRagdollAsleep(h.id)) << "the human did not fall asleep in 10 s";
  // The frame it falls asleep still shows the last step's motion (render interpolation).
  for (int i = 0; i < 3; ++i) h.w->Step(1.0f / 60);
  PoseBuffer sent(23), baseline(23), got(23);
  sent.pose.tick = 1000;
  ASSERT_TRUE(h.w->CaptureRagdollPose(h.id, &sent.pose).ok());
  EXPECT_TRUE(sent.pose.asleep);
  // The receiver decodes the full pose and acknowledges tick 1000: its decoded copy is the
  // baseline both ends keep.
  ASSERT_TRUE(DecodeNetPose(Encode(sent.pose, nullptr), nullptr, {}, &baseline.pose).ok());
  for (int i = 0; i < 10; ++i) h.w->Step(1.0f / 60);
  sent.pose.tick = 1010;
  ASSERT_TRUE(h.w->CaptureRagdollPose(h.id, &sent.pose).ok());
  const std::vector<std::byte> bytes = Encode(sent.pose, &baseline.pose);
  std::printf("Jolt human asleep, unchanged since the baseline: %zu bytes\n", bytes.size());
  RecordProperty("sleeping_pose_bytes", std::to_string(bytes.size()));
  EXPECT_LE(bytes.size(), 8u);
  ASSERT_TRUE(DecodeNetPose(bytes, &baseline.pose, {}, &got.pose).ok());
  EXPECT_EQ(got.parts, baseline.parts);
  EXPECT_EQ(got.pose.tick, 1010u);
  EXPECT_TRUE(got.pose.asleep);
}

TEST(NetPose, ADeltaSendsOnlyThePartsThatMovedAndTheRestRideTheRoot) {
  std::mt19937 rng(42);
  PoseBuffer base = RandomPose(rng, 23);
  base.pose.tick = 500;
  PoseBuffer acked(23);
  ASSERT_TRUE(DecodeNetPose(Encode(base.pose, nullptr), nullptr, {}, &acked.pose).ok());
  const std::size_t full = Encode(base.pose, nullptr).size();

  // Three parts move: the delta carries them and a bit for every other.
  PoseBuffer moved = base;
  moved.pose.tick = 503;
  for (int i : {4, 11, 17}) {
    moved.parts[i].translation = moved.parts[i].translation + Vec3{0.05f, -0.02f, 0.01f};
    moved.parts[i].rotation = Normalize(AxisAngle(Vec3{0, 1, 0}, 0.2f) * moved.parts[i].rotation);
  }
  std::vector<std::byte> delta = Encode(moved.pose, &acked.pose);
  PoseBuffer got(23);
  ASSERT_TRUE(DecodeNetPose(delta, &acked.pose, {}, &got.pose).ok());
  std::printf("23 parts, 3 moved: full %zu bytes, delta %zu bytes\n", full, delta.size());
  EXPECT_LT(delta.size(), full / 4);
  for (int i = 0; i < 23; ++i) {
    if (i == 4 || i == 11 || i == 17) continue;
    EXPECT_EQ(got.parts[i], acked.parts[i]) << "part " << i << " did not move: the receiver keeps its own";
  }
  PoseError e = ErrorOf(moved.pose, got.pose);
  EXPECT_LT(e.position, 0.002f);
  EXPECT_LT(e.degrees, 0.5f);

  // The whole body is carried 3 m: only the root changes; every other part rides it.
  PoseBuffer carried = base;
  carried.pose.tick = 510;
  for (Transform& t : carried.parts) t.translation = t.translation + Vec3{3.0f, 0, -1.0f};
  delta = Encode(carried.pose, &acked.pose);
  ASSERT_TRUE(DecodeNetPose(delta, &acked.pose, {}, &got.pose).ok());
  std::printf("23 parts carried 3 m: delta %zu bytes\n", delta.size());
  EXPECT_LE(delta.size(), 8u + 17u + 3u);
  e = ErrorOf(carried.pose, got.pose);
  EXPECT_LT(e.position, 0.002f);
  EXPECT_LT(e.degrees, 0.5f);
}

// A receiver holding several decoded baselines asks a message which one it needs: none for
// a full pose, the baseline's tick modulo 2^16 for a delta; not a pose message: refused.
TEST(NetPose, AMessageSaysWhichBaselineItNeeds) {
  std::mt19937 rng(44);
  PoseBuffer base = RandomPose(rng, 23);
  base.pose.tick = 70000;  // past 2^16: the message carries the low 16 bits
  const std::vector<std::byte> full = Encode(base.pose, nullptr);
  Result<int32_t> needs = NetPoseBaselineTick(full);
  ASSERT_TRUE(needs.ok());
  EXPECT_EQ(needs.value(), -1);
  PoseBuffer acked(23);
  ASSERT_TRUE(DecodeNetPose(full, nullptr, {}, &acked.pose).ok());
  PoseBuffer later = base;
  later.pose.tick = 70003;
  const std::vector<std::byte> delta = Encode(later.pose, &acked.pose);
  needs = NetPoseBaselineTick(delta);
  ASSERT_TRUE(needs.ok());
  EXPECT_EQ(needs.value(), 70000 & 0xFFFF);
  std::vector<std::byte> foreign = delta;
  foreign[0] = std::byte{9};
  EXPECT_EQ(NetPoseBaselineTick(foreign).error().field, "in.version");
  EXPECT_EQ(NetPoseBaselineTick(std::span<const std::byte>(delta).first(1)).error().code, ErrorCode::kOutOfRange);
  EXPECT_EQ(NetPoseBaselineTick(std::span<const std::byte>(delta).first(3)).error().code, ErrorCode::kOutOfRange);
}

TEST(NetPose, APartBeyondThePositionRangeIsSentInFull) {
  std::mt19937 rng(43);
  PoseBuffer sent = RandomPose(rng, 5);
  sent.parts[3].translation = sent.parts[0].translation + Vec3{0, 50.0f, 0};  // a limb flung far
  PoseBuffer got(5);
  ASSERT_TRUE(DecodeNetPose(Encode(sent.pose, nullptr), nullptr, {}, &got.pose).ok());
  EXPECT_EQ(got.parts[3].translation, sent.parts[3].translation);
  EXPECT_LT(ErrorOf(sent.pose, got.pose).position, 0.002f);
}

TEST(NetPose, VelocitiesRoundTripWithinHalfAStepWhenOnAndAreZeroWhenOff) {
  std::mt19937 rng(44);
  NetPoseSettings on;
  on.include_velocities = true;
  PoseBuffer sent = RandomPose(rng, 23, true);
  sent.linear[2] = {200.0f, -200.0f, 0};  // beyond the range: clamped
  PoseBuffer got(23, true);
  const std::vector<std::byte> with = Encode(sent.pose, nullptr, on);
  ASSERT_TRUE(DecodeNetPose(with, nullptr, on, &got.pose).ok());
  EXPECT_TRUE(got.pose.has_velocities);
  for (int i = 0; i < 23; ++i) {
    if (i == 2) continue;
    for (int a = 0; a < 3; ++a) {
      EXPECT_NEAR((&got.linear[i].x)[a], (&sent.linear[i].x)[a], on.linear_precision * 0.5f + 1e-4f);
      EXPECT_NEAR((&got.angular[i].x)[a], (&sent.angular[i].x)[a], on.angular_precision * 0.5f + 1e-4f);
    }
  }
  EXPECT_NEAR(got.linear[2].x, on.linear_range, on.linear_precision);
  EXPECT_NEAR(got.linear[2].y, -on.linear_range, on.linear_precision);
  const std::vector<std::byte> without = Encode(sent.pose, nullptr);
  ASSERT_TRUE(DecodeNetPose(without, nullptr, {}, &got.pose).ok());
  EXPECT_FALSE(got.pose.has_velocities);
  for (int i = 0; i < 23; ++i) EXPECT_EQ(got.linear[i], Vec3{});
  std::printf("23 parts: %zu bytes with velocities, %zu without\n", with.size(), without.size());
  EXPECT_GT(with.size(), without.size());
  // Settings that disagree with the message are named.
  EXPECT_EQ(DecodeNetPose(with, nullptr, {}, &got.pose).field, "settings.include_velocities");
  EXPECT_EQ(DecodeNetPose(without, nullptr, on, &got.pose).field, "settings.include_velocities");
}

TEST(NetPose, ACapturedHumansVelocitiesAreGetRagdollVelocities) {
  FallingHuman h;
  NEED_HUMAN(h);
  for (int i = 0; i < 10; ++i) h.w->Step(1.0f / 60);
  PoseBuffer sent(23, true);
  ASSERT_TRUE(h.w->CaptureRagdollPose(h.id, &sent.pose).ok());
  std::vector<Vec3> lin(23), ang(23);
  ASSERT_TRUE(h.w->GetRagdollVelocities(h.id, lin, ang).ok());
  EXPECT_EQ(sent.linear, lin);
  EXPECT_EQ(sent.angular, ang);
  EXPECT_FALSE(sent.pose.asleep);
  PoseBuffer wrong(22);
  EXPECT_EQ(h.w->CaptureRagdollPose(h.id, &wrong.pose).code, ErrorCode::kNullBuffer);
  EXPECT_EQ(h.w->CaptureRagdollPose(RagdollId{}, &sent.pose).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(h.w->CaptureRagdollPose(h.id, nullptr).code, ErrorCode::kNullBuffer);
}

// A full and a delta message with velocities, and what they were decoded against.
struct Messages {
  NetPoseSettings settings;
  PoseBuffer base{23, true}, acked{23, true}, moved{23, true};
  std::vector<std::byte> full, delta;
  Messages() {
    settings.include_velocities = true;
    std::mt19937 rng(45);
    base = RandomPose(rng, 23, true);
    base.pose.tick = 70000;
    full = Encode(base.pose, nullptr, settings);
    EXPECT_TRUE(DecodeNetPose(full, nullptr, settings, &acked.pose).ok());
    moved = base;
    moved.pose.tick = 70004;
    moved.parts[6].translation = moved.parts[6].translation + Vec3{0.1f, 0, 0};
    moved.linear[9] = Vec3{1, 2, 3};
    delta = Encode(moved.pose, &acked.pose, settings);
  }
};

TEST(NetPose, ATruncatedMessageIsRefusedAtEveryLengthAndChangesNothing) {
  Messages m;
  for (const std::vector<std::byte>* bytes : {&m.full, &m.delta}) {
    for (std::size_t n = 0; n < bytes->size(); ++n) {
      PoseBuffer got = m.acked;
      const Error e = DecodeNetPose(std::span(*bytes).first(n), &m.acked.pose, m.settings, &got.pose);
      EXPECT_FALSE(e.ok()) << "length " << n;
      EXPECT_EQ(got.parts, m.acked.parts) << "length " << n;
    }
    std::vector<std::byte> longer = *bytes;
    longer.push_back(std::byte{0});
    PoseBuffer got(23, true);
    EXPECT_FALSE(DecodeNetPose(longer, &m.acked.pose, m.settings, &got.pose).ok());
  }
}

TEST(NetPose, AnyFlippedByteIsRefusedAndChangesNothing) {
  Messages m;
  for (const std::vector<std::byte>* bytes : {&m.full, &m.delta}) {
    for (std::size_t at = 0; at < bytes->size(); ++at) {
      for (uint8_t flip : {0x01, 0x80, 0xFF, 0x5A}) {
        std::vector<std::byte> bad = *bytes;
        bad[at] ^= std::byte{flip};
        PoseBuffer got = m.acked;
        const Error e = DecodeNetPose(bad, &m.acked.pose, m.settings, &got.pose);
        EXPECT_FALSE(e.ok()) << "byte " << at << " ^ " << int(flip);
        EXPECT_EQ(got.parts, m.acked.parts);
      }
    }
  }
}

TEST(NetPose, AnotherVersionAWrongBaselineAndWrongSpansAreRefusedByName) {
  Messages m;
  PoseBuffer got(23, true);
  std::vector<std::byte> v2 = m.full;
  v2[0] = std::byte{2};
  EXPECT_EQ(DecodeNetPose(v2, nullptr, m.settings, &got.pose).field, "in.version");
  // A delta without its baseline, against another tick, or one of another part count.
  EXPECT_EQ(DecodeNetPose(m.delta, nullptr, m.settings, &got.pose).field, "baseline");
  PoseBuffer other_tick = m.acked;
  other_tick.pose.tick = 70001;
  Error e = DecodeNetPose(m.delta, &other_tick.pose, m.settings, &got.pose);
  EXPECT_EQ(e.code, ErrorCode::kBadReference);
  EXPECT_EQ(e.field, "baseline.tick");
  PoseBuffer fewer(22, true);
  e = DecodeNetPose(m.delta, &fewer.pose, m.settings, &got.pose);
  EXPECT_EQ(e.code, ErrorCode::kBadReference);
  EXPECT_EQ(e.field, "baseline.parts");
  PoseBuffer no_velocities(23);
  no_velocities.pose.tick = m.acked.pose.tick;
  no_velocities.parts = m.acked.parts;
  EXPECT_EQ(DecodeNetPose(m.delta, &no_velocities.pose, m.settings, &got.pose).code, ErrorCode::kNullBuffer);
  EXPECT_EQ(DecodeNetPose(m.full, nullptr, m.settings, &fewer.pose).field, "out.parts");
  EXPECT_EQ(DecodeNetPose(m.full, nullptr, m.settings, nullptr).code, ErrorCode::kNullBuffer);
  NetPoseSettings bad = m.settings;
  bad.rotation_bits = 16;
  EXPECT_EQ(DecodeNetPose(m.full, nullptr, bad, &got.pose).field, "settings.rotation_bits");
  // The encoder: a baseline of another part count, a non-finite part, a small buffer.
  std::vector<std::byte> out(400);
  EXPECT_EQ(EncodeNetPose(m.moved.pose, &fewer.pose, m.settings, out).error().field, "baseline.parts");
  PoseBuffer nan = m.base;
  nan.parts[5].translation.y = NAN;
  Result<std::size_t> r = EncodeNetPose(nan.pose, nullptr, m.settings, out);
  EXPECT_EQ(r.error().code, ErrorCode::kNotFinite);
  EXPECT_EQ(r.error().item, 5);
  EXPECT_EQ(EncodeNetPose(m.base.pose, nullptr, m.settings, std::span(out).first(100)).error().code,
            ErrorCode::kNullBuffer);
  PoseBuffer far_behind = m.acked;
  far_behind.pose.tick = m.moved.pose.tick - (1u << 28);
  EXPECT_EQ(EncodeNetPose(m.moved.pose, &far_behind.pose, m.settings, out).error().field, "baseline.tick");
  // In place: the baseline's own buffer receives the delta.
  PoseBuffer in_place = m.acked;
  ASSERT_TRUE(DecodeNetPose(m.delta, &in_place.pose, m.settings, &in_place.pose).ok());
  ASSERT_TRUE(DecodeNetPose(m.delta, &m.acked.pose, m.settings, &got.pose).ok());
  EXPECT_EQ(in_place.parts, got.parts);
  EXPECT_EQ(in_place.linear, got.linear);
}

TEST(NetPose, RandomBytesNeverDecodeToANonFinitePose) {
  std::mt19937 rng(46);
  Messages m;
  int decoded = 0;
  for (int k = 0; k < 20000; ++k) {
    std::vector<std::byte> bytes = k % 2 == 0 ? m.full : m.delta;
    const int flips = 1 + static_cast<int>(rng() % 6);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = std::byte(static_cast<uint8_t>(rng()));
    // Make the CRC right, so the fields behind it are what gets tried.
    bytes.back() = std::byte{0};
    PoseBuffer got(23, true);
    const Error e = DecodeNetPose(bytes, &m.acked.pose, m.settings, &got.pose);
    if (e.ok()) {
      ++decoded;
      EXPECT_TRUE(AllFiniteAndUnit(got.pose));
    }
  }
  EXPECT_LT(decoded, 20000);
}

TEST(NetPose, EncodingAndDecodingAllocateNothing) {
  Messages m;
  std::vector<std::byte> out(MaxNetPoseBytes(23, m.settings));
  PoseBuffer got(23, true);
  const long before = g_allocations.load();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(EncodeNetPose(m.moved.pose, &m.acked.pose, m.settings, out).ok());
    ASSERT_TRUE(EncodeNetPose(m.base.pose, nullptr, m.settings, out).ok());
    ASSERT_TRUE(DecodeNetPose(m.delta, &m.acked.pose, m.settings, &got.pose).ok());
    ASSERT_TRUE(DecodeNetPose(m.full, nullptr, m.settings, &got.pose).ok());
  }
  EXPECT_EQ(g_allocations.load(), before);
}

// ---- character state messages ----

TEST(NetCharacterState, AnActivationWithAnImpulseIs13BytesAndRoundTrips) {
  NetCharacterState s;
  s.generation = 7;
  s.active = true;
  s.anchored = true;
  s.strength = 0.6f;
  s.impulse = {12.5f, -300.25f, 0.001f};
  std::byte out[kMaxNetCharacterStateBytes];
  Result<std::size_t> n = EncodeNetCharacterState(s, out);
  ASSERT_TRUE(n.ok());
  std::printf("character state with an impulse: %zu bytes\n", n.value());
  RecordProperty("character_state_bytes", std::to_string(n.value()));
  EXPECT_EQ(n.value(), 13u);
  NetCharacterState back;
  ASSERT_TRUE(DecodeNetCharacterState(std::span(out, n.value()), &back).ok());
  EXPECT_EQ(back.generation, 7u);
  EXPECT_TRUE(back.active);
  EXPECT_TRUE(back.anchored);
  EXPECT_FALSE(back.limp);
  EXPECT_NEAR(back.strength, 0.6f, 0.5f / 255);
  for (int a = 0; a < 3; ++a)
    EXPECT_NEAR((&back.impulse.x)[a], (&s.impulse.x)[a], std::fabs((&s.impulse.x)[a]) * 1.6e-5f);
  // Limp, a large generation, no impulse.
  s = {};
  s.generation = 0xFFFFFFFFu;
  s.active = true;
  s.limp = true;
  s.limp_seconds = 0.4f;
  s.strength = 1;
  n = EncodeNetCharacterState(s, out);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value(), 9u);
  ASSERT_TRUE(DecodeNetCharacterState(std::span(out, n.value()), &back).ok());
  EXPECT_EQ(back.generation, 0xFFFFFFFFu);
  EXPECT_TRUE(back.limp);
  EXPECT_NEAR(back.limp_seconds, 0.4f, 1e-6f);
  EXPECT_EQ(back.impulse, Vec3{});
}

TEST(NetCharacterState, BadMessagesAndValuesAreRefusedByName) {
  NetCharacterState s;
  s.active = true;
  s.impulse = {1, 2, 3};
  std::byte out[kMaxNetCharacterStateBytes];
  const std::size_t n = EncodeNetCharacterState(s, out).value();
  NetCharacterState back;
  for (std::size_t k = 0; k < n; ++k) EXPECT_FALSE(DecodeNetCharacterState(std::span(out, k), &back).ok()) << k;
  std::byte longer[kMaxNetCharacterStateBytes + 1] = {};
  std::copy(out, out + n, longer);
  EXPECT_FALSE(DecodeNetCharacterState(std::span(longer, n + 1), &back).ok());
  out[0] = std::byte{9};
  EXPECT_EQ(DecodeNetCharacterState(std::span(out, n), &back).field, "in.version");
  out[0] = std::byte{kNetCharacterStateVersion};
  out[1] |= std::byte{0x40};
  EXPECT_EQ(DecodeNetCharacterState(std::span(out, n), &back).field, "in.flags");
  out[1] &= std::byte{0x0F};
  out[n - 1] = std::byte{0x7F};  // the impulse's z: an exponent of all ones
  out[n - 2] = std::byte{0x80};
  EXPECT_EQ(DecodeNetCharacterState(std::span(out, n), &back).field, "in.impulse");
  EXPECT_EQ(DecodeNetCharacterState(std::span(out, n), nullptr).code, ErrorCode::kNullBuffer);
  s.strength = 1.5f;
  EXPECT_EQ(EncodeNetCharacterState(s, out).error().field, "state.strength");
  s.strength = 0;
  s.impulse.x = INFINITY;
  EXPECT_EQ(EncodeNetCharacterState(s, out).error().field, "state.impulse");
  s.impulse = {};
  EXPECT_EQ(EncodeNetCharacterState(s, std::span(out, 2)).error().code, ErrorCode::kNullBuffer);
  // The largest impulse survives its 24 bits within the bound, and encodes again.
  s.impulse = {1e8f, -1e8f, 99999999.0f};
  const std::size_t big = EncodeNetCharacterState(s, out).value();
  ASSERT_TRUE(DecodeNetCharacterState(std::span(out, big), &back).ok());
  EXPECT_LE(std::fabs(back.impulse.x), 1e8f);
  EXPECT_NEAR(back.impulse.y, -1e8f, 1e8f * 1.6e-5f);
  EXPECT_TRUE(EncodeNetCharacterState(back, out).ok());
  s.impulse = {1.1e8f, 0, 0};
  EXPECT_EQ(EncodeNetCharacterState(s, out).error().field, "state.impulse");
}

// Two Worlds with the stickman: the sender's state changes travel as messages and the
// receiver's character does the same.
struct TwoStickmen {
  std::unique_ptr<World> tx = MakeWorld(), rx = MakeWorld();
  SkeletonSettings skeleton = StickmanSkeleton();
  Transform model{{0, 1, 0}, {}, {1, 1, 1}};
  std::vector<Transform> out_tx = skeleton.rest_local, out_rx = skeleton.rest_local;
  CharacterId a, b;
  TwoStickmen() {
    for (World* w : {tx.get(), rx.get()}) {
      EXPECT_TRUE(w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok());
      const CharacterArchetypeId man = w->BuildCharacterArchetype(StickmanCharacter()).value();
      CharacterBinding bind;
      bind.archetype = man;
      bind.model_world = &model;
      bind.animated_local = skeleton.rest_local;
      bind.output_local = w == tx.get() ? out_tx : out_rx;
      (w == tx.get() ? a : b) = w->BindCharacter(bind).value();
    }
  }
  // The sender's state, through bytes, onto the receiver.
  Result<bool> Send(Vec3 impulse = {}) {
    NetCharacterState s;
    EXPECT_TRUE(tx->CaptureNetCharacterState(a, &s).ok());
    s.impulse = impulse;
    std::byte bytes[kMaxNetCharacterStateBytes];
    const std::size_t n = EncodeNetCharacterState(s, bytes).value();
    NetCharacterState got;
    EXPECT_TRUE(DecodeNetCharacterState(std::span(bytes, n), &got).ok());
    return rx->ApplyNetCharacterState(b, got);
  }
  void Step() {
    tx->Step(1.0f / 60);
    rx->Step(1.0f / 60);
  }
};

TEST(NetCharacterState, TheReceiverActivatesGoesLimpAndReleasesAsTheSenderDoes) {
  TwoStickmen t;
  ASSERT_TRUE(t.tx->ActivateCharacter(t.a, {.strength = 0.8f, .anchored = true}));
  ASSERT_TRUE(t.Send().value());
  CharacterState sa, sb;
  ASSERT_TRUE(t.tx->GetCharacterState(t.a, &sa).ok());
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  EXPECT_TRUE(sb.active);
  EXPECT_TRUE(sb.anchored);
  EXPECT_NEAR(sb.strength, 0.8f, 0.5f / 255);
  EXPECT_EQ(sb.generation, sa.generation);
  t.Step();
  // An impulse on the active body.
  ASSERT_TRUE(t.tx->ApplyCharacterImpulse(t.a, Vec3{0, 0, 30}).ok());
  ASSERT_TRUE(t.Send(Vec3{0, 0, 30}).value());
  t.Step();
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  ASSERT_TRUE(t.tx->GetCharacterState(t.a, &sa).ok());
  EXPECT_NEAR(sb.root_velocity.z, sa.root_velocity.z, 0.05f);
  // Going limp: strength eases to 0 on both, the anchor comes off.
  ASSERT_TRUE(t.tx->GoLimp(t.a, 0.5f).ok());
  ASSERT_TRUE(t.Send().value());
  NetCharacterState limp;
  ASSERT_TRUE(t.rx->CaptureNetCharacterState(t.b, &limp).ok());
  EXPECT_TRUE(limp.limp);
  EXPECT_FALSE(limp.anchored);
  ASSERT_TRUE(t.Send().value()) << "a repeated message is applied, and does not restart the ease";
  for (int i = 0; i < 40; ++i) t.Step();
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  EXPECT_EQ(sb.strength, 0.0f);
  EXPECT_FALSE(sb.anchored);
  // Released.
  const NetCharacterState before_release = [&] {
    NetCharacterState s;
    EXPECT_TRUE(t.tx->CaptureNetCharacterState(t.a, &s).ok());
    return s;
  }();
  ASSERT_TRUE(t.tx->DeactivateCharacter(t.a).ok());
  ASSERT_TRUE(t.Send().value());
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  EXPECT_FALSE(sb.active);
  // The activation's late message arrives after its release: stale, nothing changes.
  Result<bool> late = t.rx->ApplyNetCharacterState(t.b, before_release);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late.value());
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  EXPECT_FALSE(sb.active);
  // A second activation on the sender: the receiver follows; the first's messages are older.
  ASSERT_TRUE(t.tx->ActivateCharacter(t.a, {.strength = 0.0f}));
  ASSERT_TRUE(t.Send().value());
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  ASSERT_TRUE(t.tx->GetCharacterState(t.a, &sa).ok());
  EXPECT_TRUE(sb.active);
  EXPECT_EQ(sb.generation, 2u);
  EXPECT_EQ(sb.generation, sa.generation);
  NetCharacterState old = before_release;
  old.active = false;
  late = t.rx->ApplyNetCharacterState(t.b, old);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late.value()) << "generation 1's release must not end generation 2";
  ASSERT_TRUE(t.rx->GetCharacterState(t.b, &sb).ok());
  EXPECT_TRUE(sb.active);
}

TEST(NetCharacterState, ApplyingRefusesStaleHandlesAndBadValuesByName) {
  TwoStickmen t;
  NetCharacterState s;
  EXPECT_EQ(t.rx->ApplyNetCharacterState(CharacterId{}, s).error().code, ErrorCode::kStaleHandle);
  EXPECT_EQ(t.rx->CaptureNetCharacterState(CharacterId{}, &s).code, ErrorCode::kStaleHandle);
  EXPECT_EQ(t.rx->CaptureNetCharacterState(t.b, nullptr).code, ErrorCode::kNullBuffer);
  s.strength = -1;
  EXPECT_EQ(t.rx->ApplyNetCharacterState(t.b, s).error().field, "state.strength");
  s.strength = 0;
  s.impulse.y = NAN;
  EXPECT_EQ(t.rx->ApplyNetCharacterState(t.b, s).error().field, "state.impulse");
}

}  // namespace
}  // namespace tendon
