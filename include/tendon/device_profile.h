// tendon/device_profile.h: a device's measured speed, its tier, and the budgets it can afford.
//
// What it does: a DeviceProfile holds four throughputs (the axes) measured on a device as
// multiples of the reference machine's (kReferenceMachine: 1.0 is as fast as it), per
// instruction set and worker count (CalibrateDevice, tendon/device_calibration.h, measures
// them). DeriveBudgets turns the axes into a tier and the budgets a World should run with
// on this device, with the
// BonePhysics DeviceBench rule scaled to Tendon's units: max_chains = max(round(2000 C), 1)
// and max_distance = round(80 C) m, C the chains' compute axis clamped to [0.25, 4].
// A World takes a profile through WorldSettings::device_profile: every profiled setting
// the host left at its default comes from the profile. ports/device/device_profile_json.h
// reads and writes profiles as versioned JSON; tendon-devicebench is the command line.
// What it does NOT do: measure (tendon/device_calibration.h does, through Worlds), read or
// write files (the JSON port does).
// Threading: plain values and pure functions. Memory: a profile owns its measurements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tendon/errors.h"
#include "tendon/export.h"
#include "tendon/isa.h"

namespace tendon {

// Thresholds on DeviceProfile::compute (the geometric mean of the four axes at the best
// configuration, clamped to [0.25, 4]): low < 0.5 <= mid < 2 <= high < 4 <= ultra.
enum class DeviceTier : uint8_t { kLow, kMid, kHigh, kUltra };
TENDON_API const char* ToString(DeviceTier tier);
inline constexpr double kTierMidFrom = 0.5;
inline constexpr double kTierHighFrom = 2.0;
inline constexpr double kTierUltraFrom = 4.0;
inline constexpr double kComputeMin = 0.25;
inline constexpr double kComputeMax = 4.0;

// The budgets' bases: what the reference machine (compute 1) gets.
inline constexpr int32_t kReferenceMaxChains = 2000;       // about 1 ms of chains a frame there
inline constexpr float kReferenceMaxDistance = 80.0f;      // m
inline constexpr int32_t kReferenceActiveCharacters = 16;  // WorldSettings' default
// The reference machine: this project's CI machine kind. Its axes are 1.0 by definition.
inline constexpr const char* kReferenceMachine = "AMD EPYC 2-core VM (AVX2+FMA), 2 oneTBB workers";

// Throughputs as multiples of the reference machine's at its best instruction set and
// worker count (items per second here / items per second there).
struct DeviceAxes {
  double chain_solve = 0;     // chain-substeps through the solve kernel (512 8-node chains)
  double pose_writeback = 0;  // chains through pose and writeback (the same chains)
  double rigid_substeps = 0;  // ragdoll-substeps of 64 separate two-part ragdolls
  double pair_contacts = 0;   // part-pair-substeps in a 64-box pile (pair contacts and joints)
};

// The reference machine's throughputs, items per second, at its best configuration
// (AVX2+FMA, 2 oneTBB workers): the 1.0 of every axis. tendon-devicebench --raw prints a
// device's in the same units; these are the median of 5 runs there (session 10).
inline constexpr DeviceAxes kReferenceRates{1.11e8, 1.11e7, 5.26e6, 3.66e6};

// One configuration that was measured.
struct DeviceMeasurement {
  Isa isa = Isa::kScalar;
  int32_t workers = 1;
  DeviceAxes axes{};
};

struct DeviceProfile {
  static constexpr int32_t kVersion = 1;
  int32_t version = kVersion;
  std::string machine;  // the CPU's model name, as the OS reports it ("" when unknown)
  DeviceTier tier = DeviceTier::kMid;
  // The fastest instruction set (geometric mean of the axes). A World applies it to isa
  // kAuto when the CPU runs it and neither TENDON_FORCE_SCALAR nor TENDON_ISA is set.
  Isa best_isa = Isa::kScalar;
  // The fewest workers within 10% of the best measured (more are not worth waking here).
  int32_t useful_workers = 1;
  // Geometric means at best_isa and useful_workers, clamped to [0.25, 4]: all four axes;
  // the chains' two; the ragdolls' two.
  double compute = 1, chain_compute = 1, rigid_compute = 1;
  // The budgets (DeriveBudgets):
  int32_t max_chains = kReferenceMaxChains;             // max(round(2000 chain_compute), 1)
  float max_distance = kReferenceMaxDistance;           // round(80 chain_compute) m
  int32_t max_active_characters = kReferenceActiveCharacters;  // max(round(16 rigid_compute), 1)
  int32_t ragdoll_substeps = 16;                        // 8 on a low tier, else 16
  float fixed_hz = 60;                                  // 30 on a low tier, else 60
  std::vector<DeviceMeasurement> measurements;
};

// The best configuration, the compute axes, the tier and the budgets from
// profile.measurements (CalibrateDevice calls it; so can a host with its own axes).
// kOutOfRange when there are no measurements or an axis is not finite and positive.
TENDON_API Error DeriveBudgets(DeviceProfile& profile);
// Every field in range (a profile read from a file): which field, why. best_isa must be a
// concrete instruction set, though not one this CPU runs (a profile may come from another
// machine of the tier; Create then keeps isa kAuto).
TENDON_API Error ValidateDeviceProfile(const DeviceProfile& profile);

}  // namespace tendon
