// ports/c/c_debug_draw.cpp: the C ABI's debug draw (tendon/debug_draw.h): the palette and
// the callbacks' struct, their defaults, and tendon_world_draw_debug.
//
// The C callbacks take the C value types; the World calls C++ ones. Each C callback the
// host set gets a trampoline whose context is the host's TendonDebugDraw, which converts
// the arguments (bit-compatible values, copied) and calls it with the host's user pointer.
// The floats and the palette cross through the mirror tables below (c_mirror.h).
// What it does NOT do: check the lengths or flags (World::DrawDebug does, naming the field).
// Threading: the callbacks run on the calling thread, inside the call. Memory: none.
#include "ports/c/c_port.h"
#include "tendon/debug_draw.h"

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonDebugDrawColors, DebugDrawColors> : TableOf<TendonDebugDrawColors, DebugDrawColors> {
  using Rows = RowList<Field<&C::chain_node, &P::chain_node>, Field<&C::chain_node_sleeping, &P::chain_node_sleeping>,
                       Field<&C::chain_link, &P::chain_link>, Field<&C::chain_link_sleeping, &P::chain_link_sleeping>,
                       Field<&C::chain_collider, &P::chain_collider>, Field<&C::ragdoll_part, &P::ragdoll_part>,
                       Field<&C::ragdoll_part_kinematic, &P::ragdoll_part_kinematic>,
                       Field<&C::ragdoll_part_sleeping, &P::ragdoll_part_sleeping>,
                       Field<&C::ragdoll_part_frozen, &P::ragdoll_part_frozen>, Field<&C::joint, &P::joint>,
                       Field<&C::joint_swing_limit, &P::joint_swing_limit>,
                       Field<&C::joint_twist_limit, &P::joint_twist_limit>, Field<&C::contact_point, &P::contact_point>,
                       Field<&C::contact_normal, &P::contact_normal>, Field<&C::host_body, &P::host_body>>;
};
TENDON_C_CHECK_MIRROR(TendonDebugDrawColors, tendon::DebugDrawColors);

// The callbacks and the user pointer cross through the trampolines (DrawToCpp); the
// palette through its own table.
template <>
struct MirrorTable<TendonDebugDraw, DebugDraw> : TableOf<TendonDebugDraw, DebugDraw> {
  using Rows = RowList<ByHand<&C::draw_line, &P::draw_line>, ByHand<&C::draw_point, &P::draw_point>,
                       ByHand<&C::draw_sphere, &P::draw_sphere>, ByHand<&C::draw_capsule, &P::draw_capsule>,
                       ByHand<&C::draw_box, &P::draw_box>, ByHand<&C::user, &P::user>,
                       ByHand<&C::colors, &P::colors>, Field<&C::point_size, &P::point_size>,
                       Field<&C::normal_length, &P::normal_length>, Field<&C::limit_length, &P::limit_length>,
                       Field<&C::plane_size, &P::plane_size>>;
};
TENDON_C_CHECK_MIRROR(TendonDebugDraw, tendon::DebugDraw);

static_assert(TENDON_DEBUG_DRAW_CHAIN_NODES == DebugDrawFlags::kChainNodes &&
                  TENDON_DEBUG_DRAW_CHAIN_LINKS == DebugDrawFlags::kChainLinks &&
                  TENDON_DEBUG_DRAW_CHAIN_COLLIDERS == DebugDrawFlags::kChainColliders &&
                  TENDON_DEBUG_DRAW_RAGDOLL_PARTS == DebugDrawFlags::kRagdollParts &&
                  TENDON_DEBUG_DRAW_JOINTS == DebugDrawFlags::kJoints &&
                  TENDON_DEBUG_DRAW_JOINT_LIMITS == DebugDrawFlags::kJointLimits &&
                  TENDON_DEBUG_DRAW_CONTACTS == DebugDrawFlags::kContacts &&
                  TENDON_DEBUG_DRAW_HOST_BODIES == DebugDrawFlags::kHostBodies &&
                  TENDON_DEBUG_DRAW_SLEEPING == DebugDrawFlags::kSleeping && TENDON_DEBUG_DRAW_ALL == DebugDrawFlags::kAll,
              "the C flags are DebugDrawFlags' bits");

namespace {

const TendonDebugDraw& Host(void* user) { return *static_cast<const TendonDebugDraw*>(user); }

// The C++ form: the host's lengths and palette, and a trampoline for each callback it set.
DebugDraw DrawToCpp(const TendonDebugDraw& c) {
  DebugDraw d;
  MirrorIn(c, d);
  MirrorIn(c.colors, d.colors);
  d.user = const_cast<TendonDebugDraw*>(&c);  // read back as const by the trampolines
  if (c.draw_line != nullptr)
    d.draw_line = [](Vec3 a, Vec3 b, DebugColor color, void* u) { Host(u).draw_line(ToC(a), ToC(b), color, Host(u).user); };
  if (c.draw_point != nullptr)
    d.draw_point = [](Vec3 p, float size, DebugColor color, void* u) {
      Host(u).draw_point(ToC(p), size, color, Host(u).user);
    };
  if (c.draw_sphere != nullptr)
    d.draw_sphere = [](Vec3 p, float r, DebugColor color, void* u) { Host(u).draw_sphere(ToC(p), r, color, Host(u).user); };
  if (c.draw_capsule != nullptr)
    d.draw_capsule = [](Vec3 a, Vec3 b, float ra, float rb, DebugColor color, void* u) {
      Host(u).draw_capsule(ToC(a), ToC(b), ra, rb, color, Host(u).user);
    };
  if (c.draw_box != nullptr)
    d.draw_box = [](Transform frame, Vec3 half, DebugColor color, void* u) {
      Host(u).draw_box(ToC(frame), ToC(half), color, Host(u).user);
    };
  return d;
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

void tendon_debug_draw_defaults(TendonDebugDraw* draw) {
  if (draw == nullptr) return;
  *draw = TendonDebugDraw{};
  const tendon::DebugDraw defaults;
  MirrorOut(defaults, *draw);
  MirrorOut(defaults.colors, draw->colors);
}

TendonResult tendon_world_draw_debug(const TendonWorld* world, const TendonDebugDraw* draw, uint32_t flags) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  TendonWorld* w = Mutable(world);
  if (draw == nullptr) return NullArgument(w, "draw");
  // A step's own callbacks (tendon_world_step's wind sampler, predicate) run with the
  // world stepping: the World refuses the draw there too, this says so first.
  if (w->stepping) return Refuse(w, TENDON_ERROR_REENTRANT, "world", ": a debug draw cannot run inside a step");
  return Guard(w, [&] { return Record(w, world->world->DrawDebug(DrawToCpp(*draw), flags)); });
}
