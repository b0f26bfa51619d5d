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

Vec3 ReadVec3(const json::Value& v) {
  return Vec3{v[0].Float(), v[1].Float(), v[2].Float()};
}
Quat ReadQuat(const json::Value& v) {  // [x, y, z, w]
  return Normalize(Quat{v[0].Float(), v[1].Float(),
                        v[2].Float(), v[3].Float()});
}
float ReadFloat(const json::Value& v, float fallback) {
  return v.IsNumber() ? v.Float() : fallback;
}

Error Bad(const std::string& what) { return Error{ErrorCode::kOutOfRange, -1, "file", what}; }

// One capsule's axis-aligned bounds in the part frame.
void CapsuleBounds(const json::Value& s, Vec3* lo, Vec3* hi) {
  const Vec3 centre = ReadVec3(s["offset_position"]);
  const Quat rotation = ReadQuat(s["offset_rotation"]);
  const float r = ReadFloat(s["radius"], 0), h = ReadFloat(s["half_height_of_cylinder"], 0);
  const Vec3 axis = Rotate(rotation, Vec3{0, h, 0});
  const Vec3 extent{std::fabs(axis.x) + r, std::fabs(axis.y) + r, std::fabs(axis.z) + r};
  *lo = centre - extent;
  *hi = centre + extent;
}

bool ReadShape(const json::Value& s, PartShapeSettings* out) {
  const std::string& type = s["type"].String();
  out->offset = Transform{ReadVec3(s["offset_position"]), ReadQuat(s["offset_rotation"]), {1, 1, 1}};
  if (type == "capsule") {
    out->type = PartShape::kCapsule;
    out->radius = ReadFloat(s["radius"], 0);
    out->half_height = ReadFloat(s["half_height_of_cylinder"], 0);
  } else if (type == "tapered_capsule") {
    out->type = PartShape::kTaperedCapsule;
    out->top_radius = ReadFloat(s["top_radius"], 0);
    out->bottom_radius = ReadFloat(s["bottom_radius"], 0);
    out->half_height = ReadFloat(s["half_height_of_tapered_cylinder"], 0);
  } else if (type == "box") {
    out->type = PartShape::kBox;
    out->half_extents = ReadVec3(s["half_extent"]);
  } else if (type == "sphere") {
    out->type = PartShape::kSphere;
    out->radius = ReadFloat(s["radius"], 0);
  } else if (type == "compound") {
    const json::Value& subs = s["sub_shapes"];
    if (subs.Size() == 0) return false;
    Vec3 lo{1e9f, 1e9f, 1e9f}, hi{-1e9f, -1e9f, -1e9f};
    for (std::size_t i = 0; i < subs.Size(); ++i) {
      if (subs[i]["type"].String() != "capsule") return false;
      Vec3 a, b;
      CapsuleBounds(subs[i], &a, &b);
      lo = Vec3{std::min(lo.x, a.x), std::min(lo.y, a.y), std::min(lo.z, a.z)};
      hi = Vec3{std::max(hi.x, b.x), std::max(hi.y, b.y), std::max(hi.z, b.z)};
    }
    out->type = PartShape::kBox;
    out->half_extents = (hi - lo) * 0.5f;
    out->offset = Transform{(hi + lo) * 0.5f, {}, {1, 1, 1}};
  } else {
    return false;
  }
  return true;
}

}  // namespace

Result<RagdollSettings> LoadJoltHumanRagdoll(const std::string& path, bool stabilized_masses) {
  const json::ParseResult parsed = json::ParseFile(path);
  if (!parsed.ok) return Bad(path + ": " + parsed.error + " at byte " + std::to_string(parsed.error_offset));
  const json::Value& root = parsed.value;
  const json::Value& parts = root["parts"];
  if (!parts.IsArray() || parts.Size() == 0) return Bad(path + ": no parts");
  RagdollSettings out;
  out.name = root["name"].String();
  for (std::size_t i = 0; i < parts.Size(); ++i) {
    const json::Value& p = parts[i];
    PartSettings part;
    part.name = p["name"].String();
    part.parent = -1;
    if (!p["parent_index"].IsNull() && !p["parent_index"].Int(-1, static_cast<int32_t>(parts.Size()), &part.parent))
      return Bad(path + ": part " + std::to_string(i) + "'s parent_index is not -1 or the index of a part");
    part.pose = Transform{ReadVec3(p["position"]), ReadQuat(p["rotation"]), {1, 1, 1}};
    if (!ReadShape(p["shape"], &part.shape)) return Bad(path + ": part " + part.name + " has an unsupported shape");
    part.mass = ReadFloat(p[stabilized_masses ? "mass_after_jolt_stabilize" : "mass"], 0);
    part.friction = ReadFloat(p["friction"], part.friction);
    part.restitution = ReadFloat(p["restitution"], part.restitution);
    part.linear_damping = ReadFloat(p["linear_damping"], part.linear_damping);
    part.angular_damping = ReadFloat(p["angular_damping"], part.angular_damping);
    part.gravity_factor = ReadFloat(p["gravity_factor"], part.gravity_factor);
    part.max_linear_speed = ReadFloat(p["max_linear_velocity"], part.max_linear_speed);
    part.max_angular_speed = ReadFloat(p["max_angular_velocity"], part.max_angular_speed);
    const json::Value& j = p["joint"];
    if (j.IsObject()) {
      if (j["type"].String() != "swing_twist") return Bad(path + ": part " + part.name + " has an unsupported joint");
      JointSettings& joint = part.joint;
      joint.type = JointType::kSwingTwist;
      joint.anchor = ReadVec3(j["position1"]);
      joint.twist_axis = NormalizeOr(ReadVec3(j["twist_axis1"]), {0, 1, 0});
      joint.plane_axis = NormalizeOr(ReadVec3(j["plane_axis1"]), {1, 0, 0});
      joint.child_twist_axis = NormalizeOr(ReadVec3(j["twist_axis2"]), joint.twist_axis);
      joint.child_plane_axis = NormalizeOr(ReadVec3(j["plane_axis2"]), joint.plane_axis);
      joint.normal_half_cone_degrees = ReadFloat(j["normal_half_cone_angle"], 0) * kRadToDeg;
      joint.plane_half_cone_degrees = ReadFloat(j["plane_half_cone_angle"], 0) * kRadToDeg;
      joint.twist_min_degrees = ReadFloat(j["twist_min_angle"], 0) * kRadToDeg;
      joint.twist_max_degrees = ReadFloat(j["twist_max_angle"], 0) * kRadToDeg;
      const float mass = part.mass > 0 ? part.mass : 1.0f;
      joint.friction_torque_per_kg = ReadFloat(j["max_friction_torque"], 0) / mass;
      const json::Value& motor = j["swing_motor"];
      joint.motor.frequency_hz = ReadFloat(motor["frequency"], 0);
      joint.motor.damping_ratio = ReadFloat(motor["damping"], 1);
      joint.motor.max_torque_per_kg = ReadFloat(motor["max_torque_limit"], 0) / mass;
    }
    out.parts.push_back(part);
  }
  for (const PartSettings& p : out.parts) out.total_mass += p.mass;
  return out;
}

Result<JoltAnimation> LoadJoltAnimation(const std::string& path) {
  const json::ParseResult parsed = json::ParseFile(path);
  if (!parsed.ok) return Bad(path + ": " + parsed.error);
  const json::Value& root = parsed.value;
  JoltAnimation a;
  a.name = root["name"].String();
  a.looping = root["is_looping"].Bool(true);
  a.duration = ReadFloat(root["duration"], 0);
  const json::Value& joints = root["joints"];
  if (!joints.IsArray() || joints.Size() == 0) return Bad(path + ": no joints");
  const std::size_t n = joints.Size();
  const std::size_t key_count = joints[0]["keys"].Size();
  if (key_count == 0) return Bad(path + ": the first joint has no keys");
  // Validated before anything is sized from it: every joint has as many keys as the
  // first, so the storage is the file's own keys, never a product the file made up.
  for (std::size_t j = 0; j < n; ++j) {
    if (!joints[j]["name"].IsString()) return Bad(path + ": joint " + std::to_string(j) + " has no name");
    if (joints[j]["keys"].Size() != key_count)
      return Bad(path + ": joint '" + joints[j]["name"].String() + "' has a different key count");
  }
  for (std::size_t k = 0; k < key_count; ++k) a.key_times.push_back(ReadFloat(joints[0]["keys"][k]["time"], 0));
  // The files list joints in any order (the hd ones are not parents first): order them
  // parents first. A joint whose parent comes earlier in the file is placed in its parent's
  // round, one whose parent comes later in the next round after it; rounds in order, the
  // file's order within a round. Linear: a name table, one pass for the rounds (memoised
  // along parent links), one counting sort.
  std::unordered_map<std::string, std::size_t> index_of;
  index_of.reserve(n);
  for (std::size_t j = 0; j < n; ++j) index_of.emplace(joints[j]["name"].String(), j);
  constexpr std::size_t kUnknown = SIZE_MAX, kVisiting = SIZE_MAX - 1;
  std::vector<std::size_t> parent_of(n, kUnknown), round(n, kUnknown);
  for (std::size_t j = 0; j < n; ++j) {
    const json::Value& parent = joints[j]["parent"];
    if (!parent.IsString()) continue;
    const auto it = index_of.find(parent.String());
    if (it == index_of.end() || it->second == j)
      return Bad(path + ": joint '" + joints[j]["name"].String() + "' names a parent that is not in the file");
    parent_of[j] = it->second;
  }
  std::vector<std::size_t> path_stack;
  for (std::size_t j = 0; j < n; ++j) {
    // Walk up to a joint whose round is known (or a root), then fill the rounds back down.
    for (std::size_t at = j; round[at] == kUnknown;) {
      round[at] = kVisiting;
      path_stack.push_back(at);
      if (parent_of[at] == kUnknown) break;
      at = parent_of[at];
      if (round[at] == kVisiting) return Bad(path + ": the joints' parents form a cycle");
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
  for (std::size_t r = 1; r <= n; ++r) per_round[r] += per_round[r - 1];
  std::vector<std::size_t> order(n), position(n);
  for (std::size_t j = 0; j < n; ++j) order[per_round[round[j]]++] = j;
  for (std::size_t i = 0; i < n; ++i) position[order[i]] = i;
  a.keys.resize(key_count * n);
  for (std::size_t i = 0; i < n; ++i) {
    const json::Value& joint = joints[order[i]];
    a.joints.push_back(joint["name"].String());
    const std::size_t p = parent_of[order[i]];
    a.parents.push_back(p == kUnknown ? -1 : static_cast<int32_t>(position[p]));
    const json::Value& keys = joint["keys"];
    for (std::size_t k = 0; k < key_count; ++k)
      a.keys[k * n + i] = Transform{ReadVec3(keys[k]["translation"]), ReadQuat(keys[k]["rotation"]), {1, 1, 1}};
  }
  return a;
}

void SampleJoltAnimation(const JoltAnimation& a, float time, std::span<Transform> out, bool in_place) {
  const std::size_t n = a.joints.size();
  const std::size_t keys = a.key_times.size();
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
  const auto n = static_cast<int32_t>(ragdoll.parts.size());
  std::vector<Transform> local(n);
  SampleJoltAnimation(animation, time, local);
  for (int32_t j = 0; j < n; ++j) {
    const int32_t p = ragdoll.parts[j].parent;
    model[j] = Compose(p >= 0 ? model[p] : Transform{}, local[j]);
    local_rotations[j] = Normalize(local[j].rotation);
  }
}

SkeletonSettings JoltSkeleton(const JoltAnimation& neutral) {
  SkeletonSettings s;
  s.names = neutral.joints;
  s.parents = neutral.parents;
  s.rest_local.assign(neutral.keys.begin(), neutral.keys.begin() + static_cast<std::ptrdiff_t>(neutral.joints.size()));
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
