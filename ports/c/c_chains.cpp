// ports/c/c_chains.cpp: the C ABI's verlet chains: settings and their defaults, building a
// chain archetype, binding, rebinding and unbinding chains, and reading their nodes.
//
// Each C struct mirrors its C++ struct through a table below (c_mirror.h): the rows convert
// the fields and prove at compile time that none is missed. A chain bone's parent_frame
// crosses beside the bones (TendonChainArchetypeSettings::parent_frames) so that bones a
// host fills field by field stay valid; it is set by hand after the rows run.
// What it does NOT do: validate settings (BuildChainArchetype does, naming the item and
// field); here only pointers, counts and enum ranges are refused, before any conversion.
// Threading: as the C++ World. Memory: building and binding allocate the converted
// settings; the host's buffers are named, not copied.
#include <vector>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonChainSettings, ChainSettings> : TableOf<TendonChainSettings, ChainSettings> {
  using Rows = RowList<Field<&C::damping, &P::damping>, Field<&C::stiffness, &P::stiffness>,
                       Field<&C::gravity_scale, &P::gravity_scale>, Field<&C::wind_scale, &P::wind_scale>,
                       Field<&C::node_radius, &P::node_radius>, Field<&C::gravity_push, &P::gravity_push>>;
};
TENDON_C_CHECK_MIRROR(TendonChainSettings, tendon::ChainSettings);

template <>
struct MirrorTable<TendonChainNodeOverride, ChainNodeOverride> : TableOf<TendonChainNodeOverride, ChainNodeOverride> {
  using Rows = RowList<Field<&C::node, &P::node>, Optional<&C::has_damping, &C::damping, &P::damping>,
                       Optional<&C::has_stiffness, &C::stiffness, &P::stiffness>,
                       Optional<&C::has_gravity_scale, &C::gravity_scale, &P::gravity_scale>,
                       Optional<&C::has_wind_scale, &C::wind_scale, &P::wind_scale>,
                       Optional<&C::has_radius, &C::radius, &P::radius>,
                       Optional<&C::has_gravity_push, &C::gravity_push, &P::gravity_push>,
                       Optional<&C::has_collider_mask, &C::collider_mask, &P::collider_mask>,
                       Optional<&C::has_pinned, &C::pinned, &P::pinned>>;
};
TENDON_C_CHECK_MIRROR(TendonChainNodeOverride, tendon::ChainNodeOverride);

template <>
struct MirrorTable<TendonCollider, ColliderSettings> : TableOf<TendonCollider, ColliderSettings> {
  using Rows = RowList<Field<&C::shape, &P::shape>, Field<&C::inside, &P::inside>, Field<&C::bone, &P::bone>,
                       Field<&C::frame, &P::frame>, Field<&C::a, &P::a>, Field<&C::b, &P::b>,
                       Field<&C::radius, &P::radius>>;
};
TENDON_C_CHECK_MIRROR(TendonCollider, tendon::ColliderSettings);

template <>
struct MirrorTable<TendonChainBone, ChainBone> : TableOf<TendonChainBone, ChainBone> {
  using Rows = RowList<Field<&C::parent, &P::parent>, Field<&C::rest_local, &P::rest_local>,
                       Field<&C::virtual_tip, &P::virtual_tip>,
                       // TendonChainArchetypeSettings::parent_frames carries it, beside the bones.
                       NotInC<&P::parent_frame>>;
};
TENDON_C_CHECK_MIRROR(TendonChainBone, tendon::ChainBone);

template <>
struct MirrorTable<TendonChainArchetypeSettings, ChainArchetypeSettings>
    : TableOf<TendonChainArchetypeSettings, ChainArchetypeSettings> {
  using Rows = RowList<Field<&C::name, &P::name>, Field<&C::model, &P::model>,
                       OptionalUnlessNegative<&C::teleport_guard, &P::teleport_guard>,
                       ArrayOf<&C::bones, &C::bone_count, &P::bones>, Field<&C::settings, &P::settings>,
                       ArrayOf<&C::overrides, &C::override_count, &P::overrides>,
                       ArrayOf<&C::colliders, &C::collider_count, &P::colliders>,
                       // Each bone's ChainBone::parent_frame (ArchetypeToCpp).
                       ByHand<&C::parent_frames>, Field<&C::host_body_mask, &P::host_body_mask>,
                       Field<&C::max_host_bodies, &P::max_host_bodies>>;
};
TENDON_C_CHECK_MIRROR(TendonChainArchetypeSettings, tendon::ChainArchetypeSettings);

template <>
struct MirrorTable<TendonChainBinding, ChainBinding> : TableOf<TendonChainBinding, ChainBinding> {
  using Rows = RowList<Field<&C::archetype, &P::archetype>, Field<&C::root_parent_world, &P::root_parent_world>,
                       SpanOf<&C::animated_local, &C::animated_count, &P::animated_local>,
                       SpanOf<&C::output_local, &C::output_count, &P::output_local>,
                       SpanOf<&C::bone_map, &C::bone_map_count, &P::bone_map>,
                       SpanOf<&C::collider_frames, &C::collider_frame_count, &P::collider_frames>,
                       // Converted into storage the bind keeps until it returns (BindingToCpp).
                       ByHand<&C::pose_streams, &C::pose_stream_count, &P::pose_streams>,
                       SpanOf<&C::output_world, &C::output_world_count, &P::output_world>>;
};
TENDON_C_CHECK_MIRROR(TendonChainBinding, tendon::ChainBinding);

namespace {

ChainArchetypeSettings ArchetypeToCpp(const TendonChainArchetypeSettings& c) {
  ChainArchetypeSettings s;
  MirrorIn(c, s);
  if (c.parent_frames != nullptr)
    for (int32_t i = 0; i < c.bone_count; ++i) s.bones[i].parent_frame = c.parent_frames[i];
  return s;
}

ChainBinding BindingToCpp(const TendonChainBinding& b, std::vector<PoseStream>* streams) {
  ChainBinding out;
  MirrorIn(b, out);
  out.pose_streams = PoseStreamsToCpp(b.pose_streams, b.pose_stream_count, streams);
  return out;
}
TendonResult CheckChainBinding(TendonWorld* w, const TendonChainBinding* b) {
  if (b == nullptr) return NullArgument(w, "binding");
  if (BadArray(b->animated_local, b->animated_count)) return BadArrayError(w, "animated_local");
  if (BadArray(b->output_local, b->output_count)) return BadArrayError(w, "output_local");
  if (BadArray(b->bone_map, b->bone_map_count)) return BadArrayError(w, "bone_map");
  if (BadArray(b->collider_frames, b->collider_frame_count)) return BadArrayError(w, "collider_frames");
  if (BadArray(b->output_world, b->output_world_count)) return BadArrayError(w, "output_world");
  return CheckPoseStreams(w, b->pose_streams, b->pose_stream_count);
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::ChainId;

extern "C" {

void tendon_chain_settings_defaults(TendonChainSettings* c) {
  if (c == nullptr) return;
  *c = TendonChainSettings{};
  MirrorOut(tendon::ChainSettings{}, *c);
}
void tendon_chain_archetype_settings_defaults(TendonChainArchetypeSettings* c) {
  if (c == nullptr) return;
  *c = TendonChainArchetypeSettings{};
  MirrorOut(tendon::ChainArchetypeSettings{}, *c);  // teleport_guard -1: the model's default
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
  return Guard(world, [&] { return Take(world, world->world->BuildChainArchetype(ArchetypeToCpp(*c)), out); });
}

int32_t tendon_chain_bone_count(const TendonWorld* world, TendonChainArchetypeId archetype) {
  return world != nullptr ? world->world->ChainBoneCount(IdFromC<tendon::ChainArchetypeId>(archetype)) : 0;
}
TendonResult tendon_remove_chain_archetype(TendonWorld* world, TendonChainArchetypeId archetype) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->RemoveChainArchetype(IdFromC<tendon::ChainArchetypeId>(archetype)));
  });
}
void tendon_chain_bone_defaults(TendonChainBone* c) {
  if (c == nullptr) return;
  *c = TendonChainBone{};
  MirrorOut(tendon::ChainBone{}, *c);
}
void tendon_chain_node_override_defaults(TendonChainNodeOverride* c) {
  if (c == nullptr) return;
  *c = TendonChainNodeOverride{};
  MirrorOut(tendon::ChainNodeOverride{}, *c);
}
void tendon_collider_defaults(TendonCollider* c) {
  if (c == nullptr) return;
  *c = TendonCollider{};
  MirrorOut(tendon::ColliderSettings{}, *c);
}
void tendon_chain_binding_defaults(TendonChainBinding* c) {
  if (c == nullptr) return;
  *c = TendonChainBinding{};
  MirrorOut(tendon::ChainBinding{}, *c);
}

TendonResult tendon_bind_chain(TendonWorld* world, const TendonChainBinding* binding, TendonChainId* out) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (out == nullptr) return NullArgument(world, "out");
  if (TendonResult r = CheckChainBinding(world, binding); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<tendon::PoseStream> streams;
    return Take(world, world->world->BindChain(BindingToCpp(*binding, &streams)), out);
  });
}
TendonResult tendon_rebind_chain(TendonWorld* world, TendonChainId chain, const TendonChainBinding* binding) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (TendonResult r = CheckChainBinding(world, binding); r != TENDON_OK) return r;
  return Guard(world, [&] {
    std::vector<tendon::PoseStream> streams;
    return Record(world, world->world->RebindChain(IdFromC<ChainId>(chain), BindingToCpp(*binding, &streams)));
  });
}
TendonResult tendon_unbind_chain(TendonWorld* world, TendonChainId chain) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->UnbindChain(IdFromC<ChainId>(chain))); });
}
int32_t tendon_chain_is_valid(const TendonWorld* world, TendonChainId chain) {
  return world != nullptr && world->world->IsValid(IdFromC<ChainId>(chain)) ? 1 : 0;
}
int32_t tendon_chain_is_simulated(const TendonWorld* world, TendonChainId chain) {
  return world != nullptr && world->world->IsSimulated(IdFromC<ChainId>(chain)) ? 1 : 0;
}
TendonResult tendon_get_chain_node_positions(const TendonWorld* world, TendonChainId chain, TendonVec3* out, int32_t count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (BadArray(out, count)) return BadArrayError(Mutable(world), "out");
  return Guard(Mutable(world), [&] {
    return Record(Mutable(world), world->world->GetChainNodePositions(IdFromC<ChainId>(chain),
                                                                      Span(reinterpret_cast<tendon::Vec3*>(out), count)));
  });
}

}  // extern "C"
