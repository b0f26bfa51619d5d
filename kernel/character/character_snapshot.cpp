// kernel/character/character_snapshot.cpp: saving and restoring characters' state
// (tendon/snapshot.h).
//
// A character's record: its state machine (active, anchored, kinematic, blending, limp,
// hit), timers and deadline, crossfade, strength, motor targets, the poses the next frame
// reads (what the last two frames showed, the animated pose, the part frames, the pose
// handed back, the anchor and its last frame), its kinematic copy's frames, and its
// outputs. Its ragdoll and its kinematic copy are ragdoll slots: the ragdoll system's
// records hold them. Vectors are sized at bind; a record whose sizes differ is refused.
// What it does NOT do: save the host's buffers or the character's settings, or write on
// the checking pass.
// Threading: the World's thread, between frames. Memory: none; a refusal's message.
#include <string>

#include "kernel/character/character_slot.h"

namespace tendon::detail {

namespace {
constexpr uint32_t kSystemTag = SnapshotTag("CHRS");
constexpr uint32_t kSlotTag = SnapshotTag("CHR1");

void PutTransforms(SnapshotWriter& w, std::span<const Transform> v) {
  w.U32(static_cast<uint32_t>(v.size()));
  for (const Transform& t : v) w.T(t);
}
void GetTransforms(SnapshotReader& r, std::span<Transform> v, int32_t item, const char* field) {
  r.Expect(r.U32(field), static_cast<uint32_t>(v.size()), item, field);
  for (std::size_t k = 0; k < v.size() && !r.failed(); ++k) {
    const Transform t = r.T(field);
    if (r.apply()) v[k] = t;
  }
}
void PutQuats(SnapshotWriter& w, const std::vector<Quat>& v) {
  w.U32(static_cast<uint32_t>(v.size()));
  for (const Quat& q : v) w.Q(q);
}
void GetQuats(SnapshotReader& r, std::vector<Quat>& v, int32_t item, const char* field) {
  r.Expect(r.U32(field), static_cast<uint32_t>(v.size()), item, field);
  for (std::size_t k = 0; k < v.size() && !r.failed(); ++k) {
    const Quat q = r.Q(field);
    if (r.apply()) v[k] = q;
  }
}
void PutVecs(SnapshotWriter& w, const std::vector<Vec3>& v) {
  w.U32(static_cast<uint32_t>(v.size()));
  for (const Vec3& x : v) w.V3(x);
}
void GetVecs(SnapshotReader& r, std::vector<Vec3>& v, int32_t item, const char* field) {
  r.Expect(r.U32(field), static_cast<uint32_t>(v.size()), item, field);
  for (std::size_t k = 0; k < v.size() && !r.failed(); ++k) {
    const Vec3 x = r.V3(field);
    if (r.apply()) v[k] = x;
  }
}
}  // namespace

const Transform* CharacterSystem::AnchorOfRagdoll(uint32_t ragdoll_slot) const {
  if (ragdoll_slot >= character_of_ragdoll_.size() || character_of_ragdoll_[ragdoll_slot] < 0) return nullptr;
  return &slots_[static_cast<std::size_t>(character_of_ragdoll_[ragdoll_slot])]->anchor;
}

RagdollId CharacterSystem::TwinOf(CharacterId id) const {
  return handles_.IsLive(id) ? slots_[id.index]->twin : RagdollId{};
}

void CharacterSystem::SaveSlot(uint32_t index, SnapshotWriter& w) const {
  const Slot& c = *slots_[index];
  const std::size_t at = w.Begin(kSlotTag);
  w.U32(index);
  w.I32(c.archetype);
  w.U32(c.ragdoll.index);
  w.T(c.last_good_model);
  PutTransforms(w, c.twin_frames);
  PutTransforms(w, c.output_world);
  PutTransforms(w, c.output_local);
  PutTransforms(w, c.anim_world);
  PutTransforms(w, c.part_frames);
  PutTransforms(w, c.shown_prev);
  PutTransforms(w, c.shown_cur);
  PutQuats(w, c.target);
  PutQuats(w, c.target_prev);
  PutVecs(w, c.target_w);
  PutTransforms(w, c.blend_from);
  w.Bool(c.blend_in_world);
  w.T(c.anchor);
  w.T(c.anchor_prev);
  w.F32(c.last_frame_dt);
  w.Bool(c.animated_ok);
  w.F32(c.strength);
  w.Bool(c.anchored);
  w.Bool(c.active);
  w.Bool(c.kinematic);
  w.Bool(c.blending);
  w.F32(c.blend_total);
  w.F32(c.blend_elapsed);
  w.F32(c.limp_total);
  w.F32(c.limp_left);
  w.F32(c.limp_from);
  w.Bool(c.hit_mode);
  w.F32(c.hit_left);
  w.F32(c.hit_blend);
  w.F32(c.saved_strength);
  w.Bool(c.saved_anchored);
  w.F64(c.deadline);
  w.F32(c.release_blend);
  w.U64(c.serial);
  w.U32(c.activations);
  w.Bool(c.freeze_when_settled);
  w.F32(c.freeze_after_seconds);
  w.End(at);
}

void CharacterSystem::RestoreSlot(uint32_t index, SnapshotReader& r, bool same_slot) {
  const auto item = static_cast<int32_t>(index);
  const std::size_t end = r.Begin(kSlotTag, "character");
  const uint32_t saved_slot = r.U32("character.slot");
  if (same_slot) r.Expect(saved_slot, index, item, "character.slot");
  if (r.failed()) return;
  Slot& c = *slots_[index];
  r.Expect(static_cast<uint32_t>(r.I32("character.archetype")), static_cast<uint32_t>(c.archetype), item,
           "character.archetype");
  const uint32_t saved_ragdoll = r.U32("character.ragdoll");
  if (same_slot) r.Expect(saved_ragdoll, c.ragdoll.index, item, "character.ragdoll");
  const Transform model = r.T("character.last_good_model");
  if (r.apply() && !r.failed()) c.last_good_model = model;
  GetTransforms(r, c.twin_frames, item, "character.twin_frames");
  GetTransforms(r, c.output_world, item, "character.output_world");
  GetTransforms(r, c.output_local, item, "character.output_local");
  GetTransforms(r, c.anim_world, item, "character.anim_world");
  GetTransforms(r, c.part_frames, item, "character.part_frames");
  GetTransforms(r, c.shown_prev, item, "character.shown_prev");
  GetTransforms(r, c.shown_cur, item, "character.shown_cur");
  GetQuats(r, c.target, item, "character.target");
  GetQuats(r, c.target_prev, item, "character.target_prev");
  GetVecs(r, c.target_w, item, "character.target_w");
  GetTransforms(r, c.blend_from, item, "character.blend_from");
  const bool blend_in_world = r.Bool("character.blend_in_world");
  const Transform anchor = r.T("character.anchor");
  const Transform anchor_prev = r.T("character.anchor_prev");
  const float last_frame_dt = r.F32("character.last_frame_dt", true);
  const bool animated_ok = r.Bool("character.animated_ok");
  const float strength = r.F32("character.strength", true);
  const bool anchored = r.Bool("character.anchored");
  const bool active = r.Bool("character.active");
  const bool kinematic = r.Bool("character.kinematic");
  const bool blending = r.Bool("character.blending");
  const float blend_total = r.F32("character.blend_total", true);
  const float blend_elapsed = r.F32("character.blend_elapsed", true);
  const float limp_total = r.F32("character.limp_total", true);
  const float limp_left = r.F32("character.limp_left", true);
  const float limp_from = r.F32("character.limp_from", true);
  const bool hit_mode = r.Bool("character.hit_mode");
  const float hit_left = r.F32("character.hit_left", true);
  const float hit_blend = r.F32("character.hit_blend", true);
  const float saved_strength = r.F32("character.saved_strength", true);
  const bool saved_anchored = r.Bool("character.saved_anchored");
  const double deadline = r.F64("character.deadline");
  const float release_blend = r.F32("character.release_blend", true);
  const uint64_t serial = r.U64("character.serial");
  const uint32_t activations = r.U32("character.activations");
  const bool freeze_when_settled = r.Bool("character.freeze_when_settled");
  const float freeze_after = r.F32("character.freeze_after_seconds");
  if (!r.failed() && (strength < 0.0f || strength > 1.0f))
    r.Fail(ErrorCode::kOutOfRange, item, "character.strength", "character.strength is outside [0, 1]");
  r.End(end, "character");
  if (!r.apply() || r.failed()) return;
  if (active != c.active) active_count_ += active ? 1 : -1;
  c.blend_in_world = blend_in_world;
  c.anchor = anchor;
  c.anchor_prev = anchor_prev;
  c.last_frame_dt = last_frame_dt;
  c.animated_ok = animated_ok;
  c.strength = strength;
  c.anchored = anchored;
  c.active = active;
  c.kinematic = kinematic;
  c.blending = blending;
  c.blend_total = blend_total;
  c.blend_elapsed = blend_elapsed;
  c.limp_total = limp_total;
  c.limp_left = limp_left;
  c.limp_from = limp_from;
  c.hit_mode = hit_mode;
  c.hit_left = hit_left;
  c.hit_blend = hit_blend;
  c.saved_strength = saved_strength;
  c.saved_anchored = saved_anchored;
  c.deadline = deadline;
  c.release_blend = release_blend;
  c.serial = serial;
  c.activations = activations;
  c.freeze_when_settled = freeze_when_settled;
  c.freeze_after_seconds = freeze_after;
}

void CharacterSystem::SaveState(SnapshotWriter& w) const {
  const std::size_t at = w.Begin(kSystemTag);
  w.U32(handles_.SlotCount());
  w.U32(handles_.LiveCount());
  w.U64(activation_serial_);
  w.F64(now_);
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i)) SaveSlot(i, w);
  }
  w.End(at);
}

void CharacterSystem::RestoreState(SnapshotReader& r) {
  const std::size_t end = r.Begin(kSystemTag, "characters");
  r.Expect(r.U32("characters.slot_count"), handles_.SlotCount(), -1, "characters.slot_count");
  r.Expect(r.U32("characters.live_count"), handles_.LiveCount(), -1, "characters.live_count");
  const uint64_t serial = r.U64("characters.activation_serial");
  const double now = r.F64("characters.now", true);
  if (r.apply() && !r.failed()) {
    activation_serial_ = serial;
    now_ = now;
  }
  for (uint32_t i = 0; i < handles_.SlotCount() && !r.failed(); ++i) {
    if (handles_.IsLiveAt(i)) RestoreSlot(i, r);
  }
  r.End(end, "characters");
}

void CharacterSystem::SaveInstance(CharacterId id, SnapshotWriter& w) const { SaveSlot(id.index, w); }
void CharacterSystem::RestoreInstance(CharacterId id, SnapshotReader& r) { RestoreSlot(id.index, r, false); }

}  // namespace tendon::detail
