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

#include "kernel/simd/lanes.h"

namespace tendon::detail {

// Per node, per lane.
enum NodeField : int32_t {
  // Read or written by every substep: kept together at the front of the block so that a
  // solve streams one contiguous region.
  kPx, kPy, kPz,              // simulated position (world)
  kQx, kQy, kQz,              // previous simulated position (verlet velocity)
  kBx, kBy, kBz,              // animated position this frame (interpolation end)
  kRest,                      // link rest length to the parent (m)
  kDamping, kStiffness, kGravityScale, kWindScale,
  kPinned,                    // 1: copies the animated pose (roots, padding), 0: simulated
  kRadius,                    // node collision radius (m)
  // Read once per frame.
  kAx, kAy, kAz,              // animated position at the last substep (interpolation start;
                              // kept for roots and pinned nodes only)
  kRx, kRy, kRz, kRw,         // animated world rotation this frame
  kWx, kWy, kWz, kWw,         // written world rotation (writeback scratch)
  kOx, kOy, kOz, kOw,         // written local rotation (writeback output)
  kNodeFieldCount
};

// Per lane (not per node).
enum LaneField : int32_t {
  kRootParentRx, kRootParentRy, kRootParentRz, kRootParentRw,  // rotation roots are local to
  // The chain's damping, stiffness and scales when no node overrides them (kUniform = 1):
  // then the solve reads these four (hot in L1 for the whole block) instead of four
  // per-node fields, a quarter less memory traffic per node.
  kLaneDamping, kLaneStiffness, kLaneGravityScale, kLaneWindScale,
  kUniform,
  kLaneFieldCount
};

// Per collider, per lane: world-space shape of this frame.
enum ColliderField : int32_t {
  kCax, kCay, kCaz,  // sphere centre, capsule end A, plane point
  kCbx, kCby, kCbz,  // capsule end B, plane unit normal
  kCr,               // radius
  kColliderFieldCount
};

enum ColliderKind : uint8_t { kSphereOutside, kSphereInside, kCapsuleOutside, kCapsuleInside, kPlaneKind };

inline constexpr std::size_t FloatsPerBlock(int32_t node_count, int32_t collider_count) {
  return (static_cast<std::size_t>(kNodeFieldCount) * node_count + kLaneFieldCount +
          static_cast<std::size_t>(kColliderFieldCount) * collider_count) *
         kBlockLanes;
}

// A non-owning view of one block; what kernels take.
struct ChainBlockView {
  const int32_t* parent = nullptr;       // [node_count], -1 for roots
  const int32_t* first_child = nullptr;  // [node_count], -1 for leaves
  const uint8_t* collider_kind = nullptr;
  int32_t node_count = 0;
  int32_t collider_count = 0;
  float* data = nullptr;  // FloatsPerBlock floats, cache-line aligned

  float* Node(int32_t field, int32_t node) const {
    return data + (static_cast<std::size_t>(field) * node_count + node) * kBlockLanes;
  }
  float* Lane(int32_t field) const {
    return data + (static_cast<std::size_t>(kNodeFieldCount) * node_count + field) * kBlockLanes;
  }
  float* Collider(int32_t field, int32_t collider) const {
    return data + (static_cast<std::size_t>(kNodeFieldCount) * node_count + kLaneFieldCount +
                   static_cast<std::size_t>(field) * collider_count + collider) *
                      kBlockLanes;
  }
};

// What the solve of one frame needs besides the block.
struct ChainSolveParams {
  int32_t substeps = 0;   // substeps this frame
  float dt = 0;           // substep length (s)
  float gravity[3] = {0, 0, 0};
  float wind[3] = {0, 0, 0};  // this frame's wind (sampled once per frame)
};

// How many blocks a solve call interleaves (see Solve in chain_kernel_impl.h).
inline constexpr int32_t kSolveInterleave = 4;

// A kernel set for one instruction set; see chain_kernels.cpp for the dispatch.
struct ChainKernels {
  // Runs params.substeps substeps over `count` blocks of one topology: integrate,
  // stiffness, collide, link. Each lane's result is independent of the others'.
  void (*solve)(const ChainBlockView* blocks, int32_t count, const ChainSolveParams& params);
  // Fills kW* and kO* (written world and local rotations) from the solved positions.
  void (*writeback)(const ChainBlockView& block);
  const char* name;
};

}  // namespace tendon::detail
