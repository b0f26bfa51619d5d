// kernel/character/character_queries.cpp: what the host reads of a character: its state,
// where to stand it up, and the handles between characters and their ragdolls.
//
// What it owns: GetState (active, blending, settled, the root and its velocity, the
// momentum's speed, which way the body faces and heads), GetRecoveryRoot (the root
// placement a get-up clip starts from: the root's yaw, upright), RagdollOf and CharacterOf,
// and the counts. An active character is read from its ragdoll (part frames and
// velocities); an inactive one from the pose it showed over the last two frames. No query
// returns a non-finite number.
// What it does NOT do: change anything.
// Threading: the World's thread. Memory: none.
#include <cmath>

#include "kernel/character/character_slot.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {
namespace {

constexpr float kRadToDeg = 57.2957795f;

// The twist of q about unit axis u (swing-twist decomposition): the yaw part for u = up.
Quat TwistAbout(Quat q, Vec3 u) {
  const float d = q.x * u.x + q.y * u.y + q.z * u.z;
  const Quat t{u.x * d, u.y * d, u.z * d, q.w};
  const float len = std::sqrt(Dot(t, t));
  return len > 1e-6f ? Quat{t.x / len, t.y / len, t.z / len, t.w / len} : Quat{};
}

}  // namespace

Error CharacterSystem::GetState(CharacterId id, CharacterState* out) const {
  const Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  const CharacterArchetype& a = archetypes_[c->archetype];
  CharacterState s;
  s.active = c->active;
  s.blending_out = c->blending;
  s.settled = c->active && (ragdolls_.IsAsleep(c->ragdoll) || ragdolls_.IsFrozen(c->ragdoll));
  s.anchored = c->anchored;
  s.strength = c->strength;
  s.generation = c->activations;
  s.root = c->active ? c->part_frames[0] : c->shown_cur[0];
  s.total_mass = a.total_mass;
  s.unanchored_mass = a.total_mass - (c->active && c->kinematic ? a.parts[0].mass : 0.0f);
  if (c->active) {
    const auto n = static_cast<int32_t>(a.parts.size());
    Vec3 v[kMaxRagdollParts], w[kMaxRagdollParts];
    if (Error e = ragdolls_.GetVelocities(c->ragdoll, std::span<Vec3>(v, n), std::span<Vec3>(w, n)); !Ok(e)) return e;
    s.root_velocity = v[0];
    Vec3 momentum{};
    for (int32_t j = 0; j < n; ++j) momentum = momentum + v[j] * a.parts[j].mass;
    s.speed = Length(momentum) / a.total_mass;
  } else if (c->last_frame_dt >= kMinFrameSeconds) {
    s.root_velocity = (c->shown_cur[0].translation - c->shown_prev[0].translation) * (1.0f / c->last_frame_dt);
    s.speed = Length(s.root_velocity);
  }
  const std::span<const Transform> frames = c->active ? std::span<const Transform>(c->part_frames) : c->shown_cur;
  const Vec3 front = Rotate(frames[a.torso_part].rotation, a.forward_in_torso);
  // The nearest of the three: the chest within 45 degrees of straight up is on its back.
  constexpr float kSin45 = 0.70710678f;
  s.facing = front.y > kSin45 ? CharacterFacing::kUp : (front.y < -kSin45 ? CharacterFacing::kDown : CharacterFacing::kSide);
  const Vec3 toward = frames[a.head_part >= 0 ? a.head_part : 0].translation - frames[0].translation;
  s.heading_degrees = (std::fabs(toward.x) + std::fabs(toward.z) > 1e-6f) ? std::atan2(toward.x, toward.z) * kRadToDeg : 0.0f;
  // Finite poses far apart can still overflow a difference: no query returns non-finite.
  if (!IsFinite(s.root_velocity) || !std::isfinite(s.speed)) {
    s.root_velocity = Vec3{};
    s.speed = 0;
  }
  if (!std::isfinite(s.heading_degrees)) s.heading_degrees = 0;
  *out = s;
  return {};
}

Error CharacterSystem::GetRecoveryRoot(CharacterId id, float leg_room, Transform* out) const {
  const Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(leg_room, 0, 1e4f, -1, "leg_room"); !Ok(e)) return e;
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  const CharacterArchetype& a = archetypes_[c->archetype];
  const Transform& root = c->active ? c->part_frames[0] : c->shown_cur[0];
  // The model's rotation the root implies, reduced to its yaw; the root stood upright in it.
  const Quat model = Normalize(root.rotation * Conjugate(a.root_rest_rotation));
  const Quat yaw = TwistAbout(model, Vec3{0, 1, 0});
  *out = Transform{root.translation + Vec3{0, leg_room, 0}, Normalize(yaw * a.root_rest_rotation), {1, 1, 1}};
  return {};
}

RagdollId CharacterSystem::RagdollOf(CharacterId id) const {
  const Slot* c = Find(id);
  return c != nullptr ? c->ragdoll : RagdollId{};
}

CharacterId CharacterSystem::CharacterOf(RagdollId ragdoll) const {
  if (ragdoll.index >= character_of_ragdoll_.size()) return CharacterId{};
  const int32_t index = character_of_ragdoll_[ragdoll.index];
  if (index < 0 || !handles_.IsLiveAt(static_cast<uint32_t>(index)) || !(slots_[index]->ragdoll == ragdoll))
    return CharacterId{};
  return handles_.HandleAt(static_cast<uint32_t>(index));
}

int32_t CharacterSystem::ActiveCount() const { return active_count_; }

int32_t CharacterSystem::BoundCount() const { return static_cast<int32_t>(handles_.LiveCount()); }

}  // namespace tendon::detail
