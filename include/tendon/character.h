// tendon/character.h: ragdoll characters. A whole skeleton mapped onto ragdoll parts, built
// once and toggled after: animated, powered (motors pull the joints toward the animation,
// the hips optionally anchored to it), or limp; handed back to the animation with a
// crossfade; read back as a fallen body the host can stand up.
//
// What it does: CharacterSettings (a skeleton plus the humanoid table, an explicit part
// list or a whole RagdollSettings) -> World::BuildCharacterArchetype (validated once: parts
// found by bone name, joint limits from a table, overrides or learned from clips) ->
// World::BindCharacter (all storage sized here, never again) -> ActivateCharacter /
// DeactivateCharacter / HitCharacter / GoLimp between Steps. Every Step writes the whole
// pose, simulated or not, as local transforms into the host's span.
// What it does NOT do: play animations (the host samples its clips into animated_local),
// network, or pick a get-up clip (CharacterState says how the body lies; the host picks).
// Inactive characters do not collide: their parts follow the animation for raycasts only.
// Threading: as World (one thread at a time). Memory: building and binding allocate;
// Step and every call on a bound character do not.
// Conventions: metres, seconds, degrees where people author angles; facing, heading and
// the recovery helper take +Y as up.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tendon/export.h"
#include "tendon/ids.h"
#include "tendon/math.h"
#include "tendon/pose_layout.h"
#include "tendon/ragdoll_settings.h"

namespace tendon {

// A host skeleton: parents before children; the rest pose is the pose the ragdoll is built
// in, and so the neutral pose of its joint limits.
struct SkeletonSettings {
  std::vector<std::string> names{};     // unique; matched by the humanoid table, ignoring case,
                                      // '_', '.', ' ', '-' and a "prefix:" (mixamorig:Hips)
  std::vector<int32_t> parents{};       // -1 for the root (one or more roots)
  std::vector<Transform> rest_local{};  // relative to the parent (a root: to the model frame)
};

// A hinge for an explicit part: the axis in the model's rest space, the fold range.
struct CharacterHinge {
  Vec3 axis{1, 0, 0};
  float min_degrees = 0;    // [-180, 180]
  float max_degrees = 140;  // [min, 180]
};

// One part of an explicit list: a capsule on `bone` (its origin is the joint to the parent
// part) pointing at `to`.
struct CharacterPartSettings {
  std::string bone{};
  std::string to{};            // empty: a leaf, `length` long along its parent part's line
  std::string parent{};        // the parent part's bone; empty: the previous part (none for the first)
  std::string name{};          // what HitCharacter and errors call it; empty: the bone's name
  float radius = 0.05f;      // m, > 0
  float length = 0.0f;       // m, >= 0: a leaf's length, or (> 0) overrides the distance to `to`
  float mass_share = 1.0f;   // > 0: relative share of CharacterSettings::total_mass
  // A leaf's direction in the model's rest space; zero: along the parent part's line.
  Vec3 leaf_direction{};
  float swing_degrees = 30;  // cone half-angle, [0, 180] (ignored for hinges)
  float twist_degrees = 20;  // twist half-range, [0, 180] (ignored for hinges)
  std::optional<CharacterHinge> hinge{};
};

// Overrides one joint's limits (the joint between a part and its parent), by part name.
struct JointLimitOverride {
  std::string part{};
  float swing_degrees = 80;  // [0, 180]; for a hinge: the fold range is [0, 2 * swing]
  float twist_degrees = 45;  // [0, 180]; ignored for a hinge
};

// A clip the host sampled: frame_count poses of every bone's local transform, frame-major
// (bone k of frame f is local[f * bone_count + k]).
struct SampledClip {
  std::string name{};
  int32_t frame_count = 0;
  std::vector<Transform> local{};
};

// What a character's parts do while it is not active (animated).
enum class CharacterInactiveBodies : uint8_t {
  kNone,       // nothing: ragdolls and host bodies pass through the animated character
  kKinematic,  // kinematic bodies that follow the animated pose (at the velocity that takes
               // them from the last frame's pose to this one's, so they lag it by one
               // frame): an active ragdoll lands on the standing character, a walking one
               // pushes a lying one. They push and are never pushed (a hit needs
               // HitCharacter or ActivateCharacter to react).
};

enum class LimitSource : uint8_t {
  kTable,  // the default table (below) with overrides; explicit parts use their own angles
  // Learned: every joint's swing and twist range over every frame of limit_clips, plus a
  // margin. Every joint becomes a swing-twist cone centred on the directions the clips
  // move its part in (so an elbow that only folds one way keeps a one-sided range); a
  // hinge could not hold a clip's off-axis rotation.
  kClips,
};

// How a ragdoll character is built. The default 'humanoid' layout (parts empty, ragdoll
// empty) finds hips, spine, neck, head, upper/lower arms and legs, hands and feet by name
// (Mixamo, Unity/Mecanim, Unreal, VRM humanoid and the Jolt "Human" names) and lays out
// hips, one spine capsule up to the neck, head, two-segment arms and legs, and hands and
// feet where the rig has them. Knees and elbows are hinges that fold the natural way for a
// rig in T- or A-pose; the rest are swing-twist joints with the default limit table
// (swing/twist degrees, from the Roblox Ragdoll module): neck 45/60, waist and root 40/40,
// shoulders 120/60, hips 90/45, elbows and knees 80/15, wrists 60/30, ankles 50/20, any
// other 80/45.
struct CharacterSettings {
  std::string name{};
  SkeletonSettings skeleton{};
  // A humanoid bone table, as a VRM's humanoid gives it: role name (VRM's "hips", "spine",
  // "leftUpperArm", ...; matched ignoring case as names are) -> skeleton bone. The humanoid
  // layout takes each role from here first and looks for it by name only when the table
  // lacks it. Roles the layout does not use (fingers, eyes) are ignored.
  std::vector<std::pair<std::string, int32_t>> humanoid_bones{};
  // Explicit parts, parents before children (the first is the root). Empty: humanoid.
  std::vector<CharacterPartSettings> parts{};
  // A complete ragdoll instead (e.g. one loaded from an asset): part i sits on the bone
  // named ragdoll.parts[i].name, and its pose must be that bone's rest frame in model
  // space. Its shapes, masses, joints and motors are used as given, and its limits unless
  // limit_source is kClips.
  RagdollSettings ragdoll{};
  float total_mass = 70.0f;           // kg, > 0 (humanoid and explicit parts)
  float friction = 0.6f;              // [0, 10]
  float linear_damping = 0.05f;       // 1/s, [0, 100]
  float angular_damping = 0.05f;      // 1/s, [0, 100]; more settles a flailing body sooner
  // Motors at strength 1: the spring toward the animated pose and its torque cap. The
  // frequency is the whole limb's (MotorSettings::limb_inertia), so an arm held out sags a
  // degree, not tens of degrees. A whole `ragdoll` keeps its own motor settings.
  float drive_frequency_hz = 6.0f;     // Hz, (0, 1000]
  float drive_damping_ratio = 1.0f;    // [0, 100]
  float drive_torque_per_kg = 12.0f;   // N m per kg of the part, >= 0
  float joint_friction_per_kg = 0.3f;  // N m per kg of the part, >= 0: a limp body folds
  LimitSource limit_source = LimitSource::kTable;
  std::vector<JointLimitOverride> limit_overrides{};  // applied after the table (not to clips)
  std::vector<SampledClip> limit_clips{};             // for LimitSource::kClips; at least one frame
  float limits_margin_degrees = 10.0f;              // [0, 90], added on each side of a learned range
  uint32_t collision_group = 1;
  uint32_t collision_mask = 0xffffffffu;
  // While inactive (tendon/character.h's CharacterInactiveBodies): kNone (the default)
  // costs nothing; kKinematic keeps a kinematic copy of the parts in the ragdoll lanes
  // (one lane of its own group per character) and meets ragdolls by the same groups.
  CharacterInactiveBodies inactive_bodies = CharacterInactiveBodies::kNone;
};

// What building made of one part.
struct CharacterPartInfo {
  std::string name{};         // "Hips", "LeftLowerLeg", ... (humanoid) or as listed
  int32_t bone = -1;        // the skeleton bone it sits on
  int32_t parent = -1;      // parent part, -1 for the root
  JointType joint = JointType::kSwingTwist;
  // Limits as built (degrees): swing-twist: the cone's half-angles and the twist range;
  // hinge: the fold range in hinge_min/max.
  float normal_half_cone_degrees = 0, plane_half_cone_degrees = 0;
  float twist_min_degrees = 0, twist_max_degrees = 0;
  float hinge_min_degrees = 0, hinge_max_degrees = 0;
  float mass = 0;           // kg
};

// How a body lies: where its chest (the spine part's front, else the root's) points.
enum class CharacterFacing : uint8_t {
  kUp,    // on its back: the chest within 45 degrees of straight up
  kDown,  // prone: the chest within 45 degrees of straight down
  kSide,  // anything between
};

// A character instance over host buffers (read or written every Step; all must stay valid
// until UnbindCharacter).
struct CharacterBinding {
  CharacterArchetypeId archetype{};
  // The model frame: the parent frame of the skeleton's roots (scale 1). Read every Step.
  const Transform* model_world = nullptr;
  // Every bone's animated local transform, in skeleton order, read every Step.
  std::span<const Transform> animated_local{};
  // Every bone's output local transform, written every Step (the animated one while
  // inactive). May alias animated_local when the host re-animates every frame. The address
  // is the identity of the binding.
  std::span<Transform> output_local{};
  // Optional: every bone's output world transform, written every Step before chains step,
  // so a chain bound with root_parent_world = &output_world[head] swings on the ragdoll.
  std::span<Transform> output_world{};
  // Optional: up to 4 more places the whole skeleton is written, in the host's layouts
  // (tendon/pose_layout.h): its bone struct, model matrices, a skinning palette. Written
  // after the ragdoll; chains that hang from its bones write theirs later in the Step, so
  // a chain bound with a stream into the same array (element_of_bone = skeleton index)
  // overwrites the animated pose of its own bones. Copied at bind.
  std::span<const PoseStream> pose_streams{};
  RagdollCollideMode collide_mode = RagdollCollideMode::kAll;
  // Planar mode (2D games): unit normal of the plane, zero for 3D.
  Vec3 planar_normal{};
  // A limp body at rest turns static where it lies (settled); freeze_after_seconds caps
  // how long a limp body may move (infinity: no cap). A powered or anchored body never
  // freezes.
  bool freeze_when_settled = true;
  float freeze_after_seconds = std::numeric_limits<float>::infinity();
};

struct CharacterActivateOptions {
  Vec3 launch_velocity{};  // m/s added to every part on top of the animated motion
  Vec3 impulse{};          // N s on the whole body: every part gets impulse / total mass
  std::optional<float> strength{};  // [0, 1]; unset: keep the character's (starts at 0)
  std::optional<bool> anchored{};   // unset: keep the character's (starts false)
  // Released on the world clock this long after activation (infinity: never). An
  // earlier deactivation cancels it.
  float duration_seconds = std::numeric_limits<float>::infinity();
  // The crossfade used when the budget, the duration or UnbindCharacter releases it.
  float release_blend_seconds = 0.0f;
};

struct CharacterHitOptions {
  float duration_seconds = 0.6f;  // > 0: powered and anchored this long, then handed back
  float blend_seconds = 0.25f;    // >= 0: the hand-back crossfade
  float strength = 1.0f;          // [0, 1] while flinching
};

// How a character is doing (CharacterState) and why it ended (CharacterEvent).
enum class CharacterEndReason : uint8_t {
  kReleased,  // DeactivateCharacter (or the end of a hit)
  kEvicted,   // past WorldSettings::max_active_characters: the oldest went
  kExpired,   // its activation's duration ran out
  kRemoved,   // UnbindCharacter while active
};

// Where the crossfade of a hand-back (DeactivateCharacter, the end of a hit, an expiry)
// holds the pose the body showed while it fades into the animation.
enum class HandBackSpace : uint8_t {
  // kWorld for a body that was not anchored (it fell and lies in the world: a get-up),
  // kModel for an anchored one or a hit (its hips followed the animation).
  kAuto,
  // The pose stays where the body lay in the world, whatever the host does with
  // model_world: the get-up recipe moves model_world to GetCharacterRecoveryRoot and
  // deactivates in the same frame, and the body does not jump.
  kWorld,
  // The pose rides model_world, as the animation does: a flinch on a character that walks
  // on. Moving model_world by a distance moves the fading pose by it.
  kModel,
};

// Names for logs and dashboards ("released", "face_up", ...).
TENDON_API const char* ToString(CharacterEndReason reason);
TENDON_API const char* ToString(CharacterFacing facing);
TENDON_API const char* ToString(HandBackSpace space);

struct CharacterEvent {
  enum class Type : uint8_t { kStarted, kEnded };
  Type type = Type::kStarted;
  CharacterId character{};
  uint32_t generation = 0;  // the activation it belongs to (see CharacterState::generation)
  CharacterEndReason reason = CharacterEndReason::kReleased;  // kEnded only
  double time = 0;          // world clock, seconds
};

struct CharacterState {
  bool active = false;       // physics owns the bones
  bool blending_out = false; // handed back, the crossfade still running
  bool settled = false;      // active, and asleep or frozen
  bool anchored = false;
  float strength = 0;
  // Counts activations; a watcher that captured an older value knows a newer ragdoll began.
  uint32_t generation = 0;
  Transform root{};          // the root part's (hips') world frame
  Vec3 root_velocity{};      // m/s, the root part's centre of mass
  float speed = 0;           // m/s, the mass-weighted mean speed of the parts (the body's)
  float total_mass = 0;      // kg
  float unanchored_mass = 0; // kg: every part but an anchored root
  CharacterFacing facing = CharacterFacing::kSide;
  // The yaw (degrees in (-180, 180], about +Y: 0 toward +Z, 90 toward +X) of the
  // horizontal direction from the hips to the head: turn the get-up take to it.
  float heading_degrees = 0;
};

}  // namespace tendon
