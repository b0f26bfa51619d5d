// tendon/debug_draw.h: drawing what the solver sees, through callbacks the host implements
// (in the spirit of Jolt's DebugRenderer and Box2D's b2DebugDraw).
//
// What it does: World::DrawDebug(draw, flags), called by the host between Steps, walks the
// world's state as the solver holds it and calls the host's primitives: chain nodes
// (points), links (lines) and colliders (spheres, capsules, planes as a cross and their
// normal), every enabled ragdoll's part shapes at the parts' current frames, joints (their
// anchors, and with kJointLimits the swing cone and the twist or hinge range as fans of
// lines), and the last frame's contacts (static ones and those between ragdolls) with their
// normals. DebugDrawFlags picks what; DebugDrawColors says in which colour (a documented
// default palette). Any callback may be null: its primitives are skipped.
// What it does NOT do: render, keep anything between calls, or cost anything in Step:
// nothing in the frame changes whether a host draws or not; DrawDebug's walk is the only
// cost, and only when it is called. Positions are the last substep's state (the state the
// queries answer with), not the render-interpolated output. Host bodies (tendon/host_body.h)
// are drawn by kHostBodies alone, never as ragdoll parts.
// Threading: the callbacks run on the thread that calls DrawDebug, inside it; a World call
// from a callback that would change the world is refused (kReentrant), as from inside
// Step. Memory: DrawDebug allocates nothing; the callbacks' arguments live for the call.
// Colours are RGBA8 packed in a uint32_t as 0xRRGGBBAA (red in the high byte).
#pragma once

#include <cstdint>

#include "tendon/math.h"

namespace tendon {

// 0xRRGGBBAA.
using DebugColor = uint32_t;
inline constexpr DebugColor MakeDebugColor(uint8_t r, uint8_t g, uint8_t b, uint8_t a = 255) {
  return static_cast<DebugColor>(r) << 24 | static_cast<DebugColor>(g) << 16 | static_cast<DebugColor>(b) << 8 | a;
}

// What World::DrawDebug draws: bits of its `flags`. A bit outside kAll is refused (so a
// host built against a newer header learns it, rather than seeing nothing).
struct DebugDrawFlags {
  static constexpr uint32_t kChainNodes = 1u << 0;      // every bound chain's nodes (points)
  static constexpr uint32_t kChainLinks = 1u << 1;      // node to parent (lines)
  static constexpr uint32_t kChainColliders = 1u << 2;  // a simulated chain's colliders, this frame's world shapes
  static constexpr uint32_t kRagdollParts = 1u << 3;    // every enabled ragdoll's part shapes
  static constexpr uint32_t kJoints = 1u << 4;          // each joint's anchor (a point) and the line to it from each part
  static constexpr uint32_t kJointLimits = 1u << 5;     // swing cones and twist / hinge ranges (fans of lines)
  static constexpr uint32_t kContacts = 1u << 6;        // the last frame's touching contacts: point and normal
  static constexpr uint32_t kHostBodies = 1u << 7;      // host bodies' shapes (tendon/host_body.h)
  // Sleeping state: chains that did not simulate in the last Step and sleeping or frozen
  // ragdolls in their own colours. Without it everything takes its awake colour.
  static constexpr uint32_t kSleeping = 1u << 8;
  static constexpr uint32_t kAll = (1u << 9) - 1u;
};

// The palette. Defaults: chains in yellows, ragdolls in greens, joints in reds and
// oranges, contacts in magenta, sleeping things in greys and blues.
struct DebugDrawColors {
  DebugColor chain_node = 0xFFD700FFu;            // gold
  DebugColor chain_node_sleeping = 0x808080FFu;   // grey: culled, over budget or not yet stepped (kSleeping)
  DebugColor chain_link = 0xFFF0A0FFu;            // pale yellow
  DebugColor chain_link_sleeping = 0x606060FFu;   // dark grey (kSleeping)
  DebugColor chain_collider = 0x00C8FFFFu;        // cyan
  DebugColor ragdoll_part = 0x40E040FFu;          // green
  DebugColor ragdoll_part_kinematic = 0xFF9020FFu;  // orange: a kinematic part (a kinematic root)
  DebugColor ragdoll_part_sleeping = 0x4080C0FFu;   // steel blue (kSleeping)
  DebugColor ragdoll_part_frozen = 0x203880FFu;     // dark blue (kSleeping)
  DebugColor joint = 0xFF3030FFu;                 // red: anchors and the lines to them
  DebugColor joint_swing_limit = 0xFF8000FFu;     // orange: the swing cone
  DebugColor joint_twist_limit = 0xFFFF00FFu;     // yellow: the twist or hinge range
  DebugColor contact_point = 0xFF00FFFFu;         // magenta
  DebugColor contact_normal = 0xFF80FFFFu;        // pink
  DebugColor host_body = 0xC0C0C0FFu;             // light grey (host bodies)
};

// The host's primitives. Every callback may be null (skipped); `user` is handed to each.
// Plain C-compatible function pointers (the C ABI's TendonDebugDraw mirrors this).
struct DebugDraw {
  void (*draw_line)(Vec3 from, Vec3 to, DebugColor color, void* user) = nullptr;
  // size: the point's diameter in metres (DebugDraw::point_size).
  void (*draw_point)(Vec3 position, float size, DebugColor color, void* user) = nullptr;
  void (*draw_sphere)(Vec3 centre, float radius, DebugColor color, void* user) = nullptr;
  // The hull of a sphere of radius_a at a and one of radius_b at b: a capsule when the radii
  // are equal, a tapered capsule when not.
  void (*draw_capsule)(Vec3 a, Vec3 b, float radius_a, float radius_b, DebugColor color, void* user) = nullptr;
  // A box of half_extents along the frame's axes (frame scale 1).
  void (*draw_box)(Transform frame, Vec3 half_extents, DebugColor color, void* user) = nullptr;
  void* user = nullptr;
  DebugDrawColors colors{};
  float point_size = 0.02f;      // m, [0, 1e3]: what draw_point receives
  float normal_length = 0.1f;    // m, [0, 1e3]: a contact normal's line; 0 draws no normal
  float limit_length = 0.1f;     // m, [0, 1e3]: the joint-limit fans' radius; 0 draws no limits
  float plane_size = 0.5f;       // m, [0, 1e3]: half the cross a chain's plane collider is drawn as
};

}  // namespace tendon
