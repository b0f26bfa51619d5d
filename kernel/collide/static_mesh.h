// kernel/collide/static_mesh.h: the static world's triangles (meshes and heightfields)
// behind a bounding volume hierarchy.
//
// Design: heightfields are turned into triangles (two per cell) at build time and share
// one BVH with the meshes: one structure to query, one to test. The tree is built top
// down, splitting each node's triangles at the median centroid along its widest axis, with
// leaves of at most 4 triangles. Queries walk it with a fixed-size stack (no allocation).
// Sphere queries are scalar and go through a plain function pointer from the SIMD
// kernels (each lane asks for itself), so this file is compiled for the baseline only.
#pragma once

#include <cstdint>
#include <vector>

#include "tendon/math.h"

namespace tendon::detail {

struct MeshTriangle {
  Vec3 v0, v1, v2;
  Vec3 normal;      // unit, (v1 - v0) x (v2 - v0) normalised: the side contacts push toward
  int32_t source;   // index of the mesh or heightfield it came from (in settings order)
};

struct BvhNode {
  Vec3 lo, hi;
  int32_t first = 0;  // leaf: first triangle; inner: left child (right = left + 1)
  int32_t count = 0;  // triangles in a leaf, 0 for an inner node
};

class StaticMesh {
 public:
  // Takes the triangles (degenerate ones must already be gone) and builds the tree.
  void Build(std::vector<MeshTriangle> triangles);
  bool empty() const { return triangles_.empty(); }
  int32_t triangle_count() const { return static_cast<int32_t>(triangles_.size()); }

  // The deepest contact of a sphere (centre c, previous centre c_prev, radius r) with any
  // triangle: false when none is within r. A centre behind a triangle counts when it came
  // from in front of it (a fast sphere that crossed it) or is within r of its plane.
  bool SphereContact(Vec3 c, Vec3 c_prev, float r, float* depth, Vec3* normal) const;
  // The nearest triangle a ray (unit direction) meets within max_distance.
  bool Raycast(Vec3 origin, Vec3 dir, float max_distance, float* distance, Vec3* normal, int32_t* source) const;

 private:
  int32_t BuildNode(int32_t first, int32_t count, int32_t depth);
  std::vector<MeshTriangle> triangles_;
  std::vector<BvhNode> nodes_;
};

// The closest point of triangle (a, b, c) to p (the Voronoi-region walk of Ericson,
// "Real-Time Collision Detection", 5.1.5).
Vec3 ClosestPointOnTriangle(Vec3 p, Vec3 a, Vec3 b, Vec3 c);

// A C-callable sphere query for the kernels: `mesh` is a StaticMesh.
bool MeshSphereContact(const void* mesh, const float c[3], const float c_prev[3], float r, float* depth,
                       float normal[3]);

}  // namespace tendon::detail
