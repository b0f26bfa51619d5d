// kernel/character/character_slot.h: one bound character's state (CharacterSystem::Slot),
// and the small helpers the character system's files share.
//
// What it owns: the payload of a character handle, by CharacterId::index (whether a slot
// is bound, and its generation, are the system's HandleTable's): where the host's buffers
// are, the pose the character showed over the last two frames, the motor targets, the
// anchor, the crossfade and the timers. The ragdoll system holds pointers into a slot (its
// part_frames as the ragdoll's output, its anchor as the kinematic root), so slots live
// behind unique_ptr and never move.
// What it does NOT do: anything by itself; private to kernel/character.
// Threading: the World's thread. Memory: a slot's vectors are sized at bind.
#pragma once

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernel/character/character_system.h"
#include "kernel/core/finite.h"
#include "kernel/core/rotation.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

inline constexpr float kMaxBlendSeconds = 1e4f;  // every duration and crossfade a host passes, s
// Velocities are estimated from the last two frames' poses only over frames at least this
// long: a denormal dt would turn them infinite (found by tests/fuzz/fuzz_world.cpp).
inline constexpr float kMinFrameSeconds = 1e-4f;

// A call on the character's own ragdoll that cannot fail: the ragdoll is live while the
// character is bound (the World refuses to unbind it directly), its archetype while the
// character's is, and the numbers passed were checked. Used where the caller has no error
// to return (an undo, a timer's release); debug builds stop on a broken promise.
inline void MustSucceed(const Error& e) {
  assert(Ok(e) && "a call on a character's own ragdoll failed");
  (void)e;
}

inline bool AllFinite(std::span<const Transform> t) { return AllFinite(t.data(), static_cast<int64_t>(t.size())); }

inline Transform Rigid(const Transform& t) { return Transform{t.translation, Normalize(t.rotation), {1, 1, 1}}; }

struct CharacterSystem::Slot {
  int32_t index = 0;  // its CharacterId::index
  int32_t archetype = -1;
  RagdollId ragdoll{};
  // The kinematic copy that follows the animation while inactive (null: none), and the
  // frames it writes.
  RagdollId twin{};
  std::vector<Transform> twin_frames;
  const Transform* model_world = nullptr;
  Transform last_good_model{};  // the model frame at the last Step it was finite (rigid)
  std::span<const Transform> animated_local;
  std::span<Transform> output_local;
  std::span<Transform> output_world;  // the host's, or world_storage
  std::vector<BoundPoseStream> streams;  // the host's pose streams (tendon/pose_layout.h)
  std::vector<Transform> world_storage;
  std::vector<Transform> anim_world;   // per bone, this frame
  std::vector<Transform> part_frames;  // the ragdoll's output (per part)
  std::vector<Transform> shown_prev, shown_cur;  // per part: what the last two frames showed
  std::vector<Quat> target, target_prev;         // motor targets (part-relative)
  std::vector<Vec3> target_w;
  std::vector<Transform> blend_from;  // per bone: the pose handed back (world or local)
  bool blend_in_world = false;        // blend_from is world poses (HandBackSpace::kWorld)
  std::vector<Vec3> scratch_v, scratch_w;
  Transform anchor{};                 // the animated root part frame (kinematic target)
  Transform anchor_prev{};            // last frame's, for the hips' speed when let go
  float last_frame_dt = 0;
  bool animated_ok = false;
  // What the host set (strength and anchored persist across activations).
  float strength = 0;
  bool anchored = false;
  bool active = false;
  bool kinematic = false;  // whether the ragdoll's root follows `anchor` now
  bool blending = false;
  float blend_total = 0, blend_elapsed = 0;
  float limp_total = 0, limp_left = 0, limp_from = 0;
  bool hit_mode = false;
  float hit_left = 0, hit_blend = 0, saved_strength = 0;
  bool saved_anchored = false;
  double deadline = std::numeric_limits<double>::infinity();
  float release_blend = 0;
  uint64_t serial = 0;       // activation order, for eviction
  uint32_t activations = 0;  // CharacterState::generation
  bool freeze_when_settled = true;
  float freeze_after_seconds = std::numeric_limits<float>::infinity();
};

}  // namespace tendon::detail
