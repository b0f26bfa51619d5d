// kernel/rigid/shape_samples.h: the sample spheres a part shape is seen through.
//
// What it does: ForEachShapeSample lists a part shape's sample spheres in the shape's
// frame. Two users read them: the rigid kernels' static contacts (RigidConstants, without
// face centres: up to kMaxContactPoints per part) and the contacts between ragdolls (the
// group's pair points, with a box's face centres). One list keeps the two in step.
// What it does NOT do: find contacts, or store the samples anywhere (the caller's `add`
// does).
// Threading: a pure function. Memory: none.
#pragma once

#include "tendon/ragdoll_settings.h"

namespace tendon::detail {

// A part shape's sample spheres, in the shape's frame: a sphere's one; five along a
// (tapered) capsule's axis, radius interpolated, so that a limb lying across an edge or a
// ball touches it along its length, not only at its ends; a box's corners, and with
// `face_centres` its face centres too (two equal boxes meeting face to face would
// otherwise touch only where their corners are). `add(centre, radius)` takes each.
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

}  // namespace tendon::detail
