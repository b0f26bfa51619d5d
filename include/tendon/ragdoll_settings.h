// tendon/ragdoll_settings.h: plain data that describes a ragdoll (or a one-part prop).
//
// What it does: rigid parts in a tree (parents before children), each with a shape, mass,
// material and a joint to its parent; World::BuildRagdollArchetype validates them and
// derives mass properties and joint frames once. Every field documents its unit, range and
// what "disabled" means. Angles that people author are in degrees. RagdollBinding is an
// instance of one (World::BindRagdoll); StaticWorldSettings the world its parts meet.
// What it does NOT do: simulate (World::BindRagdoll and World::Step do), or map skeletons
// (character.h does).
// Threading: plain values. Memory: std::vector members, owned by the caller.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tendon/contact_events.h"
#include "tendon/ids.h"
#include "tendon/math.h"
#include "tendon/pose_layout.h"

namespace tendon {

enum class PartShape : uint8_t {
  kCapsule,         // two hemispheres of `radius` whose centres are +-half_height on the shape's Y axis
  kTaperedCapsule,  // spheres of top_radius at +half_height and bottom_radius at -half_height, and their hull
  kSphere,          // `radius`
  kBox,             // half_extents
};

struct PartShapeSettings {
  PartShape type = PartShape::kCapsule;
  float radius = 0.05f;         // m, > 0 (capsule, sphere)
  float top_radius = 0.05f;     // m, > 0 (tapered capsule, the +Y end)
  float bottom_radius = 0.05f;  // m, > 0 (tapered capsule, the -Y end)
  float half_height = 0.1f;     // m, >= 0 (capsules: half the distance between the sphere centres)
  Vec3 half_extents{0.1f, 0.1f, 0.1f};  // m, each > 0 (box)
  // The shape's frame in the part's frame (scale must be 1).
  Transform offset{};
};

// A motor drives the child's rotation relative to its parent toward a target as a
// compliant spring: frequency_hz and damping_ratio set its stiffness, max_torque_per_kg
// (times the child's mass) caps it. frequency_hz = 0 disables the motor.
struct MotorSettings {
  float frequency_hz = 0.0f;       // Hz, [0, 1000]; 0: disabled
  float damping_ratio = 1.0f;      // [0, 100]
  float max_torque_per_kg = 0.0f;  // N m / kg, >= 0; the motor's torque cap (0 disables it)
  // What frequency_hz is the natural frequency of. false (Jolt's convention): the two
  // jointed parts' effective inertia, so a motor holding a whole arm out against gravity
  // is much softer than its frequency suggests. true: the whole limb the joint holds (the
  // child's subtree's inertia about the joint), so the frequency is how the limb responds;
  // characters built by the humanoid table or a part list use this.
  bool limb_inertia = false;
};

enum class JointType : uint8_t {
  kSwingTwist,  // a cone (elliptical with two half-angles) about twist_axis, plus twist min/max
  kHinge,       // rotation about twist_axis only, between hinge_min and hinge_max
};

// A joint between a part and its parent, defined in the build pose (which is the neutral
// pose of the limits). The frames are stored in each part's frame, so the limits live in
// the parent's local frame and follow it.
struct JointSettings {
  JointType type = JointType::kSwingTwist;
  Vec3 anchor{};                   // model space, m: the point both parts keep together
  Vec3 twist_axis{0, 1, 0};        // model space unit vector: the twist (or hinge) axis
  Vec3 plane_axis{1, 0, 0};        // model space unit vector perpendicular to twist_axis
  // The child's axes when they differ from the parent's in the build pose (the build pose
  // is then not the limits' neutral pose: imported rigs, e.g. Jolt's, do this). Zero: the
  // same as twist_axis / plane_axis.
  Vec3 child_twist_axis{};
  Vec3 child_plane_axis{};
  // Swing-twist: the cone's half-angle toward the plane axis's normal and toward the plane
  // axis (equal: a circular cone), degrees [0, 180]; twist limits, degrees [-180, 180],
  // min <= max.
  float normal_half_cone_degrees = 45.0f;
  float plane_half_cone_degrees = 45.0f;
  float twist_min_degrees = -45.0f;
  float twist_max_degrees = 45.0f;
  // Hinge limits about twist_axis, degrees [-180, 180], min <= max.
  float hinge_min_degrees = -180.0f;
  float hinge_max_degrees = 180.0f;
  // Joint friction: the largest torque (per kg of the child part) the joint resists
  // relative rotation with (Coulomb: a limb whose weight's torque is below it stays put).
  // It acts where the joint's motor does not drive it (no motor, or strength 0), as in
  // Jolt. N m / kg, >= 0; 0 disables.
  float friction_torque_per_kg = 0.0f;
  MotorSettings motor{};
};

struct PartSettings {
  std::string name{};             // for errors and traces only
  int32_t parent = -1;          // index of the parent part, -1 for the root (exactly one)
  Transform pose{};             // the part's frame in model space in the build pose (scale 1)
  PartShapeSettings shape{};
  // Mass, kg: `mass` when > 0; else mass_share * RagdollSettings::total_mass when
  // mass_share > 0; else the shape's volume times `density` (kg/m^3, > 0).
  float mass = 0.0f;
  float mass_share = 0.0f;
  float density = 1000.0f;
  float friction = 0.6f;            // [0, 10]
  float restitution = 0.0f;         // [0, 1]
  float linear_damping = 0.05f;     // 1/s, [0, 100]; 0 disables
  float angular_damping = 0.05f;    // 1/s, [0, 100]; 0 disables
  float gravity_factor = 1.0f;      // [-100, 100]; 0 disables gravity for the part
  float max_linear_speed = 500.0f;  // m/s, > 0
  float max_angular_speed = 47.12389f;  // rad/s, > 0 (0.25 turn per 1/60 s step)
  JointSettings joint{};            // to the parent; ignored for the root
};

// Mass-ratio stabilisation (in the spirit of Jolt's RagdollSettings::Stabilize): large
// mass ratios between jointed parts, and very thin inertia, make iterative solvers soft and
// jittery. When enabled, building raises the lighter part of every joint to at least
// 1/max_mass_ratio of the heavier one, rescales all masses back to the original total, and
// raises every principal inertia to at least min_inertia_ratio of the part's largest.
struct StabilizeSettings {
  bool enabled = false;
  float max_mass_ratio = 4.0f;     // >= 1
  float min_inertia_ratio = 0.1f;  // [0, 1]
};

// What building derived for one part, for hosts (gameplay masses) and tests.
struct RagdollPartInfo {
  float mass = 0;             // kg, after shares, density and stabilisation
  Vec3 principal_inertia{};   // kg m^2, about the centre of mass, along the body axes
  Transform body_pose{};      // the body frame (centre of mass, principal axes) in model
                              // space in the build pose
  float volume = 0;           // m^3 of the shape
};

// The static world parts collide with: planes, spheres, capsules, boxes, heightfields and
// triangle meshes. Parts meet it through their contact spheres (capsule and tapered-
// capsule end spheres, a sphere, a box's corners).
//
// Every coordinate, offset, radius, half extent, spacing and height lies within
// +-kMaxStaticCoordinate. Beyond it a float resolves no better than 6 cm, and far beyond it
// a triangle's normal or a shape's distance overflows; BuildStaticWorld refuses such a
// value by item and field (kOutOfRange).
inline constexpr float kMaxStaticCoordinate = 1e6f;  // m
struct StaticPlane {
  Vec3 normal{0, 1, 0};  // unit; parts stay on the side it points to
  float offset = 0.0f;   // m: the plane is { x : dot(normal, x) = offset }
};
struct StaticSphere {
  Vec3 centre{};
  float radius = 0.5f;  // m, > 0
};
struct StaticCapsule {
  Vec3 a{}, b{0, 1, 0};  // segment ends
  float radius = 0.25f;  // m, > 0
};
struct StaticBox {
  Transform pose{};                  // centre and rotation (scale ignored)
  Vec3 half_extents{0.5f, 0.5f, 0.5f};  // m, each > 0
};
// A grid of heights: sample (i, k) sits at origin + (i * spacing, heights[k * samples_x + i],
// k * spacing). Each cell is two triangles; parts are kept above the surface.
struct StaticHeightfield {
  Vec3 origin{};
  int32_t samples_x = 0;  // >= 2
  int32_t samples_z = 0;  // >= 2
  float spacing = 1.0f;   // m, > 0
  std::vector<float> heights{};  // samples_x * samples_z, m relative to origin.y
};
// Triangles (three indices each, counter-clockwise seen from the side parts stay on);
// degenerate triangles are dropped, but a mesh must keep at least one.
struct StaticTriangleMesh {
  std::vector<Vec3> vertices{};
  std::vector<uint32_t> indices{};
};
struct StaticWorldSettings {
  std::vector<StaticPlane> planes{};      // at most 8
  std::vector<StaticSphere> spheres{};    // spheres + capsules + boxes: at most 64
  std::vector<StaticCapsule> capsules{};
  std::vector<StaticBox> boxes{};
  std::vector<StaticHeightfield> heightfields{};  // with the meshes: behind one BVH
  std::vector<StaticTriangleMesh> meshes{};
};

// What a ragdoll instance collides with besides the static world.
enum class RagdollCollideMode : uint8_t {
  kAll,     // every other ragdoll and prop its collision groups allow
  kStatic,  // only other kStatic instances: it never shoves the dynamic gameplay objects
};

struct RagdollSettings {
  std::string name{};
  std::vector<PartSettings> parts{};
  float total_mass = 0.0f;  // kg, >= 0: what mass_share is a share of
  StabilizeSettings stabilize{};
  // Self-collision is off by default; these part pairs collide with each other anyway.
  std::vector<std::pair<int32_t, int32_t>> self_collision_pairs{};
  uint32_t collision_group = 1;        // bit(s) this ragdoll's parts are in
  uint32_t collision_mask = 0xffffffffu;  // groups its parts collide with
  // Contact and impact events of this archetype's parts (tendon/contact_events.h): on by
  // default, with thresholds that report an impact and never a body at rest. They cost
  // nothing while WorldSettings::contact_event_capacity is 0.
  ContactEventSettings contact_events{};
};

// The most instances of one ragdoll archetype a world holds, bound or reserved.
inline constexpr int32_t kMaxRagdollInstances = 1 << 20;

// A ragdoll instance. Part frames cross the API in world space.
struct RagdollBinding {
  RagdollArchetypeId archetype{};
  // Where the build pose is placed in the world (when start_parts is empty). Scale 1.
  Transform placement{};
  // Optional: every part's world frame to start from (a pose taken from the animation).
  std::span<const Transform> start_parts{};
  Vec3 linear_velocity{};   // m/s, given to every part at bind (momentum into the fall)
  Vec3 angular_velocity{};  // rad/s, likewise
  // Every part's world frame is written here each Step; the identity of the binding.
  std::span<Transform> output_parts{};
  // Optional: up to 4 more places the part frames are written, in the host's layouts
  // (tendon/pose_layout.h; kLocalTrs writes each part's frame in the model's space).
  // Bones are the archetype's parts. Copied at bind.
  std::span<const PoseStream> pose_streams{};
  // When set, the root part is kinematic: it follows this world frame (read every Step)
  // and pulls the rest along by the joints.
  const Transform* kinematic_root = nullptr;
  // Freezing: a frozen ragdoll is static where it lies and reported as settled; only
  // WakeRagdoll or an impulse brings it back. freeze_when_asleep freezes it as it falls
  // asleep; freeze_after_seconds freezes it that long after binding whatever it is doing
  // (infinity disables the cap).
  bool freeze_when_asleep = false;
  float freeze_after_seconds = INFINITY;
  // Planar mode (2D games): when non-zero (unit), every part only moves in the plane with
  // this normal through its bind position and only turns about the normal.
  Vec3 planar_normal{};
  RagdollCollideMode collide_mode = RagdollCollideMode::kAll;
  // False binds it switched off (see World::SetRagdollEnabled).
  bool enabled = true;
};

}  // namespace tendon
