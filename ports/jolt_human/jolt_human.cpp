// ports/jolt_human/jolt_human.cpp: the Jolt "Human" ragdoll JSON -> RagdollSettings.
#include "ports/jolt_human/jolt_human.h"

#include <algorithm>
#include <cmath>

#include "ports/json/json.h"

namespace tendon::ports {
namespace {

constexpr float kRadToDeg = 180.0f / 3.14159265358979f;

Vec3 ReadVec3(const json::Value& v) {
  return Vec3{static_cast<float>(v[0].Number()), static_cast<float>(v[1].Number()), static_cast<float>(v[2].Number())};
}
Quat ReadQuat(const json::Value& v) {  // [x, y, z, w]
  return Normalize(Quat{static_cast<float>(v[0].Number()), static_cast<float>(v[1].Number()),
                        static_cast<float>(v[2].Number()), static_cast<float>(v[3].Number())});
}
float ReadFloat(const json::Value& v, float fallback) {
  return v.IsNumber() ? static_cast<float>(v.Number()) : fallback;
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

Result<RagdollSettings> LoadJoltHumanRagdoll(const std::string& path) {
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
    part.parent = p["parent_index"].IsNumber() ? static_cast<int32_t>(p["parent_index"].Number()) : -1;
    part.pose = Transform{ReadVec3(p["position"]), ReadQuat(p["rotation"]), {1, 1, 1}};
    if (!ReadShape(p["shape"], &part.shape)) return Bad(path + ": part " + part.name + " has an unsupported shape");
    part.mass = ReadFloat(p["mass"], 0);
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

}  // namespace tendon::ports
