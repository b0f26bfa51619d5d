// tendon/device_calibration.h: measuring this device into a DeviceProfile.
//
// What it does: CalibrateDevice runs Tendon's own kernels on synthetic scenes through real
// Worlds, for each instruction set the CPU has and each job system the host hands it (one
// per worker count), times them by the Worlds' own phase times, and returns the profile
// (tendon/device_profile.h) with its tier and budgets (DeriveBudgets). It is a client of
// the World: it sits in a layer above it (kernel/calibration/).
// What it does NOT do: read or write files (ports/device/device_profile_json.h does), pick
// threads (the host passes its job systems), or run during a frame: calibrate once, at
// install or first run.
// Threading: CalibrateDevice blocks the calling thread for about
// CalibrationSettings::max_seconds (each scene still builds its World and runs 5 frames,
// so a slow device or many configurations run over), and uses the task hooks it is given.
// Memory: it builds and frees a few small Worlds (a few MB at most).
#pragma once

#include <span>
#include <string>

#include "tendon/device_profile.h"
#include "tendon/errors.h"
#include "tendon/export.h"
#include "tendon/isa.h"
#include "tendon/task_hooks.h"

namespace tendon {

struct CalibrationSettings {
  // The whole calibration's wall-time budget, s, (0, 60]. Each configuration's three
  // scenes get equal shares, their Worlds' building included; a share too short for 2
  // warm-up and 3 timed frames still runs them (a slow device may overrun).
  double max_seconds = 3.0;
  // The job systems to measure, one per worker count (worker_count says which), e.g.
  // tendon::TbbTaskSystem with 1, 2, ... N workers. Empty: the calling thread alone.
  std::span<const TaskHooks> worker_pools{};
  // The instruction sets to measure. Empty: every one this build and CPU support.
  std::span<const Isa> isas{};
};

// Measures this device. Errors (kOutOfRange) name the setting: max_seconds outside
// (0, 60], an unsupported instruction set, a pool without enqueue or worker_count < 1.
TENDON_API Result<DeviceProfile> CalibrateDevice(const CalibrationSettings& settings = {});
// The CPU's model name ("" when the OS does not say).
TENDON_API std::string CpuModelName();

}  // namespace tendon
