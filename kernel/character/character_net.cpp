// kernel/character/character_net.cpp: a character's state as a network message
// (tendon/net_snapshot.h; World::CaptureNetCharacterState, World::ApplyNetCharacterState).
//
// The receiver takes the sender's generation as its own, so that a later message can be
// told from an older one: a message of an older generation, or one that activates the
// generation this character already ended, is stale and changes nothing. Everything else
// goes through the calls a host would make (Activate, Release, SetStrength, SetAnchored,
// GoLimp, ApplyImpulse), so the events, timers and motors are theirs.
#include <algorithm>

#include "kernel/character/character_slot.h"
#include "kernel/character/character_system.h"
#include "tendon/net_snapshot.h"

namespace tendon::detail {

namespace {
constexpr float kMaxNetLimpSeconds = 25.5f;  // what the message's byte holds
}  // namespace

Error CharacterSystem::CaptureNet(CharacterId id, NetCharacterState* out) const {
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  const Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  NetCharacterState s;
  s.generation = c->activations;
  s.active = c->active;
  s.anchored = c->anchored;
  s.strength = std::clamp(c->strength, 0.0f, 1.0f);
  s.limp = c->active && c->limp_left > 0;
  s.limp_seconds = s.limp ? std::min(c->limp_left, kMaxNetLimpSeconds) : 0.0f;
  if (s.limp) s.strength = std::clamp(c->limp_from, 0.0f, 1.0f);  // where the ease started
  *out = s;
  return {};
}

Result<bool> CharacterSystem::ApplyNet(CharacterId id, const NetCharacterState& s) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(s.strength, 0, 1, -1, "state.strength"); !Ok(e)) return e;
  if (s.limp) {
    if (Error e = CheckRange(s.limp_seconds, 0, kMaxBlendSeconds, -1, "state.limp_seconds"); !Ok(e)) return e;
  }
  if (!IsFinite(s.impulse)) return Fail(ErrorCode::kNotFinite, -1, "state.impulse", "state.impulse is not finite");
  const uint32_t local = c->activations;
  if (s.generation < local) return false;                           // older than what it shows
  if (s.generation == local && s.active && !c->active) return false;  // that activation ended here
  const bool has_impulse = !(s.impulse == Vec3{});
  if (!s.active) {
    if (c->active) {
      // As the host's call: a flinch's own strength and anchor come back first.
      if (Error e = Deactivate(id, 0.0f, HandBackSpace::kAuto); !Ok(e)) return e;
    }
    c->activations = s.generation;
    if (Error e = SetStrength(id, s.strength); !Ok(e)) return e;
    if (Error e = SetAnchored(id, s.anchored); !Ok(e)) return e;
    return true;
  }
  if (!c->active) {
    CharacterActivateOptions options;
    options.strength = s.strength;
    options.anchored = s.anchored && !s.limp;
    options.impulse = s.impulse;
    c->activations = s.generation - 1;  // Activate counts it: its Started event carries the sender's
    Error why;
    if (!Activate(id, options, &why)) {
      c->activations = local;
      return why;
    }
    c->activations = s.generation;
  } else {
    c->activations = s.generation;
    if (!s.limp) {
      if (c->strength != s.strength || c->limp_left > 0) {
        if (Error e = SetStrength(id, s.strength); !Ok(e)) return e;
      }
      if (c->anchored != s.anchored) {
        if (Error e = SetAnchored(id, s.anchored); !Ok(e)) return e;
      }
    }
    if (has_impulse) {
      if (Error e = ApplyImpulse(id, s.impulse); !Ok(e)) return e;
    }
  }
  // Going limp once: a repeated message does not restart the ease.
  if (s.limp && c->limp_left <= 0 && (c->strength > 0 || c->anchored)) {
    if (c->strength != s.strength) c->strength = s.strength;  // the ease starts where the sender's did
    if (Error e = GoLimp(id, s.limp_seconds); !Ok(e)) return e;
  }
  return true;
}

}  // namespace tendon::detail
