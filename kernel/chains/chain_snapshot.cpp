// kernel/chains/chain_snapshot.cpp: saving and restoring chains' state (tendon/snapshot.h).
//
// A chain's record: whether it holds lanes (awake), and if so every row of each strand's
// lane with the two position slots in a fixed order (which slot holds the current
// position is a property of the whole group, ChainSystem::Group::positions_swapped, and
// may differ between the saving and the restoring World); its last good animated input
// and root frames, the teleport guard's previous root, the budget's and the wake's flags,
// the bind pose a kVrm chain starts from, and the bones it last wrote to the host. A
// lane's place is not state: a restored chain takes whatever lane it holds or is given.
// What it does NOT do: save the budget's choice for frames to come (the camera is the
// World's section), or write on the checking pass.
// Threading: the World's thread, between frames. Memory: none (lanes are reserved for
// max_chains at bind); a refusal's message.
#include <string>

#include "kernel/chains/chain_storage.h"

namespace tendon::detail {

namespace {
constexpr uint32_t kSystemTag = SnapshotTag("CHNS");
constexpr uint32_t kSlotTag = SnapshotTag("CHN1");

// The row a fixed-order row is in now: the position slots (fields kPos0x..kPos1z of every
// node) change places when the group's are swapped.
int32_t PhysicalRow(int32_t row, int32_t node_count, bool swapped) {
  if (!swapped || row >= kHotNodeFieldCount * node_count) return row;
  const int32_t field = row % kHotNodeFieldCount;
  if (field >= kPos0x && field <= kPos1z) return row - field + (field + 3) % 6;
  return row;
}
// Rows strictly finite in a record: every node field (positions, animated pose, rest
// lengths, the cold per-node and kVrm rows) and the lane's own rows. Only the collider and
// host-box rows are left to F32's NaN check (a shape "far away" is the host's to place).
bool StrictRow(int32_t row, int32_t node_count, int32_t hot_rows) {
  return row < kHotNodeFieldCount * node_count + kLaneFieldCount || row >= hot_rows;
}
}  // namespace

uint64_t ChainSystem::ArchetypeFingerprint(int32_t archetype) const {
  const ChainArchetype& a = archetypes_[archetype].archetype;
  const Group& g = groups_[archetypes_[archetype].group];
  uint64_t h = 1469598103934665603ull;
  const int32_t head[5] = {a.lane_nodes, a.strands, g.Rows(), g.vrm ? 1 : 0, g.collider_count};
  h = FingerprintBytes(h, head, sizeof(head));
  h = FingerprintBytes(h, a.parent.data(), a.parent.size() * sizeof(int32_t));
  for (const std::vector<float>* v : {&a.rest_length, &a.damping, &a.stiffness, &a.gravity_scale, &a.wind_scale,
                                      &a.radius, &a.pinned}) {
    h = FingerprintBytes(h, v->data(), v->size() * sizeof(float));
  }
  return h;
}

void ChainSystem::SaveSlot(uint32_t index, SnapshotWriter& w) const {
  const Slot& s = chains_[index];
  const std::size_t at = w.Begin(kSlotTag);
  w.U32(index);
  w.U64(ArchetypeFingerprint(s.archetype));
  w.U32(static_cast<uint32_t>(s.lanes.size()));
  w.U32(static_cast<uint32_t>(s.last_good.size()));
  w.U32(static_cast<uint32_t>(s.last_good_root_frames.size()));
  w.U32(static_cast<uint32_t>(s.bind_positions.size()));
  w.I32(s.bone_count);
  w.Bool(s.Awake());
  w.Bool(s.wake_pending);
  w.Bool(s.start_at_bind);
  w.Bool(s.frame_good);
  w.Bool(s.frame_snap);
  w.Bool(s.frame_from_bind);
  w.U64(s.selected_frame);
  w.V3(s.prev_root_pos);
  w.Q(s.prev_root_rot);
  w.T(s.last_good_root_parent);
  for (const Transform& t : s.last_good) w.T(t);
  for (const Transform& t : s.last_good_root_frames) w.T(t);
  for (const Vec3& p : s.bind_positions) w.V3(p);
  for (int32_t k = 0; k < s.bone_count; ++k) w.T(s.output[k]);
  if (s.Awake()) {
    Group& g = const_cast<Group&>(groups_[s.group]);  // View is not const; nothing is written
    for (const int32_t lane : s.lanes) {
      const ChainBlockView v = g.View(lane / kBlockLanes);
      const int32_t l = lane % kBlockLanes;
      for (int32_t row = 0; row < g.Rows(); ++row) {
        w.F32(v.Row(PhysicalRow(row, g.node_count, g.positions_swapped))[l]);
      }
    }
  }
  w.End(at);
}

void ChainSystem::RestoreSlot(uint32_t index, SnapshotReader& r, bool same_slot) {
  const auto item = static_cast<int32_t>(index);
  const std::size_t end = r.Begin(kSlotTag, "chain");
  const uint32_t saved_slot = r.U32("chain.slot");
  if (same_slot) r.Expect(saved_slot, index, item, "chain.slot");
  if (r.failed()) return;
  Slot& s = chains_[index];
  if (r.U64("chain.archetype_fingerprint") != ArchetypeFingerprint(s.archetype) && !r.failed()) {
    r.Fail(ErrorCode::kBadReference, item, "chain.archetype_fingerprint",
           "chain slot " + std::to_string(index) +
               ": its archetype differs from the saved one's (nodes, strands or constants): saved from another "
               "archetype");
  }
  r.Expect(r.U32("chain.strands"), static_cast<uint32_t>(s.lanes.size()), item, "chain.strands");
  r.Expect(r.U32("chain.nodes"), static_cast<uint32_t>(s.last_good.size()), item, "chain.nodes");
  r.Expect(r.U32("chain.root_frames"), static_cast<uint32_t>(s.last_good_root_frames.size()), item,
           "chain.root_frames");
  r.Expect(r.U32("chain.bind_positions"), static_cast<uint32_t>(s.bind_positions.size()), item,
           "chain.bind_positions");
  r.Expect(static_cast<uint32_t>(r.I32("chain.bones")), static_cast<uint32_t>(s.bone_count), item, "chain.bones");
  const bool awake = r.Bool("chain.awake");
  const bool wake_pending = r.Bool("chain.wake_pending");
  const bool start_at_bind = r.Bool("chain.start_at_bind");
  const bool frame_good = r.Bool("chain.frame_good");
  const bool frame_snap = r.Bool("chain.frame_snap");
  const bool frame_from_bind = r.Bool("chain.frame_from_bind");
  const uint64_t selected_frame = r.U64("chain.selected_frame");
  const Vec3 prev_root_pos = r.V3("chain.prev_root_pos");
  const Quat prev_root_rot = r.Q("chain.prev_root_rot");
  const Transform root_parent = r.T("chain.last_good_root_parent");
  if (r.failed()) return;
  Group& g = groups_[s.group];
  if (r.apply()) {
    s.start_at_bind = start_at_bind;
    s.frame_good = frame_good;
    s.frame_snap = frame_snap;
    s.frame_from_bind = frame_from_bind;
    s.selected_frame = selected_frame;
    s.prev_root_pos = prev_root_pos;
    s.prev_root_rot = prev_root_rot;
    s.last_good_root_parent = root_parent;
  }
  for (std::size_t k = 0; k < s.last_good.size() && !r.failed(); ++k) {
    const Transform t = r.T("chain.last_good");
    if (r.apply()) s.last_good[k] = t;
  }
  for (std::size_t k = 0; k < s.last_good_root_frames.size() && !r.failed(); ++k) {
    const Transform t = r.T("chain.last_good_root_frames");
    if (r.apply()) s.last_good_root_frames[k] = t;
  }
  for (std::size_t k = 0; k < s.bind_positions.size() && !r.failed(); ++k) {
    const Vec3 p = r.V3("chain.bind_positions");
    if (r.apply()) s.bind_positions[k] = p;
  }
  for (int32_t k = 0; k < s.bone_count && !r.failed(); ++k) {
    const Transform t = r.T("chain.output");
    if (r.apply()) s.output[k] = t;
  }
  if (r.failed()) return;
  if (r.apply()) {
    // Lanes follow the saved state's awake flag (lanes are reserved for max_chains).
    if (awake && !s.Awake()) AcquireLane(item);
    if (!awake && s.Awake()) ReleaseLane(item);
    s.wake_pending = wake_pending;
    s.collider_writes_dirty = true;
    g.lists_stale = true;
  }
  // Lanes are reserved for max_chains awake chains: a saved state with more (another
  // World's, or corrupted) would take lanes that are not there.
  if (awake) ++restore_awake_;
  const int32_t awake_after = same_slot ? restore_awake_ : awake_chains_ - (s.Awake() ? 1 : 0) + (awake ? 1 : 0);
  if (!r.apply() && awake && awake_after > max_chains_) {
    r.Fail(ErrorCode::kCapacity, item, "chain.awake",
           "chain slot " + std::to_string(index) + " is awake in the saved state beyond this World's max_chains (" +
               std::to_string(max_chains_) + ")");
    return;
  }
  if (!awake) {
    r.End(end, "chain");
    return;
  }
  for (std::size_t strand = 0; strand < s.lanes.size() && !r.failed(); ++strand) {
    // On the checking pass an asleep chain has no lane yet: the values are only checked.
    const int32_t lane = s.lanes[strand];
    const ChainBlockView v = g.View(lane >= 0 ? lane / kBlockLanes : 0);
    const int32_t l = lane >= 0 ? lane % kBlockLanes : 0;
    for (int32_t row = 0; row < g.Rows() && !r.failed(); ++row) {
      const float value = r.F32("chain.lane", StrictRow(row, g.node_count, g.hot_rows));
      if (r.apply()) v.Row(PhysicalRow(row, g.node_count, g.positions_swapped))[l] = value;
    }
    if (r.apply()) g.lane_rare[lane] = 0;
  }
  if (r.apply()) s.rare_written = 0;  // the lanes' rare flags, as AcquireLane leaves them
  r.End(end, "chain");
}

void ChainSystem::SaveState(SnapshotWriter& w) const {
  const std::size_t at = w.Begin(kSystemTag);
  w.U32(handles_.SlotCount());
  w.U32(handles_.LiveCount());
  w.F32(last_cutoff2_);
  w.U32(static_cast<uint32_t>(fresh_vrm_chains_.size()));
  for (const ChainId id : fresh_vrm_chains_) {
    w.U32(id.index);
    w.U32(id.generation);
  }
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i)) SaveSlot(i, w);
  }
  w.End(at);
}

void ChainSystem::RestoreState(SnapshotReader& r) {
  const std::size_t end = r.Begin(kSystemTag, "chains");
  r.Expect(r.U32("chains.slot_count"), handles_.SlotCount(), -1, "chains.slot_count");
  r.Expect(r.U32("chains.live_count"), handles_.LiveCount(), -1, "chains.live_count");
  const float last_cutoff2 = r.F32("chains.last_cutoff2");
  const uint32_t fresh = r.U32("chains.fresh_vrm_chains");
  if (!r.failed() && fresh > fresh_vrm_chains_.capacity())
    r.Fail(ErrorCode::kCapacity, -1, "chains.fresh_vrm_chains",
           "more freshly bound kVrm chains than this World has room for: saved from another World");
  if (r.failed()) return;
  if (r.apply()) {
    last_cutoff2_ = last_cutoff2;
    fresh_vrm_chains_.clear();
  }
  for (uint32_t k = 0; k < fresh && !r.failed(); ++k) {
    const ChainId id{r.U32("chains.fresh_vrm_chains"), r.U32("chains.fresh_vrm_chains")};
    if (!r.failed() && !handles_.IsLive(id)) {
      r.Fail(ErrorCode::kBadReference, static_cast<int32_t>(id.index), "chains.fresh_vrm_chains",
             "a fresh kVrm chain of the saved state is not bound in this World");
    }
    if (r.apply() && !r.failed()) fresh_vrm_chains_.push_back(id);
  }
  restore_awake_ = 0;
  if (r.apply() && !r.failed()) {
    // Lanes are reserved for max_chains awake chains: the writing pass must put to sleep
    // every chain asleep in the saved state before it wakes any, or a chain awake in the
    // save would take a lane still held by a later chain awake now (past the slab). This
    // first walk reads only each record's head (the checking pass passed over the same bytes).
    SnapshotReader head = r;
    for (uint32_t i = 0; i < handles_.SlotCount() && !head.failed(); ++i) {
      if (!handles_.IsLiveAt(i)) continue;
      const std::size_t record_end = head.Begin(kSlotTag, "chain");
      head.U32("chain.slot");
      head.U64("chain.archetype_fingerprint");
      for (const char* field : {"chain.strands", "chain.nodes", "chain.root_frames", "chain.bind_positions"})
        head.U32(field);
      head.I32("chain.bones");
      const bool awake = head.Bool("chain.awake");
      if (!head.failed() && !awake && chains_[i].Awake()) ReleaseLane(static_cast<int32_t>(i));
      head.Skip(record_end);
    }
  }
  for (uint32_t i = 0; i < handles_.SlotCount() && !r.failed(); ++i) {
    if (handles_.IsLiveAt(i)) RestoreSlot(i, r);
  }
  if (r.apply() && !r.failed()) MarkLaneListsStale();
  r.End(end, "chains");
}

void ChainSystem::SaveInstance(ChainId id, SnapshotWriter& w) const { SaveSlot(id.index, w); }

void ChainSystem::RestoreInstance(ChainId id, SnapshotReader& r) {
  restore_awake_ = 0;  // counts only a whole restore's awake chains; reset so it never carries over
  RestoreSlot(id.index, r, false);
  if (r.apply() && !r.failed()) MarkLaneListsStale();
}

}  // namespace tendon::detail
