// Device calibration and profiles (tendon/device_profile.h, ports/device/device_profile_json.h):
// the budget formulas at their boundaries, a slowed kernel giving smaller budgets, profiles
// round-tripping through JSON, every bad or foreign file refused by name, and a World
// taking a profile only where the host left a setting at its default.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel/calibration/device_calibration.h"
#include "ports/device/device_profile_json.h"
#include "test_util.h"

namespace tendon {
namespace {

DeviceProfile WithAxes(double all) {
  DeviceProfile p;
  p.measurements.push_back({Isa::kScalar, 1, {all, all, all, all}});
  EXPECT_EQ(DeriveBudgets(p).code, ErrorCode::kNone);
  return p;
}

TEST(DeviceProfile, TheReferenceMachineGetsTheBaseBudgets) {
  const DeviceProfile p = WithAxes(1.0);
  EXPECT_EQ(p.tier, DeviceTier::kMid);
  EXPECT_DOUBLE_EQ(p.compute, 1.0);
  EXPECT_EQ(p.max_chains, kReferenceMaxChains);
  EXPECT_EQ(p.max_distance, kReferenceMaxDistance);
  EXPECT_EQ(p.max_active_characters, kReferenceActiveCharacters);
  EXPECT_EQ(p.ragdoll_substeps, 16);
  EXPECT_EQ(p.fixed_hz, 60.0f);
}

TEST(DeviceProfile, TiersChangeExactlyAtTheirThresholds) {
  EXPECT_EQ(WithAxes(0.4999).tier, DeviceTier::kLow);
  EXPECT_EQ(WithAxes(0.5).tier, DeviceTier::kMid);
  EXPECT_EQ(WithAxes(1.9999).tier, DeviceTier::kMid);
  EXPECT_EQ(WithAxes(2.0).tier, DeviceTier::kHigh);
  EXPECT_EQ(WithAxes(3.9999).tier, DeviceTier::kHigh);
  EXPECT_EQ(WithAxes(4.0).tier, DeviceTier::kUltra);
  // A low tier halves the fixed rate and the substeps; the mid one just above does not.
  EXPECT_EQ(WithAxes(0.4999).fixed_hz, 30.0f);
  EXPECT_EQ(WithAxes(0.4999).ragdoll_substeps, 8);
  EXPECT_EQ(WithAxes(0.5).fixed_hz, 60.0f);
  EXPECT_EQ(WithAxes(0.5).ragdoll_substeps, 16);
}

TEST(DeviceProfile, BudgetsFollowTheDeviceBenchRuleAndClampAtQuarterAndFourTimes) {
  // max(round(2000 C), 1) chains and round(80 C) m, C clamped to [0.25, 4].
  EXPECT_EQ(WithAxes(0.6).max_chains, 1200);
  EXPECT_EQ(WithAxes(0.6).max_distance, 48.0f);
  EXPECT_EQ(WithAxes(0.6).max_active_characters, 10);  // round(9.6)
  EXPECT_EQ(WithAxes(0.25).max_chains, 500);
  EXPECT_EQ(WithAxes(0.01).max_chains, 500) << "the compute axis is clamped at 0.25";
  EXPECT_EQ(WithAxes(0.01).max_distance, 20.0f);
  EXPECT_EQ(WithAxes(0.01).max_active_characters, 4);
  EXPECT_EQ(WithAxes(4.0).max_chains, 8000);
  EXPECT_EQ(WithAxes(1000.0).max_chains, 8000) << "and at 4";
  EXPECT_EQ(WithAxes(1000.0).max_distance, 320.0f);
  EXPECT_EQ(WithAxes(1000.0).max_active_characters, 64);
  // The chains' budget follows the chains' axes, the characters' the ragdolls'.
  DeviceProfile p;
  p.measurements.push_back({Isa::kScalar, 1, {2.0, 2.0, 0.5, 0.5}});
  ASSERT_EQ(DeriveBudgets(p).code, ErrorCode::kNone);
  EXPECT_EQ(p.max_chains, 4000);
  EXPECT_EQ(p.max_active_characters, 8);
  EXPECT_DOUBLE_EQ(p.compute, 1.0);
}

TEST(DeviceProfile, TheBestIsaWinsAndUsefulWorkersAreTheFewestWithinTenPercent) {
  DeviceProfile p;
  p.measurements.push_back({Isa::kScalar, 1, {1, 1, 1, 1}});
  p.measurements.push_back({Isa::kSse2, 1, {1.0, 1.0, 1.0, 1.0}});
  p.measurements.push_back({Isa::kSse2, 2, {1.9, 1.9, 1.9, 1.9}});
  p.measurements.push_back({Isa::kSse2, 4, {2.0, 2.0, 2.0, 2.0}});
  ASSERT_EQ(DeriveBudgets(p).code, ErrorCode::kNone);
  EXPECT_EQ(p.best_isa, Isa::kSse2);
  EXPECT_EQ(p.useful_workers, 2) << "4 workers buy 5% over 2";
  EXPECT_DOUBLE_EQ(p.compute, 1.9);
  p.measurements[2].axes = {1.7, 1.7, 1.7, 1.7};
  ASSERT_EQ(DeriveBudgets(p).code, ErrorCode::kNone);
  EXPECT_EQ(p.useful_workers, 4);
}

TEST(DeviceProfile, DerivingFromBadAxesIsRefused) {
  DeviceProfile p;
  EXPECT_EQ(DeriveBudgets(p).field, "measurements");
  p.measurements.push_back({Isa::kScalar, 1, {1, 1, 0, 1}});
  EXPECT_EQ(DeriveBudgets(p).field, "measurements.axes");
  p.measurements[0].axes.rigid_substeps = NAN;
  EXPECT_EQ(DeriveBudgets(p).field, "measurements.axes");
}

// A phase clock that charges each phase a fixed cost per item of its work, `factor` times
// over: the chains' phases at the reference machine's rates, the ragdolls' likewise, so a
// plain run measures axes near 1. Calibration under it tests the derivation from rates to
// axes and budgets, never the speed of the machine the test runs on.
struct CostClock {
  double factor = 1;
  static double Ms(detail::FramePhase phase, int32_t items, void* user) {
    double per_item_ms = 0;
    switch (phase) {
      case detail::FramePhase::kSolve: per_item_ms = 1e3 / kReferenceRates.chain_solve; break;
      case detail::FramePhase::kPose:
      case detail::FramePhase::kWriteback: per_item_ms = 0.5e3 / kReferenceRates.pose_writeback; break;
      case detail::FramePhase::kRagdolls: per_item_ms = 1e3 / kReferenceRates.rigid_substeps; break;
      default: per_item_ms = 1e-6; break;
    }
    return static_cast<CostClock*>(user)->factor * per_item_ms * static_cast<double>(items);
  }
  detail::PhaseClock Clock() { return {&Ms, this}; }
};

TEST(DeviceProfile, ASlowedKernelMeasuresSlowerAxesAndGetsSmallerBudgets) {
  CostClock plain{1.0}, slowed{4.0};
  const Isa scalar[] = {Isa::kScalar};
  CalibrationSettings settings;
  settings.isas = scalar;
  const detail::PhaseClock plain_clock = plain.Clock(), slowed_clock = slowed.Clock();
  const auto fast = detail::CalibrateDeviceTimedBy(settings, &plain_clock);
  const auto slow = detail::CalibrateDeviceTimedBy(settings, &slowed_clock);
  ASSERT_TRUE(fast.ok()) << fast.error().message;
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  ASSERT_EQ(fast.value().measurements.size(), 1u);
  const DeviceAxes& f = fast.value().measurements[0].axes;
  const DeviceAxes& s = slow.value().measurements[0].axes;
  // The reference's costs give the reference's rates: the chains' and the separate
  // ragdolls' axes are 1 (the pile's counts pairs, so it is its pairs per ragdoll).
  EXPECT_NEAR(f.chain_solve, 1.0, 1e-9);
  EXPECT_NEAR(f.pose_writeback, 1.0, 1e-9);
  EXPECT_NEAR(f.rigid_substeps, 1.0, 1e-9);
  EXPECT_GT(f.pair_contacts, 0.0);
  // The same frames with every phase 4x the time: every axis exactly a quarter.
  EXPECT_DOUBLE_EQ(s.chain_solve * 4, f.chain_solve);
  EXPECT_DOUBLE_EQ(s.pose_writeback * 4, f.pose_writeback);
  EXPECT_DOUBLE_EQ(s.rigid_substeps * 4, f.rigid_substeps);
  EXPECT_DOUBLE_EQ(s.pair_contacts * 4, f.pair_contacts);
  const DeviceProfile& a = fast.value();
  const DeviceProfile& b = slow.value();
  // The chains' compute goes from 1 to the floor (0.25): the budgets the rule gives there.
  EXPECT_EQ(a.max_chains, kReferenceMaxChains);
  EXPECT_EQ(b.max_chains, std::lround(kReferenceMaxChains * kComputeMin));
  EXPECT_EQ(a.max_distance, kReferenceMaxDistance);
  EXPECT_EQ(b.max_distance, std::round(kReferenceMaxDistance * static_cast<float>(kComputeMin)));
  EXPECT_LT(b.max_active_characters, a.max_active_characters);
  EXPECT_LT(b.compute, a.compute);
  EXPECT_LE(static_cast<int>(b.tier), static_cast<int>(a.tier));
  EXPECT_LE(b.ragdoll_substeps, a.ragdoll_substeps);
  EXPECT_EQ(b.best_isa, Isa::kScalar);
  EXPECT_EQ(b.useful_workers, 1);
}

TEST(DeviceProfile, CalibrationRefusesBadSettingsByName) {
  CalibrationSettings s;
  for (double seconds : {0.0, -1.0, 61.0, static_cast<double>(NAN)}) {
    s.max_seconds = seconds;
    const auto r = CalibrateDevice(s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().field, "max_seconds");
  }
  s.max_seconds = 1;
  const Isa bad[] = {Isa::kScalar, Isa::kAuto};
  s.isas = bad;
  auto r = CalibrateDevice(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "isas");
  EXPECT_EQ(r.error().item, 1);
  s.isas = {};
  const TaskHooks no_enqueue[] = {TaskHooks{nullptr, nullptr, nullptr, 2}};
  s.worker_pools = no_enqueue;
  r = CalibrateDevice(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "worker_pools");
}

DeviceProfile Sample() {
  DeviceProfile p;
  p.machine = "Test CPU \"quoted\" @ 3 GHz";
  p.measurements.push_back({Isa::kScalar, 1, {0.3, 0.4, 0.5, 0.6}});
  p.measurements.push_back({Isa::kScalar, 2, {0.55, 0.7, 0.9, 0.65}});
  p.measurements.push_back({Isa::kScalarFma, 1, {0.31, 0.41, 0.52, 0.61}});
  EXPECT_EQ(DeriveBudgets(p).code, ErrorCode::kNone);
  return p;
}

void ExpectSame(const DeviceProfile& a, const DeviceProfile& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.machine, b.machine);
  EXPECT_EQ(a.tier, b.tier);
  EXPECT_EQ(a.best_isa, b.best_isa);
  EXPECT_EQ(a.useful_workers, b.useful_workers);
  EXPECT_EQ(a.compute, b.compute);  // doubles print with 17 digits: exact
  EXPECT_EQ(a.chain_compute, b.chain_compute);
  EXPECT_EQ(a.rigid_compute, b.rigid_compute);
  EXPECT_EQ(a.max_chains, b.max_chains);
  EXPECT_EQ(a.max_distance, b.max_distance);
  EXPECT_EQ(a.max_active_characters, b.max_active_characters);
  EXPECT_EQ(a.ragdoll_substeps, b.ragdoll_substeps);
  EXPECT_EQ(a.fixed_hz, b.fixed_hz);
  ASSERT_EQ(a.measurements.size(), b.measurements.size());
  for (std::size_t i = 0; i < a.measurements.size(); ++i) {
    EXPECT_EQ(a.measurements[i].isa, b.measurements[i].isa);
    EXPECT_EQ(a.measurements[i].workers, b.measurements[i].workers);
    EXPECT_EQ(a.measurements[i].axes.chain_solve, b.measurements[i].axes.chain_solve);
    EXPECT_EQ(a.measurements[i].axes.pair_contacts, b.measurements[i].axes.pair_contacts);
  }
}

TEST(DeviceProfile, AProfileRoundTripsThroughJsonAndAFile) {
  const DeviceProfile p = Sample();
  const std::string text = ports::DeviceProfileToJson(p);
  EXPECT_NE(text.find("\"format\": \"tendon-device-profile\""), std::string::npos);
  auto back = ports::DeviceProfileFromJson(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSame(p, back.value());
  const std::string path = ::testing::TempDir() + "tendon_device_profile_test.json";
  ASSERT_EQ(ports::SaveDeviceProfile(p, path).code, ErrorCode::kNone);
  auto loaded = ports::LoadDeviceProfile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ExpectSame(p, loaded.value());
  std::remove(path.c_str());
}

// `text` with `from` replaced by `to` (once; the test fails if `from` is not there).
std::string Edit(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(DeviceProfile, AMachineNameThatIsNotUtf8IsWrittenNotThrown) {
  // The OS's model name is bytes, not necessarily UTF-8; writing one must neither throw
  // (no exception leaves a public call) nor lose the rest of the profile.
  DeviceProfile p = Sample();
  p.machine = std::string("CPU \xff\xfe\xc3 end");
  const std::string text = ports::DeviceProfileToJson(p);
  const auto back = ports::DeviceProfileFromJson(text, "mem");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().machine.rfind("CPU ", 0), 0u);
  EXPECT_NE(back.value().machine.find(" end"), std::string::npos);
  EXPECT_EQ(back.value().max_chains, p.max_chains);
}

TEST(DeviceProfile, BadAndForeignProfilesAreRefusedNamingTheFileThePathAndWhy) {
  const std::string good = ports::DeviceProfileToJson(Sample());
  struct Case {
    std::string text, field, says;
  };
  const std::vector<Case> cases = {
      {"{ not json", "", "is not JSON"},
      {R"({"asset": {"version": "2.0"}})", "format", "not a Tendon device profile"},
      {"[1, 2, 3]", "format", "not a Tendon device profile"},
      {Edit(good, "\"version\": 1", "\"version\": 2"), "version", "calibrate again"},
      {Edit(good, "\"tier\": \"mid\"", "\"tier\": \"extreme\""), "tier", "extreme"},
      {Edit(good, "\"max_chains\"", "\"max_chain\""), "budgets.max_chains", "is missing"},
      {Edit(good, "\"ragdoll_substeps\": 16", "\"ragdoll_substeps\": 0"), "budgets.ragdoll_substeps", "within [1, 64]"},
      {Edit(good, "\"ragdoll_substeps\": 16", "\"ragdoll_substeps\": 1e300"), "budgets.ragdoll_substeps", "within"},
      {Edit(good, "\"ragdoll_substeps\": 16", "\"ragdoll_substeps\": \"16\""), "budgets.ragdoll_substeps",
       "not a finite number"},
      {Edit(good, "\"isa\": \"scalar+fma\"", "\"isa\": \"avx1024\""), "measurements[2].isa", "avx1024"},
      {Edit(good, "\"workers\": 2", "\"workers\": 0"), "measurements[1].workers", "within [1, 1024]"},
      {Edit(good, "\"fixed_hz\": 60.0", "\"fixed_hz\": 5.0"), "fixed_hz", "[10, 1000]"},
      {Edit(good, "\"measurements\": [", "\"measurements\": 7, \"x\": ["), "measurements", "not an array"},
      {Edit(good, "\"chains\": 0.6", "\"chains\": 9.6"), "compute.chains", "[0.25, 4]"},
      {Edit(good, "\"chain_solve\": 0.55", "\"chain_solve\": -1"), "measurements[1].chain_solve", "> 0"},
  };
  for (const Case& c : cases) {
    const auto r = ports::DeviceProfileFromJson(c.text, "my.json");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().field.find(c.field), std::string::npos) << r.error().field << " / " << c.field;
    EXPECT_NE(r.error().message.find("my.json"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
  }
  const auto missing = ports::LoadDeviceProfile("/nonexistent/dir/profile.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/dir/profile.json"), std::string::npos);
}

TEST(DeviceProfile, AWorldTakesTheProfileOnlyWhereTheHostLeftTheDefault) {
  DeviceProfile p = WithAxes(0.3);  // a low tier: every budget differs from the defaults
  WorldSettings s;
  s.device_profile = &p;
  s.max_distance = 50.0f;  // the host's own: stays
  auto world = test::MakeWorld(s);
  ASSERT_NE(world, nullptr);
  const WorldSettings& applied = world->Settings();
  EXPECT_EQ(applied.max_chains, p.max_chains);
  EXPECT_EQ(applied.max_distance, 50.0f);
  EXPECT_EQ(applied.max_active_characters, p.max_active_characters);
  EXPECT_EQ(applied.ragdoll_substeps, 8);
  EXPECT_EQ(applied.fixed_hz, 30.0f);
  EXPECT_EQ(applied.isa, Isa::kScalar);
  EXPECT_EQ(applied.device_profile, nullptr);
  EXPECT_EQ(applied.from_device_profile, kProfiledMaxChains | kProfiledMaxActiveCharacters | kProfiledRagdollSubsteps |
                                             kProfiledFixedHz | kProfiledIsa);
  EXPECT_EQ(applied.budget_min_ragdoll_substeps, 4);
  EXPECT_EQ(world->ActiveIsa(), Isa::kScalar);
  // It steps at the profile's rate: 30 Hz runs one substep in two 60 Hz frames.
  const int32_t first = world->Step(1.0f / 60.0f).substeps;
  const int32_t second = world->Step(1.0f / 60.0f).substeps;
  EXPECT_EQ(first + second, 1);
  // Without a profile nothing is applied.
  auto plain = test::MakeWorld(WorldSettings{});
  EXPECT_EQ(plain->Settings().from_device_profile, 0u);
  EXPECT_EQ(plain->Settings().max_chains, INT32_MAX);
  // A profile from a machine whose best instruction set this CPU cannot run still applies
  // its budgets; the World keeps isa kAuto.
  const Isa foreign = IsIsaSupported(Isa::kNeon) ? Isa::kAvx2Fma : Isa::kNeon;
  if (!IsIsaSupported(foreign)) {
    DeviceProfile other = p;
    other.best_isa = foreign;
    WorldSettings o;
    o.device_profile = &other;
    auto w = test::MakeWorld(o);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->Settings().isa, Isa::kAuto);
    EXPECT_EQ(w->Settings().from_device_profile & kProfiledIsa, 0u);
    EXPECT_EQ(w->Settings().max_chains, p.max_chains);
  }
  // A bad profile is refused naming it.
  p.max_chains = 0;
  auto refused = World::Create(s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "device_profile.budgets.max_chains");
}

}  // namespace
}  // namespace tendon
