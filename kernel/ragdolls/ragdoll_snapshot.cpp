// kernel/ragdolls/ragdoll_snapshot.cpp: saving and restoring ragdolls' state
// (tendon/snapshot.h; the byte layer is kernel/core/snapshot_io.h).
//
// A slot's record holds everything of the instance the next Steps read: every row of its
// lane (part, contact and lane fields, the bookkeeping below kRbPairDeferNow, stick
// points, drive and force rows), its slot's sleep clocks and flags, where it is enabled
// and whether its root is kinematic, kinematic targets, and the part frames last written
// to its output (the next frame reads them back). A lane's place is not state: the record
// is written into whatever lane the instance holds when it is restored. Restores run a
// checking pass and then a writing pass over the same bytes (SnapshotReader::apply).
// What it does NOT do: save a kinematic root's or output's identity (the instance keeps
// its own), or write on the checking pass; every refusal belongs to that pass.
// Threading: the World's thread, between frames. Memory: none, but a kinematic-root
// group an archetype has not reserved (FindOrAddGroup) and a refusal's message.
#include <cmath>
#include <cstring>
#include <string>

#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

namespace {
constexpr uint32_t kSystemTag = SnapshotTag("RGDS");
constexpr uint32_t kSlotTag = SnapshotTag("RGD1");
constexpr uint32_t kDrivesTag = SnapshotTag("DRVS");
constexpr uint32_t kPairsTag = SnapshotTag("TCHS");

// Rows of a part's fields that are motion and controls, and the lane's part-force and
// drive rows but a drive's force cap (infinity: no cap): strictly finite in a record
// (a drive's or force's infinite row would reach the kernel's pull).
bool StrictRow(int32_t row, int32_t part_count) {
  if (row < part_count * kRigidFieldCount) return row % kRigidFieldCount < kRbPairDeferNow;
  const int32_t field = row - part_count * (kRigidFieldCount + kMaxContactPoints * kContactFieldCount);
  if (field < kForceBase) return false;
  return field < kDriveBase || (field - kDriveBase) % kDriveRows != kDriveMaxForce;
}
// Lane rows the kernels read as a part index (part + 1; 0: the slot is free): a drive's
// and a part force's. They must be whole numbers in [0, part_count], or a kernel would
// index past the lane.
bool PartIndexRow(int32_t row, int32_t part_count) {
  const int32_t field = row - part_count * (kRigidFieldCount + kMaxContactPoints * kContactFieldCount);
  for (int32_t s = 0; s < kMaxPartDriveSlots; ++s) {
    if (field == DriveField(s, kDrivePart)) return true;
  }
  for (int32_t s = 0; s < kMaxPartForceSlots; ++s) {
    if (field == ForceField(s, 0)) return true;
  }
  return false;
}
// The `enabled` flag of the slot record `head` is at (a copy: reads its head only; false
// when the record cannot be read, which the checking pass itself then refuses).
bool SlotRecordEnabled(SnapshotReader head) {
  head.Begin(kSlotTag, "ragdoll");
  head.U32("ragdoll.slot");
  head.I32("ragdoll.kind");
  head.U64("ragdoll.archetype_fingerprint");
  head.I32("ragdoll.part_count");
  head.I32("ragdoll.rows");
  const bool enabled = head.Bool("ragdoll.enabled");
  return enabled && !head.failed();
}
constexpr const char* kDisabledDriveWhy =
    " has a part drive in the saved state and is disabled in it: the buffer is corrupted";
}  // namespace

uint64_t RagdollSystem::GroupFingerprint(const RagdollGroup& g) const {
  uint64_t h = 1469598103934665603ull;
  const int32_t head[4] = {g.part_count, g.Rows(), g.kinematic_bodies ? 1 : 0, g.trigger ? 1 : 0};
  h = FingerprintBytes(h, head, sizeof(head));
  // Part 0's mass terms differ between an archetype's free and kinematic-root groups: the
  // root is left out so both answer the same.
  for (int32_t j = 1; j < g.part_count; ++j) h = FingerprintBytes(h, &g.constants[j], sizeof(RigidPartConstants));
  return h;
}

void RagdollSystem::SaveSlot(uint32_t index, SnapshotWriter& w) const {
  const RagdollSlot& slot = store_.slots[index];
  const RagdollGroup& g = store_.groups[slot.group];
  const std::size_t at = w.Begin(kSlotTag);
  w.U32(index);
  w.I32(slot.internal);
  w.U64(GroupFingerprint(g));
  w.I32(g.part_count);
  w.I32(g.Rows());
  w.Bool(slot.enabled);
  w.Bool(g.kinematic_root);
  w.Bool(slot.asleep);
  w.Bool(slot.frozen);
  w.Bool(slot.can_sleep);
  w.Bool(slot.freeze_when_asleep);
  w.Bool(slot.has_targets);
  w.U8(static_cast<uint8_t>(slot.collide_mode));
  w.F32(slot.still_seconds);
  w.F32(slot.slow_seconds);
  w.F32(slot.calm_seconds);
  w.F32(slot.age_seconds);
  w.F32(slot.freeze_after_seconds);
  w.U32(static_cast<uint32_t>(slot.frame_x.size()));
  for (std::size_t j = 0; j < slot.frame_x.size(); ++j) {
    w.V3(slot.frame_x[j]);
    w.Q(slot.frame_q[j]);
    w.F32(slot.frame_speed[j]);
  }
  w.U32(static_cast<uint32_t>(slot.sleep_x.size()));
  for (std::size_t j = 0; j < slot.sleep_x.size(); ++j) {
    w.V3(slot.sleep_x[j]);
    w.Q(slot.sleep_q[j]);
  }
  w.U32(static_cast<uint32_t>(slot.kinematic_targets.size()));
  for (const Transform& t : slot.kinematic_targets) w.T(t);
  w.Bool(slot.output != nullptr);
  if (slot.output != nullptr) {
    for (int32_t j = 0; j < slot.part_count; ++j) w.T(slot.output[j]);
  }
  const float* block = store_.groups[slot.group].blocks[g.BlockOf(slot.lane)].data();
  const int32_t l = g.LaneInBlock(slot.lane);
  for (int32_t row = 0; row < g.Rows(); ++row) w.F32(block[row * g.block_lanes + l]);
  w.End(at);
}

void RagdollSystem::RestoreSlot(uint32_t index, SnapshotReader& r, RootProvider root_for, const void* root_context,
                                bool same_slot) {
  const auto item = static_cast<int32_t>(index);
  const std::size_t end = r.Begin(kSlotTag, "ragdoll");
  const uint32_t saved_slot = r.U32("ragdoll.slot");
  if (same_slot) r.Expect(saved_slot, index, item, "ragdoll.slot");
  if (r.failed()) return;
  RagdollSlot& slot = store_.slots[index];
  r.Expect(static_cast<uint32_t>(r.I32("ragdoll.kind")), static_cast<uint32_t>(slot.internal), item, "ragdoll.kind");
  const uint64_t fingerprint = r.U64("ragdoll.archetype_fingerprint");
  const int32_t parts = r.I32("ragdoll.part_count");
  const int32_t rows = r.I32("ragdoll.rows");
  if (r.failed()) return;
  const RagdollGroup& g0 = store_.groups[slot.group];
  r.Expect(static_cast<uint32_t>(parts), static_cast<uint32_t>(g0.part_count), item, "ragdoll.part_count");
  r.Expect(static_cast<uint32_t>(rows), static_cast<uint32_t>(g0.Rows()), item, "ragdoll.rows");
  if (!r.failed() && fingerprint != GroupFingerprint(g0)) {
    r.Fail(ErrorCode::kBadReference, item, "ragdoll.archetype_fingerprint",
           "ragdoll slot " + std::to_string(index) +
               ": its archetype's constants differ from the saved one's: saved from another archetype");
  }
  const bool enabled = r.Bool("ragdoll.enabled");
  const bool kinematic_root = r.Bool("ragdoll.kinematic_root");
  const bool asleep = r.Bool("ragdoll.asleep");
  const bool frozen = r.Bool("ragdoll.frozen");
  const bool can_sleep = r.Bool("ragdoll.can_sleep");
  const bool freeze_when_asleep = r.Bool("ragdoll.freeze_when_asleep");
  const bool has_targets = r.Bool("ragdoll.has_targets");
  const uint8_t collide_mode = r.U8("ragdoll.collide_mode");
  if (collide_mode > static_cast<uint8_t>(RagdollCollideMode::kStatic))
    r.Fail(ErrorCode::kOutOfRange, item, "ragdoll.collide_mode", "ragdoll.collide_mode is not a RagdollCollideMode");
  const float still = r.F32("ragdoll.still_seconds", true);
  const float slow = r.F32("ragdoll.slow_seconds", true);
  const float calm = r.F32("ragdoll.calm_seconds", true);
  const float age = r.F32("ragdoll.age_seconds", true);
  const float freeze_after = r.F32("ragdoll.freeze_after_seconds");
  const Transform* root = nullptr;
  if (!r.failed() && kinematic_root != g0.kinematic_root) {
    if (kinematic_root) {
      root = slot.kinematic_root != nullptr ? slot.kinematic_root
                                            : (root_for != nullptr ? root_for(index, root_context) : nullptr);
      if (root == nullptr) {
        r.Fail(ErrorCode::kBadReference, item, "ragdoll.kinematic_root",
               "ragdoll slot " + std::to_string(index) +
                   ": the saved state follows a kinematic root and this instance has none: "
                   "SetRagdollKinematicRoot first");
      }
    }
  }
  if (r.failed()) return;
  // The lane moves first (they carry the lane's rows, which the record then overwrites).
  if (r.apply()) {
    if (kinematic_root != g0.kinematic_root) {
      const int32_t target = FindOrAddGroup(g0.archetype, kinematic_root);
      MoveToGroup(item, target);
      slot.kinematic_root = kinematic_root ? root : nullptr;
    }
    if (enabled != slot.enabled) {
      slot.enabled = enabled;
      if (enabled) {
        EnableLane(slot);
      } else {
        RemoveDrivesOf(index, false);
        DisableLane(slot);
      }
    }
    slot.asleep = asleep;
    slot.frozen = frozen;
    slot.can_sleep = can_sleep;
    slot.freeze_when_asleep = freeze_when_asleep;
    slot.has_targets = has_targets;
    slot.collide_mode = static_cast<RagdollCollideMode>(collide_mode);
    slot.still_seconds = still;
    slot.slow_seconds = slow;
    slot.calm_seconds = calm;
    slot.age_seconds = age;
    slot.freeze_after_seconds = freeze_after;
  }
  r.Expect(r.U32("ragdoll.frame_parts"), static_cast<uint32_t>(slot.frame_x.size()), item, "ragdoll.frame_parts");
  for (std::size_t j = 0; j < slot.frame_x.size() && !r.failed(); ++j) {
    const Vec3 x = r.V3("ragdoll.frame_x");
    const Quat q = r.Q("ragdoll.frame_q");
    const float speed = r.F32("ragdoll.frame_speed");
    if (r.apply()) {
      slot.frame_x[j] = x;
      slot.frame_q[j] = q;
      slot.frame_speed[j] = speed;
    }
  }
  r.Expect(r.U32("ragdoll.sleep_parts"), static_cast<uint32_t>(slot.sleep_x.size()), item, "ragdoll.sleep_parts");
  for (std::size_t j = 0; j < slot.sleep_x.size() && !r.failed(); ++j) {
    const Vec3 x = r.V3("ragdoll.sleep_x");
    const Quat q = r.Q("ragdoll.sleep_q");
    if (r.apply()) {
      slot.sleep_x[j] = x;
      slot.sleep_q[j] = q;
    }
  }
  r.Expect(r.U32("ragdoll.kinematic_targets"), static_cast<uint32_t>(slot.kinematic_targets.size()), item,
           "ragdoll.kinematic_targets");
  for (std::size_t j = 0; j < slot.kinematic_targets.size() && !r.failed(); ++j) {
    const Transform t = r.T("ragdoll.kinematic_targets");
    if (r.apply()) slot.kinematic_targets[j] = t;
  }
  const bool has_output = r.Bool("ragdoll.output");
  if (!r.failed() && has_output != (slot.output != nullptr))
    r.Fail(ErrorCode::kBadReference, item, "ragdoll.output", "ragdoll.output: one of the two has no output buffer");
  for (int32_t j = 0; has_output && j < slot.part_count && !r.failed(); ++j) {
    const Transform t = r.T("ragdoll.output");
    if (r.apply()) slot.output[j] = t;
  }
  if (r.failed()) return;
  RagdollGroup& g = store_.groups[slot.group];  // (moved above on the writing pass)
  float* block = g.blocks[g.BlockOf(slot.lane)].data();
  const int32_t l = g.LaneInBlock(slot.lane);
  for (int32_t row = 0; row < rows && !r.failed(); ++row) {
    const float v = r.F32("ragdoll.lane", StrictRow(row, parts));
    if (PartIndexRow(row, parts) && !(v >= 0.0f && v <= static_cast<float>(parts) && v == std::floor(v))) {
      r.Fail(ErrorCode::kOutOfRange, item, "ragdoll.lane",
             "ragdoll slot " + std::to_string(index) + ": a drive's or part force's part is not one of its parts");
    }
    if (r.apply()) block[row * g.block_lanes + l] = v;
  }
  if (!r.failed() && r.apply()) {
    // The rows say what the slot says; the lane's flags follow the slot, not the buffer.
    g.SetActiveFlag(slot.lane, slot.enabled);
  }
  r.End(end, "ragdoll");
}

void RagdollSystem::SaveDrives(int64_t only, SnapshotWriter& w) const {
  const std::size_t at = w.Begin(kDrivesTag);
  uint32_t count = 0;
  for (uint32_t i = 0; i < drive_handles_.SlotCount(); ++i) {
    if (drive_handles_.IsLiveAt(i) && (only < 0 || drives_[i].ragdoll.index == static_cast<uint32_t>(only))) ++count;
  }
  w.U32(count);
  for (uint32_t i = 0; i < drive_handles_.SlotCount(); ++i) {
    if (!drive_handles_.IsLiveAt(i)) continue;
    const DriveRecord& d = drives_[i];
    if (only >= 0 && d.ragdoll.index != static_cast<uint32_t>(only)) continue;
    w.U32(i);
    w.U32(d.ragdoll.index);
    w.I32(d.lane_slot);
    w.I32(d.part);
    w.V3(d.local_body);
    w.V3(d.target);
    w.F32(d.break_distance);
    w.F32(d.distance);
    w.Bool(d.broken);
  }
  w.End(at);
}

void RagdollSystem::RestoreDrives(int64_t only, SnapshotReader& r) {
  const std::size_t end = r.Begin(kDrivesTag, "part_drives");
  uint32_t live = 0;
  for (uint32_t i = 0; i < drive_handles_.SlotCount(); ++i) {
    if (drive_handles_.IsLiveAt(i) && (only < 0 || drives_[i].ragdoll.index == static_cast<uint32_t>(only))) ++live;
  }
  constexpr uint32_t kNoDrive = ~0u;
  // The n-th live drive of `ragdoll` in slot order (kNoDrive when it has fewer).
  const auto nth_drive_of = [this](uint32_t ragdoll, uint32_t n) {
    for (uint32_t i = 0; i < drive_handles_.SlotCount(); ++i) {
      if (!drive_handles_.IsLiveAt(i) || drives_[i].ragdoll.index != ragdoll) continue;
      if (n == 0) return i;
      --n;
    }
    return kNoDrive;
  };
  uint32_t used_lane_slots = 0;  // into one instance: its drives' lane slots, each once
  const uint32_t count = r.U32("part_drives.count");
  r.Expect(count, live, -1, "part_drives.count");
  // The whole World's drives come in slot order, not grouped by ragdoll: whether a drive's
  // lane slot is its ragdoll's only one is asked of the records before it (a copy of the
  // reader walks them; the checking pass only, so the writing pass stays linear).
  const SnapshotReader first_record = r;
  const auto lane_slot_taken = [&first_record](uint32_t before, uint32_t ragdoll, int32_t lane_slot) {
    SnapshotReader earlier = first_record;
    for (uint32_t k = 0; k < before && !earlier.failed(); ++k) {
      earlier.U32("part_drives.index");
      const uint32_t other_ragdoll = earlier.U32("part_drives.ragdoll");
      const int32_t other_slot = earlier.I32("part_drives.lane_slot");
      // part, local_body, target, break_distance, distance, broken.
      for (int b = 0; b < 4 + 12 + 12 + 4 + 4 + 1; ++b) earlier.U8("part_drives");
      if (other_ragdoll == ragdoll && other_slot == lane_slot) return true;
    }
    return false;
  };
  for (uint32_t k = 0; k < count && !r.failed(); ++k) {
    const uint32_t i = r.U32("part_drives.index");
    const uint32_t ragdoll = r.U32("part_drives.ragdoll");
    const int32_t lane_slot = r.I32("part_drives.lane_slot");
    const int32_t part = r.I32("part_drives.part");
    const Vec3 local_body = r.V3("part_drives.local_body");
    const Vec3 target_point = r.V3("part_drives.target");
    const float break_distance = r.F32("part_drives.break_distance");
    const float distance = r.F32("part_drives.distance");
    const bool broken = r.Bool("part_drives.broken");
    if (r.failed()) break;
    // The saved record's state into a drive of this World (its ragdoll and part are checked
    // to be the same; the handle stays the one it has).
    const auto write_record = [&](DriveRecord& d) {
      d.lane_slot = lane_slot;
      d.local_body = local_body;
      d.target = target_point;
      d.break_distance = break_distance;
      d.distance = distance;
      d.broken = broken;
    };
    // A broken drive holds no lane and a pulling one does; a break distance of 0 or less
    // would divide by zero in UpdateDrives: all are a corrupted buffer's.
    if (!(break_distance > 0.0f) || broken != (lane_slot < 0) || !std::isfinite(distance) || distance < 0.0f) {
      r.Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(k), "part_drives.break_distance",
             "saved part drive " + std::to_string(k) +
                 ": its break distance is not positive, its distance is not finite, or its broken flag disagrees "
                 "with its lane slot: corrupted");
      break;
    }
    if (only >= 0) {
      // Into one instance (maybe another than the saved one): the saved drives are matched to
      // this ragdoll's live drives in slot order, and nothing else is touched; the record's
      // own slot and ragdoll name the saving instance's, which may be another live ragdoll here.
      const uint32_t target = nth_drive_of(static_cast<uint32_t>(only), k);
      const int32_t parts = store_.slots[static_cast<uint32_t>(only)].part_count;
      if (target == kNoDrive || lane_slot < -1 || lane_slot >= kMaxPartDriveSlots || part < 0 || part >= parts ||
          drives_[target].part != part) {
        r.Fail(ErrorCode::kBadReference, static_cast<int32_t>(k), "part_drives.part",
               "saved part drive " + std::to_string(k) + " (on part " + std::to_string(part) +
                   ") does not correspond to this ragdoll's part drive in the same order");
        break;
      }
      if (lane_slot >= 0 && (used_lane_slots & (1u << lane_slot)) != 0) {
        r.Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(k), "part_drives.lane_slot",
               "saved part drive " + std::to_string(k) + " shares its lane slot with another: corrupted");
        break;
      }
      if (lane_slot >= 0) used_lane_slots |= 1u << lane_slot;
      if (r.apply()) write_record(drives_[target]);
      continue;
    }
    if (!drive_handles_.IsLiveAt(i) || drives_[i].ragdoll.index != ragdoll) {
      r.Fail(ErrorCode::kBadReference, static_cast<int32_t>(i), "part_drives.index",
             "part drive " + std::to_string(i) + " (on ragdoll slot " + std::to_string(ragdoll) +
                 ") is live in the saved state and not on that ragdoll in this World");
      break;
    }
    const int32_t parts = store_.slots[ragdoll].part_count;
    if (lane_slot < -1 || lane_slot >= kMaxPartDriveSlots || part < 0 || part >= parts) {
      r.Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "part_drives.part",
             "part drive " + std::to_string(i) + ": its part or lane slot is out of range");
      break;
    }
    // A drive's part is fixed when it is added (AddPartDrive refuses a kinematic root), so a
    // World built the same way drives the same part: another part here is another drive.
    if (drives_[i].part != part) {
      r.Fail(ErrorCode::kBadReference, static_cast<int32_t>(i), "part_drives.part",
             "part drive " + std::to_string(i) + " drives part " + std::to_string(part) +
                 " in the saved state and part " + std::to_string(drives_[i].part) + " in this World");
      break;
    }
    if (!r.apply() && lane_slot >= 0 && lane_slot_taken(k, ragdoll, lane_slot)) {
      r.Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "part_drives.lane_slot",
             "part drive " + std::to_string(i) + " shares its lane slot with another drive of ragdoll slot " +
                 std::to_string(ragdoll) + ": corrupted");
      break;
    }
    if (r.apply()) write_record(drives_[i]);
  }
  r.End(end, "part_drives");
}

void RagdollSystem::SaveState(SnapshotWriter& w) const {
  const std::size_t at = w.Begin(kSystemTag);
  w.U32(store_.handles.SlotCount());
  w.U32(store_.handles.LiveCount());
  w.I32(frame_substeps_);
  w.I32(last_fixed_steps_);
  for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i) {
    if (store_.handles.IsLiveAt(i)) SaveSlot(i, w);
  }
  SaveDrives(-1, w);
  const std::size_t pairs = w.Begin(kPairsTag);
  w.U32(static_cast<uint32_t>(touching_pairs_.size()));
  for (const TouchingPair& t : touching_pairs_) {
    w.U64(t.key);
    w.U32(t.generation_low);
    w.U32(t.generation_high);
    w.Bool(t.reported);
    w.F32(t.speed);
    w.F32(t.impulse);
    w.V3(t.point);
    w.V3(t.normal);
  }
  w.U32(static_cast<uint32_t>(overlapping_.size()));
  for (const uint64_t key : overlapping_) w.U64(key);
  w.End(pairs);
  w.End(at);
}

void RagdollSystem::RestoreState(SnapshotReader& r, RootProvider root_for, const void* root_context) {
  const std::size_t end = r.Begin(kSystemTag, "ragdolls");
  r.Expect(r.U32("ragdolls.slot_count"), store_.handles.SlotCount(), -1, "ragdolls.slot_count");
  r.Expect(r.U32("ragdolls.live_count"), store_.handles.LiveCount(), -1, "ragdolls.live_count");
  const int32_t frame_substeps = r.I32("ragdolls.frame_substeps");
  const int32_t last_fixed_steps = r.I32("ragdolls.last_fixed_steps");
  if (!r.failed() && (frame_substeps < 1 || frame_substeps > settings_.ragdoll_substeps || last_fixed_steps < 0))
    r.Fail(ErrorCode::kOutOfRange, -1, "ragdolls.frame_substeps", "ragdolls.frame_substeps is out of range");
  if (r.failed()) return;
  if (r.apply()) {
    frame_substeps_ = frame_substeps;
    last_fixed_steps_ = last_fixed_steps;
  }
  const SnapshotReader slot_records = r;
  for (uint32_t i = 0; i < store_.handles.SlotCount() && !r.failed(); ++i) {
    if (store_.handles.IsLiveAt(i)) RestoreSlot(i, r, root_for, root_context);
  }
  if (!r.apply() && !r.failed()) {
    // A drive on a ragdoll its saved record disables: the writing pass would remove that
    // ragdoll's drives (RestoreSlot) and then miss them (RestoreDrives). Refused here. A
    // copy walks the section: what it cannot read, RestoreDrives refuses by field.
    SnapshotReader drives = r;
    drives.Begin(kDrivesTag, "part_drives");
    const uint32_t count = drives.U32("part_drives.count");
    for (uint32_t k = 0; k < count && !drives.failed() && !r.failed(); ++k) {
      drives.U32("part_drives.index");
      const uint32_t ragdoll = drives.U32("part_drives.ragdoll");
      // lane_slot, part, local_body, target, break_distance, distance, broken.
      for (int b = 0; b < 4 + 4 + 12 + 12 + 4 + 4 + 1; ++b) drives.U8("part_drives");
      if (drives.failed()) break;
      SnapshotReader slots = slot_records;
      for (uint32_t i = 0; i < store_.handles.SlotCount() && !slots.failed(); ++i) {
        if (!store_.handles.IsLiveAt(i)) continue;
        if (i == ragdoll) {
          if (!SlotRecordEnabled(slots))
            r.Fail(ErrorCode::kBadReference, static_cast<int32_t>(k), "part_drives.ragdoll",
                   "ragdoll slot " + std::to_string(i) + kDisabledDriveWhy);
          break;
        }
        slots.Skip(slots.Begin(kSlotTag, "ragdoll"));
      }
    }
  }
  RestoreDrives(-1, r);
  // A key's side must be a live ragdoll's part (events read that part's pose), and an
  // overlap's trigger side a live trigger (ragdoll_events.cpp packs a side as slot << 6 | part).
  const auto side_live = [this](uint64_t side) {
    const auto slot = static_cast<uint32_t>(side >> 6);
    return slot < store_.handles.SlotCount() && store_.handles.IsLiveAt(slot) &&
           static_cast<int32_t>(side & 63u) < store_.slots[slot].part_count;
  };
  const auto trigger_live = [this](uint64_t trigger) {
    if (trigger >= store_.handles.SlotCount()) return false;
    const auto slot = static_cast<uint32_t>(trigger);  // below SlotCount: fits (wasm32's size_t too)
    return store_.handles.IsLiveAt(slot) && store_.groups[store_.slots[slot].group].trigger;
  };
  const std::size_t pairs_end = r.Begin(kPairsTag, "contact_memory");
  const uint32_t touching = r.U32("contact_memory.touching_pairs");
  if (!r.failed() && touching > touching_pairs_.capacity())
    r.Fail(ErrorCode::kCapacity, -1, "contact_memory.touching_pairs",
           "more touching pairs than this World holds: saved from another World");
  if (r.apply()) touching_pairs_.clear();
  uint64_t previous_key = 0;
  for (uint32_t k = 0; k < touching && !r.failed(); ++k) {
    TouchingPair t;
    t.key = r.U64("contact_memory.key");
    t.generation_low = r.U32("contact_memory.generation");
    t.generation_high = r.U32("contact_memory.generation");
    t.reported = r.Bool("contact_memory.reported");
    t.speed = r.F32("contact_memory.speed", true);
    t.impulse = r.F32("contact_memory.impulse", true);
    t.point = r.V3("contact_memory.point");
    t.normal = r.V3("contact_memory.normal");
    const uint64_t low = t.key >> 26, high = t.key & ((uint64_t{1} << 26) - 1);
    if (!r.failed() && (t.key >> 52 != 0 || !side_live(low) || !side_live(high) || (k > 0 && t.key <= previous_key))) {
      r.Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(k), "contact_memory.key",
             "a touching pair names a ragdoll slot or part this World does not have, or is out of order: corrupted");
    }
    previous_key = t.key;
    if (r.apply() && !r.failed()) touching_pairs_.push_back(t);
  }
  const uint32_t overlapping = r.U32("contact_memory.trigger_overlaps");
  if (!r.failed() && overlapping > overlapping_.capacity())
    r.Fail(ErrorCode::kCapacity, -1, "contact_memory.trigger_overlaps",
           "more trigger overlaps than this World holds: saved from another World");
  if (r.apply()) overlapping_.clear();
  for (uint32_t k = 0; k < overlapping && !r.failed(); ++k) {
    const uint64_t key = r.U64("contact_memory.trigger_overlap");
    if (!r.failed() && (!trigger_live(key >> 26) || !side_live(key & ((uint64_t{1} << 26) - 1)) ||
                        (k > 0 && key <= previous_key))) {
      r.Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(k), "contact_memory.trigger_overlap",
             "a trigger overlap names a trigger, ragdoll slot or part this World does not have, or is out of order: "
             "corrupted");
    }
    previous_key = key;
    if (r.apply() && !r.failed()) overlapping_.push_back(key);
  }
  r.End(pairs_end, "contact_memory");
  r.End(end, "ragdolls");
}

void RagdollSystem::SaveInstance(RagdollId id, SnapshotWriter& w) const {
  SaveSlot(id.index, w);
  SaveDrives(id.index, w);
}

void RagdollSystem::RestoreInstance(RagdollId id, SnapshotReader& r, RootProvider root_for,
                                    const void* root_context) {
  if (!r.apply() && !r.failed()) {
    // Saved disabled with drives (a tampered record): the writing pass would remove this
    // ragdoll's drives and then miss them. Refused on the checking pass.
    SnapshotReader drives = r;
    const bool enabled = SlotRecordEnabled(drives);
    drives.Skip(drives.Begin(kSlotTag, "ragdoll"));
    drives.Begin(kDrivesTag, "part_drives");
    const uint32_t count = drives.U32("part_drives.count");
    if (!drives.failed() && !enabled && count > 0)
      r.Fail(ErrorCode::kBadReference, 0, "part_drives.ragdoll", "ragdoll slot " + std::to_string(id.index) + kDisabledDriveWhy);
  }
  RestoreSlot(id.index, r, root_for, root_context, false);
  RestoreDrives(id.index, r);
}

}  // namespace tendon::detail
