// kernel/rigid/ragdoll_store.h: where ragdoll instances live: groups of lanes by archetype,
// the per-instance slots and their handles, and reading and writing one body of a lane.
//
// What it does: a RagdollGroup is every instance of one archetype (with or without a
// kinematic root) side by side in blocks of `block_lanes` lanes (rigid_block.h: the World's width), with the
// archetype's per-part constants for the kernels and what contacts between ragdolls need
// (sample spheres, shapes, self-collision pairs, collision filter). A RagdollSlot is one
// bound instance's payload, by RagdollId::index: where its lane is, the host's buffers,
// and its sleep bookkeeping; the store's HandleTable says which slots are bound.
// Lanes [0, lanes_enabled) of a group hold enabled instances, [lanes_enabled, lanes_used)
// disabled ones, the rest is padding.
// What it does NOT do: decide anything. The ragdoll system binds, moves and steps lanes;
// sleep, the broad phase and the pair contacts read and write them through these types.
// Threading: none of its own; whoever holds a lane's block in a task may touch that lane.
// Memory: blocks grow at bind time only (RagdollSystem); these helpers never allocate.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernel/core/handle_table.h"
#include "kernel/core/pose_streams.h"
#include "kernel/rigid/rigid_block.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::detail {

// All instances of one ragdoll archetype (with or without a kinematic root) share blocks.
struct RagdollGroup {
  int32_t archetype = -1;
  bool kinematic_root = false;
  // Every part kinematic and moved by the system along its velocity rows (host bodies,
  // characters' twins); the rigid kernels never run these groups (AdvanceKinematic does).
  bool kinematic_bodies = false;
  bool trigger = false;  // kinematic_bodies only: overlaps are reported, nothing is pushed
  int32_t part_count = 0;
  std::vector<RigidPartConstants> constants;
  std::vector<Transform> body_in_part;  // per part, to turn bodies into part frames
  std::vector<Quat> neutral_motor;      // per part: q_parent_body^-1 q_child_body, build pose
  // Contacts between ragdolls: each part's sample spheres (body frame: x, y, z, radius),
  // its shape and the shape's frame in the body, and the self-collision exceptions.
  std::vector<std::vector<std::array<float, 4>>> pair_points;
  std::vector<PartShapeSettings> shapes;
  std::vector<Transform> shape_in_body;
  std::vector<std::pair<int32_t, int32_t>> self_pairs;
  uint32_t collision_group = 1, collision_mask = 0xffffffffu;
  std::vector<AlignedFloats> blocks;    // grown at bind time only
  std::vector<int32_t> lane_owner;
  // Lanes [0, lanes_enabled) hold enabled instances (stepped); [lanes_enabled, lanes_used)
  // disabled ones (kActive 0: the kernel leaves them alone, no work item reaches them
  // unless they share a block with enabled lanes); the rest is padding.
  int32_t lanes_enabled = 0;
  int32_t lanes_used = 0;
  // Lanes promised to instances that may move here later (characters toggling their
  // anchor): blocks always cover max(lanes_used, reserved) so a move never allocates.
  int32_t reserved = 0;
  std::size_t floats_per_block = 0;
  // Lanes per block, the World's (RigidKernels::block_lanes): a power of two, 8 or 16.
  int32_t block_lanes = kBlockLanes;

  RigidBlockView View(int32_t block) {
    return RigidBlockView{part_count, blocks[block].data(), block_lanes};
  }
  // The block of a group lane, and the lane's place in it.
  // (Shifts and masks: the width is a power of two the compiler does not know.)
  int32_t BlockOf(int32_t lane) const { return lane >> std::countr_zero(static_cast<uint32_t>(block_lanes)); }
  RigidBlockView ViewOfLane(int32_t lane) { return View(BlockOf(lane)); }
  int32_t LaneInBlock(int32_t lane) const { return lane & (block_lanes - 1); }
  // One float of a group lane: a per-lane field, or a per-part one.
  float& LaneField(int32_t lane, int32_t field) { return ViewOfLane(lane).Lane(field)[LaneInBlock(lane)]; }
  float& PartField(int32_t lane, int32_t field, int32_t part) {
    return ViewOfLane(lane).Part(field, part)[LaneInBlock(lane)];
  }
  int32_t Rows() const { return static_cast<int32_t>(floats_per_block / static_cast<std::size_t>(block_lanes)); }
  void CopyLane(int32_t from, int32_t to) {
    const float* src = blocks[BlockOf(from)].data();
    float* dst = blocks[BlockOf(to)].data();
    const int32_t ls = LaneInBlock(from), ld = LaneInBlock(to);
    for (int32_t r = 0; r < Rows(); ++r) dst[r * block_lanes + ld] = src[r * block_lanes + ls];
  }
  // Copies a lane of another group of the same archetype (the same rows) into `to`.
  void CopyLaneFrom(const RagdollGroup& other, int32_t from, int32_t to) {
    const float* src = other.blocks[other.BlockOf(from)].data();
    float* dst = blocks[BlockOf(to)].data();
    const int32_t ls = other.LaneInBlock(from), ld = LaneInBlock(to);
    for (int32_t r = 0; r < Rows(); ++r) dst[r * block_lanes + ld] = src[r * other.block_lanes + ls];
  }
  void SwapLanes(int32_t a, int32_t b) {
    if (a == b) return;
    float* pa = blocks[BlockOf(a)].data();
    float* pb = blocks[BlockOf(b)].data();
    const int32_t la = LaneInBlock(a), lb = LaneInBlock(b);
    for (int32_t r = 0; r < Rows(); ++r) std::swap(pa[r * block_lanes + la], pb[r * block_lanes + lb]);
    std::swap(lane_owner[a], lane_owner[b]);
  }
  void SetActiveFlag(int32_t lane, bool active) {
    LaneField(lane, kActive) = active ? 1.0f : 0.0f;
  }
  // Puts the parts of `lane` at body poses `bodies` with velocities v, w (kinematic parts
  // stay still) and forgets their contacts. The host's controls (motor targets and
  // strength, planar mode) and the lane's flags are left as they are.
  void PlaceBodies(int32_t lane, const Transform* bodies, Vec3 v, Vec3 w) {
    const RigidBlockView view = ViewOfLane(lane);
    const int32_t l = LaneInBlock(lane);
    for (int32_t j = 0; j < part_count; ++j) {
      const bool moving = constants[j].inv_mass > 0.0f;
      const float values[kRbQPw + 1] = {
          bodies[j].translation.x, bodies[j].translation.y, bodies[j].translation.z,
          bodies[j].rotation.x,    bodies[j].rotation.y,    bodies[j].rotation.z,
          bodies[j].rotation.w,    moving ? v.x : 0.0f,     moving ? v.y : 0.0f,
          moving ? v.z : 0.0f,     moving ? w.x : 0.0f,     moving ? w.y : 0.0f,
          moving ? w.z : 0.0f,     bodies[j].translation.x, bodies[j].translation.y,
          bodies[j].translation.z, bodies[j].rotation.x,    bodies[j].rotation.y,
          bodies[j].rotation.z,    bodies[j].rotation.w};
      for (int32_t f = 0; f <= kRbQPw; ++f) view.Part(f, j)[l] = values[f];
      for (int32_t k = 0; k < kMaxContactPoints; ++k)
        for (int32_t f = 0; f < kContactFieldCount; ++f) view.Contact(f, j, k)[l] = 0.0f;
      view.Part(kRbPairDeferLast, j)[l] = 0.0f;
      view.Part(kRbContactState, j)[l] = 0.0f;  // contact events: touching nothing yet
      for (int32_t f = 0; f < 7; ++f) view.Part(kRbFrameStartX + f, j)[l] = values[kRbXx + f];  // shown from here
    }
    MarkPlaced(lane);
  }
  // Whatever penetration the parts of `lane` start their next frame in, against the static
  // world or another ragdoll, is pushed out at the bounded speed (kPlacedPenetration): for
  // a placement, and for a ragdoll switched back on, which others may have come to rest in
  // while it collided with nothing.
  void MarkPlaced(int32_t lane) {
    const RigidBlockView view = ViewOfLane(lane);
    const int32_t l = LaneInBlock(lane);
    for (int32_t j = 0; j < part_count; ++j) {
      for (int32_t k = 0; k < kMaxContactPoints; ++k) view.Contact(kDeferred, j, k)[l] = kPlacedPenetration;
      view.Part(kRbPairDeferNow, j)[l] = kPlacedPenetration;
    }
  }
  // A fresh lane: the bodies placed, motors at their neutral targets and off, 3D, awake.
  void SetLane(int32_t lane, const Transform* bodies, Vec3 v, Vec3 w, bool active) {
    PlaceBodies(lane, bodies, v, w);
    const RigidBlockView view = ViewOfLane(lane);
    const int32_t l = LaneInBlock(lane);
    for (int32_t j = 0; j < part_count; ++j) {
      const Quat m = neutral_motor[j];
      const float motor[7] = {m.x, m.y, m.z, m.w, 0, 0, 0};
      for (int32_t f = 0; f < 7; ++f) view.Part(kMotorQx + f, j)[l] = motor[f];
      const Quat r = bodies[j].rotation;
      const float planar[5] = {r.x, r.y, r.z, r.w, 0};
      for (int32_t f = 0; f < 5; ++f) view.Part(kPlanarQx + f, j)[l] = planar[f];
    }
    view.Lane(kActive)[l] = active ? 1.0f : 0.0f;
    view.Lane(kAsleep)[l] = 0.0f;
    view.Lane(kMotorStrength)[l] = 0.0f;
    view.Lane(kSettleDamping)[l] = 0.0f;
    for (int32_t f : {kPlanarNx, kPlanarNy, kPlanarNz}) view.Lane(f)[l] = 0.0f;
    // No drive, acceleration or part force (a reused lane keeps none of its last owner's).
    for (int32_t f = kControlsOn; f < kRigidLaneFieldCount; ++f) view.Lane(f)[l] = 0.0f;
  }
  // Planar mode for a lane: the normal, and each body's offset along it.
  void SetPlanar(int32_t lane, Vec3 n) {
    const RigidBlockView view = ViewOfLane(lane);
    const int32_t l = LaneInBlock(lane);
    view.Lane(kPlanarNx)[l] = n.x;
    view.Lane(kPlanarNy)[l] = n.y;
    view.Lane(kPlanarNz)[l] = n.z;
    for (int32_t j = 0; j < part_count; ++j) {
      const Vec3 x{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
      view.Part(kPlanarD, j)[l] = Dot(x, n);
    }
  }
};

// One bound instance's payload, by RagdollId::index (whether the slot is bound, and its
// generation, are the store's HandleTable's).
struct RagdollSlot {
  int32_t group = -1;
  int32_t lane = -1;
  Transform* output = nullptr;
  const Transform* kinematic_root = nullptr;
  int32_t part_count = 0;
  float still_seconds = 0;  // how long every part has stayed near sleep_x/q (0: not yet measuring)
  float slow_seconds = 0;   // how long every point has been slower than the sleep speed
  float calm_seconds = 0;   // how long every part's frame speed has been below 4 x sleep speed
  std::vector<Vec3> frame_x;  // per part, the body pose at the end of the last frame
  std::vector<Quat> frame_q;
  std::vector<float> frame_speed;  // per part, its speed over the last frame (see UpdateFrameSpeeds)
  std::vector<Vec3> sleep_x;  // per part, where the current sleep window began (sized at bind)
  std::vector<Quat> sleep_q;
  float age_seconds = 0;    // simulated time since bind
  bool asleep = false;
  bool frozen = false;
  // false: not stepped, no contacts, no sleep; the output is the host's. Never true for a
  // free slot (Unbind clears it), so the per-frame passes over every slot that want the
  // enabled ones (broad phase, sleep counts) test this one flag, without the handle table.
  bool enabled = false;
  bool can_sleep = true;  // false: never falls asleep (a powered character)
  bool freeze_when_asleep = false;
  float freeze_after_seconds = INFINITY;
  RagdollCollideMode collide_mode = RagdollCollideMode::kAll;
  std::vector<detail::BoundPoseStream> streams;  // the host's pose streams, written with output
  // Instances the World made for itself (a host body, a character's kinematic twin): not
  // the host's ragdolls, so not counted in FrameStats' ragdolls, hit by RaycastRagdolls or
  // unbound by UnbindAll. owner: a host body's own index and generation; a character's
  // copy's, the character's ragdoll's (contact events name that ragdoll for it).
  int32_t internal = 0;  // RagdollSlotKind
  uint32_t owner_index = 0, owner_generation = 0;
  // Kinematic bodies moving to targets (RagdollSystem::SetKinematicTargets): each body's
  // frame at the end of the next frame that steps; the velocity to reach it is derived
  // then. Sized at bind for kinematic-body groups.
  std::vector<Transform> kinematic_targets;
  bool has_targets = false;
};

enum RagdollSlotKind : int32_t { kHostRagdoll = 0, kHostBodySlot = 1, kCharacterTwinSlot = 2 };

// Every instance of the world, by slot, and the groups their lanes are in. `handles` says
// which slots are bound (IsLiveAt) and hands out their ids; `slots` holds the payload by
// RagdollId::index, grown to handles.SlotCount() at bind (a free slot's payload is stale).
struct RagdollStore {
  std::vector<RagdollGroup> groups;
  HandleTable<RagdollId> handles;
  std::vector<RagdollSlot> slots;
};

// A body of a lane: the kernel's state of part j, for scalar code (finding contacts, sleep).
struct BodyState {
  Vec3 x, v, w;
  Quat q;
  Vec3 xp;  // at the substep's start (read only)
  Quat qp;
};
// A part's world frame from its body's (centre of mass, principal axes): what the output
// shows, the capture sends and a bind checks, composed one way so that they agree bit for bit.
inline Transform PartFrameOfBody(const Transform& body, const Transform& body_in_part) {
  return Compose(body, Relative(body_in_part, Transform{}));
}
// Position and orientation only (what a pair's contacts need to be re-measured).
inline void ReadPose(const RigidBlockView& view, int32_t l, int32_t j, Vec3* x, Quat* q) {
  *x = Vec3{view.Part(kRbXx, j)[l], view.Part(kRbXy, j)[l], view.Part(kRbXz, j)[l]};
  *q = Quat{view.Part(kRbQx, j)[l], view.Part(kRbQy, j)[l], view.Part(kRbQz, j)[l],
            view.Part(kRbQw, j)[l]};
}
// The pose and velocities, without the substep's start (xp and qp are left as they are):
// each field is a cache line of its own, so the once-a-frame passes read only these.
inline void ReadMotion(const RigidBlockView& view, int32_t l, int32_t j, BodyState* b) {
  ReadPose(view, l, j, &b->x, &b->q);
  b->v = Vec3{view.Part(kRbVx, j)[l], view.Part(kRbVy, j)[l], view.Part(kRbVz, j)[l]};
  b->w = Vec3{view.Part(kRbWx, j)[l], view.Part(kRbWy, j)[l], view.Part(kRbWz, j)[l]};
}
inline BodyState ReadBody(const RigidBlockView& view, int32_t l, int32_t j) {
  BodyState b;
  ReadMotion(view, l, j, &b);
  b.xp = Vec3{view.Part(kRbXPx, j)[l], view.Part(kRbXPy, j)[l], view.Part(kRbXPz, j)[l]};
  b.qp = Quat{view.Part(kRbQPx, j)[l], view.Part(kRbQPy, j)[l], view.Part(kRbQPz, j)[l],
              view.Part(kRbQPw, j)[l]};
  return b;
}


}  // namespace tendon::detail
