// ports/c/tendon_c.cpp: the C ABI (tendon/tendon_c.h) over tendon::World and the VRM
// avatar port.
//
// Every entry point converts plain C structs into the C++ settings, calls the World, and
// turns an Error into a TendonResult with the message kept per thread and per world.
// Nothing throws out: each body runs inside Guard, which turns an exception (an
// allocation failure while building) into TENDON_ERROR_INTERNAL. Ids cross as
// index | generation << 32.
#include "tendon/tendon_c.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "ports/device/device_profile_json.h"
#include "ports/gltf/vrm_avatar.h"
#include "tendon/tendon.h"
#include "tendon/trace.h"

static_assert(sizeof(TendonVec3) == sizeof(tendon::Vec3) && sizeof(TendonQuat) == sizeof(tendon::Quat) &&
                  sizeof(TendonTransform) == sizeof(tendon::Transform),
              "the C value types are the C++ ones, bit for bit");
static_assert(static_cast<int>(tendon::ErrorCode::kInUse) == TENDON_ERROR_IN_USE, "TendonResult mirrors ErrorCode");
static_assert(static_cast<int>(tendon::Isa::kNeon) == TENDON_ISA_NEON, "TendonIsa mirrors Isa");
static_assert(static_cast<int>(tendon::Isa::kAvx512) == TENDON_ISA_AVX512, "TendonIsa mirrors Isa");
static_assert(static_cast<int>(tendon::DeviceTier::kUltra) == TENDON_TIER_ULTRA, "TendonDeviceTier mirrors DeviceTier");
static_assert(static_cast<unsigned>(tendon::kProfiledIsa) == static_cast<unsigned>(TENDON_PROFILED_ISA) &&
                  static_cast<unsigned>(tendon::kProfiledMaxChains) == static_cast<unsigned>(TENDON_PROFILED_MAX_CHAINS), "the TENDON_PROFILED_* bits mirror ProfiledSetting");
static_assert(static_cast<int>(tendon::BudgetAction::kAtFloor) == TENDON_BUDGET_AT_FLOOR,
              "TendonBudgetAction mirrors BudgetAction");
static_assert(static_cast<int>(tendon::PoseLayout::kSkinningMatrix) == TENDON_POSE_SKINNING_MATRIX &&
                  static_cast<int>(tendon::QuatOrder::kWxyz) == TENDON_QUAT_WXYZ &&
                  static_cast<int>(tendon::MatrixForm::kRowMajor3x4) == TENDON_MATRIX_ROW_MAJOR_3X4,
              "the C pose stream enums mirror tendon/pose_layout.h");

namespace {

using namespace tendon;

// A slot table for the port's own objects (avatar kinds, avatars): generation-checked ids.
template <class T>
struct Slots {
  struct Slot {
    uint32_t generation = 1;
    T value{};
    bool live = false;
  };
  std::vector<Slot> slots;
  uint64_t Add(T value) {
    for (uint32_t i = 0; i < slots.size(); ++i) {
      if (!slots[i].live) {
        slots[i].value = std::move(value);
        slots[i].live = true;
        return i | static_cast<uint64_t>(slots[i].generation) << 32;
      }
    }
    slots.push_back(Slot{1, std::move(value), true});
    return (slots.size() - 1) | static_cast<uint64_t>(1) << 32;
  }
  T* Find(uint64_t id) {
    const auto index = static_cast<uint32_t>(id);
    const auto generation = static_cast<uint32_t>(id >> 32);
    if (generation == 0 || index >= slots.size() || !slots[index].live || slots[index].generation != generation)
      return nullptr;
    return &slots[index].value;
  }
  void Remove(uint64_t id) {
    Slot& s = slots[static_cast<uint32_t>(id)];
    s.value = T{};
    s.live = false;
    s.generation = s.generation == UINT32_MAX ? 1 : s.generation + 1;
  }
};

struct ThreadError {
  std::string message, field;
  int32_t item = -1;
};
thread_local ThreadError t_error;

template <class Tag>
uint64_t ToC(Id<Tag> id) {
  return id.index | static_cast<uint64_t>(id.generation) << 32;
}
template <class IdT>
IdT FromC(uint64_t id) {
  return IdT{static_cast<uint32_t>(id), static_cast<uint32_t>(id >> 32)};
}

Vec3 V(TendonVec3 v) { return {v.x, v.y, v.z}; }
TendonVec3 V(Vec3 v) { return {v.x, v.y, v.z}; }
Transform T(const TendonTransform& t) {
  Transform out;
  std::memcpy(static_cast<void*>(&out), &t, sizeof(out));
  return out;
}
TendonTransform T(const Transform& t) {
  TendonTransform out;
  std::memcpy(&out, &t, sizeof(out));
  return out;
}
const Transform* P(const TendonTransform* t) { return reinterpret_cast<const Transform*>(t); }
Transform* P(TendonTransform* t) { return reinterpret_cast<Transform*>(t); }
std::string S(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

}  // namespace

struct TendonDeviceProfile {
  tendon::DeviceProfile profile;
};

struct TendonWorld {
  std::unique_ptr<World> world;
  TraceWriter trace;
  std::string last_error;
  Slots<std::shared_ptr<const ports::VrmAvatarArchetype>> vrm_kinds;
  Slots<std::unique_ptr<ports::VrmAvatar>> vrm_avatars;
};

namespace {

// Keeps the message; if even that cannot allocate, the code alone is returned.
TendonResult Record(TendonWorld* w, TendonResult code, std::string message, std::string field = {}, int32_t item = -1) {
  try {
    t_error.message = std::move(message);
    t_error.field = std::move(field);
    t_error.item = item;
    if (w != nullptr) w->last_error = t_error.message;
  } catch (...) {
  }
  return code;
}
TendonResult Record(TendonWorld* w, const Error& e) {
  if (e.code == ErrorCode::kNone) return TENDON_OK;
  return Record(w, static_cast<TendonResult>(e.code), e.message, e.field, e.item);
}
// A refusal of `field` before any World call; the message is built where an allocation
// failure only loses it.
TendonResult Refuse(TendonWorld* w, TendonResult code, const char* field, const char* why) {
  try {
    return Record(w, code, std::string(field) + why, field);
  } catch (...) {
    return code;
  }
}
TendonResult NullArgument(TendonWorld* w, const char* what) { return Refuse(w, TENDON_ERROR_NULL_ARGUMENT, what, " is NULL"); }
// What a call that a frame in flight forbids gets (between begin_step and finish_step).
TendonResult InFlight(TendonWorld* w) {
  return Refuse(w, TENDON_ERROR_REENTRANT, "world", ": a frame is in flight (call tendon_world_finish_step)");
}

// Runs a body that returns a TendonResult; no exception leaves the C ABI.
template <class F>
TendonResult Guard(TendonWorld* w, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Record(w, TENDON_ERROR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return Record(w, TENDON_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return Record(w, TENDON_ERROR_INTERNAL, "internal error");
  }
}
TendonWorld* Mutable(const TendonWorld* w) { return const_cast<TendonWorld*>(w); }

// A Result's value into *out, or its error recorded.
template <class R, class Out>
TendonResult Take(TendonWorld* w, R&& result, Out* out) {
  if (!result.ok()) return Record(w, result.error());
  *out = ToC(result.value());
  return TENDON_OK;
}

WorldSettings ToCpp(const TendonWorldSettings& c) {
  WorldSettings s;
  s.gravity = V(c.gravity);
  s.fixed_hz = c.fixed_hz;
  s.max_substeps = c.max_substeps;
  s.render_interpolation = c.render_interpolation != 0;
  s.time_phases = c.time_phases != 0;
  s.max_distance = c.max_distance;
  s.max_chains = c.max_chains;
  s.pendulum_max_distance = c.pendulum_max_distance;
  s.teleport_distance = c.teleport_distance;
  s.teleport_angle_degrees = c.teleport_angle_degrees;
  s.ambient_wind = V(c.ambient_wind);
  s.wind_seed = c.wind_seed;
  s.ragdoll_substeps = c.ragdoll_substeps;
  s.ragdoll_iterations = c.ragdoll_iterations;
  s.ragdoll_sleep_speed = c.ragdoll_sleep_speed;
  s.ragdoll_contact_angular_damping = c.ragdoll_contact_angular_damping;
  s.ragdoll_max_push_speed = c.ragdoll_max_push_speed;
  s.ragdoll_sleep_seconds = c.ragdoll_sleep_seconds;
  s.ragdoll_settle_damping = c.ragdoll_settle_damping;
  s.max_active_characters = c.max_active_characters;
  s.frame_budget_ms = c.frame_budget_ms;
  s.budget_min_ragdoll_substeps = c.budget_min_ragdoll_substeps;
  s.device_profile = c.device_profile != nullptr ? &c.device_profile->profile : nullptr;
  s.isa = static_cast<Isa>(c.isa);
  s.tasks = c.tasks;
  return s;
}

void ToC(const FrameStats& s, TendonFrameStats* c) {
  *c = TendonFrameStats{};
  c->frame = s.frame;
  c->substeps = s.substeps;
  c->dropped_seconds = s.dropped_seconds;
  c->dt_rejected = s.dt_rejected ? 1 : 0;
  c->interpolation_alpha = s.interpolation_alpha;
  c->bound_chains = s.bound_chains;
  c->bound_pendulums = s.bound_pendulums;
  c->simulated_chains = s.simulated_chains;
  c->simulated_pendulums = s.simulated_pendulums;
  c->simulated_instance_substeps = s.simulated_instance_substeps;
  c->sleeping_chains = s.sleeping_chains;
  c->culled_by_distance = s.culled_by_distance;
  c->culled_by_budget = s.culled_by_budget;
  c->sleeping_pendulums = s.sleeping_pendulums;
  c->bound_ragdolls = s.bound_ragdolls;
  c->disabled_ragdolls = s.disabled_ragdolls;
  c->simulated_ragdolls = s.simulated_ragdolls;
  c->sleeping_ragdolls = s.sleeping_ragdolls;
  c->frozen_ragdolls = s.frozen_ragdolls;
  c->ragdoll_substeps = s.ragdoll_substeps;
  c->ragdoll_pairs = s.ragdoll_pairs;
  c->dropped_ragdoll_pairs = s.dropped_ragdoll_pairs;
  c->contact_ragdoll_pairs = s.contact_ragdoll_pairs;
  c->ragdoll_islands = s.ragdoll_islands;
  c->coloured_ragdoll_pairs = s.coloured_ragdoll_pairs;
  c->bound_characters = s.bound_characters;
  c->active_characters = s.active_characters;
  c->dropped_character_events = s.dropped_character_events;
  c->snapped_teleport = s.snapped_teleport;
  c->snapped_wake = s.snapped_wake;
  c->snapped_bad_input = s.snapped_bad_input;
  c->reset_non_finite = s.reset_non_finite;
  c->chain_blocks = s.chain_blocks;
  c->lanes_used = s.lanes_used;
  c->lane_occupancy = s.lane_occupancy;
  c->budget_max_chains = s.budget_max_chains;
  c->budget_ragdoll_substeps = s.budget_ragdoll_substeps;
  c->budget_action = static_cast<TendonBudgetAction>(s.budget_action);
  c->budget_estimate_ms = s.budget_estimate_ms;
  c->times = {s.times.gather_ms,   s.times.budget_ms,   s.times.pose_ms,    s.times.solve_ms,
              s.times.writeback_ms, s.times.pendulum_ms, s.times.ragdoll_ms, s.times.total_ms};
}

// A count and pointer pair into a span; a negative count or a NULL pointer with a count
// is refused by the caller before this.
template <class T>
std::span<T> Span(T* p, int32_t n) {
  return p != nullptr && n > 0 ? std::span<T>(p, static_cast<std::size_t>(n)) : std::span<T>();
}
bool BadArray(const void* p, int32_t n) { return n < 0 || (n > 0 && p == nullptr); }
TendonResult BadArrayError(TendonWorld* w, const char* field) {
  return Refuse(w, TENDON_ERROR_NULL_BUFFER, field, ": a negative count, or a count with a NULL pointer");
}
// A C enum value outside its range is refused before it is narrowed to the C++ enum. The
// field is read as the int it is: a C host may store any int there, and loading an
// out-of-range value as the enum type would be undefined behaviour (UBSan's enum check).
template <class E>
int EnumValue(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
bool OutOfEnum(int value, int last) { return value < 0 || value > last; }
TendonResult BadEnum(TendonWorld* w, const char* field) {
  return Refuse(w, TENDON_ERROR_OUT_OF_RANGE, field, " is not one of its enum's values");
}

// The C streams as PoseStreams, in `storage` (which the binding's span points into). The
// layout, order and form are passed as the ints they are: the C++ enums have an int32_t
// underlying type, so any value is representable, and the bind refuses those out of range
// naming pose_streams[i] and the field.
std::span<const PoseStream> ToCpp(const TendonPoseStream* c, int32_t count, std::vector<PoseStream>* storage) {
  storage->clear();
  for (int32_t i = 0; c != nullptr && i < count; ++i) {
    const TendonPoseStream& s = c[i];
    PoseStream p;
    p.layout = static_cast<PoseLayout>(EnumValue(s.layout));
    p.base = s.base;
    p.element_count = s.element_count;
    p.byte_stride = s.byte_stride;
    p.translation_offset = s.translation_offset;
    p.rotation_offset = s.rotation_offset;
    p.scale_offset = s.scale_offset;
    p.rotation_order = static_cast<QuatOrder>(EnumValue(s.rotation_order));
    p.matrix_form = static_cast<MatrixForm>(EnumValue(s.matrix_form));
    p.model_world = P(s.model_world);
    p.element_of_bone = Span(s.element_of_bone, s.element_of_bone_count);
    p.inverse_bind = Span(s.inverse_bind, s.inverse_bind_count);
    storage->push_back(p);
  }
  return *storage;
}
TendonResult CheckPoseStreams(TendonWorld* w, const TendonPoseStream* c, int32_t count) {
  if (BadArray(c, count)) return BadArrayError(w, "pose_streams");
  for (int32_t i = 0; c != nullptr && i < count; ++i) {
    if (BadArray(c[i].element_of_bone, c[i].element_of_bone_count)) return BadArrayError(w, "pose_streams.element_of_bone");
    if (BadArray(c[i].inverse_bind, c[i].inverse_bind_count)) return BadArrayError(w, "pose_streams.inverse_bind");
  }
  return TENDON_OK;
}

ChainBinding ToCpp(const TendonChainBinding& b, std::vector<PoseStream>* streams) {
  ChainBinding out;
  out.archetype = FromC<ChainArchetypeId>(b.archetype);
  out.root_parent_world = P(b.root_parent_world);
  out.animated_local = Span(P(b.animated_local), b.animated_count);
  out.output_local = Span(P(b.output_local), b.output_count);
  out.bone_map = Span(b.bone_map, b.bone_map_count);
  out.collider_frames = Span(P(b.collider_frames), b.collider_frame_count);
  out.pose_streams = ToCpp(b.pose_streams, b.pose_stream_count, streams);
  return out;
}
TendonResult CheckChainBinding(TendonWorld* w, const TendonChainBinding* b) {
  if (b == nullptr) return NullArgument(w, "binding");
  if (BadArray(b->animated_local, b->animated_count)) return BadArrayError(w, "animated_local");
  if (BadArray(b->output_local, b->output_count)) return BadArrayError(w, "output_local");
  if (BadArray(b->bone_map, b->bone_map_count)) return BadArrayError(w, "bone_map");
  if (BadArray(b->collider_frames, b->collider_frame_count)) return BadArrayError(w, "collider_frames");
  return CheckPoseStreams(w, b->pose_streams, b->pose_stream_count);
}

CharacterBinding ToCpp(const TendonCharacterBinding& b, std::vector<PoseStream>* streams) {
  CharacterBinding out;
  out.pose_streams = ToCpp(b.pose_streams, b.pose_stream_count, streams);
  out.archetype = FromC<CharacterArchetypeId>(b.archetype);
  out.model_world = P(b.model_world);
  out.animated_local = Span(P(b.animated_local), b.bone_count);
  out.output_local = Span(P(b.output_local), b.bone_count);
  out.output_world = Span(P(b.output_world), b.bone_count);
  out.collide_mode = static_cast<RagdollCollideMode>(b.collide_mode);
  out.planar_normal = V(b.planar_normal);
  out.freeze_when_settled = b.freeze_when_settled != 0;
  out.freeze_after_seconds = b.freeze_after_seconds;
  return out;
}

int32_t RaycastOut(bool hit, const RaycastHit& h, TendonRaycastHit* out) {
  if (hit && out != nullptr) {
    *out = TendonRaycastHit{ToC(h.ragdoll), h.part, h.static_shape, V(h.point), V(h.normal), h.distance};
  }
  return hit ? 1 : 0;
}
ports::VrmAvatarOptions ToCpp(const TendonVrmOptions* c) {
  ports::VrmAvatarOptions o;
  if (c != nullptr) {
    o.character = c->character != 0;
    o.total_mass = c->total_mass;
    o.limit_source = static_cast<LimitSource>(c->limit_source);
  }
  return o;
}
TendonResult TakeKind(TendonWorld* world, Result<std::shared_ptr<const ports::VrmAvatarArchetype>> loaded,
                             TendonVrmKindId* out) {
  if (!loaded.ok()) {
    const bool io = loaded.error().field == "file";  // ImportGltf: "<path>: file: cannot be read"
    return Record(world, io ? TENDON_ERROR_IO : static_cast<TendonResult>(loaded.error().code), loaded.error().message,
                  loaded.error().field, loaded.error().item);
  }
  *out = world->vrm_kinds.Add(std::move(loaded).value());
  return TENDON_OK;
}
}  // namespace

extern "C" {

TendonTransform tendon_transform_identity(void) { return T(Transform{}); }

const char* tendon_last_error(void) { return t_error.message.c_str(); }
const char* tendon_last_error_field(void) { return t_error.field.c_str(); }
int32_t tendon_last_error_item(void) { return t_error.item; }

const char* tendon_result_name(TendonResult result) {
  switch (result) {
    case TENDON_ERROR_NULL_ARGUMENT: return "null argument";
    case TENDON_ERROR_IO: return "io";
    case TENDON_ERROR_INTERNAL: return "internal";
    default: break;
  }
  if (result >= TENDON_OK && result <= TENDON_ERROR_IN_USE) return ToString(static_cast<ErrorCode>(result));
  return "unknown";
}

// ---- the world ----
namespace {
void SettingsToC(const WorldSettings& s, TendonWorldSettings* c) {
  *c = TendonWorldSettings{};
  c->gravity = V(s.gravity);
  c->fixed_hz = s.fixed_hz;
  c->max_substeps = s.max_substeps;
  c->render_interpolation = s.render_interpolation ? 1 : 0;
  c->time_phases = s.time_phases ? 1 : 0;
  c->max_distance = s.max_distance;
  c->max_chains = s.max_chains;
  c->pendulum_max_distance = s.pendulum_max_distance;
  c->teleport_distance = s.teleport_distance;
  c->teleport_angle_degrees = s.teleport_angle_degrees;
  c->ambient_wind = V(s.ambient_wind);
  c->wind_seed = s.wind_seed;
  c->ragdoll_substeps = s.ragdoll_substeps;
  c->ragdoll_iterations = s.ragdoll_iterations;
  c->ragdoll_sleep_speed = s.ragdoll_sleep_speed;
  c->ragdoll_contact_angular_damping = s.ragdoll_contact_angular_damping;
  c->ragdoll_max_push_speed = s.ragdoll_max_push_speed;
  c->ragdoll_sleep_seconds = s.ragdoll_sleep_seconds;
  c->ragdoll_settle_damping = s.ragdoll_settle_damping;
  c->max_active_characters = s.max_active_characters;
  c->frame_budget_ms = s.frame_budget_ms;
  c->budget_min_ragdoll_substeps = s.budget_min_ragdoll_substeps;
  c->from_device_profile = s.from_device_profile;  // device_profile: NULL (the World keeps none)
  c->isa = static_cast<TendonIsa>(s.isa);
  c->tasks = s.tasks;
}
}  // namespace

void tendon_world_settings_defaults(TendonWorldSettings* c) {
  if (c != nullptr) SettingsToC(WorldSettings{}, c);
}
void tendon_world_get_settings(const TendonWorld* world, TendonWorldSettings* out) {
  if (world != nullptr && out != nullptr) SettingsToC(world->world->Settings(), out);
}

// ---- device profiles ----

TendonResult tendon_device_profile_calibrate(double max_seconds, TendonDeviceProfile** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  return Guard(nullptr, [&] {
    CalibrationSettings settings;
    settings.max_seconds = max_seconds;
    auto r = CalibrateDevice(settings);
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
    auto r = ports::LoadDeviceProfile(path);
    if (!r.ok()) return Record(nullptr, r.error());
    *out = new TendonDeviceProfile{std::move(r).value()};
    return TENDON_OK;
  });
}
TendonResult tendon_device_profile_save(const TendonDeviceProfile* profile, const char* path) {
  if (profile == nullptr) return NullArgument(nullptr, "profile");
  if (path == nullptr) return NullArgument(nullptr, "path");
  return Guard(nullptr, [&] { return Record(nullptr, ports::SaveDeviceProfile(profile->profile, path)); });
}
TendonResult tendon_device_profile_budgets(const TendonDeviceProfile* profile, TendonDeviceBudgets* out) {
  if (profile == nullptr) return NullArgument(nullptr, "profile");
  if (out == nullptr) return NullArgument(nullptr, "out");
  const DeviceProfile& p = profile->profile;
  *out = TendonDeviceBudgets{};
  out->tier = static_cast<TendonDeviceTier>(p.tier);
  out->best_isa = static_cast<TendonIsa>(p.best_isa);
  out->useful_workers = p.useful_workers;
  out->compute = p.compute;
  out->chain_compute = p.chain_compute;
  out->rigid_compute = p.rigid_compute;
  out->max_chains = p.max_chains;
  out->max_distance = p.max_distance;
  out->max_active_characters = p.max_active_characters;
  out->ragdoll_substeps = p.ragdoll_substeps;
  out->fixed_hz = p.fixed_hz;
  return TENDON_OK;
}
void tendon_device_profile_destroy(TendonDeviceProfile* profile) { delete profile; }


TendonResult tendon_world_create(const TendonWorldSettings* settings, TendonWorld** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (settings == nullptr) return NullArgument(nullptr, "settings");
  if (OutOfEnum(EnumValue(settings->isa), TENDON_ISA_AVX512))
    return Record(nullptr, TENDON_ERROR_OUT_OF_RANGE, "isa is not a TendonIsa", "isa");
  return Guard(nullptr, [&] {
    auto created = World::Create(ToCpp(*settings));
    if (!created.ok()) return Record(nullptr, created.error());
    auto w = std::make_unique<TendonWorld>();
    w->world = std::move(created).value();
    *out = w.release();
    return TENDON_OK;
  });
}

void tendon_world_destroy(TendonWorld* world) {
  if (world == nullptr) return;
  if (world->world->FrameInFlight()) world->world->FinishStep();  // its lanes write the buffers freed below
  world->world->SetTraceWriter(nullptr);
  delete world;  // avatars unbind themselves before the World goes (member order)
}

const char* tendon_world_last_error(const TendonWorld* world) { return world != nullptr ? world->last_error.c_str() : ""; }
TendonIsa tendon_world_active_isa(const TendonWorld* world) {
  return world != nullptr ? static_cast<TendonIsa>(world->world->ActiveIsa()) : TENDON_ISA_AUTO;
}
int32_t tendon_world_lane_width(const TendonWorld* world) { return world != nullptr ? world->world->LaneWidth() : 0; }
int32_t tendon_world_ragdoll_lane_width(const TendonWorld* world) {
  return world != nullptr ? world->world->RagdollLaneWidth() : 0;
}
uint64_t tendon_world_state_hash(const TendonWorld* world) { return world != nullptr ? world->world->StateHash() : 0; }

void tendon_world_step(TendonWorld* world, float dt, TendonFrameStats* stats) {
  if (world == nullptr) return;
  const FrameStats& s = world->world->Step(dt);
  if (stats != nullptr) ToC(s, stats);
}
TendonResult tendon_world_set_profiler_hooks(TendonWorld* world, const TendonProfilerHooks* hooks) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetProfilerHooks(hooks != nullptr ? *hooks : ProfilerHooks{})); });
}
TendonResult tendon_world_begin_step(TendonWorld* world, float dt) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (!world->world->BeginStep(dt)) {
    return InFlight(world);
  }
  return TENDON_OK;
}
void tendon_world_finish_step(TendonWorld* world, TendonFrameStats* stats) {
  if (world == nullptr) return;
  const FrameStats& s = world->world->FinishStep();
  if (stats != nullptr) ToC(s, stats);
}
void tendon_world_last_stats(const TendonWorld* world, TendonFrameStats* stats) {
  if (world != nullptr && stats != nullptr) ToC(world->world->LastStats(), stats);
}
void tendon_world_set_camera(TendonWorld* world, TendonVec3 position) {
  if (world != nullptr) world->world->SetCamera(V(position));
}
TendonResult tendon_world_set_max_chains(TendonWorld* world, int32_t max_chains) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetMaxChains(max_chains)); });
}
TendonResult tendon_world_set_trace_file(TendonWorld* world, const char* path) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (world->world->FrameInFlight()) {
    return InFlight(world);
  }
  return Guard(world, [&] {
    world->world->SetTraceWriter(nullptr);
    world->trace.Close();
    if (path == nullptr) return TENDON_OK;
    if (!world->trace.Open(path)) return Record(world, TENDON_ERROR_IO, std::string(path) + ": cannot be opened for writing", "path");
    world->world->SetTraceWriter(&world->trace);
    return TENDON_OK;
  });
}
int32_t tendon_world_unbind_all(TendonWorld* world) {
  if (world == nullptr) return 0;
  if (world->world->FrameInFlight()) {
    InFlight(world);
    return 0;
  }
  int32_t count = 0;
  Guard(world, [&] {
    for (auto& slot : world->vrm_avatars.slots) {
      if (slot.live && slot.value) slot.value->Unbind();
    }
    count = world->world->UnbindAll();
    return TENDON_OK;
  });
  return count;
}

// ---- chains ----
void tendon_chain_settings_defaults(TendonChainSettings* c) {
  if (c == nullptr) return;
  const ChainSettings s;
  *c = TendonChainSettings{s.damping, s.stiffness, s.gravity_scale, s.wind_scale, s.node_radius, V(s.gravity_push)};
}
void tendon_chain_archetype_settings_defaults(TendonChainArchetypeSettings* c) {
  if (c == nullptr) return;
  *c = TendonChainArchetypeSettings{};
  c->teleport_guard = -1;
  tendon_chain_settings_defaults(&c->settings);
}

TendonResult tendon_build_chain_archetype(TendonWorld* world, const TendonChainArchetypeSettings* c,
                                          TendonChainArchetypeId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  if (BadArray(c->bones, c->bone_count)) return BadArrayError(world, "bones");
  if (BadArray(c->overrides, c->override_count)) return BadArrayError(world, "overrides");
  if (BadArray(c->colliders, c->collider_count)) return BadArrayError(world, "colliders");
  if (OutOfEnum(EnumValue(c->model), TENDON_CHAIN_MODEL_VRM)) return BadEnum(world, "model");
  for (int32_t i = 0; i < c->collider_count; ++i)
    if (OutOfEnum(EnumValue(c->colliders[i].shape), TENDON_COLLIDER_PLANE)) return BadEnum(world, "colliders.shape");
  return Guard(world, [&] {
    ChainArchetypeSettings s;
    s.name = S(c->name);
    s.model = static_cast<ChainModel>(c->model);
    if (c->teleport_guard >= 0) s.teleport_guard = c->teleport_guard != 0;
    for (const TendonChainBone& b : Span(c->bones, c->bone_count))
      s.bones.push_back(ChainBone{b.parent, T(b.rest_local), b.virtual_tip != 0});
    if (c->parent_frames != nullptr)
      for (int32_t i = 0; i < c->bone_count; ++i) s.bones[i].parent_frame = c->parent_frames[i];
    s.settings = ChainSettings{c->settings.damping,    c->settings.stiffness,   c->settings.gravity_scale,
                               c->settings.wind_scale, c->settings.node_radius, V(c->settings.gravity_push)};
    for (const TendonChainNodeOverride& o : Span(c->overrides, c->override_count)) {
      ChainNodeOverride ov;
      ov.node = o.node;
      if (o.has_damping) ov.damping = o.damping;
      if (o.has_stiffness) ov.stiffness = o.stiffness;
      if (o.has_gravity_scale) ov.gravity_scale = o.gravity_scale;
      if (o.has_wind_scale) ov.wind_scale = o.wind_scale;
      if (o.has_radius) ov.radius = o.radius;
      if (o.has_gravity_push) ov.gravity_push = V(o.gravity_push);
      if (o.has_collider_mask) ov.collider_mask = o.collider_mask;
      if (o.has_pinned) ov.pinned = o.pinned != 0;
      s.overrides.push_back(ov);
    }
    for (const TendonCollider& col : Span(c->colliders, c->collider_count)) {
      ColliderSettings cs;
      cs.shape = static_cast<ColliderShape>(col.shape);
      cs.inside = col.inside != 0;
      cs.bone = col.bone;
      cs.frame = col.frame;
      cs.a = V(col.a);
      cs.b = V(col.b);
      cs.radius = col.radius;
      s.colliders.push_back(cs);
    }
    return Take(world, world->world->BuildChainArchetype(s), out);
  });
}

TendonResult tendon_bind_chain(TendonWorld* world, const TendonChainBinding* binding, TendonChainId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(world, "out");
  if (TendonResult r = CheckChainBinding(world, binding); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<PoseStream> streams;
    return Take(world, world->world->BindChain(ToCpp(*binding, &streams)), out);
  });
}
TendonResult tendon_rebind_chain(TendonWorld* world, TendonChainId chain, const TendonChainBinding* binding) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (TendonResult r = CheckChainBinding(world, binding); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<PoseStream> streams;
    return Record(world, world->world->RebindChain(FromC<ChainId>(chain), ToCpp(*binding, &streams)));
  });
}
TendonResult tendon_unbind_chain(TendonWorld* world, TendonChainId chain) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindChain(FromC<ChainId>(chain))); });
}
int32_t tendon_chain_is_simulated(const TendonWorld* world, TendonChainId chain) {
  return world != nullptr && world->world->IsSimulated(FromC<ChainId>(chain)) ? 1 : 0;
}
TendonResult tendon_get_chain_node_positions(const TendonWorld* world, TendonChainId chain, TendonVec3* out, int32_t count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (BadArray(out, count)) return BadArrayError(Mutable(world), "out");
  return Guard(Mutable(world), [&] { return Record(Mutable(world), world->world->GetChainNodePositions(
                                    FromC<ChainId>(chain), Span(reinterpret_cast<Vec3*>(out), count))); });
}

// ---- pendulums ----
void tendon_pendulum_settings_defaults(TendonPendulumSettings* c) {
  if (c == nullptr) return;
  const PendulumSettings s;
  *c = TendonPendulumSettings{s.damping, s.stiffness, s.gravity_scale, s.wind_scale, s.max_swing_degrees,
                              V(s.centre), V(s.up_axis)};
}
TendonResult tendon_bind_pendulum(TendonWorld* world, const TendonPendulumSettings* c, const TendonTransform* joint_world,
                                  TendonTransform* accessory_offset, TendonPendulumId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  return Guard(world, [&] {
    PendulumBinding b;
    b.settings = PendulumSettings{c->damping,           c->stiffness,  c->gravity_scale, c->wind_scale,
                                  c->max_swing_degrees, V(c->centre), V(c->up_axis)};
    b.joint_world = P(joint_world);
    b.accessory_offset = P(accessory_offset);
    return Take(world, world->world->BindPendulum(b), out);
  });
}
TendonResult tendon_unbind_pendulum(TendonWorld* world, TendonPendulumId pendulum) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindPendulum(FromC<PendulumId>(pendulum))); });
}

// ---- ragdolls ----
void tendon_part_settings_defaults(TendonPartSettings* c) {
  if (c == nullptr) return;
  const PartSettings s;
  *c = TendonPartSettings{};
  c->parent = s.parent;
  c->pose = T(s.pose);
  c->shape = static_cast<TendonPartShape>(s.shape.type);
  c->radius = s.shape.radius;
  c->top_radius = s.shape.top_radius;
  c->bottom_radius = s.shape.bottom_radius;
  c->half_height = s.shape.half_height;
  c->half_extents = V(s.shape.half_extents);
  c->shape_offset = T(s.shape.offset);
  c->mass = s.mass;
  c->mass_share = s.mass_share;
  c->density = s.density;
  c->friction = s.friction;
  c->restitution = s.restitution;
  c->linear_damping = s.linear_damping;
  c->angular_damping = s.angular_damping;
  c->gravity_factor = s.gravity_factor;
  c->max_linear_speed = s.max_linear_speed;
  c->max_angular_speed = s.max_angular_speed;
  const JointSettings& j = s.joint;
  c->joint_type = static_cast<TendonJointType>(j.type);
  c->joint_anchor = V(j.anchor);
  c->twist_axis = V(j.twist_axis);
  c->plane_axis = V(j.plane_axis);
  c->child_twist_axis = V(j.child_twist_axis);
  c->child_plane_axis = V(j.child_plane_axis);
  c->normal_half_cone_degrees = j.normal_half_cone_degrees;
  c->plane_half_cone_degrees = j.plane_half_cone_degrees;
  c->twist_min_degrees = j.twist_min_degrees;
  c->twist_max_degrees = j.twist_max_degrees;
  c->hinge_min_degrees = j.hinge_min_degrees;
  c->hinge_max_degrees = j.hinge_max_degrees;
  c->friction_torque_per_kg = j.friction_torque_per_kg;
  c->motor_frequency_hz = j.motor.frequency_hz;
  c->motor_damping_ratio = j.motor.damping_ratio;
  c->motor_max_torque_per_kg = j.motor.max_torque_per_kg;
  c->motor_limb_inertia = j.motor.limb_inertia ? 1 : 0;
}
void tendon_ragdoll_settings_defaults(TendonRagdollSettings* c) {
  if (c == nullptr) return;
  const RagdollSettings s;
  *c = TendonRagdollSettings{};
  c->total_mass = s.total_mass;
  c->stabilize = s.stabilize.enabled ? 1 : 0;
  c->stabilize_max_mass_ratio = s.stabilize.max_mass_ratio;
  c->stabilize_min_inertia_ratio = s.stabilize.min_inertia_ratio;
  c->collision_group = s.collision_group;
  c->collision_mask = s.collision_mask;
}
TendonResult tendon_build_ragdoll_archetype(TendonWorld* world, const TendonRagdollSettings* c,
                                            TendonRagdollArchetypeId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  if (BadArray(c->parts, c->part_count)) return BadArrayError(world, "parts");
  if (BadArray(c->self_collision_pairs, c->self_collision_pair_count)) return BadArrayError(world, "self_collision_pairs");
  for (int32_t i = 0; i < c->part_count; ++i) {
    if (OutOfEnum(EnumValue(c->parts[i].shape), TENDON_PART_BOX)) return BadEnum(world, "parts.shape");
    if (OutOfEnum(EnumValue(c->parts[i].joint_type), TENDON_JOINT_HINGE)) return BadEnum(world, "parts.joint_type");
  }
  return Guard(world, [&] {
    RagdollSettings s;
    s.name = S(c->name);
    for (const TendonPartSettings& p : Span(c->parts, c->part_count)) {
      PartSettings ps;
      ps.name = S(p.name);
      ps.parent = p.parent;
      ps.pose = T(p.pose);
      ps.shape.type = static_cast<PartShape>(p.shape);
      ps.shape.radius = p.radius;
      ps.shape.top_radius = p.top_radius;
      ps.shape.bottom_radius = p.bottom_radius;
      ps.shape.half_height = p.half_height;
      ps.shape.half_extents = V(p.half_extents);
      ps.shape.offset = T(p.shape_offset);
      ps.mass = p.mass;
      ps.mass_share = p.mass_share;
      ps.density = p.density;
      ps.friction = p.friction;
      ps.restitution = p.restitution;
      ps.linear_damping = p.linear_damping;
      ps.angular_damping = p.angular_damping;
      ps.gravity_factor = p.gravity_factor;
      ps.max_linear_speed = p.max_linear_speed;
      ps.max_angular_speed = p.max_angular_speed;
      JointSettings& j = ps.joint;
      j.type = static_cast<JointType>(p.joint_type);
      j.anchor = V(p.joint_anchor);
      j.twist_axis = V(p.twist_axis);
      j.plane_axis = V(p.plane_axis);
      j.child_twist_axis = V(p.child_twist_axis);
      j.child_plane_axis = V(p.child_plane_axis);
      j.normal_half_cone_degrees = p.normal_half_cone_degrees;
      j.plane_half_cone_degrees = p.plane_half_cone_degrees;
      j.twist_min_degrees = p.twist_min_degrees;
      j.twist_max_degrees = p.twist_max_degrees;
      j.hinge_min_degrees = p.hinge_min_degrees;
      j.hinge_max_degrees = p.hinge_max_degrees;
      j.friction_torque_per_kg = p.friction_torque_per_kg;
      j.motor = MotorSettings{p.motor_frequency_hz, p.motor_damping_ratio, p.motor_max_torque_per_kg,
                              p.motor_limb_inertia != 0};
      s.parts.push_back(std::move(ps));
    }
    s.total_mass = c->total_mass;
    s.stabilize = StabilizeSettings{c->stabilize != 0, c->stabilize_max_mass_ratio, c->stabilize_min_inertia_ratio};
    for (int32_t i = 0; i < c->self_collision_pair_count; ++i)
      s.self_collision_pairs.emplace_back(c->self_collision_pairs[2 * i], c->self_collision_pairs[2 * i + 1]);
    s.collision_group = c->collision_group;
    s.collision_mask = c->collision_mask;
    return Take(world, world->world->BuildRagdollArchetype(s), out);
  });
}
int32_t tendon_ragdoll_part_count(const TendonWorld* world, TendonRagdollArchetypeId archetype) {
  return world != nullptr ? world->world->RagdollPartCount(FromC<RagdollArchetypeId>(archetype)) : 0;
}

TendonResult tendon_build_static_world(TendonWorld* world, const TendonStaticWorldSettings* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (BadArray(c->plane_normals, c->plane_count) || BadArray(c->plane_offsets, c->plane_count))
    return BadArrayError(world, "planes");
  if (BadArray(c->sphere_centres, c->sphere_count) || BadArray(c->sphere_radii, c->sphere_count))
    return BadArrayError(world, "spheres");
  if (BadArray(c->capsule_ends, c->capsule_count) || BadArray(c->capsule_radii, c->capsule_count))
    return BadArrayError(world, "capsules");
  if (BadArray(c->box_poses, c->box_count) || BadArray(c->box_half_extents, c->box_count))
    return BadArrayError(world, "boxes");
  if (c->heightfield_samples_x < 0 || c->heightfield_samples_z < 0 ||
      (c->heightfield_samples_x > 0 && c->heightfield_heights == nullptr))
    return BadArrayError(world, "heightfield_heights");
  if (BadArray(c->mesh_vertices, c->mesh_vertex_count) || BadArray(c->mesh_indices, c->mesh_index_count))
    return BadArrayError(world, "mesh");
  return Guard(world, [&] {
    StaticWorldSettings s;
    for (int32_t i = 0; i < c->plane_count; ++i) s.planes.push_back(StaticPlane{V(c->plane_normals[i]), c->plane_offsets[i]});
    for (int32_t i = 0; i < c->sphere_count; ++i) s.spheres.push_back(StaticSphere{V(c->sphere_centres[i]), c->sphere_radii[i]});
    for (int32_t i = 0; i < c->capsule_count; ++i)
      s.capsules.push_back(StaticCapsule{V(c->capsule_ends[2 * i]), V(c->capsule_ends[2 * i + 1]), c->capsule_radii[i]});
    for (int32_t i = 0; i < c->box_count; ++i) s.boxes.push_back(StaticBox{T(c->box_poses[i]), V(c->box_half_extents[i])});
    if (c->heightfield_samples_x > 0 || c->heightfield_samples_z > 0) {
      StaticHeightfield h;
      h.origin = V(c->heightfield_origin);
      h.samples_x = c->heightfield_samples_x;
      h.samples_z = c->heightfield_samples_z;
      h.spacing = c->heightfield_spacing;
      const int64_t n = static_cast<int64_t>(h.samples_x) * h.samples_z;
      if (n > (int64_t{1} << 26))
        return Record(world, TENDON_ERROR_CAPACITY, "heightfield: more than 2^26 samples", "heightfield_samples_x");
      h.heights.assign(c->heightfield_heights, c->heightfield_heights + n);
      s.heightfields.push_back(std::move(h));
    }
    if (c->mesh_vertex_count > 0 || c->mesh_index_count > 0) {
      StaticTriangleMesh m;
      for (int32_t i = 0; i < c->mesh_vertex_count; ++i) m.vertices.push_back(V(c->mesh_vertices[i]));
      m.indices.assign(c->mesh_indices, c->mesh_indices + c->mesh_index_count);
      s.meshes.push_back(std::move(m));
    }
    return Guard(world, [&] { return Record(world, world->world->BuildStaticWorld(s)); });
  });
}

void tendon_pose_stream_defaults(TendonPoseStream* c) {
  if (c == nullptr) return;
  const PoseStream p;
  *c = TendonPoseStream{};
  c->layout = static_cast<TendonPoseLayout>(p.layout);
  c->byte_stride = p.byte_stride;
  c->translation_offset = p.translation_offset;
  c->rotation_offset = p.rotation_offset;
  c->scale_offset = p.scale_offset;
  c->rotation_order = static_cast<TendonQuatOrder>(p.rotation_order);
  c->matrix_form = static_cast<TendonMatrixForm>(p.matrix_form);
}

void tendon_ragdoll_binding_defaults(TendonRagdollBinding* c) {
  if (c == nullptr) return;
  const RagdollBinding b;
  *c = TendonRagdollBinding{};
  c->placement = T(b.placement);
  c->freeze_when_asleep = b.freeze_when_asleep ? 1 : 0;
  c->freeze_after_seconds = b.freeze_after_seconds;
  c->collide_mode = static_cast<TendonCollideMode>(b.collide_mode);
  c->enabled = b.enabled ? 1 : 0;
}
TendonResult tendon_bind_ragdoll(TendonWorld* world, const TendonRagdollBinding* c, TendonRagdollId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "binding");
  if (out == nullptr) return NullArgument(world, "out");
  if (BadArray(c->start_parts, c->start_part_count)) return BadArrayError(world, "start_parts");
  if (BadArray(c->output_parts, c->output_part_count)) return BadArrayError(world, "output_parts");
  if (OutOfEnum(EnumValue(c->collide_mode), TENDON_COLLIDE_STATIC)) return BadEnum(world, "collide_mode");
  if (TendonResult r = CheckPoseStreams(world, c->pose_streams, c->pose_stream_count); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<PoseStream> streams;
    RagdollBinding b;
    b.pose_streams = ToCpp(c->pose_streams, c->pose_stream_count, &streams);
    b.archetype = FromC<RagdollArchetypeId>(c->archetype);
    b.placement = T(c->placement);
    b.start_parts = Span(P(c->start_parts), c->start_part_count);
    b.linear_velocity = V(c->linear_velocity);
    b.angular_velocity = V(c->angular_velocity);
    b.output_parts = Span(P(c->output_parts), c->output_part_count);
    b.kinematic_root = P(c->kinematic_root);
    b.freeze_when_asleep = c->freeze_when_asleep != 0;
    b.freeze_after_seconds = c->freeze_after_seconds;
    b.planar_normal = V(c->planar_normal);
    b.collide_mode = static_cast<RagdollCollideMode>(c->collide_mode);
    b.enabled = c->enabled != 0;
    return Take(world, world->world->BindRagdoll(b), out);
  });
}
TendonResult tendon_unbind_ragdoll(TendonWorld* world, TendonRagdollId ragdoll) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindRagdoll(FromC<RagdollId>(ragdoll))); });
}
TendonResult tendon_set_ragdoll_enabled(TendonWorld* world, TendonRagdollId ragdoll, int32_t enabled) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetRagdollEnabled(FromC<RagdollId>(ragdoll), enabled != 0)); });
}
TendonResult tendon_apply_ragdoll_impulse(TendonWorld* world, TendonRagdollId ragdoll, int32_t part, TendonVec3 impulse,
                                          TendonVec3 world_point) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->ApplyRagdollImpulse(FromC<RagdollId>(ragdoll), part, V(impulse), V(world_point))); });
}
TendonResult tendon_wake_ragdoll(TendonWorld* world, TendonRagdollId ragdoll) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->WakeRagdoll(FromC<RagdollId>(ragdoll))); });
}
int32_t tendon_ragdoll_is_asleep(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr && world->world->IsRagdollAsleep(FromC<RagdollId>(ragdoll)) ? 1 : 0;
}

int32_t tendon_raycast_ragdolls(const TendonWorld* world, TendonVec3 origin, TendonVec3 direction, float max_distance,
                                TendonRaycastHit* hit) {
  if (world == nullptr) return 0;
  RaycastHit h;
  return RaycastOut(world->world->RaycastRagdolls(V(origin), V(direction), max_distance, &h), h, hit);
}
int32_t tendon_raycast_static(const TendonWorld* world, TendonVec3 origin, TendonVec3 direction, float max_distance,
                              TendonRaycastHit* hit) {
  if (world == nullptr) return 0;
  RaycastHit h;
  return RaycastOut(world->world->RaycastStatic(V(origin), V(direction), max_distance, &h), h, hit);
}

// ---- characters ----
void tendon_character_settings_defaults(TendonCharacterSettings* c) {
  if (c == nullptr) return;
  const CharacterSettings s;
  *c = TendonCharacterSettings{};
  c->total_mass = s.total_mass;
  c->friction = s.friction;
  c->linear_damping = s.linear_damping;
  c->angular_damping = s.angular_damping;
  c->drive_frequency_hz = s.drive_frequency_hz;
  c->drive_damping_ratio = s.drive_damping_ratio;
  c->drive_torque_per_kg = s.drive_torque_per_kg;
  c->joint_friction_per_kg = s.joint_friction_per_kg;
  c->limit_source = static_cast<TendonLimitSource>(s.limit_source);
  c->limits_margin_degrees = s.limits_margin_degrees;
  c->collision_group = s.collision_group;
  c->collision_mask = s.collision_mask;
}
TendonResult tendon_build_character_archetype(TendonWorld* world, const TendonCharacterSettings* c,
                                              TendonCharacterArchetypeId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  if (BadArray(c->bone_names, c->bone_count) || BadArray(c->bone_parents, c->bone_count) ||
      BadArray(c->bone_rest_local, c->bone_count))
    return BadArrayError(world, "bones");
  if (BadArray(c->humanoid_bones, c->humanoid_bone_count)) return BadArrayError(world, "humanoid_bones");
  if (BadArray(c->limit_clips, c->limit_clip_count)) return BadArrayError(world, "limit_clips");
  if (OutOfEnum(EnumValue(c->limit_source), TENDON_LIMITS_CLIPS)) return BadEnum(world, "limit_source");
  return Guard(world, [&] {
    CharacterSettings s;
    s.name = S(c->name);
    for (int32_t i = 0; i < c->bone_count; ++i) {
      s.skeleton.names.push_back(S(c->bone_names[i]));
      s.skeleton.parents.push_back(c->bone_parents[i]);
      s.skeleton.rest_local.push_back(T(c->bone_rest_local[i]));
    }
    for (const TendonHumanoidBone& h : Span(c->humanoid_bones, c->humanoid_bone_count))
      s.humanoid_bones.emplace_back(S(h.role), h.bone);
    s.total_mass = c->total_mass;
    s.friction = c->friction;
    s.linear_damping = c->linear_damping;
    s.angular_damping = c->angular_damping;
    s.drive_frequency_hz = c->drive_frequency_hz;
    s.drive_damping_ratio = c->drive_damping_ratio;
    s.drive_torque_per_kg = c->drive_torque_per_kg;
    s.joint_friction_per_kg = c->joint_friction_per_kg;
    s.limit_source = static_cast<LimitSource>(c->limit_source);
    for (int32_t i = 0; i < c->limit_clip_count; ++i) {
      const TendonSampledClip& clip = c->limit_clips[i];
      if (BadArray(clip.local, clip.frame_count)) return BadArrayError(world, "limit_clips.local");
      SampledClip sc;
      sc.name = S(clip.name);
      sc.frame_count = clip.frame_count;
      const int64_t n = static_cast<int64_t>(clip.frame_count) * c->bone_count;
      if (n > (int64_t{1} << 24)) return Record(world, TENDON_ERROR_CAPACITY, "a clip of more than 2^24 transforms", "limit_clips", i);
      for (int64_t k = 0; k < n; ++k) sc.local.push_back(T(clip.local[k]));
      s.limit_clips.push_back(std::move(sc));
    }
    s.limits_margin_degrees = c->limits_margin_degrees;
    s.collision_group = c->collision_group;
    s.collision_mask = c->collision_mask;
    return Take(world, world->world->BuildCharacterArchetype(s), out);
  });
}
int32_t tendon_character_part_count(const TendonWorld* world, TendonCharacterArchetypeId archetype) {
  return world != nullptr ? world->world->CharacterPartCount(FromC<CharacterArchetypeId>(archetype)) : 0;
}
int32_t tendon_find_character_part(const TendonWorld* world, TendonCharacterArchetypeId archetype, const char* name) {
  if (world == nullptr || name == nullptr) return -1;
  return world->world->FindCharacterPart(FromC<CharacterArchetypeId>(archetype), name);
}
void tendon_character_binding_defaults(TendonCharacterBinding* c) {
  if (c == nullptr) return;
  const CharacterBinding b;
  *c = TendonCharacterBinding{};
  c->collide_mode = static_cast<TendonCollideMode>(b.collide_mode);
  c->freeze_when_settled = b.freeze_when_settled ? 1 : 0;
  c->freeze_after_seconds = b.freeze_after_seconds;
}
TendonResult tendon_bind_character(TendonWorld* world, const TendonCharacterBinding* c, TendonCharacterId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "binding");
  if (out == nullptr) return NullArgument(world, "out");
  if (c->bone_count < 0) return BadArrayError(world, "bone_count");
  if (OutOfEnum(EnumValue(c->collide_mode), TENDON_COLLIDE_STATIC)) return BadEnum(world, "collide_mode");
  if (TendonResult r = CheckPoseStreams(world, c->pose_streams, c->pose_stream_count); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<PoseStream> streams;
    return Take(world, world->world->BindCharacter(ToCpp(*c, &streams)), out);
  });
}
TendonResult tendon_rebind_character(TendonWorld* world, TendonCharacterId character, const TendonCharacterBinding* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "binding");
  if (c->bone_count < 0) return BadArrayError(world, "bone_count");
  if (OutOfEnum(EnumValue(c->collide_mode), TENDON_COLLIDE_STATIC)) return BadEnum(world, "collide_mode");
  if (TendonResult r = CheckPoseStreams(world, c->pose_streams, c->pose_stream_count); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<PoseStream> streams;
    return Record(world, world->world->RebindCharacter(FromC<CharacterId>(character), ToCpp(*c, &streams)));
  });
}
TendonResult tendon_unbind_character(TendonWorld* world, TendonCharacterId character) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindCharacter(FromC<CharacterId>(character))); });
}
void tendon_activate_options_defaults(TendonActivateOptions* c) {
  if (c == nullptr) return;
  const CharacterActivateOptions o;
  *c = TendonActivateOptions{V(o.launch_velocity), V(o.impulse), -1.0f, -1, o.duration_seconds, o.release_blend_seconds};
}
TendonResult tendon_activate_character(TendonWorld* world, TendonCharacterId character, const TendonActivateOptions* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  CharacterActivateOptions o;
  if (c != nullptr) {
    o.launch_velocity = V(c->launch_velocity);
    o.impulse = V(c->impulse);
    if (c->strength >= 0.0f) o.strength = c->strength;
    if (c->anchored >= 0) o.anchored = c->anchored != 0;
    o.duration_seconds = c->duration_seconds;
    o.release_blend_seconds = c->release_blend_seconds;
  }
  return Guard(world, [&] {
    Error why;
    if (world->world->ActivateCharacter(FromC<CharacterId>(character), o, &why)) return TENDON_OK;
    if (why.code == ErrorCode::kNone) return Record(world, TENDON_ERROR_CAPACITY, "the character could not be activated");
    return Record(world, why);
  });
}
TendonResult tendon_deactivate_character(TendonWorld* world, TendonCharacterId character, float blend_seconds,
                                         TendonHandBackSpace space) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (OutOfEnum(EnumValue(space), TENDON_HAND_BACK_MODEL)) return BadEnum(world, "space");
  return Guard(world, [&] { return Record(world, world->world->DeactivateCharacter(FromC<CharacterId>(character), blend_seconds,
                                                          static_cast<HandBackSpace>(space))); });
}
TendonResult tendon_set_character_strength(TendonWorld* world, TendonCharacterId character, float strength) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetCharacterStrength(FromC<CharacterId>(character), strength)); });
}
TendonResult tendon_set_character_anchored(TendonWorld* world, TendonCharacterId character, int32_t anchored) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetCharacterAnchored(FromC<CharacterId>(character), anchored != 0)); });
}
void tendon_hit_options_defaults(TendonHitOptions* c) {
  if (c == nullptr) return;
  const CharacterHitOptions o;
  *c = TendonHitOptions{o.duration_seconds, o.blend_seconds, o.strength};
}
TendonResult tendon_hit_character(TendonWorld* world, TendonCharacterId character, int32_t part, TendonVec3 impulse,
                                  TendonVec3 world_point, const TendonHitOptions* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  CharacterHitOptions o;
  if (c != nullptr) o = CharacterHitOptions{c->duration_seconds, c->blend_seconds, c->strength};
  return Guard(world, [&] {
    Error why;
    if (world->world->HitCharacter(FromC<CharacterId>(character), part, V(impulse), V(world_point), o, &why)) return TENDON_OK;
    if (why.code == ErrorCode::kNone) return Record(world, TENDON_ERROR_CAPACITY, "the hit was not taken");
    return Record(world, why);
  });
}
TendonResult tendon_character_go_limp(TendonWorld* world, TendonCharacterId character, float seconds) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->GoLimp(FromC<CharacterId>(character), seconds)); });
}
TendonResult tendon_apply_character_impulse(TendonWorld* world, TendonCharacterId character, TendonVec3 impulse) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->ApplyCharacterImpulse(FromC<CharacterId>(character), V(impulse))); });
}
TendonResult tendon_get_character_state(const TendonWorld* world, TendonCharacterId character, TendonCharacterState* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  CharacterState s;
  if (Error e = world->world->GetCharacterState(FromC<CharacterId>(character), &s); e.code != ErrorCode::kNone)
    return Record(Mutable(world), e);
  *out = TendonCharacterState{s.active ? 1 : 0,  s.blending_out ? 1 : 0, s.settled ? 1 : 0, s.anchored ? 1 : 0,
                              s.strength,        s.generation,           T(s.root),         V(s.root_velocity),
                              s.speed,           s.total_mass,           s.unanchored_mass, static_cast<TendonFacing>(s.facing),
                              s.heading_degrees};
  return TENDON_OK;
}
TendonResult tendon_get_character_recovery_root(const TendonWorld* world, TendonCharacterId character, float leg_room,
                                                TendonTransform* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  Transform t;
  if (Error e = world->world->GetCharacterRecoveryRoot(FromC<CharacterId>(character), leg_room, &t); e.code != ErrorCode::kNone)
    return Record(Mutable(world), e);
  *out = T(t);
  return TENDON_OK;
}
TendonRagdollId tendon_character_ragdoll(const TendonWorld* world, TendonCharacterId character) {
  return world != nullptr ? ToC(world->world->CharacterRagdoll(FromC<CharacterId>(character))) : 0;
}
int32_t tendon_drain_character_events(TendonWorld* world, TendonCharacterEvent* out, int32_t capacity) {
  if (world == nullptr || out == nullptr || capacity <= 0) return 0;
  CharacterEvent events[64];
  int32_t total = 0;
  while (total < capacity) {
    const int32_t want = std::min<int32_t>(64, capacity - total);
    const int32_t got = world->world->DrainCharacterEvents(std::span<CharacterEvent>(events, static_cast<std::size_t>(want)));
    for (int32_t i = 0; i < got; ++i) {
      const CharacterEvent& e = events[i];
      out[total++] = TendonCharacterEvent{static_cast<TendonEventType>(e.type), ToC(e.character), e.generation,
                                          static_cast<TendonEndReason>(e.reason), e.time};
    }
    if (got < want) break;
  }
  return total;
}

// ---- VRM avatars ----
void tendon_vrm_options_defaults(TendonVrmOptions* c) {
  if (c == nullptr) return;
  const ports::VrmAvatarOptions o;
  *c = TendonVrmOptions{o.character ? 1 : 0, o.total_mass, static_cast<TendonLimitSource>(o.limit_source)};
}
TendonResult tendon_load_vrm_kind(TendonWorld* world, const char* path, const TendonVrmOptions* options, TendonVrmKindId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (path == nullptr) return NullArgument(world, "path");
  if (out == nullptr) return NullArgument(world, "out");
  if (options != nullptr && OutOfEnum(EnumValue(options->limit_source), TENDON_LIMITS_CLIPS))
    return BadEnum(world, "options.limit_source");
  return Guard(world, [&] { return TakeKind(world, ports::VrmAvatarArchetype::Load(*world->world, path, ToCpp(options)), out); });
}
TendonResult tendon_load_vrm_kind_from_memory(TendonWorld* world, const void* bytes, size_t size, const char* name,
                                              const TendonVrmOptions* options, TendonVrmKindId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (bytes == nullptr && size > 0) return NullArgument(world, "bytes");
  if (out == nullptr) return NullArgument(world, "out");
  if (options != nullptr && OutOfEnum(EnumValue(options->limit_source), TENDON_LIMITS_CLIPS))
    return BadEnum(world, "options.limit_source");
  return Guard(world, [&] {
    const std::span<const uint8_t> span(static_cast<const uint8_t*>(bytes), size);
    return TakeKind(world, ports::VrmAvatarArchetype::Load(*world->world, span, name != nullptr ? name : "memory", ToCpp(options)),
                    out);
  });
}
int32_t tendon_vrm_kind_bone_count(const TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return 0;
  auto* k = Mutable(world)->vrm_kinds.Find(kind);
  return k != nullptr ? static_cast<int32_t>((*k)->asset().skeleton.parents.size()) : 0;
}
int32_t tendon_vrm_kind_joint_count(const TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return 0;
  auto* k = Mutable(world)->vrm_kinds.Find(kind);
  return k != nullptr ? (*k)->joint_count() : 0;
}
TendonResult tendon_bind_vrm_avatar(TendonWorld* world, TendonVrmKindId kind, TendonTransform model_world,
                                    TendonVrmAvatarId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(world, "out");
  auto* k = world->vrm_kinds.Find(kind);
  if (k == nullptr) return Record(world, TENDON_ERROR_STALE_HANDLE, "the avatar kind id is null or stale", "kind");
  return Guard(world, [&] {
    auto bound = ports::VrmAvatar::Bind(*world->world, *k, T(model_world));
    if (!bound.ok()) return Record(world, bound.error());
    *out = world->vrm_avatars.Add(std::move(bound).value());
    return TENDON_OK;
  });
}
TendonResult tendon_unbind_vrm_avatar(TendonWorld* world, TendonVrmAvatarId avatar) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  auto* a = world->vrm_avatars.Find(avatar);
  if (a == nullptr) return Record(world, TENDON_ERROR_STALE_HANDLE, "the avatar id is null or stale", "avatar");
  return Guard(world, [&] {
    const Error e = (*a)->Unbind();
    if (e.code != ErrorCode::kReentrant) world->vrm_avatars.Remove(avatar);  // mid-frame: still bound
    return Record(world, e);
  });
}
TendonResult tendon_vrm_avatar_buffers(TendonWorld* world, TendonVrmAvatarId avatar, TendonVrmAvatarBuffers* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(world, "out");
  auto* a = world->vrm_avatars.Find(avatar);
  if (a == nullptr) return Record(world, TENDON_ERROR_STALE_HANDLE, "the avatar id is null or stale", "avatar");
  ports::VrmAvatar& v = **a;
  out->model_world = reinterpret_cast<TendonTransform*>(&v.model_world);
  out->animated_local = reinterpret_cast<TendonTransform*>(v.animated_local.data());
  out->output_local = reinterpret_cast<const TendonTransform*>(v.output_local.data());
  out->output_world = reinterpret_cast<const TendonTransform*>(v.output_world.data());
  out->bone_count = static_cast<int32_t>(v.animated_local.size());
  out->character = ToC(v.character);
  return TENDON_OK;
}
TendonResult tendon_vrm_avatar_update_world(TendonWorld* world, TendonVrmAvatarId avatar) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  auto* a = world->vrm_avatars.Find(avatar);
  if (a == nullptr) return Record(world, TENDON_ERROR_STALE_HANDLE, "the avatar id is null or stale", "avatar");
  (*a)->UpdateWorld();
  return TENDON_OK;
}

}  // extern "C"
