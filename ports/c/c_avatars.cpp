// ports/c/c_avatars.cpp: the C ABI's glTF / VRM avatars (ports/gltf/vrm_avatar.h): import
// an avatar kind by path or from memory, bind and unbind avatars on buffers Tendon owns,
// and hand the host those buffers.
//
// Kinds and avatars are the port's own objects, held per world in PortObjects (c_port.h,
// over the kernel's HandleTable): ids are generation-checked like the World's, so a stale
// one is refused (TENDON_ERROR_STALE_HANDLE), never dereferenced. TendonVrmOptions mirrors
// ports::VrmAvatarOptions through the table below. TendonVrmAvatarBuffers is no mirror: it
// lends the avatar's own vectors (a VrmAvatar is a class, not plain data).
// What it does NOT do: parse glTF (ports/gltf does) or step anything.
// Threading: as the C++ World. Memory: a kind holds the imported asset (shared by its
// avatars); an avatar owns its buffers until it is unbound.
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>
#include <utility>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonVrmOptions, VrmAvatarOptions> : TableOf<TendonVrmOptions, VrmAvatarOptions> {
  using Rows = RowList<Field<&C::character, &P::character>, Field<&C::total_mass, &P::total_mass>,
                       Field<&C::limit_source, &P::limit_source>,
                       // A layout choice with the same results (issue 41); C hosts get the default.
                       NotInC<&P::strand_lanes>, Field<&C::inactive_bodies, &P::inactive_bodies>>;
};
TENDON_C_CHECK_MIRROR(TendonVrmOptions, tendon::ports::VrmAvatarOptions);
template <>
struct MirrorTable<TendonVrmAvatarBinding, VrmAvatarBinding> : TableOf<TendonVrmAvatarBinding, VrmAvatarBinding> {
  using Rows = RowList<Field<&C::model_world, &P::model_world>,
                       // Converted into storage the bind keeps until it returns (PoseStreamsToCpp).
                       ByHand<&C::pose_streams, &C::pose_stream_count, &P::pose_streams>>;
};
TENDON_C_CHECK_MIRROR(TendonVrmAvatarBinding, tendon::ports::VrmAvatarBinding);
// The kind's skeleton and skins are lent, not converted: the rows name every field so that
// a field added on either side fails the build.
template <>
struct MirrorTable<TendonVrmSkeleton, SkeletonSettings> : TableOf<TendonVrmSkeleton, SkeletonSettings> {
  using Rows = RowList<ByHand<&C::bone_count, &C::names, &P::names>, ByHand<&C::parents, &P::parents>,
                       ByHand<&C::rest_local, &P::rest_local>>;
};
TENDON_C_CHECK_MIRROR(TendonVrmSkeleton, tendon::SkeletonSettings);
template <>
struct MirrorTable<TendonVrmSkin, GltfSkin> : TableOf<TendonVrmSkin, GltfSkin> {
  using Rows = RowList<NotInC<&P::name>, ByHand<&C::joint_count, &C::joints, &P::joints>,
                       ByHand<&C::inverse_binds, &P::inverse_bind>>;
};
TENDON_C_CHECK_MIRROR(TendonVrmSkin, tendon::ports::GltfSkin);
static_assert(sizeof(std::array<float, 16>) == 16 * sizeof(float), "a skin's inverse binds are lent as packed floats");

namespace {

VrmAvatarOptions OptionsToCpp(const TendonVrmOptions* c) {
  VrmAvatarOptions o;
  if (c != nullptr) MirrorIn(*c, o);
  return o;
}
TendonResult TakeKind(TendonWorld* world, Result<std::shared_ptr<const VrmAvatarArchetype>> loaded, TendonVrmKindId* out) {
  if (!loaded.ok()) return Record(world, loaded.error());  // kIo becomes TENDON_ERROR_IO
  *out = ToC(world->vrm_kinds.Add(std::move(loaded).value()));
  return TENDON_OK;
}
const VrmAvatarArchetype* FindKind(const TendonWorld* world, TendonVrmKindId kind) {
  const auto* k = world->vrm_kinds.Find(IdFromC<VrmKindId>(kind));
  return k != nullptr ? k->get() : nullptr;
}
VrmAvatar* FindAvatar(TendonWorld* world, TendonVrmAvatarId avatar) {
  auto* a = world->vrm_avatars.Find(IdFromC<VrmAvatarId>(avatar));
  return a != nullptr ? a->get() : nullptr;
}
TendonResult StaleAvatar(TendonWorld* world) {
  return Record(world, TENDON_ERROR_STALE_HANDLE, "the avatar id is null or stale", "avatar");
}
TendonResult StaleKind(TendonWorld* world) {
  return Record(world, TENDON_ERROR_STALE_HANDLE, "the avatar kind id is null or stale", "kind");
}
TendonResult BindAvatar(TendonWorld* world, const std::shared_ptr<const VrmAvatarArchetype>& kind,
                        const VrmAvatarBinding& binding, TendonVrmAvatarId* out) {
  auto bound = tendon::ports::VrmAvatar::Bind(*world->world, kind, binding);
  if (!bound.ok()) return Record(world, bound.error());
  *out = ToC(world->vrm_avatars.Add(std::move(bound).value()));
  return TENDON_OK;
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

void tendon_vrm_options_defaults(TendonVrmOptions* c) {
  if (c == nullptr) return;
  *c = TendonVrmOptions{};
  MirrorOut(tendon::ports::VrmAvatarOptions{}, *c);
}
TendonResult tendon_load_vrm_kind(TendonWorld* world, const char* path, const TendonVrmOptions* options, TendonVrmKindId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (path == nullptr) return NullArgument(world, "path");
  if (out == nullptr) return NullArgument(world, "out");
  if (options != nullptr && OutOfEnum(EnumValue(options->limit_source), TENDON_LIMITS_CLIPS))
    return BadEnum(world, "options.limit_source");
  if (options != nullptr && OutOfEnum(EnumValue(options->inactive_bodies), TENDON_INACTIVE_BODIES_KINEMATIC))
    return BadEnum(world, "options.inactive_bodies");
  return Guard(world, [&] {
    return TakeKind(world, tendon::ports::VrmAvatarArchetype::Load(*world->world, path, OptionsToCpp(options)), out);
  });
}
TendonResult tendon_load_vrm_kind_from_memory(TendonWorld* world, const void* bytes, size_t size, const char* name,
                                              const TendonVrmOptions* options, TendonVrmKindId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (bytes == nullptr && size > 0) return NullArgument(world, "bytes");
  if (out == nullptr) return NullArgument(world, "out");
  if (options != nullptr && OutOfEnum(EnumValue(options->limit_source), TENDON_LIMITS_CLIPS))
    return BadEnum(world, "options.limit_source");
  if (options != nullptr && OutOfEnum(EnumValue(options->inactive_bodies), TENDON_INACTIVE_BODIES_KINEMATIC))
    return BadEnum(world, "options.inactive_bodies");
  return Guard(world, [&] {
    const std::span<const uint8_t> span(static_cast<const uint8_t*>(bytes), size);
    return TakeKind(world,
                    tendon::ports::VrmAvatarArchetype::Load(*world->world, span, name != nullptr ? name : "memory",
                                                            OptionsToCpp(options)),
                    out);
  });
}
int32_t tendon_vrm_kind_bone_count(const TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return 0;
  const auto* k = FindKind(world, kind);
  return k != nullptr ? static_cast<int32_t>(k->asset().skeleton.parents.size()) : 0;
}
int32_t tendon_vrm_kind_joint_count(const TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return 0;
  const auto* k = FindKind(world, kind);
  return k != nullptr ? k->joint_count() : 0;
}
TendonCharacterArchetypeId tendon_vrm_kind_character_archetype(const TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return 0;
  const auto* k = FindKind(world, kind);
  return k != nullptr ? ToC(k->character()) : 0;
}
TendonResult tendon_bind_vrm_avatar(TendonWorld* world, TendonVrmKindId kind, TendonTransform model_world,
                                    TendonVrmAvatarId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(world, "out");
  auto* k = world->vrm_kinds.Find(IdFromC<VrmKindId>(kind));
  if (k == nullptr) return StaleKind(world);
  return Guard(world, [&] {
    tendon::ports::VrmAvatarBinding binding;
    binding.model_world = ToCpp(model_world);
    return BindAvatar(world, *k, binding, out);
  });
}
void tendon_vrm_avatar_binding_defaults(TendonVrmAvatarBinding* binding) {
  if (binding == nullptr) return;
  *binding = TendonVrmAvatarBinding{};
  MirrorOut(tendon::ports::VrmAvatarBinding{}, *binding);
}
TendonResult tendon_bind_vrm_avatar_with(TendonWorld* world, TendonVrmKindId kind, const TendonVrmAvatarBinding* binding,
                                         TendonVrmAvatarId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (binding == nullptr) return NullArgument(world, "binding");
  if (out == nullptr) return NullArgument(world, "out");
  auto* k = world->vrm_kinds.Find(IdFromC<VrmKindId>(kind));
  if (k == nullptr) return StaleKind(world);
  if (TendonResult r = CheckPoseStreams(world, binding->pose_streams, binding->pose_stream_count); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<tendon::PoseStream> streams;
    tendon::ports::VrmAvatarBinding b;
    MirrorIn(*binding, b);
    b.pose_streams = PoseStreamsToCpp(binding->pose_streams, binding->pose_stream_count, &streams);
    return BindAvatar(world, *k, b, out);
  });
}
TendonResult tendon_vrm_kind_skeleton(const TendonWorld* world, TendonVrmKindId kind, TendonVrmSkeleton* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  const auto* k = FindKind(world, kind);
  if (k == nullptr) return StaleKind(Mutable(world));
  out->bone_count = k->bone_count();
  out->names = k->bone_name_pointers().data();
  out->parents = k->skeleton().parents.data();
  out->rest_local = ConvertOut<const TendonTransform*>(static_cast<const tendon::Transform*>(k->skeleton().rest_local.data()));
  return TENDON_OK;
}
int32_t tendon_vrm_kind_skin_count(const TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return 0;
  const auto* k = FindKind(world, kind);
  return k != nullptr ? static_cast<int32_t>(k->skins().size()) : 0;
}
TendonResult tendon_vrm_kind_skin(const TendonWorld* world, TendonVrmKindId kind, int32_t skin, TendonVrmSkin* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(Mutable(world), "out");
  const auto* k = FindKind(world, kind);
  if (k == nullptr) return StaleKind(Mutable(world));
  if (skin < 0 || skin >= static_cast<int32_t>(k->skins().size())) {
    // snprintf, not std::to_string: its digit table would be exported (CAbi.TheLibraryExportsOnlyTendonFunctions).
    char text[96];
    std::snprintf(text, sizeof text, "skin %d is outside [0, %d)", static_cast<int>(skin),
                  static_cast<int>(k->skins().size()));
    return Record(Mutable(world), TENDON_ERROR_OUT_OF_RANGE, text, "skin", skin);
  }
  const tendon::ports::GltfSkin& s = k->skins()[skin];
  out->joint_count = static_cast<int32_t>(s.joints.size());
  out->joints = s.joints.data();
  out->inverse_binds = s.inverse_bind.empty() ? nullptr : s.inverse_bind.front().data();
  return TENDON_OK;
}
TendonResult tendon_unload_vrm_kind(TendonWorld* world, TendonVrmKindId kind) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  auto* k = world->vrm_kinds.Find(IdFromC<VrmKindId>(kind));
  if (k == nullptr) return StaleKind(world);
  if (world->world->FrameInFlight()) return InFlight(world);
  // Its avatars hold it (a shared_ptr each): unloading under them would leave them bound to
  // archetypes that are gone.
  if (k->use_count() > 1) {
    char text[96];
    std::snprintf(text, sizeof text, "%ld avatars of this kind are still bound: unbind them first",
                  static_cast<long>(k->use_count() - 1));
    return Record(world, TENDON_ERROR_IN_USE, text, "kind");
  }
  return Guard(world, [&] {
    const tendon::Error e = (*k)->Release();
    if (e.code != tendon::ErrorCode::kNone) return Record(world, e);
    world->vrm_kinds.Remove(IdFromC<VrmKindId>(kind));
    return TENDON_OK;
  });
}
TendonResult tendon_unbind_vrm_avatar(TendonWorld* world, TendonVrmAvatarId avatar) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  tendon::ports::VrmAvatar* a = FindAvatar(world, avatar);
  if (a == nullptr) return StaleAvatar(world);
  return Guard(world, [&] {
    const tendon::Error e = a->Unbind();
    // Mid-frame the avatar is still bound, and keeps its id.
    if (e.code != tendon::ErrorCode::kReentrant) world->vrm_avatars.Remove(IdFromC<VrmAvatarId>(avatar));
    return Record(world, e);
  });
}
TendonResult tendon_vrm_avatar_buffers(TendonWorld* world, TendonVrmAvatarId avatar, TendonVrmAvatarBuffers* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(world, "out");
  tendon::ports::VrmAvatar* a = FindAvatar(world, avatar);
  if (a == nullptr) return StaleAvatar(world);
  out->model_world = ConvertOut<TendonTransform*>(&a->model_world);
  out->animated_local = ConvertOut<TendonTransform*>(a->animated_local.data());
  out->output_local = ConvertOut<const TendonTransform*>(static_cast<const tendon::Transform*>(a->output_local.data()));
  out->output_world = ConvertOut<const TendonTransform*>(static_cast<const tendon::Transform*>(a->output_world.data()));
  out->bone_count = static_cast<int32_t>(a->animated_local.size());
  out->character = ToC(a->character);
  return TENDON_OK;
}
TendonResult tendon_vrm_avatar_update_world(TendonWorld* world, TendonVrmAvatarId avatar) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  tendon::ports::VrmAvatar* a = FindAvatar(world, avatar);
  if (a == nullptr) return StaleAvatar(world);
  // output_world is read by the frame's lanes (the chains hang from it): writing it mid-frame
  // would race them, as any other mutating call would.
  if (world->world->FrameInFlight()) return InFlight(world);
  a->UpdateWorld();
  return TENDON_OK;
}

}  // extern "C"
