// kernel/chains/chain_host_pick.h: which host bodies a chain lane collides with this frame
// (ChainArchetypeSettings::host_body_mask, max_host_bodies), through a broad phase.
//
// Owns: HostBroadPhase, built once per frame from the World's host shapes
// (kernel/core/host_shapes.h): every shape that can push (not a trigger, a known kind,
// finite bounds) with its world bounds, sorted along the axis on which the shapes' centres
// spread the most, with the running maximum of their far ends along it. A lane's query
// binary-searches that axis for the shapes whose extent along it can overlap the lane's
// bounds and tests only those: a chain among thousands of far host bodies looks at the few
// near it, not at all of them. The pick (PickHostShapes) keeps the max_picks nearest
// matching shapes whose bounds overlap the lane's, nearest first by the squared distance
// from the bounds' centre to the shape (a sphere's centre, a capsule's segment, a box's
// solid), ties to the lower shape index: the same shapes in the same order as a linear
// scan over every shape (PickHostShapesLinear, kept as the tests' oracle), whatever order
// the broad phase visits them in, and so for any worker count.
// Does NOT: collide anything (the chain kernels do, chain_kernel_verlet.h / _vrm.h), or
// write lanes (ChainSystem::WriteHostBodies). One very long shape along the sorted axis
// (a 100 m floor box) makes every query start at it; the cost is then the shapes between,
// still no worse than the linear scan.
// Threading and memory: Build runs on one thread at the frame's opening and does not
// allocate once Reserve has been given the shape count (World::AddHostBody reserves); the
// sort is in place. Queries are const and run from any number of workers at once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernel/core/host_shapes.h"
#include "tendon/math.h"

namespace tendon::detail {

// A lane's bounds, already grown by its node radius (world space, m).
struct HostPickBounds {
  Vec3 lo, hi;
};

// The squared distance from `point` to shape h (sphere centre, capsule segment, box solid).
float HostShapeDistance2(const HostShape& h, Vec3 point);
// Shape h's world bounds; false when h pushes nothing (a trigger, an unknown kind) or its
// bounds are not finite.
bool HostShapeBounds(const HostShape& h, Vec3* lo, Vec3* hi);

// Up to max_picks (<= kMaxChainHostBodies) indices into `shapes`, nearest first, into out;
// returns how many. Every shape, in index order: the reference the broad phase must equal.
int32_t PickHostShapesLinear(std::span<const HostShape> shapes, const HostPickBounds& bounds, uint32_t mask,
                             int32_t max_picks, int32_t* out);

class HostBroadPhase {
 public:
  void Reserve(std::size_t shapes);
  // Indexes `shapes` (kept by reference until the next Build: the caller keeps them alive).
  void Build(std::span<const HostShape> shapes);
  // As PickHostShapesLinear over the shapes of the last Build, bit for bit.
  int32_t Pick(const HostPickBounds& bounds, uint32_t mask, int32_t max_picks, int32_t* out) const;
  std::span<const HostShape> Shapes() const { return shapes_; }

 private:
  // A pushing shape's bounds and group, copied so that a query's scan of its slice reads
  // one sequential array and touches the shapes only for those that overlap.
  struct Entry {
    Vec3 lo, hi;
    uint32_t group;
    int32_t shape;  // its index in shapes_
  };
  std::span<const HostShape> shapes_{};
  std::vector<Entry> entries_;  // pushing shapes, by (lo along axis_, shape)
  std::vector<float> reach_;    // reach_[i]: the largest hi along axis_ of entries_[0..i]
  int32_t axis_ = 0;
};

}  // namespace tendon::detail
