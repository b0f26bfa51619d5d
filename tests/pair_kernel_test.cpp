// The contacts between ragdolls solved side by side in lanes (kernel/rigid/pair_kernel_impl.h):
// every instruction set's pair passes give their scalar reference's bits lane by lane,
// whatever the lanes beside a pair hold (other pairs, a former batch's stale rows, NaN),
// and a lane's push is equal and opposite and takes its penetration out.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

#include "kernel/rigid/pair_lanes.h"
#include "kernel/rigid/rigid_kernels.h"
#include "test_util.h"

namespace tendon::test {
namespace {

using detail::PairLanes;
using detail::PairSolveParams;
using detail::kContactsPerPair;
using detail::kPairLanes;
namespace d = tendon::detail;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Every row of every lane set to NaN: what a lane past the batch, or a contact row past a
// pair's count, may hold from a former batch.
void Poison(PairLanes& pl) {
  float* p = &pl.body[0][0][0];
  for (std::size_t i = 0; i < sizeof(PairLanes) / sizeof(float); ++i) p[i] = kNaN;
}

// A lane's unit quaternion, turned a little from a random axis.
void SetBody(PairLanes& pl, int side, int l, std::mt19937& rng, float x0, bool fixed) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto& r = pl.body[side];
  const float pos[3] = {x0 + 0.05f * u(rng), 0.3f + 0.05f * u(rng), 0.05f * u(rng)};
  float q[4] = {0.3f * u(rng), 0.3f * u(rng), 0.3f * u(rng), 1.0f};
  const float n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int f = 0; f < 3; ++f) r[d::kPbXx + f][l] = pos[f];
  for (int f = 0; f < 4; ++f) r[d::kPbQx + f][l] = q[f] / n;
  for (int f = 0; f < 6; ++f) r[d::kPbVx + f][l] = 0.5f * u(rng);
  for (int f = 0; f < 3; ++f) r[d::kPbXPx + f][l] = pos[f] - 0.01f * u(rng);
  for (int f = 0; f < 4; ++f) r[d::kPbQPx + f][l] = q[f] / n;
  r[d::kPbInvMass][l] = fixed ? 0.0f : 1.0f / (1.0f + 4.0f * (u(rng) + 1.0f));
  for (int f = 0; f < 3; ++f) r[d::kPbInvInertia0 + f][l] = fixed ? 0.0f : 20.0f + 30.0f * (u(rng) + 1.0f);
}

// `count` pairs in lanes [0, count): two parts 10 cm apart along x with 1 to 4 contacts
// each, some penetrating, some far apart, some slid past the re-measure bound, some being
// pushed out of a placement, one side sometimes fixed; the velocity pass's inputs too.
void FillPairs(PairLanes& pl, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int l = 0; l < count; ++l) {
    const int pattern = l % 5;
    SetBody(pl, 0, l, rng, 0.0f, false);
    SetBody(pl, 1, l, rng, 0.1f, pattern == 3);
    const int contacts = 1 + l % kContactsPerPair;
    pl.lane[d::kPlCount][l] = static_cast<float>(contacts);
    pl.lane[d::kPlFriction][l] = 0.3f + 0.3f * (u(rng) + 1.0f);
    pl.lane[d::kPlRestitution][l] = 0.25f * (u(rng) + 1.0f);
    pl.lane[d::kPlExtentA][l] = 0.2f;
    pl.lane[d::kPlExtentB][l] = 0.15f;
    pl.lane[d::kPlPushing][l] = pattern == 4 ? 1.0f : 0.0f;
    for (int k = 0; k < contacts; ++k) {
      auto& c = pl.contact[k];
      float n[3] = {-1.0f + 0.2f * u(rng), 0.2f * u(rng), 0.2f * u(rng)};
      const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (int f = 0; f < 3; ++f) c[d::kPcNx + f][l] = n[f] / len;
      // Arms near the parts' facing sides: a penetration of up to 2 cm, or a gap.
      const float reach = pattern == 1 ? 0.02f : (pattern == 2 ? 0.06f : 0.045f + 0.012f * u(rng));
      const float arm_a[3] = {reach, 0.03f * u(rng), 0.03f * u(rng)};
      const float arm_b[3] = {-0.05f + 0.005f * u(rng), 0.03f * u(rng), 0.03f * u(rng)};
      for (int f = 0; f < 3; ++f) c[d::kPcArmAx + f][l] = arm_a[f], c[d::kPcArmBx + f][l] = arm_b[f];
      c[d::kPcOnA][l] = k % 2 == 0 ? 0.0f : 1.0f;
      for (int f = 0; f < 3; ++f) c[d::kPcStickX + f][l] = 0.002f * u(rng);
      c[d::kPcLambdaSum][l] = k == 1 ? 0.0f : 0.01f * (u(rng) + 1.0f);
      c[d::kPcDeferred][l] = pattern == 4 ? 0.05f : 0.0f;
      c[d::kPcLambda][l] = k == 2 ? 0.0f : 0.002f * (u(rng) + 1.0f);
      c[d::kPcPre][l] = -0.5f * (u(rng) + 1.0f);
    }
  }
}

// A stand-in for the shape distance, a function of the lane's own rows only: a sample 2 cm
// across at the other body's arm against a sphere of 6 cm about the shape body's centre.
void Remeasure(const void* calls, PairLanes& pl, int32_t l, int32_t k) {
  if (calls != nullptr) ++*static_cast<int*>(const_cast<void*>(calls));
  auto& c = pl.contact[k];
  const int q = c[d::kPcOnA][l] > 0.5f ? 0 : 1;
  const int p = 1 - q;
  const int arm = p == 0 ? d::kPcArmAx : d::kPcArmBx;
  float centre[3];
  for (int f = 0; f < 3; ++f) centre[f] = pl.body[p][d::kPbXx + f][l] + c[arm + f][l];
  float n[3], len2 = 0;
  for (int f = 0; f < 3; ++f) n[f] = centre[f] - pl.body[q][d::kPbXx + f][l], len2 += n[f] * n[f];
  const float len = std::sqrt(len2);
  for (int f = 0; f < 3; ++f) n[f] /= len;
  for (int f = 0; f < 3; ++f) {
    c[d::kPcNx + f][l] = n[f];
    c[d::kPcStickX + f][l] = 0.0f;
    pl.lane[d::kPlRemeasureNx + f][l] = q == 0 ? -n[f] : n[f];
  }
  c[d::kPcLambdaSum][l] = 0.0f;
  pl.lane[d::kPlRemeasureDepth][l] = len - 0.06f - 0.02f;
}

// The rows a pass writes or reads for lane l of a batch: compared bit for bit.
void ExpectLaneEqual(const PairLanes& got, int lg, const PairLanes& want, int lw, const char* what, Isa isa) {
  auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; };
  const int contacts = static_cast<int>(want.lane[d::kPlCount][lw]);
  for (int s = 0; s < 2; ++s)
    for (int f = 0; f < d::kPbXPx; ++f)
      EXPECT_TRUE(same(got.body[s][f][lg], want.body[s][f][lw]))
          << ToString(isa) << " " << what << " lane " << lg << " body " << s << " field " << f;
  for (int k = 0; k < contacts; ++k)
    for (int f = 0; f < d::kPairContactFieldCount; ++f)
      EXPECT_TRUE(same(got.contact[k][f][lg], want.contact[k][f][lw]))
          << ToString(isa) << " " << what << " lane " << lg << " contact " << k << " field " << f;
  for (int f : {d::kPlMoved, d::kPlPushing, d::kPlDeferNowA, d::kPlDeferNowB})
    EXPECT_TRUE(same(got.lane[f][lg], want.lane[f][lw])) << ToString(isa) << " " << what << " lane " << lg << " field " << f;
}

// Copies lane `from` of `src` into lane 0 of `dst` (every row).
void CopyLane(const PairLanes& src, int from, PairLanes& dst) {
  for (int s = 0; s < 2; ++s)
    for (int f = 0; f < d::kPairBodyFieldCount; ++f) dst.body[s][f][0] = src.body[s][f][from];
  for (int k = 0; k < kContactsPerPair; ++k)
    for (int f = 0; f < d::kPairContactFieldCount; ++f) dst.contact[k][f][0] = src.contact[k][f][from];
  for (int f = 0; f < d::kPairLaneFieldCount; ++f) dst.lane[f][0] = src.lane[f][from];
}

void ComparePairKernelWithScalar(Isa isa) {
  if (!IsIsaSupported(isa)) GTEST_SKIP() << ToString(isa) << " is not supported here";
  const d::RigidKernels& simd = d::RigidKernelsFor(isa);
  const d::RigidKernels& reference = d::RigidKernelsFor(ScalarReferenceOf(isa));
  PairSolveParams params;
  params.max_push = 0.005f;
  params.remeasure = &Remeasure;
  params.h = 1.0f / 480.0f;
  params.gravity_length = 9.81f;
  params.max_push_speed = 2.0f;
  params.angular_damping = 1.0f;
  for (int count : {1, 5, 13, kPairLanes}) {
    auto batch = std::make_unique<PairLanes>();
    Poison(*batch);
    FillPairs(*batch, count, 7u + static_cast<uint32_t>(count));
    auto positions = std::make_unique<PairLanes>(*batch);
    simd.pair_positions(*positions, count, params);
    auto velocities = std::make_unique<PairLanes>(*positions);
    simd.pair_velocities(*velocities, count, params);
    if (count == kPairLanes) {
      // The batch takes every path: pushes and pairs apart, a placement's bounded push-out,
      // contacts measured again.
      int moved = 0, pushing = 0;
      for (int l = 0; l < count; ++l) {
        moved += positions->lane[d::kPlMoved][l] > 0.5f ? 1 : 0;
        pushing += positions->lane[d::kPlPushing][l] > 0.5f ? 1 : 0;
      }
      EXPECT_GT(moved, 0);
      EXPECT_LT(moved, count);
      EXPECT_GT(pushing, 0);
      int remeasured = 0;
      auto again = std::make_unique<PairLanes>(*batch);
      PairSolveParams counting = params;
      counting.context = &remeasured;
      simd.pair_positions(*again, count, counting);
      EXPECT_GT(remeasured, 0);
    }
    for (int l = 0; l < count; ++l) {
      // The scalar reference with this pair alone, every other lane poisoned.
      auto alone = std::make_unique<PairLanes>();
      Poison(*alone);
      CopyLane(*batch, l, *alone);
      reference.pair_positions(*alone, 1, params);
      ExpectLaneEqual(*positions, l, *alone, 0, "positions", isa);
      reference.pair_velocities(*alone, 1, params);
      ExpectLaneEqual(*velocities, l, *alone, 0, "velocities", isa);
      for (int s = 0; s < 2; ++s)
        for (int f = 0; f < d::kPbXPx; ++f) ASSERT_TRUE(std::isfinite(velocities->body[s][f][l])) << "lane " << l;
    }
  }
}

TEST(PairKernel, ScalarFmaKernelGivesAPairTheSameBitsInABatchAsAlone) { ComparePairKernelWithScalar(Isa::kScalarFma); }
TEST(PairKernel, Sse2KernelAgreesWithTheScalarReference) { ComparePairKernelWithScalar(Isa::kSse2); }
TEST(PairKernel, Sse42KernelAgreesWithTheScalarReference) { ComparePairKernelWithScalar(Isa::kSse42); }
TEST(PairKernel, Avx2FmaKernelAgreesWithTheScalarReference) { ComparePairKernelWithScalar(Isa::kAvx2Fma); }
TEST(PairKernel, Avx512KernelAgreesWithTheScalarReference) { ComparePairKernelWithScalar(Isa::kAvx512); }
TEST(PairKernel, NeonKernelAgreesWithTheScalarReference) { ComparePairKernelWithScalar(Isa::kNeon); }

// One penetrating contact, no friction hold to apply (the stick is where the points are):
// the push moves the two centres of mass by equal and opposite momenta along the normal,
// and measured again along it the points no longer penetrate; the other lanes' pairs,
// apart, keep every bit of their bodies.
TEST(PairKernel, APushIsEqualAndOppositeAndTakesThePenetrationOutWhileApartPairsStayPut) {
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa)) continue;
    auto pl = std::make_unique<PairLanes>();
    Poison(*pl);
    constexpr int kCount = 6;
    for (int l = 0; l < kCount; ++l) {
      for (int s = 0; s < 2; ++s) {
        auto& r = pl->body[s];
        const float x[7] = {s == 0 ? 0.0f : 0.1f, 0.5f, 0, 0, 0, 0, 1};
        for (int f = 0; f < 7; ++f) r[d::kPbXx + f][l] = x[f];
        for (int f = 0; f < 6; ++f) r[d::kPbVx + f][l] = 0;
        r[d::kPbInvMass][l] = s == 0 ? 0.5f : 0.25f;
        for (int f = 0; f < 3; ++f) r[d::kPbInvInertia0 + f][l] = 10.0f;
      }
      pl->lane[d::kPlCount][l] = 1;
      pl->lane[d::kPlFriction][l] = 0.5f;
      auto& c = pl->contact[0];
      const float n[3] = {-1, 0, 0};  // from b toward a
      const float overlap = l == 0 ? 0.008f : -0.02f;  // lane 0 penetrates 8 mm, the rest are 2 cm apart
      const float arm_a[3] = {0.05f + overlap / 2, 0.01f, 0}, arm_b[3] = {-0.05f - overlap / 2, 0.01f, 0};
      for (int f = 0; f < 3; ++f) {
        c[d::kPcNx + f][l] = n[f];
        c[d::kPcArmAx + f][l] = arm_a[f];
        c[d::kPcArmBx + f][l] = arm_b[f];
      }
      c[d::kPcOnA][l] = 0;
      for (int f = 0; f < 3; ++f) c[d::kPcStickX + f][l] = 0;
      c[d::kPcLambdaSum][l] = 0;
      c[d::kPcDeferred][l] = 0;
      c[d::kPcLambda][l] = 0;
      c[d::kPcPre][l] = 0;
    }
    const PairLanes before = *pl;
    PairSolveParams params;
    params.remeasure = &Remeasure;
    d::RigidKernelsFor(isa).pair_positions(*pl, kCount, params);
    const float moved_a = pl->body[0][d::kPbXx][0] - before.body[0][d::kPbXx][0];
    const float moved_b = pl->body[1][d::kPbXx][0] - before.body[1][d::kPbXx][0];
    EXPECT_LT(moved_a, 0.0f) << ToString(isa) << ": a is pushed back along -x";
    EXPECT_NEAR(moved_a / 0.5f, -moved_b / 0.25f, 1e-7f) << ToString(isa) << ": equal and opposite momenta";
    EXPECT_GT(pl->contact[0][d::kPcLambda][0], 0.0f);
    EXPECT_EQ(pl->lane[d::kPlMoved][0], 1.0f);
    // The contact points, measured again along the normal (-x): apart within rounding
    // (the turn the push gives each body is linearised).
    auto point_x = [&](int s, int field) {
      const auto& r = pl->body[s];
      const Quat q{r[d::kPbQx][0], r[d::kPbQy][0], r[d::kPbQz][0], r[d::kPbQw][0]};
      const Vec3 arm{before.contact[0][field][0], before.contact[0][field + 1][0], before.contact[0][field + 2][0]};
      return r[d::kPbXx][0] + Rotate(q, arm).x;
    };
    EXPECT_GT(point_x(1, d::kPcArmBx) - point_x(0, d::kPcArmAx), -2e-4f) << ToString(isa) << ": still penetrating";
    for (int l = 1; l < kCount; ++l) {
      for (int s = 0; s < 2; ++s)
        for (int f = 0; f < 7; ++f)
          EXPECT_EQ(std::memcmp(&pl->body[s][f][l], &before.body[s][f][l], sizeof(float)), 0)
              << ToString(isa) << " lane " << l;
      EXPECT_EQ(pl->lane[d::kPlMoved][l], 0.0f);
      EXPECT_EQ(pl->contact[0][d::kPcLambda][l], 0.0f);
    }
  }
}

}  // namespace
}  // namespace tendon::test
