// kernel/world/world_net.cpp: the World's network snapshot calls (tendon/net_snapshot.h):
// capturing a ragdoll's pose for EncodeNetPose, and a character's state as a message and
// back (the character system does that work: kernel/character/character_net.cpp).
#include <string>

#include "kernel/core/validation.h"
#include "kernel/world/world_impl.h"
#include "tendon/net_snapshot.h"
#include "tendon/world.h"

namespace tendon {

using detail::Fail;
using detail::Ok;

Error World::CaptureRagdollPose(RagdollId id, NetPose* out) const {
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  if (impl_->stepping)
    return Fail(ErrorCode::kReentrant, -1, "world", "a pose is captured between Steps, not from inside one");
  if (!impl_->ragdolls.IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const detail::RagdollSlot& slot = impl_->ragdolls.SlotForWorld(static_cast<int32_t>(id.index));
  const std::size_t n = static_cast<std::size_t>(slot.part_count);
  if (out->parts.size() != n)
    return Fail(ErrorCode::kNullBuffer, -1, "out.parts",
                "out.parts has " + std::to_string(out->parts.size()) + " frames, the ragdoll " + std::to_string(n) +
                    " parts");
  const bool velocities = !out->linear.empty() || !out->angular.empty();
  if (velocities && (out->linear.size() != n || out->angular.size() != n))
    return Fail(ErrorCode::kNullBuffer, -1, "out.linear",
                "out.linear and out.angular must be empty or hold one velocity per part");
  if (slot.output == nullptr)
    return Fail(ErrorCode::kNullBuffer, -1, "ragdoll", "the ragdoll has no output frames to capture");
  if (velocities) {
    if (Error e = impl_->ragdolls.GetVelocities(id, out->linear, out->angular); !Ok(e)) return e;
  }
  // The state at the World's time, as the velocities are: the output shows it one substep
  // late under render interpolation, and a pose stamped with this frame's tick would then
  // be played a substep late on the receiving side too.
  if (Error e = impl_->ragdolls.ReadPartFrames(id, out->parts); !Ok(e)) return e;
  out->asleep = slot.asleep || slot.frozen;
  out->has_velocities = velocities;
  return {};
}

Error World::CaptureNetCharacterState(CharacterId id, NetCharacterState* out) const {
  if (impl_->stepping)
    return Fail(ErrorCode::kReentrant, -1, "world", "a state is captured between Steps, not from inside one");
  return impl_->characters.CaptureNet(id, out);
}

Result<bool> World::ApplyNetCharacterState(CharacterId id, const NetCharacterState& state) {
  if (impl_->stepping)
    return Fail(ErrorCode::kReentrant, -1, "world",
                "a World call from inside Step (a host callback) would change the world mid-frame: refused");
  return impl_->characters.ApplyNet(id, state);
}

}  // namespace tendon
