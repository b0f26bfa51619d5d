// ports/c/c_net_snapshot.cpp: the C ABI's network snapshots (tendon/net_snapshot.h): the
// pose and character state codecs, and the World's capture and apply calls.
//
// What it does: checks the host's pointers and counts, converts the settings and states
// through their mirror tables and a pose view by hand (NetPoseToCpp: NULL velocity arrays
// are empty spans), and forwards. A codec's refusal is the calling thread's last error (no
// world is involved); a World call's is the world's too.
// What it does NOT do: own, copy or allocate (the host's arrays are written in place).
// Threading: the codecs on any thread; the World calls as the C++ World.
#include <cstddef>
#include <span>

#include "ports/c/c_mirror.h"
#include "ports/c/c_port.h"
#include "tendon/net_snapshot.h"

using namespace tendon::ports::capi;

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonNetPoseSettings, NetPoseSettings> : TableOf<TendonNetPoseSettings, NetPoseSettings> {
  using Rows = RowList<Field<&C::position_precision, &P::position_precision>,
                       Field<&C::position_range, &P::position_range>, Field<&C::rotation_bits, &P::rotation_bits>,
                       Field<&C::include_velocities, &P::include_velocities>,
                       Field<&C::linear_precision, &P::linear_precision>, Field<&C::linear_range, &P::linear_range>,
                       Field<&C::angular_precision, &P::angular_precision>,
                       Field<&C::angular_range, &P::angular_range>>;
};
TENDON_C_CHECK_MIRROR(TendonNetPoseSettings, tendon::NetPoseSettings);

template <>
struct MirrorTable<TendonNetCharacterState, NetCharacterState> : TableOf<TendonNetCharacterState, NetCharacterState> {
  using Rows = RowList<Field<&C::generation, &P::generation>, Field<&C::active, &P::active>,
                       Field<&C::anchored, &P::anchored>, Field<&C::limp, &P::limp>,
                       Field<&C::limp_seconds, &P::limp_seconds>, Field<&C::strength, &P::strength>,
                       Field<&C::impulse, &P::impulse>>;
};
TENDON_C_CHECK_MIRROR(TendonNetCharacterState, tendon::NetCharacterState);

}  // namespace tendon::ports::capi

namespace {

using tendon::NetCharacterState;
using tendon::NetPose;
using tendon::NetPoseSettings;

// The view's arrays as spans; false (and `why` set) for a NULL array with a count, a
// negative count, or velocities given by halves.
bool NetPoseToCpp(const TendonNetPose& c, NetPose* out, const char** why) {
  if (c.part_count < 0 || (c.part_count > 0 && c.parts == nullptr)) {
    *why = "parts";
    return false;
  }
  if ((c.linear == nullptr) != (c.angular == nullptr)) {
    *why = "linear";
    return false;
  }
  out->tick = c.tick;
  out->parts = std::span(reinterpret_cast<tendon::Transform*>(c.parts), static_cast<std::size_t>(c.part_count));
  const std::size_t v = c.linear != nullptr ? static_cast<std::size_t>(c.part_count) : 0;
  out->linear = std::span(reinterpret_cast<tendon::Vec3*>(c.linear), v);
  out->angular = std::span(reinterpret_cast<tendon::Vec3*>(c.angular), v);
  out->asleep = c.asleep != 0;
  out->has_velocities = c.has_velocities != 0;
  return true;
}

NetPoseSettings SettingsIn(const TendonNetPoseSettings* c) {
  NetPoseSettings s;
  if (c != nullptr) MirrorIn(*c, s);
  return s;
}

}  // namespace

extern "C" {

void tendon_net_pose_settings_defaults(TendonNetPoseSettings* settings) {
  if (settings == nullptr) return;
  *settings = TendonNetPoseSettings{};
  MirrorOut(NetPoseSettings{}, *settings);
}

size_t tendon_max_net_pose_bytes(int32_t part_count, const TendonNetPoseSettings* settings) {
  return tendon::MaxNetPoseBytes(part_count, SettingsIn(settings));
}

TendonResult tendon_encode_net_pose(const TendonNetPose* pose, const TendonNetPose* baseline,
                                    const TendonNetPoseSettings* settings, uint8_t* out, size_t capacity,
                                    size_t* written) {
  if (pose == nullptr) return NullArgument(nullptr, "pose");
  if (written == nullptr) return NullArgument(nullptr, "written");
  if (out == nullptr && capacity > 0) return NullArgument(nullptr, "out");
  *written = 0;
  NetPose p, b;
  const char* why = nullptr;
  if (!NetPoseToCpp(*pose, &p, &why)) return BadArrayError(nullptr, why);
  if (baseline != nullptr && !NetPoseToCpp(*baseline, &b, &why)) return BadArrayError(nullptr, why);
  return Guard(nullptr, [&] {
    const tendon::Result<std::size_t> r =
        tendon::EncodeNetPose(p, baseline != nullptr ? &b : nullptr, SettingsIn(settings),
                              std::span(reinterpret_cast<std::byte*>(out), capacity));
    if (!r.ok()) return Record(nullptr, r.error());
    *written = r.value();
    return TENDON_OK;
  });
}

TendonResult tendon_decode_net_pose(const uint8_t* bytes, size_t size, const TendonNetPose* baseline,
                                    const TendonNetPoseSettings* settings, TendonNetPose* out) {
  if (bytes == nullptr && size > 0) return NullArgument(nullptr, "bytes");
  if (out == nullptr) return NullArgument(nullptr, "out");
  NetPose o, b;
  const char* why = nullptr;
  if (!NetPoseToCpp(*out, &o, &why)) return BadArrayError(nullptr, why);
  if (baseline != nullptr && !NetPoseToCpp(*baseline, &b, &why)) return BadArrayError(nullptr, why);
  return Guard(nullptr, [&] {
    const tendon::Error e = tendon::DecodeNetPose(std::span(reinterpret_cast<const std::byte*>(bytes), size),
                                                  baseline != nullptr ? &b : nullptr, SettingsIn(settings), &o);
    if (e.code != tendon::ErrorCode::kNone) return Record(nullptr, e);
    out->tick = o.tick;
    out->asleep = o.asleep ? 1 : 0;
    out->has_velocities = o.has_velocities ? 1 : 0;
    return TENDON_OK;
  });
}

TendonResult tendon_net_pose_part_count(const uint8_t* bytes, size_t size, int32_t* out) {
  if (bytes == nullptr && size > 0) return NullArgument(nullptr, "bytes");
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = 0;
  return Guard(nullptr, [&] {
    const tendon::Result<int32_t> r =
        tendon::NetPosePartCount(std::span(reinterpret_cast<const std::byte*>(bytes), size));
    if (!r.ok()) return Record(nullptr, r.error());
    *out = r.value();
    return TENDON_OK;
  });
}

TendonResult tendon_net_pose_baseline_tick(const uint8_t* bytes, size_t size, int32_t* out) {
  if (bytes == nullptr && size > 0) return NullArgument(nullptr, "bytes");
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = 0;
  return Guard(nullptr, [&] {
    const tendon::Result<int32_t> r =
        tendon::NetPoseBaselineTick(std::span(reinterpret_cast<const std::byte*>(bytes), size));
    if (!r.ok()) return Record(nullptr, r.error());
    *out = r.value();
    return TENDON_OK;
  });
}

TendonResult tendon_capture_ragdoll_pose(const TendonWorld* world, TendonRagdollId ragdoll, TendonNetPose* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  NetPose o;
  const char* why = nullptr;
  if (!NetPoseToCpp(*out, &o, &why)) return BadArrayError(Mutable(world), why);
  return Guard(Mutable(world), [&] {
    const tendon::Error e = world->world->CaptureRagdollPose(IdFromC<tendon::RagdollId>(ragdoll), &o);
    if (e.code != tendon::ErrorCode::kNone) return Record(Mutable(world), e);
    out->asleep = o.asleep ? 1 : 0;
    out->has_velocities = o.has_velocities ? 1 : 0;
    return TENDON_OK;
  });
}

void tendon_net_character_state_defaults(TendonNetCharacterState* state) {
  if (state == nullptr) return;
  *state = TendonNetCharacterState{};
  MirrorOut(NetCharacterState{}, *state);
}

TendonResult tendon_encode_net_character_state(const TendonNetCharacterState* state, uint8_t* out, size_t capacity,
                                               size_t* written) {
  if (state == nullptr) return NullArgument(nullptr, "state");
  if (written == nullptr) return NullArgument(nullptr, "written");
  if (out == nullptr && capacity > 0) return NullArgument(nullptr, "out");
  *written = 0;
  NetCharacterState s;
  MirrorIn(*state, s);
  return Guard(nullptr, [&] {
    const tendon::Result<std::size_t> r =
        tendon::EncodeNetCharacterState(s, std::span(reinterpret_cast<std::byte*>(out), capacity));
    if (!r.ok()) return Record(nullptr, r.error());
    *written = r.value();
    return TENDON_OK;
  });
}

TendonResult tendon_decode_net_character_state(const uint8_t* bytes, size_t size, TendonNetCharacterState* out) {
  if (bytes == nullptr && size > 0) return NullArgument(nullptr, "bytes");
  if (out == nullptr) return NullArgument(nullptr, "out");
  return Guard(nullptr, [&] {
    NetCharacterState s;
    const tendon::Error e =
        tendon::DecodeNetCharacterState(std::span(reinterpret_cast<const std::byte*>(bytes), size), &s);
    if (e.code != tendon::ErrorCode::kNone) return Record(nullptr, e);
    *out = TendonNetCharacterState{};
    MirrorOut(s, *out);
    return TENDON_OK;
  });
}

TendonResult tendon_capture_net_character_state(const TendonWorld* world, TendonCharacterId character,
                                                TendonNetCharacterState* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  return Guard(Mutable(world), [&] {
    NetCharacterState s;
    const tendon::Error e = world->world->CaptureNetCharacterState(IdFromC<tendon::CharacterId>(character), &s);
    if (e.code != tendon::ErrorCode::kNone) return Record(Mutable(world), e);
    *out = TendonNetCharacterState{};
    MirrorOut(s, *out);
    return TENDON_OK;
  });
}

TendonResult tendon_apply_net_character_state(TendonWorld* world, TendonCharacterId character,
                                              const TendonNetCharacterState* state, int32_t* applied) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (state == nullptr) return NullArgument(world, "state");
  if (applied != nullptr) *applied = 0;
  NetCharacterState s;
  MirrorIn(*state, s);
  return Guard(world, [&] {
    const tendon::Result<bool> r = world->world->ApplyNetCharacterState(IdFromC<tendon::CharacterId>(character), s);
    if (!r.ok()) return Record(world, r.error());
    if (applied != nullptr) *applied = r.value() ? 1 : 0;
    return TENDON_OK;
  });
}

}  // extern "C"
