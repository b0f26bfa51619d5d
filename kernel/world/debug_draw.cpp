// kernel/world/debug_draw.cpp: World::DrawDebug (tendon/debug_draw.h): what the solver
// sees, handed to the host's primitives.
//
// What it does: walks the chain system (nodes, links and colliders as its lanes hold
// them), the ragdoll store (every enabled instance's bodies: part shapes, joints and their
// limits, static contacts from each part's contact rows) and the pair contacts of the last
// frame, and calls the host's callbacks in that order: chains in slot order, ragdolls in
// slot order, then the pairs in the broad phase's order. Everything is read from the last
// substep's state, so the picture is the one the next substep starts from.
// What it does NOT do: change anything, allocate, or run inside Step (a frame in flight
// refuses it): it reads state the frame writes.
// Threading: the World's thread, between Steps; the host's callbacks run on it.
// Memory: none (the chain walk's scratch is on the stack).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "kernel/chains/chain_block.h"
#include "kernel/chains/chain_system.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/ragdoll_store.h"
#include "kernel/rigid/rigid_block.h"
#include "kernel/world/world_impl.h"
#include "tendon/debug_draw.h"
#include "tendon/world.h"

namespace tendon {

using detail::Fail;

namespace {

constexpr float kMaxDrawLength = 1e3f;  // m: DebugDraw's lengths
constexpr int32_t kConeSegments = 16;   // lines round a swing cone
constexpr int32_t kFanSegments = 8;     // lines across a twist or hinge range

// The host's primitives, skipping the null ones.
struct Painter {
  const DebugDraw& d;
  void Line(Vec3 a, Vec3 b, DebugColor c) const {
    if (d.draw_line != nullptr) d.draw_line(a, b, c, d.user);
  }
  void Point(Vec3 p, DebugColor c) const {
    if (d.draw_point != nullptr) d.draw_point(p, d.point_size, c, d.user);
  }
  void Sphere(Vec3 p, float r, DebugColor c) const {
    if (d.draw_sphere != nullptr) d.draw_sphere(p, r, c, d.user);
  }
  void Capsule(Vec3 a, Vec3 b, float ra, float rb, DebugColor c) const {
    if (d.draw_capsule != nullptr) d.draw_capsule(a, b, ra, rb, c, d.user);
  }
  void Box(const Transform& frame, Vec3 half, DebugColor c) const {
    if (d.draw_box != nullptr) d.draw_box(frame, half, c, d.user);
  }
};

struct ChainContext {
  const Painter* paint;
  uint32_t flags;
};

// Any unit vector perpendicular to unit n (a plane's cross).
Vec3 Perpendicular(Vec3 n) {
  return NormalizeOr(std::fabs(n.x) < 0.6f ? Cross(n, Vec3{1, 0, 0}) : Cross(n, Vec3{0, 1, 0}), Vec3{0, 0, 1});
}

void DrawChain(const detail::ChainSystem::DrawnChain& chain, void* context) {
  const auto& ctx = *static_cast<const ChainContext*>(context);
  const Painter& paint = *ctx.paint;
  const DebugDrawColors& colors = paint.d.colors;
  const bool sleeping = !chain.simulated && (ctx.flags & DebugDrawFlags::kSleeping) != 0;
  if ((ctx.flags & DebugDrawFlags::kChainLinks) != 0) {
    const DebugColor c = sleeping ? colors.chain_link_sleeping : colors.chain_link;
    for (std::size_t k = 0; k < chain.nodes.size(); ++k)
      if (chain.parent[k] >= 0) paint.Line(chain.nodes[static_cast<std::size_t>(chain.parent[k])], chain.nodes[k], c);
  }
  if ((ctx.flags & DebugDrawFlags::kChainNodes) != 0) {
    const DebugColor c = sleeping ? colors.chain_node_sleeping : colors.chain_node;
    for (const Vec3& p : chain.nodes) paint.Point(p, c);
  }
  if ((ctx.flags & DebugDrawFlags::kChainColliders) == 0) return;
  for (const auto& collider : chain.colliders) {
    const DebugColor c = colors.chain_collider;
    switch (collider.kind) {
      case detail::kSphereOutside:
      case detail::kSphereInside:
        paint.Sphere(collider.a, collider.radius, c);
        break;
      case detail::kCapsuleOutside:
      case detail::kCapsuleInside:
        paint.Capsule(collider.a, collider.b, collider.radius, collider.radius, c);
        break;
      default: {  // a plane: a cross in it and its normal
        const float s = paint.d.plane_size;
        const Vec3 u = Perpendicular(collider.b), v = Cross(collider.b, u);
        paint.Line(collider.a - u * s, collider.a + u * s, c);
        paint.Line(collider.a - v * s, collider.a + v * s, c);
        paint.Line(collider.a, collider.a + collider.b * s, c);
        break;
      }
    }
  }
}

Vec3 BodyPoint(Vec3 x, Quat q, const float p[3]) { return x + Rotate(q, Vec3{p[0], p[1], p[2]}); }
Quat QuatOf(const float q[4]) { return Quat{q[0], q[1], q[2], q[3]}; }

// One part's shape at its body's pose.
void DrawShape(const Painter& paint, const PartShapeSettings& shape, const Transform& frame, DebugColor c) {
  switch (shape.type) {
    case PartShape::kCapsule:
      paint.Capsule(TransformPoint(frame, Vec3{0, shape.half_height, 0}), TransformPoint(frame, Vec3{0, -shape.half_height, 0}),
                    shape.radius, shape.radius, c);
      break;
    case PartShape::kTaperedCapsule:
      paint.Capsule(TransformPoint(frame, Vec3{0, shape.half_height, 0}), TransformPoint(frame, Vec3{0, -shape.half_height, 0}),
                    shape.top_radius, shape.bottom_radius, c);
      break;
    case PartShape::kSphere:
      paint.Sphere(frame.translation, shape.radius, c);
      break;
    case PartShape::kBox:
      paint.Box(Transform{frame.translation, frame.rotation, {1, 1, 1}}, shape.half_extents, c);
      break;
  }
}

// The limits of joint j (to its parent) as fans of lines from its anchor, in the parent's
// joint frame (x: the twist or hinge axis, y: the plane axis, z: their normal).
void DrawLimits(const Painter& paint, const detail::RigidPartConstants& joint, Quat parent_q, Quat child_q, Vec3 anchor) {
  const float length = paint.d.limit_length;
  if (!(length > 0.0f)) return;
  const DebugDrawColors& colors = paint.d.colors;
  const Quat frame = parent_q * QuatOf(joint.frame_parent);
  const Vec3 x = Rotate(frame, Vec3{1, 0, 0}), y = Rotate(frame, Vec3{0, 1, 0}), z = Rotate(frame, Vec3{0, 0, 1});
  auto fan = [&](float from, float to, DebugColor c) {  // about x, from y toward z
    Vec3 last{};
    for (int32_t i = 0; i <= kFanSegments; ++i) {
      const float t = from + (to - from) * static_cast<float>(i) / kFanSegments;
      const Vec3 p = anchor + (y * std::cos(t) + z * std::sin(t)) * length;
      paint.Line(anchor, p, c);
      if (i > 0) paint.Line(last, p, c);
      last = p;
    }
  };
  if (joint.joint_type == 1) {
    fan(joint.hinge_min, joint.hinge_max, colors.joint_twist_limit);
  } else {
    // The swing cone round x: toward y within plane_half_cone, toward z within
    // normal_half_cone, an ellipse between them.
    const float a = joint.plane_half_cone, b = joint.normal_half_cone;
    Vec3 first{}, last{};
    for (int32_t i = 0; i < kConeSegments; ++i) {
      const float phi = 2.0f * std::numbers::pi_v<float> * static_cast<float>(i) / kConeSegments;
      const float cp = std::cos(phi), sp = std::sin(phi);
      const float denom = std::sqrt((b * cp) * (b * cp) + (a * sp) * (a * sp));
      const float theta = denom > 0.0f ? a * b / denom : 0.0f;
      const Vec3 p = anchor + (x * std::cos(theta) + (y * cp + z * sp) * std::sin(theta)) * length;
      paint.Line(anchor, p, colors.joint_swing_limit);
      if (i > 0) paint.Line(last, p, colors.joint_swing_limit);
      if (i == 0) first = p;
      last = p;
    }
    paint.Line(last, first, colors.joint_swing_limit);
    fan(joint.twist_min, joint.twist_max, colors.joint_twist_limit);
  }
  // Where the child's plane axis points now, against the range above.
  paint.Line(anchor, anchor + Rotate(child_q * QuatOf(joint.frame_child), Vec3{0, 1, 0}) * length, colors.joint);
}

void DrawRagdolls(const Painter& paint, const detail::RagdollSystem& ragdolls, uint32_t flags) {
  const detail::RagdollStore& store = ragdolls.StoreForDraw();
  const DebugDrawColors& colors = paint.d.colors;
  const bool show_sleep = (flags & DebugDrawFlags::kSleeping) != 0;
  for (uint32_t i = 0; i < store.handles.SlotCount(); ++i) {
    if (!store.handles.IsLiveAt(i)) continue;
    const detail::RagdollSlot& slot = store.slots[i];
    // Host bodies are drawn by DrawHostBodies (kHostBodies), not as ragdolls.
    if (!slot.enabled || slot.internal == detail::kHostBodySlot) continue;
    auto& group = const_cast<detail::RagdollGroup&>(store.groups[static_cast<std::size_t>(slot.group)]);
    const detail::RigidBlockView view = group.ViewOfLane(slot.lane);
    const int32_t l = group.LaneInBlock(slot.lane);
    bool finite = true;
    for (int32_t j = 0; j < group.part_count && finite; ++j) {
      Vec3 x;
      Quat q;
      detail::ReadPose(view, l, j, &x, &q);
      finite = IsFinite(x) && IsFinite(q);
    }
    if (!finite) continue;  // a lane the next Step resets: nothing non-finite reaches the host
    for (int32_t j = 0; j < group.part_count; ++j) {
      const detail::RigidPartConstants& part = group.constants[static_cast<std::size_t>(j)];
      Vec3 x;
      Quat q;
      detail::ReadPose(view, l, j, &x, &q);
      if ((flags & DebugDrawFlags::kRagdollParts) != 0) {
        DebugColor c = part.inv_mass > 0.0f ? colors.ragdoll_part : colors.ragdoll_part_kinematic;
        if (show_sleep && slot.frozen) c = colors.ragdoll_part_frozen;
        else if (show_sleep && slot.asleep) c = colors.ragdoll_part_sleeping;
        DrawShape(paint, group.shapes[static_cast<std::size_t>(j)],
                  Compose(Transform{x, q, {1, 1, 1}}, group.shape_in_body[static_cast<std::size_t>(j)]), c);
      }
      if (part.parent >= 0 && (flags & (DebugDrawFlags::kJoints | DebugDrawFlags::kJointLimits)) != 0) {
        Vec3 px;
        Quat pq;
        detail::ReadPose(view, l, part.parent, &px, &pq);
        const Vec3 anchor = BodyPoint(px, pq, part.anchor_parent);
        if ((flags & DebugDrawFlags::kJoints) != 0) {
          paint.Point(anchor, colors.joint);
          paint.Line(px, anchor, colors.joint);
          paint.Line(BodyPoint(x, q, part.anchor_child), x, colors.joint);
        }
        if ((flags & DebugDrawFlags::kJointLimits) != 0) DrawLimits(paint, part, pq, q, anchor);
      }
      if ((flags & DebugDrawFlags::kContacts) != 0) {
        for (int32_t k = 0; k < part.point_count; ++k) {
          if (!(view.Contact(detail::kTouching, j, k)[l] > 0.5f)) continue;
          const Vec3 n{view.Contact(detail::kCnx, j, k)[l], view.Contact(detail::kCny, j, k)[l],
                       view.Contact(detail::kCnz, j, k)[l]};
          const Vec3 p = BodyPoint(x, q, part.points[k]) - n * part.points[k][3];  // on the sphere, toward the surface
          if (!IsFinite(p) || !IsFinite(n)) continue;
          paint.Point(p, colors.contact_point);
          if (paint.d.normal_length > 0.0f) paint.Line(p, p + n * paint.d.normal_length, colors.contact_normal);
        }
      }
    }
  }
  if ((flags & DebugDrawFlags::kContacts) == 0) return;
  const detail::BroadPhase& broad = ragdolls.BroadPhaseForDraw();
  for (const detail::PartPair& pair : ragdolls.ContactPairsForDraw()) {
    // A body unbound, switched off or moved to another lane since the frame: its pair's
    // contacts are gone with the frame that found them.
    bool current = true;
    for (int32_t body : {pair.a, pair.b}) {
      const detail::PairBody& b = broad.body(body);
      const auto s = static_cast<uint32_t>(b.slot);
      current = current && s < store.handles.SlotCount() && store.handles.IsLiveAt(s) && store.slots[s].enabled &&
                store.slots[s].group == b.group && store.slots[s].lane == b.lane;
    }
    if (!current) continue;
    detail::PairContacts::DrawnContact contacts[detail::kContactsPerPair];
    const int32_t count = ragdolls.ContactsForDraw().DrawnContacts(pair, contacts);
    for (int32_t k = 0; k < count; ++k) {
      if (!IsFinite(contacts[k].point)) continue;
      paint.Point(contacts[k].point, colors.contact_point);
      if (paint.d.normal_length > 0.0f)
        paint.Line(contacts[k].point, contacts[k].point + contacts[k].normal * paint.d.normal_length,
                   colors.contact_normal);
    }
  }
}

// Host bodies (kHostBodies): one-part kinematic lanes of the ragdoll system
// (kernel/ragdolls/host_bodies.h), each drawn at its pose after the last Step in
// DebugDrawColors::host_body.
void DrawHostBodies(const Painter& paint, const detail::RagdollSystem& ragdolls) {
  const detail::RagdollStore& store = ragdolls.StoreForDraw();
  for (uint32_t i = 0; i < store.handles.SlotCount(); ++i) {
    if (!store.handles.IsLiveAt(i)) continue;
    const detail::RagdollSlot& slot = store.slots[i];
    if (!slot.enabled || slot.internal != detail::kHostBodySlot) continue;
    auto& group = const_cast<detail::RagdollGroup&>(store.groups[static_cast<std::size_t>(slot.group)]);
    Vec3 x;
    Quat q;
    detail::ReadPose(group.ViewOfLane(slot.lane), group.LaneInBlock(slot.lane), 0, &x, &q);
    if (!IsFinite(x) || !IsFinite(q)) continue;
    DrawShape(paint, group.shapes[0], Compose(Transform{x, q, {1, 1, 1}}, group.shape_in_body[0]), paint.d.colors.host_body);
  }
}

Error CheckLength(float value, const char* field) {
  if (!std::isfinite(value) || value < 0.0f || value > kMaxDrawLength)
    return Fail(ErrorCode::kOutOfRange, -1, field, "must be finite and within [0, 1e3] m");
  return {};
}

}  // namespace

Error World::DrawDebug(const DebugDraw& draw, uint32_t flags) const {
  if (impl_->stepping || impl_->frame_state.in_flight)
    return Fail(ErrorCode::kReentrant, -1, "world",
                "DrawDebug during a frame (inside Step, between BeginStep and FinishStep, or from a DrawDebug "
                "callback) would read state the frame is writing: call it between Steps");
  if ((flags & ~DebugDrawFlags::kAll) != 0)
    return Fail(ErrorCode::kOutOfRange, -1, "flags", "a bit outside DebugDrawFlags::kAll is set");
  if (Error e = CheckLength(draw.point_size, "draw.point_size"); !e.ok()) return e;
  if (Error e = CheckLength(draw.normal_length, "draw.normal_length"); !e.ok()) return e;
  if (Error e = CheckLength(draw.limit_length, "draw.limit_length"); !e.ok()) return e;
  if (Error e = CheckLength(draw.plane_size, "draw.plane_size"); !e.ok()) return e;
  // The callbacks run with the world marked as stepping: a World call from one that would
  // change it (or a nested DrawDebug) is refused, as from inside Step, rather than moving
  // the lanes this walk is reading.
  impl_->stepping = true;
  struct Restore {
    World::Impl& impl;
    ~Restore() { impl.stepping = false; }
  } restore{*impl_};
  const Painter paint{draw};
  constexpr uint32_t kChainBits =
      DebugDrawFlags::kChainNodes | DebugDrawFlags::kChainLinks | DebugDrawFlags::kChainColliders;
  if ((flags & kChainBits) != 0) {
    ChainContext context{&paint, flags};
    impl_->chains.VisitForDraw(&DrawChain, &context);
  }
  constexpr uint32_t kRagdollBits = DebugDrawFlags::kRagdollParts | DebugDrawFlags::kJoints |
                                    DebugDrawFlags::kJointLimits | DebugDrawFlags::kContacts;
  if ((flags & kRagdollBits) != 0) DrawRagdolls(paint, impl_->ragdolls, flags);
  if ((flags & DebugDrawFlags::kHostBodies) != 0) DrawHostBodies(paint, impl_->ragdolls);
  return {};
}

}  // namespace tendon
