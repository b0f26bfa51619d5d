// kernel/core/device_profile.cpp: a profile's tier and budgets from its measurements
// (DeriveBudgets) and its validation (ValidateDeviceProfile), below the World, which
// validates the profile it is created with. Measuring is kernel/calibration/'s.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "kernel/core/validation.h"
#include "tendon/device_profile.h"

namespace tendon {

namespace {

using detail::Fail;

double GeometricMean(const DeviceAxes& a) {
  return std::pow(a.chain_solve * a.pose_writeback * a.rigid_substeps * a.pair_contacts, 0.25);
}

bool AxisOk(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

const char* ToString(DeviceTier tier) {
  switch (tier) {
    case DeviceTier::kLow: return "low";
    case DeviceTier::kMid: return "mid";
    case DeviceTier::kHigh: return "high";
    case DeviceTier::kUltra: return "ultra";
  }
  return "unknown";
}

Error DeriveBudgets(DeviceProfile& p) {
  if (p.measurements.empty()) return Fail(ErrorCode::kOutOfRange, -1, "measurements", "a profile needs measurements");
  for (std::size_t i = 0; i < p.measurements.size(); ++i) {
    const DeviceAxes& a = p.measurements[i].axes;
    if (!AxisOk(a.chain_solve) || !AxisOk(a.pose_writeback) || !AxisOk(a.rigid_substeps) || !AxisOk(a.pair_contacts))
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "measurements.axes",
                  "every axis must be finite and > 0");
    if (p.measurements[i].workers < 1)
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "measurements.workers", "workers must be >= 1");
  }
  // The best instruction set: the highest mean over its measurements' best worker count.
  const DeviceMeasurement* best = &p.measurements[0];
  for (const DeviceMeasurement& m : p.measurements)
    if (GeometricMean(m.axes) > GeometricMean(best->axes)) best = &m;
  p.best_isa = best->isa;
  // The fewest workers, at that instruction set, within 10% of the best.
  const DeviceMeasurement* useful = best;
  for (const DeviceMeasurement& m : p.measurements) {
    if (m.isa == best->isa && m.workers < useful->workers && GeometricMean(m.axes) >= 0.9 * GeometricMean(best->axes))
      useful = &m;
  }
  p.useful_workers = useful->workers;
  const DeviceAxes& a = useful->axes;
  auto clamp = [](double v) { return std::clamp(v, kComputeMin, kComputeMax); };
  p.compute = clamp(GeometricMean(a));
  p.chain_compute = clamp(std::sqrt(a.chain_solve * a.pose_writeback));
  p.rigid_compute = clamp(std::sqrt(a.rigid_substeps * a.pair_contacts));
  p.tier = p.compute >= kTierUltraFrom  ? DeviceTier::kUltra
           : p.compute >= kTierHighFrom ? DeviceTier::kHigh
           : p.compute >= kTierMidFrom  ? DeviceTier::kMid
                                        : DeviceTier::kLow;
  // The BonePhysics DeviceBench rule (MaxChains = max(round(10 C), 1), MaxDistance =
  // round(80 C) studs) in Tendon's units: 2000 chains and 80 m at the reference.
  p.max_chains = std::max(static_cast<int32_t>(std::lround(kReferenceMaxChains * p.chain_compute)), 1);
  p.max_distance = static_cast<float>(std::lround(kReferenceMaxDistance * p.chain_compute));
  p.max_active_characters =
      std::max(static_cast<int32_t>(std::lround(kReferenceActiveCharacters * p.rigid_compute)), 1);
  // A low tier halves the fixed rate and the substeps (a quarter of the ragdoll cost, with
  // softer joints), as Unity's AdaptivePhysics steps down its fixed step.
  const bool low = p.tier == DeviceTier::kLow;
  p.ragdoll_substeps = low ? 8 : 16;
  p.fixed_hz = low ? 30.0f : 60.0f;
  return {};
}

Error ValidateDeviceProfile(const DeviceProfile& p) {
  if (p.version != DeviceProfile::kVersion)
    return Fail(ErrorCode::kOutOfRange, -1, "version",
                "profile version " + std::to_string(p.version) + " is not " + std::to_string(DeviceProfile::kVersion));
  if (static_cast<int>(p.tier) > static_cast<int>(DeviceTier::kUltra))
    return Fail(ErrorCode::kOutOfRange, -1, "tier", "tier is not low, mid, high or ultra");
  if (p.best_isa == Isa::kAuto || static_cast<int>(p.best_isa) > static_cast<int>(Isa::kAvx512))
    return Fail(ErrorCode::kOutOfRange, -1, "best_isa", "best_isa must be a concrete instruction set");
  if (p.useful_workers < 1 || p.useful_workers > 1024)
    return Fail(ErrorCode::kOutOfRange, -1, "useful_workers", "useful_workers must be within [1, 1024]");
  for (const auto& [v, name] : {std::pair{p.compute, "compute"}, std::pair{p.chain_compute, "chain_compute"},
                                std::pair{p.rigid_compute, "rigid_compute"}}) {
    if (!(v >= kComputeMin && v <= kComputeMax))
      return Fail(ErrorCode::kOutOfRange, -1, name, std::string(name) + " must be within [0.25, 4]");
  }
  for (std::size_t i = 0; i < p.measurements.size(); ++i) {
    const DeviceMeasurement& m = p.measurements[i];
    const std::string at = "measurements[" + std::to_string(i) + "]";
    for (const auto& [v, name] : {std::pair{m.axes.chain_solve, "chain_solve"}, std::pair{m.axes.pose_writeback, "pose_writeback"},
                                  std::pair{m.axes.rigid_substeps, "rigid_substeps"},
                                  std::pair{m.axes.pair_contacts, "pair_contacts"}}) {
      if (!AxisOk(v)) return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), at + "." + name, "an axis must be finite and > 0");
    }
    if (m.workers < 1 || m.workers > 1024)
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), at + ".workers", "workers must be within [1, 1024]");
  }
  if (p.max_chains < 1) return Fail(ErrorCode::kOutOfRange, -1, "budgets.max_chains", "max_chains must be >= 1");
  if (!(p.max_distance > 0) || !std::isfinite(p.max_distance))
    return Fail(ErrorCode::kOutOfRange, -1, "budgets.max_distance", "max_distance must be finite and > 0");
  if (p.max_active_characters < 1)
    return Fail(ErrorCode::kOutOfRange, -1, "budgets.max_active_characters", "max_active_characters must be >= 1");
  if (p.ragdoll_substeps < 1 || p.ragdoll_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "budgets.ragdoll_substeps", "ragdoll_substeps must be within [1, 64]");
  if (!(p.fixed_hz >= 10.0f && p.fixed_hz <= 1000.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "budgets.fixed_hz", "fixed_hz must be within [10, 1000]");
  return {};
}

}  // namespace tendon
