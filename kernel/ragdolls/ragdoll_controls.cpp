// kernel/ragdolls/ragdoll_controls.cpp: the host's controls over a bound ragdoll.
//
// What it owns: switching an instance on and off, its kinematic root, its sleeping rules,
// its part states and velocities, impulses, motor targets, waking, and Activate, which a
// character uses to do all of its activation at once. Each call checks its id and every
// number before it writes anything, so a refused call leaves the instance as it was.
// Velocities the host's finite numbers overflow (a huge impulse, a lever arm near FLT_MAX)
// are stored at the part's speed cap along the direction worked out in double (Storable),
// never as infinities the solver would have to reset.
// What it does NOT do: step (a control takes effect in the next Step), or move lanes by
// itself (EnableLane, DisableLane and MoveToGroup in ragdoll_lanes.cpp do).
// Threading: the World's thread, between Steps. Memory: none, except a first move into a
// group with no lane reserved (SetKinematicRoot, Activate).
#include <cmath>
#include <string>

#include "kernel/core/finite.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

namespace {

// Double-precision vectors for the rare velocity whose float arithmetic overflowed.
struct Vec3d {
  double x, y, z;
};
Vec3d ToDouble(Vec3 v) { return {v.x, v.y, v.z}; }
Vec3d Add(Vec3d a, Vec3d b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
Vec3d Scale(Vec3d a, double k) { return {a.x * k, a.y * k, a.z * k}; }
Vec3d CrossD(Vec3d a, Vec3d b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
// v rotated by the unit quaternion q: v + 2w (u x v) + 2 u x (u x v).
Vec3d RotateD(Quat q, Vec3d v) {
  const Vec3d u{q.x, q.y, q.z};
  const Vec3d t = Scale(CrossD(u, v), 2.0);
  return Add(Add(v, Scale(t, q.w)), CrossD(u, t));
}

// A velocity the host's numbers give, as it is stored: the float result when it is finite;
// else (a huge but finite impulse or velocity whose sum or product overflowed float) the
// part's speed cap along the direction `exact()` works out in double. The kernels hold
// every velocity to the caps each substep; this keeps an overflow from ever reaching the
// solver state, or GetRagdollVelocities.
template <class F>
Vec3 Storable(Vec3 v, float cap, const F& exact) {
  if (IsFinite(v)) return v;
  const Vec3d d = exact();
  const double len = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
  if (!(len > 0) || !std::isfinite(len)) return Vec3{};
  const double k = static_cast<double>(cap) / len;
  return Vec3{static_cast<float>(d.x * k), static_cast<float>(d.y * k), static_cast<float>(d.z * k)};
}

Error StaleRagdoll() { return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale"); }

Error CheckKinematicRoot(const Transform* root) {
  if (root != nullptr && (!IsFinite(*root) || !UsableRotation(root->rotation)))
    return Fail(ErrorCode::kNotFinite, -1, "root", "the kinematic root frame is not finite (or not a rotation)");
  return {};
}

Error CheckFreezeAfter(float freeze_after_seconds) {
  if (std::isnan(freeze_after_seconds) || freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  return {};
}

}  // namespace

// Awake from now on, its sleep clocks restarted.
void RagdollSystem::WakeSlot(RagdollSlot& slot) {
  slot.asleep = slot.frozen = false;
  slot.still_seconds = slot.slow_seconds = 0;
  slot.age_seconds = 0;
  store_.groups[slot.group].LaneField(slot.lane, kAsleep) = 0.0f;
}

Error RagdollSystem::Wake(RagdollId id) {
  if (!IsValid(id)) return StaleRagdoll();
  WakeSlot(store_.slots[id.index]);
  return {};
}

Error RagdollSystem::SetEnabled(RagdollId id, bool enabled) {
  if (!IsValid(id)) return StaleRagdoll();
  RagdollSlot& slot = store_.slots[id.index];
  if (slot.enabled == enabled) return {};
  slot.enabled = enabled;
  if (enabled) {
    EnableLane(slot);
    store_.groups[slot.group].MarkPlaced(slot.lane);
    slot.asleep = slot.frozen = false;
    slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;
    store_.groups[slot.group].LaneField(slot.lane, kAsleep) = 0.0f;
  } else {
    RemoveDrivesOf(id.index, false);  // a switched-off ragdoll holds no drive (the host's, or a character's)
    DisableLane(slot);
  }
  return {};
}

Error RagdollSystem::SetSleeping(RagdollId id, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds) {
  if (!IsValid(id)) return StaleRagdoll();
  if (Error e = CheckFreezeAfter(freeze_after_seconds); !Ok(e)) return e;
  RagdollSlot& slot = store_.slots[id.index];
  if (!can_sleep && slot.asleep) WakeSlot(slot);
  if (can_sleep && !slot.can_sleep) slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;  // clocks restart
  slot.can_sleep = can_sleep;
  slot.freeze_when_asleep = freeze_when_asleep;
  slot.freeze_after_seconds = freeze_after_seconds;
  return {};
}

Error RagdollSystem::SetPartVelocity(RagdollId id, int32_t part, Vec3 linear, Vec3 angular) {
  if (!IsValid(id)) return StaleRagdoll();
  RagdollSlot& slot = store_.slots[id.index];
  if (part < 0 || part >= slot.part_count) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (!IsFinite(linear) || !IsFinite(angular))
    return Fail(ErrorCode::kNotFinite, part, "linear", "the velocities are not finite");
  RagdollGroup& g = store_.groups[slot.group];
  if (g.constants[part].inv_mass == 0.0f) return {};  // a kinematic root follows its frame
  const RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  // Given at the part's origin; the lane holds the centre of mass's.
  const Transform& frame = slot.output[part];
  const Vec3 com{view.Part(kRbXx, part)[l], view.Part(kRbXy, part)[l], view.Part(kRbXz, part)[l]};
  const Vec3 v = Storable(linear + Cross(angular, com - frame.translation), g.constants[part].max_linear_speed, [&] {
    return Add(ToDouble(linear), CrossD(ToDouble(angular), Add(ToDouble(com), Scale(ToDouble(frame.translation), -1.0))));
  });
  const float values[6] = {v.x, v.y, v.z, angular.x, angular.y, angular.z};
  const int32_t fields[6] = {kRbVx, kRbVy, kRbVz, kRbWx, kRbWy, kRbWz};
  for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], part)[l] = values[f];
  WakeSlot(slot);
  return {};
}

void RagdollSystem::WriteBodyVelocities(RagdollId id, std::span<const Vec3> linear, std::span<const Vec3> angular,
                                        bool wake) {
  if (!IsValid(id)) return;
  RagdollSlot& slot = store_.slots[id.index];
  RagdollGroup& g = store_.groups[slot.group];
  const RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  const auto capped = [](Vec3 v, float cap) {
    const float len = Length(v);
    return IsFinite(v) ? (len > cap ? v * (cap / len) : v) : Vec3{};
  };
  for (int32_t j = 0; j < slot.part_count; ++j) {
    const RigidPartConstants& c = g.constants[j];
    if (c.inv_mass == 0.0f) continue;  // a kinematic root follows its frame
    const Vec3 v = capped(linear[j], c.max_linear_speed);
    const Vec3 w = capped(angular[j], c.max_angular_speed);
    const float values[6] = {v.x, v.y, v.z, w.x, w.y, w.z};
    const int32_t fields[6] = {kRbVx, kRbVy, kRbVz, kRbWx, kRbWy, kRbWz};
    for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], j)[l] = values[f];
  }
  if (wake) WakeSlot(slot);
}

Error RagdollSystem::SetKinematicRoot(RagdollId id, const Transform* root) {
  if (!IsValid(id)) return StaleRagdoll();
  if (Error e = CheckKinematicRoot(root); !Ok(e)) return e;
  RagdollSlot& slot = store_.slots[id.index];
  const int32_t target = FindOrAddGroup(store_.groups[slot.group].archetype, root != nullptr);
  MoveToGroup(static_cast<int32_t>(id.index), target);
  slot.kinematic_root = root;
  return {};
}

Error RagdollSystem::CheckPartStates(const RagdollSlot& slot, std::span<const Transform> parts,
                                     std::span<const Vec3> linear, std::span<const Vec3> angular) {
  const int32_t n = slot.part_count;
  if (static_cast<int32_t>(parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "parts", "one part frame per part is needed");
  if ((!linear.empty() && static_cast<int32_t>(linear.size()) < n) || (!angular.empty() && static_cast<int32_t>(angular.size()) < n))
    return Fail(ErrorCode::kNullBuffer, -1, "linear", "velocities, when given, are needed for every part");
  for (int32_t j = 0; j < n; ++j) {
    if (!IsFinite(parts[j]) || !(Dot(parts[j].rotation, parts[j].rotation) > 0.5f))
      return Fail(ErrorCode::kNotFinite, j, "parts", "parts[" + std::to_string(j) + "] is not a finite frame");
    if ((!linear.empty() && !IsFinite(linear[j])) || (!angular.empty() && !IsFinite(angular[j])))
      return Fail(ErrorCode::kNotFinite, j, "linear", "the velocities of part " + std::to_string(j) + " are not finite");
  }
  return {};
}

// The parts placed at `parts` with the velocities given (at each part's origin, moved to
// its centre of mass), the output and streams written, awake with fresh sleep clocks.
void RagdollSystem::WritePartStates(RagdollSlot& slot, std::span<const Transform> parts, std::span<const Vec3> linear,
                                    std::span<const Vec3> angular) {
  const int32_t n = slot.part_count;
  RagdollGroup& g = store_.groups[slot.group];
  Transform bodies[kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j)
    bodies[j] = Compose(Transform{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}}, g.body_in_part[j]);
  g.PlaceBodies(slot.lane, bodies, Vec3{}, Vec3{});
  const RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  for (int32_t j = 0; j < n; ++j) {
    if (g.constants[j].inv_mass == 0.0f) continue;  // a kinematic root is driven by the host
    // The velocity given at the part's origin, moved to its centre of mass.
    const Vec3 wv = angular.empty() ? Vec3{} : angular[j];
    const Vec3 lv = linear.empty() ? Vec3{} : linear[j];
    const Vec3 v = Storable(lv + Cross(wv, bodies[j].translation - parts[j].translation), g.constants[j].max_linear_speed, [&] {
      return Add(ToDouble(lv), CrossD(ToDouble(wv), Add(ToDouble(bodies[j].translation), Scale(ToDouble(parts[j].translation), -1.0))));
    });
    const float values[6] = {v.x, v.y, v.z, wv.x, wv.y, wv.z};
    const int32_t fields[6] = {kRbVx, kRbVy, kRbVz, kRbWx, kRbWy, kRbWz};
    for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], j)[l] = values[f];
  }
  for (int32_t j = 0; j < n; ++j) slot.output[j] = Transform{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}};
  EmitStreams(slot);
  slot.asleep = slot.frozen = false;
  slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;
  view.Lane(kAsleep)[l] = 0.0f;
}

Error RagdollSystem::SetPartStates(RagdollId id, std::span<const Transform> parts, std::span<const Vec3> linear,
                                   std::span<const Vec3> angular) {
  if (!IsValid(id)) return StaleRagdoll();
  RagdollSlot& slot = store_.slots[id.index];
  if (Error e = CheckPartStates(slot, parts, linear, angular); !Ok(e)) return e;
  WritePartStates(slot, parts, linear, angular);
  return {};
}

Error RagdollSystem::ApplyImpulse(RagdollId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (!IsValid(id)) return StaleRagdoll();
  RagdollSlot& r = store_.slots[id.index];
  if (part < 0 || part >= r.part_count) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (!IsFinite(impulse) || !IsFinite(world_point))
    return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse or its point is not finite");
  // A switched-off ragdoll is not stepped: the velocity would wait in its lane and fire
  // whenever the host switches it on again, long after the hit it was for.
  if (!r.enabled)
    return Fail(ErrorCode::kInactive, -1, "ragdoll",
                "the ragdoll is switched off (SetRagdollEnabled(false)): switch it on before applying an impulse");
  WakeSlot(r);
  RagdollGroup& g = store_.groups[r.group];
  const RigidPartConstants& c = g.constants[part];
  const RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  const Vec3 x{view.Part(kRbXx, part)[l], view.Part(kRbXy, part)[l], view.Part(kRbXz, part)[l]};
  const Quat q{view.Part(kRbQx, part)[l], view.Part(kRbQy, part)[l], view.Part(kRbQz, part)[l],
               view.Part(kRbQw, part)[l]};
  const Vec3 torque_body = Rotate(Conjugate(q), Cross(world_point - x, impulse));
  const Vec3 dw = Rotate(q, Vec3{torque_body.x * c.inv_inertia[0], torque_body.y * c.inv_inertia[1],
                                 torque_body.z * c.inv_inertia[2]});
  const Vec3 dv = impulse * c.inv_mass;
  const Vec3 v0{view.Part(kRbVx, part)[l], view.Part(kRbVy, part)[l], view.Part(kRbVz, part)[l]};
  const Vec3 w0{view.Part(kRbWx, part)[l], view.Part(kRbWy, part)[l], view.Part(kRbWz, part)[l]};
  const Vec3 v = Storable(v0 + dv, c.max_linear_speed,
                          [&] { return Add(ToDouble(v0), Scale(ToDouble(impulse), c.inv_mass)); });
  const Vec3 w = Storable(w0 + dw, c.max_angular_speed, [&] {
    const Vec3d lever = Add(ToDouble(world_point), Scale(ToDouble(x), -1.0));
    const Vec3d t = RotateD(Conjugate(q), CrossD(lever, ToDouble(impulse)));
    return Add(ToDouble(w0), RotateD(q, Vec3d{t.x * c.inv_inertia[0], t.y * c.inv_inertia[1], t.z * c.inv_inertia[2]}));
  });
  view.Part(kRbVx, part)[l] = v.x;
  view.Part(kRbVy, part)[l] = v.y;
  view.Part(kRbVz, part)[l] = v.z;
  view.Part(kRbWx, part)[l] = w.x;
  view.Part(kRbWy, part)[l] = w.y;
  view.Part(kRbWz, part)[l] = w.z;
  return {};
}

Error RagdollSystem::CheckMotorTargets(const RagdollSlot& r, std::span<const Quat> local_rotations, float strength,
                                       std::span<const Vec3> local_angular_velocities) {
  if (static_cast<int32_t>(local_rotations.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "local_rotations", "one rotation per part is needed");
  if (!local_angular_velocities.empty() && static_cast<int32_t>(local_angular_velocities.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "local_angular_velocities", "one angular velocity per part is needed");
  if (!std::isfinite(strength) || strength < 0 || strength > 1)
    return Fail(ErrorCode::kOutOfRange, -1, "strength", "strength must be within [0, 1]");
  for (int32_t j = 1; j < r.part_count; ++j) {
    if (!IsFinite(local_rotations[j]) || !(Dot(local_rotations[j], local_rotations[j]) > 0.5f))
      return Fail(ErrorCode::kNotFinite, j, "local_rotations", "local_rotations[" + std::to_string(j) + "] is not a finite rotation");
    if (!local_angular_velocities.empty() && !IsFinite(local_angular_velocities[j]))
      return Fail(ErrorCode::kNotFinite, j, "local_angular_velocities", "not finite");
  }
  return {};
}

// Part-relative targets turned body-relative, into the lane's motor rows.
void RagdollSystem::WriteMotorTargets(const RagdollSlot& r, std::span<const Quat> local_rotations, float strength,
                                      std::span<const Vec3> local_angular_velocities) {
  RagdollGroup& g = store_.groups[r.group];
  const RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  const RagdollArchetype& a = archetypes_[g.archetype];
  for (int32_t j = 1; j < r.part_count; ++j) {
    const Quat parent_bip = g.body_in_part[a.parts[j].parent].rotation;
    // Part-relative target -> body-relative: q_pb^-1 q_cb = bip_p^-1 (q_pp^-1 q_cp) bip_c.
    const Quat target = Normalize(Conjugate(parent_bip) * Normalize(local_rotations[j]) * g.body_in_part[j].rotation);
    const Vec3 w = local_angular_velocities.empty() ? Vec3{} : Rotate(Conjugate(parent_bip), local_angular_velocities[j]);
    const float values[7] = {target.x, target.y, target.z, target.w, w.x, w.y, w.z};
    for (int32_t f = 0; f < 7; ++f) view.Part(kMotorQx + f, j)[l] = values[f];
  }
  view.Lane(kMotorStrength)[l] = strength;
}

Error RagdollSystem::SetMotorTargets(RagdollId id, std::span<const Quat> local_rotations, float strength,
                                     std::span<const Vec3> local_angular_velocities) {
  if (!IsValid(id)) return StaleRagdoll();
  const RagdollSlot& r = store_.slots[id.index];
  if (Error e = CheckMotorTargets(r, local_rotations, strength, local_angular_velocities); !Ok(e)) return e;
  WriteMotorTargets(r, local_rotations, strength, local_angular_velocities);
  return {};
}

Error RagdollSystem::Activate(RagdollId id, const RagdollActivation& a) {
  if (!IsValid(id)) return StaleRagdoll();
  RagdollSlot& slot = store_.slots[id.index];
  // Every check first, in the order the separate calls make them: a refusal writes nothing.
  if (Error e = CheckKinematicRoot(a.kinematic_root); !Ok(e)) return e;
  if (Error e = CheckMotorTargets(slot, a.motor_targets, a.motor_strength, a.motor_angular_velocities); !Ok(e)) return e;
  if (Error e = CheckFreezeAfter(a.freeze_after_seconds); !Ok(e)) return e;
  if (Error e = CheckPartStates(slot, a.parts, a.linear, a.angular); !Ok(e)) return e;
  // One lane move: into the enabled lanes of the group the kinematic root asks for, or
  // across its own group's boundary.
  const bool was_enabled = slot.enabled;
  slot.enabled = true;
  const int32_t target = FindOrAddGroup(store_.groups[slot.group].archetype, a.kinematic_root != nullptr);
  if (target != slot.group) {
    MoveToGroup(static_cast<int32_t>(id.index), target);
  } else if (!was_enabled) {
    EnableLane(slot);
  }
  slot.kinematic_root = a.kinematic_root;
  WriteMotorTargets(slot, a.motor_targets, a.motor_strength, a.motor_angular_velocities);
  slot.can_sleep = a.can_sleep;
  slot.freeze_when_asleep = a.freeze_when_asleep;
  slot.freeze_after_seconds = a.freeze_after_seconds;
  // Placed (which marks the parts placed, as switching on does), awake, clocks at zero.
  WritePartStates(slot, a.parts, a.linear, a.angular);
  return {};
}

}  // namespace tendon::detail
