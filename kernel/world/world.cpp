// kernel/world/world.cpp: the World: archetypes, bindings, and the frame.
//
// A frame (Step) runs these phases, each timed and each a parallel-for over independent
// items handed to the host's task hooks:
//   gather     per bound chain (chunks): read the root's host pose, teleport guard, distance
//   budget     serial: eligibility (distance or host predicate), nearest max_chains win
//              (nth_element on (distance^2, slot), so ties break by slot, deterministically),
//              then lanes are released and acquired so that the awake chains of a topology
//              stay packed densely at the front of its blocks
//   pose       per block: the animated pose of each lane's chain, composed to world space,
//              becomes the frame's interpolation end (B) and rotation (R); lanes that woke
//              or teleported snap to it; non-finite input holds the last good pose
//   solve      per block: the SIMD kernel runs the frame's substeps
//   writeback  per block: the SIMD kernel computes local rotations; a scalar scatter writes
//              them into each chain's host buffer, resetting any lane that went non-finite
//   pendulums  per chunk of accessory pendulums: solve and write the swung offset
// Every item writes only its own block, chains or pendulums, and every count that crosses
// items is summed serially in item order: the result is the same for any worker count.
// Memory: everything a frame touches is sized at build or bind time; Step allocates nothing.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <new>
#include <unordered_map>
#include <vector>

#include "kernel/chains/chain_archetype.h"
#include "kernel/chains/chain_block.h"
#include "kernel/chains/chain_kernels.h"
#include "kernel/collide/part_distance.h"
#include "kernel/collide/static_mesh.h"
#include "kernel/core/validation.h"
#include "kernel/rigid/ragdoll_archetype.h"
#include "kernel/rigid/rigid_kernels.h"
#include "kernel/world/fixed_clock.h"
#include "kernel/core/fpu.h"
#include "kernel/world/wind.h"
#include "kernel/world/world_access.h"
#include "kernel/character/character_system.h"
#include "tendon/trace.h"
#include "tendon/world.h"

namespace tendon {

using detail::AlignedFloats;
using detail::ChainArchetype;
using detail::ChainBlockView;
using detail::kBlockLanes;
using detail::CheckPositive;
using detail::CheckRange;
using detail::Fail;
using detail::BoxDistance;
using detail::DistanceNormal;
using detail::PartShapeDistance;

namespace {

constexpr int32_t kGatherChunk = 512;
constexpr int32_t kPairsPerPart = 16;  // capacity of ragdoll-ragdoll part pairs per bound part
constexpr int32_t kPairColours = 64;
constexpr int32_t kColouredIsland = 512;  // pairs; bigger islands are coloured (see OrderPairs)
constexpr int32_t kContactsPerPair = 4;  // contacts of a pair, found once per frame
constexpr float kPairRemeasureDepth = 0.01f;  // m (see PairPositions)
constexpr float kPairRemeasureSlide = 0.02f;  // m
constexpr int32_t kPendulumChunk = 256;
constexpr float kPi = 3.14159265358979f;

struct ChainGroup {
  int32_t node_count = 0;
  int32_t collider_count = 0;
  std::vector<int32_t> parent;
  std::vector<int32_t> first_child;
  std::vector<uint8_t> collider_kind;
  int32_t hot_rows = 0;
  int32_t cold_rows = 0;
  std::vector<float> padding_column;   // one value per row: a pinned, valid rest pose
  std::vector<Transform> padding_locals;  // the rest pose the pose kernel gives padding lanes
  Transform padding_root_parent{};
  // Blocks' hot parts side by side in one slab, cold parts in another; capacity grows at
  // bind time only.
  AlignedFloats hot_slab;
  AlignedFloats cold_slab;
  int32_t capacity_blocks = 0;
  std::vector<int32_t> lane_owner;     // chain slot per lane, -1 for padding
  int32_t lanes_used = 0;              // awake lanes, packed at the front
  int32_t bound = 0;
  // Whether kPos1x rather than kPos0x holds the current position in every block (all of
  // a group's blocks are solved in the same frames, so they share it; see kPos0x).
  bool positions_swapped = false;

  int32_t Rows() const { return hot_rows + cold_rows; }
  ChainBlockView View(int32_t block) {
    ChainBlockView v;
    v.parent = parent.data();
    v.first_child = first_child.data();
    v.collider_kind = collider_kind.data();
    v.node_count = node_count;
    v.collider_count = collider_count;
    v.hot = hot_slab.data() + static_cast<std::size_t>(block) * hot_rows * kBlockLanes;
    v.cold = cold_slab.data() + static_cast<std::size_t>(block) * cold_rows * kBlockLanes;
    v.position = positions_swapped ? detail::kPos1x : detail::kPos0x;
    v.previous = positions_swapped ? detail::kPos0x : detail::kPos1x;
    return v;
  }
  void SetLaneToPadding(int32_t lane) {
    const ChainBlockView v = View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) v.Row(r)[l] = padding_column[r];
  }
  void CopyLane(int32_t from, int32_t to) {
    const ChainBlockView src = View(from / kBlockLanes);
    const ChainBlockView dst = View(to / kBlockLanes);
    const int32_t ls = from % kBlockLanes, ld = to % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) dst.Row(r)[ld] = src.Row(r)[ls];
  }
  // Grows both slabs to `blocks` blocks, keeping the lanes in use and padding the new ones.
  void Grow(int32_t blocks) {
    if (blocks <= capacity_blocks) return;
    const std::size_t hot_floats = static_cast<std::size_t>(hot_rows) * kBlockLanes;
    const std::size_t cold_floats = static_cast<std::size_t>(cold_rows) * kBlockLanes;
    AlignedFloats hot(hot_floats * blocks), cold(cold_floats * blocks);
    if (capacity_blocks > 0) {
      std::memcpy(hot.data(), hot_slab.data(), sizeof(float) * hot_floats * capacity_blocks);
      std::memcpy(cold.data(), cold_slab.data(), sizeof(float) * cold_floats * capacity_blocks);
    }
    hot_slab = std::move(hot);
    cold_slab = std::move(cold);
    const int32_t first_new_lane = capacity_blocks * kBlockLanes;
    capacity_blocks = blocks;
    lane_owner.resize(static_cast<std::size_t>(blocks) * kBlockLanes, -1);
    for (int32_t lane = first_new_lane; lane < blocks * kBlockLanes; ++lane) SetLaneToPadding(lane);
  }
};

struct ArchetypeSlot {
  ChainArchetype archetype;
  int32_t group = -1;
};

struct ChainSlot {
  uint32_t generation = 1;
  bool live = false;
  int32_t archetype = -1;
  int32_t group = -1;
  int32_t lane = -1;  // lane within the group while awake
  int32_t live_index = -1;
  const Transform* root_parent_world = nullptr;
  const Transform* animated = nullptr;
  Transform* output = nullptr;
  std::vector<int32_t> bone_map;  // empty: identity
  int32_t bone_count = 0;
  const Transform* collider_frames = nullptr;
  int32_t collider_frame_count = 0;
  std::vector<Transform> last_good;  // last finite animated locals, in archetype order
  Transform& Output(int32_t k) const { return output[bone_map.empty() ? k : bone_map[k]]; }
  const Transform& Animated(int32_t k) const { return animated[bone_map.empty() ? k : bone_map[k]]; }
  Transform last_good_root_parent{};
  // The root bone's world pose at the last pose phase (teleport guard).
  Vec3 prev_root_pos{};
  Quat prev_root_rot{};
  bool wake_pending = false;
  uint64_t selected_frame = 0;  // frame in which the budget last selected this chain
};

struct PendulumSlot {
  uint32_t generation = 1;
  bool live = false;
  int32_t live_index = -1;
  PendulumSettings settings{};
  const Transform* joint = nullptr;
  Transform* offset_out = nullptr;
  Transform rest_offset{};
  Vec3 lever_local{};  // hinge -> rest bob, in the joint's frame (before its scale)
  float lever_length = 0;
  float max_swing = 0;  // radians
  Transform last_good_joint{};
  bool awake = false;
  Vec3 bob{}, prev_bob{}, prev_hinge{}, prev_rest_bob{};
  Vec3 dir{};  // unit hinge -> bob after the last substep
  float swing = 0;
};

// All instances of one ragdoll archetype (with or without a kinematic root) share blocks.
struct RagdollGroup {
  int32_t archetype = -1;
  bool kinematic_root = false;
  int32_t part_count = 0;
  std::vector<detail::RigidPartConstants> constants;
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

  detail::RigidBlockView View(int32_t block) {
    return detail::RigidBlockView{part_count, blocks[block].data()};
  }
  int32_t Rows() const { return static_cast<int32_t>(floats_per_block / kBlockLanes); }
  void CopyLane(int32_t from, int32_t to) {
    const float* src = blocks[from / kBlockLanes].data();
    float* dst = blocks[to / kBlockLanes].data();
    const int32_t ls = from % kBlockLanes, ld = to % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) dst[r * kBlockLanes + ld] = src[r * kBlockLanes + ls];
  }
  // Copies a lane of another group of the same archetype (the same rows) into `to`.
  void CopyLaneFrom(const RagdollGroup& other, int32_t from, int32_t to) {
    const float* src = other.blocks[from / kBlockLanes].data();
    float* dst = blocks[to / kBlockLanes].data();
    const int32_t ls = from % kBlockLanes, ld = to % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) dst[r * kBlockLanes + ld] = src[r * kBlockLanes + ls];
  }
  void SwapLanes(int32_t a, int32_t b) {
    if (a == b) return;
    float* pa = blocks[a / kBlockLanes].data();
    float* pb = blocks[b / kBlockLanes].data();
    const int32_t la = a % kBlockLanes, lb = b % kBlockLanes;
    for (int32_t r = 0; r < Rows(); ++r) std::swap(pa[r * kBlockLanes + la], pb[r * kBlockLanes + lb]);
    std::swap(lane_owner[a], lane_owner[b]);
  }
  void SetActiveFlag(int32_t lane, bool active) {
    View(lane / kBlockLanes).Lane(detail::kActive)[lane % kBlockLanes] = active ? 1.0f : 0.0f;
  }
  // Puts the parts of `lane` at body poses `bodies` with velocities v, w (kinematic parts
  // stay still) and forgets their contacts. The host's controls (motor targets and
  // strength, planar mode) and the lane's flags are left as they are.
  void PlaceBodies(int32_t lane, const Transform* bodies, Vec3 v, Vec3 w) {
    const detail::RigidBlockView view = View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    for (int32_t j = 0; j < part_count; ++j) {
      const bool moving = constants[j].inv_mass > 0.0f;
      const float values[detail::kRbQPw + 1] = {
          bodies[j].translation.x, bodies[j].translation.y, bodies[j].translation.z,
          bodies[j].rotation.x,    bodies[j].rotation.y,    bodies[j].rotation.z,
          bodies[j].rotation.w,    moving ? v.x : 0.0f,     moving ? v.y : 0.0f,
          moving ? v.z : 0.0f,     moving ? w.x : 0.0f,     moving ? w.y : 0.0f,
          moving ? w.z : 0.0f,     bodies[j].translation.x, bodies[j].translation.y,
          bodies[j].translation.z, bodies[j].rotation.x,    bodies[j].rotation.y,
          bodies[j].rotation.z,    bodies[j].rotation.w};
      for (int32_t f = 0; f <= detail::kRbQPw; ++f) view.Part(f, j)[l] = values[f];
      for (int32_t k = 0; k < detail::kMaxContactPoints; ++k) {
        for (int32_t f = 0; f < detail::kContactFieldCount; ++f) view.Contact(f, j, k)[l] = 0.0f;
      }
    }
  }
  // A fresh lane: the bodies placed, motors at their neutral targets and off, 3D, awake.
  void SetLane(int32_t lane, const Transform* bodies, Vec3 v, Vec3 w, bool active) {
    PlaceBodies(lane, bodies, v, w);
    const detail::RigidBlockView view = View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    for (int32_t j = 0; j < part_count; ++j) {
      const Quat m = neutral_motor[j];
      const float motor[7] = {m.x, m.y, m.z, m.w, 0, 0, 0};
      for (int32_t f = 0; f < 7; ++f) view.Part(detail::kMotorQx + f, j)[l] = motor[f];
      const Quat r = bodies[j].rotation;
      const float planar[5] = {r.x, r.y, r.z, r.w, 0};
      for (int32_t f = 0; f < 5; ++f) view.Part(detail::kPlanarQx + f, j)[l] = planar[f];
    }
    view.Lane(detail::kActive)[l] = active ? 1.0f : 0.0f;
    view.Lane(detail::kAsleep)[l] = 0.0f;
    view.Lane(detail::kMotorStrength)[l] = 0.0f;
    view.Lane(detail::kSettleDamping)[l] = 0.0f;
    for (int32_t f : {detail::kPlanarNx, detail::kPlanarNy, detail::kPlanarNz}) view.Lane(f)[l] = 0.0f;
  }
  // Planar mode for a lane: the normal, and each body's offset along it.
  void SetPlanar(int32_t lane, Vec3 n) {
    const detail::RigidBlockView view = View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    view.Lane(detail::kPlanarNx)[l] = n.x;
    view.Lane(detail::kPlanarNy)[l] = n.y;
    view.Lane(detail::kPlanarNz)[l] = n.z;
    for (int32_t j = 0; j < part_count; ++j) {
      const Vec3 x{view.Part(detail::kRbXx, j)[l], view.Part(detail::kRbXy, j)[l], view.Part(detail::kRbXz, j)[l]};
      view.Part(detail::kPlanarD, j)[l] = Dot(x, n);
    }
  }
};

struct RagdollSlot {
  uint32_t generation = 1;
  bool live = false;
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
  bool enabled = true;  // false: not stepped, no contacts, no sleep; the output is the host's
  bool can_sleep = true;  // false: never falls asleep (a powered character)
  bool freeze_when_asleep = false;
  float freeze_after_seconds = INFINITY;
  RagdollCollideMode collide_mode = RagdollCollideMode::kAll;
};

struct WorkItem {
  int32_t group = 0;
  int32_t block = 0;
};

struct WorkCounters {
  int32_t bad_input = 0;
  int32_t reset = 0;
  int32_t teleport = 0;
};

// Stack space for a chain's world pose, left uninitialised (Transform is trivially
// destructible; entries are constructed as they are computed).
struct PoseScratch {
  alignas(Transform) unsigned char bytes[sizeof(Transform) * detail::kMaxChainNodes];
  Transform* world() { return reinterpret_cast<Transform*>(bytes); }
};

Vec3 Normalize3(Vec3 v) { return NormalizeOr(v, Vec3{0, 0, 1}); }

// q turned by the small rotation vector u, brought back to unit length by one Newton step
// of 1/sqrt about 1 (as the rigid kernels' Turn): no square root or division.
inline Quat TurnSmall(Quat q, Vec3 u) {
  const Quat d = Quat{u.x * 0.5f, u.y * 0.5f, u.z * 0.5f, 0} * q;
  const Quat t{q.x + d.x, q.y + d.y, q.z + d.z, q.w + d.w};
  const float k = 1.5f - 0.5f * (t.x * t.x + t.y * t.y + t.z * t.z + t.w * t.w);
  return Quat{t.x * k, t.y * k, t.z * k, t.w * k};
}

// A rotation as its matrix's columns (the body's axes in world): the pair passes rotate
// many vectors by the same body, and a matrix does it in 9 multiply-adds.
struct Rot3 {
  Vec3 x, y, z;
};
inline Rot3 RotationOf(Quat q) {
  const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return Rot3{{1 - 2 * (yy + zz), 2 * (xy + wz), 2 * (xz - wy)},
              {2 * (xy - wz), 1 - 2 * (xx + zz), 2 * (yz + wx)},
              {2 * (xz + wy), 2 * (yz - wx), 1 - 2 * (xx + yy)}};
}
inline Vec3 Apply(const Rot3& r, Vec3 v) { return r.x * v.x + r.y * v.y + r.z * v.z; }
inline Vec3 ApplyInverse(const Rot3& r, Vec3 v) { return Vec3{Dot(r.x, v), Dot(r.y, v), Dot(r.z, v)}; }

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
void TaskTrampoline(int32_t begin, int32_t end, uint32_t worker, void* context) {
  detail::DenormalGuard guard;
  (*static_cast<F*>(context))(begin, end, worker);
}

}  // namespace

namespace {
std::vector<detail::RigidPartConstants> RigidConstants(const detail::RagdollArchetype& a, bool kinematic_root);

// A part shape's sample spheres, in the shape's frame: a sphere's one; five along a
// (tapered) capsule's axis, radius interpolated, so that a limb lying across an edge or a
// ball touches it along its length, not only at its ends; a box's corners, and with
// `face_centres` its face centres too (two equal boxes meeting face to face would
// otherwise touch only where their corners are).
template <class F>
void ForEachShapeSample(const PartShapeSettings& sh, bool face_centres, F&& add) {
  switch (sh.type) {
    case PartShape::kSphere: add(Vec3{}, sh.radius); break;
    case PartShape::kCapsule:
    case PartShape::kTaperedCapsule: {
      const float r0 = sh.type == PartShape::kCapsule ? sh.radius : sh.bottom_radius;
      const float r1 = sh.type == PartShape::kCapsule ? sh.radius : sh.top_radius;
      for (int k = 0; k < 5; ++k) {
        const float f = static_cast<float>(k) / 4.0f;
        add(Vec3{0, -sh.half_height + 2.0f * sh.half_height * f, 0}, r0 + (r1 - r0) * f);
      }
      break;
    }
    case PartShape::kBox: {
      const Vec3 h = sh.half_extents;
      for (int k = 0; k < 8; ++k) add(Vec3{(k & 1) ? h.x : -h.x, (k & 2) ? h.y : -h.y, (k & 4) ? h.z : -h.z}, 0.0f);
      if (!face_centres) break;
      for (float sign : {-1.0f, 1.0f}) add(Vec3{sign * h.x, 0, 0}, 0.0f);
      for (float sign : {-1.0f, 1.0f}) add(Vec3{0, sign * h.y, 0}, 0.0f);
      for (float sign : {-1.0f, 1.0f}) add(Vec3{0, 0, sign * h.z}, 0.0f);
      break;
    }
  }
}
}  // namespace

struct World::Impl {
  WorldSettings settings;
  Isa isa = Isa::kScalar;
  const detail::ChainKernels* kernels = nullptr;
  detail::FixedClock clock;
  Vec3 camera{};
  WindSampler wind_sampler{};
  SimulatePredicate predicate{};
  TraceWriter* trace = nullptr;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  FrameStats stats{};
  Vec3 frame_wind{};

  std::vector<ArchetypeSlot> archetypes;
  std::vector<detail::RagdollArchetype> ragdoll_archetypes;
  const detail::RigidKernels* rigid_kernels = nullptr;
  std::vector<RagdollGroup> ragdoll_groups;
  std::unique_ptr<detail::CharacterSystem> characters;  // drives some of the ragdolls
  std::vector<RagdollSlot> ragdolls;
  std::vector<int32_t> free_ragdolls;
  std::unordered_map<const void*, int32_t> ragdoll_by_output;
  int32_t live_ragdolls = 0;
  std::vector<WorkItem> ragdoll_work;  // sized at bind time
  std::vector<int32_t> ragdoll_resets;  // per work item
  // Contacts between ragdolls (broad phase once per frame, solved after every substep in
  // coloured batches); sized at bind time, pairs past the capacity are dropped and counted.
  struct PairBody {
    int32_t group, lane, part, slot;
  };
  struct BroadEntry {
    Vec3 lo, hi;
    int32_t body;
  };
  struct PartPair {
    int32_t a, b, colour;
  };
  std::vector<PairBody> pair_bodies;
  std::vector<BroadEntry> broad;  // per body, in ragdoll order (broad[i].body == i)
  struct PairMotion {
    Vec3 x, v;   // centre of mass and velocity at the frame's start
    float extent, spin;  // bounding radius about the centre; |w| x extent
  };
  std::vector<PairMotion> pair_motion;  // per body, as broad
  struct RagdollBox {
    Vec3 lo, hi;
    int32_t first, count;  // its parts' bodies
    int32_t slot;
  };
  std::vector<RagdollBox> ragdoll_boxes;  // per enabled ragdoll, sized at bind time
  std::vector<int32_t> box_order;
  std::vector<int32_t> near_a, near_b;    // kMaxRagdollParts each
  std::vector<PartPair> part_pairs;
  std::vector<PartPair> ordered_pairs;  // by island, then the big islands' pairs by colour
  std::vector<int32_t> island_parent, island_size, island_fill;  // per ragdoll slot
  std::vector<int32_t> island_start;  // per small island, and one past the last
  int32_t island_count = 0;
  // A contact of a pair, found once per frame and re-measured every substep from points
  // fixed in the two bodies (Müller et al. 2020, section 3.5: collisions are detected once
  // per time step and their depth re-evaluated per substep), so the substeps never run the
  // shape distance.
  struct PairContact {
    Vec3 normal;        // from part b toward part a, in the frame of the body whose shape
                        // gave it (normal_on_a: a's, else b's), so it turns with that body
    Vec3 arm_a, arm_b;  // contact point relative to each centre, in each body's frame
    float lambda;       // normal positional impulse this substep (0: apart)
    float pre;          // relative normal speed before the position solve
    bool normal_on_a;   // the shape is a's, the sample sphere b's
    Vec3 sample;        // the sample sphere's centre in its body's frame, and its radius
    float radius;
    // Static friction holds the contact where it first touched this frame: `stick` is the
    // points' offset along the surface then, `lambda_sum` the normal impulse since.
    Vec3 stick;
    float lambda_sum;
  };
  std::vector<PairContact> pair_contacts;   // kContactsPerPair per pair slot
  std::vector<int32_t> pair_contact_count;  // per pair slot
  std::vector<uint8_t> pair_touching;       // per pair slot: 1 when a contact pushed this substep
  std::vector<uint64_t> body_colours;
  std::vector<int32_t> colour_start;
  int32_t pair_count = 0;
  int32_t total_parts = 0;
  int32_t plane_count = 0;
  float planes[detail::kMaxStaticPlanes][4] = {};
  std::vector<detail::StaticShape> static_shapes;
  detail::StaticMesh static_mesh;
  std::map<detail::ChainTopologyKey, int32_t> group_by_topology;
  std::vector<ChainGroup> groups;

  std::vector<ChainSlot> chains;
  std::vector<int32_t> free_chains;
  // Dense, by live index (swap-removed on unbind): what the per-bound-chain passes touch.
  std::vector<int32_t> live_chains;                 // slot
  std::vector<const Transform*> live_root_parent;   // host frame the roots hang from
  std::vector<float> live_distance2;                // this frame's squared camera distance
  float last_cutoff2 = -1.0f;  // the budget's farthest selected distance^2, last frame
  float gather_cutoff2 = 0.0f;
  std::vector<int32_t> chunk_eligible, chunk_kept;  // per gather chunk
  std::unordered_map<const void*, int32_t> chain_by_output;

  std::vector<PendulumSlot> pendulums;
  std::vector<int32_t> free_pendulums;
  std::vector<int32_t> live_pendulums;
  std::unordered_map<const void*, int32_t> pendulum_by_offset;

  // Frame scratch, sized at bind time.
  std::vector<std::pair<float, int32_t>> candidates;
  std::vector<WorkItem> work;
  std::vector<AlignedFloats> writeback_scratch;  // per worker (see detail::WrittenLocalRotation)
  int32_t work_count = 0;
  std::vector<WorkCounters> work_counters;
  std::vector<WorkCounters> pendulum_counters;
  std::vector<uint8_t> pendulum_awake_frame;  // per live index: 1 awake, 2 woke this frame

  float teleport_distance2 = 0;
  float teleport_cos_half_angle = 0;

  Impl(const WorldSettings& s) : settings(s), clock(s.fixed_hz, s.max_substeps) {
    colour_start.assign(kPairColours + 1, 0);
    teleport_distance2 = s.teleport_distance * s.teleport_distance;
    teleport_cos_half_angle =
        std::isinf(s.teleport_angle_degrees)
            ? -2.0f
            : std::cos(std::min(s.teleport_angle_degrees, 360.0f) * kPi / 180.0f * 0.5f);
  }

  template <class F>
  void ParallelFor(int32_t count, int32_t min_range, F& f) {
    if (count <= 0) return;
    const TaskHooks& hooks = settings.tasks;
    if (hooks.enqueue == nullptr) {
      f(0, count, 0u);
      return;
    }
    void* handle = hooks.enqueue(&TaskTrampoline<F>, count, min_range, &f, hooks.user_context);
    hooks.finish(handle, hooks.user_context);
  }

  // ---- capacity (bind time only) ----
  void ReserveGroup(ChainGroup& g) {
    const int32_t need = std::min(g.bound, settings.max_chains);
    const int32_t blocks_needed = (need + kBlockLanes - 1) / kBlockLanes;
    if (blocks_needed > g.capacity_blocks) {
      // Grow geometrically so that binding many chains one by one copies O(n) in all.
      g.Grow(std::max(blocks_needed, g.capacity_blocks + g.capacity_blocks / 2));
    }
    int32_t total = 0;
    for (const ChainGroup& other : groups) total += other.capacity_blocks;
    if (static_cast<int32_t>(work.size()) < total) {
      work.resize(total);
      work_counters.resize(total);
    }
  }

  int32_t NewGroup(const ChainArchetype& a) {
    // One writeback scratch per worker, as long as the longest chain needs.
    const std::size_t scratch_floats =
        static_cast<std::size_t>(a.node_count) * detail::kWritebackRowsPerNode * kBlockLanes;
    writeback_scratch.resize(std::max(1, settings.tasks.enqueue != nullptr ? settings.tasks.worker_count : 1));
    for (AlignedFloats& scratch : writeback_scratch) {
      if (scratch.size() < scratch_floats) scratch.Resize(scratch_floats);
    }
    ChainGroup g;
    g.node_count = a.node_count;
    g.collider_count = static_cast<int32_t>(a.topology.collider_kind.size());
    g.parent = a.topology.parent;
    g.first_child = a.first_child;
    g.collider_kind = a.topology.collider_kind;
    g.padding_locals = a.rest_local;
    g.hot_rows = detail::HotRows(g.node_count, g.collider_count);
    g.cold_rows = detail::ColdRows(g.node_count);
    // A padding lane: the first archetype's rest pose, pinned, with far-away colliders.
    // Built as a one-block image through the ordinary accessors, then read off by row.
    std::vector<float> image_hot(static_cast<std::size_t>(g.hot_rows) * kBlockLanes, 0.0f);
    std::vector<float> image_cold(static_cast<std::size_t>(g.cold_rows) * kBlockLanes, 0.0f);
    ChainBlockView v;
    v.node_count = g.node_count;
    v.collider_count = g.collider_count;
    v.hot = image_hot.data();
    v.cold = image_cold.data();
    std::vector<Transform> world(a.node_count);
    for (int32_t k = 0; k < a.node_count; ++k) {
      const int32_t p = a.topology.parent[k];
      world[k] = p < 0 ? a.rest_local[k] : Compose(world[p], a.rest_local[k]);
      const Vec3 t = world[k].translation;
      for (int32_t f : {detail::kPos0x, detail::kPos1x, detail::kAx, detail::kBx}) {
        v.Node(f, k)[0] = t.x;
        v.Node(f + 1, k)[0] = t.y;
        v.Node(f + 2, k)[0] = t.z;
      }
      const Quat r = world[k].rotation;
      v.Node(detail::kRx, k)[0] = r.x;
      v.Node(detail::kRy, k)[0] = r.y;
      v.Node(detail::kRz, k)[0] = r.z;
      v.Node(detail::kRw, k)[0] = r.w;
      v.Node(detail::kSx, k)[0] = world[k].scale.x;
      v.Node(detail::kSy, k)[0] = world[k].scale.y;
      v.Node(detail::kSz, k)[0] = world[k].scale.z;
      v.Node(detail::kRest, k)[0] = -a.rest_length[k];  // negative: pinned
    }
    v.Lane(detail::kRootParentRw)[0] = 1.0f;
    v.Lane(detail::kUniform)[0] = 1.0f;
    for (int32_t c = 0; c < g.collider_count; ++c) {
      const bool plane = g.collider_kind[c] == detail::kPlaneKind;
      v.Collider(detail::kCay, c)[0] = plane ? -1e6f : 1e6f;
      v.Collider(detail::kCby, c)[0] = plane ? 1.0f : 1e6f;
    }
    g.padding_column.resize(g.Rows());
    for (int32_t r = 0; r < g.Rows(); ++r) g.padding_column[r] = v.Row(r)[0];
    groups.push_back(std::move(g));
    return static_cast<int32_t>(groups.size()) - 1;
  }

  // ---- lanes (budget phase) ----
  void ReleaseLane(int32_t slot_index) {
    ChainSlot& slot = chains[slot_index];
    ChainGroup& g = groups[slot.group];
    const int32_t hole = slot.lane;
    const int32_t last = g.lanes_used - 1;
    if (hole != last) {
      g.CopyLane(last, hole);
      const int32_t moved = g.lane_owner[last];
      g.lane_owner[hole] = moved;
      chains[moved].lane = hole;
    }
    g.lane_owner[last] = -1;
    g.SetLaneToPadding(last);
    --g.lanes_used;
    slot.lane = -1;
  }

  void AcquireLane(int32_t slot_index) {
    ChainSlot& slot = chains[slot_index];
    ChainGroup& g = groups[slot.group];
    const int32_t lane = g.lanes_used++;
    g.lane_owner[lane] = slot_index;
    slot.lane = lane;
    slot.wake_pending = true;
    const ChainArchetype& a = archetypes[slot.archetype].archetype;
    const ChainBlockView v = g.View(lane / kBlockLanes);
    const int32_t l = lane % kBlockLanes;
    for (int32_t k = 0; k < a.node_count; ++k) {
      v.Node(detail::kRest, k)[l] = a.pinned[k] > 0.5f ? -a.rest_length[k] : a.rest_length[k];
      v.Node(detail::kDamping, k)[l] = a.damping[k];
      v.Node(detail::kStiffness, k)[l] = a.stiffness[k];
      v.Node(detail::kGravityScale, k)[l] = a.gravity_scale[k];
      v.Node(detail::kWindScale, k)[l] = a.wind_scale[k];
      if (v.collider_count > 0) v.Radius(k)[l] = a.radius[k];
    }
    v.Lane(detail::kLaneDamping)[l] = a.damping[0];
    v.Lane(detail::kLaneStiffness)[l] = a.stiffness[0];
    v.Lane(detail::kLaneGravityScale)[l] = a.gravity_scale[0];
    v.Lane(detail::kLaneWindScale)[l] = a.wind_scale[0];
    v.Lane(detail::kUniform)[l] = a.uniform_parameters ? 1.0f : 0.0f;
  }

  // ---- phases ----
  // The only pass over every bound chain: its squared camera distance, measured at the
  // origin of the frame its roots hang from (one host read per chain; many chains share a
  // frame), counted against max_distance, and, when the budget bound last frame, kept as a
  // candidate only if it is within last frame's cut-off plus a margin. Each chunk writes
  // its candidates to its own stretch of `candidates`; Budget compacts them in order.
  void Gather() {
    const auto live = static_cast<int32_t>(live_chains.size());
    const Vec3 cam = camera;
    const float max_d2 = std::isinf(settings.max_distance) ? INFINITY : settings.max_distance * settings.max_distance;
    const bool prefilter = predicate.should_simulate == nullptr && last_cutoff2 >= 0.0f && settings.max_chains < live;
    gather_cutoff2 = prefilter ? std::min(max_d2, last_cutoff2 * 1.21f) : max_d2;
    const float cutoff2 = gather_cutoff2;
    const int32_t chunks = (live + kGatherChunk - 1) / kGatherChunk;
    auto task = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t chunk = begin; chunk < end; ++chunk) {
        const int32_t first = chunk * kGatherChunk;
        const int32_t last = std::min(live, first + kGatherChunk);
        int32_t eligible = 0, kept = 0;
        for (int32_t i = first; i < last; ++i) {
          const Vec3 d = live_root_parent[i]->translation - cam;
          float d2 = LengthSquared(d);
          d2 = d2 == d2 ? d2 : INFINITY;  // non-finite host input sorts last, fails the test
          live_distance2[i] = d2;
          eligible += d2 <= max_d2 ? 1 : 0;
          if (d2 <= cutoff2) candidates[first + kept++] = {d2, live_chains[i]};
        }
        chunk_eligible[chunk] = eligible;
        chunk_kept[chunk] = kept;
      }
    };
    ParallelFor(chunks, 1, task);
  }

  // Eligibility and the nearest-N budget, then lane changes. O(bound) only in one tight
  // pass over the dense distances; everything else is O(selected). When the budget binds,
  // last frame's cut-off distance (plus a margin) pre-filters the candidates so that the
  // selection sorts about max_chains entries, not every eligible chain; if the filter lets
  // through fewer than max_chains, the full eligible set is collected instead. Either way
  // the result is exactly the max_chains nearest, ties broken by slot index.
  void Budget() {
    const float max_d2 = std::isinf(settings.max_distance) ? INFINITY : settings.max_distance * settings.max_distance;
    const auto live = static_cast<int32_t>(live_chains.size());
    const int32_t max_chains = settings.max_chains;
    int32_t eligible = 0;
    int32_t count = 0;
    if (predicate.should_simulate != nullptr) {
      for (int32_t i = 0; i < live; ++i) {
        const int32_t slot = live_chains[i];
        const ChainId id{static_cast<uint32_t>(slot), chains[slot].generation};
        if (predicate.should_simulate(id, live_root_parent[i]->translation, predicate.user)) {
          candidates[count++] = {live_distance2[i], slot};
        }
      }
      eligible = count;
    } else {
      const int32_t chunks = (live + kGatherChunk - 1) / kGatherChunk;
      for (int32_t c = 0; c < chunks; ++c) {
        eligible += chunk_eligible[c];
        const int32_t from = c * kGatherChunk;
        for (int32_t j = 0; j < chunk_kept[c]; ++j) candidates[count++] = candidates[from + j];
      }
      if (count < std::min(eligible, max_chains)) {
        count = 0;
        for (int32_t i = 0; i < live; ++i) {
          if (live_distance2[i] <= max_d2) candidates[count++] = {live_distance2[i], live_chains[i]};
        }
      }
    }
    stats.culled_by_distance = live - eligible;
    const int32_t keep = std::min(eligible, max_chains);
    if (count > keep) std::nth_element(candidates.begin(), candidates.begin() + keep, candidates.begin() + count);
    stats.culled_by_budget = eligible - keep;
    float cutoff = -1.0f;
    const uint64_t frame = stats.frame;
    for (int32_t i = 0; i < keep; ++i) {
      chains[candidates[i].second].selected_frame = frame;
      cutoff = std::max(cutoff, candidates[i].first);
    }
    last_cutoff2 = keep == max_chains && keep > 0 && std::isfinite(cutoff) ? cutoff : -1.0f;
    // Release lanes of chains no longer selected (from the back, so a lane moved into a
    // hole has already been visited), then give lanes to the newly selected.
    for (ChainGroup& g : groups) {
      for (int32_t lane = g.lanes_used - 1; lane >= 0; --lane) {
        const int32_t owner = g.lane_owner[lane];
        if (chains[owner].selected_frame != frame) ReleaseLane(owner);
      }
    }
    int32_t woke = 0;
    for (int32_t i = 0; i < keep; ++i) {
      if (chains[candidates[i].second].lane < 0) {
        AcquireLane(candidates[i].second);
        ++woke;
      }
    }
    stats.snapped_wake = woke;
    work_count = 0;
    int32_t lanes = 0;
    for (int32_t gi = 0; gi < static_cast<int32_t>(groups.size()); ++gi) {
      const int32_t blocks = (groups[gi].lanes_used + kBlockLanes - 1) / kBlockLanes;
      for (int32_t b = 0; b < blocks; ++b) work[work_count++] = {gi, b};
      lanes += groups[gi].lanes_used;
    }
    stats.simulated_chains = keep;
    stats.sleeping_chains = live - keep;
    stats.chain_blocks = work_count;
    stats.lanes_used = lanes;
    stats.lane_occupancy = work_count > 0 ? static_cast<float>(lanes) / static_cast<float>(work_count * kBlockLanes) : 0.0f;
  }

  // Reads a lane's host input: a finite pose becomes its last good pose; a non-finite
  // one is counted and the last good pose is used again. Returns whether it was good.
  bool ReadLaneInput(ChainSlot& slot, WorkCounters& counters) {
    const int32_t n = slot.bone_count;
    // Every host transform a chain reads goes through the dispatched kernel's check.
    auto all_finite = [this](const Transform* t, int32_t count) {
      return kernels->all_finite(reinterpret_cast<const float*>(t), count * static_cast<int32_t>(sizeof(Transform) / sizeof(float)));
    };
    bool good = all_finite(slot.root_parent_world, 1) && all_finite(slot.collider_frames, slot.collider_frame_count);
    if (slot.bone_map.empty()) {
      good = good && all_finite(slot.animated, n);
      if (good) std::memcpy(static_cast<void*>(slot.last_good.data()), slot.animated, sizeof(Transform) * n);
    } else {
      for (int32_t k = 0; good && k < n; ++k) good = all_finite(&slot.animated[slot.bone_map[k]], 1);
      if (good) {
        for (int32_t k = 0; k < n; ++k) slot.last_good[k] = slot.animated[slot.bone_map[k]];
      }
    }
    if (good) {
      slot.last_good_root_parent = *slot.root_parent_world;
    } else {
      ++counters.bad_input;
    }
    return good;
  }

  // After the pose kernel: colliders, the teleport guard and snapping, for one lane.
  void FinishLane(ChainGroup& g, const ChainBlockView& v, int32_t l, ChainSlot& slot, bool good,
                  WorkCounters& counters) {
    const ChainArchetype& a = archetypes[slot.archetype].archetype;
    const int32_t n = a.node_count;
    auto bone_world = [&](int32_t k) {
      return Transform{{v.Node(detail::kBx, k)[l], v.Node(detail::kBy, k)[l], v.Node(detail::kBz, k)[l]},
                       {v.Node(detail::kRx, k)[l], v.Node(detail::kRy, k)[l], v.Node(detail::kRz, k)[l],
                        v.Node(detail::kRw, k)[l]},
                       {v.Node(detail::kSx, k)[l], v.Node(detail::kSy, k)[l], v.Node(detail::kSz, k)[l]}};
    };
    for (int32_t c = 0; c < g.collider_count; ++c) {
      const ColliderSettings& col = a.colliders[c];
      // A host frame that is not trusted this frame keeps last frame's collider.
      if (!good && col.bone < 0) continue;
      const Transform frame = col.bone >= 0 ? bone_world(col.bone) : slot.collider_frames[col.frame];
      const Vec3 pa = TransformPoint(frame, col.a);
      Vec3 pb = pa;
      float radius = 0.0f;
      if (g.collider_kind[c] == detail::kPlaneKind) {
        pb = Rotate(frame.rotation, col.b);
      } else {
        if (g.collider_kind[c] == detail::kCapsuleOutside || g.collider_kind[c] == detail::kCapsuleInside) {
          pb = TransformPoint(frame, col.b);
        }
        const float s = std::max(std::fabs(frame.scale.x), std::max(std::fabs(frame.scale.y), std::fabs(frame.scale.z)));
        radius = col.radius * s;
      }
      v.Collider(detail::kCax, c)[l] = pa.x;
      v.Collider(detail::kCay, c)[l] = pa.y;
      v.Collider(detail::kCaz, c)[l] = pa.z;
      v.Collider(detail::kCbx, c)[l] = pb.x;
      v.Collider(detail::kCby, c)[l] = pb.y;
      v.Collider(detail::kCbz, c)[l] = pb.z;
      v.Collider(detail::kCr, c)[l] = radius;
    }
    // Teleport guard: the root bone jumped or turned too far since the last pose phase.
    const Vec3 root_pos{v.Node(detail::kBx, 0)[l], v.Node(detail::kBy, 0)[l], v.Node(detail::kBz, 0)[l]};
    const Quat root_rot = Normalize(Quat{v.Node(detail::kRx, 0)[l], v.Node(detail::kRy, 0)[l],
                                         v.Node(detail::kRz, 0)[l], v.Node(detail::kRw, 0)[l]});
    bool teleported = false;
    if (!slot.wake_pending && good) {
      const float moved2 = LengthSquared(root_pos - slot.prev_root_pos);
      // |dot(q0, q1)| = cos(angle / 2) for unit quaternions.
      teleported = moved2 > teleport_distance2 || std::fabs(Dot(root_rot, slot.prev_root_rot)) < teleport_cos_half_angle;
    }
    slot.prev_root_pos = root_pos;
    slot.prev_root_rot = root_rot;
    const bool snap = slot.wake_pending || teleported;
    if (teleported) ++counters.teleport;
    if (snap || !good) {
      for (int32_t k = 0; k < n; ++k) {
        for (int32_t axis = 0; axis < 3; ++axis) {
          const float b = v.Node(detail::kBx + axis, k)[l];
          v.Node(detail::kAx + axis, k)[l] = b;
          if (snap) {
            v.Node(detail::kPos0x + axis, k)[l] = b;
            v.Node(detail::kPos1x + axis, k)[l] = b;
          }
        }
      }
    }
    slot.wake_pending = false;
  }

  void Pose() {
    const detail::ChainKernels* kernel_set = kernels;
    auto task = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t i = begin; i < end; ++i) {
        ChainGroup& g = groups[work[i].group];
        const ChainBlockView v = g.View(work[i].block);
        WorkCounters& counters = work_counters[i];
        counters = {};
        detail::ChainPoseInput input;
        bool good[kBlockLanes];
        for (int32_t l = 0; l < kBlockLanes; ++l) {
          const int32_t owner = g.lane_owner[work[i].block * kBlockLanes + l];
          if (owner >= 0) {
            ChainSlot& slot = chains[owner];
            good[l] = ReadLaneInput(slot, counters);
            input.root_parent[l] = &slot.last_good_root_parent;
            input.locals[l] = slot.last_good.data();
          } else {
            good[l] = true;
            input.root_parent[l] = &g.padding_root_parent;
            input.locals[l] = g.padding_locals.data();
          }
        }
        kernel_set->pose(v, input);
        for (int32_t l = 0; l < kBlockLanes; ++l) {
          const int32_t owner = g.lane_owner[work[i].block * kBlockLanes + l];
          if (owner >= 0) FinishLane(g, v, l, chains[owner], good[l], counters);
        }
      }
    };
    ParallelFor(work_count, 1, task);
  }

  void Solve(int32_t substeps) {
    detail::ChainSolveParams params;
    params.substeps = substeps;
    params.dt = static_cast<float>(clock.step());
    params.gravity[0] = settings.gravity.x;
    params.gravity[1] = settings.gravity.y;
    params.gravity[2] = settings.gravity.z;
    params.wind[0] = frame_wind.x;
    params.wind[1] = frame_wind.y;
    params.wind[2] = frame_wind.z;
    const detail::ChainKernels* k = kernels;
    auto task = [&](int32_t begin, int32_t end, uint32_t) {
      // Runs of consecutive blocks of one topology go to the kernel together.
      ChainBlockView views[detail::kSolveInterleave];
      int32_t i = begin;
      while (i < end) {
        const int32_t group = work[i].group;
        int32_t count = 0;
        while (i < end && count < detail::kSolveInterleave && work[i].group == group) {
          views[count++] = groups[group].View(work[i].block);
          ++i;
        }
        k->solve(views, count, params);
      }
    };
    ParallelFor(work_count, detail::kSolveInterleave, task);
    if (substeps % 2 == 1) {
      for (ChainGroup& g : groups) g.positions_swapped = !g.positions_swapped;
    }
  }

  void ResetLane(const ChainBlockView& v, int32_t l, ChainSlot& slot) {
    for (int32_t k = 0; k < v.node_count; ++k) {
      for (int32_t axis = 0; axis < 3; ++axis) {
        const float b = v.Node(detail::kBx + axis, k)[l];
        v.Node(detail::kAx + axis, k)[l] = b;
        v.Node(detail::kPos0x + axis, k)[l] = b;
        v.Node(detail::kPos1x + axis, k)[l] = b;
      }
    }
    for (int32_t k = 0; k < slot.bone_count; ++k) slot.Output(k) = slot.last_good[k];
  }

  void Writeback() {
    const detail::ChainKernels* k = kernels;
    auto task = [&](int32_t begin, int32_t end, uint32_t worker) {
      float* scratch = writeback_scratch[worker].data();
      for (int32_t i = begin; i < end; ++i) {
        ChainGroup& g = groups[work[i].group];
        const ChainBlockView v = g.View(work[i].block);
        alignas(64) float finite_probe[kBlockLanes];
        k->writeback(v, scratch, finite_probe);
        for (int32_t l = 0; l < kBlockLanes; ++l) {
          const int32_t owner = g.lane_owner[work[i].block * kBlockLanes + l];
          if (owner < 0) continue;
          ChainSlot& slot = chains[owner];
          if (!(finite_probe[l] == 0.0f)) {
            ResetLane(v, l, slot);
            ++work_counters[i].reset;
            continue;
          }
          for (int32_t n = 0; n < v.node_count; ++n) {
            Transform& out = slot.Output(n);
            const float* local = detail::WrittenLocalRotation(scratch, n) + l;
            out.translation = slot.last_good[n].translation;
            out.rotation = Quat{local[0], local[kBlockLanes], local[2 * kBlockLanes], local[3 * kBlockLanes]};
            out.scale = slot.last_good[n].scale;
          }
        }
      }
    };
    ParallelFor(work_count, 1, task);
  }

  void StepPendulum(PendulumSlot& p, int32_t substeps, WorkCounters& counters, uint8_t& awake_flag) {
    Transform joint = *p.joint;
    if (IsFinite(joint)) {
      p.last_good_joint = joint;
    } else {
      joint = p.last_good_joint;
      ++counters.bad_input;
    }
    const Vec3 hinge = joint.translation;
    const Vec3 rest_bob = hinge + Rotate(joint.rotation, Mul(joint.scale, p.lever_local));
    const float max_d = settings.pendulum_max_distance;
    awake_flag = 0;
    if (!(LengthSquared(hinge - camera) <= max_d * max_d)) {
      p.awake = false;
      return;
    }
    const Vec3 rest_dir = NormalizeOr(rest_bob - hinge, Vec3{0, -1, 0});
    const float length = Length(rest_bob - hinge);
    const bool teleported = p.awake && LengthSquared(hinge - p.prev_hinge) > settings.teleport_distance * settings.teleport_distance;
    if (!p.awake || teleported) {
      awake_flag = p.awake ? 1 : 2;
      if (teleported) ++counters.teleport;
      p.awake = true;
      p.bob = p.prev_bob = p.prev_rest_bob = rest_bob;
      p.prev_hinge = hinge;
      p.dir = rest_dir;
    } else {
      awake_flag = 1;
    }
    const float cos_max = std::cos(p.max_swing);
    auto clamp_dir = [&](Vec3 dir, Vec3 rest) {
      if (Dot(dir, rest) >= cos_max) return dir;
      const Vec3 axis = NormalizeOr(Cross(rest, dir), NormalizeOr(Cross(rest, Vec3{1, 0, 0}), Vec3{0, 0, 1}));
      return Rotate(AxisAngle(axis, p.max_swing), rest);
    };
    if (substeps > 0) {
      const float dt = static_cast<float>(clock.step());
      const Vec3 accel = (settings.gravity * p.settings.gravity_scale + frame_wind * p.settings.wind_scale) * (dt * dt);
      for (int32_t s = 0; s < substeps; ++s) {
        const float alpha = static_cast<float>(s + 1) / static_cast<float>(substeps);
        const Vec3 h = Lerp(p.prev_hinge, hinge, alpha);
        const Vec3 rb = Lerp(p.prev_rest_bob, rest_bob, alpha);
        const Vec3 velocity = (p.bob - p.prev_bob) * p.settings.damping;
        p.prev_bob = p.bob;
        Vec3 bob = p.bob + velocity + accel;
        bob = Lerp(bob, rb, p.settings.stiffness);
        const Vec3 rd = NormalizeOr(rb - h, rest_dir);
        const Vec3 dir = clamp_dir(NormalizeOr(bob - h, rd), rd);
        p.bob = h + dir * length;
        p.dir = dir;
      }
      p.prev_hinge = hinge;
      p.prev_rest_bob = rest_bob;
    }
    // Clamp again against this frame's rest: with no substep the joint may have turned.
    const Vec3 dir = clamp_dir(p.dir, rest_dir);
    const Quat swing = ShortestArc(rest_dir, dir);
    const Quat local = Conjugate(joint.rotation) * swing * joint.rotation;
    Transform out{Rotate(local, p.rest_offset.translation), Normalize(local * p.rest_offset.rotation),
                  p.rest_offset.scale};
    if (!IsFinite(out) || !IsFinite(p.bob)) {
      ++counters.reset;
      p.bob = p.prev_bob = p.prev_rest_bob = rest_bob;
      p.prev_hinge = hinge;
      p.dir = rest_dir;
      out = p.rest_offset;
    }
    p.swing = RotationAngle(swing);
    *p.offset_out = out;
  }

  void Pendulums(int32_t substeps) {
    const auto live = static_cast<int32_t>(live_pendulums.size());
    const int32_t chunks = (live + kPendulumChunk - 1) / kPendulumChunk;
    auto task = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t c = begin; c < end; ++c) {
        pendulum_counters[c] = {};
        const int32_t last = std::min(live, (c + 1) * kPendulumChunk);
        for (int32_t i = c * kPendulumChunk; i < last; ++i) {
          StepPendulum(pendulums[live_pendulums[i]], substeps, pendulum_counters[c], pendulum_awake_frame[i]);
        }
      }
    };
    ParallelFor(chunks, 1, task);
    int32_t awake = 0, woke = 0;
    for (int32_t i = 0; i < live; ++i) {
      awake += pendulum_awake_frame[i] != 0 ? 1 : 0;
      woke += pendulum_awake_frame[i] == 2 ? 1 : 0;
    }
    for (int32_t c = 0; c < chunks; ++c) {
      stats.snapped_bad_input += pendulum_counters[c].bad_input;
      stats.reset_non_finite += pendulum_counters[c].reset;
      stats.snapped_teleport += pendulum_counters[c].teleport;
    }
    stats.snapped_wake += woke;
    stats.simulated_pendulums = awake;
    stats.sleeping_pendulums = live - awake;
  }

  // ---- contacts between ragdolls ----

  struct BodyState {
    Vec3 x, v, w;
    Quat q;
    Vec3 xp;  // at the substep's start (read only)
    Quat qp;
  };
  // Position and orientation only (what a pair's contacts need to be re-measured).
  static void ReadPose(const detail::RigidBlockView& view, int32_t l, int32_t j, Vec3* x, Quat* q) {
    *x = Vec3{view.Part(detail::kRbXx, j)[l], view.Part(detail::kRbXy, j)[l], view.Part(detail::kRbXz, j)[l]};
    *q = Quat{view.Part(detail::kRbQx, j)[l], view.Part(detail::kRbQy, j)[l], view.Part(detail::kRbQz, j)[l],
              view.Part(detail::kRbQw, j)[l]};
  }
  static BodyState ReadBody(const detail::RigidBlockView& view, int32_t l, int32_t j) {
    BodyState b;
    ReadPose(view, l, j, &b.x, &b.q);
    b.v = Vec3{view.Part(detail::kRbVx, j)[l], view.Part(detail::kRbVy, j)[l], view.Part(detail::kRbVz, j)[l]};
    b.w = Vec3{view.Part(detail::kRbWx, j)[l], view.Part(detail::kRbWy, j)[l], view.Part(detail::kRbWz, j)[l]};
    b.xp = Vec3{view.Part(detail::kRbXPx, j)[l], view.Part(detail::kRbXPy, j)[l], view.Part(detail::kRbXPz, j)[l]};
    b.qp = Quat{view.Part(detail::kRbQPx, j)[l], view.Part(detail::kRbQPy, j)[l], view.Part(detail::kRbQPz, j)[l],
                view.Part(detail::kRbQPw, j)[l]};
    return b;
  }
  static void WriteBody(const detail::RigidBlockView& view, int32_t l, int32_t j, const BodyState& b) {
    const float values[13] = {b.x.x, b.x.y, b.x.z, b.q.x, b.q.y, b.q.z, b.q.w, b.v.x, b.v.y, b.v.z, b.w.x, b.w.y, b.w.z};
    for (int32_t f = 0; f < 13; ++f) view.Part(detail::kRbXx + f, j)[l] = values[f];
  }

  // Once per frame: every awake or sleeping part's bounds (grown by its motion over the
  // frame) and each ragdoll's (their union). Ragdolls are sorted along x and swept for
  // overlapping pairs, filtered by collision groups and modes; within an overlapping pair,
  // only the parts inside the other ragdoll's bounds are tested against each other (a pile
  // of ragdolls lined up along x would otherwise sweep most of its parts against most
  // others). Listed self-collision pairs are tested directly. A sleeping ragdoll that may
  // be touched is woken; then the pairs are coloured so that no colour touches a body twice.
  void RagdollBroadPhase(float frame_seconds) {
    int32_t n = 0, boxes = 0;
    for (std::size_t i = 0; i < ragdolls.size(); ++i) {
      const RagdollSlot& r = ragdolls[i];
      if (!r.live || !r.enabled) continue;
      ragdoll_boxes[boxes++] = RagdollBox{{}, {}, n, r.part_count, static_cast<int32_t>(i)};
      n += r.part_count;
    }
    // The bounds, in parallel over ragdolls (each writes its own bodies' entries).
    auto bounds = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t k = begin; k < end; ++k) {
        RagdollBox& box = ragdoll_boxes[k];
        const RagdollSlot& r = ragdolls[box.slot];
        RagdollGroup& g = ragdoll_groups[r.group];
        const detail::RigidBlockView view = g.View(r.lane / kBlockLanes);
        const int32_t l = r.lane % kBlockLanes;
        box.lo = Vec3{1e30f, 1e30f, 1e30f};
        box.hi = Vec3{-1e30f, -1e30f, -1e30f};
        for (int32_t j = 0; j < r.part_count; ++j) {
          const BodyState body = ReadBody(view, l, j);
          const float spin = Length(body.w) * g.constants[j].extent;
          const float margin = (Length(body.v) + spin) * frame_seconds + 0.01f;
          pair_motion[box.first + j] = PairMotion{body.x, body.v, g.constants[j].extent, spin};
          const Rot3 rot = RotationOf(body.q);
          Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
          for (const auto& p : g.pair_points[j]) {
            const Vec3 c = body.x + Apply(rot, Vec3{p[0], p[1], p[2]});
            const float e = p[3] + margin;
            lo = Vec3{std::min(lo.x, c.x - e), std::min(lo.y, c.y - e), std::min(lo.z, c.z - e)};
            hi = Vec3{std::max(hi.x, c.x + e), std::max(hi.y, c.y + e), std::max(hi.z, c.z + e)};
          }
          const int32_t body_index = box.first + j;
          pair_bodies[body_index] = PairBody{r.group, r.lane, j, box.slot};
          broad[body_index] = BroadEntry{lo, hi, body_index};
          box.lo = Vec3{std::min(box.lo.x, lo.x), std::min(box.lo.y, lo.y), std::min(box.lo.z, lo.z)};
          box.hi = Vec3{std::max(box.hi.x, hi.x), std::max(box.hi.y, hi.y), std::max(box.hi.z, hi.z)};
        }
      }
    };
    ParallelFor(boxes, 8, bounds);
    for (int32_t i = 0; i < boxes; ++i) box_order[i] = i;
    std::sort(box_order.begin(), box_order.begin() + boxes, [&](int32_t a, int32_t b) {
      return ragdoll_boxes[a].lo.x < ragdoll_boxes[b].lo.x || (ragdoll_boxes[a].lo.x == ragdoll_boxes[b].lo.x && a < b);
    });
    auto overlap = [](Vec3 alo, Vec3 ahi, Vec3 blo, Vec3 bhi) {
      return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
    };
    pair_count = 0;
    int32_t dropped = 0;
    const float wake_speed = 2.0f * settings.ragdoll_sleep_speed;
    // A ragdoll touched by a part moving faster than twice the sleep speed over the last
    // frame wakes. One touched more gently stays asleep and acts as static in the pair (a
    // frozen one always does): bodies settling onto a sleeping pile do not keep waking it.
    // The speed is the part's frame speed (RagdollSlot::frame_speed), not its velocity:
    // contacts that settle a pile leave parts with velocities of 0.1-0.5 m/s that go back
    // and forth within a frame while the parts move a few mm/s, and waking on those woke
    // neighbour after neighbour and kept piles awake.
    auto add_pair = [&](int32_t body_a, int32_t body_b) {
      const PairBody& pa = pair_bodies[body_a];
      const PairBody& pb = pair_bodies[body_b];
      RagdollSlot& sa = ragdolls[pa.slot];
      RagdollSlot& sb = ragdolls[pb.slot];
      if (sa.asleep && sb.asleep) return;
      // Boxes grown by each part's own speed overlap for two parts falling side by side;
      // their bounding spheres, grown by their relative speed over the frame (as
      // FindPairContacts reaches), say whether they can touch this frame at all.
      const PairMotion& ma = pair_motion[body_a];
      const PairMotion& mb = pair_motion[body_b];
      const float reach = ma.extent + mb.extent + (Length(ma.v - mb.v) + ma.spin + mb.spin) * frame_seconds + 0.01f;
      if (LengthSquared(ma.x - mb.x) > reach * reach) return;
      auto speed_of = [&](const PairBody& body) { return ragdolls[body.slot].frame_speed[body.part]; };
      for (int side = 0; side < 2; ++side) {
        RagdollSlot* s = side == 0 ? &sa : &sb;
        if (!s->asleep || s->frozen) continue;
        const PairBody& other = side == 0 ? pb : pa;
        if (speed_of(other) <= wake_speed || ragdolls[other.slot].calm_seconds >= settings.ragdoll_sleep_seconds) continue;
        s->asleep = false;
        s->still_seconds = s->slow_seconds = 0;
        ragdoll_groups[s->group].View(s->lane / kBlockLanes).Lane(detail::kAsleep)[s->lane % kBlockLanes] = 0.0f;
      }
      if (pair_count >= static_cast<int32_t>(part_pairs.size())) {
        ++dropped;
        return;
      }
      part_pairs[pair_count++] = PartPair{std::min(body_a, body_b), std::max(body_a, body_b), 0};
    };
    for (int32_t oa = 0; oa < boxes; ++oa) {
      const RagdollBox& ba = ragdoll_boxes[box_order[oa]];
      const RagdollSlot& sa = ragdolls[ba.slot];
      const RagdollGroup& ga = ragdoll_groups[sa.group];
      // Listed self-collision pairs.
      if (!sa.asleep) {
        for (const auto& [x, y] : ga.self_pairs) {
          if (x >= ba.count || y >= ba.count) continue;
          const BroadEntry& ex = broad[ba.first + x];
          const BroadEntry& ey = broad[ba.first + y];
          if (overlap(ex.lo, ex.hi, ey.lo, ey.hi)) add_pair(ba.first + x, ba.first + y);
        }
      }
      for (int32_t ob = oa + 1; ob < boxes && ragdoll_boxes[box_order[ob]].lo.x <= ba.hi.x; ++ob) {
        const RagdollBox& bb = ragdoll_boxes[box_order[ob]];
        if (!overlap(ba.lo, ba.hi, bb.lo, bb.hi)) continue;
        const RagdollSlot& sb = ragdolls[bb.slot];
        const RagdollGroup& gb = ragdoll_groups[sb.group];
        // Filtered by groups, or one is in 'static' collide mode and the other is not.
        if ((ga.collision_group & gb.collision_mask) == 0 || (gb.collision_group & ga.collision_mask) == 0 ||
            sa.collide_mode != sb.collide_mode || (sa.asleep && sb.asleep))
          continue;
        int32_t na = 0, nb = 0;
        for (int32_t j = 0; j < ba.count; ++j) {
          const BroadEntry& e = broad[ba.first + j];
          if (overlap(e.lo, e.hi, bb.lo, bb.hi)) near_a[na++] = ba.first + j;
        }
        for (int32_t j = 0; j < bb.count; ++j) {
          const BroadEntry& e = broad[bb.first + j];
          if (overlap(e.lo, e.hi, ba.lo, ba.hi)) near_b[nb++] = bb.first + j;
        }
        for (int32_t i = 0; i < na; ++i) {
          const BroadEntry& ea = broad[near_a[i]];
          for (int32_t k = 0; k < nb; ++k) {
            const BroadEntry& eb = broad[near_b[k]];
            if (overlap(ea.lo, ea.hi, eb.lo, eb.hi)) add_pair(near_a[i], near_b[k]);
          }
        }
      }
    }
    stats.dropped_ragdoll_pairs = dropped;
    stats.ragdoll_pairs = pair_count;
    OrderPairs(n);
  }

  // Islands: ragdolls joined by pairs in which both are awake (a sleeping ragdoll is
  // static in its pairs and only read, so it joins nothing). The pairs of an island touch
  // no body of another island, so islands are solved in parallel, each one's pairs in
  // order on one thread: one task per island and stage instead of one parallel pass per
  // colour. An island of more than kColouredIsland pairs (one big heap, which would keep
  // one thread busy while the others wait) is coloured instead: the greedy lowest colour
  // neither body has used, colours one after another, each colour's pairs in parallel;
  // colour kPairColours - 1 takes the overflow and runs serially. The split depends on the
  // scene only, never on the worker count, so results are the same for any worker count.
  int32_t IslandOf(int32_t slot) {
    while (island_parent[slot] != slot) {
      island_parent[slot] = island_parent[island_parent[slot]];
      slot = island_parent[slot];
    }
    return slot;
  }
  void OrderPairs(int32_t bodies) {
    for (std::size_t i = 0; i < ragdolls.size(); ++i) {
      island_parent[i] = static_cast<int32_t>(i);
      island_size[i] = 0;
    }
    auto awake_slot = [&](int32_t body) {
      const int32_t slot = pair_bodies[body].slot;
      return ragdolls[slot].asleep ? -1 : slot;
    };
    for (int32_t i = 0; i < pair_count; ++i) {
      const int32_t sa = awake_slot(part_pairs[i].a), sb = awake_slot(part_pairs[i].b);
      if (sa < 0 || sb < 0) continue;
      const int32_t ra = IslandOf(sa), rb = IslandOf(sb);
      if (ra != rb) island_parent[std::max(ra, rb)] = std::min(ra, rb);  // the lower slot is the root
    }
    for (int32_t i = 0; i < pair_count; ++i) {
      const int32_t sa = awake_slot(part_pairs[i].a);
      part_pairs[i].colour = IslandOf(sa >= 0 ? sa : awake_slot(part_pairs[i].b));  // the island, for now
      ++island_size[part_pairs[i].colour];
    }
    // Small islands first, in slot order of their roots, each one's pairs in broad-phase
    // order; each island's range is [island_start[k], island_start[k + 1]).
    island_count = 0;
    int32_t next = 0, big_islands = 0;
    for (std::size_t i = 0; i < ragdolls.size(); ++i) {
      const int32_t size = island_size[i];
      big_islands += size > kColouredIsland ? 1 : 0;
      if (size == 0 || size > kColouredIsland) continue;
      island_fill[i] = next;
      island_start[island_count++] = next;
      next += size;
    }
    island_start[island_count] = next;
    const int32_t coloured_begin = next;
    for (int32_t i = 0; i < pair_count; ++i) {
      const int32_t island = part_pairs[i].colour;
      if (island_size[island] <= kColouredIsland) ordered_pairs[island_fill[island]++] = part_pairs[i];
    }
    // Big islands: coloured.
    for (int32_t i = 0; i < bodies; ++i) body_colours[i] = 0;
    int32_t counts[kPairColours] = {};
    for (int32_t i = 0; i < pair_count; ++i) {
      PartPair& p = part_pairs[i];
      if (island_size[p.colour] <= kColouredIsland) {
        p.colour = -1;
        continue;
      }
      const uint64_t used = body_colours[p.a] | body_colours[p.b];
      int32_t colour = kPairColours - 1;
      for (int32_t c = 0; c < kPairColours - 1; ++c) {
        if ((used & (uint64_t{1} << c)) == 0) {
          colour = c;
          break;
        }
      }
      p.colour = colour;
      if (colour < kPairColours - 1) {
        body_colours[p.a] |= uint64_t{1} << colour;
        body_colours[p.b] |= uint64_t{1} << colour;
      }
      ++counts[colour];
    }
    stats.ragdoll_islands = island_count + big_islands;
    stats.coloured_ragdoll_pairs = pair_count - coloured_begin;
    colour_start[0] = coloured_begin;  // sized kPairColours + 1 at construction
    for (int32_t c = 0; c < kPairColours; ++c) colour_start[c + 1] = colour_start[c] + counts[c];
    int32_t fill[kPairColours];
    for (int32_t c = 0; c < kPairColours; ++c) fill[c] = colour_start[c];
    for (int32_t i = 0; i < pair_count; ++i)
      if (part_pairs[i].colour >= 0) ordered_pairs[fill[part_pairs[i].colour]++] = part_pairs[i];
  }

  // Both sides of a pair, read from their blocks. A sleeping or frozen ragdoll (or a
  // kinematic part) is static where it lies: fixed, with no inverse mass.
  struct PairSides {
    const PairBody* pa;
    const PairBody* pb;
    const RagdollGroup* ga;
    const RagdollGroup* gb;
    detail::RigidBlockView va, vb;
    int32_t la, lb;
    BodyState a, b;
    const detail::RigidPartConstants* ca;
    const detail::RigidPartConstants* cb;
    bool a_fixed, b_fixed;
    float ima, imb;
  };
  PairSides LoadPair(int32_t pair_index) {
    const PartPair& pair = ordered_pairs[pair_index];
    PairSides s;
    s.pa = &pair_bodies[pair.a];
    s.pb = &pair_bodies[pair.b];
    RagdollGroup& ga = ragdoll_groups[s.pa->group];
    RagdollGroup& gb = ragdoll_groups[s.pb->group];
    s.ga = &ga;
    s.gb = &gb;
    s.va = ga.View(s.pa->lane / kBlockLanes);
    s.vb = gb.View(s.pb->lane / kBlockLanes);
    s.la = s.pa->lane % kBlockLanes;
    s.lb = s.pb->lane % kBlockLanes;
    s.a = ReadBody(s.va, s.la, s.pa->part);
    s.b = ReadBody(s.vb, s.lb, s.pb->part);
    s.ca = &ga.constants[s.pa->part];
    s.cb = &gb.constants[s.pb->part];
    s.a_fixed = ragdolls[s.pa->slot].asleep || s.ca->inv_mass == 0.0f;  // asleep: frozen ones too
    s.b_fixed = ragdolls[s.pb->slot].asleep || s.cb->inv_mass == 0.0f;
    s.ima = s.a_fixed ? 0.0f : s.ca->inv_mass;
    s.imb = s.b_fixed ? 0.0f : s.cb->inv_mass;
    return s;
  }
  static void StorePair(const PairSides& s) {
    if (!s.a_fixed) WriteBody(s.va, s.la, s.pa->part, s.a);
    if (!s.b_fixed) WriteBody(s.vb, s.lb, s.pb->part, s.b);
  }

  // Once per frame, after the broad phase: the contacts of a pair. Every sample sphere of
  // each part against the other part's exact shape; a sample within the frame's reach of
  // the shape (the speed of both over the frame, plus 1 cm) is a contact: the sphere's
  // point nearest the shape and the shape's nearest surface point, each fixed in its body,
  // and the shape's normal there. The kContactsPerPair closest are kept.
  void FindPairContacts(int32_t pair_index, float frame_seconds) {
    const PartPair& pair = ordered_pairs[pair_index];
    const PairBody& pa = pair_bodies[pair.a];
    const PairBody& pb = pair_bodies[pair.b];
    RagdollGroup& ga = ragdoll_groups[pa.group];
    RagdollGroup& gb = ragdoll_groups[pb.group];
    const BodyState a = ReadBody(ga.View(pa.lane / kBlockLanes), pa.lane % kBlockLanes, pa.part);
    const BodyState b = ReadBody(gb.View(pb.lane / kBlockLanes), pb.lane % kBlockLanes, pb.part);
    const detail::RigidPartConstants& ca = ga.constants[pa.part];
    const detail::RigidPartConstants& cb = gb.constants[pb.part];
    PairContact* contacts = &pair_contacts[static_cast<std::size_t>(pair_index) * kContactsPerPair];
    int32_t& count = pair_contact_count[pair_index];
    count = 0;
    // The pair's reach over the frame (the broad phase kept it only if their bounding
    // spheres get within it).
    const PairMotion& ma = pair_motion[pair.a];
    const PairMotion& mb = pair_motion[pair.b];
    const float margin = (Length(ma.v - mb.v) + ma.spin + mb.spin) * frame_seconds + 0.01f;
    float separation[kContactsPerPair];
    // p is the body whose sample spheres are tested, q the body whose shape they meet.
    auto find = [&](const BodyState& p, const RagdollGroup& gp, int32_t part_p, const BodyState& q,
                    const detail::RigidPartConstants& cq, const RagdollGroup& gq, int32_t part_q, bool p_is_a) {
      const Transform q_shape = Compose(Transform{q.x, q.q, {1, 1, 1}}, gq.shape_in_body[part_q]);
      for (const auto& smp : gp.pair_points[part_p]) {
        const Vec3 c = p.x + Rotate(p.q, Vec3{smp[0], smp[1], smp[2]});
        const float reach_q = cq.extent + smp[3] + margin;
        if (LengthSquared(c - q.x) >= reach_q * reach_q) continue;
        Vec3 n;  // out of q, toward p
        const float dist = detail::PartShapeDistanceNormal(gq.shapes[part_q], q_shape, c, &n);
        const float gap = dist - smp[3];
        if (!(gap < margin)) continue;
        // Keep the closest: fill, then replace the farthest kept when this one is closer.
        int32_t slot = count;
        if (count == kContactsPerPair) {
          slot = 0;
          for (int32_t k = 1; k < kContactsPerPair; ++k)
            if (separation[k] > separation[slot]) slot = k;
          if (!(gap < separation[slot])) continue;
        } else {
          ++count;
        }
        separation[slot] = gap;
        PairContact& ct = contacts[slot];
        ct.sample = Vec3{smp[0], smp[1], smp[2]};
        ct.radius = smp[3];
        ct.normal_on_a = !p_is_a;
        ct.lambda = ct.pre = 0;
        Anchor(ct, p, q, c, n, dist);
      }
    };
    find(a, ga, pa.part, b, cb, gb, pb.part, true);
    find(b, gb, pb.part, a, ca, ga, pa.part, false);
  }

  // Fixes a contact's points and normal in its bodies from a measurement: the sample
  // sphere of p (centre c) is `dist` from q's shape along n (out of q).
  static void Anchor(PairContact& ct, const BodyState& p, const BodyState& q, Vec3 c, Vec3 n, float dist) {
    const Vec3 on_p = Rotate(Conjugate(p.q), c - n * ct.radius - p.x), on_q = Rotate(Conjugate(q.q), c - n * dist - q.x);
    const Vec3 n_local = Rotate(Conjugate(q.q), n);
    ct.normal = ct.normal_on_a ? -n_local : n_local;
    ct.arm_a = ct.normal_on_a ? on_q : on_p;
    ct.arm_b = ct.normal_on_a ? on_p : on_q;
    ct.stick = Vec3{};
    ct.lambda_sum = 0;  // new points: friction holds them from when they next touch
  }

  // The position half of a pair, between the halves of a substep: each of the frame's
  // contacts is re-measured along its normal; a penetration is pushed apart (XPBD
  // positional correction with both generalised inverse masses), then static friction
  // undoes the contact's slide over the substep while it stays inside the friction cone.
  void PairPositions(int32_t pair_index) {
    const int32_t count = pair_contact_count[pair_index];
    pair_touching[pair_index] = 0;
    if (count == 0) return;
    PairContact* contacts = &pair_contacts[static_cast<std::size_t>(pair_index) * kContactsPerPair];
    {
      // Most pairs in reach touch in no substep of the frame, or not in this one: their
      // poses alone say so, before the velocities and the substep's start are read.
      const PartPair& pair = ordered_pairs[pair_index];
      const PairBody& pa = pair_bodies[pair.a];
      const PairBody& pb = pair_bodies[pair.b];
      const detail::RigidBlockView va = ragdoll_groups[pa.group].View(pa.lane / kBlockLanes);
      const detail::RigidBlockView vb = ragdoll_groups[pb.group].View(pb.lane / kBlockLanes);
      const int32_t la = pa.lane % kBlockLanes, lb = pb.lane % kBlockLanes;
      Vec3 xa, xb;
      Quat qa, qb;
      ReadPose(va, la, pa.part, &xa, &qa);
      ReadPose(vb, lb, pb.part, &xb, &qb);
      const Rot3 ra = RotationOf(qa), rb = RotationOf(qb);
      bool active = false;
      for (int32_t k = 0; k < count && !active; ++k) {
        const PairContact& ct = contacts[k];
        const Vec3 n = Apply(ct.normal_on_a ? ra : rb, ct.normal);
        const Vec3 gap = (xa + Apply(ra, ct.arm_a)) - (xb + Apply(rb, ct.arm_b));
        const float depth = Dot(gap, n);
        active = depth < 0 || LengthSquared(gap - n * depth) > kPairRemeasureSlide * kPairRemeasureSlide;
      }
      if (!active) {
        for (int32_t k = 0; k < count; ++k) contacts[k].lambda = 0;
        return;
      }
    }
    PairSides sides = LoadPair(pair_index);
    BodyState& a = sides.a;
    BodyState& b = sides.b;
    const detail::RigidPartConstants& ca = *sides.ca;
    const detail::RigidPartConstants& cb = *sides.cb;
    const bool a_fixed = sides.a_fixed, b_fixed = sides.b_fixed;
    const float ima = sides.ima, imb = sides.imb;
    const float friction = std::sqrt(ca.friction * cb.friction);
    Rot3 rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);
    bool moved = false;
    for (int32_t k = 0; k < count; ++k) {
      PairContact& ct = contacts[k];
      Vec3 n = Apply(ct.normal_on_a ? rot_a : rot_b, ct.normal);
      Vec3 ra = Apply(rot_a, ct.arm_a), rb = Apply(rot_b, ct.arm_b);
      Vec3 gap = (a.x + ra) - (b.x + rb);
      float depth = Dot(gap, n);
      // The fixed points measure the gap along the frame's normal, which holds while they
      // stay close (a resting or slowly sliding contact). A point that went deeper than
      // kPairRemeasureDepth, or slid kPairRemeasureSlide along the surface, may be passing
      // beside the shape (the tangent plane extends past it): measure the sample against
      // the shape again and fix the new points.
      const Vec3 slid = gap - n * depth;
      if (depth < -kPairRemeasureDepth || LengthSquared(slid) > kPairRemeasureSlide * kPairRemeasureSlide) {
        const BodyState& p = ct.normal_on_a ? b : a;
        const BodyState& q = ct.normal_on_a ? a : b;
        const RagdollGroup& gq = ct.normal_on_a ? *sides.ga : *sides.gb;
        const int32_t part_q = ct.normal_on_a ? sides.pa->part : sides.pb->part;
        const Vec3 c = p.x + Apply(ct.normal_on_a ? rot_b : rot_a, ct.sample);
        Vec3 nq;
        const float dist = detail::PartShapeDistanceNormal(gq.shapes[part_q],
                                                           Compose(Transform{q.x, q.q, {1, 1, 1}}, gq.shape_in_body[part_q]), c, &nq);
        Anchor(ct, p, q, c, nq, dist);
        n = ct.normal_on_a ? -nq : nq;
        ra = Apply(rot_a, ct.arm_a), rb = Apply(rot_b, ct.arm_b);
        depth = dist - ct.radius;
      }
      // The relative normal speed before the position solve (restitution's reference).
      ct.pre = Dot((a.v + Cross(a.w, ra)) - (b.v + Cross(b.w, rb)), n);
      ct.lambda = 0;
      if (!(depth < 0)) continue;
      const Vec3 ia = InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra, n)), ib = InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb, n));
      const float w = ima + imb + Dot(Cross(ra, n), ia) + Dot(Cross(rb, n), ib);
      if (!(w > 1e-12f)) continue;
      const float lambda = -depth / w;
      ct.lambda = lambda;
      moved = true;
      a.x = a.x + n * (lambda * ima);
      b.x = b.x - n * (lambda * imb);
      a.q = TurnSmall(a.q, ia * lambda);
      b.q = TurnSmall(b.q, ib * -lambda);
      rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);
      // Static friction: the points stay where they first touched this frame while the
      // tangential impulse that takes stays within friction x the normal impulse since
      // (Coulomb's cone over the contact's life in the frame, not over one substep: a
      // resting contact's normal impulse per substep is only its weight's, too small to
      // hold it against the joints' pulls, and a pile crept a few cm/s under them).
      const bool first = !(ct.lambda_sum > 0);
      ct.lambda_sum += lambda;
      const Vec3 ra2 = Apply(rot_a, ct.arm_a), rb2 = Apply(rot_b, ct.arm_b);
      Vec3 offset = (a.x + ra2) - (b.x + rb2);
      offset = offset - n * Dot(offset, n);
      if (first) ct.stick = offset;
      const Vec3 slide = ct.stick - offset;  // how a's point must move back, relative to b's
      const float slide_len = Length(slide);
      if (!(slide_len > 1e-9f)) continue;
      const Vec3 t = slide * (1.0f / slide_len);
      const Vec3 it_a = InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra2, t));
      const Vec3 it_b = InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb2, t));
      const float wt = ima + imb + Dot(Cross(ra2, t), it_a) + Dot(Cross(rb2, t), it_b);
      const float lambda_t = wt > 1e-12f ? slide_len / wt : 0.0f;
      if (lambda_t < friction * ct.lambda_sum) {
        a.x = a.x + t * (lambda_t * ima);
        b.x = b.x - t * (lambda_t * imb);
        a.q = TurnSmall(a.q, it_a * lambda_t);
        b.q = TurnSmall(b.q, it_b * -lambda_t);
        rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);
      } else {
        ct.stick = offset;  // it slips: hold from here (pulling it back later would yank it)
      }
    }
    if (moved) StorePair(sides);
    pair_touching[pair_index] = moved ? 1 : 0;
  }

  // The velocity half of a pair, after the velocities were derived from the positions:
  // restitution (none for slow approaches) and dynamic friction at the recorded contacts.
  void PairVelocities(int32_t pair_index, float h) {
    const int32_t count = pair_contact_count[pair_index];
    if (pair_touching[pair_index] == 0) return;  // no contact pushed this substep
    PairSides sides = LoadPair(pair_index);
    BodyState& a = sides.a;
    BodyState& b = sides.b;
    const detail::RigidPartConstants& ca = *sides.ca;
    const detail::RigidPartConstants& cb = *sides.cb;
    const bool a_fixed = sides.a_fixed, b_fixed = sides.b_fixed;
    const float ima = sides.ima, imb = sides.imb;
    const float restitution = 0.5f * (ca.restitution + cb.restitution);
    const float friction = std::sqrt(ca.friction * cb.friction);
    const float g = Length(settings.gravity);
    const PairContact* contacts = &pair_contacts[static_cast<std::size_t>(pair_index) * kContactsPerPair];
    bool touching = false;
    const Rot3 rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);  // orientations are fixed here
    for (int32_t k = 0; k < count; ++k) {
      const PairContact& ct = contacts[k];
      if (!(ct.lambda > 0)) continue;
      touching = true;
      const Vec3 n = Apply(ct.normal_on_a ? rot_a : rot_b, ct.normal);
      const Vec3 ra = Apply(rot_a, ct.arm_a), rb = Apply(rot_b, ct.arm_b);
      const Vec3 vr = (a.v + Cross(a.w, ra)) - (b.v + Cross(b.w, rb));
      const float vn = Dot(vr, n);
      const Vec3 vt = vr - n * vn;
      const float vt_len = Length(vt);
      const float e = ct.pre < -2.0f * g * h ? restitution : 0.0f;
      const float target = std::max(-e * ct.pre, 0.0f);
      const float cut = std::min(friction * ct.lambda / h, vt_len);
      const Vec3 dv = n * (target - vn) - (vt_len > 1e-9f ? vt * (cut / vt_len) : Vec3{});
      const Vec3 dir = NormalizeOr(dv, n);
      const Vec3 ja = InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra, dir)), jb = InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb, dir));
      const float w = ima + imb + Dot(Cross(ra, dir), ja) + Dot(Cross(rb, dir), jb);
      if (!(w > 1e-12f)) continue;
      const Vec3 impulse = dv * (1.0f / w);
      a.v = a.v + impulse * ima;
      b.v = b.v - impulse * imb;
      a.w = a.w + InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra, impulse));
      b.w = b.w - InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb, impulse));
    }
    if (!touching) return;
    // Rolling resistance between touching parts, as against the static world: their
    // relative spin decays at ragdoll_contact_angular_damping (a pile stops rolling).
    const float keep = std::max(1.0f - settings.ragdoll_contact_angular_damping * h, 0.0f);
    const Vec3 spin = (a.w - b.w) * (1.0f - keep);
    const float share_a = a_fixed ? 0.0f : (b_fixed ? 1.0f : 0.5f);
    a.w = a.w - spin * share_a;
    b.w = b.w + spin * (a_fixed ? 1.0f : (b_fixed ? 0.0f : 0.5f));
    StorePair(sides);
  }

  static Vec3 InvInertiaWorld(const detail::RigidPartConstants& c, bool fixed, const Rot3& r, Vec3 u) {
    if (fixed) return Vec3{};
    const Vec3 l = ApplyInverse(r, u);
    return Apply(r, Vec3{l.x * c.inv_inertia[0], l.y * c.inv_inertia[1], l.z * c.inv_inertia[2]});
  }

  // Runs `stage` (positions or velocities) over the ordered pairs: the small islands in
  // parallel, each one's pairs in order; then the big islands' colours one after another,
  // the pairs of a colour in parallel (they share no body), the overflow colour serially.
  template <class F>
  void ForEachPair(const F& stage) {
    auto islands = [&](int32_t b, int32_t e, uint32_t) {
      for (int32_t k = b; k < e; ++k)
        for (int32_t i = island_start[k]; i < island_start[k + 1]; ++i) stage(i);
    };
    ParallelFor(island_count, 1, islands);
    for (int32_t c = 0; c < kPairColours; ++c) {
      const int32_t begin = colour_start[c], end = colour_start[c + 1];
      if (begin == end) continue;
      if (c == kPairColours - 1) {
        for (int32_t i = begin; i < end; ++i) stage(i);
        continue;
      }
      auto task = [&](int32_t b, int32_t e, uint32_t) {
        for (int32_t i = begin + b; i < begin + e; ++i) stage(i);
      };
      ParallelFor(end - begin, 16, task);
    }
  }

  // Body frame of every part of a ragdoll lane from part frames.
  void RagdollPhase(int32_t substeps) {
    int32_t count = 0, enabled = 0;
    for (int32_t gi = 0; gi < static_cast<int32_t>(ragdoll_groups.size()); ++gi) {
      // Only blocks with enabled lanes are work: disabled instances cost the solver nothing.
      const int32_t blocks = (ragdoll_groups[gi].lanes_enabled + kBlockLanes - 1) / kBlockLanes;
      for (int32_t b = 0; b < blocks; ++b) ragdoll_work[count++] = {gi, b};
      enabled += ragdoll_groups[gi].lanes_enabled;
    }
    stats.bound_ragdolls = live_ragdolls;
    stats.disabled_ragdolls = live_ragdolls - enabled;
    stats.simulated_ragdolls = 0;
    if (count == 0) return;
    const int32_t ragdoll_steps = substeps * settings.ragdoll_substeps;
    stats.ragdoll_substeps = ragdoll_steps;
    detail::RigidSolveParams params;
    params.substeps = ragdoll_steps;
    params.iterations = settings.ragdoll_iterations;
    params.dt = static_cast<float>(clock.step()) / static_cast<float>(settings.ragdoll_substeps);
    params.gravity[0] = settings.gravity.x;
    params.gravity[1] = settings.gravity.y;
    params.gravity[2] = settings.gravity.z;
    params.plane_count = plane_count;
    params.shape_count = static_cast<int32_t>(static_shapes.size());
    params.shapes = static_shapes.data();
    params.contact_angular_damping = settings.ragdoll_contact_angular_damping;
    params.frame_seconds = static_cast<float>(clock.step()) * static_cast<float>(substeps);
    if (!static_mesh.empty()) {
      params.mesh_contact = &detail::MeshSphereContact;
      params.mesh = &static_mesh;
    }
    for (int32_t p = 0; p < plane_count; ++p)
      for (int32_t k = 0; k < 4; ++k) params.planes[p][k] = planes[p][k];
    const detail::RigidKernels* kernel_set = rigid_kernels;
    const float frame_seconds = static_cast<float>(clock.step()) * static_cast<float>(substeps);
    // 1. Kinematic roots follow their host frames.
    auto pre = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t i = begin; i < end; ++i) {
        RagdollGroup& g = ragdoll_groups[ragdoll_work[i].group];
        const detail::RigidBlockView view = g.View(ragdoll_work[i].block);
        for (int32_t l = 0; l < kBlockLanes; ++l) {
          const int32_t lane = ragdoll_work[i].block * kBlockLanes + l;
          const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
          if (owner < 0 || ragdolls[owner].kinematic_root == nullptr) continue;
          const Transform target = *ragdolls[owner].kinematic_root;
          if (!IsFinite(target)) continue;
          const Transform body = Compose(Transform{target.translation, Normalize(target.rotation), {1, 1, 1}}, g.body_in_part[0]);
          const float values[7] = {body.translation.x, body.translation.y, body.translation.z, body.rotation.x,
                                   body.rotation.y,    body.rotation.z,    body.rotation.w};
          bool moved = false;
          for (int32_t f = 0; f < 7; ++f) {
            float& field = view.Part(detail::kRbXx + f, 0)[l];
            moved = moved || std::fabs(field - values[f]) > 1e-6f;
            field = values[f];
          }
          // A moving kinematic root wakes (and unfreezes) its ragdoll.
          if (moved && ragdolls[owner].asleep) {
            ragdolls[owner].asleep = ragdolls[owner].frozen = false;
            ragdolls[owner].still_seconds = ragdolls[owner].slow_seconds = 0;
            view.Lane(detail::kAsleep)[l] = 0.0f;
          }
        }
      }
    };
    ParallelFor(count, 1, pre);
    // 2. The substeps: all at once per block when no two ragdolls can touch this frame;
    //    otherwise one at a time, each followed by the coloured pair contacts.
    stats.ragdoll_pairs = stats.dropped_ragdoll_pairs = 0;
    pair_count = 0;
    if (substeps > 0 && enabled > 1) RagdollBroadPhase(frame_seconds);
    if (pair_count > 0) {
      auto find = [&](int32_t begin, int32_t end, uint32_t) {
        for (int32_t i = begin; i < end; ++i) FindPairContacts(i, frame_seconds);
      };
      ParallelFor(pair_count, 64, find);
    }
    const int32_t calls = pair_count > 0 ? ragdoll_steps : (substeps > 0 ? 1 : 0);
    params.substeps = pair_count > 0 ? 1 : ragdoll_steps;
    // A kernel over every block: 0 the whole substeps, 1 positions, 2 velocities.
    auto run = [&](int32_t which) {
      auto task_fn = [&](int32_t begin, int32_t end, uint32_t) {
        for (int32_t i = begin; i < end; ++i) {
          RagdollGroup& g = ragdoll_groups[ragdoll_work[i].group];
          const detail::RigidBlockView view = g.View(ragdoll_work[i].block);
          detail::RigidSolveParams local = params;
          local.parts = g.constants.data();
          local.part_count = g.part_count;
          (which == 0 ? kernel_set->solve : (which == 1 ? kernel_set->positions : kernel_set->velocities))(&view, 1, local);
        }
      };
      ParallelFor(count, 1, task_fn);
    };
    const float h = params.dt;
    for (int32_t call = 0; call < calls; ++call) {
      if (pair_count == 0) {
        run(0);
        continue;
      }
      // XPBD order with the pairs inside the substep: positions (the kernel's, then the
      // pairs'), velocities from positions (the kernel's pass), the pairs' velocity pass.
      params.find_static_contacts = call == 0;
      run(1);
      ForEachPair([&](int32_t i) { PairPositions(i); });
      run(2);
      ForEachPair([&](int32_t i) { PairVelocities(i, h); });
    }
    // 3. Non-finite lanes are reset; sleep; part frames go to the host.
    auto task = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t i = begin; i < end; ++i) {
        RagdollGroup& g = ragdoll_groups[ragdoll_work[i].group];
        const detail::RigidBlockView view = g.View(ragdoll_work[i].block);
        int32_t resets = 0;
        for (int32_t l = 0; l < kBlockLanes; ++l) {
          const int32_t lane = ragdoll_work[i].block * kBlockLanes + l;
          const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
          if (owner < 0) continue;
          RagdollSlot& slot = ragdolls[owner];
          bool finite = true;
          for (int32_t j = 0; j < g.part_count && finite; ++j) {
            float sum = 0;
            for (int32_t f = 0; f < detail::kRigidFieldCount; ++f) sum += view.Part(f, j)[l] * 0.0f;
            finite = sum == 0.0f;
          }
          if (!finite) {
            // Back to the last pose written (the output holds it), at rest; the host's
            // motors and planar mode stay as they were.
            ++resets;
            Transform bodies[detail::kMaxRagdollParts];
            for (int32_t j = 0; j < g.part_count; ++j) bodies[j] = Compose(slot.output[j], g.body_in_part[j]);
            g.PlaceBodies(slot.lane, bodies, Vec3{}, Vec3{});
            continue;
          }
          if (!slot.asleep) {
            UpdateFrameSpeeds(slot, view, l, g, frame_seconds);
            UpdateSleep(slot, view, l, g, frame_seconds);
          }
          for (int32_t j = 0; j < g.part_count; ++j) {
            const Transform body{{view.Part(detail::kRbXx, j)[l], view.Part(detail::kRbXy, j)[l], view.Part(detail::kRbXz, j)[l]},
                                 {view.Part(detail::kRbQx, j)[l], view.Part(detail::kRbQy, j)[l], view.Part(detail::kRbQz, j)[l],
                                  view.Part(detail::kRbQw, j)[l]},
                                 {1, 1, 1}};
            slot.output[j] = Compose(body, Relative(g.body_in_part[j], Transform{}));
          }
        }
        ragdoll_resets[i] = resets;
      }
    };
    ParallelFor(count, 1, task);
    for (int32_t i = 0; i < count; ++i) stats.reset_non_finite += ragdoll_resets[i];
    int32_t asleep = 0, frozen = 0;
    for (const RagdollSlot& r : ragdolls) {
      if (!r.live || !r.enabled) continue;
      asleep += r.asleep ? 1 : 0;
      frozen += r.frozen ? 1 : 0;
    }
    stats.sleeping_ragdolls = asleep;
    stats.frozen_ragdolls = frozen;
    stats.simulated_ragdolls = enabled - asleep;
  }

  // The group of an archetype's instances with (kinematic) or without a kinematic root,
  // created on first use (bind time).
  int32_t FindOrAddRagdollGroup(int32_t archetype, bool kinematic) {
    for (int32_t i = 0; i < static_cast<int32_t>(ragdoll_groups.size()); ++i) {
      if (ragdoll_groups[i].archetype == archetype && ragdoll_groups[i].kinematic_root == kinematic) return i;
    }
    const detail::RagdollArchetype& a = ragdoll_archetypes[archetype];
    const auto n = static_cast<int32_t>(a.parts.size());
    RagdollGroup g;
    g.archetype = archetype;
    g.kinematic_root = kinematic;
    g.part_count = n;
    g.constants = RigidConstants(a, kinematic);
    g.self_pairs = a.self_collision_pairs;
    g.collision_group = a.collision_group;
    g.collision_mask = a.collision_mask;
    for (const detail::RigidPartArchetype& p : a.parts) {
      g.shapes.push_back(p.shape);
      g.shape_in_body.push_back(p.shape_in_body);
      std::vector<std::array<float, 4>> points;
      auto add = [&](Vec3 local, float radius) {
        const Vec3 body_point = TransformPoint(p.shape_in_body, local);
        points.push_back({body_point.x, body_point.y, body_point.z, radius});
      };
      ForEachShapeSample(p.shape, /*face_centres=*/true, add);
      g.pair_points.push_back(std::move(points));
      g.body_in_part.push_back(p.body_in_part);
      const Quat parent = p.parent >= 0 ? a.parts[p.parent].body_pose.rotation : Quat{};
      g.neutral_motor.push_back(Normalize(Conjugate(parent) * p.body_pose.rotation));
    }
    g.floats_per_block = detail::RigidFloatsPerBlock(n);
    ragdoll_groups.push_back(std::move(g));
    return static_cast<int32_t>(ragdoll_groups.size()) - 1;
  }

  // Grows group `gi`'s blocks to hold `lanes` lanes plus its reserve (never in Step), and
  // the per-block work arrays with them. New padding lanes hold the archetype's build pose.
  // The reserve keeps room for every instance that may move in later without allocating.
  void EnsureRagdollLanes(int32_t gi, int32_t lanes, bool with_reserve = true) {
    RagdollGroup& g = ragdoll_groups[gi];
    if (with_reserve) lanes += g.reserved;
    if (lanes <= static_cast<int32_t>(g.blocks.size()) * kBlockLanes) return;
    const detail::RagdollArchetype& a = ragdoll_archetypes[g.archetype];
    Transform bodies[detail::kMaxRagdollParts];
    for (int32_t j = 0; j < g.part_count; ++j) bodies[j] = a.parts[j].body_pose;
    while (static_cast<int32_t>(g.blocks.size()) * kBlockLanes < lanes) {
      g.blocks.emplace_back(g.floats_per_block);
      g.lane_owner.resize(g.blocks.size() * kBlockLanes, -1);
      const int32_t first = static_cast<int32_t>(g.blocks.size() - 1) * kBlockLanes;
      for (int32_t l = 0; l < kBlockLanes; ++l) g.SetLane(first + l, bodies, Vec3{}, Vec3{}, false);
    }
    int32_t total = 0;
    for (const RagdollGroup& other : ragdoll_groups) total += static_cast<int32_t>(other.blocks.size());
    ragdoll_work.resize(total);
    ragdoll_resets.resize(total);
  }

  // Lane bookkeeping. Swapping keeps every slot's lane index true.
  void SwapRagdollLanes(RagdollGroup& g, int32_t a, int32_t b) {
    g.SwapLanes(a, b);
    for (int32_t lane : {a, b}) {
      if (g.lane_owner[lane] >= 0) ragdolls[g.lane_owner[lane]].lane = lane;
    }
  }
  void EnableLane(RagdollSlot& slot) {
    RagdollGroup& g = ragdoll_groups[slot.group];
    if (slot.lane >= g.lanes_enabled) SwapRagdollLanes(g, slot.lane, g.lanes_enabled++);
    g.SetActiveFlag(slot.lane, true);
  }
  void DisableLane(RagdollSlot& slot) {
    RagdollGroup& g = ragdoll_groups[slot.group];
    if (slot.lane < g.lanes_enabled) SwapRagdollLanes(g, slot.lane, --g.lanes_enabled);
    g.SetActiveFlag(slot.lane, false);
  }
  // Takes the slot's lane out of its group (the last lane fills the hole).
  void RemoveLane(RagdollSlot& slot) {
    DisableLane(slot);
    RagdollGroup& g = ragdoll_groups[slot.group];
    const int32_t last = --g.lanes_used;
    SwapRagdollLanes(g, slot.lane, last);
    g.lane_owner[last] = -1;
    g.SetActiveFlag(last, false);
  }
  // Moves a ragdoll to another group of its archetype (a kinematic root on or off), state
  // and all. Allocates only when the target group has no lane reserved for it.
  void MoveRagdollToGroup(int32_t index, int32_t target) {
    RagdollSlot& slot = ragdolls[index];
    if (slot.group == target) return;
    EnsureRagdollLanes(target, ragdoll_groups[target].lanes_used + 1, false);
    RagdollGroup& to = ragdoll_groups[target];
    const int32_t lane = to.lanes_used++;
    to.CopyLaneFrom(ragdoll_groups[slot.group], slot.lane, lane);
    to.SetActiveFlag(lane, false);
    RemoveLane(slot);
    to.lane_owner[lane] = index;
    slot.group = target;
    slot.lane = lane;
    if (to.kinematic_root) {
      // A kinematic root does not move by itself: its stale velocities must not feed the
      // joints' velocity terms.
      const detail::RigidBlockView view = to.View(lane / kBlockLanes);
      for (int32_t f : {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz})
        view.Part(f, 0)[lane % kBlockLanes] = 0.0f;
    }
    if (slot.enabled) EnableLane(slot);
  }

  // Each part's speed over the frame: the lesser of its displacement since the last frame
  // (over the frame's time) and its velocity, for the centre and for the turn times the
  // part's extent. The velocity bounds it where the host placed the part (a teleport is
  // not speed), the displacement where contacts make the velocity go back and forth.
  static void UpdateFrameSpeeds(RagdollSlot& slot, const detail::RigidBlockView& view, int32_t l, const RagdollGroup& g,
                                float frame_seconds) {
    const float inv_t = frame_seconds > 0 ? 1.0f / frame_seconds : 0.0f;
    for (int32_t j = 0; j < g.part_count; ++j) {
      const BodyState b = ReadBody(view, l, j);
      const Quat d = b.q * Conjugate(slot.frame_q[j]);
      const float turn = 2.0f * std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);  // ~ angle for small turns
      slot.frame_speed[j] = std::min(Length(b.x - slot.frame_x[j]) * inv_t, Length(b.v)) +
                            std::min(turn * inv_t, Length(b.w)) * g.constants[j].extent;
      slot.frame_x[j] = b.x;
      slot.frame_q[j] = b.q;
    }
  }

  // After a step: sleep when no point of any part moved farther than sleep_speed x
  // sleep_seconds from where it was when the current window opened, for sleep_seconds (an
  // average speed below sleep_speed: a pile that jitters in place sleeps, one that still
  // slides does not); freeze when asked. still_seconds = 0 (set wherever a ragdoll is
  // woken or moved) opens a new window here.
  void UpdateSleep(RagdollSlot& slot, const detail::RigidBlockView& view, int32_t l, const RagdollGroup& g,
                   float frame_seconds) {
    slot.age_seconds += frame_seconds;
    const float limit = settings.ragdoll_sleep_speed;
    const float tolerance = limit * settings.ragdoll_sleep_seconds;
    auto snapshot = [&] {
      for (int32_t j = 0; j < g.part_count; ++j) {
        slot.sleep_x[j] = Vec3{view.Part(detail::kRbXx, j)[l], view.Part(detail::kRbXy, j)[l], view.Part(detail::kRbXz, j)[l]};
        slot.sleep_q[j] = Quat{view.Part(detail::kRbQx, j)[l], view.Part(detail::kRbQy, j)[l], view.Part(detail::kRbQz, j)[l],
                               view.Part(detail::kRbQw, j)[l]};
      }
      slot.still_seconds = 1e-30f;  // the window is open
    };
    if (!(limit > 0) || !slot.can_sleep) {
      slot.still_seconds = slot.slow_seconds = 0;
    } else if (slot.still_seconds <= 0.0f) {
      snapshot();
    } else {
      float moved = 0;  // the farthest any point went: centre displacement + turn x extent
      for (int32_t j = 0; j < g.part_count; ++j) {
        const Vec3 x{view.Part(detail::kRbXx, j)[l], view.Part(detail::kRbXy, j)[l], view.Part(detail::kRbXz, j)[l]};
        const Quat q{view.Part(detail::kRbQx, j)[l], view.Part(detail::kRbQy, j)[l], view.Part(detail::kRbQz, j)[l],
                     view.Part(detail::kRbQw, j)[l]};
        const Quat d = q * Conjugate(slot.sleep_q[j]);
        const float turn = 2.0f * std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);  // ~ angle for small turns
        moved = std::max(moved, Length(x - slot.sleep_x[j]) + turn * g.constants[j].extent);
      }
      if (moved > tolerance) {
        snapshot();
      } else {
        slot.still_seconds += frame_seconds;
      }
    }
    // Or every point slower than sleep_speed right now, for sleep_seconds in a row (a body
    // creeping smoothly to rest gets there sooner this way).
    float fastest = 0;
    for (int32_t j = 0; j < g.part_count; ++j) {
      const Vec3 v{view.Part(detail::kRbVx, j)[l], view.Part(detail::kRbVy, j)[l], view.Part(detail::kRbVz, j)[l]};
      const Vec3 w{view.Part(detail::kRbWx, j)[l], view.Part(detail::kRbWy, j)[l], view.Part(detail::kRbWz, j)[l]};
      fastest = std::max(fastest, Length(v) + Length(w) * g.constants[j].extent);
    }
    slot.slow_seconds = limit > 0 && slot.can_sleep && fastest < limit ? slot.slow_seconds + frame_seconds : 0.0f;
    // Settling (WorldSettings::ragdoll_settle_damping), on frame speeds.
    float fastest_frame = 0;
    for (int32_t j = 0; j < g.part_count; ++j) fastest_frame = std::max(fastest_frame, slot.frame_speed[j]);
    slot.calm_seconds =
        limit > 0 && slot.can_sleep && fastest_frame < 4.0f * limit ? slot.calm_seconds + frame_seconds : 0.0f;
    view.Lane(detail::kSettleDamping)[l] =
        slot.calm_seconds >= settings.ragdoll_sleep_seconds ? settings.ragdoll_settle_damping : 0.0f;
    const bool force_freeze = slot.age_seconds >= slot.freeze_after_seconds;
    if (slot.still_seconds >= settings.ragdoll_sleep_seconds || slot.slow_seconds >= settings.ragdoll_sleep_seconds ||
        force_freeze) {
      slot.asleep = true;
      slot.frozen = force_freeze || slot.freeze_when_asleep;
      view.Lane(detail::kAsleep)[l] = 1.0f;
      slot.calm_seconds = 0;  // woken, it starts settling afresh
      view.Lane(detail::kSettleDamping)[l] = 0.0f;
      for (int32_t j = 0; j < g.part_count; ++j) {
        for (int32_t f : {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz})
          view.Part(f, j)[l] = 0.0f;
      }
    }
  }

  const FrameStats& Step(float dt) {
    detail::DenormalGuard guard;
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t frame = stats.frame + 1;
    stats = FrameStats{};
    stats.frame = frame;
    stats.bound_chains = static_cast<int32_t>(live_chains.size());
    stats.bound_pendulums = static_cast<int32_t>(live_pendulums.size());
    const detail::FixedClock::Tick tick = clock.Advance(dt);
    stats.dt_rejected = tick.rejected;
    stats.dropped_seconds = static_cast<float>(tick.dropped_seconds);
    if (tick.rejected) {
      // Nothing steps and nothing is written; the host's buffers keep the last frame.
      stats.sleeping_chains = stats.bound_chains;
      stats.times.total_ms = MsSince(t0);
      Finish(t0);
      return stats;
    }
    stats.substeps = tick.substeps;
    if (tick.substeps > 0) {
      frame_wind = wind_sampler.sample != nullptr
                       ? wind_sampler.sample(clock.time(), wind_sampler.user)
                       : settings.ambient_wind * detail::GustFactor(settings.wind_seed, clock.time());
      if (!IsFinite(frame_wind)) frame_wind = Vec3{};
    }
    // Ragdolls (and the characters on them) first: chains bound on a ragdolled bone then
    // swing from this frame's pose, not the last one's.
    auto t = std::chrono::steady_clock::now();
    characters->BeforePhysics(dt, static_cast<float>(clock.step()) * static_cast<float>(tick.substeps), clock.time(),
                              settings.max_active_characters);
    RagdollPhase(tick.substeps);
    characters->AfterPhysics();
    stats.bound_characters = characters->BoundCount();
    stats.active_characters = characters->ActiveCount();
    stats.dropped_character_events = characters->TakeDroppedEvents();
    stats.snapped_bad_input += characters->BadInputs();
    stats.times.ragdoll_ms = MsSince(t);
    t = std::chrono::steady_clock::now();
    Gather();
    stats.times.gather_ms = MsSince(t);
    t = std::chrono::steady_clock::now();
    Budget();
    stats.times.budget_ms = MsSince(t);
    t = std::chrono::steady_clock::now();
    Pose();
    stats.times.pose_ms = MsSince(t);
    t = std::chrono::steady_clock::now();
    Solve(tick.substeps);
    stats.times.solve_ms = MsSince(t);
    t = std::chrono::steady_clock::now();
    Writeback();
    stats.times.writeback_ms = MsSince(t);
    for (int32_t i = 0; i < work_count; ++i) {
      stats.snapped_bad_input += work_counters[i].bad_input;
      stats.reset_non_finite += work_counters[i].reset;
      stats.snapped_teleport += work_counters[i].teleport;
    }
    t = std::chrono::steady_clock::now();
    Pendulums(tick.substeps);
    stats.times.pendulum_ms = MsSince(t);
    stats.simulated_instance_substeps =
        static_cast<int64_t>(stats.simulated_chains + stats.simulated_pendulums) * tick.substeps;
    stats.times.total_ms = MsSince(t0);
    Finish(t0);
    return stats;
  }

  void Finish(std::chrono::steady_clock::time_point t0) {
    if (trace != nullptr) {
      trace->WriteFrame(stats, std::chrono::duration<double, std::micro>(t0 - epoch).count());
    }
  }

  ChainSlot* FindChain(ChainId id) {
    if (id.generation == 0 || id.index >= chains.size()) return nullptr;
    ChainSlot& s = chains[id.index];
    return s.live && s.generation == id.generation ? &s : nullptr;
  }
  PendulumSlot* FindPendulum(PendulumId id) {
    if (id.generation == 0 || id.index >= pendulums.size()) return nullptr;
    PendulumSlot& s = pendulums[id.index];
    return s.live && s.generation == id.generation ? &s : nullptr;
  }
};

// ---- World ----

World::World(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->characters = std::make_unique<detail::CharacterSystem>(*this);
  impl_->characters->SetMaxActive(impl_->settings.max_active_characters);
}
World::~World() = default;

Result<std::unique_ptr<World>> World::Create(const WorldSettings& s) {
  if (!IsFinite(s.gravity)) return Fail(ErrorCode::kNotFinite, -1, "gravity", "gravity is not finite");
  if (!IsFinite(s.ambient_wind)) return Fail(ErrorCode::kNotFinite, -1, "ambient_wind", "ambient_wind is not finite");
  if (!(s.fixed_hz >= 10.0f && s.fixed_hz <= 1000.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "fixed_hz", "fixed_hz must be within [10, 1000]");
  if (s.max_substeps < 1 || s.max_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "max_substeps", "max_substeps must be within [1, 64]");
  if (Error e = CheckPositive(s.max_distance, -1, "max_distance", true); e.code != ErrorCode::kNone) return e;
  if (Error e = CheckPositive(s.pendulum_max_distance, -1, "pendulum_max_distance", true); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPositive(s.teleport_distance, -1, "teleport_distance", true); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPositive(s.teleport_angle_degrees, -1, "teleport_angle_degrees", true);
      e.code != ErrorCode::kNone)
    return e;
  if (s.max_chains < 0) return Fail(ErrorCode::kOutOfRange, -1, "max_chains", "max_chains must be >= 0");
  if (s.ragdoll_substeps < 1 || s.ragdoll_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_substeps", "ragdoll_substeps must be within [1, 64]");
  if (!(s.ragdoll_sleep_speed >= 0) || !std::isfinite(s.ragdoll_sleep_speed))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_sleep_speed", "ragdoll_sleep_speed must be finite and >= 0");
  if (!(s.ragdoll_contact_angular_damping >= 0 && s.ragdoll_contact_angular_damping <= 1000))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_contact_angular_damping", "must be within [0, 1000]");
  if (!(s.ragdoll_sleep_seconds > 0) || !std::isfinite(s.ragdoll_sleep_seconds))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_sleep_seconds", "ragdoll_sleep_seconds must be positive");
  if (!(s.ragdoll_settle_damping >= 0.0f && s.ragdoll_settle_damping <= 100.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_settle_damping", "ragdoll_settle_damping must be within [0, 100] 1/s");
  if (s.ragdoll_iterations < 1 || s.ragdoll_iterations > 16)
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_iterations", "ragdoll_iterations must be within [1, 16]");
  if ((s.tasks.enqueue == nullptr) != (s.tasks.finish == nullptr))
    return Fail(ErrorCode::kOutOfRange, -1, "tasks", "tasks.enqueue and tasks.finish must both be set or both null");
  if (s.tasks.enqueue != nullptr && s.tasks.worker_count < 1)
    return Fail(ErrorCode::kOutOfRange, -1, "tasks.worker_count", "tasks.worker_count must be >= 1");
  if (s.max_active_characters < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "max_active_characters", "max_active_characters must be >= 0");
  const Isa isa = detail::ResolveIsa(s.isa);
  if (!IsIsaSupported(isa)) {
    return Fail(ErrorCode::kOutOfRange, -1, "isa",
                std::string("this CPU cannot run the ") + ToString(isa) + " kernels");
  }
  auto impl = std::make_unique<Impl>(s);
  impl->isa = isa;
  impl->kernels = &detail::ChainKernelsFor(isa);
  impl->rigid_kernels = &detail::RigidKernelsFor(isa);
  return std::unique_ptr<World>(new World(std::move(impl)));
}

Result<ChainArchetypeId> World::BuildChainArchetype(const ChainArchetypeSettings& settings) {
  ArchetypeSlot slot;
  if (Error e = detail::BuildChainArchetype(settings, &slot.archetype); e.code != ErrorCode::kNone) return e;
  auto found = impl_->group_by_topology.find(slot.archetype.topology);
  if (found == impl_->group_by_topology.end()) {
    slot.group = impl_->NewGroup(slot.archetype);
    impl_->group_by_topology.emplace(slot.archetype.topology, slot.group);
  } else {
    slot.group = found->second;
  }
  impl_->archetypes.push_back(std::move(slot));
  return ChainArchetypeId{static_cast<uint32_t>(impl_->archetypes.size() - 1), 1};
}

Result<RagdollArchetypeId> World::BuildRagdollArchetype(const RagdollSettings& settings) {
  detail::RagdollArchetype archetype;
  if (Error e = detail::BuildRagdollArchetype(settings, &archetype); e.code != ErrorCode::kNone) return e;
  impl_->ragdoll_archetypes.push_back(std::move(archetype));
  return RagdollArchetypeId{static_cast<uint32_t>(impl_->ragdoll_archetypes.size() - 1), 1};
}

int32_t World::RagdollPartCount(RagdollArchetypeId id) const {
  if (id.generation != 1 || id.index >= impl_->ragdoll_archetypes.size()) return 0;
  return static_cast<int32_t>(impl_->ragdoll_archetypes[id.index].parts.size());
}

Error World::GetRagdollPartInfo(RagdollArchetypeId id, int32_t part, RagdollPartInfo* out) const {
  if (id.generation != 1 || id.index >= impl_->ragdoll_archetypes.size())
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  const detail::RagdollArchetype& a = impl_->ragdoll_archetypes[id.index];
  if (part < 0 || part >= static_cast<int32_t>(a.parts.size()) || out == nullptr)
    return Fail(ErrorCode::kBadReference, part, "part", "no such part (or a null output)");
  const detail::RigidPartArchetype& p = a.parts[part];
  out->mass = p.mass;
  out->principal_inertia = p.inertia;
  out->body_pose = p.body_pose;
  out->volume = p.volume;
  return {};
}

Error World::BuildStaticWorld(const StaticWorldSettings& settings) {
  if (static_cast<int32_t>(settings.planes.size()) > detail::kMaxStaticPlanes)
    return Fail(ErrorCode::kCapacity, -1, "planes", "at most 8 static planes");
  if (static_cast<int32_t>(settings.spheres.size() + settings.capsules.size() + settings.boxes.size()) >
      detail::kMaxStaticShapes)
    return Fail(ErrorCode::kCapacity, -1, "shapes", "at most 64 static spheres, capsules and boxes together");
  for (std::size_t i = 0; i < settings.planes.size(); ++i) {
    const StaticPlane& p = settings.planes[i];
    if (!IsFinite(p.normal) || !std::isfinite(p.offset))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "planes", "a plane is not finite");
    if (std::fabs(Length(p.normal) - 1.0f) > 1e-3f)
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "planes", "a plane's normal must be unit");
  }
  std::vector<detail::StaticShape> shapes;
  auto copy3 = [](float* d, Vec3 v) { d[0] = v.x, d[1] = v.y, d[2] = v.z; };
  for (std::size_t i = 0; i < settings.spheres.size(); ++i) {
    const StaticSphere& s = settings.spheres[i];
    if (!IsFinite(s.centre) || !std::isfinite(s.radius))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "spheres", "a sphere is not finite");
    if (!(s.radius > 0)) return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "spheres", "a sphere's radius must be positive");
    detail::StaticShape out;
    out.kind = detail::kStaticSphere;
    copy3(out.a, s.centre);
    out.radius = s.radius;
    shapes.push_back(out);
  }
  for (std::size_t i = 0; i < settings.capsules.size(); ++i) {
    const StaticCapsule& c = settings.capsules[i];
    if (!IsFinite(c.a) || !IsFinite(c.b) || !std::isfinite(c.radius))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "capsules", "a capsule is not finite");
    if (!(c.radius > 0)) return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "capsules", "a capsule's radius must be positive");
    detail::StaticShape out;
    out.kind = detail::kStaticCapsule;
    copy3(out.a, c.a);
    copy3(out.b, c.b);
    out.radius = c.radius;
    shapes.push_back(out);
  }
  for (std::size_t i = 0; i < settings.boxes.size(); ++i) {
    const StaticBox& b = settings.boxes[i];
    if (!IsFinite(b.pose.translation) || !IsFinite(b.pose.rotation) || !IsFinite(b.half_extents))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "boxes", "a box is not finite");
    if (!(b.half_extents.x > 0 && b.half_extents.y > 0 && b.half_extents.z > 0))
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "boxes", "a box's half extents must be positive");
    if (std::fabs(std::sqrt(Dot(b.pose.rotation, b.pose.rotation)) - 1.0f) > 1e-3f)
      return Fail(ErrorCode::kNotUnitRotation, static_cast<int32_t>(i), "boxes", "a box's rotation must be unit");
    detail::StaticShape out;
    out.kind = detail::kStaticBox;
    copy3(out.a, b.pose.translation);
    const Quat q = Normalize(b.pose.rotation);
    out.q[0] = q.x, out.q[1] = q.y, out.q[2] = q.z, out.q[3] = q.w;
    copy3(out.half, b.half_extents);
    shapes.push_back(out);
  }
  // Heightfields and meshes: triangles for one BVH; `source` numbers them after the boxes.
  std::vector<detail::MeshTriangle> triangles;
  const auto first_source = static_cast<int32_t>(settings.planes.size() + shapes.size());
  auto add_triangle = [&](Vec3 a, Vec3 b, Vec3 c, int32_t source) {
    const Vec3 n = Cross(b - a, c - a);
    const float len = Length(n);
    if (!(len > 1e-12f)) return false;
    triangles.push_back(detail::MeshTriangle{a, b, c, n * (1.0f / len), source});
    return true;
  };
  for (std::size_t h = 0; h < settings.heightfields.size(); ++h) {
    const StaticHeightfield& f = settings.heightfields[h];
    const auto item = static_cast<int32_t>(h);
    if (f.samples_x < 2 || f.samples_z < 2)
      return Fail(ErrorCode::kOutOfRange, item, "heightfields", "a heightfield needs at least 2 x 2 samples");
    if (static_cast<int64_t>(f.heights.size()) != static_cast<int64_t>(f.samples_x) * f.samples_z)
      return Fail(ErrorCode::kBadReference, item, "heightfields",
                  "heightfield " + std::to_string(h) + " has " + std::to_string(f.heights.size()) + " heights for " +
                      std::to_string(f.samples_x) + " x " + std::to_string(f.samples_z) + " samples");
    if (!IsFinite(f.origin) || !(f.spacing > 0) || !std::isfinite(f.spacing))
      return Fail(ErrorCode::kOutOfRange, item, "heightfields", "a heightfield's origin must be finite and spacing positive");
    for (float v : f.heights) {
      if (!std::isfinite(v)) return Fail(ErrorCode::kNotFinite, item, "heightfields", "a height is not finite");
    }
    auto at = [&](int32_t i, int32_t k) {
      return f.origin + Vec3{static_cast<float>(i) * f.spacing, f.heights[static_cast<std::size_t>(k) * f.samples_x + i], static_cast<float>(k) * f.spacing};
    };
    for (int32_t k = 0; k + 1 < f.samples_z; ++k) {
      for (int32_t i = 0; i + 1 < f.samples_x; ++i) {
        // Counter-clockwise seen from above (+y): normals point up.
        add_triangle(at(i, k), at(i, k + 1), at(i + 1, k), first_source + item);
        add_triangle(at(i + 1, k), at(i, k + 1), at(i + 1, k + 1), first_source + item);
      }
    }
  }
  for (std::size_t m = 0; m < settings.meshes.size(); ++m) {
    const StaticTriangleMesh& mesh = settings.meshes[m];
    const auto item = static_cast<int32_t>(m);
    if (mesh.indices.size() % 3 != 0 || mesh.indices.empty())
      return Fail(ErrorCode::kOutOfRange, item, "meshes", "a mesh needs three indices per triangle");
    for (const Vec3& v : mesh.vertices) {
      if (!IsFinite(v)) return Fail(ErrorCode::kNotFinite, item, "meshes", "a mesh vertex is not finite");
    }
    int32_t kept = 0;
    for (std::size_t t = 0; t < mesh.indices.size(); t += 3) {
      for (int k = 0; k < 3; ++k) {
        if (mesh.indices[t + k] >= mesh.vertices.size())
          return Fail(ErrorCode::kBadReference, item, "meshes",
                      "mesh " + std::to_string(m) + " index " + std::to_string(t + k) + " = " +
                          std::to_string(mesh.indices[t + k]) + " is outside its " +
                          std::to_string(mesh.vertices.size()) + " vertices");
      }
      kept += add_triangle(mesh.vertices[mesh.indices[t]], mesh.vertices[mesh.indices[t + 1]],
                           mesh.vertices[mesh.indices[t + 2]],
                           first_source + static_cast<int32_t>(settings.heightfields.size()) + item)
                  ? 1
                  : 0;
    }
    if (kept == 0)
      return Fail(ErrorCode::kOutOfRange, item, "meshes", "mesh " + std::to_string(m) + " has only degenerate triangles");
  }
  impl_->static_mesh.Build(std::move(triangles));
  impl_->static_shapes = std::move(shapes);
  impl_->plane_count = static_cast<int32_t>(settings.planes.size());
  for (int32_t i = 0; i < impl_->plane_count; ++i) {
    const StaticPlane& p = settings.planes[i];
    impl_->planes[i][0] = p.normal.x;
    impl_->planes[i][1] = p.normal.y;
    impl_->planes[i][2] = p.normal.z;
    impl_->planes[i][3] = p.offset;
  }
  return {};
}

namespace {

// The lane-uniform constants of an archetype's parts, for the rigid kernels.
std::vector<detail::RigidPartConstants> RigidConstants(const detail::RagdollArchetype& a, bool kinematic_root) {
  std::vector<detail::RigidPartConstants> out(a.parts.size());
  for (std::size_t j = 0; j < a.parts.size(); ++j) {
    const detail::RigidPartArchetype& p = a.parts[j];
    detail::RigidPartConstants& c = out[j];
    c.parent = p.parent;
    const bool kinematic = kinematic_root && j == 0;
    c.inv_mass = kinematic ? 0.0f : p.inv_mass;
    c.inv_inertia[0] = kinematic ? 0.0f : p.inv_inertia.x;
    c.inv_inertia[1] = kinematic ? 0.0f : p.inv_inertia.y;
    c.inv_inertia[2] = kinematic ? 0.0f : p.inv_inertia.z;
    c.gravity_factor = p.gravity_factor;
    c.linear_damping = p.linear_damping;
    c.angular_damping = p.angular_damping;
    c.max_linear_speed = p.max_linear_speed;
    c.max_angular_speed = p.max_angular_speed;
    c.friction = p.friction;
    c.restitution = p.restitution;
    auto add_point = [&](Vec3 shape_local, float radius) {
      const Vec3 b = TransformPoint(p.shape_in_body, shape_local);
      c.points[c.point_count][0] = b.x;
      c.points[c.point_count][1] = b.y;
      c.points[c.point_count][2] = b.z;
      c.points[c.point_count][3] = radius;
      c.extent = std::max(c.extent, Length(b) + radius);
      ++c.point_count;
    };
    ForEachShapeSample(p.shape, /*face_centres=*/false, add_point);
    const detail::RigidJointArchetype& jt = p.joint;
    c.joint_type = jt.type == JointType::kHinge ? 1 : 0;
    const Vec3 ap = jt.anchor_in_parent, ac = jt.anchor_in_child;
    c.anchor_parent[0] = ap.x, c.anchor_parent[1] = ap.y, c.anchor_parent[2] = ap.z;
    c.anchor_child[0] = ac.x, c.anchor_child[1] = ac.y, c.anchor_child[2] = ac.z;
    const Quat fp = jt.frame_in_parent, fc = jt.frame_in_child;
    c.frame_parent[0] = fp.x, c.frame_parent[1] = fp.y, c.frame_parent[2] = fp.z, c.frame_parent[3] = fp.w;
    c.frame_child[0] = fc.x, c.frame_child[1] = fc.y, c.frame_child[2] = fc.z, c.frame_child[3] = fc.w;
    c.normal_half_cone = jt.normal_half_cone;
    c.plane_half_cone = jt.plane_half_cone;
    c.twist_min = jt.twist_min;
    c.twist_max = jt.twist_max;
    c.hinge_min = jt.hinge_min;
    c.hinge_max = jt.hinge_max;
    c.friction_torque = jt.friction_torque;
    c.motor_omega = 2.0f * 3.14159265f * jt.motor.frequency_hz;
    c.motor_damping_ratio = jt.motor.damping_ratio;
    c.motor_max_torque = jt.motor.max_torque_per_kg * p.mass;
  }
  // A limb-inertia motor holds the whole limb below its joint (an arm held out against
  // gravity is the upper arm, forearm and hand): its spring's inertia is the subtree's
  // about the joint (parallel-axis theorem, principal inertias averaged), not the child's
  // alone (MotorSettings::limb_inertia).
  const auto n = static_cast<int32_t>(a.parts.size());
  auto mean_inertia = [](const detail::RigidPartArchetype& p) { return (p.inertia.x + p.inertia.y + p.inertia.z) / 3.0f; };
  for (int32_t j = 1; j < n; ++j) {
    const detail::RigidPartArchetype& child = a.parts[j];
    if (!child.joint.motor.limb_inertia) continue;
    const Vec3 anchor = TransformPoint(child.body_pose, child.joint.anchor_in_child);
    float limb = 0;
    for (int32_t k = j; k < n; ++k) {
      int32_t at = k;
      while (at > j) at = a.parts[at].parent;
      if (at != j) continue;  // not in j's subtree
      limb += mean_inertia(a.parts[k]) + a.parts[k].mass * LengthSquared(a.parts[k].body_pose.translation - anchor);
    }
    const float own = mean_inertia(child);
    out[j].motor_stiffness_scale = own > 0 ? std::max(limb / own, 1.0f) : 1.0f;
  }
  return out;
}

}  // namespace

Result<RagdollId> World::BindRagdoll(const RagdollBinding& b) {
  Impl& w = *impl_;
  if (b.archetype.generation != 1 || b.archetype.index >= w.ragdoll_archetypes.size())
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  const detail::RagdollArchetype& a = w.ragdoll_archetypes[b.archetype.index];
  const auto n = static_cast<int32_t>(a.parts.size());
  if (b.output_parts.data() == nullptr || static_cast<int32_t>(b.output_parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "output_parts",
                "output_parts needs " + std::to_string(n) + " transforms, got " + std::to_string(b.output_parts.size()));
  if (!b.start_parts.empty() && static_cast<int32_t>(b.start_parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "start_parts", "start_parts is shorter than the part count");
  if (auto it = w.ragdoll_by_output.find(b.output_parts.data()); it != w.ragdoll_by_output.end())
    return RagdollId{static_cast<uint32_t>(it->second), w.ragdolls[it->second].generation};
  if (!IsFinite(b.placement) || !IsFinite(b.linear_velocity) || !IsFinite(b.angular_velocity))
    return Fail(ErrorCode::kNotFinite, -1, "placement", "placement or the start velocities are not finite");
  for (int32_t j = 0; j < static_cast<int32_t>(b.start_parts.size()) && j < n; ++j) {
    if (!IsFinite(b.start_parts[j]))
      return Fail(ErrorCode::kNotFinite, j, "start_parts", "start_parts[" + std::to_string(j) + "] is not finite");
  }
  if (!IsFinite(b.planar_normal) || (!(b.planar_normal == Vec3{}) && std::fabs(Length(b.planar_normal) - 1.0f) > 1e-3f))
    return Fail(ErrorCode::kOutOfRange, -1, "planar_normal", "planar_normal must be zero (3D) or a unit vector");
  if (std::isnan(b.freeze_after_seconds) || b.freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  if (b.kinematic_root != nullptr && !IsFinite(*b.kinematic_root))
    return Fail(ErrorCode::kNotFinite, -1, "kinematic_root", "the kinematic root frame is not finite at bind");
  const bool kinematic = b.kinematic_root != nullptr;
  const int32_t gi = w.FindOrAddRagdollGroup(static_cast<int32_t>(b.archetype.index), kinematic);
  RagdollGroup& g = w.ragdoll_groups[gi];
  // Body poses to start from.
  Transform bodies[detail::kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j) {
    // A part's frame in the build pose is its body pose times the inverse body offset.
    const Transform part =
        b.start_parts.empty()
            ? Compose(b.placement, Compose(a.parts[j].body_pose, Relative(a.parts[j].body_in_part, Transform{})))
            : b.start_parts[j];
    bodies[j] = Compose(Transform{part.translation, Normalize(part.rotation), {1, 1, 1}}, a.parts[j].body_in_part);
  }
  // Capacity: one more lane (blocks grow here, never in Step).
  w.EnsureRagdollLanes(gi, g.lanes_used + 1);
  int32_t index;
  if (!w.free_ragdolls.empty()) {
    index = w.free_ragdolls.back();
    w.free_ragdolls.pop_back();
  } else {
    index = static_cast<int32_t>(w.ragdolls.size());
    w.ragdolls.emplace_back();
  }
  RagdollSlot& slot = w.ragdolls[index];
  slot.live = true;
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
  if (!(b.planar_normal == Vec3{})) g.SetPlanar(slot.lane, Normalize3(b.planar_normal));
  if (slot.enabled) w.EnableLane(slot);
  for (int32_t j = 0; j < n; ++j) slot.output[j] = Compose(bodies[j], Relative(a.parts[j].body_in_part, Transform{}));
  w.ragdoll_by_output.emplace(b.output_parts.data(), index);
  ++w.live_ragdolls;
  w.total_parts += n;
  w.pair_bodies.resize(w.total_parts);
  w.broad.resize(w.total_parts);
  w.pair_motion.resize(w.total_parts);
  w.ragdoll_boxes.resize(w.ragdolls.size());
  w.box_order.resize(w.ragdolls.size());
  w.near_a.resize(detail::kMaxRagdollParts);
  w.near_b.resize(detail::kMaxRagdollParts);
  w.body_colours.resize(w.total_parts);
  w.part_pairs.resize(static_cast<std::size_t>(w.total_parts) * kPairsPerPart);
  w.ordered_pairs.resize(w.part_pairs.size());
  w.island_parent.resize(w.ragdolls.size());
  w.island_size.resize(w.ragdolls.size());
  w.island_fill.resize(w.ragdolls.size());
  w.island_start.resize(w.ragdolls.size() + 1);
  w.pair_contacts.resize(w.part_pairs.size() * kContactsPerPair);
  w.pair_contact_count.resize(w.part_pairs.size());
  w.pair_touching.resize(w.part_pairs.size());
  return RagdollId{static_cast<uint32_t>(index), slot.generation};
}

Error World::UnbindRagdoll(RagdollId id) {
  Impl& w = *impl_;
  if (id.generation == 0 || id.index >= w.ragdolls.size() || !w.ragdolls[id.index].live ||
      w.ragdolls[id.index].generation != id.generation)
    return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& slot = w.ragdolls[id.index];
  w.RemoveLane(slot);
  w.ragdoll_by_output.erase(slot.output);
  slot.live = false;
  slot.generation = slot.generation == UINT32_MAX ? 1 : slot.generation + 1;
  w.free_ragdolls.push_back(static_cast<int32_t>(id.index));
  --w.live_ragdolls;
  w.total_parts -= slot.part_count;
  return {};
}

Error World::SetRagdollEnabled(RagdollId id, bool enabled) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  Impl& w = *impl_;
  RagdollSlot& slot = w.ragdolls[id.index];
  if (slot.enabled == enabled) return {};
  slot.enabled = enabled;
  if (enabled) {
    w.EnableLane(slot);
    slot.asleep = slot.frozen = false;
    slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;
    w.ragdoll_groups[slot.group].View(slot.lane / kBlockLanes).Lane(detail::kAsleep)[slot.lane % kBlockLanes] = 0.0f;
  } else {
    w.DisableLane(slot);
  }
  return {};
}

Error World::SetRagdollSleeping(RagdollId id, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  if (std::isnan(freeze_after_seconds) || freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  RagdollSlot& slot = impl_->ragdolls[id.index];
  if (!can_sleep && slot.asleep) WakeRagdoll(id);
  if (can_sleep && !slot.can_sleep) slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;  // clocks restart
  slot.can_sleep = can_sleep;
  slot.freeze_when_asleep = freeze_when_asleep;
  slot.freeze_after_seconds = freeze_after_seconds;
  return {};
}

// Characters: the system does the work (kernel/character/character_system.cpp).
Result<CharacterArchetypeId> World::BuildCharacterArchetype(const CharacterSettings& settings) {
  return impl_->characters->BuildArchetype(settings);
}
int32_t World::CharacterPartCount(CharacterArchetypeId id) const {
  const detail::CharacterArchetype* a = impl_->characters->Archetype(id);
  return a != nullptr ? static_cast<int32_t>(a->parts.size()) : 0;
}
Error World::GetCharacterPartInfo(CharacterArchetypeId id, int32_t part, CharacterPartInfo* out) const {
  const detail::CharacterArchetype* a = impl_->characters->Archetype(id);
  if (a == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null or stale");
  if (part < 0 || part >= static_cast<int32_t>(a->parts.size())) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  *out = a->parts[part];
  return {};
}
int32_t World::FindCharacterPart(CharacterArchetypeId id, std::string_view name) const {
  const detail::CharacterArchetype* a = impl_->characters->Archetype(id);
  if (a == nullptr) return -1;
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (a->parts[j].name == name) return j;
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (a->bone_names[a->parts[j].bone] == name) return j;
  return -1;
}
Result<CharacterId> World::BindCharacter(const CharacterBinding& binding) { return impl_->characters->Bind(binding); }
Error World::UnbindCharacter(CharacterId id) { return impl_->characters->Unbind(id); }
bool World::IsValid(CharacterId id) const { return impl_->characters->IsValid(id); }
bool World::ActivateCharacter(CharacterId id, const CharacterActivateOptions& options) {
  return impl_->characters->Activate(id, options);
}
Error World::DeactivateCharacter(CharacterId id, float blend_seconds) { return impl_->characters->Deactivate(id, blend_seconds); }
Error World::SetCharacterStrength(CharacterId id, float strength) { return impl_->characters->SetStrength(id, strength); }
Error World::SetCharacterAnchored(CharacterId id, bool anchored) { return impl_->characters->SetAnchored(id, anchored); }
bool World::HitCharacter(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point, const CharacterHitOptions& options) {
  return impl_->characters->Hit(id, part, impulse, world_point, options);
}
Error World::GoLimp(CharacterId id, float seconds) { return impl_->characters->GoLimp(id, seconds); }
Error World::ApplyCharacterImpulse(CharacterId id, Vec3 impulse) { return impl_->characters->ApplyImpulse(id, impulse); }
Error World::ApplyCharacterPartImpulse(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  return impl_->characters->ApplyPartImpulse(id, part, impulse, world_point);
}
Error World::GetCharacterState(CharacterId id, CharacterState* out) const { return impl_->characters->GetState(id, out); }
Error World::GetCharacterRecoveryRoot(CharacterId id, float leg_room, Transform* out) const {
  return impl_->characters->GetRecoveryRoot(id, leg_room, out);
}
RagdollId World::CharacterRagdoll(CharacterId id) const { return impl_->characters->RagdollOf(id); }
CharacterId World::CharacterOfRagdoll(RagdollId id) const { return impl_->characters->CharacterOf(id); }
int32_t World::DrainCharacterEvents(std::span<CharacterEvent> out) { return impl_->characters->DrainEvents(out); }
int32_t World::ActiveCharacterCount() const { return impl_->characters->ActiveCount(); }
int32_t World::BoundCharacterCount() const { return impl_->characters->BoundCount(); }

Error World::SetRagdollPartVelocity(RagdollId id, int32_t part, Vec3 linear, Vec3 angular) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  Impl& w = *impl_;
  RagdollSlot& slot = w.ragdolls[id.index];
  if (part < 0 || part >= slot.part_count) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (!IsFinite(linear) || !IsFinite(angular))
    return Fail(ErrorCode::kNotFinite, part, "linear", "the velocities are not finite");
  RagdollGroup& g = w.ragdoll_groups[slot.group];
  if (g.constants[part].inv_mass == 0.0f) return {};  // a kinematic root follows its frame
  const detail::RigidBlockView view = g.View(slot.lane / kBlockLanes);
  const int32_t l = slot.lane % kBlockLanes;
  // Given at the part's origin; the lane holds the centre of mass's.
  const Transform& frame = slot.output[part];
  const Vec3 com{view.Part(detail::kRbXx, part)[l], view.Part(detail::kRbXy, part)[l], view.Part(detail::kRbXz, part)[l]};
  const Vec3 v = linear + Cross(angular, com - frame.translation);
  const float values[6] = {v.x, v.y, v.z, angular.x, angular.y, angular.z};
  const int32_t fields[6] = {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz};
  for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], part)[l] = values[f];
  return WakeRagdoll(id);
}

bool World::IsRagdollEnabled(RagdollId id) const { return IsValid(id) && impl_->ragdolls[id.index].enabled; }

Error World::SetRagdollKinematicRoot(RagdollId id, const Transform* root) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  if (root != nullptr && !IsFinite(*root))
    return Fail(ErrorCode::kNotFinite, -1, "root", "the kinematic root frame is not finite");
  Impl& w = *impl_;
  RagdollSlot& slot = w.ragdolls[id.index];
  const int32_t target = w.FindOrAddRagdollGroup(w.ragdoll_groups[slot.group].archetype, root != nullptr);
  w.MoveRagdollToGroup(static_cast<int32_t>(id.index), target);
  slot.kinematic_root = root;
  return {};
}

Error World::ReserveRagdollKinematicToggle(RagdollArchetypeId archetype, int32_t instances) {
  Impl& w = *impl_;
  if (archetype.generation != 1 || archetype.index >= w.ragdoll_archetypes.size())
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  for (bool kinematic : {false, true}) {
    const int32_t gi = w.FindOrAddRagdollGroup(static_cast<int32_t>(archetype.index), kinematic);
    RagdollGroup& g = w.ragdoll_groups[gi];
    g.reserved = std::max(g.reserved + instances, 0);
    w.EnsureRagdollLanes(gi, g.lanes_used);
  }
  return {};
}

Error World::SetRagdollPartStates(RagdollId id, std::span<const Transform> parts, std::span<const Vec3> linear,
                                  std::span<const Vec3> angular) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  Impl& w = *impl_;
  RagdollSlot& slot = w.ragdolls[id.index];
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
  RagdollGroup& g = w.ragdoll_groups[slot.group];
  Transform bodies[detail::kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j)
    bodies[j] = Compose(Transform{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}}, g.body_in_part[j]);
  g.PlaceBodies(slot.lane, bodies, Vec3{}, Vec3{});
  const detail::RigidBlockView view = g.View(slot.lane / kBlockLanes);
  const int32_t l = slot.lane % kBlockLanes;
  for (int32_t j = 0; j < n; ++j) {
    if (g.constants[j].inv_mass == 0.0f) continue;  // a kinematic root is driven by the host
    // The velocity given at the part's origin, moved to its centre of mass.
    const Vec3 wv = angular.empty() ? Vec3{} : angular[j];
    const Vec3 v = (linear.empty() ? Vec3{} : linear[j]) + Cross(wv, bodies[j].translation - parts[j].translation);
    const float values[6] = {v.x, v.y, v.z, wv.x, wv.y, wv.z};
    const int32_t fields[6] = {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz};
    for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], j)[l] = values[f];
  }
  for (int32_t j = 0; j < n; ++j) slot.output[j] = Transform{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}};
  slot.asleep = slot.frozen = false;
  slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;
  view.Lane(detail::kAsleep)[l] = 0.0f;
  return {};
}

bool World::IsValid(RagdollId id) const {
  const Impl& w = *impl_;
  return id.generation != 0 && id.index < w.ragdolls.size() && w.ragdolls[id.index].live &&
         w.ragdolls[id.index].generation == id.generation;
}

Error World::WakeRagdoll(RagdollId id) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& r = impl_->ragdolls[id.index];
  r.asleep = r.frozen = false;
  r.still_seconds = r.slow_seconds = 0;
  r.age_seconds = 0;
  impl_->ragdoll_groups[r.group].View(r.lane / kBlockLanes).Lane(detail::kAsleep)[r.lane % kBlockLanes] = 0.0f;
  return {};
}

Error World::ApplyRagdollImpulse(RagdollId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& r = impl_->ragdolls[id.index];
  if (part < 0 || part >= r.part_count) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (!IsFinite(impulse) || !IsFinite(world_point))
    return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse or its point is not finite");
  WakeRagdoll(id);
  RagdollGroup& g = impl_->ragdoll_groups[r.group];
  const detail::RigidPartConstants& c = g.constants[part];
  const detail::RigidBlockView view = g.View(r.lane / kBlockLanes);
  const int32_t l = r.lane % kBlockLanes;
  const Vec3 x{view.Part(detail::kRbXx, part)[l], view.Part(detail::kRbXy, part)[l], view.Part(detail::kRbXz, part)[l]};
  const Quat q{view.Part(detail::kRbQx, part)[l], view.Part(detail::kRbQy, part)[l], view.Part(detail::kRbQz, part)[l],
               view.Part(detail::kRbQw, part)[l]};
  const Vec3 torque_body = Rotate(Conjugate(q), Cross(world_point - x, impulse));
  const Vec3 dw = Rotate(q, Vec3{torque_body.x * c.inv_inertia[0], torque_body.y * c.inv_inertia[1],
                                 torque_body.z * c.inv_inertia[2]});
  const Vec3 dv = impulse * c.inv_mass;
  view.Part(detail::kRbVx, part)[l] += dv.x;
  view.Part(detail::kRbVy, part)[l] += dv.y;
  view.Part(detail::kRbVz, part)[l] += dv.z;
  view.Part(detail::kRbWx, part)[l] += dw.x;
  view.Part(detail::kRbWy, part)[l] += dw.y;
  view.Part(detail::kRbWz, part)[l] += dw.z;
  return {};
}

Error World::SetRagdollMotorTargets(RagdollId id, std::span<const Quat> local_rotations, float strength,
                                    std::span<const Vec3> local_angular_velocities) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& r = impl_->ragdolls[id.index];
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
  RagdollGroup& g = impl_->ragdoll_groups[r.group];
  const detail::RigidBlockView view = g.View(r.lane / kBlockLanes);
  const int32_t l = r.lane % kBlockLanes;
  const detail::RagdollArchetype& a = impl_->ragdoll_archetypes[g.archetype];
  for (int32_t j = 1; j < r.part_count; ++j) {
    const Quat parent_bip = g.body_in_part[a.parts[j].parent].rotation;
    // Part-relative target -> body-relative: q_pb^-1 q_cb = bip_p^-1 (q_pp^-1 q_cp) bip_c.
    const Quat target = Normalize(Conjugate(parent_bip) * Normalize(local_rotations[j]) * g.body_in_part[j].rotation);
    const Vec3 w = local_angular_velocities.empty() ? Vec3{} : Rotate(Conjugate(parent_bip), local_angular_velocities[j]);
    const float values[7] = {target.x, target.y, target.z, target.w, w.x, w.y, w.z};
    for (int32_t f = 0; f < 7; ++f) view.Part(detail::kMotorQx + f, j)[l] = values[f];
  }
  view.Lane(detail::kMotorStrength)[l] = strength;
  return {};
}

namespace {

// Sphere tracing along a ray against a convex distance function: steps by the distance
// (never past the surface), so it converges onto convex shapes. Returns the hit distance
// or a negative number.
template <class F>
float SphereTrace(const F& distance, Vec3 origin, Vec3 dir, float max_distance) {
  float t = 0;
  for (int i = 0; i < 128 && t <= max_distance; ++i) {
    const float d = distance(origin + dir * t);
    if (d < 1e-5f) return t;
    t += d;
  }
  return -1.0f;
}

bool RayReady(Vec3& origin, Vec3& direction, float max_distance) {
  if (!IsFinite(origin) || !IsFinite(direction) || !(max_distance > 0) || std::isnan(max_distance)) return false;
  const float len = Length(direction);
  if (!(len > 1e-12f)) return false;
  direction = direction * (1.0f / len);
  return true;
}

}  // namespace

bool World::RaycastRagdolls(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  if (!RayReady(origin, dir, max_distance)) return false;
  const Impl& w = *impl_;
  float best = max_distance;
  bool found = false;
  for (std::size_t i = 0; i < w.ragdolls.size(); ++i) {
    const RagdollSlot& r = w.ragdolls[i];
    if (!r.live) continue;
    const RagdollGroup& g = w.ragdoll_groups[r.group];
    const detail::RagdollArchetype& a = w.ragdoll_archetypes[g.archetype];
    for (int32_t j = 0; j < r.part_count; ++j) {
      const detail::RigidPartArchetype& part = a.parts[j];
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
      hit->ragdoll = RagdollId{static_cast<uint32_t>(i), r.generation};
      hit->part = j;
      hit->static_shape = -1;
      hit->distance = t;
      hit->point = origin + dir * t;
      hit->normal = DistanceNormal(sdf, hit->point);
    }
  }
  return found;
}

bool World::RaycastStatic(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  if (!RayReady(origin, dir, max_distance)) return false;
  const Impl& w = *impl_;
  float best = max_distance;
  bool found = false;
  auto take = [&](float t, Vec3 normal, int32_t index) {
    if (t < 0 || t > best) return;
    best = t;
    found = true;
    hit->ragdoll = RagdollId{};
    hit->part = -1;
    hit->static_shape = index;
    hit->distance = t;
    hit->point = origin + dir * t;
    hit->normal = normal;
  };
  for (int32_t i = 0; i < w.plane_count; ++i) {
    const Vec3 n{w.planes[i][0], w.planes[i][1], w.planes[i][2]};
    const float denom = Dot(n, dir), height = Dot(n, origin) - w.planes[i][3];
    if (height >= 0 && denom < 0) take(-height / denom, n, i);
  }
  for (std::size_t k = 0; k < w.static_shapes.size(); ++k) {
    const detail::StaticShape& sh = w.static_shapes[k];
    auto sdf = [&](Vec3 p) {
      const Vec3 a{sh.a[0], sh.a[1], sh.a[2]};
      if (sh.kind == detail::kStaticSphere) return Length(p - a) - sh.radius;
      if (sh.kind == detail::kStaticBox) {
        const Quat q{sh.q[0], sh.q[1], sh.q[2], sh.q[3]};
        return BoxDistance(Rotate(Conjugate(q), p - a), Vec3{sh.half[0], sh.half[1], sh.half[2]});
      }
      const Vec3 b{sh.b[0], sh.b[1], sh.b[2]};
      const Vec3 ab = b - a;
      const float t = std::clamp(Dot(p - a, ab) / std::max(Dot(ab, ab), 1e-12f), 0.0f, 1.0f);
      return Length(p - (a + ab * t)) - sh.radius;
    };
    if (sdf(origin) < 0) continue;  // starting inside: no hit
    const float t = SphereTrace(sdf, origin, dir, best);
    if (t >= 0) take(t, DistanceNormal(sdf, origin + dir * t), w.plane_count + static_cast<int32_t>(k));
  }
  float t = 0;
  Vec3 n;
  int32_t source = -1;
  if (w.static_mesh.Raycast(origin, dir, best, &t, &n, &source)) take(t, n, source);
  return found;
}

bool World::IsRagdollAsleep(RagdollId id) const { return IsValid(id) && impl_->ragdolls[id.index].asleep; }
bool World::IsRagdollFrozen(RagdollId id) const { return IsValid(id) && impl_->ragdolls[id.index].frozen; }

Error World::GetRagdollVelocities(RagdollId id, std::span<Vec3> linear, std::span<Vec3> angular) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const RagdollSlot& r = impl_->ragdolls[id.index];
  if (static_cast<int32_t>(linear.size()) < r.part_count || static_cast<int32_t>(angular.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "linear", "the spans are shorter than the part count");
  RagdollGroup& g = impl_->ragdoll_groups[r.group];
  const detail::RigidBlockView view = g.View(r.lane / kBlockLanes);
  const int32_t l = r.lane % kBlockLanes;
  for (int32_t j = 0; j < r.part_count; ++j) {
    linear[j] = Vec3{view.Part(detail::kRbVx, j)[l], view.Part(detail::kRbVy, j)[l], view.Part(detail::kRbVz, j)[l]};
    angular[j] = Vec3{view.Part(detail::kRbWx, j)[l], view.Part(detail::kRbWy, j)[l], view.Part(detail::kRbWz, j)[l]};
  }
  return {};
}

int32_t World::ChainBoneCount(ChainArchetypeId id) const {
  if (id.generation != 1 || id.index >= impl_->archetypes.size()) return 0;
  return impl_->archetypes[id.index].archetype.node_count;
}

Result<ChainId> World::BindChain(const ChainBinding& b) {
  Impl& w = *impl_;
  if (b.archetype.generation != 1 || b.archetype.index >= w.archetypes.size())
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the archetype id is null or was not built by this world");
  const ArchetypeSlot& arch = w.archetypes[b.archetype.index];
  const int32_t n = arch.archetype.node_count;
  if (b.root_parent_world == nullptr)
    return Fail(ErrorCode::kNullBuffer, -1, "root_parent_world", "root_parent_world is null");
  const bool mapped = !b.bone_map.empty();
  if (mapped && static_cast<int32_t>(b.bone_map.size()) != n)
    return Fail(ErrorCode::kBadReference, -1, "bone_map",
                "bone_map has " + std::to_string(b.bone_map.size()) + " entries; the archetype has " +
                    std::to_string(n) + " bones");
  const int32_t needed = mapped ? 0 : n;  // with a map, every index is checked below
  if (b.animated_local.data() == nullptr || static_cast<int32_t>(b.animated_local.size()) < std::max(needed, 1))
    return Fail(ErrorCode::kNullBuffer, -1, "animated_local",
                "animated_local needs " + std::to_string(n) + " transforms, got " + std::to_string(b.animated_local.size()));
  if (b.output_local.data() == nullptr || static_cast<int32_t>(b.output_local.size()) < std::max(needed, 1))
    return Fail(ErrorCode::kNullBuffer, -1, "output_local",
                "output_local needs " + std::to_string(n) + " transforms, got " + std::to_string(b.output_local.size()));
  if (mapped) {
    const auto limit = static_cast<int32_t>(std::min(b.animated_local.size(), b.output_local.size()));
    std::vector<int32_t> sorted(b.bone_map.begin(), b.bone_map.end());
    for (int32_t k = 0; k < n; ++k) {
      if (b.bone_map[k] < 0 || b.bone_map[k] >= limit)
        return Fail(ErrorCode::kBadReference, k, "bone_map",
                    "bone_map[" + std::to_string(k) + "] = " + std::to_string(b.bone_map[k]) + " is outside [0, " +
                        std::to_string(limit) + ")");
    }
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return Fail(ErrorCode::kBadReference, -1, "bone_map", "bone_map names one buffer element twice");
  }
  auto animated_at = [&](int32_t k) -> const Transform& { return b.animated_local[mapped ? b.bone_map[k] : k]; };
  Transform* const identity = &b.output_local[mapped ? b.bone_map[0] : 0];
  if (static_cast<int32_t>(b.collider_frames.size()) < arch.archetype.collider_frames_needed)
    return Fail(ErrorCode::kNullBuffer, -1, "collider_frames",
                "the archetype's colliders use " + std::to_string(arch.archetype.collider_frames_needed) +
                    " host frames, got " + std::to_string(b.collider_frames.size()));
  if (auto it = w.chain_by_output.find(identity); it != w.chain_by_output.end()) {
    const ChainSlot& existing = w.chains[it->second];
    if (existing.archetype != static_cast<int32_t>(b.archetype.index))
      return Fail(ErrorCode::kBadReference, -1, "output_local",
                  "this output buffer is already bound to a chain of another archetype");
    return ChainId{static_cast<uint32_t>(it->second), existing.generation};
  }
  if (!IsFinite(*b.root_parent_world))
    return Fail(ErrorCode::kNotFinite, -1, "root_parent_world", "the root's parent transform is not finite at bind");
  for (int32_t k = 0; k < n; ++k) {
    if (!IsFinite(animated_at(k)))
      return Fail(ErrorCode::kNotFinite, k, "animated_local",
                  "animated_local[" + std::to_string(k) + "] is not finite at bind");
  }
  int32_t index;
  if (!w.free_chains.empty()) {
    index = w.free_chains.back();
    w.free_chains.pop_back();
  } else {
    index = static_cast<int32_t>(w.chains.size());
    w.chains.emplace_back();
  }
  ChainSlot& slot = w.chains[index];
  const uint32_t generation = slot.generation;
  slot = ChainSlot{};
  slot.generation = generation;
  slot.live = true;
  slot.archetype = static_cast<int32_t>(b.archetype.index);
  slot.group = arch.group;
  slot.root_parent_world = b.root_parent_world;
  slot.animated = b.animated_local.data();
  slot.output = b.output_local.data();
  slot.bone_count = n;
  slot.collider_frames = b.collider_frames.data();
  slot.collider_frame_count = arch.archetype.collider_frames_needed;
  slot.bone_map.assign(b.bone_map.begin(), b.bone_map.end());
  slot.last_good.resize(n);
  for (int32_t k = 0; k < n; ++k) slot.last_good[k] = animated_at(k);
  slot.last_good_root_parent = *b.root_parent_world;
  slot.live_index = static_cast<int32_t>(w.live_chains.size());
  w.live_chains.push_back(index);
  w.live_root_parent.push_back(b.root_parent_world);
  w.live_distance2.push_back(INFINITY);
  w.chain_by_output.emplace(identity, index);
  w.candidates.resize(w.live_chains.size());
  w.chunk_eligible.resize((w.live_chains.size() + kGatherChunk - 1) / kGatherChunk);
  w.chunk_kept.resize(w.chunk_eligible.size());
  ChainGroup& g = w.groups[arch.group];
  ++g.bound;
  w.ReserveGroup(g);
  return ChainId{static_cast<uint32_t>(index), generation};
}

Error World::UnbindChain(ChainId id) {
  Impl& w = *impl_;
  ChainSlot* slot = w.FindChain(id);
  if (slot == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "chain", "the chain handle is null or stale");
  if (slot->lane >= 0) w.ReleaseLane(static_cast<int32_t>(id.index));
  // Put every bone back to its animated local transform: the current animation when it is
  // readable and distinct from the output, else the last good animated input.
  const bool aliased = slot->animated == slot->output;
  bool current_ok = !aliased;
  for (int32_t k = 0; current_ok && k < slot->bone_count; ++k) current_ok = IsFinite(slot->Animated(k));
  for (int32_t k = 0; k < slot->bone_count; ++k) slot->Output(k) = current_ok ? slot->Animated(k) : slot->last_good[k];
  w.chain_by_output.erase(&slot->Output(0));
  const int32_t li = slot->live_index;
  const int32_t moved = w.live_chains.back();
  w.live_chains[li] = moved;
  w.live_root_parent[li] = w.live_root_parent.back();
  w.live_distance2[li] = w.live_distance2.back();
  w.chains[moved].live_index = li;
  w.live_chains.pop_back();
  w.live_root_parent.pop_back();
  w.live_distance2.pop_back();
  --w.groups[slot->group].bound;
  slot->live = false;
  slot->live_index = -1;
  slot->generation = slot->generation == UINT32_MAX ? 1 : slot->generation + 1;
  std::vector<Transform>().swap(slot->last_good);
  w.free_chains.push_back(static_cast<int32_t>(id.index));
  return {};
}

bool World::IsValid(ChainId id) const { return impl_->FindChain(id) != nullptr; }

Result<PendulumId> World::BindPendulum(const PendulumBinding& b) {
  Impl& w = *impl_;
  if (b.joint_world == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "joint_world", "joint_world is null");
  if (b.accessory_offset == nullptr)
    return Fail(ErrorCode::kNullBuffer, -1, "accessory_offset", "accessory_offset is null");
  if (auto it = w.pendulum_by_offset.find(b.accessory_offset); it != w.pendulum_by_offset.end()) {
    return PendulumId{static_cast<uint32_t>(it->second), w.pendulums[it->second].generation};
  }
  const PendulumSettings& s = b.settings;
  const struct {
    float v, lo, hi;
    const char* field;
  } checks[] = {{s.damping, 0, 1, "settings.damping"},
                {s.stiffness, 0, 1, "settings.stiffness"},
                {s.gravity_scale, -100, 100, "settings.gravity_scale"},
                {s.wind_scale, -100, 100, "settings.wind_scale"},
                {s.max_swing_degrees, 0, 180, "settings.max_swing_degrees"}};
  for (const auto& c : checks) {
    if (Error e = CheckRange(c.v, c.lo, c.hi, -1, c.field); e.code != ErrorCode::kNone) return e;
  }
  if (!IsFinite(s.centre)) return Fail(ErrorCode::kNotFinite, -1, "settings.centre", "centre is not finite");
  if (!IsFinite(s.up_axis) || std::fabs(Length(s.up_axis) - 1.0f) > 1e-3f)
    return Fail(ErrorCode::kOutOfRange, -1, "settings.up_axis", "up_axis must be a finite unit vector");
  const Transform offset = *b.accessory_offset;
  if (!IsFinite(offset))
    return Fail(ErrorCode::kNotFinite, -1, "accessory_offset", "the accessory offset is not finite at bind");
  if (!IsFinite(*b.joint_world))
    return Fail(ErrorCode::kNotFinite, -1, "joint_world", "the joint transform is not finite at bind");
  int32_t index;
  if (!w.free_pendulums.empty()) {
    index = w.free_pendulums.back();
    w.free_pendulums.pop_back();
  } else {
    index = static_cast<int32_t>(w.pendulums.size());
    w.pendulums.emplace_back();
  }
  PendulumSlot& p = w.pendulums[index];
  const uint32_t generation = p.generation;
  p = PendulumSlot{};
  p.generation = generation;
  p.live = true;
  p.settings = s;
  p.joint = b.joint_world;
  p.offset_out = b.accessory_offset;
  p.rest_offset = offset;
  p.last_good_joint = *b.joint_world;
  p.max_swing = s.max_swing_degrees * kPi / 180.0f;
  // The rest lever, in the joint's frame: hinge (joint origin) -> accessory centre.
  Vec3 lever = TransformPoint(offset, s.centre);
  if (Length(lever) < 0.1f) lever = Rotate(offset.rotation, -s.up_axis) * 0.75f;
  p.lever_local = lever;
  p.lever_length = Length(lever);
  p.live_index = static_cast<int32_t>(w.live_pendulums.size());
  w.live_pendulums.push_back(index);
  w.pendulum_by_offset.emplace(b.accessory_offset, index);
  w.pendulum_awake_frame.resize(w.live_pendulums.size());
  w.pendulum_counters.resize((w.live_pendulums.size() + kPendulumChunk - 1) / kPendulumChunk);
  return PendulumId{static_cast<uint32_t>(index), generation};
}

Error World::UnbindPendulum(PendulumId id) {
  Impl& w = *impl_;
  PendulumSlot* p = w.FindPendulum(id);
  if (p == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "pendulum", "the pendulum handle is null or stale");
  *p->offset_out = p->rest_offset;
  w.pendulum_by_offset.erase(p->offset_out);
  const int32_t li = p->live_index;
  const int32_t moved = w.live_pendulums.back();
  w.live_pendulums[li] = moved;
  w.pendulums[moved].live_index = li;
  w.live_pendulums.pop_back();
  p->live = false;
  p->generation = p->generation == UINT32_MAX ? 1 : p->generation + 1;
  w.free_pendulums.push_back(static_cast<int32_t>(id.index));
  return {};
}

bool World::IsValid(PendulumId id) const { return impl_->FindPendulum(id) != nullptr; }

void World::SetCamera(Vec3 position) {
  if (IsFinite(position)) impl_->camera = position;
}
void World::SetWindSampler(WindSampler sampler) { impl_->wind_sampler = sampler; }
void World::SetSimulatePredicate(SimulatePredicate predicate) { impl_->predicate = predicate; }
void World::SetMaxChains(int32_t max_chains) {
  impl_->settings.max_chains = std::max(max_chains, 0);
  for (ChainGroup& g : impl_->groups) impl_->ReserveGroup(g);
}
void World::SetTraceWriter(TraceWriter* writer) { impl_->trace = writer; }

const FrameStats& World::Step(float dt) { return impl_->Step(dt); }
const FrameStats& World::LastStats() const { return impl_->stats; }
Isa World::ActiveIsa() const { return impl_->isa; }
int32_t World::LaneWidth() const { return kBlockLanes; }

bool World::IsSimulated(ChainId id) const {
  const ChainSlot* s = impl_->FindChain(id);
  return s != nullptr && s->lane >= 0;
}

Error World::GetChainNodePositions(ChainId id, std::span<Vec3> out) const {
  Impl& w = *impl_;
  ChainSlot* s = w.FindChain(id);
  if (s == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "chain", "the chain handle is null or stale");
  if (static_cast<int32_t>(out.size()) < s->bone_count)
    return Fail(ErrorCode::kNullBuffer, -1, "out", "out is smaller than the chain's bone count");
  if (s->lane >= 0) {
    ChainGroup& g = w.groups[s->group];
    const ChainBlockView v = g.View(s->lane / kBlockLanes);
    const int32_t l = s->lane % kBlockLanes;
    for (int32_t k = 0; k < s->bone_count; ++k)
      out[k] = Vec3{v.Node(v.position, k)[l], v.Node(v.position + 1, k)[l], v.Node(v.position + 2, k)[l]};
    return {};
  }
  const ChainArchetype& a = w.archetypes[s->archetype].archetype;
  PoseScratch scratch;
  Transform* world = scratch.world();
  for (int32_t k = 0; k < s->bone_count; ++k) {
    const int32_t p = a.topology.parent[k];
    new (&world[k]) Transform(Compose(p < 0 ? s->last_good_root_parent : world[p], s->last_good[k]));
    out[k] = world[k].translation;
  }
  return {};
}

Error World::GetPendulumState(PendulumId id, Vec3* bob, float* swing_radians) const {
  PendulumSlot* p = impl_->FindPendulum(id);
  if (p == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "pendulum", "the pendulum handle is null or stale");
  if (bob != nullptr) *bob = p->bob;
  if (swing_radians != nullptr) *swing_radians = p->swing;
  return {};
}

uint64_t World::StateHash() const {
  const Impl& w = *impl_;
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  auto mix = [&h](const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  };
  for (std::size_t i = 0; i < w.chains.size(); ++i) {
    const ChainSlot& s = w.chains[i];
    if (!s.live || s.lane < 0) continue;
    mix(&i, sizeof(i));
    ChainGroup& g = const_cast<ChainGroup&>(w.groups[s.group]);
    const ChainBlockView v = g.View(s.lane / kBlockLanes);
    const int32_t l = s.lane % kBlockLanes;
    for (int32_t k = 0; k < s.bone_count; ++k) {
      for (int32_t slot : {v.position, v.previous}) {
        for (int32_t axis = 0; axis < 3; ++axis) mix(v.Node(slot + axis, k) + l, sizeof(float));
      }
      mix(&s.Output(k), sizeof(Transform));
    }
  }
  for (std::size_t i = 0; i < w.pendulums.size(); ++i) {
    const PendulumSlot& p = w.pendulums[i];
    if (!p.live || !p.awake) continue;
    mix(&i, sizeof(i));
    mix(&p.bob, sizeof(Vec3));
    mix(&p.prev_bob, sizeof(Vec3));
  }
  for (std::size_t i = 0; i < w.ragdolls.size(); ++i) {
    const RagdollSlot& r = w.ragdolls[i];
    if (!r.live) continue;
    mix(&i, sizeof(i));
    RagdollGroup& g = const_cast<RagdollGroup&>(w.ragdoll_groups[r.group]);
    const detail::RigidBlockView view = g.View(r.lane / kBlockLanes);
    for (int32_t j = 0; j < r.part_count; ++j) {
      for (int32_t f = 0; f < detail::kRigidFieldCount; ++f) mix(view.Part(f, j) + r.lane % kBlockLanes, sizeof(float));
    }
  }
  return h;
}

// ---- detail::WorldAccess ----

void detail::WorldAccess::SolveOnly(World& world, int32_t substeps) {
  detail::DenormalGuard guard;
  world.impl_->Solve(substeps);
}
void detail::WorldAccess::WritebackOnly(World& world) {
  detail::DenormalGuard guard;
  world.impl_->Writeback();
}
int32_t detail::WorldAccess::SimulatedBlocks(const World& world) { return world.impl_->work_count; }

}  // namespace tendon
