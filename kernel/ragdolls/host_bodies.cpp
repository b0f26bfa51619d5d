// kernel/ragdolls/host_bodies.cpp: the host's kinematic bodies (host_bodies.h).
#include "kernel/ragdolls/host_bodies.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "kernel/core/finite.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"

namespace tendon::detail {
namespace {

constexpr float kMaxHostSpeed = 1000.0f;  // m/s and rad/s (HostBodySettings)

bool InRange(float v, float lo, float hi) { return v >= lo && v <= hi; }

bool SameShared(const HostBodySettings& a, const HostBodySettings& b) {
  return a.shape == b.shape && a.radius == b.radius && a.half_height == b.half_height &&
         a.half_extents.x == b.half_extents.x && a.half_extents.y == b.half_extents.y &&
         a.half_extents.z == b.half_extents.z && a.collision_group == b.collision_group &&
         a.collision_mask == b.collision_mask && a.trigger == b.trigger && a.friction == b.friction &&
         a.restitution == b.restitution;
}

Error CheckMotion(const Transform& t, Vec3 v, Vec3 w) {
  if (!IsFinite(t)) return Fail(ErrorCode::kNotFinite, -1, "transform", "the host body's transform is not finite");
  if (!UsableRotation(t.rotation))
    return Fail(ErrorCode::kNotUnitRotation, -1, "transform", "the host body's rotation is zero or far from unit length");
  if (!IsFinite(v) || Length(v) > kMaxHostSpeed)
    return Fail(ErrorCode::kOutOfRange, -1, "linear_velocity", "the linear velocity must be finite and at most 1000 m/s");
  if (!IsFinite(w) || Length(w) > kMaxHostSpeed)
    return Fail(ErrorCode::kOutOfRange, -1, "angular_velocity", "the angular velocity must be finite and at most 1000 rad/s");
  // Beyond the static world's coordinates a float resolves no better than 6 cm.
  if (std::fabs(t.translation.x) > kMaxStaticCoordinate || std::fabs(t.translation.y) > kMaxStaticCoordinate ||
      std::fabs(t.translation.z) > kMaxStaticCoordinate)
    return Fail(ErrorCode::kOutOfRange, -1, "transform", "the host body's position is beyond +-1e6 m");
  return {};
}

}  // namespace

Error HostBodies::Check(const HostBodySettings& s) {
  if (s.shape != HostBodyShape::kSphere && s.shape != HostBodyShape::kCapsule && s.shape != HostBodyShape::kBox)
    return Fail(ErrorCode::kOutOfRange, -1, "shape", "shape must be kSphere, kCapsule or kBox");
  if (s.shape != HostBodyShape::kBox && !(s.radius > 0.0f && s.radius <= 100.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "radius", "radius must be in (0, 100] m");
  if (s.shape == HostBodyShape::kCapsule && !InRange(s.half_height, 0.0f, 100.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "half_height", "half_height must be in [0, 100] m");
  if (s.shape == HostBodyShape::kBox &&
      !(s.half_extents.x > 0.0f && s.half_extents.x <= 1000.0f && s.half_extents.y > 0.0f &&
        s.half_extents.y <= 1000.0f && s.half_extents.z > 0.0f && s.half_extents.z <= 1000.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "half_extents", "each half extent must be in (0, 1000] m");
  if (!InRange(s.friction, 0.0f, 10.0f)) return Fail(ErrorCode::kOutOfRange, -1, "friction", "friction must be in [0, 10]");
  if (!InRange(s.restitution, 0.0f, 1.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "restitution", "restitution must be in [0, 1]");
  if (s.collision_group == 0)
    return Fail(ErrorCode::kOutOfRange, -1, "collision_group", "collision_group must have a bit set (it would meet nothing)");
  return CheckMotion(s.transform, s.linear_velocity, s.angular_velocity);
}

// One archetype per shape, size, surface and filter: bodies alike share lanes.
Result<RagdollArchetypeId> HostBodies::ArchetypeFor(const HostBodySettings& s) {
  for (const Shared& shared : archetypes_)
    if (SameShared(shared.key, s)) return shared.archetype;
  RagdollSettings rs;
  rs.name = "host body";
  PartSettings part;
  part.name = "host body";
  part.mass = 1.0f;  // kinematic: never read by the solver
  part.friction = s.friction;
  part.restitution = s.restitution;
  part.linear_damping = part.angular_damping = 0.0f;
  part.gravity_factor = 0.0f;
  switch (s.shape) {
    case HostBodyShape::kSphere:
      part.shape.type = PartShape::kSphere;
      part.shape.radius = s.radius;
      break;
    case HostBodyShape::kCapsule:
      part.shape.type = PartShape::kCapsule;
      part.shape.radius = s.radius;
      part.shape.half_height = s.half_height;
      break;
    case HostBodyShape::kBox:
      part.shape.type = PartShape::kBox;
      part.shape.half_extents = s.half_extents;
      break;
  }
  rs.parts.push_back(part);
  rs.collision_group = s.collision_group;
  rs.collision_mask = s.collision_mask;
  Result<RagdollArchetypeId> built = ragdolls_.BuildKinematicArchetype(rs, s.trigger);
  if (!built.ok()) return built;
  archetypes_.push_back(Shared{s, built.value()});
  return built;
}

Result<HostBodyId> HostBodies::Add(const HostBodySettings& settings) {
  if (Error e = Check(settings); !Ok(e)) return e;
  Result<RagdollArchetypeId> archetype = ArchetypeFor(settings);
  if (!archetype.ok()) return archetype.error();
  const HostBodyId id = handles_.Allocate();
  if (bodies_.size() < handles_.SlotCount()) bodies_.resize(handles_.SlotCount());
  Body& body = bodies_[id.index];
  body.settings = settings;
  body.output = std::make_unique<Transform>(settings.transform);
  RagdollBinding binding;
  binding.archetype = archetype.value();
  binding.output_parts = std::span<Transform>(body.output.get(), 1);
  binding.start_parts = std::span<const Transform>(body.output.get(), 1);
  Result<RagdollId> bound = ragdolls_.BindInternal(binding, kHostBodySlot, id.index, id.generation);
  if (!bound.ok()) {
    handles_.Free(id);
    return bound.error();
  }
  body.ragdoll = bound.value();
  if (Error e = SetMotion(id, settings.transform, settings.linear_velocity, settings.angular_velocity); !Ok(e)) {
    (void)ragdolls_.Unbind(body.ragdoll);
    handles_.Free(id);
    return e;
  }
  return id;
}

Error HostBodies::Remove(HostBodyId id) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "host_body", "the host body handle is null or stale");
  Body& body = bodies_[id.index];
  (void)ragdolls_.Unbind(body.ragdoll);
  body.ragdoll = RagdollId{};
  body.output.reset();
  handles_.Free(id);
  return {};
}

void HostBodies::RemoveAll() {
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i)
    if (handles_.IsLiveAt(i)) (void)Remove(handles_.HandleAt(i));
}

Error HostBodies::SetMotion(HostBodyId id, const Transform& transform, Vec3 linear_velocity, Vec3 angular_velocity) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "host_body", "the host body handle is null or stale");
  if (Error e = CheckMotion(transform, linear_velocity, angular_velocity); !Ok(e)) return e;
  const Transform frames[1] = {transform};
  const Vec3 v[1] = {linear_velocity}, w[1] = {angular_velocity};
  return ragdolls_.SetKinematicMotion(bodies_[id.index].ragdoll, frames, v, w);
}

Error HostBodies::MoveTo(HostBodyId id, const Transform& target) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "host_body", "the host body handle is null or stale");
  if (Error e = CheckMotion(target, Vec3{}, Vec3{}); !Ok(e)) return e;
  const Transform frames[1] = {target};
  return ragdolls_.SetKinematicTargets(bodies_[id.index].ragdoll, frames);
}

Error HostBodies::GetState(HostBodyId id, HostBodyState* out) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "host_body", "the host body handle is null or stale");
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "the output is null");
  const Body& body = bodies_[id.index];
  out->transform = *body.output;
  Vec3 v[1], w[1];
  (void)ragdolls_.GetVelocities(body.ragdoll, v, w);
  out->linear_velocity = v[0];
  out->angular_velocity = w[0];
  int32_t overlapping = 0;
  for (const TriggerOverlap& o : ragdolls_.TriggerOverlaps())
    overlapping += o.trigger_slot == static_cast<int32_t>(body.ragdoll.index) ? 1 : 0;
  out->overlapping_parts = overlapping;
  return {};
}

void HostBodies::WriteShapes(std::vector<HostShape>& out) const {
  out.clear();
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    const Body& body = bodies_[i];
    const HostBodySettings& s = body.settings;
    const Transform& t = *body.output;
    HostShape shape;
    const Vec3 c = t.translation;
    shape.a[0] = c.x, shape.a[1] = c.y, shape.a[2] = c.z;
    shape.b[0] = c.x, shape.b[1] = c.y, shape.b[2] = c.z;
    shape.radius = s.radius;
    if (s.shape == HostBodyShape::kCapsule) {
      shape.kind = kHostCapsule;
      const Vec3 axis = Rotate(t.rotation, Vec3{0, s.half_height, 0});
      const Vec3 a = c - axis, b = c + axis;
      shape.a[0] = a.x, shape.a[1] = a.y, shape.a[2] = a.z;
      shape.b[0] = b.x, shape.b[1] = b.y, shape.b[2] = b.z;
    } else if (s.shape == HostBodyShape::kBox) {
      shape.kind = kHostBox;
      shape.radius = 0;
      shape.q[0] = t.rotation.x, shape.q[1] = t.rotation.y, shape.q[2] = t.rotation.z, shape.q[3] = t.rotation.w;
      shape.half[0] = s.half_extents.x, shape.half[1] = s.half_extents.y, shape.half[2] = s.half_extents.z;
    } else {
      shape.kind = kHostSphere;
    }
    Vec3 v[1], w[1];
    (void)ragdolls_.GetVelocities(body.ragdoll, v, w);
    shape.velocity[0] = v[0].x, shape.velocity[1] = v[0].y, shape.velocity[2] = v[0].z;
    shape.group = s.collision_group;
    shape.trigger = s.trigger;
    out.push_back(shape);
  }
}

}  // namespace tendon::detail
