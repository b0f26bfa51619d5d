// kernel/collide/static_mesh.cpp: BVH build and queries over the static triangles.
#include "kernel/collide/static_mesh.h"

#include <algorithm>
#include <cmath>

namespace tendon::detail {
namespace {

constexpr int32_t kLeafTriangles = 4;
constexpr int32_t kStackDepth = 64;

Vec3 Min3(Vec3 a, Vec3 b) { return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)}; }
Vec3 Max3(Vec3 a, Vec3 b) { return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)}; }
float Axis(Vec3 v, int a) { return a == 0 ? v.x : (a == 1 ? v.y : v.z); }

bool BoxesOverlap(Vec3 alo, Vec3 ahi, Vec3 blo, Vec3 bhi) {
  return alo.x <= bhi.x && ahi.x >= blo.x && alo.y <= bhi.y && ahi.y >= blo.y && alo.z <= bhi.z && ahi.z >= blo.z;
}

// Slab test: does the ray enter the box before `max_t`?
bool RayHitsBox(Vec3 o, Vec3 inv_dir, Vec3 lo, Vec3 hi, float max_t) {
  float t0 = 0, t1 = max_t;
  for (int a = 0; a < 3; ++a) {
    const float inv = Axis(inv_dir, a);
    float near = (Axis(lo, a) - Axis(o, a)) * inv, far = (Axis(hi, a) - Axis(o, a)) * inv;
    if (near > far) std::swap(near, far);
    t0 = std::max(t0, near);
    t1 = std::min(t1, far);
    if (t0 > t1) return false;
  }
  return true;
}

}  // namespace

Vec3 ClosestPointOnTriangle(Vec3 p, Vec3 a, Vec3 b, Vec3 c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const float d1 = Dot(ab, ap), d2 = Dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const Vec3 bp = p - b;
  const float d3 = Dot(ab, bp), d4 = Dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const float vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + ab * (d1 / (d1 - d3));
  const Vec3 cp = p - c;
  const float d5 = Dot(ab, cp), d6 = Dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const float vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + ac * (d2 / (d2 - d6));
  const float va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
  const float denom = 1.0f / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

void StaticMesh::Build(std::vector<MeshTriangle> triangles) {
  triangles_ = std::move(triangles);
  nodes_.clear();
  if (triangles_.empty()) return;
  nodes_.reserve(2 * triangles_.size() / kLeafTriangles + 2);
  BuildNode(0, static_cast<int32_t>(triangles_.size()), 0);
}

// A leaf holds `count` > 0 triangles from `first`; an inner node has its children at
// `first` and -`count` (a negative count marks it inner).
int32_t StaticMesh::BuildNode(int32_t first, int32_t count, int32_t depth) {
  const auto index = static_cast<int32_t>(nodes_.size());
  nodes_.emplace_back();
  Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
  Vec3 clo = lo, chi = hi;
  for (int32_t i = first; i < first + count; ++i) {
    const MeshTriangle& t = triangles_[i];
    lo = Min3(lo, Min3(t.v0, Min3(t.v1, t.v2)));
    hi = Max3(hi, Max3(t.v0, Max3(t.v1, t.v2)));
    const Vec3 centre = (t.v0 + t.v1 + t.v2) * (1.0f / 3.0f);
    clo = Min3(clo, centre);
    chi = Max3(chi, centre);
  }
  nodes_[index].lo = lo;
  nodes_[index].hi = hi;
  if (count <= kLeafTriangles || depth >= kStackDepth - 2) {
    nodes_[index].first = first;
    nodes_[index].count = count;
    return index;
  }
  const Vec3 extent = chi - clo;
  const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
  const int32_t half = count / 2;
  std::nth_element(triangles_.begin() + first, triangles_.begin() + first + half, triangles_.begin() + first + count,
                   [axis](const MeshTriangle& a, const MeshTriangle& b) {
                     return Axis(a.v0 + a.v1 + a.v2, axis) < Axis(b.v0 + b.v1 + b.v2, axis);
                   });
  const int32_t left = BuildNode(first, half, depth + 1);
  const int32_t right = BuildNode(first + half, count - half, depth + 1);
  nodes_[index].first = left;
  nodes_[index].count = -right;
  return index;
}

bool StaticMesh::SphereContact(Vec3 c, Vec3 c_prev, float r, float* depth, Vec3* normal) const {
  if (nodes_.empty()) return false;
  const Vec3 lo = Min3(c, c_prev) - Vec3{r, r, r}, hi = Max3(c, c_prev) + Vec3{r, r, r};
  int32_t stack[kStackDepth];
  int32_t top = 0;
  stack[top++] = 0;
  bool found = false;
  float best = 0;
  while (top > 0) {
    const BvhNode& node = nodes_[stack[--top]];
    if (!BoxesOverlap(lo, hi, node.lo, node.hi)) continue;
    if (node.count > 0) {
      for (int32_t i = node.first; i < node.first + node.count; ++i) {
        const MeshTriangle& t = triangles_[i];
        const Vec3 q = ClosestPointOnTriangle(c, t.v0, t.v1, t.v2);
        const float side = Dot(c - t.v0, t.normal);
        float d;
        Vec3 n;
        if (side >= 0) {
          const float dist = Length(c - q);
          d = dist - r;
          n = dist > 1e-7f ? (c - q) * (1.0f / dist) : t.normal;
        } else {
          // Behind: a contact only over the triangle's face, and not when the sphere was
          // already well behind it at the substep's start too (it is on the far side of a
          // thin wall, not sinking into the ground). "Well": beyond its radius plus 5 cm,
          // so a box corner (radius 0) that is not fully pushed out in one substep is kept.
          const float prev_side = Dot(c_prev - t.v0, t.normal);
          const Vec3 on_plane = c - t.normal * side;
          const bool over_face = LengthSquared(ClosestPointOnTriangle(on_plane, t.v0, t.v1, t.v2) - on_plane) < 1e-8f;
          const float well_behind = -(r + 0.05f);
          if (!over_face || (prev_side < well_behind && side < well_behind)) continue;
          d = side - r;
          n = t.normal;
        }
        if (d < r && (!found || d < best)) {
          best = d;
          *normal = n;
          found = true;
        }
      }
    } else if (top + 2 <= kStackDepth) {
      stack[top++] = node.first;
      stack[top++] = -node.count;
    }
  }
  if (!found || best >= 0) return false;
  *depth = best;
  return true;
}

bool StaticMesh::Raycast(Vec3 o, Vec3 dir, float max_distance, float* distance, Vec3* normal, int32_t* source) const {
  if (nodes_.empty()) return false;
  const Vec3 inv{1.0f / (std::fabs(dir.x) > 1e-12f ? dir.x : 1e-12f), 1.0f / (std::fabs(dir.y) > 1e-12f ? dir.y : 1e-12f),
                 1.0f / (std::fabs(dir.z) > 1e-12f ? dir.z : 1e-12f)};
  int32_t stack[kStackDepth];
  int32_t top = 0;
  stack[top++] = 0;
  float best = max_distance;
  bool found = false;
  while (top > 0) {
    const BvhNode& node = nodes_[stack[--top]];
    if (!RayHitsBox(o, inv, node.lo, node.hi, best)) continue;
    if (node.count > 0) {
      for (int32_t i = node.first; i < node.first + node.count; ++i) {
        // Ray against the triangle: barycentric solve (Moller and Trumbore, 1997).
        const MeshTriangle& t = triangles_[i];
        const Vec3 e1 = t.v1 - t.v0, e2 = t.v2 - t.v0;
        const Vec3 p = Cross(dir, e2);
        const float det = Dot(e1, p);
        if (std::fabs(det) < 1e-12f) continue;
        const float inv_det = 1.0f / det;
        const Vec3 s = o - t.v0;
        const float u = Dot(s, p) * inv_det;
        if (!(u >= 0 && u <= 1)) continue;  // written so that a NaN fails too
        const Vec3 q = Cross(s, e1);
        const float v = Dot(dir, q) * inv_det;
        if (!(v >= 0 && u + v <= 1)) continue;
        const float hit = Dot(e2, q) * inv_det;
        if (!(hit >= 0 && hit <= best)) continue;
        best = hit;
        found = true;
        *normal = Dot(t.normal, dir) < 0 ? t.normal : -t.normal;
        *source = t.source;
      }
    } else if (top + 2 <= kStackDepth) {
      stack[top++] = node.first;
      stack[top++] = -node.count;
    }
  }
  if (found) *distance = best;
  return found;
}

bool MeshSphereContact(const void* mesh, const float c[3], const float c_prev[3], float r, float* depth,
                       float normal[3]) {
  Vec3 n;
  const bool hit = static_cast<const StaticMesh*>(mesh)->SphereContact(Vec3{c[0], c[1], c[2]},
                                                                     Vec3{c_prev[0], c_prev[1], c_prev[2]}, r, depth, &n);
  if (hit) {
    normal[0] = n.x;
    normal[1] = n.y;
    normal[2] = n.z;
  }
  return hit;
}

}  // namespace tendon::detail
