// kernel/ragdolls/ragdoll_queries.cpp: what the host and the World read of bound ragdolls:
// flags, velocities, raycasts, the state hash, and the debug checks of host buffers.
//
// What it owns: answers computed from the lanes and the slots, never stored for them. A
// raycast walks every bound instance (the parts' output frames, a cheap reject on each
// part's extent, then sphere tracing of the exact shape), so its cost follows the bound
// parts; the state hash feeds each bound instance's lane rows in slot (handle) order, so it
// does not depend on where a lane is.
// What it does NOT do: change anything (PoisonStateForTest excepted, which tests use to
// reach the non-finite reset).
// Threading: the World's thread, between Steps (or on a finished frame's state).
// Memory: none.
#include <cmath>
#include <string>

#include "kernel/collide/part_distance.h"
#include "kernel/collide/sphere_trace.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

bool RagdollSystem::IsEnabled(RagdollId id) const { return IsValid(id) && store_.slots[id.index].enabled; }
bool RagdollSystem::IsAsleep(RagdollId id) const { return IsValid(id) && store_.slots[id.index].asleep; }
bool RagdollSystem::IsFrozen(RagdollId id) const { return IsValid(id) && store_.slots[id.index].frozen; }

Error RagdollSystem::GetVelocities(RagdollId id, std::span<Vec3> linear, std::span<Vec3> angular) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const RagdollSlot& r = store_.slots[id.index];
  if (static_cast<int32_t>(linear.size()) < r.part_count || static_cast<int32_t>(angular.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "linear", "the spans are shorter than the part count");
  RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
  const RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  for (int32_t j = 0; j < r.part_count; ++j) {
    linear[j] = Vec3{view.Part(kRbVx, j)[l], view.Part(kRbVy, j)[l], view.Part(kRbVz, j)[l]};
    angular[j] = Vec3{view.Part(kRbWx, j)[l], view.Part(kRbWy, j)[l], view.Part(kRbWz, j)[l]};
  }
  return {};
}

Error RagdollSystem::ReadBodyFrames(RagdollId id, std::span<Transform> bodies) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const RagdollSlot& r = store_.slots[id.index];
  if (static_cast<int32_t>(bodies.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "bodies", "the span is shorter than the part count");
  RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
  const RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  for (int32_t j = 0; j < r.part_count; ++j) {
    Vec3 x;
    Quat q;
    ReadPose(view, l, j, &x, &q);
    bodies[j] = Transform{x, q, {1, 1, 1}};
  }
  return {};
}

Error RagdollSystem::ReadPartFrames(RagdollId id, std::span<Transform> parts) const {
  if (Error e = ReadBodyFrames(id, parts); !Ok(e)) return e;
  const std::span<const Transform> body_in_part = BodyInPart(id);
  for (std::size_t j = 0; j < body_in_part.size(); ++j) parts[j] = PartFrameOfBody(parts[j], body_in_part[j]);
  return {};
}

std::span<const Transform> RagdollSystem::BodyInPart(RagdollId id) const {
  if (!IsValid(id)) return {};
  const RagdollSlot& r = store_.slots[id.index];
  return std::span<const Transform>(store_.groups[r.group].body_in_part).first(static_cast<std::size_t>(r.part_count));
}

bool RagdollSystem::IsDynamicPart(RagdollId id, int32_t part) const {
  if (!IsValid(id)) return false;
  const RagdollSlot& r = store_.slots[id.index];
  return part >= 0 && part < r.part_count && store_.groups[r.group].constants[part].inv_mass != 0.0f;
}

Vec3 RagdollSystem::Acceleration(RagdollId id) const {
  if (!IsValid(id)) return Vec3{};
  const RagdollSlot& r = store_.slots[id.index];
  RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
  return Vec3{g.LaneField(r.lane, kAccelX), g.LaneField(r.lane, kAccelY), g.LaneField(r.lane, kAccelZ)};
}

// From the output frames (the lanes hold the bodies' centres of mass, not the parts' frames).
Result<int32_t> RagdollSystem::GetPartTransforms(RagdollId id, std::span<Transform> out) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const RagdollSlot& r = store_.slots[id.index];
  if (static_cast<int32_t>(out.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "out",
                "holds " + std::to_string(out.size()) + " transforms, fewer than the ragdoll's " +
                    std::to_string(r.part_count) + " parts");
  for (int32_t j = 0; j < r.part_count; ++j) out[j] = r.output[j];
  return r.part_count;
}

Error RagdollSystem::EnergyForTest(RagdollId id, Vec3 gravity, std::span<PartEnergy> out) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const RagdollSlot& r = store_.slots[id.index];
  if (static_cast<int32_t>(out.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "out", "the span is shorter than the part count");
  RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
  const RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  for (int32_t j = 0; j < r.part_count; ++j) {
    const RigidPartConstants& c = g.constants[j];
    const Vec3 x{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
    const Quat q{view.Part(kRbQx, j)[l], view.Part(kRbQy, j)[l], view.Part(kRbQz, j)[l], view.Part(kRbQw, j)[l]};
    const Vec3 v{view.Part(kRbVx, j)[l], view.Part(kRbVy, j)[l], view.Part(kRbVz, j)[l]};
    const Vec3 w{view.Part(kRbWx, j)[l], view.Part(kRbWy, j)[l], view.Part(kRbWz, j)[l]};
    PartEnergy& e = out[j];
    e = PartEnergy{};
    e.kinematic = c.inv_mass == 0.0f;
    e.centre = x;
    if (e.kinematic) continue;
    const double m = 1.0 / c.inv_mass;
    e.mass = static_cast<float>(m);
    e.linear = 0.5 * m * static_cast<double>(LengthSquared(v));
    // Rotational: the angular velocity in the body's principal axes.
    const Vec3 wb = Rotate(Conjugate(q), w);
    const float wbs[3] = {wb.x, wb.y, wb.z};
    for (int k = 0; k < 3; ++k)
      if (c.inv_inertia[k] > 0.0f) e.angular += 0.5 * static_cast<double>(wbs[k]) * wbs[k] / c.inv_inertia[k];
    e.potential = -m * static_cast<double>(Dot(gravity, x));
  }
  return {};
}

bool RagdollSystem::Raycast(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  if (!RayReady(origin, dir, max_distance)) return false;
  float best = max_distance;
  bool found = false;
  for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i) {
    if (!store_.handles.IsLiveAt(i) || store_.slots[i].internal != kHostRagdoll) continue;
    const RagdollSlot& r = store_.slots[i];
    const RagdollGroup& g = store_.groups[r.group];
    const RagdollArchetype& a = archetypes_[g.archetype];
    for (int32_t j = 0; j < r.part_count; ++j) {
      const RigidPartArchetype& part = a.parts[j];
      const Transform& part_world = r.output[j];
      // The shape's frame: body frame times the shape's frame in the body.
      const Transform shape_world = Compose(Compose(part_world, part.body_in_part), part.shape_in_body);
      // Cheap reject: the ray's distance to the part's centre against its extent.
      const Vec3 to = shape_world.translation - origin;
      const float along = Dot(to, dir);
      const float extent = g.constants[j].extent + Length(part.shape_in_body.translation) + 0.01f;
      if (along < -extent || along - extent > best || LengthSquared(to - dir * along) > extent * extent) continue;
      const PartShapeSettings& sh = part.shape;
      auto sdf = [&](Vec3 p) { return PartShapeDistance(sh, shape_world, p); };
      const float t = SphereTrace(sdf, origin, dir, best);
      if (t < 0 || t > best) continue;
      best = t;
      found = true;
      hit->ragdoll = store_.handles.HandleAt(i);
      hit->part = j;
      hit->static_shape = -1;
      hit->distance = t;
      hit->point = origin + dir * t;
      hit->normal = DistanceNormal(sdf, hit->point);
    }
  }
  return found;
}

// The bodies' state and the host's controls; not the bounded depenetration's bookkeeping
// (kRbPairDeferNow and after), which only changes what the bodies do when it matters.
void RagdollSystem::HashState(StateHasher& hasher) const {
  for (std::size_t i = 0; i < store_.slots.size(); ++i) {
    if (!store_.handles.IsLiveAt(static_cast<uint32_t>(i))) continue;
    const RagdollSlot& r = store_.slots[i];
    hasher.Mix(&i, sizeof(i));
    RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
    const RigidBlockView view = g.ViewOfLane(r.lane);
    for (int32_t j = 0; j < r.part_count; ++j) {
      for (int32_t f = 0; f < kRbPairDeferNow; ++f) hasher.Mix(view.Part(f, j) + g.LaneInBlock(r.lane), sizeof(float));
    }
  }
}

void RagdollSystem::CheckHostBuffers(RagdollId only) const {
  for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i) {
    if (!store_.handles.IsLiveAt(i)) continue;
    const RagdollId id = store_.handles.HandleAt(i);
    if (!only.IsNull() && !(only == id)) continue;
    const RagdollSlot& r = store_.slots[i];
    const HostBufferOwner owner{"ragdoll", i, id.generation};
    CheckHostBuffer(owner, "output_parts", r.output, static_cast<std::size_t>(r.part_count) * sizeof(Transform));
    CheckStreamBuffers(owner, r.streams);
    if (r.kinematic_root != nullptr) CheckHostBuffer(owner, "kinematic_root", r.kinematic_root, sizeof(Transform));
  }
}

bool RagdollSystem::OverlapsHostBuffers(const void* data, std::size_t bytes) const {
  for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i) {
    if (!store_.handles.IsLiveAt(i)) continue;
    const RagdollSlot& r = store_.slots[i];
    if (RangesOverlap(data, bytes, r.output, static_cast<std::size_t>(r.part_count) * sizeof(Transform)) ||
        RangesOverlap(data, bytes, r.kinematic_root, sizeof(Transform)))
      return true;
    for (const BoundPoseStream& stream : r.streams) {
      if (RangesOverlap(data, bytes, stream.base, stream.extent) ||
          RangesOverlap(data, bytes, stream.model_world, sizeof(Transform)))
        return true;
    }
  }
  return false;
}

void RagdollSystem::PoisonStateForTest(RagdollId id) {
  if (!IsValid(id)) return;
  const RagdollSlot& r = store_.slots[id.index];
  store_.groups[r.group].PartField(r.lane, kRbVx, 0) = NAN;
}

}  // namespace tendon::detail
