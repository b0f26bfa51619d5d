// kernel/chains/chain_block.h: the structure-of-arrays layout of a block of chain lanes.
//
// Design (DESIGN.md, "lanes are instances"): a block holds kBlockLanes chain instances
// that share a topology (node count, parent of every node, collider kinds). Every field
// of every node is kBlockLanes consecutive floats, one per lane, so the constraint
// between node k and its parent is the same aligned load in every lane, with no gather.
// Per-lane parameters (rest length, damping, stiffness, radii, pinning) live in lanes too.
// Padding lanes hold a valid rest pose and are pinned, so kernels need no masks.
//
// One block is one task's unit of work: a kernel reads and writes only its block, which
// is why results do not depend on how many workers ran the blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>

#include "kernel/core/finite.h"
#include "kernel/simd/lanes.h"
#include "tendon/math.h"

namespace tendon::detail {

// Per node, per lane. Fields before kHotNodeFieldCount are "hot": every substep reads
// or writes them. They live, with the lane, collider and radius rows, in a block's hot
// part; the others, read once per frame, in its cold part. A topology's blocks keep their
// hot parts side by side in one slab, so a solve streams contiguous memory and nothing else.
enum NodeField : int32_t {
  // Two slots of simulated world positions: one holds the current position, the other the
  // previous one (the verlet velocity is their difference). Which is which is a property of
  // the topology's blocks, in ChainBlockView::position and ::previous: a substep writes each
  // new position over the previous one and swaps the roles, so it writes three rows per node
  // instead of six (a sixth less memory traffic once blocks leave the cache).
  kPos0x, kPos0y, kPos0z,
  kPos1x, kPos1y, kPos1z,
  kBx, kBy, kBz,              // animated position this frame (interpolation end)
  // Link rest length to the parent (m), negated for a pinned node (one that copies the
  // animated pose, as roots and padding lanes do): the sign is the pin flag, one row less.
  kRest,
  kHotNodeFieldCount,
  kAx = kHotNodeFieldCount, kAy, kAz,  // animated position at the last substep (interpolation
                                       // start; kept for roots and pinned nodes only)
  kDamping, kStiffness, kGravityScale, kWindScale,  // per node, read only when some lane's
                                                    // chain overrides them (see kUniform)
  kRx, kRy, kRz, kRw,         // animated world rotation this frame
  kSx, kSy, kSz,              // animated world scale this frame (pose phase only)
  kNodeFieldCount
};
inline constexpr int32_t kColdNodeFieldCount = kNodeFieldCount - kHotNodeFieldCount;

// Per node, per lane, in the cold part after the node fields, in kVrm topologies only (a
// kTendon block has none of these rows): field-major, node_count rows each.
enum VrmNodeField : int32_t {
  kVrmPushX, kVrmPushY, kVrmPushZ,   // gravity push (m/s) of the joint whose tail this node is
  kVrmDirX, kVrmDirY, kVrmDirZ,      // unit rest direction in the parent's frame
  kVrmRestQx, kVrmRestQy, kVrmRestQz, kVrmRestQw,  // rest local rotation
  kVrmQx, kVrmQy, kVrmQz, kVrmQw,    // simulated world rotation (solve -> writeback)
  kVrmFieldCount
};

// Per lane (not per node), in the hot part.
enum LaneField : int32_t {
  kRootParentRx, kRootParentRy, kRootParentRz, kRootParentRw,  // rotation roots are local to
  // The chain's damping, stiffness and scales when no node overrides them (kUniform = 1):
  // then the solve reads these four (hot in L1 for the whole block) instead of four
  // per-node fields, a quarter less memory traffic per node.
  kLaneDamping, kLaneStiffness, kLaneGravityScale, kLaneWindScale,
  kUniform,
  kLaneFieldCount
};

// Per collider, per lane, in the hot part: world-space shape of this frame.
enum ColliderField : int32_t {
  kCax, kCay, kCaz,  // sphere centre, capsule end A, plane point
  kCbx, kCby, kCbz,  // capsule end B, plane unit normal
  kCr,               // radius
  // kVrm: 1 when the collider acts on this lane, 0 when not (a strand's spring names its
  // colliders: see ChainArchetype::strand_colliders); kTendon's kernel does not read it.
  kCon,
  kColliderFieldCount
};

enum ColliderKind : uint8_t { kSphereOutside, kSphereInside, kCapsuleOutside, kCapsuleInside, kPlaneKind };

// Per host-body slot, per lane, in the hot part after the radii (only in groups whose
// archetypes have a host_body_mask): the host box the slot holds this frame, if any. A
// lane's slot holds a sphere or capsule in its collider rows (kCax..kCr) or a box here,
// never both: the other is far away (collider rows) or off (kBon = 0), so the kernels run
// both tests and each lane gets exactly one shape's push.
enum HostBoxField : int32_t {
  kBcx, kBcy, kBcz,                                         // centre
  kBuxx, kBuxy, kBuxz, kBuyx, kBuyy, kBuyz, kBuzx, kBuzy, kBuzz,  // the box's unit axes in world space
  kBhx, kBhy, kBhz,                                         // half extents along them
  kBon,                                                     // 1: a box; 0: none
  kHostBoxFieldCount
};

// Rows of kBlockLanes floats in a block's hot and cold parts. The hot part ends with the
// nodes' collision radii, one row per node, only where the topology has colliders: a
// substep of a chain without them streams 10 rows per node, not 11 (measured 2-3% faster
// at 8 x 8,192 chains, where the solve streams its blocks from L3).
inline constexpr int32_t HotRows(int32_t node_count, int32_t collider_count, int32_t host_boxes = 0) {
  return kHotNodeFieldCount * node_count + kLaneFieldCount + kColliderFieldCount * collider_count +
         (collider_count > 0 ? node_count : 0) + kHostBoxFieldCount * host_boxes;
}
inline constexpr int32_t ColdRows(int32_t node_count, bool vrm = false) {
  return (kColdNodeFieldCount + (vrm ? kVrmFieldCount : 0)) * node_count;
}

// A non-owning view of one block; what kernels take.
struct ChainBlockView {
  const int32_t* parent = nullptr;       // [node_count], -1 for roots
  const int32_t* first_child = nullptr;  // [node_count], -1 for leaves
  const uint8_t* collider_kind = nullptr;
  const uint32_t* collider_mask = nullptr;  // [node_count]: bit c when collider c acts on the node
  int32_t node_count = 0;
  int32_t collider_count = 0;
  // Host-body slots (ChainArchetype::host_body_slots), each with its HostBoxField rows; 0
  // for every group without a host_body_mask (no rows, no box test).
  int32_t host_box_count = 0;
  float* hot = nullptr;   // HotRows * kBlockLanes floats, cache-line aligned
  float* cold = nullptr;  // ColdRows * kBlockLanes floats, cache-line aligned
  int32_t position = kPos0x;  // the slot of the current simulated position
  int32_t previous = kPos1x;  // the slot of the previous one
  bool vrm = false;           // ChainModel::kVrm: the Vrm rows exist and the VRM rule runs
  // kVrm, for the writeback: every leaf but a root is a virtual tip (no host bone) in every
  // lane, so no such leaf's written rotation is read (ChainArchetype::vrm_roots_pose).
  bool virtual_leaves = false;

  // Node-major: all hot fields of node 0, then of node 1, ... so that a solve, which walks
  // the nodes in order, reads one sequential stream per block (field-major measured 1.3x
  // slower once blocks left the cache: a dozen interleaved streams defeat the prefetcher).
  float* Node(int32_t field, int32_t node) const {
    return field < kHotNodeFieldCount
               ? hot + (static_cast<std::size_t>(node) * kHotNodeFieldCount + field) * kBlockLanes
               : cold + (static_cast<std::size_t>(node) * kColdNodeFieldCount + field - kHotNodeFieldCount) *
                            kBlockLanes;
  }
  float* Lane(int32_t field) const {
    return hot + (static_cast<std::size_t>(kHotNodeFieldCount) * node_count + field) * kBlockLanes;
  }
  // Collider-major: a collider's fields at constant offsets from its first (the solve's
  // loads, and the read's writes into lanes, need no multiply by the collider count).
  float* Collider(int32_t field, int32_t collider) const {
    return hot + (static_cast<std::size_t>(kHotNodeFieldCount) * node_count + kLaneFieldCount +
                  static_cast<std::size_t>(collider) * kColliderFieldCount + field) *
                     kBlockLanes;
  }
  // A node's collision radius (m); the row exists only when collider_count > 0.
  float* Radius(int32_t node) const {
    return hot + (static_cast<std::size_t>(kHotNodeFieldCount) * node_count + kLaneFieldCount +
                  static_cast<std::size_t>(kColliderFieldCount) * collider_count + node) *
                     kBlockLanes;
  }
  // Host-body slot j's box field (HostBoxField); only when j < host_box_count.
  float* HostBox(int32_t field, int32_t j) const {
    return hot + (static_cast<std::size_t>(HotRows(node_count, collider_count)) +
                  static_cast<std::size_t>(j) * kHostBoxFieldCount + field) *
                     kBlockLanes;
  }
  // A kVrm node field (VrmNodeField); only when vrm. Node-major, as the hot fields: the
  // solve addresses a node's fields at constant offsets from one base (field-major, each
  // load computed field * node_count + node, and the VRM solve spent a third of its
  // instructions on addresses and their spills).
  float* Vrm(int32_t field, int32_t node) const {
    return cold + (static_cast<std::size_t>(kColdNodeFieldCount) * node_count +
                   static_cast<std::size_t>(node) * kVrmFieldCount + field) *
                      kBlockLanes;
  }
  // Row r of the block, hot rows first, then cold: for copying whole lanes.
  float* Row(int32_t row) const {
    const int32_t hot_rows = HotRows(node_count, collider_count, host_box_count);
    return row < hot_rows ? hot + static_cast<std::size_t>(row) * kBlockLanes
                          : cold + static_cast<std::size_t>(row - hot_rows) * kBlockLanes;
  }
};

// What the solve of one frame needs besides the block.
struct ChainSolveParams {
  int32_t substeps = 0;   // substeps this frame (kVrm blocks: 1 when the frame's dt > 0)
  float dt = 0;           // substep length (s); kVrm blocks: the frame's dt
  float gravity[3] = {0, 0, 0};
  float wind[3] = {0, 0, 0};  // this frame's wind (sampled once per frame)
};

// The animated input of a block's lanes: per lane, the frame its roots hang from and its
// node_count local transforms (padding lanes point at their topology's rest pose).
struct ChainPoseInput {
  const Transform* root_parent[kBlockLanes];
  const Transform* locals[kBlockLanes];
  // Compose only the roots' animated frames (kVrm, ChainArchetype::vrm_roots_pose): every
  // other node's kB, kR and kS rows keep what they held.
  bool roots_only = false;
};

// The writeback kernel's scratch for one block: per node, its written world rotation (x, y,
// z, w rows) then its written local rotation, kBlockLanes floats a row, cache-line aligned.
// It is the caller's (one per worker), so the rotations, which live for one block's
// writeback only, never travel through the blocks' slabs: 64 bytes less memory traffic
// per bone once the slabs leave the cache.
inline constexpr int32_t kWritebackRowsPerNode = 8;
inline float* WrittenWorldRotation(float* scratch, int32_t node) {
  return scratch + static_cast<std::size_t>(node) * kWritebackRowsPerNode * kBlockLanes;
}
inline constexpr int32_t WrittenLocalRotationOffset(int32_t node) {
  return (node * kWritebackRowsPerNode + 4) * kBlockLanes;
}
inline float* WrittenLocalRotation(float* scratch, int32_t node) { return scratch + WrittenLocalRotationOffset(node); }
inline const float* WrittenLocalRotation(const float* scratch, int32_t node) {
  return scratch + WrittenLocalRotationOffset(node);
}

// The written world matrix of every node, for pose streams (tendon/pose_layout.h): per
// node, each lane's row-major 3x4 of translation * rotation * diag(scale) as 12
// consecutive floats (lane by lane: what a host element takes, so the kernel transposes
// once and the per-bone copy is contiguous), then the node's world position in 3 rows of
// kBlockLanes floats (what its children's positions start from). Also the caller's, one
// per worker.
inline constexpr int32_t kWorldMatrixFloats = 12;
inline constexpr int32_t kWorldFloatsPerNode = (kWorldMatrixFloats + 3) * kBlockLanes;
inline float* WrittenWorldMatrix(float* rows, int32_t node, int32_t lane) {
  return rows + static_cast<std::size_t>(node) * kWorldFloatsPerNode + lane * kWorldMatrixFloats;
}
inline float* WrittenWorldPosition(float* rows, int32_t node) {
  return rows + static_cast<std::size_t>(node) * kWorldFloatsPerNode + kWorldMatrixFloats * kBlockLanes;
}

// Every node's written world frame, for output_world (ChainBinding::output_world): per
// node, the frame's ten floats (translation, rotation, scale, as tendon::Transform) in rows
// of kBlockLanes floats (what its children compose on), then each lane's frame as twelve
// consecutive floats: the ten, a probe (+-0 where the lane's frame is finite, NaN where
// not) and one unused, so the per-bone copy to the host is contiguous. The caller's, one
// per worker, filled by ChainKernels::world_frames.
inline constexpr int32_t kWorldFrameFields = 10;
inline constexpr int32_t kWorldFrameLaneFloats = 12;
inline constexpr int32_t kWorldFrameFloatsPerNode = (kWorldFrameFields + kWorldFrameLaneFloats) * kBlockLanes;
inline float* WrittenWorldFrame(float* rows, int32_t node) {
  return rows + static_cast<std::size_t>(node) * kWorldFrameFloatsPerNode;
}
inline const float* WrittenWorldFrame(const float* rows, int32_t node) {
  return rows + static_cast<std::size_t>(node) * kWorldFrameFloatsPerNode;
}
inline float* WrittenWorldFrameOfLane(float* rows, int32_t node, int32_t lane) {
  return WrittenWorldFrame(rows, node) + kWorldFrameFields * kBlockLanes + lane * kWorldFrameLaneFloats;
}
inline const float* WrittenWorldFrameOfLane(const float* rows, int32_t node, int32_t lane) {
  return WrittenWorldFrame(rows, node) + kWorldFrameFields * kBlockLanes + lane * kWorldFrameLaneFloats;
}

// How many blocks a solve call interleaves (see SolveSubstep in chain_kernel_verlet.h), and the
// most one call takes.
inline constexpr int32_t kSolveInterleave = 4;
inline constexpr int32_t kMaxSolveBlocks = 16;
static_assert(kSolveInterleave <= kMaxSolveBlocks, "a solve call takes at most kMaxSolveBlocks blocks");

// One host bone of the writeback's flat scatter (ChainSystem builds a list per block when
// lanes or bindings change): the bone is written as its chain's last good local with the
// written local rotation in place of the animated one.
struct ChainScatterEntry {
  Transform* output;                   // the host bone
  const std::vector<Transform>* good;  // the chain's last good locals (swapped each frame)
  int32_t node;                        // in the chain's lane order
  int32_t rotation;                    // its local rotation's x in the writeback scratch
};

// The read's colliders on host frames (ChainKernels::collider_worlds): `count` colliders,
// collider i on frames[frame[i]], its shape in that frame in `local` (kColliderLocalRows
// rows of `stride` floats, stride a whole number of blocks: a, b, radius, then 1/0 masks
// for a plane and a capsule).
enum ColliderLocalRow : int32_t { kLax, kLay, kLaz, kLbx, kLby, kLbz, kLradius, kLplane, kLcapsule, kColliderLocalRows };
struct ChainColliderInput {
  const Transform* frames;
  const int32_t* frame;
  const float* local;
  int32_t count, stride;
  bool vrm;  // VRM does not scale collider radii
};

// finite.h's GatherTransforms, compiled once without instruction-set flags
// (chain_kernels.cpp): the gather of every kernel set without an AVX2 one of its own.
GatherCheck GatherTransformsBaseline(const Transform* src, const int32_t* from, Transform* dst, const int32_t* to,
                                     int32_t count);

// A kernel set for one instruction set; see chain_kernels.cpp for the dispatch.
struct ChainKernels {
  // Runs params.substeps substeps over `count` blocks of one topology: integrate,
  // stiffness, collide, link. Each lane's result is independent of the others'.
  void (*solve)(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& params);
  // Fills the written world and local rotations of every node into `scratch`
  // (node_count * kWritebackRowsPerNode rows; see WrittenLocalRotation) from the solved
  // positions, and sets finite_probe[l] (kBlockLanes floats) to 0 when every written
  // rotation and solved position of lane l is finite, and to NaN otherwise (checked in
  // lanes, so the world does not re-read every field of every lane to find a NaN).
  // alpha in [0, 1) interpolates the simulated shape between the last two substeps (render
  // interpolation: each link's direction is the previous substep's, alpha of the way to
  // the last one's); alpha = 1 writes the last substep's exactly. With world_rows non-null
  // it also fills every node's written world matrix there (WrittenWorldMatrix): root
  // parent composed with the written locals, whose translations and scales are the
  // animated ones.
  void (*writeback)(const ChainBlockView& block, float* scratch, float* finite_probe, float alpha,
                    float* world_rows);
  // Composes the animated world pose of every lane: B (position), R (rotation), the root
  // parents' rotations, and world scale (kSx..kSz).
  void (*pose)(const ChainBlockView& block, const ChainPoseInput& input);
  // Fills every node's written world frame into `frames` (WrittenWorldFrame), after
  // writeback filled `scratch`: the lane's root parent composed with its written locals
  // (input.locals' translations and scales, the scratch's local rotations), parents first,
  // each lane's bits those of tendon::Compose. Skips the virtual tips the writeback skipped
  // (block.virtual_leaves), which have no host bone; input.roots_only is not read.
  void (*world_frames)(const ChainBlockView& block, const ChainPoseInput& input, const float* scratch, float* frames);
  // True when every one of `count` floats (any alignment) is finite: the check of a lane's
  // host transforms before the pose reads them, in lanes.
  bool (*all_finite)(const float* values, int32_t count);
  // Copies src[from[i]] to dst[to[i]] for i < count (a chain's host locals through its bone
  // map) and checks them in the same pass: GatherCheck's finite and unit, exactly as
  // GatherTransforms (finite.h) decides them.
  GatherCheck (*gather_check)(const Transform* src, const int32_t* from, Transform* dst, const int32_t* to,
                              int32_t count);
  // Writes every entry's host bone: (*good)[node] with its rotation replaced by the four
  // floats at scratch + rotation, kBlockLanes apart (the written local rotation's rows).
  void (*scatter)(const ChainScatterEntry* begin, const ChainScatterEntry* end, const float* scratch);
  // Each collider's world shape (what ColliderWorld in chain_pose.cpp computes for one, bit
  // for bit) into out: fields kCax..kCr, each a row of in.stride floats.
  void (*collider_worlds)(const ChainColliderInput& in, float* out);
  const char* name;
};

}  // namespace tendon::detail
