// kernel/world/world_follow.cpp: the World's calls for following received poses and the
// ownership handover (tendon/follow.h), forwarded to its FollowSystem after the checks
// that need the other systems (characters own their ragdolls).
//
// What it does NOT do: steer (FollowSystem::Step, from OpenFrame, does).
// Threading: the World's thread, between Steps (kReentrant inside one). Memory:
// FollowRagdoll allocates the ragdoll's ring; the other calls do not.
#include "kernel/core/validation.h"
#include "kernel/world/world_impl.h"

namespace tendon {

using detail::Fail;

namespace {

Error Reentrant() {
  return Fail(ErrorCode::kReentrant, -1, "world",
              "a World call from inside Step (a host callback) would change the world mid-frame: refused");
}

Error StaleRagdoll() { return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale"); }

}  // namespace

Error World::FollowRagdoll(RagdollId ragdoll, const FollowSettings& settings) {
  if (impl_->stepping) return Reentrant();
  if (!impl_->ragdolls.IsHostRagdoll(ragdoll)) return StaleRagdoll();
  if (impl_->characters.CharacterOf(ragdoll).generation != 0)
    return Fail(ErrorCode::kInUse, -1, "ragdoll",
                "this ragdoll belongs to a character, which drives it: follow the character's state messages instead");
  if (!impl_->ragdolls.IsEnabled(ragdoll))
    return Fail(ErrorCode::kInactive, -1, "ragdoll",
                "the ragdoll is switched off (SetRagdollEnabled(false)): switch it on before following it");
  return impl_->follow.Follow(impl_->ragdolls, ragdoll, settings);
}

Error World::PushFollowSample(RagdollId ragdoll, double sample_time, std::span<const Transform> parts,
                              std::span<const Vec3> linear, std::span<const Vec3> angular) {
  if (impl_->stepping) return Reentrant();
  if (!impl_->ragdolls.IsHostRagdoll(ragdoll)) return StaleRagdoll();
  return impl_->follow.Push(impl_->ragdolls, ragdoll, sample_time, parts, linear, angular);
}

Error World::StopFollowing(RagdollId ragdoll) {
  if (impl_->stepping) return Reentrant();
  if (!impl_->ragdolls.IsHostRagdoll(ragdoll)) return StaleRagdoll();
  return impl_->follow.Stop(impl_->ragdolls, ragdoll);
}

bool World::IsFollowing(RagdollId ragdoll) const {
  return impl_->ragdolls.IsHostRagdoll(ragdoll) && impl_->follow.IsFollowing(ragdoll);
}

Error World::SetFollowClock(double now) {
  if (impl_->stepping) return Reentrant();
  return impl_->follow.SetClock(now, impl_->clock.time());
}

double World::FollowClock() const { return impl_->clock.time() + impl_->follow.ClockOffset(); }

}  // namespace tendon
