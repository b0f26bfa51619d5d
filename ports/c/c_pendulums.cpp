// ports/c/c_pendulums.cpp: the C ABI's accessory pendulums: settings defaults, bind and
// unbind, the handle check and the bob's state.
//
// TendonPendulumSettings mirrors tendon::PendulumSettings through the table below; the
// rest of a tendon::PendulumBinding (the joint's world frame and the accessory's offset)
// crosses as tendon_bind_pendulum's own arguments.
// What it does NOT do: validate the settings (BindPendulum does).
// Threading: as the C++ World. Memory: binding allocates in the World; the host's two
// transforms are named, not copied.
#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonPendulumSettings, PendulumSettings> : TableOf<TendonPendulumSettings, PendulumSettings> {
  using Rows = RowList<Field<&C::damping, &P::damping>, Field<&C::stiffness, &P::stiffness>,
                       Field<&C::gravity_scale, &P::gravity_scale>, Field<&C::wind_scale, &P::wind_scale>,
                       Field<&C::max_swing_degrees, &P::max_swing_degrees>, Field<&C::centre, &P::centre>,
                       Field<&C::up_axis, &P::up_axis>>;
};
TENDON_C_CHECK_MIRROR(TendonPendulumSettings, tendon::PendulumSettings);
// tendon_bind_pendulum's arguments: the settings, joint_world and accessory_offset.
TENDON_C_CHECK_BY_HAND(tendon::PendulumBinding, 3);

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

void tendon_pendulum_settings_defaults(TendonPendulumSettings* c) {
  if (c == nullptr) return;
  *c = TendonPendulumSettings{};
  MirrorOut(tendon::PendulumSettings{}, *c);
}
TendonResult tendon_bind_pendulum(TendonWorld* world, const TendonPendulumSettings* c, const TendonTransform* joint_world,
                                  TendonTransform* accessory_offset, TendonPendulumId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  return Guard(world, [&] {
    tendon::PendulumBinding b;
    MirrorIn(*c, b.settings);
    b.joint_world = ConvertIn<const tendon::Transform*>(joint_world);
    b.accessory_offset = ConvertIn<tendon::Transform*>(accessory_offset);
    return Take(world, world->world->BindPendulum(b), out);
  });
}
TendonResult tendon_unbind_pendulum(TendonWorld* world, TendonPendulumId pendulum) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindPendulum(IdFromC<tendon::PendulumId>(pendulum))); });
}

int32_t tendon_pendulum_is_valid(const TendonWorld* world, TendonPendulumId pendulum) {
  return world != nullptr && world->world->IsValid(IdFromC<tendon::PendulumId>(pendulum)) ? 1 : 0;
}
TendonResult tendon_get_pendulum_state(const TendonWorld* world, TendonPendulumId pendulum, TendonVec3* bob,
                                       float* swing_radians) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(Mutable(world), [&] {
    tendon::Vec3 b;
    const tendon::Error e =
        world->world->GetPendulumState(IdFromC<tendon::PendulumId>(pendulum), bob != nullptr ? &b : nullptr, swing_radians);
    if (e.code == tendon::ErrorCode::kNone && bob != nullptr) *bob = ToC(b);
    return Record(Mutable(world), e);
  });
}

}  // extern "C"
