// kernel/collide/static_world.h: the static world ragdolls collide with, and rays against it.
//
// What it does: Build validates and stores planes (at most kMaxStaticPlanes), spheres,
// capsules and boxes (at most kMaxStaticShapes together), and turns heightfields and
// triangle meshes into one BVH of triangles (StaticMesh); every bad item is named.
// Raycast finds the nearest hit among them (planes exactly, convex shapes by sphere
// tracing, triangles through the BVH). FillSolveParams hands the rigid kernels what they
// collide with.
// What it does NOT do: move (it is rebuilt whole by Build), or know of ragdolls: a part's
// contact with it is the rigid kernel's business.
// Threading: Build on the World's thread, between Steps; Raycast and FillSolveParams are
// const and may run concurrently with each other. Memory: Build allocates; nothing else.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel/collide/static_mesh.h"
#include "kernel/rigid/rigid_block.h"
#include "tendon/errors.h"
#include "tendon/query.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::detail {

class StaticWorld {
 public:
  // Replaces the static world; on error it is left as it was.
  Error Build(const StaticWorldSettings& settings);
  bool Raycast(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const;
  // Planes, shapes and the mesh into the rigid kernels' parameters.
  void FillSolveParams(RigidSolveParams& params) const;

 private:
  int32_t plane_count_ = 0;
  float planes_[kMaxStaticPlanes][4] = {};
  std::vector<StaticShape> shapes_;
  StaticMesh mesh_;
};

}  // namespace tendon::detail
