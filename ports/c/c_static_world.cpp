// ports/c/c_static_world.cpp: the C ABI's static world: planes, spheres, capsules, boxes,
// one heightfield and one triangle mesh, built into the World's one static world.
//
// The C struct is structure-of-arrays (a host passes the arrays it has) and the C++ one an
// array of structs per shape, so every field is converted by hand; the table still names
// each C field under the C++ field it builds, and each shape struct's field count is
// checked, so a field added to either side fails the build.
// What it does NOT do: validate shapes (BuildStaticWorld does, naming the item and field),
// or keep the host's arrays (they are copied).
// Threading: as the C++ World. Memory: building copies every shape (the heightfield's
// samples are capped at 2^26).
#include <cstdint>
#include <utility>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonStaticWorldSettings, StaticWorldSettings>
    : TableOf<TendonStaticWorldSettings, StaticWorldSettings> {
  using Rows = RowList<ByHand<&P::planes, &C::plane_normals, &C::plane_offsets, &C::plane_count>,
                       ByHand<&P::spheres, &C::sphere_centres, &C::sphere_radii, &C::sphere_count>,
                       ByHand<&P::capsules, &C::capsule_ends, &C::capsule_radii, &C::capsule_count>,
                       ByHand<&P::boxes, &C::box_poses, &C::box_half_extents, &C::box_count>,
                       ByHand<&P::heightfields, &C::heightfield_origin, &C::heightfield_samples_x,
                              &C::heightfield_samples_z, &C::heightfield_spacing, &C::heightfield_heights>,
                       ByHand<&P::meshes, &C::mesh_vertices, &C::mesh_vertex_count, &C::mesh_indices,
                              &C::mesh_index_count>>;
};
TENDON_C_CHECK_MIRROR(TendonStaticWorldSettings, tendon::StaticWorldSettings);
TENDON_C_CHECK_BY_HAND(tendon::StaticPlane, 2);
TENDON_C_CHECK_BY_HAND(tendon::StaticSphere, 2);
TENDON_C_CHECK_BY_HAND(tendon::StaticCapsule, 3);
TENDON_C_CHECK_BY_HAND(tendon::StaticBox, 2);
TENDON_C_CHECK_BY_HAND(tendon::StaticHeightfield, 5);
TENDON_C_CHECK_BY_HAND(tendon::StaticTriangleMesh, 2);

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

void tendon_static_world_settings_defaults(TendonStaticWorldSettings* c) {
  if (c != nullptr) *c = TendonStaticWorldSettings{};  // every shape empty, as StaticWorldSettings{}
}

TendonResult tendon_build_static_world(TendonWorld* world, const TendonStaticWorldSettings* c) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (c == nullptr) return NullArgument(world, "settings");
  if (BadArray(c->plane_normals, c->plane_count) || BadArray(c->plane_offsets, c->plane_count))
    return BadArrayError(world, "planes");
  if (BadArray(c->sphere_centres, c->sphere_count) || BadArray(c->sphere_radii, c->sphere_count))
    return BadArrayError(world, "spheres");
  if (BadArray(c->capsule_ends, c->capsule_count) || BadArray(c->capsule_radii, c->capsule_count))
    return BadArrayError(world, "capsules");
  if (BadArray(c->box_poses, c->box_count) || BadArray(c->box_half_extents, c->box_count))
    return BadArrayError(world, "boxes");
  if (c->heightfield_samples_x < 0 || c->heightfield_samples_z < 0 ||
      (c->heightfield_samples_x > 0 && c->heightfield_heights == nullptr))
    return BadArrayError(world, "heightfield_heights");
  if (BadArray(c->mesh_vertices, c->mesh_vertex_count) || BadArray(c->mesh_indices, c->mesh_index_count))
    return BadArrayError(world, "mesh");
  return Guard(world, [&] {
    tendon::StaticWorldSettings s;
    for (int32_t i = 0; i < c->plane_count; ++i)
      s.planes.push_back(tendon::StaticPlane{ToCpp(c->plane_normals[i]), c->plane_offsets[i]});
    for (int32_t i = 0; i < c->sphere_count; ++i)
      s.spheres.push_back(tendon::StaticSphere{ToCpp(c->sphere_centres[i]), c->sphere_radii[i]});
    for (int32_t i = 0; i < c->capsule_count; ++i)
      s.capsules.push_back(
          tendon::StaticCapsule{ToCpp(c->capsule_ends[2 * i]), ToCpp(c->capsule_ends[2 * i + 1]), c->capsule_radii[i]});
    for (int32_t i = 0; i < c->box_count; ++i)
      s.boxes.push_back(tendon::StaticBox{ToCpp(c->box_poses[i]), ToCpp(c->box_half_extents[i])});
    if (c->heightfield_samples_x > 0 || c->heightfield_samples_z > 0) {
      tendon::StaticHeightfield h;
      h.origin = ToCpp(c->heightfield_origin);
      h.samples_x = c->heightfield_samples_x;
      h.samples_z = c->heightfield_samples_z;
      h.spacing = c->heightfield_spacing;
      const int64_t n = static_cast<int64_t>(h.samples_x) * h.samples_z;
      if (n > (int64_t{1} << 26))
        return Record(world, TENDON_ERROR_CAPACITY, "heightfield: more than 2^26 samples", "heightfield_samples_x");
      h.heights.assign(c->heightfield_heights, c->heightfield_heights + n);
      s.heightfields.push_back(std::move(h));
    }
    if (c->mesh_vertex_count > 0 || c->mesh_index_count > 0) {
      tendon::StaticTriangleMesh m;
      for (int32_t i = 0; i < c->mesh_vertex_count; ++i) m.vertices.push_back(ToCpp(c->mesh_vertices[i]));
      m.indices.assign(c->mesh_indices, c->mesh_indices + c->mesh_index_count);
      s.meshes.push_back(std::move(m));
    }
    return Record(world, world->world->BuildStaticWorld(s));
  });
}

}  // extern "C"
