#include "ports/device/device_profile_json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "ports/json/json.h"

namespace tendon::ports {

namespace {

using nlohmann::json;

constexpr DeviceTier kTiers[] = {DeviceTier::kLow, DeviceTier::kMid, DeviceTier::kHigh, DeviceTier::kUltra};

// `path` is the JSON path; "$" is the whole document.
Error Refuse(std::string_view source, std::string path, const std::string& why) {
  if (path.empty()) path = "$";
  return Error{ErrorCode::kOutOfRange, -1, path, std::string(source) + ": " + path + ": " + why};
}

// Strict readers: the member must exist with the right type and range.
struct Reader {
  std::string_view source;
  Error error{};

  const json* Member(const json& object, const std::string& path, const char* key) {
    if (error.code != ErrorCode::kNone) return nullptr;
    if (!object.is_object()) {
      error = Refuse(source, path, "is not an object");
      return nullptr;
    }
    const auto it = object.find(key);
    if (it == object.end()) {
      error = Refuse(source, Join(path, key), "is missing");
      return nullptr;
    }
    return &*it;
  }
  static std::string Join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

  double Number(const json& object, const std::string& path, const char* key) {
    const json* v = Member(object, path, key);
    if (v == nullptr) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
      error = Refuse(source, Join(path, key), "is not a finite number");
      return 0;
    }
    return v->get<double>();
  }
  int32_t Int(const json& object, const std::string& path, const char* key, int32_t lo, int32_t hi) {
    const double d = Number(object, path, key);
    if (error.code != ErrorCode::kNone) return 0;
    if (!(d >= lo && d <= hi) || d != std::floor(d)) {
      error = Refuse(source, Join(path, key),
                     "must be an integer within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return 0;
    }
    return static_cast<int32_t>(d);
  }
  std::string String(const json& object, const std::string& path, const char* key) {
    const json* v = Member(object, path, key);
    if (v == nullptr) return "";
    if (!v->is_string()) {
      error = Refuse(source, Join(path, key), "is not a string");
      return "";
    }
    return v->get<std::string>();
  }
  Isa IsaOf(const json& object, const std::string& path, const char* key) {
    const std::string name = String(object, path, key);
    if (error.code != ErrorCode::kNone) return Isa::kScalar;
    for (Isa isa : kConcreteIsas)
      if (name == ToString(isa)) return isa;
    error = Refuse(source, Join(path, key), "\"" + name + "\" is not an instruction set Tendon knows");
    return Isa::kScalar;
  }
};


std::string ProfileJson(const DeviceProfile& p) {
  using ordered = nlohmann::ordered_json;  // members in the order written here
  ordered measurements = ordered::array();
  for (const DeviceMeasurement& m : p.measurements) {
    measurements.push_back({{"isa", ToString(m.isa)},
                            {"workers", m.workers},
                            {"chain_solve", m.axes.chain_solve},
                            {"pose_writeback", m.axes.pose_writeback},
                            {"rigid_substeps", m.axes.rigid_substeps},
                            {"pair_contacts", m.axes.pair_contacts}});
  }
  const ordered doc = {
      {"format", kDeviceProfileFormat},
      {"version", p.version},
      {"machine", p.machine},
      {"reference_machine", kReferenceMachine},
      {"tier", ToString(p.tier)},
      {"best_isa", ToString(p.best_isa)},
      {"useful_workers", p.useful_workers},
      {"compute", {{"all", p.compute}, {"chains", p.chain_compute}, {"rigid", p.rigid_compute}}},
      {"budgets",
       {{"max_chains", p.max_chains},
        {"max_distance", p.max_distance},
        {"max_active_characters", p.max_active_characters},
        {"ragdoll_substeps", p.ragdoll_substeps},
        {"fixed_hz", p.fixed_hz}}},
      {"measurements", measurements},
  };
  // Replace, not throw, on bytes that are not UTF-8 (a machine name is the OS's text, and no
  // exception leaves a public call): they are written as U+FFFD.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<DeviceProfile> ProfileFromJson(std::string_view text, std::string_view source) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return Refuse(source, "", "is not JSON");
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kDeviceProfileFormat)
    return Refuse(source, "format", std::string("is not a Tendon device profile (\"format\" must be \"") +
                                        kDeviceProfileFormat + "\")");
  Reader r{source};
  DeviceProfile p;
  p.version = r.Int(doc, "", "version", 0, 1 << 30);
  if (r.error.code == ErrorCode::kNone && p.version != DeviceProfile::kVersion)
    return Refuse(source, "version",
                  "profile version " + std::to_string(p.version) + " is not the version this build reads (" +
                      std::to_string(DeviceProfile::kVersion) + "): calibrate again");
  p.machine = r.String(doc, "", "machine");
  const std::string tier = r.String(doc, "", "tier");
  bool tier_known = false;
  for (DeviceTier t : kTiers) {
    if (tier == ToString(t)) {
      p.tier = t;
      tier_known = true;
    }
  }
  if (r.error.code == ErrorCode::kNone && !tier_known)
    return Refuse(source, "tier", "\"" + tier + "\" is not low, mid, high or ultra");
  p.best_isa = r.IsaOf(doc, "", "best_isa");
  p.useful_workers = r.Int(doc, "", "useful_workers", 1, 1024);
  const json* compute = r.Member(doc, "", "compute");
  if (compute != nullptr) {
    p.compute = r.Number(*compute, "compute", "all");
    p.chain_compute = r.Number(*compute, "compute", "chains");
    p.rigid_compute = r.Number(*compute, "compute", "rigid");
  }
  const json* budgets = r.Member(doc, "", "budgets");
  if (budgets != nullptr) {
    p.max_chains = r.Int(*budgets, "budgets", "max_chains", 1, 1 << 30);
    p.max_distance = static_cast<float>(r.Number(*budgets, "budgets", "max_distance"));
    p.max_active_characters = r.Int(*budgets, "budgets", "max_active_characters", 1, 1 << 30);
    p.ragdoll_substeps = r.Int(*budgets, "budgets", "ragdoll_substeps", 1, 64);
    p.fixed_hz = static_cast<float>(r.Number(*budgets, "budgets", "fixed_hz"));
  }
  const json* measurements = r.Member(doc, "", "measurements");
  if (measurements != nullptr && !measurements->is_array())
    return Refuse(source, "measurements", "is not an array");
  if (measurements != nullptr) {
    if (measurements->size() > 4096) return Refuse(source, "measurements", "has more than 4096 entries");
    for (std::size_t i = 0; i < measurements->size() && r.error.code == ErrorCode::kNone; ++i) {
      const json& e = (*measurements)[i];
      const std::string path = "measurements[" + std::to_string(i) + "]";
      DeviceMeasurement m;
      m.isa = r.IsaOf(e, path, "isa");
      m.workers = r.Int(e, path, "workers", 1, 1024);
      m.axes.chain_solve = r.Number(e, path, "chain_solve");
      m.axes.pose_writeback = r.Number(e, path, "pose_writeback");
      m.axes.rigid_substeps = r.Number(e, path, "rigid_substeps");
      m.axes.pair_contacts = r.Number(e, path, "pair_contacts");
      p.measurements.push_back(m);
    }
  }
  if (r.error.code != ErrorCode::kNone) return r.error;
  if (Error e = ValidateDeviceProfile(p); e.code != ErrorCode::kNone) {
    // The profile's field names as the file spells them.
    if (e.field == "compute") e.field = "compute.all";
    if (e.field == "chain_compute") e.field = "compute.chains";
    if (e.field == "rigid_compute") e.field = "compute.rigid";
    e.message = std::string(source) + ": " + e.field + ": " + e.message;
    return e;
  }
  return p;
}

}  // namespace

// The public calls: no exception leaves them (the readers and writers above throw
// nothing on any input; this is the guard should a library or allocation throw).
std::string DeviceProfileToJson(const DeviceProfile& profile) {
  try {
    return ProfileJson(profile);
  } catch (const std::exception&) {
    return {};  // out of memory: nothing to write (SaveDeviceProfile reports it)
  }
}

Result<DeviceProfile> DeviceProfileFromJson(std::string_view text, std::string_view source) {
  try {
    return ProfileFromJson(text, source);
  } catch (const std::exception& e) {
    return Refuse(source, "", std::string("cannot be read: ") + e.what());
  }
}

Result<DeviceProfile> LoadDeviceProfile(const std::string& path) {
  try {
    std::string text, why;
    if (!tendon::json::ReadFile(path, &text, &why)) return tendon::json::IoError(path, why);
    return DeviceProfileFromJson(text, path);
  } catch (const std::exception& e) {  // out of memory, or a bug: never out of a public call
    return Error{ErrorCode::kOutOfRange, -1, "file", path + ": cannot be loaded: " + e.what()};
  }
}

Error SaveDeviceProfile(const DeviceProfile& profile, const std::string& path) {
  try {
    const std::string text = ProfileJson(profile);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      return tendon::json::IoError(path, "cannot be written: " + std::make_error_code(std::errc::is_a_directory).message());
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return tendon::json::IoError(path, "cannot be written: " + std::generic_category().message(errno));
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int write_error = errno;
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed)
      return tendon::json::IoError(path, "writing failed: " + std::generic_category().message(written ? errno : write_error));
    return {};
  } catch (const std::exception& e) {
    return Error{ErrorCode::kOutOfRange, -1, "file", path + ": cannot be saved: " + e.what()};
  }
}

}  // namespace tendon::ports
