// ports/jolt_human/jolt_human.cpp: the Jolt "Human" ragdoll JSON -> RagdollSettings.
#include "ports/jolt_human/jolt_human.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "ports/json/json.h"

namespace tendon::ports {
namespace {

constexpr float kRadToDeg = 180.0f / 3.14159265358979f;

using json::Node;
using json::Reader;

// [x, y, z]: exactly three numbers.
Vec3 ReadVec3(Reader& r, const Node& v) {
  if (r.ArraySize(v) != 3 && r.ok()) r.Fail(v, "expected 3 numbers [x, y, z], got " + std::to_string(v.json->size()));
  return Vec3{r.Float(r.Element(v, 0)), r.Float(r.Element(v, 1)), r.Float(r.Element(v, 2))};
}
// [x, y, z, w]: four numbers, not all (near) zero; normalised.
Quat ReadQuat(Reader& r, const Node& v) {
  if (r.ArraySize(v) != 4 && r.ok()) r.Fail(v, "expected 4 numbers [x, y, z, w], got " + std::to_string(v.json->size()));
  const Quat q{r.Float(r.Element(v, 0)), r.Float(r.Element(v, 1)), r.Float(r.Element(v, 2)), r.Float(r.Element(v, 3))};
  if (!r.ok()) return Quat{};
  const double len2 = static_cast<double>(q.x) * q.x + static_cast<double>(q.y) * q.y + static_cast<double>(q.z) * q.z +
                      static_cast<double>(q.w) * q.w;
  if (!(len2 > 0.25 && len2 < 4.0)) {
    r.Fail(v, "is far from a unit quaternion (length " + std::to_string(std::sqrt(len2)) + ")");
    return Quat{};
  }
  return Normalize(q);
}

// A shape's offset from its part: optional (Jolt shapes without a rotated-translated
// wrapper have none), typed when present.
Transform ReadOffset(Reader& r, const Node& s) {
  Transform t;
  if (r.Has(s, "offset_position")) t.translation = ReadVec3(r, r.Member(s, "offset_position"));
  if (r.Has(s, "offset_rotation")) t.rotation = ReadQuat(r, r.Member(s, "offset_rotation"));
  return t;
}

// One capsule's axis-aligned bounds in the part frame.
void CapsuleBounds(Reader& r, const Node& s, Vec3* lo, Vec3* hi) {
  const Transform offset = ReadOffset(r, s);
  const float radius = r.Float(s, "radius"), h = r.Float(s, "half_height_of_cylinder");
  const Vec3 axis = Rotate(offset.rotation, Vec3{0, h, 0});
  const Vec3 extent{std::fabs(axis.x) + radius, std::fabs(axis.y) + radius, std::fabs(axis.z) + radius};
  *lo = offset.translation - extent;
  *hi = offset.translation + extent;
}

void ReadShape(Reader& r, const Node& s, PartShapeSettings* out) {
  const Node type_node = r.Member(s, "type");
  const std::string type = r.String(type_node);
  if (!r.ok()) return;
  if (type == "compound") {
    // No offset of its own: the sub-shapes carry theirs.
    const Node subs = r.Member(s, "sub_shapes");
    const std::size_t count = r.ArraySize(subs, 1);
    Vec3 lo{1e9f, 1e9f, 1e9f}, hi{-1e9f, -1e9f, -1e9f};
    for (std::size_t i = 0; i < count && r.ok(); ++i) {
      const Node sub = r.Element(subs, i);
      const Node sub_type = r.Member(sub, "type");
      if (r.String(sub_type) != "capsule" && r.ok()) r.Fail(sub_type, "a compound's sub-shapes must be capsules here");
      Vec3 a, b;
      CapsuleBounds(r, sub, &a, &b);
      lo = Vec3{std::min(lo.x, a.x), std::min(lo.y, a.y), std::min(lo.z, a.z)};
      hi = Vec3{std::max(hi.x, b.x), std::max(hi.y, b.y), std::max(hi.z, b.z)};
    }
    out->type = PartShape::kBox;
    out->half_extents = (hi - lo) * 0.5f;
    out->offset = Transform{(hi + lo) * 0.5f, {}, {1, 1, 1}};
    return;
  }
  out->offset = ReadOffset(r, s);
  if (type == "capsule") {
    out->type = PartShape::kCapsule;
    out->radius = r.Float(s, "radius");
    out->half_height = r.Float(s, "half_height_of_cylinder");
  } else if (type == "tapered_capsule") {
    out->type = PartShape::kTaperedCapsule;
    out->top_radius = r.Float(s, "top_radius");
    out->bottom_radius = r.Float(s, "bottom_radius");
    out->half_height = r.Float(s, "half_height_of_tapered_cylinder");
  } else if (type == "box") {
    out->type = PartShape::kBox;
    out->half_extents = ReadVec3(r, r.Member(s, "half_extent"));
  } else if (type == "sphere") {
    out->type = PartShape::kSphere;
    out->radius = r.Float(s, "radius");
  } else {
    std::string why = "\"";
    why += type;
    why += "\" is not a shape this loader reads (capsule, tapered_capsule, box, sphere, compound)";
    r.Fail(type_node, why);
  }
}

// A swing-twist joint. The frame and limits are required; friction and the swing motor are
// optional (absent: none), typed when present.
void ReadJoint(Reader& r, const Node& j, float mass, JointSettings* joint) {
  const Node type = r.Member(j, "type");
  if (const std::string name = r.String(type); name != "swing_twist" && r.ok()) {
    std::string why = "\"";  // appended, not "\"" + name (g++ 12 warns falsely under -O3)
    why += name;
    why += "\" is not a joint this loader reads (swing_twist)";
    r.Fail(type, why);
  }
  joint->type = JointType::kSwingTwist;
  joint->anchor = ReadVec3(r, r.Member(j, "position1"));
  joint->twist_axis = NormalizeOr(ReadVec3(r, r.Member(j, "twist_axis1")), {0, 1, 0});
  joint->plane_axis = NormalizeOr(ReadVec3(r, r.Member(j, "plane_axis1")), {1, 0, 0});
  joint->child_twist_axis = NormalizeOr(ReadVec3(r, r.Member(j, "twist_axis2")), joint->twist_axis);
  joint->child_plane_axis = NormalizeOr(ReadVec3(r, r.Member(j, "plane_axis2")), joint->plane_axis);
  joint->normal_half_cone_degrees = r.Float(j, "normal_half_cone_angle") * kRadToDeg;
  joint->plane_half_cone_degrees = r.Float(j, "plane_half_cone_angle") * kRadToDeg;
  joint->twist_min_degrees = r.Float(j, "twist_min_angle") * kRadToDeg;
  joint->twist_max_degrees = r.Float(j, "twist_max_angle") * kRadToDeg;
  const float kg = mass > 0 ? mass : 1.0f;
  joint->friction_torque_per_kg = r.OptionalFloat(j, "max_friction_torque", 0) / kg;
  if (r.Has(j, "swing_motor")) {
    const Node motor = r.Member(j, "swing_motor");
    joint->motor.frequency_hz = r.OptionalFloat(motor, "frequency", 0);
    joint->motor.damping_ratio = r.OptionalFloat(motor, "damping", 1);
    joint->motor.max_torque_per_kg = r.OptionalFloat(motor, "max_torque_limit", 0) / kg;
  }
}

Result<RagdollSettings> ReadRagdoll(const std::string& path, bool stabilized_masses) {
  const json::ParseResult parsed = json::ParseFile(path);
  if (!parsed.ok) return json::ParseFailure(parsed);
  Reader r(path);
  const Node root = Reader::Root(*parsed.document);
  RagdollSettings out;
  if (r.Has(root, "name")) out.name = r.String(r.Member(root, "name"));
  const Node parts = r.Member(root, "parts");
  const std::size_t count = r.ArraySize(parts, 1);
  for (std::size_t i = 0; i < count && r.ok(); ++i) {
    const Node p = r.Element(parts, i);
    PartSettings part;
    part.name = r.String(r.Member(p, "name"));
    // parent_index: null (or absent) for the root, else the index of a part.
    part.parent = r.Has(p, "parent_index") ? r.Int(r.Member(p, "parent_index"), -1, static_cast<int32_t>(count)) : -1;
    part.pose = Transform{ReadVec3(r, r.Member(p, "position")), ReadQuat(r, r.Member(p, "rotation")), {1, 1, 1}};
    ReadShape(r, r.Member(p, "shape"), &part.shape);
    part.mass = r.Float(p, stabilized_masses ? "mass_after_jolt_stabilize" : "mass");
    // Material and motion limits: Jolt's defaults when absent (the file lists them all).
    part.friction = r.OptionalFloat(p, "friction", part.friction);
    part.restitution = r.OptionalFloat(p, "restitution", part.restitution);
    part.linear_damping = r.OptionalFloat(p, "linear_damping", part.linear_damping);
    part.angular_damping = r.OptionalFloat(p, "angular_damping", part.angular_damping);
    part.gravity_factor = r.OptionalFloat(p, "gravity_factor", part.gravity_factor);
    part.max_linear_speed = r.OptionalFloat(p, "max_linear_velocity", part.max_linear_speed);
    part.max_angular_speed = r.OptionalFloat(p, "max_angular_velocity", part.max_angular_speed);
    // joint: null (or absent) for the root, else a swing-twist joint.
    if (r.Has(p, "joint")) ReadJoint(r, r.Member(p, "joint"), part.mass, &part.joint);
    out.parts.push_back(part);
  }
  if (!r.ok()) return r.error();
  for (const PartSettings& p : out.parts) out.total_mass += p.mass;
  return out;
}

Result<JoltAnimation> ReadAnimation(const std::string& path) {
  const json::ParseResult parsed = json::ParseFile(path);
  if (!parsed.ok) return json::ParseFailure(parsed);
  Reader r(path);
  const Node root = Reader::Root(*parsed.document);
  JoltAnimation a;
  if (r.Has(root, "name")) a.name = r.String(r.Member(root, "name"));
  a.looping = r.Has(root, "is_looping") ? r.Bool(r.Member(root, "is_looping")) : true;
  a.duration = r.OptionalFloat(root, "duration", 0);
  const Node joints = r.Member(root, "joints");
  const std::size_t n = r.ArraySize(joints, 1);
  if (!r.ok()) return r.error();
  const Node first_keys = r.Member(r.Element(joints, 0), "keys");
  const std::size_t key_count = r.ArraySize(first_keys, 1);
  // Validated before anything is sized from it: every joint has as many keys as the
  // first, so the storage is the file's own keys, never a product the file made up.
  std::vector<std::string> names(n);
  for (std::size_t j = 0; j < n && r.ok(); ++j) {
    const Node joint = r.Element(joints, j);
    names[j] = r.String(r.Member(joint, "name"));
    const Node keys = r.Member(joint, "keys");
    if (r.ArraySize(keys) != key_count && r.ok())
      r.Fail(keys, "joint '" + names[j] + "' has a different key count (" + std::to_string(keys.json->size()) + ", the first joint has " +
                       std::to_string(key_count) + ")");
  }
  if (!r.ok()) return r.error();
  // The files list joints in any order (the hd ones are not parents first): order them
  // parents first. A joint whose parent comes earlier in the file is placed in its parent's
  // round, one whose parent comes later in the next round after it; rounds in order, the
  // file's order within a round. Linear: a name table, one pass for the rounds (memoised
  // along parent links), one counting sort.
  std::unordered_map<std::string, std::size_t> index_of;
  index_of.reserve(n);
  for (std::size_t j = 0; j < n; ++j)
    if (!index_of.emplace(names[j], j).second) r.Fail(r.Member(r.Element(joints, j), "name"), "'" + names[j] + "' names two joints");
  if (!r.ok()) return r.error();
  constexpr std::size_t kUnknown = SIZE_MAX, kVisiting = SIZE_MAX - 1;
  std::vector<std::size_t> parent_of(n, kUnknown), round(n, kUnknown);
  for (std::size_t j = 0; j < n && r.ok(); ++j) {
    const Node joint = r.Element(joints, j);
    if (!r.Has(joint, "parent")) continue;  // null or absent: a root
    const Node parent = r.Member(joint, "parent");
    const std::string parent_name = r.String(parent);
    if (!r.ok()) break;
    const auto it = index_of.find(parent_name);
    if (it == index_of.end() || it->second == j) {
      r.Fail(parent, "joint '" + names[j] + "' names a parent that is not in the file ('" + parent_name + "')");
      break;
    }
    parent_of[j] = it->second;
  }
  if (!r.ok()) return r.error();
  std::vector<std::size_t> path_stack;
  for (std::size_t j = 0; j < n; ++j) {
    // Walk up to a joint whose round is known (or a root), then fill the rounds back down.
    for (std::size_t at = j; round[at] == kUnknown;) {
      round[at] = kVisiting;
      path_stack.push_back(at);
      if (parent_of[at] == kUnknown) break;
      at = parent_of[at];
      if (round[at] == kVisiting) {
        r.Fail(joints, "the joints' parents form a cycle (through '" + names[at] + "')");
        return r.error();
      }
    }
    while (!path_stack.empty()) {
      const std::size_t at = path_stack.back();
      path_stack.pop_back();
      const std::size_t p = parent_of[at];
      round[at] = p == kUnknown ? 0 : round[p] + (p < at ? 0 : 1);
    }
  }
  std::vector<std::size_t> per_round(n + 1, 0);
  for (std::size_t j = 0; j < n; ++j) ++per_round[round[j] + 1];
  for (std::size_t q = 1; q <= n; ++q) per_round[q] += per_round[q - 1];
  std::vector<std::size_t> order(n), position(n);
  for (std::size_t j = 0; j < n; ++j) order[per_round[round[j]]++] = j;
  for (std::size_t i = 0; i < n; ++i) position[order[i]] = i;
  // The key times are the first joint's (the files share them across joints).
  for (std::size_t k = 0; k < key_count && r.ok(); ++k) a.key_times.push_back(r.Float(r.Element(first_keys, k), "time"));
  for (std::size_t k = 1; k < key_count && r.ok(); ++k)
    if (!(a.key_times[k] >= a.key_times[k - 1])) r.Fail(first_keys.path + "[" + std::to_string(k) + "].time", "key times decrease");
  if (!r.ok()) return r.error();
  a.keys.resize(key_count * n);
  for (std::size_t i = 0; i < n && r.ok(); ++i) {
    const Node keys = r.Member(r.Element(joints, order[i]), "keys");
    a.joints.push_back(names[order[i]]);
    const std::size_t p = parent_of[order[i]];
    a.parents.push_back(p == kUnknown ? -1 : static_cast<int32_t>(position[p]));
    for (std::size_t k = 0; k < key_count && r.ok(); ++k) {
      const Node key = r.Element(keys, k);
      a.keys[k * n + i] = Transform{ReadVec3(r, r.Member(key, "translation")), ReadQuat(r, r.Member(key, "rotation")), {1, 1, 1}};
    }
  }
  if (!r.ok()) return r.error();
  return a;
}

}  // namespace

// No exception leaves a loader: nlohmann-json's and the standard library's (std::bad_alloc
// included) become an error naming the file.
Result<RagdollSettings> LoadJoltHumanRagdoll(const std::string& path, bool stabilized_masses) {
  try {
    return ReadRagdoll(path, stabilized_masses);
  } catch (const std::exception& e) {
    return Error{ErrorCode::kOutOfRange, -1, "file", path + ": cannot be loaded: " + e.what()};
  }
}

Result<JoltAnimation> LoadJoltAnimation(const std::string& path) {
  try {
    return ReadAnimation(path);
  } catch (const std::exception& e) {
    return Error{ErrorCode::kOutOfRange, -1, "file", path + ": cannot be loaded: " + e.what()};
  }
}

void SampleJoltAnimation(const JoltAnimation& a, float time, std::span<Transform> out, bool in_place) {
  const std::size_t n = a.joints.size();
  const std::size_t keys = a.key_times.size();
  // A loader's animation has keys for every joint; a hand-built one that does not is left
  // unsampled (out untouched) rather than read past its keys.
  if (keys == 0 || n == 0 || a.keys.size() / n < keys) return;
  float t = time;
  if (a.looping && a.duration > 0) t = std::fmod(std::fmod(t, a.duration) + a.duration, a.duration);
  std::size_t k1 = 0;
  while (k1 < keys && a.key_times[k1] <= t) ++k1;
  const std::size_t k0 = k1 == 0 ? 0 : k1 - 1;
  k1 = std::min(k1, keys - 1);
  const float span = a.key_times[k1] - a.key_times[k0];
  const float f = span > 0 ? std::clamp((t - a.key_times[k0]) / span, 0.0f, 1.0f) : 0.0f;
  for (std::size_t j = 0; j < n && j < out.size(); ++j) {
    const Transform& x0 = a.keys[k0 * n + j];
    const Transform& x1 = a.keys[k1 * n + j];
    Quat q1 = x1.rotation;
    if (Dot(x0.rotation, q1) < 0) q1 = Quat{-q1.x, -q1.y, -q1.z, -q1.w};
    // Slerp: q0 (q0^-1 q1)^f.
    const Quat d = Normalize(Conjugate(x0.rotation) * q1);
    const float angle = 2.0f * std::atan2(std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z), d.w);
    const Vec3 axis = NormalizeOr(Vec3{d.x, d.y, d.z}, Vec3{1, 0, 0});
    out[j] = Transform{Lerp(x0.translation, x1.translation, f), Normalize(x0.rotation * AxisAngle(axis, angle * f)), {1, 1, 1}};
  }
  if (in_place && n > 0) {
    out[0].translation.x = a.keys[0].translation.x;
    out[0].translation.z = a.keys[0].translation.z;
  }
}

void SampleJoltPartPose(const RagdollSettings& ragdoll, const JoltAnimation& animation, float time,
                        std::span<Transform> model, std::span<Quat> local_rotations) {
  // Only the parts both spans hold; a parent that does not come before its part (a
  // ragdoll BuildRagdollArchetype would refuse) composes from the model origin.
  const auto n = static_cast<int32_t>(std::min({ragdoll.parts.size(), model.size(), local_rotations.size()}));
  std::vector<Transform> local(static_cast<std::size_t>(n));
  SampleJoltAnimation(animation, time, local);
  for (int32_t j = 0; j < n; ++j) {
    const int32_t p = ragdoll.parts[j].parent;
    model[j] = Compose(p >= 0 && p < j ? model[p] : Transform{}, local[j]);
    local_rotations[j] = Normalize(local[j].rotation);
  }
}

SkeletonSettings JoltSkeleton(const JoltAnimation& neutral) {
  SkeletonSettings s;
  s.names = neutral.joints;
  s.parents = neutral.parents;
  const std::size_t n = std::min(neutral.joints.size(), neutral.keys.size());  // a hand-built animation may have no keys
  s.rest_local.assign(neutral.keys.begin(), neutral.keys.begin() + static_cast<std::ptrdiff_t>(n));
  return s;
}

SampledClip JoltClip(const JoltAnimation& animation) {
  SampledClip clip;
  clip.name = animation.name;
  clip.frame_count = static_cast<int32_t>(animation.key_times.size());
  clip.local = animation.keys;
  return clip;
}

}  // namespace tendon::ports
