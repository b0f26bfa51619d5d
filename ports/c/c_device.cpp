// ports/c/c_device.cpp: the C ABI's device profiles: calibrate, load, save, read the
// budgets, destroy.
//
// A TendonDeviceProfile is an opaque box around a tendon::DeviceProfile; a world reads it
// at create (TendonWorldSettings::device_profile) and keeps no pointer to it.
// TendonDeviceBudgets mirrors the profile's budgets through the table below; the profile's
// version, machine name and raw measurements stay on the C++ side (the JSON file carries
// them).
// What it does NOT do: apply a profile to a world (World::Create does) or measure anything
// itself (tendon::CalibrateDevice does).
// Threading: calibration runs on the calling thread; a profile is a plain value, read-only
// once made. Memory: calibrate and load allocate the profile; destroy frees it.
#include <utility>

#include "ports/c/c_port.h"
#include "ports/device/device_profile_json.h"

static_assert(static_cast<int>(tendon::DeviceTier::kUltra) == TENDON_TIER_ULTRA, "TendonDeviceTier mirrors DeviceTier");
static_assert(static_cast<unsigned>(tendon::kProfiledIsa) == static_cast<unsigned>(TENDON_PROFILED_ISA) &&
                  static_cast<unsigned>(tendon::kProfiledMaxChains) == static_cast<unsigned>(TENDON_PROFILED_MAX_CHAINS),
              "the TENDON_PROFILED_* bits mirror ProfiledSetting");

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonDeviceBudgets, DeviceProfile> : TableOf<TendonDeviceBudgets, DeviceProfile> {
  using Rows = RowList<NotInC<&P::version>, NotInC<&P::machine>, Field<&C::tier, &P::tier>,
                       Field<&C::best_isa, &P::best_isa>, Field<&C::useful_workers, &P::useful_workers>,
                       Field<&C::compute, &P::compute>, Field<&C::chain_compute, &P::chain_compute>,
                       Field<&C::rigid_compute, &P::rigid_compute>, Field<&C::max_chains, &P::max_chains>,
                       Field<&C::max_distance, &P::max_distance>,
                       Field<&C::max_active_characters, &P::max_active_characters>,
                       Field<&C::ragdoll_substeps, &P::ragdoll_substeps>, Field<&C::fixed_hz, &P::fixed_hz>,
                       NotInC<&P::measurements>>;
};
TENDON_C_CHECK_MIRROR(TendonDeviceBudgets, tendon::DeviceProfile);

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

TendonResult tendon_device_profile_calibrate(double max_seconds, TendonDeviceProfile** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  return Guard(nullptr, [&] {
    tendon::CalibrationSettings settings;
    settings.max_seconds = max_seconds;
    auto r = tendon::CalibrateDevice(settings);
    if (!r.ok()) return Record(nullptr, r.error());
    *out = new TendonDeviceProfile{std::move(r).value()};
    return TENDON_OK;
  });
}
TendonResult tendon_device_profile_load(const char* path, TendonDeviceProfile** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (path == nullptr) return NullArgument(nullptr, "path");
  return Guard(nullptr, [&] {
    auto r = tendon::ports::LoadDeviceProfile(path);
    if (!r.ok()) return Record(nullptr, r.error());
    *out = new TendonDeviceProfile{std::move(r).value()};
    return TENDON_OK;
  });
}
TendonResult tendon_device_profile_save(const TendonDeviceProfile* profile, const char* path) {
  if (profile == nullptr) return NullArgument(nullptr, "profile");
  if (path == nullptr) return NullArgument(nullptr, "path");
  return Guard(nullptr, [&] { return Record(nullptr, tendon::ports::SaveDeviceProfile(profile->profile, path)); });
}
TendonResult tendon_device_profile_budgets(const TendonDeviceProfile* profile, TendonDeviceBudgets* out) {
  if (profile == nullptr) return NullArgument(nullptr, "profile");
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = TendonDeviceBudgets{};
  MirrorOut(profile->profile, *out);
  return TENDON_OK;
}
void tendon_device_profile_destroy(TendonDeviceProfile* profile) { delete profile; }

}  // extern "C"
