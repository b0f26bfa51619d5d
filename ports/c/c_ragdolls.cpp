// ports/c/c_ragdolls.cpp: the C ABI's ragdolls: part and ragdoll settings and their
// defaults, building and removing a ragdoll archetype and reading its parts, binding and
// unbinding ragdolls, switching, pushing, posing, powering and waking them (kinematic root,
// motor targets, part states and velocities, sleeping), and raycasts against ragdolls and
// the static world.
//
// TendonPartSettings is tendon::PartSettings with its shape, joint and the joint's motor
// flattened into one C struct: the part's table names them Flattened, and each of
// PartShapeSettings, JointSettings and MotorSettings has its own table over the same C
// struct (likewise TendonRagdollSettings' stabilize_* fields). Every table is checked
// field by field at compile time (c_mirror.h).
// What it does NOT do: the static world (c_static_world.cpp) or characters
// (c_characters.cpp), or validate settings (the World does, naming the item and field).
// Threading: as the C++ World. Memory: building and binding allocate the converted
// settings; the host's buffers are named, not copied.
#include <cstring>
#include <vector>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonPartSettings, PartShapeSettings> : TableOf<TendonPartSettings, PartShapeSettings> {
  using Rows = RowList<Field<&C::shape, &P::type>, Field<&C::radius, &P::radius>, Field<&C::top_radius, &P::top_radius>,
                       Field<&C::bottom_radius, &P::bottom_radius>, Field<&C::half_height, &P::half_height>,
                       Field<&C::half_extents, &P::half_extents>, Field<&C::shape_offset, &P::offset>>;
};
TENDON_C_CHECK_FLATTENED(TendonPartSettings, tendon::PartShapeSettings);

template <>
struct MirrorTable<TendonPartSettings, MotorSettings> : TableOf<TendonPartSettings, MotorSettings> {
  using Rows = RowList<Field<&C::motor_frequency_hz, &P::frequency_hz>, Field<&C::motor_damping_ratio, &P::damping_ratio>,
                       Field<&C::motor_max_torque_per_kg, &P::max_torque_per_kg>,
                       Field<&C::motor_limb_inertia, &P::limb_inertia>>;
};
TENDON_C_CHECK_FLATTENED(TendonPartSettings, tendon::MotorSettings);

template <>
struct MirrorTable<TendonPartSettings, JointSettings> : TableOf<TendonPartSettings, JointSettings> {
  using Rows = RowList<Field<&C::joint_type, &P::type>, Field<&C::joint_anchor, &P::anchor>,
                       Field<&C::twist_axis, &P::twist_axis>, Field<&C::plane_axis, &P::plane_axis>,
                       Field<&C::child_twist_axis, &P::child_twist_axis>,
                       Field<&C::child_plane_axis, &P::child_plane_axis>,
                       Field<&C::normal_half_cone_degrees, &P::normal_half_cone_degrees>,
                       Field<&C::plane_half_cone_degrees, &P::plane_half_cone_degrees>,
                       Field<&C::twist_min_degrees, &P::twist_min_degrees>,
                       Field<&C::twist_max_degrees, &P::twist_max_degrees>,
                       Field<&C::hinge_min_degrees, &P::hinge_min_degrees>,
                       Field<&C::hinge_max_degrees, &P::hinge_max_degrees>,
                       Field<&C::friction_torque_per_kg, &P::friction_torque_per_kg>, Flattened<C, &P::motor>>;
};
TENDON_C_CHECK_FLATTENED(TendonPartSettings, tendon::JointSettings);

template <>
struct MirrorTable<TendonPartSettings, PartSettings> : TableOf<TendonPartSettings, PartSettings> {
  using Rows = RowList<Field<&C::name, &P::name>, Field<&C::parent, &P::parent>, Field<&C::pose, &P::pose>,
                       Flattened<C, &P::shape>, Field<&C::mass, &P::mass>, Field<&C::mass_share, &P::mass_share>,
                       Field<&C::density, &P::density>, Field<&C::friction, &P::friction>,
                       Field<&C::restitution, &P::restitution>, Field<&C::linear_damping, &P::linear_damping>,
                       Field<&C::angular_damping, &P::angular_damping>, Field<&C::gravity_factor, &P::gravity_factor>,
                       Field<&C::max_linear_speed, &P::max_linear_speed>,
                       Field<&C::max_angular_speed, &P::max_angular_speed>, Flattened<C, &P::joint>>;
};
TENDON_C_CHECK_MIRROR(TendonPartSettings, tendon::PartSettings);

template <>
struct MirrorTable<TendonRagdollSettings, StabilizeSettings> : TableOf<TendonRagdollSettings, StabilizeSettings> {
  using Rows = RowList<Field<&C::stabilize, &P::enabled>, Field<&C::stabilize_max_mass_ratio, &P::max_mass_ratio>,
                       Field<&C::stabilize_min_inertia_ratio, &P::min_inertia_ratio>>;
};
TENDON_C_CHECK_FLATTENED(TendonRagdollSettings, tendon::StabilizeSettings);

template <>
struct MirrorTable<TendonContactEventSettings, ContactEventSettings>
    : TableOf<TendonContactEventSettings, ContactEventSettings> {
  using Rows = RowList<Field<&C::enabled, &P::enabled>, Field<&C::min_impulse, &P::min_impulse>,
                       Field<&C::min_normal_speed, &P::min_normal_speed>, Field<&C::report_ended, &P::report_ended>>;
};
TENDON_C_CHECK_MIRROR(TendonContactEventSettings, tendon::ContactEventSettings);

template <>
struct MirrorTable<TendonRagdollSettings, RagdollSettings> : TableOf<TendonRagdollSettings, RagdollSettings> {
  using Rows = RowList<Field<&C::name, &P::name>, ArrayOf<&C::parts, &C::part_count, &P::parts>,
                       Field<&C::total_mass, &P::total_mass>, Flattened<C, &P::stabilize>,
                       // Two part indices per pair, flat (RagdollToCpp).
                       ByHand<&C::self_collision_pairs, &C::self_collision_pair_count, &P::self_collision_pairs>,
                       Field<&C::collision_group, &P::collision_group>, Field<&C::collision_mask, &P::collision_mask>,
                       Field<&C::contact_events, &P::contact_events>>;
};
TENDON_C_CHECK_MIRROR(TendonRagdollSettings, tendon::RagdollSettings);

template <>
struct MirrorTable<TendonRagdollBinding, RagdollBinding> : TableOf<TendonRagdollBinding, RagdollBinding> {
  using Rows = RowList<Field<&C::archetype, &P::archetype>, Field<&C::placement, &P::placement>,
                       SpanOf<&C::start_parts, &C::start_part_count, &P::start_parts>,
                       Field<&C::linear_velocity, &P::linear_velocity>, Field<&C::angular_velocity, &P::angular_velocity>,
                       SpanOf<&C::output_parts, &C::output_part_count, &P::output_parts>,
                       // Converted into storage the bind keeps until it returns.
                       ByHand<&C::pose_streams, &C::pose_stream_count, &P::pose_streams>,
                       Field<&C::kinematic_root, &P::kinematic_root>,
                       Field<&C::freeze_when_asleep, &P::freeze_when_asleep>,
                       Field<&C::freeze_after_seconds, &P::freeze_after_seconds>,
                       Field<&C::planar_normal, &P::planar_normal>, Field<&C::collide_mode, &P::collide_mode>,
                       Field<&C::enabled, &P::enabled>>;
};
TENDON_C_CHECK_MIRROR(TendonRagdollBinding, tendon::RagdollBinding);

template <>
struct MirrorTable<TendonRaycastHit, RaycastHit> : TableOf<TendonRaycastHit, RaycastHit> {
  using Rows = RowList<Field<&C::ragdoll, &P::ragdoll>, Field<&C::part, &P::part>,
                       Field<&C::static_shape, &P::static_shape>, Field<&C::point, &P::point>,
                       Field<&C::normal, &P::normal>, Field<&C::distance, &P::distance>>;
};
TENDON_C_CHECK_MIRROR(TendonRaycastHit, tendon::RaycastHit);

template <>
struct MirrorTable<TendonRagdollPartInfo, RagdollPartInfo> : TableOf<TendonRagdollPartInfo, RagdollPartInfo> {
  using Rows = RowList<Field<&C::mass, &P::mass>, Field<&C::principal_inertia, &P::principal_inertia>,
                       Field<&C::body_pose, &P::body_pose>, Field<&C::volume, &P::volume>>;
};
TENDON_C_CHECK_MIRROR(TendonRagdollPartInfo, tendon::RagdollPartInfo);

TendonResult CheckRagdollSettings(TendonWorld* w, const TendonRagdollSettings& c, const char* field) {
  const bool nested = std::strcmp(field, "ragdoll") == 0;  // TendonCharacterSettings::ragdoll
  if (BadArray(c.parts, c.part_count)) return BadArrayError(w, nested ? "ragdoll.parts" : "parts");
  if (BadArray(c.self_collision_pairs, c.self_collision_pair_count))
    return BadArrayError(w, nested ? "ragdoll.self_collision_pairs" : "self_collision_pairs");
  for (int32_t i = 0; i < c.part_count; ++i) {
    if (OutOfEnum(EnumValue(c.parts[i].shape), TENDON_PART_BOX)) return BadEnum(w, nested ? "ragdoll.parts.shape" : "parts.shape");
    if (OutOfEnum(EnumValue(c.parts[i].joint_type), TENDON_JOINT_HINGE))
      return BadEnum(w, nested ? "ragdoll.parts.joint_type" : "parts.joint_type");
  }
  return TENDON_OK;
}
RagdollSettings RagdollSettingsToCpp(const TendonRagdollSettings& c) {
  RagdollSettings s;
  MirrorIn(c, s);
  for (int32_t i = 0; i < c.self_collision_pair_count; ++i)
    s.self_collision_pairs.emplace_back(c.self_collision_pairs[2 * i], c.self_collision_pairs[2 * i + 1]);
  return s;
}

TendonPartSettings PartSettingsToC(const PartSettings& p) {
  TendonPartSettings c{};
  MirrorOut(p, c);
  return c;
}
TendonRagdollSettings RagdollSettingsToC(const RagdollSettings& s) {
  TendonRagdollSettings c{};
  MirrorOut(s, c);
  return c;
}

namespace {

int32_t RaycastOut(bool hit, const RaycastHit& h, TendonRaycastHit* out) {
  if (hit && out != nullptr) {
    *out = TendonRaycastHit{};
    MirrorOut(h, *out);
  }
  return hit ? 1 : 0;
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::RagdollId;

extern "C" {

void tendon_part_settings_defaults(TendonPartSettings* c) {
  if (c == nullptr) return;
  *c = TendonPartSettings{};
  MirrorOut(tendon::PartSettings{}, *c);
}
void tendon_contact_event_settings_defaults(TendonContactEventSettings* c) {
  if (c == nullptr) return;
  *c = ConvertOut<TendonContactEventSettings>(tendon::ContactEventSettings{});
}

void tendon_ragdoll_settings_defaults(TendonRagdollSettings* c) {
  if (c == nullptr) return;
  *c = TendonRagdollSettings{};
  MirrorOut(tendon::RagdollSettings{}, *c);
}
TendonResult tendon_build_ragdoll_archetype(TendonWorld* world, const TendonRagdollSettings* c,
                                            TendonRagdollArchetypeId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (out == nullptr) return NullArgument(world, "out");
  if (TendonResult r = CheckRagdollSettings(world, *c, "settings"); r != TENDON_OK) return r;
  return Guard(world, [&] { return Take(world, world->world->BuildRagdollArchetype(RagdollSettingsToCpp(*c)), out); });
}
TendonResult tendon_remove_ragdoll_archetype(TendonWorld* world, TendonRagdollArchetypeId archetype) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->RemoveRagdollArchetype(IdFromC<tendon::RagdollArchetypeId>(archetype)));
  });
}
TendonResult tendon_get_ragdoll_part_info(const TendonWorld* world, TendonRagdollArchetypeId archetype, int32_t part,
                                          TendonRagdollPartInfo* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  return Guard(Mutable(world), [&] {
    tendon::RagdollPartInfo info;
    const tendon::Error e = world->world->GetRagdollPartInfo(IdFromC<tendon::RagdollArchetypeId>(archetype), part, &info);
    if (e.code != tendon::ErrorCode::kNone) return Record(Mutable(world), e);
    *out = ConvertOut<TendonRagdollPartInfo>(info);
    return TENDON_OK;
  });
}
TendonResult tendon_reserve_ragdoll_kinematic_toggle(TendonWorld* world, TendonRagdollArchetypeId archetype,
                                                     int32_t instances) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->ReserveRagdollKinematicToggle(IdFromC<tendon::RagdollArchetypeId>(archetype),
                                                                     instances));
  });
}
int32_t tendon_ragdoll_part_count(const TendonWorld* world, TendonRagdollArchetypeId archetype) {
  return world != nullptr ? world->world->RagdollPartCount(IdFromC<tendon::RagdollArchetypeId>(archetype)) : 0;
}

void tendon_ragdoll_binding_defaults(TendonRagdollBinding* c) {
  if (c == nullptr) return;
  *c = TendonRagdollBinding{};
  MirrorOut(tendon::RagdollBinding{}, *c);
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
    std::vector<tendon::PoseStream> streams;
    tendon::RagdollBinding b;
    MirrorIn(*c, b);
    b.pose_streams = PoseStreamsToCpp(c->pose_streams, c->pose_stream_count, &streams);
    return Take(world, world->world->BindRagdoll(b), out);
  });
}
TendonResult tendon_unbind_ragdoll(TendonWorld* world, TendonRagdollId ragdoll) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindRagdoll(IdFromC<RagdollId>(ragdoll))); });
}
TendonResult tendon_set_ragdoll_enabled(TendonWorld* world, TendonRagdollId ragdoll, int32_t enabled) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetRagdollEnabled(IdFromC<RagdollId>(ragdoll), enabled != 0)); });
}
TendonResult tendon_apply_ragdoll_impulse(TendonWorld* world, TendonRagdollId ragdoll, int32_t part, TendonVec3 impulse,
                                          TendonVec3 world_point) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->ApplyRagdollImpulse(IdFromC<RagdollId>(ragdoll), part, ToCpp(impulse), ToCpp(world_point)));
  });
}
TendonResult tendon_wake_ragdoll(TendonWorld* world, TendonRagdollId ragdoll) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->WakeRagdoll(IdFromC<RagdollId>(ragdoll))); });
}
int32_t tendon_ragdoll_is_asleep(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr && world->world->IsRagdollAsleep(IdFromC<RagdollId>(ragdoll)) ? 1 : 0;
}
int32_t tendon_ragdoll_is_valid(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr && world->world->IsValid(IdFromC<RagdollId>(ragdoll)) ? 1 : 0;
}
int32_t tendon_ragdoll_is_enabled(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr && world->world->IsRagdollEnabled(IdFromC<RagdollId>(ragdoll)) ? 1 : 0;
}
int32_t tendon_ragdoll_is_frozen(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr && world->world->IsRagdollFrozen(IdFromC<RagdollId>(ragdoll)) ? 1 : 0;
}
TendonResult tendon_set_ragdoll_kinematic_root(TendonWorld* world, TendonRagdollId ragdoll, const TendonTransform* root) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollKinematicRoot(IdFromC<RagdollId>(ragdoll),
                                                               ConvertIn<const tendon::Transform*>(root)));
  });
}
TendonResult tendon_set_ragdoll_motor_targets(TendonWorld* world, TendonRagdollId ragdoll, const TendonQuat* local_rotations,
                                              int32_t rotation_count, float strength,
                                              const TendonVec3* local_angular_velocities, int32_t angular_velocity_count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (BadArray(local_rotations, rotation_count)) return BadArrayError(world, "local_rotations");
  if (BadArray(local_angular_velocities, angular_velocity_count)) return BadArrayError(world, "local_angular_velocities");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollMotorTargets(
                             IdFromC<RagdollId>(ragdoll), Span(ConvertIn<const tendon::Quat*>(local_rotations), rotation_count),
                             strength,
                             Span(ConvertIn<const tendon::Vec3*>(local_angular_velocities), angular_velocity_count)));
  });
}
TendonResult tendon_set_ragdoll_part_states(TendonWorld* world, TendonRagdollId ragdoll, const TendonTransform* parts,
                                            int32_t part_count, const TendonVec3* linear, int32_t linear_count,
                                            const TendonVec3* angular, int32_t angular_count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (BadArray(parts, part_count)) return BadArrayError(world, "parts");
  if (BadArray(linear, linear_count)) return BadArrayError(world, "linear");
  if (BadArray(angular, angular_count)) return BadArrayError(world, "angular");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollPartStates(IdFromC<RagdollId>(ragdoll),
                                                            Span(ConvertIn<const tendon::Transform*>(parts), part_count),
                                                            Span(ConvertIn<const tendon::Vec3*>(linear), linear_count),
                                                            Span(ConvertIn<const tendon::Vec3*>(angular), angular_count)));
  });
}
TendonResult tendon_set_ragdoll_part_velocity(TendonWorld* world, TendonRagdollId ragdoll, int32_t part, TendonVec3 linear,
                                              TendonVec3 angular) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollPartVelocity(IdFromC<RagdollId>(ragdoll), part, ToCpp(linear), ToCpp(angular)));
  });
}
TendonResult tendon_get_ragdoll_velocities(const TendonWorld* world, TendonRagdollId ragdoll, TendonVec3* linear,
                                           TendonVec3* angular, int32_t count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (linear == nullptr) return NullArgument(Mutable(world), "linear");
  if (angular == nullptr) return NullArgument(Mutable(world), "angular");
  if (count < 0) return BadArrayError(Mutable(world), "count");
  return Guard(Mutable(world), [&] {
    return Record(Mutable(world), world->world->GetRagdollVelocities(IdFromC<RagdollId>(ragdoll),
                                                                     Span(ConvertIn<tendon::Vec3*>(linear), count),
                                                                     Span(ConvertIn<tendon::Vec3*>(angular), count)));
  });
}
TendonResult tendon_get_ragdoll_part_transforms(const TendonWorld* world, TendonRagdollId ragdoll, TendonTransform* out,
                                               int32_t capacity, int32_t* part_count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  if (capacity < 0) return BadArrayError(Mutable(world), "capacity");
  return Guard(Mutable(world), [&] {
    auto read = world->world->GetRagdollPartTransforms(IdFromC<RagdollId>(ragdoll),
                                                       Span(ConvertIn<tendon::Transform*>(out), capacity));
    if (!read.ok()) return Record(Mutable(world), read.error());
    if (part_count != nullptr) *part_count = read.value();
    return TENDON_OK;
  });
}
TendonResult tendon_set_ragdoll_sleeping(TendonWorld* world, TendonRagdollId ragdoll, int32_t can_sleep,
                                         int32_t freeze_when_asleep, float freeze_after_seconds) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetRagdollSleeping(IdFromC<RagdollId>(ragdoll), can_sleep != 0,
                                                          freeze_when_asleep != 0, freeze_after_seconds));
  });
}

int32_t tendon_raycast_ragdolls(const TendonWorld* world, TendonVec3 origin, TendonVec3 direction, float max_distance,
                                TendonRaycastHit* hit) {
  if (world == nullptr) return 0;
  tendon::RaycastHit h;
  return RaycastOut(world->world->RaycastRagdolls(ToCpp(origin), ToCpp(direction), max_distance, &h), h, hit);
}
int32_t tendon_raycast_static(const TendonWorld* world, TendonVec3 origin, TendonVec3 direction, float max_distance,
                              TendonRaycastHit* hit) {
  if (world == nullptr) return 0;
  tendon::RaycastHit h;
  return RaycastOut(world->world->RaycastStatic(ToCpp(origin), ToCpp(direction), max_distance, &h), h, hit);
}

}  // extern "C"
