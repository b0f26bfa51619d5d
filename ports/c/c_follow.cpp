// ports/c/c_follow.cpp: the C ABI's following of received poses and the ownership handover
// (tendon/follow.h): the settings, following, pushing samples, stopping, and the clock.
//
// TendonFollowSettings mirrors tendon::FollowSettings through the table below
// (compile-time checked).
// What it does NOT do: validate (the World does, naming the field), beyond the C arrays'
// pointer and count pairs.
// Threading: as the C++ World. Memory: tendon_follow_ragdoll allocates in the World; the
// other calls do not.
#include "ports/c/c_port.h"
#include "tendon/follow.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonFollowSettings, FollowSettings> : TableOf<TendonFollowSettings, FollowSettings> {
  using Rows = RowList<Field<&C::interpolation_delay_seconds, &P::interpolation_delay_seconds>,
                       Field<&C::max_extrapolation_seconds, &P::max_extrapolation_seconds>,
                       Field<&C::response_seconds, &P::response_seconds>, Field<&C::max_speed, &P::max_speed>,
                       Field<&C::snap_distance, &P::snap_distance>>;
};
TENDON_C_CHECK_MIRROR(TendonFollowSettings, tendon::FollowSettings);

static_assert(TENDON_FOLLOW_SAMPLE_CAPACITY == tendon::kFollowSampleCapacity, "TENDON_FOLLOW_SAMPLE_CAPACITY");

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;
using tendon::RagdollId;

extern "C" {

void tendon_follow_settings_defaults(TendonFollowSettings* c) {
  if (c == nullptr) return;
  *c = TendonFollowSettings{};
  MirrorOut(tendon::FollowSettings{}, *c);
}
TendonResult tendon_follow_ragdoll(TendonWorld* world, TendonRagdollId ragdoll, const TendonFollowSettings* settings) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (settings == nullptr) return NullArgument(world, "settings");
  return Guard(world, [&] {
    tendon::FollowSettings s;
    MirrorIn(*settings, s);
    return Record(world, world->world->FollowRagdoll(IdFromC<RagdollId>(ragdoll), s));
  });
}
TendonResult tendon_push_follow_sample(TendonWorld* world, TendonRagdollId ragdoll, double sample_time,
                                       const TendonTransform* parts, int32_t part_count, const TendonVec3* linear,
                                       const TendonVec3* angular, int32_t velocity_count) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (BadArray(parts, part_count)) return BadArrayError(world, "parts");
  if (BadArray(linear, velocity_count)) return BadArrayError(world, "linear");
  if (BadArray(angular, velocity_count)) return BadArrayError(world, "angular");
  return Guard(world, [&] {
    return Record(world, world->world->PushFollowSample(IdFromC<RagdollId>(ragdoll), sample_time,
                                                        Span(ConvertIn<const tendon::Transform*>(parts), part_count),
                                                        Span(ConvertIn<const tendon::Vec3*>(linear), velocity_count),
                                                        Span(ConvertIn<const tendon::Vec3*>(angular), velocity_count)));
  });
}
TendonResult tendon_stop_following(TendonWorld* world, TendonRagdollId ragdoll) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->StopFollowing(IdFromC<RagdollId>(ragdoll))); });
}
int32_t tendon_is_following(const TendonWorld* world, TendonRagdollId ragdoll) {
  return world != nullptr && world->world->IsFollowing(IdFromC<RagdollId>(ragdoll)) ? 1 : 0;
}
TendonResult tendon_set_follow_clock(TendonWorld* world, double now) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] { return Record(world, world->world->SetFollowClock(now)); });
}
double tendon_follow_clock(const TendonWorld* world) { return world != nullptr ? world->world->FollowClock() : 0.0; }

}  // extern "C"
