// kernel/ragdolls/ragdoll_drives.cpp: the host's pushes on a ragdoll: part drives (grab,
// drag, hold), a continuous acceleration and part forces (air control, wind, a magnet),
// and the throw.
//
// What it owns: the drives' handles and records, and the lane rows the kernel reads
// (rigid_block.h: kControlsOn, the acceleration, kMaxPartForceSlots force slots and
// kMaxPartDriveSlots drive slots; rigid_kernel_drive.h solves them). Each call checks its
// handle and every number before it writes, so a refused call changes nothing. The rows
// move with their lane (every lane move copies whole lanes), so a drive follows its ragdoll
// between groups. Once a frame (EndFrame, serial, in drive slot order: deterministic) each
// active drive's distance is measured and one past its break distance lets go: its lane
// slot is freed, it is listed in BrokenDrives, counted in FrameStats::broken_drives and
// queued as a kDriveBroken event (tendon/contact_events.h) after the frame's contact events.
// Stiffness from the response time (tendon/part_drive.h): omega = kPartDriveResponseOmegaT
// / T; the lane holds M (the archetype's total mass), 1 / omega^2 and 2 zeta / omega, the
// constants of a spring-damper on a lone body of mass M (rigid_kernel_drive.h).
// What it does NOT do: solve anything (the kernel does), or know of characters (a
// character's DeactivateCharacter switches its ragdoll off, which removes its drives).
// Threading: the World's thread, between Steps (UpdateDrives: inside Step, serial).
// Memory: AddPartDrive may grow the handle table, the broken list's capacity and the event
// queue's (room for one break per live drive past contact_event_capacity); nothing else
// allocates.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernel/core/finite.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

static_assert(kMaxPartDrives == kMaxPartDriveSlots, "the public drive count is the kernel's slot count");
static_assert(kMaxPartForces == kMaxPartForceSlots, "the public force count is the kernel's slot count");

namespace {

Error StaleRagdollHandle() { return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale"); }
Error StaleDrive() { return Fail(ErrorCode::kStaleHandle, -1, "drive", "the part drive handle is null, stale or removed"); }

Error CheckTarget(Vec3 target, const char* field) {
  if (!IsFinite(target)) return Fail(ErrorCode::kNotFinite, -1, field, std::string(field) + " is not finite");
  return {};
}

}  // namespace

void RagdollSystem::RefreshControlsOn(const RagdollSlot& slot) {
  RagdollGroup& g = store_.groups[slot.group];
  bool on = g.LaneField(slot.lane, kAccelX) != 0.0f || g.LaneField(slot.lane, kAccelY) != 0.0f ||
            g.LaneField(slot.lane, kAccelZ) != 0.0f;
  for (int32_t s = 0; s < kMaxPartForceSlots; ++s) on = on || g.LaneField(slot.lane, ForceField(s, 0)) > 0.5f;
  for (int32_t s = 0; s < kMaxPartDriveSlots; ++s)
    on = on || g.LaneField(slot.lane, DriveField(s, kDrivePart)) > 0.5f;
  g.LaneField(slot.lane, kControlsOn) = on ? 1.0f : 0.0f;
}

Result<PartDriveId> RagdollSystem::AddPartDrive(RagdollId id, const PartDriveSettings& s) {
  if (!IsValid(id)) return StaleRagdollHandle();
  RagdollSlot& slot = store_.slots[id.index];
  RagdollGroup& g = store_.groups[slot.group];
  if (s.part < 0 || s.part >= slot.part_count)
    return Fail(ErrorCode::kBadReference, s.part, "settings.part",
                "settings.part = " + std::to_string(s.part) + " is not a part of this ragdoll (it has " +
                    std::to_string(slot.part_count) + ")");
  if (g.constants[s.part].inv_mass == 0.0f)
    return Fail(ErrorCode::kOutOfRange, s.part, "settings.part",
                "settings.part is the kinematic root, which follows its host frame: drive another part");
  if (!IsFinite(s.local_point))
    return Fail(ErrorCode::kNotFinite, s.part, "settings.local_point", "settings.local_point is not finite");
  if (Error e = CheckTarget(s.target, "settings.target"); !Ok(e)) return e;
  if (Error e = CheckRange(s.response_time, 1e-4f, 1000.0f, s.part, "settings.response_time"); !Ok(e)) return e;
  if (Error e = CheckPositive(s.max_force, s.part, "settings.max_force", true); !Ok(e)) return e;
  if (Error e = CheckRange(s.damping_ratio, 0.0f, 100.0f, s.part, "settings.damping_ratio"); !Ok(e)) return e;
  if (Error e = CheckPositive(s.break_distance, s.part, "settings.break_distance", true); !Ok(e)) return e;
  if (!slot.enabled)
    return Fail(ErrorCode::kInactive, -1, "ragdoll",
                "the ragdoll is switched off (SetRagdollEnabled(false) or an inactive character): switch it on "
                "before driving it");
  int32_t lane_slot = -1;
  for (int32_t k = 0; k < kMaxPartDriveSlots && lane_slot < 0; ++k) {
    if (!(g.LaneField(slot.lane, DriveField(k, kDrivePart)) > 0.5f)) lane_slot = k;
  }
  if (lane_slot < 0)
    return Fail(ErrorCode::kCapacity, -1, "ragdoll",
                "the ragdoll already has kMaxPartDrives (" + std::to_string(kMaxPartDrives) +
                    ") drives: remove one first");

  const RagdollArchetype& a = archetypes_[g.archetype];
  const double omega = static_cast<double>(kPartDriveResponseOmegaT) / static_cast<double>(s.response_time);
  const double mass = a.total_mass > 0 ? static_cast<double>(a.total_mass) : 1.0;
  const auto inv_omega2 = static_cast<float>(1.0 / (omega * omega));
  const auto damping_time = static_cast<float>(2.0 * static_cast<double>(s.damping_ratio) / omega);
  const Transform& bip = g.body_in_part[s.part];
  const Vec3 local_body = Rotate(Conjugate(bip.rotation), s.local_point - bip.translation);

  const PartDriveId drive = drive_handles_.Allocate();
  if (drives_.size() < drive_handles_.SlotCount()) drives_.resize(drive_handles_.SlotCount());
  drive_handles_.Reserve(drive_handles_.SlotCount());  // so RemovePartDrive's free list never grows
  // Every live drive can break in one frame: the list never grows in Step.
  if (broken_drives_.capacity() < drive_handles_.SlotCount()) broken_drives_.reserve(drive_handles_.SlotCount());
  // ... and each break queues an event past the contacts' room (PushDriveEvent).
  const std::size_t event_room =
      static_cast<std::size_t>(std::max(settings_.contact_event_capacity, 0)) + drive_handles_.SlotCount();
  if (events_.capacity() < event_room) events_.reserve(event_room);
  DriveRecord& r = drives_[drive.index];
  r = DriveRecord{};
  r.ragdoll = id;
  r.lane_slot = lane_slot;
  r.part = s.part;
  r.local_body = local_body;
  r.target = s.target;
  r.break_distance = s.break_distance;
  const float values[kDriveRows] = {static_cast<float>(s.part + 1), local_body.x, local_body.y, local_body.z,
                                    s.target.x, s.target.y, s.target.z, static_cast<float>(mass), inv_omega2, damping_time,
                                    s.max_force, 0.0f};
  for (int32_t row = 0; row < kDriveRows; ++row) g.LaneField(slot.lane, DriveField(lane_slot, row)) = values[row];
  BodyState b;
  ReadMotion(g.ViewOfLane(slot.lane), g.LaneInBlock(slot.lane), s.part, &b);
  r.distance = Length(b.x + Rotate(b.q, local_body) - s.target);
  RefreshControlsOn(slot);
  WakeSlot(slot);
  return drive;
}

Error RagdollSystem::SetPartDriveTarget(PartDriveId drive, Vec3 target) {
  if (!IsValid(drive)) return StaleDrive();
  if (Error e = CheckTarget(target, "target"); !Ok(e)) return e;
  DriveRecord& r = drives_[drive.index];
  r.target = target;
  if (r.broken) return {};  // a broken drive pulls nothing; its target is only reported
  RagdollSlot& slot = store_.slots[r.ragdoll.index];
  RagdollGroup& g = store_.groups[slot.group];
  g.LaneField(slot.lane, DriveField(r.lane_slot, kDriveTx)) = target.x;
  g.LaneField(slot.lane, DriveField(r.lane_slot, kDriveTy)) = target.y;
  g.LaneField(slot.lane, DriveField(r.lane_slot, kDriveTz)) = target.z;
  WakeSlot(slot);  // a held body asleep at its target follows a target that moves
  return {};
}

Error RagdollSystem::RemovePartDrive(PartDriveId drive) {
  if (!IsValid(drive)) return StaleDrive();
  DriveRecord& r = drives_[drive.index];
  if (!r.broken) {
    RagdollSlot& slot = store_.slots[r.ragdoll.index];
    RagdollGroup& g = store_.groups[slot.group];
    for (int32_t row = 0; row < kDriveRows; ++row) g.LaneField(slot.lane, DriveField(r.lane_slot, row)) = 0.0f;
    RefreshControlsOn(slot);
  }
  drive_handles_.Free(drive);
  return {};
}

Error RagdollSystem::GetPartDriveState(PartDriveId drive, PartDriveState* out) const {
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  if (!IsValid(drive)) return StaleDrive();
  const DriveRecord& r = drives_[drive.index];
  PartDriveState st;
  st.active = !r.broken;
  st.broken = r.broken;
  st.distance = r.distance;
  st.target = r.target;
  if (!r.broken) {
    const RagdollSlot& slot = store_.slots[r.ragdoll.index];
    st.force = const_cast<RagdollGroup&>(store_.groups[slot.group]).LaneField(slot.lane, DriveField(r.lane_slot, kDriveForce));
  }
  *out = st;
  return {};
}

void RagdollSystem::RemoveDrivesOf(uint32_t index, bool all_pushes) {
  for (uint32_t i = 0; i < drive_handles_.SlotCount(); ++i) {
    if (!drive_handles_.IsLiveAt(i) || drives_[i].ragdoll.index != index) continue;
    (void)RemovePartDrive(drive_handles_.HandleAt(i));  // live: cannot fail
  }
  if (all_pushes) {
    const RagdollSlot& slot = store_.slots[index];
    RagdollGroup& g = store_.groups[slot.group];
    for (int32_t f = kControlsOn; f < kRigidLaneFieldCount; ++f) g.LaneField(slot.lane, f) = 0.0f;
  }
}

void RagdollSystem::UpdateDrives(FrameStats& stats) {
  for (uint32_t i = 0; i < drive_handles_.SlotCount(); ++i) {
    if (!drive_handles_.IsLiveAt(i) || drives_[i].broken) continue;
    DriveRecord& r = drives_[i];
    const RagdollSlot& slot = store_.slots[r.ragdoll.index];
    RagdollGroup& g = store_.groups[slot.group];
    BodyState b;
    ReadMotion(g.ViewOfLane(slot.lane), g.LaneInBlock(slot.lane), r.part, &b);
    const Vec3 point = b.x + Rotate(b.q, r.local_body);
    r.distance = Length(point - r.target);
    // NaN (a lane the writeback reset) does not break a drive; the next frame measures again.
    if (!(r.distance > r.break_distance)) continue;
    for (int32_t row = 0; row < kDriveRows; ++row) g.LaneField(slot.lane, DriveField(r.lane_slot, row)) = 0.0f;
    RefreshControlsOn(slot);
    r.broken = true;
    r.lane_slot = -1;
    broken_drives_.push_back(drive_handles_.HandleAt(i));
    ++stats.broken_drives;
    ContactEvent e;
    e.kind = ContactEventKind::kDriveBroken;
    e.ragdoll = r.ragdoll;
    e.part = r.part;
    e.b_kind = ContactSideKind::kPartDrive;
    e.b_drive = drive_handles_.HandleAt(i);
    e.point = point;
    e.normal = (point - r.target) * (1.0f / r.distance);  // finite: distance > break_distance > 0
    e.distance = r.distance;
    PushDriveEvent(e);
  }
  stats.contact_events = static_cast<int32_t>(events_.size());
  stats.dropped_contact_events = events_dropped_;
}

void RagdollSystem::PushDriveEvent(const ContactEvent& event) {
  // AddPartDrive reserved room for every live drive past the contacts' capacity, so this
  // only drops (and counts) what cannot happen: more breaks than live drives.
  if (events_.size() >= events_.capacity()) {
    ++events_dropped_;
    return;
  }
  events_.push_back(event);
}

Error RagdollSystem::SetAcceleration(RagdollId id, Vec3 acceleration) {
  if (!IsValid(id)) return StaleRagdollHandle();
  if (!IsFinite(acceleration))
    return Fail(ErrorCode::kNotFinite, -1, "acceleration", "acceleration is not finite");
  if (Length(acceleration) > 1e5f)
    return Fail(ErrorCode::kOutOfRange, -1, "acceleration", "|acceleration| must be at most 1e5 m/s^2");
  RagdollSlot& slot = store_.slots[id.index];
  RagdollGroup& g = store_.groups[slot.group];
  g.LaneField(slot.lane, kAccelX) = acceleration.x;
  g.LaneField(slot.lane, kAccelY) = acceleration.y;
  g.LaneField(slot.lane, kAccelZ) = acceleration.z;
  RefreshControlsOn(slot);
  if (slot.enabled) WakeSlot(slot);
  return {};
}

Error RagdollSystem::SetPartForce(RagdollId id, int32_t part, Vec3 force) {
  if (!IsValid(id)) return StaleRagdollHandle();
  RagdollSlot& slot = store_.slots[id.index];
  if (part < 0 || part >= slot.part_count)
    return Fail(ErrorCode::kBadReference, part, "part",
                "part = " + std::to_string(part) + " is not a part of this ragdoll (it has " +
                    std::to_string(slot.part_count) + ")");
  if (!IsFinite(force)) return Fail(ErrorCode::kNotFinite, part, "force", "force is not finite");
  if (Length(force) > 1e8f) return Fail(ErrorCode::kOutOfRange, part, "force", "|force| must be at most 1e8 N");
  RagdollGroup& g = store_.groups[slot.group];
  const bool off = force.x == 0.0f && force.y == 0.0f && force.z == 0.0f;
  int32_t at = -1, free_slot = -1;
  for (int32_t k = 0; k < kMaxPartForceSlots; ++k) {
    const float p = g.LaneField(slot.lane, ForceField(k, 0));
    if (p == static_cast<float>(part + 1)) at = k;
    if (!(p > 0.5f) && free_slot < 0) free_slot = k;
  }
  if (at < 0 && off) return {};  // nothing to switch off
  if (at < 0) at = free_slot;
  if (at < 0)
    return Fail(ErrorCode::kCapacity, part, "part",
                "kMaxPartForces (" + std::to_string(kMaxPartForces) +
                    ") parts of this ragdoll already have a force: set one of theirs to zero first");
  const float values[kForceRows] = {off ? 0.0f : static_cast<float>(part + 1), off ? 0.0f : force.x,
                                    off ? 0.0f : force.y, off ? 0.0f : force.z};
  for (int32_t row = 0; row < kForceRows; ++row) g.LaneField(slot.lane, ForceField(at, row)) = values[row];
  RefreshControlsOn(slot);
  if (slot.enabled) WakeSlot(slot);
  return {};
}

Result<Vec3> RagdollSystem::Throw(RagdollId id, Vec3 direction, float strength, float min_speed, float max_speed,
                                  ThrowSpeedRule rule) {
  if (!IsValid(id)) return StaleRagdollHandle();
  const float len = IsFinite(direction) ? Length(direction) : NAN;
  if (!std::isfinite(len))
    return Fail(ErrorCode::kNotFinite, -1, "direction", "direction is not finite");
  if (!(len > 1e-6f)) return Fail(ErrorCode::kOutOfRange, -1, "direction", "direction is zero: give the throw's way");
  if (!std::isfinite(strength)) return Fail(ErrorCode::kNotFinite, -1, "strength", "strength is not finite");
  if (strength < 0) return Fail(ErrorCode::kOutOfRange, -1, "strength", "strength must be >= 0");
  if (!std::isfinite(min_speed) || !std::isfinite(max_speed))
    return Fail(ErrorCode::kNotFinite, -1, !std::isfinite(min_speed) ? "min_speed" : "max_speed", "the speed bounds must be finite");
  if (min_speed < 0) return Fail(ErrorCode::kOutOfRange, -1, "min_speed", "min_speed must be >= 0");
  if (min_speed > max_speed)
    return Fail(ErrorCode::kOutOfRange, -1, "max_speed", "max_speed must be at least min_speed");
  RagdollSlot& slot = store_.slots[id.index];
  if (!slot.enabled)
    return Fail(ErrorCode::kInactive, -1, "ragdoll",
                "the ragdoll is switched off (SetRagdollEnabled(false) or an inactive character): switch it on "
                "before throwing it");
  RagdollGroup& g = store_.groups[slot.group];
  float unanchored = 0;
  for (int32_t j = 0; j < slot.part_count; ++j) {
    if (g.constants[j].inv_mass > 0.0f) unanchored += 1.0f / g.constants[j].inv_mass;
  }
  const float speed = rule(strength, unanchored, min_speed, max_speed);
  const Vec3 v = direction * (speed / len);
  const RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  for (int32_t j = 0; j < slot.part_count; ++j) {
    if (g.constants[j].inv_mass == 0.0f) continue;  // a kinematic root stays with its frame
    // The parts' speed caps bound what the kernel keeps; the value is stored as given.
    const float values[6] = {v.x, v.y, v.z, 0.0f, 0.0f, 0.0f};
    const int32_t fields[6] = {kRbVx, kRbVy, kRbVz, kRbWx, kRbWy, kRbWz};
    for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], j)[l] = values[f];
  }
  WakeSlot(slot);
  return v;
}

}  // namespace tendon::detail
