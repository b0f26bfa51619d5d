// kernel/calibration/device_calibration.h: calibration with the phase clock given.
//
// What it does: CalibrateDevice (tendon/device_calibration.h) is CalibrateDeviceTimedBy with
// no clock: its Worlds time their phases with the CPU's counter. A test gives a clock
// (world_access.h's PhaseClock: a phase's milliseconds from its work), so that what it
// checks is the derivation from measured rates to axes, tier and budgets, not the speed of
// the machine it runs on; each scene then steps a fixed number of frames.
// What it does NOT do: anything CalibrateDevice does not. Threading and memory: as it.
#pragma once

#include "kernel/world/world_access.h"
#include "tendon/device_calibration.h"

namespace tendon::detail {

Result<DeviceProfile> CalibrateDeviceTimedBy(const CalibrationSettings& settings, const PhaseClock* clock);

}  // namespace tendon::detail
