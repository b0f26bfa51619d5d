// ports/gltf/gltf_import.h: glTF 2.0 (.gltf, .glb) and VRM (.vrm, 0.x and 1.0) assets as
// plain Tendon data: the skeleton, skins, animation clips, the VRM humanoid map and the VRM
// spring bones and colliders.
//
// What it does: tinygltf (Debian libtinygltf-dev, on nlohmann-json) parses the file; this
// reads what Tendon needs from it and checks every index, count and number first. Every
// node reachable from the scene becomes a bone, parents before children (depth first, in
// child order), its rest local transform from its translation, rotation and scale (or its
// matrix, decomposed). Skins: joints as bones, and inverse bind matrices. Clips: every
// channel on a node (translation, rotation, scale, weights) with its STEP, LINEAR or
// CUBICSPLINE sampler; SampleClip poses the host's local buffer from one. VRM 0.x
// (`VRM.humanoid`, `VRM.secondaryAnimation`) and 1.0 (`VRMC_vrm.humanoid`,
// `VRMC_springBone`, `VRMC_springBone_extended_collider`) map onto the same structs:
// humanoid bone names to bones; springs as joints with their settings, colliders and
// groups (see docs/vrm.md for the rule they feed). VRM 0.x files that reach one bone from
// two roots (a group naming every bone of a strand as a root, or two groups on one strand;
// three-vrm and UniVRM run such files) are accepted, and the bone is simulated once: by
// the first root that reaches it, groups in file order, roots in order, depth first. A
// later root already reached is skipped; a later root above an earlier one stops at it,
// and the joint whose tail it was gets a virtual tip where that bone rests. (three-vrm
// simulates the bone once per root and shows the last; with different settings per group
// the first group's settings are what Tendon runs.)
// What it does NOT do: meshes, materials, images (never decoded), morph targets beyond a
// clip's weights channel, cameras, or simulation (chains and characters are built from
// this by the caller, or by the one-call builder that follows).
// Errors: a Result naming the file, then the JSON path or glTF element ("nodes[12]",
// "animations[0].samplers[3]", "extensions.VRM.secondaryAnimation.boneGroups[2].bones[0]")
// and why. Nothing is sized from the file before it is checked against the file's own
// bytes, and every loop is bounded by the file's element counts.
// - A syntax error: "<file>:<line>:<column>: <why> (byte <offset>)", field "json" (in a
//   .glb, "<file>: JSON chunk:<line>:...", counted in its JSON chunk).
// - A file that cannot be read (missing, a directory, not a regular file, no permission):
//   ErrorCode::kIo, field "file", with the system's reason.
// - A truncated .glb: which length (the header's, a chunk's) needs how many bytes, and how
//   many are there.
// - A node whose world transform is not finite or past kMaxGltfWorldTranslation /
//   kMaxGltfWorldScale: refused by index and name. JSON nested past kMaxGltfJsonDepth: refused.
// No exception leaves either ImportGltf (tinygltf's, nlohmann-json's and the standard
// library's are caught; out of memory is an error too).
// Threading: none; independent calls may run concurrently. Memory: allocates the result.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tendon/character.h"
#include "tendon/errors.h"
#include "tendon/math.h"

namespace tendon::ports {

enum class GltfInterpolation : uint8_t { kStep, kLinear, kCubicSpline };
enum class GltfChannelPath : uint8_t { kTranslation, kRotation, kScale, kWeights };

// One animated property of one bone. values holds `components` floats per key (4 for a
// rotation, xyzw; 3 for translation and scale; the morph count for weights), three times
// that for CUBICSPLINE (in-tangent, value, out-tangent per key, as glTF stores them).
struct GltfChannel {
  int32_t bone = -1;
  GltfChannelPath path = GltfChannelPath::kTranslation;
  GltfInterpolation interpolation = GltfInterpolation::kLinear;
  int32_t components = 3;
  std::vector<float> times{};   // seconds, non-decreasing
  std::vector<float> values{};
};

struct GltfClip {
  std::string name{};
  float duration = 0;  // s: the last key of any channel
  std::vector<GltfChannel> channels{};
};

struct GltfSkin {
  std::string name{};
  std::vector<int32_t> joints{};                     // bones
  std::vector<std::array<float, 16>> inverse_bind{};  // column-major, one per joint (identity when absent)
};

enum class VrmVersion : uint8_t { kNone, k0x, k1 };

enum class VrmColliderShape : uint8_t { kSphere, kCapsule, kPlane };

// A collider in its bone's frame. Offsets of VRM 0.x colliders are stored here z-negated,
// as the format asks (UniVRM's convention).
struct VrmCollider {
  int32_t bone = -1;
  VrmColliderShape shape = VrmColliderShape::kSphere;
  bool inside = false;  // extended collider: keeps joints inside the sphere or capsule
  Vec3 offset{};        // m, in the bone's frame: the sphere's centre, the capsule's head, a point on the plane
  Vec3 tail{};          // m, capsule only: the other end
  Vec3 normal{0, 0, 1}; // plane only, unit, in the bone's frame
  float radius = 0;     // m
};

struct VrmColliderGroup {
  std::string name{};
  std::vector<int32_t> colliders{};  // indices into VrmSpringBones::colliders
};

// A joint: a bone whose tail (its child, or a virtual tip) the spring simulates.
struct VrmJoint {
  int32_t bone = -1;
  int32_t parent = -1;      // index of the joint it hangs from in the same spring, -1: the root
  int32_t tail_bone = -1;   // the bone whose position is the tail; -1: the virtual tip
  Vec3 virtual_tip{};       // the tail in the bone's frame when tail_bone is -1 (0.x: 0.07 m along it)
  float hit_radius = 0;     // m
  float stiffness = 1;
  float gravity_power = 0;
  Vec3 gravity_dir{0, -1, 0};
  float drag_force = 0.4f;
};

struct VrmSpring {
  std::string name{};
  std::vector<VrmJoint> joints{};         // parents first
  std::vector<int32_t> collider_groups{};
  int32_t center = -1;                    // bone whose space inertia is kept in; -1: world
};

struct VrmSpringBones {
  std::vector<VrmCollider> colliders{};
  std::vector<VrmColliderGroup> collider_groups{};
  std::vector<VrmSpring> springs{};
};

struct GltfAsset {
  std::string name{};            // the file's name, for messages
  SkeletonSettings skeleton{};   // every node in the scene, parents first
  std::vector<int32_t> bone_of_node{};  // per glTF node; -1 for nodes outside the scene
  std::vector<GltfSkin> skins{};
  std::vector<GltfClip> clips{};
  VrmVersion vrm = VrmVersion::kNone;
  // VRM humanoid bone name ("hips", "leftUpperArm", ...) -> bone, in the file's order.
  std::vector<std::pair<std::string, int32_t>> humanoid{};
  VrmSpringBones spring_bones{};
};

// Limits past which a file is refused (a count the file claims but cannot hold is refused
// before these matter).
inline constexpr int32_t kMaxGltfNodes = 1 << 16;
inline constexpr int32_t kMaxGltfAccessorCount = 1 << 24;
inline constexpr std::size_t kMaxClipFrameTransforms = std::size_t{1} << 22;
// A node's world transform (its rest locals composed from the root) must be finite, with
// every translation component within kMaxGltfWorldTranslation metres (100 km) and every
// scale component within kMaxGltfWorldScale: locals that are each finite can compose past
// float (a root scaled 1e30 with a child 1e10 away), and binding, the character and the
// chains compose them again. Refused at import, naming the node.
inline constexpr float kMaxGltfWorldTranslation = 1e5f;
// JSON nested deeper than this (arrays and objects, in any member) is refused before it is
// parsed: tinygltf's conversion recurses per level.
inline constexpr int32_t kMaxGltfJsonDepth = 128;
inline constexpr float kMaxGltfWorldScale = 1e4f;

// From a file: .glb and .vrm are binary glTF, anything else is read as .gltf JSON (its
// external buffers relative to the file's directory).
Result<GltfAsset> ImportGltf(const std::string& path);
// From memory: `name` names it in errors; binary when it starts with the "glTF" magic.
// External buffers (.gltf) are read relative to base_dir.
Result<GltfAsset> ImportGltf(std::span<const uint8_t> bytes, const std::string& name, const std::string& base_dir = "");

// Poses `locals` (one per bone, the bind-time locals as the start) at `time` seconds of the
// clip, clamped to [0, duration]: each channel's sampler interpolated as its file says
// (CUBICSPLINE as glTF's Hermite form; rotations normalised). Weights channels are left to
// the host (no bone pose). Bones without a channel keep what `locals` held.
void SampleClip(const GltfClip& clip, float time, std::span<Transform> locals);

// The clip sampled at `fps` frames per second over [0, duration] (the last frame at the
// duration), from `rest` (one local per bone; bones without a channel keep it): what
// CharacterSettings::limit_clips takes for LimitSource::kClips. fps within (0, 1000]. At most
// kMaxClipFrameTransforms transforms in all: a clip longer than that at fps is sampled at
// that many, evenly over its duration.
SampledClip SampleClipFrames(const GltfClip& clip, std::span<const Transform> rest, float fps = 30.0f);

}  // namespace tendon::ports
