// ports/c/c_host_bodies.cpp: the C ABI's host bodies (tendon/host_body.h): kinematic shapes
// the host moves, which push and carry ragdolls one way.
#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonHostBodySettings, HostBodySettings> : TableOf<TendonHostBodySettings, HostBodySettings> {
  using Rows = RowList<Field<&C::shape, &P::shape>, Field<&C::radius, &P::radius>, Field<&C::half_height, &P::half_height>,
                       Field<&C::half_extents, &P::half_extents>, Field<&C::transform, &P::transform>,
                       Field<&C::linear_velocity, &P::linear_velocity>, Field<&C::angular_velocity, &P::angular_velocity>,
                       Field<&C::collision_group, &P::collision_group>, Field<&C::collision_mask, &P::collision_mask>,
                       Field<&C::trigger, &P::trigger>, Field<&C::friction, &P::friction>,
                       Field<&C::restitution, &P::restitution>>;
};
TENDON_C_CHECK_MIRROR(TendonHostBodySettings, tendon::HostBodySettings);

template <>
struct MirrorTable<TendonHostBodyState, HostBodyState> : TableOf<TendonHostBodyState, HostBodyState> {
  using Rows = RowList<Field<&C::transform, &P::transform>, Field<&C::linear_velocity, &P::linear_velocity>,
                       Field<&C::angular_velocity, &P::angular_velocity>,
                       Field<&C::overlapping_parts, &P::overlapping_parts>>;
};
TENDON_C_CHECK_MIRROR(TendonHostBodyState, tendon::HostBodyState);

static_assert(TENDON_HOST_BODY_SPHERE == static_cast<int>(HostBodyShape::kSphere) &&
              TENDON_HOST_BODY_CAPSULE == static_cast<int>(HostBodyShape::kCapsule) &&
              TENDON_HOST_BODY_BOX == static_cast<int>(HostBodyShape::kBox));
static_assert(TENDON_INACTIVE_BODIES_NONE == static_cast<int>(CharacterInactiveBodies::kNone) &&
              TENDON_INACTIVE_BODIES_KINEMATIC == static_cast<int>(CharacterInactiveBodies::kKinematic));

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::HostBodyId;

extern "C" {

void tendon_host_body_settings_defaults(TendonHostBodySettings* settings) {
  if (settings == nullptr) return;
  *settings = TendonHostBodySettings{};
  MirrorOut(tendon::HostBodySettings{}, *settings);
}
TendonResult tendon_add_host_body(TendonWorld* world, const TendonHostBodySettings* settings, TendonHostBodyId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (settings == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  if (OutOfEnum(EnumValue(settings->shape), TENDON_HOST_BODY_BOX)) return BadEnum(world, "shape");
  return Guard(world, [&] {
    tendon::HostBodySettings s;
    MirrorIn(*settings, s);
    return Take(world, world->world->AddHostBody(s), out);
  });
}
TendonResult tendon_remove_host_body(TendonWorld* world, TendonHostBodyId body) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->RemoveHostBody(IdFromC<HostBodyId>(body))); });
}
int32_t tendon_host_body_is_valid(const TendonWorld* world, TendonHostBodyId body) {
  return world != nullptr && world->world->IsValid(IdFromC<HostBodyId>(body)) ? 1 : 0;
}
TendonResult tendon_set_host_body_motion(TendonWorld* world, TendonHostBodyId body, const TendonTransform* transform,
                                         TendonVec3 linear_velocity, TendonVec3 angular_velocity) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (transform == nullptr) return NullArgument(world, "transform");
  return Guard(world, [&] {
    return Record(world, world->world->SetHostBodyMotion(IdFromC<HostBodyId>(body), ToCpp(*transform),
                                                         ToCpp(linear_velocity), ToCpp(angular_velocity)));
  });
}
TendonResult tendon_move_host_body_to(TendonWorld* world, TendonHostBodyId body, const TendonTransform* target) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (target == nullptr) return NullArgument(world, "target");
  return Guard(world, [&] { return Record(world, world->world->MoveHostBodyTo(IdFromC<HostBodyId>(body), ToCpp(*target))); });
}
TendonResult tendon_get_host_body_state(const TendonWorld* world, TendonHostBodyId body, TendonHostBodyState* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  tendon::HostBodyState s;
  if (const tendon::Error e = world->world->GetHostBodyState(IdFromC<HostBodyId>(body), &s);
      e.code != tendon::ErrorCode::kNone)
    return Record(Mutable(world), e);
  *out = TendonHostBodyState{};
  MirrorOut(s, *out);
  return TENDON_OK;
}
int32_t tendon_host_body_count(const TendonWorld* world) {
  return world != nullptr ? world->world->HostBodyCount() : 0;
}

}  // extern "C"
