// ports/c/c_characters.cpp: the C ABI's characters: settings and their defaults, building a
// character archetype over a skeleton, binding, rebinding and unbinding, activating and
// handing back, the runtime controls (strength, anchoring, hits, going limp, impulses),
// the state and recovery queries, and the event queue.
//
// Each C struct mirrors its C++ struct through a table below (c_mirror.h), checked field
// by field at compile time. The skeleton, the humanoid table and the limit clips cross as
// plain arrays and are converted by hand (their rows say so); explicit parts and limit
// overrides are arrays of their own mirrored structs, a whole ragdoll a pointer to the
// ragdoll settings (c_ragdolls.cpp converts it).
// What it does NOT do: VRM avatars (c_avatars.cpp), or validate settings (the World does,
// naming the item and field).
// Threading: as the C++ World. Memory: building and binding allocate the converted
// settings (a clip is capped at 2^24 transforms); the controls and queries allocate only
// an error's message.
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonSampledClip, SampledClip> : TableOf<TendonSampledClip, SampledClip> {
  // local: frame_count x the skeleton's bone count, which only the settings know.
  using Rows = RowList<Field<&C::name, &P::name>, Field<&C::frame_count, &P::frame_count>, ByHand<&C::local, &P::local>>;
};
TENDON_C_CHECK_MIRROR(TendonSampledClip, tendon::SampledClip);

template <>
struct MirrorTable<TendonCharacterHinge, CharacterHinge> : TableOf<TendonCharacterHinge, CharacterHinge> {
  using Rows = RowList<Field<&C::axis, &P::axis>, Field<&C::min_degrees, &P::min_degrees>,
                       Field<&C::max_degrees, &P::max_degrees>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterHinge, tendon::CharacterHinge);

template <>
struct MirrorTable<TendonCharacterPartSettings, CharacterPartSettings>
    : TableOf<TendonCharacterPartSettings, CharacterPartSettings> {
  using Rows = RowList<Field<&C::bone, &P::bone>, Field<&C::to, &P::to>, Field<&C::parent, &P::parent>,
                       Field<&C::name, &P::name>, Field<&C::radius, &P::radius>, Field<&C::length, &P::length>,
                       Field<&C::mass_share, &P::mass_share>, Field<&C::leaf_direction, &P::leaf_direction>,
                       Field<&C::swing_degrees, &P::swing_degrees>, Field<&C::twist_degrees, &P::twist_degrees>,
                       Optional<&C::has_hinge, &C::hinge, &P::hinge>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterPartSettings, tendon::CharacterPartSettings);

template <>
struct MirrorTable<TendonJointLimitOverride, JointLimitOverride> : TableOf<TendonJointLimitOverride, JointLimitOverride> {
  using Rows = RowList<Field<&C::part, &P::part>, Field<&C::swing_degrees, &P::swing_degrees>,
                       Field<&C::twist_degrees, &P::twist_degrees>>;
};
TENDON_C_CHECK_MIRROR(TendonJointLimitOverride, tendon::JointLimitOverride);

template <>
struct MirrorTable<TendonCharacterPartInfo, CharacterPartInfo> : TableOf<TendonCharacterPartInfo, CharacterPartInfo> {
  // The name is copied into the C struct's array, cut if it must be (PartInfoToC).
  using Rows = RowList<ByHand<&C::name, &C::name_truncated, &P::name>, Field<&C::bone, &P::bone>,
                       Field<&C::parent, &P::parent>, Field<&C::joint, &P::joint>,
                       Field<&C::normal_half_cone_degrees, &P::normal_half_cone_degrees>,
                       Field<&C::plane_half_cone_degrees, &P::plane_half_cone_degrees>,
                       Field<&C::twist_min_degrees, &P::twist_min_degrees>,
                       Field<&C::twist_max_degrees, &P::twist_max_degrees>,
                       Field<&C::hinge_min_degrees, &P::hinge_min_degrees>,
                       Field<&C::hinge_max_degrees, &P::hinge_max_degrees>, Field<&C::mass, &P::mass>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterPartInfo, tendon::CharacterPartInfo);

template <>
struct MirrorTable<TendonCharacterSettings, CharacterSettings> : TableOf<TendonCharacterSettings, CharacterSettings> {
  using Rows = RowList<
      Field<&C::name, &P::name>,
      ByHand<&C::bone_count, &C::bone_names, &C::bone_parents, &C::bone_rest_local, &P::skeleton>,
      ByHand<&C::humanoid_bones, &C::humanoid_bone_count, &P::humanoid_bones>,
      ArrayOf<&C::parts, &C::part_count, &P::parts>,
      // A pointer to the C settings, converted by RagdollSettingsToCpp when it is not NULL.
      ByHand<&C::ragdoll, &P::ragdoll>,
      Field<&C::total_mass, &P::total_mass>, Field<&C::friction, &P::friction>,
      Field<&C::linear_damping, &P::linear_damping>, Field<&C::angular_damping, &P::angular_damping>,
      Field<&C::drive_frequency_hz, &P::drive_frequency_hz>, Field<&C::drive_damping_ratio, &P::drive_damping_ratio>,
      Field<&C::drive_torque_per_kg, &P::drive_torque_per_kg>,
      Field<&C::joint_friction_per_kg, &P::joint_friction_per_kg>, Field<&C::limit_source, &P::limit_source>,
      ArrayOf<&C::limit_overrides, &C::limit_override_count, &P::limit_overrides>, ByHand<&C::limit_clips, &C::limit_clip_count, &P::limit_clips>,
      Field<&C::limits_margin_degrees, &P::limits_margin_degrees>, Field<&C::collision_group, &P::collision_group>,
      Field<&C::collision_mask, &P::collision_mask>, Field<&C::inactive_bodies, &P::inactive_bodies>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterSettings, tendon::CharacterSettings);
// The hand-written parts of CharacterToCpp: a skeleton's three arrays, a humanoid entry's
// role and bone.
TENDON_C_CHECK_BY_HAND(tendon::SkeletonSettings, 3);
TENDON_C_CHECK_BY_HAND(TendonHumanoidBone, 2);

template <>
struct MirrorTable<TendonCharacterBinding, CharacterBinding> : TableOf<TendonCharacterBinding, CharacterBinding> {
  using Rows = RowList<Field<&C::archetype, &P::archetype>, Field<&C::model_world, &P::model_world>,
                       SpanOf<&C::animated_local, &C::bone_count, &P::animated_local>,
                       SpanCountedBy<&C::output_local, &C::bone_count, &P::output_local>,
                       SpanCountedBy<&C::output_world, &C::bone_count, &P::output_world>,
                       // Converted into storage the bind keeps until it returns.
                       ByHand<&C::pose_streams, &C::pose_stream_count, &P::pose_streams>,
                       Field<&C::collide_mode, &P::collide_mode>, Field<&C::planar_normal, &P::planar_normal>,
                       Field<&C::freeze_when_settled, &P::freeze_when_settled>,
                       Field<&C::freeze_after_seconds, &P::freeze_after_seconds>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterBinding, tendon::CharacterBinding);

template <>
struct MirrorTable<TendonActivateOptions, CharacterActivateOptions>
    : TableOf<TendonActivateOptions, CharacterActivateOptions> {
  using Rows = RowList<Field<&C::launch_velocity, &P::launch_velocity>, Field<&C::impulse, &P::impulse>,
                       OptionalUnlessNegative<&C::strength, &P::strength>,
                       OptionalUnlessNegative<&C::anchored, &P::anchored>,
                       Field<&C::duration_seconds, &P::duration_seconds>,
                       Field<&C::release_blend_seconds, &P::release_blend_seconds>>;
};
TENDON_C_CHECK_MIRROR(TendonActivateOptions, tendon::CharacterActivateOptions);

template <>
struct MirrorTable<TendonHitOptions, CharacterHitOptions> : TableOf<TendonHitOptions, CharacterHitOptions> {
  using Rows = RowList<Field<&C::duration_seconds, &P::duration_seconds>, Field<&C::blend_seconds, &P::blend_seconds>,
                       Field<&C::strength, &P::strength>>;
};
TENDON_C_CHECK_MIRROR(TendonHitOptions, tendon::CharacterHitOptions);

template <>
struct MirrorTable<TendonCharacterState, CharacterState> : TableOf<TendonCharacterState, CharacterState> {
  using Rows = RowList<Field<&C::active, &P::active>, Field<&C::blending_out, &P::blending_out>,
                       Field<&C::settled, &P::settled>, Field<&C::anchored, &P::anchored>,
                       Field<&C::strength, &P::strength>, Field<&C::generation, &P::generation>,
                       Field<&C::root, &P::root>, Field<&C::root_velocity, &P::root_velocity>,
                       Field<&C::speed, &P::speed>, Field<&C::total_mass, &P::total_mass>,
                       Field<&C::unanchored_mass, &P::unanchored_mass>, Field<&C::facing, &P::facing>,
                       Field<&C::heading_degrees, &P::heading_degrees>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterState, tendon::CharacterState);

template <>
struct MirrorTable<TendonCharacterEvent, CharacterEvent> : TableOf<TendonCharacterEvent, CharacterEvent> {
  using Rows = RowList<Field<&C::type, &P::type>, Field<&C::character, &P::character>,
                       Field<&C::generation, &P::generation>, Field<&C::reason, &P::reason>, Field<&C::time, &P::time>>;
};
TENDON_C_CHECK_MIRROR(TendonCharacterEvent, tendon::CharacterEvent);

namespace {

// The settings, or a refusal of a limit clip (its array, or its size).
TendonResult CharacterToCpp(TendonWorld* world, const TendonCharacterSettings& c, CharacterSettings* s) {
  MirrorIn(c, *s);
  if (c.ragdoll != nullptr) s->ragdoll = RagdollSettingsToCpp(*c.ragdoll);
  for (int32_t i = 0; i < c.bone_count; ++i) {
    s->skeleton.names.push_back(ConvertIn<std::string>(c.bone_names[i]));
    s->skeleton.parents.push_back(c.bone_parents[i]);
    s->skeleton.rest_local.push_back(ToCpp(c.bone_rest_local[i]));
  }
  for (const TendonHumanoidBone& h : Span(c.humanoid_bones, c.humanoid_bone_count))
    s->humanoid_bones.emplace_back(ConvertIn<std::string>(h.role), h.bone);
  for (int32_t i = 0; i < c.limit_clip_count; ++i) {
    const TendonSampledClip& clip = c.limit_clips[i];
    if (BadArray(clip.local, clip.frame_count)) return BadArrayError(world, "limit_clips.local");
    SampledClip sc;
    MirrorIn(clip, sc);
    const int64_t n = static_cast<int64_t>(clip.frame_count) * c.bone_count;
    if (n > (int64_t{1} << 24)) return Record(world, TENDON_ERROR_CAPACITY, "a clip of more than 2^24 transforms", "limit_clips", i);
    for (int64_t k = 0; k < n; ++k) sc.local.push_back(ToCpp(clip.local[k]));
    s->limit_clips.push_back(std::move(sc));
  }
  return TENDON_OK;
}

CharacterBinding BindingToCpp(const TendonCharacterBinding& b, std::vector<PoseStream>* streams) {
  CharacterBinding out;
  MirrorIn(b, out);
  out.pose_streams = PoseStreamsToCpp(b.pose_streams, b.pose_stream_count, streams);
  return out;
}
TendonResult CheckCharacterBinding(TendonWorld* world, const TendonCharacterBinding* c) {
  if (c == nullptr) return NullArgument(world, "binding");
  if (c->bone_count < 0) return BadArrayError(world, "bone_count");
  if (OutOfEnum(EnumValue(c->collide_mode), TENDON_COLLIDE_STATIC)) return BadEnum(world, "collide_mode");
  return CheckPoseStreams(world, c->pose_streams, c->pose_stream_count);
}

void PartInfoToC(const CharacterPartInfo& info, TendonCharacterPartInfo* out) {
  *out = TendonCharacterPartInfo{};
  MirrorOut(info, *out);
  const std::size_t room = sizeof(out->name) - 1;
  const std::size_t n = std::min(info.name.size(), room);
  std::memcpy(out->name, info.name.data(), n);
  out->name[n] = '\0';
  out->name_truncated = info.name.size() > room ? 1 : 0;
}

// A control that answers bool with its Error beside it: a refusal without an error code
// is reported as `what` (kCapacity).
TendonResult BoolAnswer(TendonWorld* world, bool done, const Error& why, const char* what) {
  if (done) return TENDON_OK;
  if (why.code == ErrorCode::kNone) return Record(world, TENDON_ERROR_CAPACITY, what);
  return Record(world, why);
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::CharacterArchetypeId;
using tendon::CharacterId;

extern "C" {

void tendon_character_settings_defaults(TendonCharacterSettings* c) {
  if (c == nullptr) return;
  *c = TendonCharacterSettings{};
  MirrorOut(tendon::CharacterSettings{}, *c);
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
  if (OutOfEnum(EnumValue(c->inactive_bodies), TENDON_INACTIVE_BODIES_KINEMATIC)) return BadEnum(world, "inactive_bodies");
  if (BadArray(c->parts, c->part_count)) return BadArrayError(world, "parts");
  if (BadArray(c->limit_overrides, c->limit_override_count)) return BadArrayError(world, "limit_overrides");
  if (c->ragdoll != nullptr)
    if (TendonResult r = CheckRagdollSettings(world, *c->ragdoll, "ragdoll"); r != TENDON_OK) return r;
  return Guard(world, [&] {
    tendon::CharacterSettings s;
    if (TendonResult r = CharacterToCpp(world, *c, &s); r != TENDON_OK) return r;
    return Take(world, world->world->BuildCharacterArchetype(s), out);
  });
}
int32_t tendon_character_part_count(const TendonWorld* world, TendonCharacterArchetypeId archetype) {
  return world != nullptr ? world->world->CharacterPartCount(IdFromC<CharacterArchetypeId>(archetype)) : 0;
}
TendonResult tendon_remove_character_archetype(TendonWorld* world, TendonCharacterArchetypeId archetype) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->RemoveCharacterArchetype(IdFromC<CharacterArchetypeId>(archetype)));
  });
}
TendonResult tendon_get_character_part_info(const TendonWorld* world, TendonCharacterArchetypeId archetype, int32_t part,
                                            TendonCharacterPartInfo* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  return Guard(Mutable(world), [&] {
    tendon::CharacterPartInfo info;
    const tendon::Error e = world->world->GetCharacterPartInfo(IdFromC<CharacterArchetypeId>(archetype), part, &info);
    if (e.code != tendon::ErrorCode::kNone) return Record(Mutable(world), e);
    PartInfoToC(info, out);
    return TENDON_OK;
  });
}
void tendon_character_part_settings_defaults(TendonCharacterPartSettings* c) {
  if (c == nullptr) return;
  *c = TendonCharacterPartSettings{};
  MirrorOut(tendon::CharacterPartSettings{}, *c);
  c->hinge = ConvertOut<TendonCharacterHinge>(tendon::CharacterHinge{});  // the hinge a has_hinge = 1 starts from
}
void tendon_character_hinge_defaults(TendonCharacterHinge* c) {
  if (c != nullptr) *c = ConvertOut<TendonCharacterHinge>(tendon::CharacterHinge{});
}
void tendon_joint_limit_override_defaults(TendonJointLimitOverride* c) {
  if (c == nullptr) return;
  *c = TendonJointLimitOverride{};
  MirrorOut(tendon::JointLimitOverride{}, *c);
}
void tendon_humanoid_bone_defaults(TendonHumanoidBone* c) {
  if (c != nullptr) *c = TendonHumanoidBone{nullptr, -1};
}
void tendon_sampled_clip_defaults(TendonSampledClip* c) {
  if (c != nullptr) *c = TendonSampledClip{};
}
int32_t tendon_find_character_part(const TendonWorld* world, TendonCharacterArchetypeId archetype, const char* name) {
  if (world == nullptr || name == nullptr) return -1;
  return world->world->FindCharacterPart(IdFromC<CharacterArchetypeId>(archetype), name);
}

void tendon_character_binding_defaults(TendonCharacterBinding* c) {
  if (c == nullptr) return;
  *c = TendonCharacterBinding{};
  MirrorOut(tendon::CharacterBinding{}, *c);
}
TendonResult tendon_bind_character(TendonWorld* world, const TendonCharacterBinding* c, TendonCharacterId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "binding");
  if (out == nullptr) return NullArgument(world, "out");
  if (TendonResult r = CheckCharacterBinding(world, c); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<tendon::PoseStream> streams;
    return Take(world, world->world->BindCharacter(BindingToCpp(*c, &streams)), out);
  });
}
TendonResult tendon_rebind_character(TendonWorld* world, TendonCharacterId character, const TendonCharacterBinding* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (TendonResult r = CheckCharacterBinding(world, c); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<tendon::PoseStream> streams;
    return Record(world, world->world->RebindCharacter(IdFromC<CharacterId>(character), BindingToCpp(*c, &streams)));
  });
}
TendonResult tendon_unbind_character(TendonWorld* world, TendonCharacterId character) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindCharacter(IdFromC<CharacterId>(character))); });
}
int32_t tendon_character_is_valid(const TendonWorld* world, TendonCharacterId character) {
  return world != nullptr && world->world->IsValid(IdFromC<CharacterId>(character)) ? 1 : 0;
}

void tendon_activate_options_defaults(TendonActivateOptions* c) {
  if (c == nullptr) return;
  *c = TendonActivateOptions{};
  MirrorOut(tendon::CharacterActivateOptions{}, *c);  // strength and anchored -1: keep the character's
}
TendonResult tendon_activate_character(TendonWorld* world, TendonCharacterId character, const TendonActivateOptions* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  tendon::CharacterActivateOptions o;
  if (c != nullptr) MirrorIn(*c, o);
  return Guard(world, [&] {
    tendon::Error why;
    const bool done = world->world->ActivateCharacter(IdFromC<CharacterId>(character), o, &why);
    return BoolAnswer(world, done, why, "the character could not be activated");
  });
}
TendonResult tendon_deactivate_character(TendonWorld* world, TendonCharacterId character, float blend_seconds,
                                         TendonHandBackSpace space) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (OutOfEnum(EnumValue(space), TENDON_HAND_BACK_MODEL)) return BadEnum(world, "space");
  return Guard(world, [&] {
    return Record(world, world->world->DeactivateCharacter(IdFromC<CharacterId>(character), blend_seconds,
                                                           ConvertIn<tendon::HandBackSpace>(space)));
  });
}
TendonResult tendon_set_character_strength(TendonWorld* world, TendonCharacterId character, float strength) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetCharacterStrength(IdFromC<CharacterId>(character), strength)); });
}
TendonResult tendon_set_character_anchored(TendonWorld* world, TendonCharacterId character, int32_t anchored) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetCharacterAnchored(IdFromC<CharacterId>(character), anchored != 0));
  });
}
void tendon_hit_options_defaults(TendonHitOptions* c) {
  if (c == nullptr) return;
  *c = TendonHitOptions{};
  MirrorOut(tendon::CharacterHitOptions{}, *c);
}
TendonResult tendon_hit_character(TendonWorld* world, TendonCharacterId character, int32_t part, TendonVec3 impulse,
                                  TendonVec3 world_point, const TendonHitOptions* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  tendon::CharacterHitOptions o;
  if (c != nullptr) MirrorIn(*c, o);
  return Guard(world, [&] {
    tendon::Error why;
    const bool done =
        world->world->HitCharacter(IdFromC<CharacterId>(character), part, ToCpp(impulse), ToCpp(world_point), o, &why);
    return BoolAnswer(world, done, why, "the hit was not taken");
  });
}
TendonResult tendon_character_go_limp(TendonWorld* world, TendonCharacterId character, float seconds) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->GoLimp(IdFromC<CharacterId>(character), seconds)); });
}
TendonResult tendon_apply_character_impulse(TendonWorld* world, TendonCharacterId character, TendonVec3 impulse) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->ApplyCharacterImpulse(IdFromC<CharacterId>(character), ToCpp(impulse)));
  });
}

TendonResult tendon_apply_character_part_impulse(TendonWorld* world, TendonCharacterId character, int32_t part,
                                                 TendonVec3 impulse, TendonVec3 world_point) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->ApplyCharacterPartImpulse(IdFromC<CharacterId>(character), part, ToCpp(impulse),
                                                                 ToCpp(world_point)));
  });
}

TendonResult tendon_get_character_state(const TendonWorld* world, TendonCharacterId character, TendonCharacterState* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  tendon::CharacterState s;
  if (const tendon::Error e = world->world->GetCharacterState(IdFromC<CharacterId>(character), &s);
      e.code != tendon::ErrorCode::kNone)
    return Record(Mutable(world), e);
  *out = TendonCharacterState{};
  MirrorOut(s, *out);
  return TENDON_OK;
}
TendonResult tendon_get_character_recovery_root(const TendonWorld* world, TendonCharacterId character, float leg_room,
                                                TendonTransform* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  tendon::Transform t;
  if (const tendon::Error e = world->world->GetCharacterRecoveryRoot(IdFromC<CharacterId>(character), leg_room, &t);
      e.code != tendon::ErrorCode::kNone)
    return Record(Mutable(world), e);
  *out = ToC(t);
  return TENDON_OK;
}
TendonRagdollId tendon_character_ragdoll(const TendonWorld* world, TendonCharacterId character) {
  return world != nullptr ? ToC(world->world->CharacterRagdoll(IdFromC<CharacterId>(character))) : 0;
}
TendonCharacterId tendon_character_of_ragdoll(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr ? ToC(world->world->CharacterOfRagdoll(IdFromC<tendon::RagdollId>(ragdoll))) : 0;
}
int32_t tendon_active_character_count(const TendonWorld* world) {
  return world != nullptr ? world->world->ActiveCharacterCount() : 0;
}
int32_t tendon_bound_character_count(const TendonWorld* world) {
  return world != nullptr ? world->world->BoundCharacterCount() : 0;
}
int32_t tendon_drain_character_events(TendonWorld* world, TendonCharacterEvent* out, int32_t capacity) {
  if (world == nullptr || out == nullptr || capacity <= 0) return 0;
  tendon::CharacterEvent events[64];
  int32_t total = 0;
  while (total < capacity) {
    const int32_t want = std::min<int32_t>(64, capacity - total);
    const int32_t got = world->world->DrainCharacterEvents(std::span<tendon::CharacterEvent>(events, static_cast<std::size_t>(want)));
    for (int32_t i = 0; i < got; ++i) out[total++] = ConvertOut<TendonCharacterEvent>(events[i]);
    if (got < want) break;
  }
  return total;
}

}  // extern "C"
