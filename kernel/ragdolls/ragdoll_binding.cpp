// kernel/ragdolls/ragdoll_binding.cpp: binding and unbinding ragdoll instances, and the
// reservations made at bind time.
//
// What it owns: Bind checks everything the host hands over (buffers, placement, start
// frames, planar normal, sleeping rule, kinematic root) before it changes anything, takes a
// handle from the store's HandleTable (the payload, a RagdollSlot, lives in store_.slots
// by handle index), one lane of its archetype's group, and sizes everything the instance
// will touch in a frame: the group's blocks, the per-block work arrays, the domains, the
// contacts between ragdolls. Binding the same output buffer twice returns the first
// handle. Unbind gives the lane back (the group's last lane fills the hole) and frees the
// handle: its slot is reused last-freed-first, so handle values, and the slot order that
// state hashes follow, do not depend on anything but the host's calls.
// What it does NOT do: step, or move lanes beyond taking and giving back one
// (ragdoll_lanes.cpp does the moves).
// Threading: the World's thread, between Steps. Memory: Bind, ReserveKinematicToggle and
// Unbind's stream release allocate or free; a frame never does.
#include <string>
#include <utility>

#include "kernel/core/finite.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

Result<RagdollId> RagdollSystem::Bind(const RagdollBinding& b) {
  if (!Live(b.archetype))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  const RagdollArchetype& a = archetypes_[b.archetype.index];
  const auto n = static_cast<int32_t>(a.parts.size());
  if (b.output_parts.data() == nullptr || static_cast<int32_t>(b.output_parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "output_parts",
                "output_parts needs " + std::to_string(n) + " transforms, got " + std::to_string(b.output_parts.size()));
  if (!b.start_parts.empty() && static_cast<int32_t>(b.start_parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "start_parts", "start_parts is shorter than the part count");
  if (auto it = by_output_.find(b.output_parts.data()); it != by_output_.end())
    return store_.handles.HandleAt(static_cast<uint32_t>(it->second));
  std::vector<BoundPoseStream> streams;
  {
    std::vector<int32_t> part_index(static_cast<std::size_t>(n));
    for (int32_t j = 0; j < n; ++j) part_index[j] = j;
    if (Error e = BindPoseStreams(b.pose_streams, part_index, "pose_streams", &streams); !Ok(e)) return e;
  }
  if (!IsFinite(b.placement) || !IsFinite(b.linear_velocity) || !IsFinite(b.angular_velocity))
    return Fail(ErrorCode::kNotFinite, -1, "placement", "placement or the start velocities are not finite");
  // Rotations far from unit are refused (kernel/core/finite.h; found by fuzz_build: a
  // placement of |q| ~ 1e30 overflowed the bind pose).
  if (!UsableRotation(b.placement.rotation))
    return Fail(ErrorCode::kNotUnitRotation, -1, "placement", "placement's rotation is far from unit length");
  for (int32_t j = 0; j < static_cast<int32_t>(b.start_parts.size()) && j < n; ++j) {
    if (!IsFinite(b.start_parts[j]))
      return Fail(ErrorCode::kNotFinite, j, "start_parts", "start_parts[" + std::to_string(j) + "] is not finite");
    if (!UsableRotation(b.start_parts[j].rotation))
      return Fail(ErrorCode::kNotUnitRotation, j, "start_parts",
                  "start_parts[" + std::to_string(j) + "]'s rotation is far from unit length");
  }
  if (!IsFinite(b.planar_normal) || (!(b.planar_normal == Vec3{}) && std::fabs(Length(b.planar_normal) - 1.0f) > 1e-3f))
    return Fail(ErrorCode::kOutOfRange, -1, "planar_normal", "planar_normal must be zero (3D) or a unit vector");
  if (std::isnan(b.freeze_after_seconds) || b.freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  if (b.kinematic_root != nullptr && (!IsFinite(*b.kinematic_root) || !UsableRotation(b.kinematic_root->rotation)))
    return Fail(ErrorCode::kNotFinite, -1, "kinematic_root", "the kinematic root frame is not finite (or not a rotation) at bind");
  // A placement rotation a little off unit would scale the placed parts: normalised.
  Transform placement = b.placement;
  if (!NearUnit(placement.rotation)) placement.rotation = Normalize(placement.rotation);
  const bool kinematic = b.kinematic_root != nullptr;
  const int32_t gi = FindOrAddGroup(static_cast<int32_t>(b.archetype.index), kinematic);
  RagdollGroup& g = store_.groups[gi];
  // Body poses to start from.
  Transform bodies[kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j) {
    // A part's frame in the build pose is its body pose times the inverse body offset.
    const Transform part =
        b.start_parts.empty()
            ? Compose(placement, Compose(a.parts[j].body_pose, Relative(a.parts[j].body_in_part, Transform{})))
            : b.start_parts[j];
    bodies[j] = Compose(Transform{part.translation, Normalize(part.rotation), {1, 1, 1}}, a.parts[j].body_in_part);
    // Finite numbers can still overflow when composed: refuse them here, or the body
    // would reset to a non-finite pose every frame.
    if (!IsFinite(bodies[j]) || !IsFinite(PartFrameOfBody(bodies[j], a.parts[j].body_in_part)))
      return Fail(ErrorCode::kNotFinite, j, b.start_parts.empty() ? "placement" : "start_parts",
                  "part " + std::to_string(j) + "'s starting frame is not finite once composed with its body frame");
  }
  // Capacity: one more lane (blocks grow here, never in Step).
  EnsureLanes(gi, g.lanes_used + 1);
  const RagdollId id = store_.handles.Allocate();
  const auto index = static_cast<int32_t>(id.index);
  if (store_.slots.size() < store_.handles.SlotCount()) store_.slots.resize(store_.handles.SlotCount());
  RagdollSlot& slot = store_.slots[index];
  slot.group = gi;
  slot.lane = g.lanes_used++;
  slot.output = b.output_parts.data();
  slot.kinematic_root = b.kinematic_root;
  slot.part_count = n;
  slot.still_seconds = slot.slow_seconds = 0;
  slot.sleep_x.resize(n);
  slot.sleep_q.resize(n);
  slot.frame_x.resize(n);
  slot.frame_q.resize(n);
  slot.frame_speed.assign(n, 0.0f);
  for (int32_t j = 0; j < n; ++j) {
    slot.frame_x[j] = bodies[j].translation;
    slot.frame_q[j] = bodies[j].rotation;
  }
  slot.age_seconds = 0;
  slot.asleep = slot.frozen = false;
  slot.can_sleep = true;
  slot.freeze_when_asleep = b.freeze_when_asleep;
  slot.freeze_after_seconds = b.freeze_after_seconds;
  slot.collide_mode = b.collide_mode;
  slot.enabled = b.enabled;
  g.lane_owner[slot.lane] = index;
  g.SetLane(slot.lane, bodies, b.linear_velocity, b.angular_velocity, false);
  if (!(b.planar_normal == Vec3{})) g.SetPlanar(slot.lane, NormalizeOr(b.planar_normal, Vec3{0, 0, 1}));
  if (slot.enabled) EnableLane(slot);
  for (int32_t j = 0; j < n; ++j) slot.output[j] = PartFrameOfBody(bodies[j], a.parts[j].body_in_part);
  slot.streams = std::move(streams);
  EmitStreams(slot);
  by_output_.emplace(b.output_parts.data(), index);
  total_parts_ += n;
  ReserveContacts();
  return id;
}

void RagdollSystem::EmitStreams(RagdollSlot& slot) {
  for (BoundPoseStream& stream : slot.streams) {
    RefreshModel(stream);
    for (int32_t j = 0; j < slot.part_count; ++j) EmitWorldTransform(stream, j, slot.output[j]);
  }
}

Error RagdollSystem::Unbind(RagdollId id) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& slot = store_.slots[id.index];
  if (slot.internal != kHostRagdoll) --internal_live_;
  slot.internal = kHostRagdoll;
  slot.has_targets = false;
  RemoveDrivesOf(id.index, true);  // and its acceleration and part forces
  RemoveLane(slot);
  slot.enabled = false;  // a free slot is never enabled (RagdollSlot::enabled)
  by_output_.erase(slot.output);
  std::vector<BoundPoseStream>().swap(slot.streams);
  store_.handles.Free(id);
  total_parts_ -= slot.part_count;
  return {};
}

int32_t RagdollSystem::UnbindAll() {
  int32_t count = 0;
  for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i) {
    // The World's own instances (host bodies, characters' twins) go with their owners.
    if (store_.handles.IsLiveAt(i) && store_.slots[i].internal == kHostRagdoll &&
        Unbind(store_.handles.HandleAt(i)).code == ErrorCode::kNone)
      ++count;
  }
  return count;
}

// Contacts between ragdolls are sized with the bound parts and slots, here, never in Step.
void RagdollSystem::ReserveContacts() {
  broad_.Reserve(total_parts_, static_cast<int32_t>(store_.slots.size()));
  islands_.Reserve(total_parts_, broad_.pair_capacity(), static_cast<int32_t>(store_.slots.size()));
  contacts_.Reserve(broad_.pair_capacity());
  // Contact events: the pairs that touch, this frame's and last frame's.
  if (settings_.contact_event_capacity > 0) {
    touching_pairs_.reserve(broad_.pair_capacity());
    touching_next_.reserve(broad_.pair_capacity());
    overlapping_.reserve(broad_.pair_capacity());
    overlapping_next_.reserve(broad_.pair_capacity());
  }
  domains_.ReserveIslands(store_.slots.size());
}

Error RagdollSystem::ReserveKinematicToggle(RagdollArchetypeId archetype, int32_t instances) {
  if (!Live(archetype))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  for (bool kinematic : {false, true}) {
    const int32_t gi = FindOrAddGroup(static_cast<int32_t>(archetype.index), kinematic);
    const int64_t reserved = static_cast<int64_t>(store_.groups[gi].reserved) + instances;
    if (reserved + store_.groups[gi].lanes_used > kMaxRagdollInstances)
      return Fail(ErrorCode::kCapacity, -1, "instances",
                  "at most " + std::to_string(kMaxRagdollInstances) + " instances of one ragdoll archetype, reserved or bound");
  }
  for (bool kinematic : {false, true}) {
    const int32_t gi = FindOrAddGroup(static_cast<int32_t>(archetype.index), kinematic);
    RagdollGroup& g = store_.groups[gi];
    g.reserved = static_cast<int32_t>(std::max<int64_t>(static_cast<int64_t>(g.reserved) + instances, 0));
    EnsureLanes(gi, g.lanes_used);
  }
  return {};
}

}  // namespace tendon::detail
