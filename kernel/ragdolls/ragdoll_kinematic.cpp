// kernel/ragdolls/ragdoll_kinematic.cpp: kinematic bodies the ragdoll system moves itself:
// host bodies (tendon/host_body.h) and characters' animated twins.
//
// What it owns: archetypes whose every part is kinematic (BuildKinematicArchetype), the
// World's own instances of them (BindInternal), their motion (SetKinematicMotion: a pose
// and the velocities it moves on with; SetKinematicTargets: the frames to reach by the end
// of the next stepping frame, the velocities derived in Prepare), and AdvanceKinematic,
// which moves them through the substeps in place of the rigid kernels. Their parts meet the
// ragdolls through the broad phase and the pair contacts like any kinematic part: fixed in
// the pair (never pushed), with their velocity in the pair's friction and restitution, so
// a platform carries and a car launches at its own speed.
// What it does NOT do: collide kinematic bodies with each other or the static world (the
// broad phase skips such pairs; the kernels never run their groups), or sleep them.
// Threading: the controls are for the World's thread between Steps; AdvanceKinematic runs
// per block inside Step (each block's lanes only). Memory: BuildKinematicArchetype and
// BindInternal allocate (bind time); nothing else does.
#include <cmath>

#include "kernel/core/finite.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

Result<RagdollArchetypeId> RagdollSystem::BuildKinematicArchetype(const RagdollSettings& settings, bool trigger) {
  Result<RagdollArchetypeId> built = BuildArchetype(settings);
  if (!built.ok()) return built;
  RagdollArchetype& a = archetypes_[built.value().index];
  a.kinematic_bodies = true;
  a.trigger = trigger;
  // Groups made again for a reused slot (BuildArchetype) took the flags before they were set.
  for (RagdollGroup& g : store_.groups)
    if (g.archetype == static_cast<int32_t>(built.value().index)) g = MakeGroup(g.archetype, g.kinematic_root);
  return built;
}

Result<RagdollId> RagdollSystem::BindInternal(const RagdollBinding& binding, int32_t kind, uint32_t owner_index,
                                              uint32_t owner_generation) {
  Result<RagdollId> bound = Bind(binding);
  if (!bound.ok()) return bound;
  RagdollSlot& slot = store_.slots[bound.value().index];
  slot.internal = kind;
  slot.owner_index = owner_index;
  slot.owner_generation = owner_generation;
  slot.can_sleep = false;
  const RagdollGroup& g = store_.groups[slot.group];
  if (g.kinematic_bodies) {
    slot.kinematic_targets.resize(static_cast<std::size_t>(slot.part_count));
    // Kinematic bodies are where they are put: nothing to push out of.
    const RigidBlockView view = store_.groups[slot.group].ViewOfLane(slot.lane);
    const int32_t l = g.LaneInBlock(slot.lane);
    for (int32_t j = 0; j < slot.part_count; ++j) {
      for (int32_t k = 0; k < kMaxContactPoints; ++k) view.Contact(kDeferred, j, k)[l] = 0.0f;
      view.Part(kRbPairDeferNow, j)[l] = 0.0f;
    }
  }
  ++internal_live_;
  return bound;
}

Error RagdollSystem::CheckKinematicBodies(RagdollId id) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  if (!store_.groups[store_.slots[id.index].group].kinematic_bodies)
    return Fail(ErrorCode::kBadReference, -1, "ragdoll", "not a kinematic body");
  return {};
}

Error RagdollSystem::SetKinematicMotion(RagdollId id, std::span<const Transform> part_frames, std::span<const Vec3> linear,
                                        std::span<const Vec3> angular) {
  if (Error e = CheckKinematicBodies(id); !Ok(e)) return e;
  RagdollSlot& slot = store_.slots[id.index];
  RagdollGroup& g = store_.groups[slot.group];
  const auto n = static_cast<std::size_t>(slot.part_count);
  if (part_frames.size() != n || linear.size() != n || angular.size() != n)
    return Fail(ErrorCode::kNullBuffer, -1, "part_frames", "one frame and two velocities per part");
  const RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  for (std::size_t j = 0; j < n; ++j) {
    const Transform part{part_frames[j].translation, Normalize(part_frames[j].rotation), {1, 1, 1}};
    const Transform body = Compose(part, g.body_in_part[j]);
    // The velocity at the body's centre of mass: the part origin's plus w x the offset.
    const Vec3 v = linear[j] + Cross(angular[j], body.translation - part.translation);
    const float values[kRbQPw + 1] = {body.translation.x, body.translation.y, body.translation.z, body.rotation.x,
                                      body.rotation.y,    body.rotation.z,    body.rotation.w,    v.x,
                                      v.y,                v.z,                angular[j].x,       angular[j].y,
                                      angular[j].z,       body.translation.x, body.translation.y, body.translation.z,
                                      body.rotation.x,    body.rotation.y,    body.rotation.z,    body.rotation.w};
    const auto jj = static_cast<int32_t>(j);
    for (int32_t f = 0; f <= kRbQPw; ++f) view.Part(f, jj)[l] = values[f];
    for (int32_t f = 0; f < 7; ++f) view.Part(kRbFrameStartX + f, jj)[l] = values[f];
  }
  slot.has_targets = false;
  return {};
}

Error RagdollSystem::SetKinematicTargets(RagdollId id, std::span<const Transform> part_frames) {
  if (Error e = CheckKinematicBodies(id); !Ok(e)) return e;
  RagdollSlot& slot = store_.slots[id.index];
  const RagdollGroup& g = store_.groups[slot.group];
  if (part_frames.size() != static_cast<std::size_t>(slot.part_count))
    return Fail(ErrorCode::kNullBuffer, -1, "part_frames", "one frame per part");
  for (int32_t j = 0; j < slot.part_count; ++j) {
    const Transform part{part_frames[j].translation, Normalize(part_frames[j].rotation), {1, 1, 1}};
    slot.kinematic_targets[j] = Compose(part, g.body_in_part[j]);
  }
  slot.has_targets = true;
  return {};
}

// Prepare's share for a kinematic-body lane with targets: each body's velocities take it
// from where it is to its target over the frame (the rotation by the shorter way).
void RagdollSystem::AimKinematicLane(RagdollSlot& slot, const RigidBlockView& view, int32_t l, float frame_seconds) {
  if (!slot.has_targets || !(frame_seconds > 0.0f)) return;
  const float inv_t = 1.0f / frame_seconds;
  for (int32_t j = 0; j < slot.part_count; ++j) {
    const Transform& target = slot.kinematic_targets[j];
    const Vec3 x{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
    const Quat q{view.Part(kRbQx, j)[l], view.Part(kRbQy, j)[l], view.Part(kRbQz, j)[l], view.Part(kRbQw, j)[l]};
    const Vec3 v = (target.translation - x) * inv_t;
    // dq = target q^-1; w = axis x angle / T (2 asin |dq.xyz|, sign by dq.w: the shorter way).
    Quat dq = Normalize(target.rotation * Conjugate(q));
    if (dq.w < 0) dq = Quat{-dq.x, -dq.y, -dq.z, -dq.w};
    const Vec3 axis{dq.x, dq.y, dq.z};
    const float s = Length(axis);
    const float angle = 2.0f * std::atan2(s, dq.w);
    const Vec3 w = s > 1e-9f ? axis * (angle / s * inv_t) : Vec3{};
    const float values[6] = {v.x, v.y, v.z, w.x, w.y, w.z};
    for (int32_t f = 0; f < 6; ++f) view.Part(kRbVx + f, j)[l] = values[f];
  }
}

// The rigid kernels' integration for kinematic bodies, in scalar: x += h v, q turned by
// h w and normalised, `steps` times (which: 0 the whole frame's substeps, 1 a substep's
// positions, 2 its velocities: nothing, the velocities are the host's).
void RagdollSystem::AdvanceKinematic(const RigidBlockView& view, int32_t which, int32_t steps, float h) {
  if (which == 2) return;
  const int32_t repeats = which == 0 ? steps : 1;
  for (int32_t l = 0; l < view.lanes; ++l) {
    if (view.Lane(kActive)[l] < 0.5f) continue;
    for (int32_t j = 0; j < view.part_count; ++j) {
      Vec3 x{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
      Quat q{view.Part(kRbQx, j)[l], view.Part(kRbQy, j)[l], view.Part(kRbQz, j)[l], view.Part(kRbQw, j)[l]};
      const Vec3 v{view.Part(kRbVx, j)[l], view.Part(kRbVy, j)[l], view.Part(kRbVz, j)[l]};
      const Vec3 w{view.Part(kRbWx, j)[l], view.Part(kRbWy, j)[l], view.Part(kRbWz, j)[l]};
      Vec3 xp = x;
      Quat qp = q;
      for (int32_t s = 0; s < repeats; ++s) {
        xp = x, qp = q;
        x = x + v * h;
        const Quat spin{w.x, w.y, w.z, 0.0f};
        const Quat dq = spin * q;
        q = Normalize(Quat{q.x + 0.5f * h * dq.x, q.y + 0.5f * h * dq.y, q.z + 0.5f * h * dq.z, q.w + 0.5f * h * dq.w});
      }
      const float values[kRbQPw + 1] = {x.x,  x.y,  x.z,  q.x,  q.y,  q.z,  q.w,  v.x,  v.y,  v.z,
                                        w.x,  w.y,  w.z,  xp.x, xp.y, xp.z, qp.x, qp.y, qp.z, qp.w};
      for (int32_t f = 0; f <= kRbQPw; ++f) view.Part(f, j)[l] = values[f];
    }
  }
}

}  // namespace tendon::detail
