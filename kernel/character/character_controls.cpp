// kernel/character/character_controls.cpp: a character's activation and the host's
// controls over it, and the event queue.
//
// What it owns: Activate hands the bones to physics from the pose the character shows
// (every part keeps the motion of its last two frames, plus the launch and the impulse) in
// one ragdoll call (RagdollSystem::Activate), after evicting the oldest active character
// when the budget is full; Release hands them back (the crossfade starts from the pose the
// body shows); strength, the anchor, hits (a flinch powers an inactive character up,
// anchored, for a while), going limp, impulses. Each Started and Ended goes to the event
// queue, whose room is sized at bind.
// What it does NOT do: step (character_frame.cpp), or let a ragdoll call's Error go
// unread: each is returned to the host, refuses the call, or is a broken promise
// (MustSucceed).
// Threading: the World's thread. Memory: none (the queue's room is reserved at bind; an
// error is built only for a caller who asks why).
#include <algorithm>
#include <limits>
#include <string>

#include "kernel/character/character_slot.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::detail {
namespace {

constexpr float kMinEaseSeconds = 1e-3f;  // a GoLimp shorter than this is at once

}  // namespace

void CharacterSystem::Push(const Slot& c, CharacterEvent::Type type, CharacterEndReason reason) {
  if (events_.size() >= event_capacity_) {
    ++dropped_events_;
    return;
  }
  events_.push_back(CharacterEvent{type, handles_.HandleAt(static_cast<uint32_t>(c.index)), c.activations, reason, now_});
}

int32_t CharacterSystem::DrainEvents(std::span<CharacterEvent> out) {
  const auto n = static_cast<int32_t>(std::min(out.size(), events_.size()));
  std::copy(events_.begin(), events_.begin() + n, out.begin());
  events_.erase(events_.begin(), events_.begin() + n);
  return n;
}

// The kinematic anchor, freezing and waking follow the host's controls. An error (the
// anchor or the hips' let-go velocity not finite: an animated pose that overflowed) leaves
// what it was about as it was, to be tried again at the next change.
Error CharacterSystem::ApplyControls(Slot& c) {
  const bool kinematic = c.anchored;
  if (kinematic != c.kinematic) {
    if (Error e = ragdolls_.SetKinematicRoot(c.ragdoll, kinematic ? &c.anchor : nullptr); !Ok(e)) return e;
    c.kinematic = kinematic;
    if (!kinematic && c.active && c.last_frame_dt >= kMinFrameSeconds) {
      // Let go: the hips keep the motion the animation was giving them.
      const float inv_dt = 1.0f / c.last_frame_dt;
      if (Error e = ragdolls_.SetPartVelocity(
              c.ragdoll, 0, (c.anchor.translation - c.anchor_prev.translation) * inv_dt,
              RotationVector(Normalize(c.anchor.rotation * Conjugate(c.anchor_prev.rotation))) * inv_dt);
          !Ok(e))
        return e;
    }
  }
  // A driven or anchored body never sleeps or freezes; a limp one's clocks start now.
  const bool powered = c.anchored || c.strength > 0;
  return ragdolls_.SetSleeping(c.ragdoll, !powered, !powered && c.freeze_when_settled,
                               powered ? std::numeric_limits<float>::infinity() : c.freeze_after_seconds);
}

bool CharacterSystem::Activate(CharacterId id, const CharacterActivateOptions& o, Error* why) {
  // The error is built only for a caller who asked why: a refusal allocates nothing then.
  auto refuse = [why](const auto& make) {
    if (why != nullptr) *why = make();
    return false;
  };
  Slot* found = Find(id);
  if (found == nullptr)
    return refuse([&] {
      return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
    });
  if (found->active)
    return refuse([&] { return Fail(ErrorCode::kInUse, -1, "character", "the character is already active"); });
  if (max_active_ <= 0)
    return refuse([&] {
      return Fail(ErrorCode::kCapacity, -1, "max_active_characters", "max_active_characters is 0: no character may be active");
    });
  Slot& c = *found;
  const CharacterArchetype& a = archetypes_[c.archetype];
  if (a.parts.empty())
    return refuse([&] { return Fail(ErrorCode::kEmpty, -1, "archetype", "the character has no parts"); });
  if (!IsFinite(o.launch_velocity))
    return refuse([&] {
      return Fail(ErrorCode::kNotFinite, -1, "launch_velocity", "launch_velocity is not finite");
    });
  if (!IsFinite(o.impulse))
    return refuse([&] { return Fail(ErrorCode::kNotFinite, -1, "impulse", "impulse is not finite"); });
  // The checks build their messages only when they fail: toggling never allocates.
  if (o.strength && !(*o.strength >= 0 && *o.strength <= 1))
    return refuse([&] { return CheckRange(*o.strength, 0, 1, -1, "strength"); });
  if (std::isnan(o.duration_seconds) || o.duration_seconds < 0)
    return refuse([&] {
      return Fail(ErrorCode::kOutOfRange, -1, "duration_seconds", "duration_seconds must be >= 0 (infinity: never)");
    });
  if (!(o.release_blend_seconds >= 0 && o.release_blend_seconds <= kMaxBlendSeconds))
    return refuse([&] {
      return CheckRange(o.release_blend_seconds, 0, kMaxBlendSeconds, -1, "release_blend_seconds");
    });
  // Every part keeps the motion it showed over the last two frames, plus the launch and
  // the whole-body impulse (the same velocity change for every part); the motors start at
  // the animated pose. Worked out before anyone is evicted: finite poses far apart can
  // overflow a velocity or a target, which refuses the activation and must evict no one.
  const auto n = static_cast<int32_t>(a.parts.size());
  const Vec3 extra = o.launch_velocity + o.impulse * (1.0f / a.total_mass);
  bool finite = true;
  for (int32_t j = 0; j < n; ++j) {
    Vec3 v{}, w{};
    if (c.last_frame_dt >= kMinFrameSeconds) {
      v = (c.shown_cur[j].translation - c.shown_prev[j].translation) * (1.0f / c.last_frame_dt);
      w = RotationVector(Normalize(c.shown_cur[j].rotation * Conjugate(c.shown_prev[j].rotation))) * (1.0f / c.last_frame_dt);
    }
    c.scratch_v[j] = v + extra;
    c.scratch_w[j] = w;
    finite = finite && IsFinite(c.scratch_v[j]) && IsFinite(c.scratch_w[j]);
  }
  ComputeTargets(c, a);
  for (int32_t j = 0; j < n; ++j) finite = finite && IsFinite(c.target[j]);
  if (!finite)
    return refuse([&] {
      return Fail(ErrorCode::kNotFinite, -1, "character",
                  "the pose the character shows gives non-finite part velocities or motor targets");
    });
  // The budget: the oldest live ragdoll goes.
  while (ActiveCount() >= max_active_) {
    Slot* oldest = nullptr;
    for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
      Slot* s = slots_[i].get();
      if (handles_.IsLiveAt(i) && s->active && (oldest == nullptr || s->serial < oldest->serial)) oldest = s;
    }
    if (Error e = Release(*oldest, CharacterEndReason::kEvicted, oldest->release_blend); !Ok(e))
      return refuse([&] { return e; });
  }
  const float strength = o.strength ? *o.strength : c.strength;
  const bool anchored = o.anchored ? *o.anchored : c.anchored;
  const bool powered = anchored || strength > 0;
  c.anchor = c.shown_cur[0];
  c.anchor_prev = c.shown_prev[0];
  for (int32_t j = 0; j < n; ++j) {
    c.target_prev[j] = c.target[j];
    c.target_w[j] = Vec3{};
  }
  // One call switches the ragdoll on: the anchor, the motors, the sleeping rule (a driven
  // or anchored body never sleeps or freezes), the parts where the character shows them.
  RagdollActivation activation;
  activation.kinematic_root = anchored ? &c.anchor : nullptr;
  activation.motor_targets = c.target;
  activation.motor_strength = strength;
  activation.motor_angular_velocities = c.target_w;
  activation.can_sleep = !powered;
  activation.freeze_when_asleep = !powered && c.freeze_when_settled;
  activation.freeze_after_seconds = powered ? std::numeric_limits<float>::infinity() : c.freeze_after_seconds;
  activation.parts = c.shown_cur;
  activation.linear = c.scratch_v;
  activation.angular = c.scratch_w;
  if (Error e = ragdolls_.Activate(c.ragdoll, activation); !Ok(e)) return refuse([&] { return e; });
  // The kinematic copy steps aside for the ragdoll (which cannot fail: the twin is live).
  if (!c.twin.IsNull()) MustSucceed(ragdolls_.SetEnabled(c.twin, false));
  c.strength = strength;
  c.anchored = anchored;
  c.kinematic = anchored;
  c.limp_left = 0;  // activating cancels a running go_limp
  c.hit_mode = false;
  c.active = true;
  ++active_count_;
  c.blending = false;
  c.serial = ++activation_serial_;
  ++c.activations;
  c.deadline = now_ + static_cast<double>(o.duration_seconds);
  c.release_blend = o.release_blend_seconds;
  Push(c, CharacterEvent::Type::kStarted, CharacterEndReason::kReleased);
  if (why != nullptr) *why = Error{};
  return true;
}

Error CharacterSystem::Release(Slot& c, CharacterEndReason reason, float blend_seconds, HandBackSpace space) {
  if (!c.active) return {};
  if (Error e = ragdolls_.SetEnabled(c.ragdoll, false); !Ok(e)) return e;
  if (!c.twin.IsNull()) {
    // The kinematic copy comes back where the body lies, still, and follows the animation
    // (crossfade included) from the next frame on.
    const std::size_t n = c.part_frames.size();
    MustSucceed(ragdolls_.SetEnabled(c.twin, true));
    c.scratch_v.assign(n, Vec3{});
    MustSucceed(ragdolls_.SetKinematicMotion(c.twin, c.part_frames, c.scratch_v, c.scratch_v));
  }
  c.blend_in_world = space == HandBackSpace::kWorld || (space == HandBackSpace::kAuto && !c.anchored && !c.hit_mode);
  c.active = false;
  --active_count_;
  c.hit_mode = false;
  c.limp_left = 0;
  // The crossfade starts from the pose the body shows: in the world, or under the model.
  for (std::size_t k = 0; k < c.blend_from.size(); ++k)
    c.blend_from[k] = c.blend_in_world ? c.output_world[k] : c.output_local[k];
  c.blending = blend_seconds > 0;
  c.blend_total = blend_seconds;
  c.blend_elapsed = 0;
  Push(c, CharacterEvent::Type::kEnded, reason);
  return {};
}

Error CharacterSystem::Deactivate(CharacterId id, float blend_seconds, HandBackSpace space) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(blend_seconds, 0, kMaxBlendSeconds, -1, "blend_seconds"); !Ok(e)) return e;
  if (c->hit_mode) {
    c->strength = c->saved_strength;
    c->anchored = c->saved_anchored;
  }
  if (static_cast<uint8_t>(space) > static_cast<uint8_t>(HandBackSpace::kModel))
    return Fail(ErrorCode::kOutOfRange, -1, "space", "not a HandBackSpace");
  return Release(*c, CharacterEndReason::kReleased, blend_seconds, space);
}

Error CharacterSystem::SetStrength(CharacterId id, float strength) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(strength, 0, 1, -1, "strength"); !Ok(e)) return e;
  c->strength = strength;
  c->limp_left = 0;
  return c->active ? ApplyControls(*c) : Error{};
}

Error CharacterSystem::SetAnchored(CharacterId id, bool anchored) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  c->anchored = anchored;
  return c->active ? ApplyControls(*c) : Error{};
}

bool CharacterSystem::Hit(CharacterId id, int32_t part, Vec3 impulse, Vec3 point, const CharacterHitOptions& o,
                          Error* why) {
  // The error is built only for a caller who asked why: a refusal allocates nothing then.
  auto refuse = [why](const auto& make) {
    if (why != nullptr) *why = make();
    return false;
  };
  Slot* c = Find(id);
  if (c == nullptr)
    return refuse([&] {
      return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
    });
  if (part < 0 || part >= static_cast<int32_t>(archetypes_[c->archetype].parts.size()))
    return refuse([&] { return Fail(ErrorCode::kBadReference, part, "part", "no such part"); });
  if (!IsFinite(impulse) || !IsFinite(point))
    return refuse([&] {
      return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse or its point is not finite");
    });
  if (!(o.duration_seconds > 0) || o.duration_seconds > kMaxBlendSeconds)
    return refuse([&] {
      return Fail(ErrorCode::kOutOfRange, -1, "duration_seconds", "duration_seconds must be within (0, 10000]");
    });
  if (!(o.blend_seconds >= 0 && o.blend_seconds <= kMaxBlendSeconds))
    return refuse([&] { return CheckRange(o.blend_seconds, 0, kMaxBlendSeconds, -1, "blend_seconds"); });
  if (!(o.strength >= 0 && o.strength <= 1))
    return refuse([&] { return CheckRange(o.strength, 0, 1, -1, "strength"); });
  if (!c->active) {
    // A flinch: powered up anchored to the animation, handed back after the duration.
    const float saved_strength = c->strength;
    const bool saved_anchored = c->anchored;
    CharacterActivateOptions activate;
    activate.strength = o.strength;
    activate.anchored = true;
    if (!Activate(id, activate, why)) return false;
    c->hit_mode = true;
    c->saved_strength = saved_strength;
    c->saved_anchored = saved_anchored;
  }
  if (c->hit_mode) {
    c->hit_left = o.duration_seconds;
    c->hit_blend = o.blend_seconds;
  }
  Error e = ragdolls_.ApplyImpulse(c->ragdoll, part, impulse, point);
  const bool ok = e.code == ErrorCode::kNone;
  if (why != nullptr) *why = std::move(e);
  return ok;
}

Error CharacterSystem::GoLimp(CharacterId id, float seconds) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(seconds, 0, kMaxBlendSeconds, -1, "seconds"); !Ok(e)) return e;
  if (!c->active) return Fail(ErrorCode::kInactive, -1, "character", "go_limp needs an active character: activate it first");
  c->anchored = false;
  c->hit_mode = false;
  // Under a millisecond (a denormal would flush to zero inside Step): limp at once.
  if (seconds >= kMinEaseSeconds && c->strength > 0) {
    c->limp_total = c->limp_left = seconds;
    c->limp_from = c->strength;
  } else {
    c->strength = 0;
    c->limp_left = 0;
  }
  return ApplyControls(*c);
}

Error CharacterSystem::ApplyImpulse(CharacterId id, Vec3 impulse) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (!IsFinite(impulse)) return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse is not finite");
  if (!c->active) return Fail(ErrorCode::kInactive, -1, "character", "the character is not active");
  const CharacterArchetype& a = archetypes_[c->archetype];
  // Applied per assembly at its mass: every part gets impulse / total mass, through its
  // centre of mass (no spin). All of them checked first, so a refusal applies none.
  const auto n = static_cast<int32_t>(a.parts.size());
  const Vec3 dv = impulse * (1.0f / a.total_mass);
  Vec3 part_impulse[kMaxRagdollParts], centre[kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j) {
    part_impulse[j] = dv * a.parts[j].mass;
    centre[j] = TransformPoint(c->part_frames[j], a.com_in_part[j]);
    if (!IsFinite(part_impulse[j]) || !IsFinite(centre[j]))
      return Fail(ErrorCode::kNotFinite, j, "impulse", "part " + std::to_string(j) + "'s share of the impulse is not finite");
  }
  for (int32_t j = 0; j < n; ++j) {
    if (Error e = ragdolls_.ApplyImpulse(c->ragdoll, j, part_impulse[j], centre[j]); !Ok(e)) return e;
  }
  return {};
}

Error CharacterSystem::ApplyPartImpulse(CharacterId id, int32_t part, Vec3 impulse, Vec3 point) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (!c->active) return Fail(ErrorCode::kInactive, -1, "character", "the character is not active");
  return ragdolls_.ApplyImpulse(c->ragdoll, part, impulse, point);
}

}  // namespace tendon::detail
