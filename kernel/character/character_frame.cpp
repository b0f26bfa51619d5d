// kernel/character/character_frame.cpp: a character's part of the World's frame, around
// the ragdoll substeps.
//
// What it owns: BeforePhysics, per bound character: the animated pose (forward kinematics
// of the host's locals under its model frame; non-finite input holds the last good pose
// and is counted), the timers on the world clock (a flinch's end, an activation's
// deadline, going limp, the crossfade), and for an active one the anchor and the motor
// targets (each part's animated rotation relative to its parent part's, with the
// animation's own angular velocity). AfterPhysics writes the whole pose into the host's
// spans: part bones take their part's frame and the others ride their parent with the
// animated local; an inactive character shows the animation, crossfaded from the pose
// handed back. A bone whose composed result is not finite keeps its last pose, counted.
// What it does NOT do: simulate (the ragdoll system does, between the two), or start and
// end activations other than by the timers (character_controls.cpp).
// Threading: the World's thread, serially over characters. Memory: none.
#include <algorithm>
#include <cmath>

#include "kernel/character/character_slot.h"
#include "kernel/core/finite.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {
namespace {

// t of the way from a to b, the shorter way round (b's sign follows a's), normalised.
Quat Nlerp(Quat a, Quat b, float t) {
  if (Dot(a, b) < 0) b = Quat{-b.x, -b.y, -b.z, -b.w};
  return Normalize(Quat{a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t, a.w + (b.w - a.w) * t});
}

Transform Blend(const Transform& a, const Transform& b, float t) {
  return Transform{Lerp(a.translation, b.translation, t), Nlerp(a.rotation, b.rotation, t), Lerp(a.scale, b.scale, t)};
}

}  // namespace

// Motor targets: each part's animated rotation relative to its parent part's.
void CharacterSystem::ComputeTargets(Slot& c, const CharacterArchetype& a) {
  c.target[0] = Quat{};
  for (int32_t j = 1; j < static_cast<int32_t>(a.parts.size()); ++j) {
    const Quat parent = Normalize(c.anim_world[a.part_bone[a.parts[j].parent]].rotation);
    c.target[j] = Normalize(Conjugate(parent) * Normalize(c.anim_world[a.part_bone[j]].rotation));
  }
}

void CharacterSystem::BeforePhysics(float frame_dt, float sim_seconds, double now, int32_t max_active) {
  now_ = now;
  max_active_ = max_active;
  bad_inputs_ = 0;
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    Slot& c = *slots_[i];
    const CharacterArchetype& a = archetypes_[c.archetype];
    const auto n = static_cast<int32_t>(a.parts.size());
    c.last_frame_dt = frame_dt;
    // The animated pose; non-finite input holds the last good one.
    const bool model_finite = IsFinite(*c.model_world);
    if (model_finite) c.last_good_model = Rigid(*c.model_world);
    c.animated_ok = model_finite && AllFinite(c.animated_local);
    if (c.animated_ok) {
      ForwardKinematics(a.parents, Rigid(*c.model_world), c.animated_local.data(), c.anim_world.data());
    } else {
      ++bad_inputs_;
    }
    // Timers on the world clock.
    if (c.active && c.hit_mode) {
      c.hit_left -= sim_seconds;
      if (c.hit_left <= 0) {
        c.strength = c.saved_strength;
        c.anchored = c.saved_anchored;
        MustSucceed(Release(c, CharacterEndReason::kReleased, c.hit_blend));
      }
    }
    if (c.active && now >= c.deadline) MustSucceed(Release(c, CharacterEndReason::kExpired, c.release_blend));
    if (c.active && c.limp_left > 0) {
      c.limp_left = std::max(c.limp_left - sim_seconds, 0.0f);
      c.strength = c.limp_from * (c.limp_left / c.limp_total);
      // Now limp: it may freeze. (Only the sleeping rule changes here, which cannot fail;
      // an error would be an anchor that overflowed, held and counted like one.)
      if (c.limp_left == 0 && !Ok(ApplyControls(c))) ++bad_inputs_;
    }
    if (c.blending) {
      c.blend_elapsed += sim_seconds;
      if (c.blend_elapsed >= c.blend_total) c.blending = false;
    }
    if (!c.active) {
      // Switched off: the parts follow the animation (raycasts see them there), and so
      // does the kinematic copy, if any. Non-finite input holds it where it is.
      for (int32_t j = 0; j < n; ++j) c.part_frames[j] = Rigid(c.anim_world[a.part_bone[j]]);
      // While the hand-back crossfades, the copy follows the pose shown (last frame's), not
      // the animation's: it does not sweep through what lies around the body.
      if (!c.twin.IsNull() && c.animated_ok &&
          !Ok(ragdolls_.SetKinematicTargets(c.twin, c.blending ? std::span<const Transform>(c.shown_cur)
                                                               : std::span<const Transform>(c.part_frames))))
        ++bad_inputs_;
      continue;
    }
    // Powered: the motors pull toward the animated pose; the anchor follows the hips.
    c.anchor_prev = c.anchor;
    c.anchor = Rigid(c.anim_world[a.part_bone[0]]);
    for (int32_t j = 0; j < n; ++j) c.target_prev[j] = c.target[j];
    ComputeTargets(c, a);
    for (int32_t j = 1; j < n; ++j) {
      // The animation's own relative angular velocity, in the parent part's frame.
      c.target_w[j] = frame_dt >= kMinFrameSeconds ? RotationVector(Normalize(c.target[j] * Conjugate(c.target_prev[j]))) * (1.0f / frame_dt)
                                   : Vec3{};
    }
    // Targets an overflowing animated pose made non-finite are refused: the motors hold
    // the last ones, and the frame counts a bad input.
    if (!Ok(ragdolls_.SetMotorTargets(c.ragdoll, c.target, c.strength, c.target_w))) ++bad_inputs_;
  }
}

void CharacterSystem::AfterPhysics() {
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    Slot& c = *slots_[i];
    const CharacterArchetype& a = archetypes_[c.archetype];
    const auto bones = static_cast<int32_t>(a.parents.size());
    const auto n = static_cast<int32_t>(a.parts.size());
    // A model frame that is not finite this frame: the last good one (counted in Before).
    const Transform model = c.last_good_model;
    const bool model_ok = IsFinite(model);
    bool wrote_non_finite = false;
    // What is composed is checked too, not only what was read: finite host numbers can
    // still overflow (a translation near FLT_MAX under a turned parent). A bone whose
    // result is not finite keeps the pose it was last written.
    auto store = [&](int32_t b, const Transform& world, const Transform& local) {
      if (!IsFinite(world) || !IsFinite(local)) {
        wrote_non_finite = true;
        return;
      }
      c.output_world[b] = world;
      c.output_local[b] = local;
    };
    if (c.active) {
      // Part bones take their part's frame; the others ride their parent with the
      // animated local transform.
      for (int32_t b = 0; b < bones; ++b) {
        const int32_t p = a.part_of_bone[b];
        const int32_t parent = a.parents[b];
        const Transform& parent_world = parent >= 0 ? c.output_world[parent] : model;
        Transform animated = c.animated_ok ? c.animated_local[b] : c.output_local[b];
        if (!NearUnit(animated.rotation)) animated.rotation = Normalize(animated.rotation);  // as ForwardKinematics
        if (p >= 0) {
          Transform world = c.part_frames[p];
          world.scale = Mul(parent >= 0 ? parent_world.scale : Vec3{1, 1, 1}, animated.scale);
          Transform local = Relative(parent >= 0 || model_ok ? parent_world : Transform{}, world);
          local.scale = animated.scale;
          store(b, world, local);
        } else {
          store(b, Compose(parent_world, animated), animated);
        }
      }
    } else if (c.animated_ok) {
      const float t = c.blending ? std::clamp(c.blend_elapsed / c.blend_total, 0.0f, 1.0f) : 1.0f;
      for (int32_t b = 0; b < bones; ++b) {
        const Transform& parent_world = a.parents[b] >= 0 ? c.output_world[a.parents[b]] : model;
        if (t >= 1.0f) {
          Transform local = c.animated_local[b];
          if (!NearUnit(local.rotation)) local.rotation = Normalize(local.rotation);  // as anim_world was composed
          store(b, c.anim_world[b], local);
        } else if (c.blend_in_world) {
          // World space: from where the body lay to where the animation puts the bone now.
          const Transform world = Blend(c.blend_from[b], c.anim_world[b], t);
          store(b, world, Relative(a.parents[b] >= 0 || model_ok ? parent_world : Transform{}, world));
        } else {
          const Transform local = Blend(c.blend_from[b], c.animated_local[b], t);
          store(b, Compose(parent_world, local), local);
        }
      }
    }
    if (wrote_non_finite) ++bad_inputs_;
    if (!c.streams.empty() && (c.active || c.animated_ok)) EmitStreams(c, c.output_world);
    for (int32_t j = 0; j < n; ++j) {
      c.shown_prev[j] = c.shown_cur[j];
      c.shown_cur[j] = Rigid(c.output_world[a.part_bone[j]]);
    }
  }
}

}  // namespace tendon::detail
