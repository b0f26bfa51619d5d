// kernel/collide/static_world.cpp: building the static world and casting rays into it.
//
// Heightfields and meshes become triangles of one BVH; a triangle's `source` numbers it
// after the planes, spheres, capsules and boxes (heightfields first, then meshes), which
// is what RaycastHit::static_shape reports. Degenerate triangles are dropped; a mesh with
// nothing else is an error.
#include "kernel/collide/static_world.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernel/collide/part_distance.h"
#include "kernel/collide/sphere_trace.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

namespace {

bool InStaticRange(float v) { return std::fabs(v) <= kMaxStaticCoordinate; }
bool InStaticRange(Vec3 v) { return InStaticRange(v.x) && InStaticRange(v.y) && InStaticRange(v.z); }

Error OutOfStaticRange(std::size_t item, const char* field, const char* what) {
  return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(item), field,
              std::string(what) + " lies beyond +-kMaxStaticCoordinate (1e6 m)");
}

}  // namespace

Error StaticWorld::Build(const StaticWorldSettings& settings) {
  if (static_cast<int32_t>(settings.planes.size()) > kMaxStaticPlanes)
    return Fail(ErrorCode::kCapacity, -1, "planes", "at most 8 static planes");
  if (static_cast<int32_t>(settings.spheres.size() + settings.capsules.size() + settings.boxes.size()) >
      kMaxStaticShapes)
    return Fail(ErrorCode::kCapacity, -1, "shapes", "at most 64 static spheres, capsules and boxes together");
  for (std::size_t i = 0; i < settings.planes.size(); ++i) {
    const StaticPlane& p = settings.planes[i];
    if (!IsFinite(p.normal) || !std::isfinite(p.offset))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "planes", "a plane is not finite");
    if (std::fabs(Length(p.normal) - 1.0f) > 1e-3f)
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "planes", "a plane's normal must be unit");
    if (!InStaticRange(p.offset)) return OutOfStaticRange(i, "planes", "a plane's offset");
  }
  std::vector<StaticShape> shapes;
  auto copy3 = [](float* d, Vec3 v) { d[0] = v.x, d[1] = v.y, d[2] = v.z; };
  for (std::size_t i = 0; i < settings.spheres.size(); ++i) {
    const StaticSphere& s = settings.spheres[i];
    if (!IsFinite(s.centre) || !std::isfinite(s.radius))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "spheres", "a sphere is not finite");
    if (!(s.radius > 0)) return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "spheres", "a sphere's radius must be positive");
    if (!InStaticRange(s.centre) || !InStaticRange(s.radius)) return OutOfStaticRange(i, "spheres", "a sphere");
    StaticShape out;
    out.kind = kStaticSphere;
    copy3(out.a, s.centre);
    out.radius = s.radius;
    shapes.push_back(out);
  }
  for (std::size_t i = 0; i < settings.capsules.size(); ++i) {
    const StaticCapsule& c = settings.capsules[i];
    if (!IsFinite(c.a) || !IsFinite(c.b) || !std::isfinite(c.radius))
      return Fail(ErrorCode::kNotFinite, static_cast<int32_t>(i), "capsules", "a capsule is not finite");
    if (!(c.radius > 0)) return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "capsules", "a capsule's radius must be positive");
    if (!InStaticRange(c.a) || !InStaticRange(c.b) || !InStaticRange(c.radius))
      return OutOfStaticRange(i, "capsules", "a capsule");
    StaticShape out;
    out.kind = kStaticCapsule;
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
    if (!InStaticRange(b.pose.translation) || !InStaticRange(b.half_extents)) return OutOfStaticRange(i, "boxes", "a box");
    if (std::fabs(std::sqrt(Dot(b.pose.rotation, b.pose.rotation)) - 1.0f) > 1e-3f)
      return Fail(ErrorCode::kNotUnitRotation, static_cast<int32_t>(i), "boxes", "a box's rotation must be unit");
    StaticShape out;
    out.kind = kStaticBox;
    copy3(out.a, b.pose.translation);
    const Quat q = Normalize(b.pose.rotation);
    out.q[0] = q.x, out.q[1] = q.y, out.q[2] = q.z, out.q[3] = q.w;
    copy3(out.half, b.half_extents);
    shapes.push_back(out);
  }
  // Heightfields and meshes: triangles for one BVH; `source` numbers them after the boxes.
  std::vector<MeshTriangle> triangles;
  const auto first_source = static_cast<int32_t>(settings.planes.size() + shapes.size());
  auto add_triangle = [&](Vec3 a, Vec3 b, Vec3 c, int32_t source) {
    const Vec3 n = Cross(b - a, c - a);
    const float len = Length(n);
    if (!(len > 1e-12f)) return false;
    triangles.push_back(MeshTriangle{a, b, c, n * (1.0f / len), source});
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
      if (!InStaticRange(v)) return OutOfStaticRange(h, "heightfields", "a height");
    }
    if (!InStaticRange(f.origin) || !InStaticRange(f.spacing)) return OutOfStaticRange(h, "heightfields", "its origin or spacing");
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
      if (!InStaticRange(v)) return OutOfStaticRange(m, "meshes", "a mesh vertex");
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
  mesh_.Build(std::move(triangles));
  shapes_ = std::move(shapes);
  plane_count_ = static_cast<int32_t>(settings.planes.size());
  for (int32_t i = 0; i < plane_count_; ++i) {
    const StaticPlane& p = settings.planes[i];
    planes_[i][0] = p.normal.x;
    planes_[i][1] = p.normal.y;
    planes_[i][2] = p.normal.z;
    planes_[i][3] = p.offset;
  }
  return {};
}

void StaticWorld::FillSolveParams(RigidSolveParams& params) const {
  params.plane_count = plane_count_;
  params.shape_count = static_cast<int32_t>(shapes_.size());
  params.shapes = shapes_.data();
  if (!mesh_.empty()) {
    params.mesh_contact = &MeshSphereContact;
    params.mesh = &mesh_;
  }
  for (int32_t p = 0; p < plane_count_; ++p)
    for (int32_t k = 0; k < 4; ++k) params.planes[p][k] = planes_[p][k];
}

bool StaticWorld::Raycast(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  if (!RayReady(origin, dir, max_distance)) return false;
  float best = max_distance;
  bool found = false;
  auto take = [&](float t, Vec3 normal, int32_t index) {
    // A NaN or infinite distance is no hit (max_distance may be +inf), nor is a point or
    // normal that overflowed on a ray from far away: a query result is always finite.
    if (!(t >= 0 && t <= best) || !std::isfinite(t)) return;
    const Vec3 point = origin + dir * t;
    if (!IsFinite(point) || !IsFinite(normal)) return;
    best = t;
    found = true;
    hit->ragdoll = RagdollId{};
    hit->part = -1;
    hit->static_shape = index;
    hit->distance = t;
    hit->point = point;
    hit->normal = normal;
  };
  for (int32_t i = 0; i < plane_count_; ++i) {
    const Vec3 n{planes_[i][0], planes_[i][1], planes_[i][2]};
    const float denom = Dot(n, dir), height = Dot(n, origin) - planes_[i][3];
    if (height >= 0 && denom < 0) take(-height / denom, n, i);
  }
  for (std::size_t k = 0; k < shapes_.size(); ++k) {
    const StaticShape& sh = shapes_[k];
    auto sdf = [&](Vec3 p) {
      const Vec3 a{sh.a[0], sh.a[1], sh.a[2]};
      if (sh.kind == kStaticSphere) return Length(p - a) - sh.radius;
      if (sh.kind == kStaticBox) {
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
    if (t >= 0) take(t, DistanceNormal(sdf, origin + dir * t), plane_count_ + static_cast<int32_t>(k));
  }
  float t = 0;
  Vec3 n;
  int32_t source = -1;
  if (mesh_.Raycast(origin, dir, best, &t, &n, &source)) take(t, n, source);
  return found;
}

}  // namespace tendon::detail
