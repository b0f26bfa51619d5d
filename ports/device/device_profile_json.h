// ports/device/device_profile_json.h: device profiles (tendon/device_profile.h) as JSON files.
//
// What it does: writes a profile as versioned JSON ("format": "tendon-device-profile",
// "version": 1) and reads one back strictly, through nlohmann-json (Debian
// nlohmann-json3-dev): a syntax error, a file that is not a profile (another format, or
// none), another version, a missing or mistyped member, or a value out of range is an
// error naming the file, the JSON path ("budgets.max_chains", "measurements[2].isa") and
// why. A read profile has passed ValidateDeviceProfile, so World::Create accepts it.
// A file that cannot be read or written (missing, a directory, no permission) is
// ErrorCode::kIo, field "file", "<path>: cannot be read: <the system's reason>". No
// exception leaves any of these calls.
// What it does NOT do: calibrate (CalibrateDevice does) or apply a profile
// (WorldSettings::device_profile does).
// Threading: none; any thread. Memory: the document while it is read.
#pragma once

#include <string>
#include <string_view>

#include "tendon/device_profile.h"

namespace tendon::ports {

inline constexpr const char* kDeviceProfileFormat = "tendon-device-profile";

// The profile as pretty-printed JSON (2-space indents, one measurement per element).
std::string DeviceProfileToJson(const DeviceProfile& profile);
// `source` names the text in errors (a path, "profile").
Result<DeviceProfile> DeviceProfileFromJson(std::string_view text, std::string_view source = "profile");
Result<DeviceProfile> LoadDeviceProfile(const std::string& path);
Error SaveDeviceProfile(const DeviceProfile& profile, const std::string& path);

}  // namespace tendon::ports
