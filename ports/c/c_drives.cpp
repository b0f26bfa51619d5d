// ports/c/c_drives.cpp: the C ABI's grab, drag, hold, push and throw: part drives (add, move
// the target, remove, read the state, the handle check), a ragdoll's acceleration, part
// forces and the throw (tendon/part_drive.h).
//
// TendonPartDriveSettings and TendonPartDriveState mirror tendon::PartDriveSettings and
// PartDriveState through the tables below (compile-time checked).
// What it does NOT do: validate (the World does, naming the field).
// Threading: as the C++ World. Memory: adding a drive may allocate in the World.
#include "ports/c/c_port.h"
#include "tendon/part_drive.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonPartDriveSettings, PartDriveSettings> : TableOf<TendonPartDriveSettings, PartDriveSettings> {
  using Rows = RowList<Field<&C::part, &P::part>, Field<&C::local_point, &P::local_point>, Field<&C::target, &P::target>,
                       Field<&C::response_time, &P::response_time>, Field<&C::max_force, &P::max_force>,
                       Field<&C::damping_ratio, &P::damping_ratio>, Field<&C::break_distance, &P::break_distance>>;
};
TENDON_C_CHECK_MIRROR(TendonPartDriveSettings, tendon::PartDriveSettings);

template <>
struct MirrorTable<TendonPartDriveState, PartDriveState> : TableOf<TendonPartDriveState, PartDriveState> {
  using Rows = RowList<Field<&C::active, &P::active>, Field<&C::broken, &P::broken>, Field<&C::distance, &P::distance>,
                       Field<&C::force, &P::force>, Field<&C::target, &P::target>>;
};
TENDON_C_CHECK_MIRROR(TendonPartDriveState, tendon::PartDriveState);

static_assert(TENDON_MAX_PART_DRIVES == tendon::kMaxPartDrives, "TENDON_MAX_PART_DRIVES");
static_assert(TENDON_MAX_PART_FORCES == tendon::kMaxPartForces, "TENDON_MAX_PART_FORCES");

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::PartDriveId;
using tendon::RagdollId;

extern "C" {

void tendon_part_drive_settings_defaults(TendonPartDriveSettings* c) {
  if (c == nullptr) return;
  *c = TendonPartDriveSettings{};
  MirrorOut(tendon::PartDriveSettings{}, *c);
}
TendonResult tendon_add_part_drive(TendonWorld* world, TendonRagdollId ragdoll, const TendonPartDriveSettings* settings,
                                   TendonPartDriveId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (settings == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  return Guard(world, [&] {
    tendon::PartDriveSettings s;
    MirrorIn(*settings, s);
    return Take(world, world->world->AddPartDrive(IdFromC<RagdollId>(ragdoll), s), out);
  });
}
TendonResult tendon_set_part_drive_target(TendonWorld* world, TendonPartDriveId drive, TendonVec3 target) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetPartDriveTarget(IdFromC<PartDriveId>(drive), ToCpp(target))); });
}
TendonResult tendon_remove_part_drive(TendonWorld* world, TendonPartDriveId drive) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->RemovePartDrive(IdFromC<PartDriveId>(drive))); });
}
TendonResult tendon_get_part_drive_state(const TendonWorld* world, TendonPartDriveId drive, TendonPartDriveState* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  return Guard(Mutable(world), [&] {
    tendon::PartDriveState st;
    const tendon::Error e = world->world->GetPartDriveState(IdFromC<PartDriveId>(drive), &st);
    if (e.code != tendon::ErrorCode::kNone) return Record(Mutable(world), e);
    *out = TendonPartDriveState{};
    MirrorOut(st, *out);
    return TENDON_OK;
  });
}
int32_t tendon_part_drive_is_valid(const TendonWorld* world, TendonPartDriveId drive) {
  return world != nullptr && world->world->IsValid(IdFromC<PartDriveId>(drive)) ? 1 : 0;
}
TendonResult tendon_set_ragdoll_acceleration(TendonWorld* world, TendonRagdollId ragdoll, TendonVec3 acceleration) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollAcceleration(IdFromC<RagdollId>(ragdoll), ToCpp(acceleration)));
  });
}
TendonResult tendon_set_ragdoll_part_force(TendonWorld* world, TendonRagdollId ragdoll, int32_t part, TendonVec3 force) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollPartForce(IdFromC<RagdollId>(ragdoll), part, ToCpp(force)));
  });
}
TendonResult tendon_throw_ragdoll(TendonWorld* world, TendonRagdollId ragdoll, TendonVec3 direction, float strength,
                                  float min_speed, float max_speed, TendonVec3* velocity) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    auto r = world->world->ThrowRagdoll(IdFromC<RagdollId>(ragdoll), ToCpp(direction), strength, min_speed, max_speed);
    if (!r.ok()) return Record(world, r.error());
    if (velocity != nullptr) *velocity = ToC(r.value());
    return Record(world, tendon::Error{});
  });
}

}  // extern "C"
