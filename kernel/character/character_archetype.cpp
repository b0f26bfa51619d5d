// kernel/character/character_archetype.cpp: the humanoid table, explicit part lists and
// joint limits (table, overrides, learned from clips).
//
// Segment mass fractions of the humanoid table: Winter, "Biomechanics and Motor Control of
// Human Movement" (4th ed., 2009), table 4.1 (after Dempster): hand 0.006, forearm 0.016,
// upper arm 0.028, foot 0.0145, leg 0.0465, thigh 0.100, head and neck 0.081, trunk 0.497
// (here split 0.142 pelvis and 0.355 thorax and abdomen). Limits: the Roblox Ragdoll
// module's default table (its values in docs/characters.md).
#include "kernel/character/character_archetype.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "kernel/core/finite.h"
#include "kernel/core/validation.h"
#include "kernel/rigid/ragdoll_archetype.h"

namespace tendon::detail {
namespace {

constexpr float kPi = 3.14159265358979f;
constexpr float kDeg = kPi / 180.0f;

enum Human : int32_t {
  kHips, kSpine, kNeck, kHead,
  kLeftUpperArm, kLeftLowerArm, kLeftHand,
  kRightUpperArm, kRightLowerArm, kRightHand,
  kLeftUpperLeg, kLeftLowerLeg, kLeftFoot, kLeftToes,
  kRightUpperLeg, kRightLowerLeg, kRightFoot, kRightToes,
  kHumanCount
};

// Normalised aliases per humanoid bone: VRM / Unity (Mecanim), Mixamo (after its prefix),
// Unreal, Blender-style, and the Jolt "Human" names.
const std::array<std::vector<const char*>, kHumanCount> kAliases = {{
    {"hips", "pelvis", "hipsbone", "hip"},
    {"spine", "spine01", "cspinesjnt0", "spine1", "abdomen"},
    {"neck", "neck01", "cnecksjnt0", "neck1"},
    {"head", "cheadsjnt0"},
    {"leftupperarm", "leftarm", "upperarml", "larmsjnt0", "lupperarm", "leftshoulderarm"},
    {"leftlowerarm", "leftforearm", "lowerarml", "forearml", "larmsjnt1", "llowerarm"},
    {"lefthand", "handl", "lwristsjnt0", "lhand"},
    {"rightupperarm", "rightarm", "upperarmr", "rarmsjnt0", "rupperarm", "rightshoulderarm"},
    {"rightlowerarm", "rightforearm", "lowerarmr", "forearmr", "rarmsjnt1", "rlowerarm"},
    {"righthand", "handr", "rwristsjnt0", "rhand"},
    {"leftupperleg", "leftupleg", "thighl", "llegsjnt0", "lthigh", "leftthigh"},
    {"leftlowerleg", "leftleg", "calfl", "shinl", "llegsjnt1", "lcalf", "leftshin"},
    {"leftfoot", "footl", "lfootsjnt0", "lfoot"},
    {"lefttoes", "lefttoebase", "balll", "toesl", "ltoes"},
    {"rightupperleg", "rightupleg", "thighr", "rlegsjnt0", "rthigh", "rightthigh"},
    {"rightlowerleg", "rightleg", "calfr", "shinr", "rlegsjnt1", "rcalf", "rightshin"},
    {"rightfoot", "footr", "rfootsjnt0", "rfoot"},
    {"righttoes", "righttoebase", "ballr", "toesr", "rtoes"},
}};

std::string Field(const char* list, int32_t i, const char* member) {
  return std::string(list) + "[" + std::to_string(i) + "]" + member;
}

Vec3 Perpendicular(Vec3 axis, Vec3 hint, Vec3 fallback) {
  Vec3 p = hint - axis * Dot(hint, axis);
  if (Length(p) < 0.1f) p = fallback - axis * Dot(fallback, axis);
  if (Length(p) < 0.1f) p = Cross(axis, std::fabs(axis.x) < 0.9f ? Vec3{1, 0, 0} : Vec3{0, 1, 0});
  return NormalizeOr(p, Vec3{1, 0, 0});
}

struct Rig {
  std::vector<Transform> world;                   // rest, model space
  std::unordered_map<std::string, int32_t> exact;  // name -> bone
  std::unordered_map<std::string, int32_t> normal; // normalised name -> first bone
  std::unordered_map<std::string, int32_t> table;  // CharacterSettings::humanoid_bones, normalised
  int32_t Find(const std::string& name) const {
    if (auto it = exact.find(name); it != exact.end()) return it->second;
    if (auto it = normal.find(NormalizeBoneName(name)); it != normal.end()) return it->second;
    return -1;
  }
};

std::array<int32_t, kHumanCount> FindHumanBones(const Rig& rig) {
  std::array<int32_t, kHumanCount> found;
  for (int32_t h = 0; h < kHumanCount; ++h) {
    found[h] = -1;
    // The first alias is the VRM role name: the host's table says which bone plays it.
    if (auto it = rig.table.find(kAliases[h][0]); it != rig.table.end()) {
      found[h] = it->second;
      continue;
    }
    for (const char* alias : kAliases[h]) {
      if (auto it = rig.normal.find(alias); it != rig.normal.end()) {
        found[h] = it->second;
        break;
      }
    }
  }
  return found;
}

// The rig's up, right and forward in model space, from whichever humanoid bones exist.
void RigAxes(const Rig& rig, const std::array<int32_t, kHumanCount>& h, Vec3* up, Vec3* right, Vec3* forward) {
  auto pos = [&](int32_t bone) { return rig.world[bone].translation; };
  *up = Vec3{0, 1, 0};
  const int32_t top = h[kHead] >= 0 ? h[kHead] : (h[kNeck] >= 0 ? h[kNeck] : h[kSpine]);
  if (h[kHips] >= 0 && top >= 0) *up = NormalizeOr(pos(top) - pos(h[kHips]), *up);
  *right = Vec3{-1, 0, 0};  // a rig facing +Z with Y up has its right hand at -X
  if (h[kLeftUpperLeg] >= 0 && h[kRightUpperLeg] >= 0)
    *right = NormalizeOr(pos(h[kRightUpperLeg]) - pos(h[kLeftUpperLeg]), *right);
  else if (h[kLeftUpperArm] >= 0 && h[kRightUpperArm] >= 0)
    *right = NormalizeOr(pos(h[kRightUpperArm]) - pos(h[kLeftUpperArm]), *right);
  *right = Perpendicular(*up, *right, Vec3{-1, 0, 0});
  *forward = Cross(*up, *right);
}

// The humanoid layout as an explicit part list.
Error HumanoidParts(const SkeletonSettings& skeleton, const Rig& rig, std::vector<CharacterPartSettings>* out) {
  const std::array<int32_t, kHumanCount> h = FindHumanBones(rig);
  if (h[kHips] < 0)
    return Fail(ErrorCode::kBadReference, -1, "skeleton.names",
                "the humanoid table found no hips bone (it looks for hips, pelvis, hipsBone, mixamorig:Hips, ...): "
                "list the parts yourself");
  Vec3 up, right, forward;
  RigAxes(rig, h, &up, &right, &forward);
  float lo = 1e30f, hi = -1e30f;
  for (int32_t b : h) {
    if (b < 0) continue;
    lo = std::min(lo, Dot(rig.world[b].translation, up));
    hi = std::max(hi, Dot(rig.world[b].translation, up));
  }
  // Sizes are for a 1.75 m human, whose found bones span about 1.45 m (ankle to head).
  const float s = std::clamp((hi - lo) / 1.45f, 0.05f, 100.0f);
  auto name = [&](int32_t h_index) { return h[h_index] >= 0 ? skeleton.names[h[h_index]] : std::string(); };
  auto add = [&](const char* part, int32_t bone, int32_t to, const char* parent, float radius, float share, float swing,
                 float twist, float leaf) {
    CharacterPartSettings p;
    p.name = part;
    p.bone = skeleton.names[bone];
    p.to = to >= 0 ? skeleton.names[to] : std::string();
    p.parent = parent;
    p.radius = radius * s;
    p.length = to >= 0 ? 0.0f : leaf * s;
    p.mass_share = share;
    p.swing_degrees = swing;
    p.twist_degrees = twist;
    out->push_back(std::move(p));
  };
  const bool spine = h[kSpine] >= 0;
  // Some rigs put the spine bone on top of the hips (a zero-length pelvis): then the hips
  // part is a leaf pointing up.
  const bool spine_apart =
      spine && Length(rig.world[h[kSpine]].translation - rig.world[h[kHips]].translation) > 0.03f * s;
  add("Hips", h[kHips], spine_apart ? h[kSpine] : -1, "", 0.11f, 0.142f, 0, 0, 0.15f);
  if (out->back().to.empty()) out->back().leaf_direction = up;
  if (spine) {
    const int32_t to = h[kNeck] >= 0 ? h[kNeck] : h[kHead];
    add("Spine", h[kSpine], to, "Hips", 0.12f, 0.355f, 40, 40, 0.45f);
  }
  const std::string torso = spine ? name(kSpine) : name(kHips);
  if (h[kHead] >= 0 || h[kNeck] >= 0) {
    const int32_t bone = h[kHead] >= 0 ? h[kHead] : h[kNeck];
    add("Head", bone, -1, "", 0.1f, 0.081f, 45, 60, h[kHead] >= 0 ? 0.22f : 0.3f);
    out->back().parent = torso;
    out->back().leaf_direction = up;
  }
  struct Side {
    const char* upper_arm;
    const char* lower_arm;
    const char* hand;
    const char* upper_leg;
    const char* lower_leg;
    const char* foot;
    Human ua, la, ha, ul, ll, ft, toes;
  };
  const Side sides[2] = {
      {"LeftUpperArm", "LeftLowerArm", "LeftHand", "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", kLeftUpperArm,
       kLeftLowerArm, kLeftHand, kLeftUpperLeg, kLeftLowerLeg, kLeftFoot, kLeftToes},
      {"RightUpperArm", "RightLowerArm", "RightHand", "RightUpperLeg", "RightLowerLeg", "RightFoot", kRightUpperArm,
       kRightLowerArm, kRightHand, kRightUpperLeg, kRightLowerLeg, kRightFoot, kRightToes},
  };
  for (const Side& side : sides) {
    if (h[side.ua] >= 0) {
      add(side.upper_arm, h[side.ua], h[side.la], "", 0.05f, 0.028f, 120, 60, 0.28f);
      out->back().parent = torso;
      if (h[side.la] >= 0) {
        add(side.lower_arm, h[side.la], h[side.ha], side.upper_arm, 0.04f, 0.016f, 80, 15, 0.25f);
        // The elbow folds the forearm toward the front: axis = forearm x forward.
        const Vec3 a = rig.world[h[side.la]].translation;
        const Vec3 b = h[side.ha] >= 0 ? rig.world[h[side.ha]].translation : a + (a - rig.world[h[side.ua]].translation);
        const Vec3 d = NormalizeOr(b - a, -up);
        out->back().hinge = CharacterHinge{NormalizeOr(Cross(d, Perpendicular(d, forward, up)), right), 0, 160};
        if (h[side.ha] >= 0) add(side.hand, h[side.ha], -1, side.lower_arm, 0.035f, 0.006f, 60, 30, 0.1f);
      }
    }
    if (h[side.ul] >= 0) {
      add(side.upper_leg, h[side.ul], h[side.ll], "Hips", 0.07f, 0.1f, 90, 45, 0.45f);
      out->back().parent = name(kHips);
      if (h[side.ll] >= 0) {
        add(side.lower_leg, h[side.ll], h[side.ft], side.upper_leg, 0.055f, 0.0465f, 80, 15, 0.45f);
        // The knee folds the shin toward the back: axis = shin x -forward.
        const Vec3 a = rig.world[h[side.ll]].translation;
        const Vec3 b = h[side.ft] >= 0 ? rig.world[h[side.ft]].translation : a - up;
        const Vec3 d = NormalizeOr(b - a, -up);
        out->back().hinge = CharacterHinge{NormalizeOr(Cross(d, -Perpendicular(d, forward, up)), right), 0, 160};
        if (h[side.ft] >= 0) {
          const bool toes = h[side.toes] >= 0 &&
                            Length(rig.world[h[side.toes]].translation - rig.world[h[side.ft]].translation) > 0.03f * s;
          add(side.foot, h[side.ft], toes ? h[side.toes] : -1, side.lower_leg, 0.045f, 0.0145f, 50, 20, 0.15f);
          if (!toes) out->back().leaf_direction = forward;
        }
      }
    }
  }
  // Parent names given as part names above refer to parts by their bone: fix them up.
  for (CharacterPartSettings& p : *out) {
    for (const CharacterPartSettings& q : *out) {
      if (p.parent == q.name) {
        p.parent = q.bone;
        break;
      }
    }
  }
  return {};
}

Error CheckClip(const SampledClip& clip, int32_t k, int32_t bones) {
  const std::string field = Field("limit_clips", k, ".local");
  if (clip.frame_count < 1)
    return Fail(ErrorCode::kEmpty, k, Field("limit_clips", k, ".frame_count"), "a clip needs at least one frame");
  if (static_cast<int64_t>(clip.local.size()) != static_cast<int64_t>(clip.frame_count) * bones)
    return Fail(ErrorCode::kNullBuffer, k, field,
                field + " holds " + std::to_string(clip.local.size()) + " transforms; frame_count x bones = " +
                    std::to_string(static_cast<int64_t>(clip.frame_count) * bones));
  for (std::size_t i = 0; i < clip.local.size(); ++i) {
    if (!IsFinite(clip.local[i]))
      return Fail(ErrorCode::kNotFinite, k, field, field + "[" + std::to_string(i) + "] is not finite");
    if (std::fabs(std::sqrt(Dot(clip.local[i].rotation, clip.local[i].rotation)) - 1.0f) > 1e-2f)
      return Fail(ErrorCode::kNotUnitRotation, k, field, field + "[" + std::to_string(i) + "].rotation is not unit");
  }
  return {};
}

// Calls visit(joint, fa, fb) for every joint of every clip frame, with the joint frames of
// the parent and child bodies as the rigid kernel sees them.
template <class F>
Error ForEachClipJoint(const CharacterSettings& settings, const std::vector<int32_t>& part_bone,
                       const RagdollSettings& ragdoll, F&& visit) {
  const auto bones = static_cast<int32_t>(settings.skeleton.names.size());
  RagdollArchetype frames;
  if (Error e = BuildRagdollArchetype(ragdoll, &frames); !Ok(e)) return e;
  const auto n = static_cast<int32_t>(part_bone.size());
  std::vector<Transform> world(bones), local(bones);
  for (const SampledClip& clip : settings.limit_clips) {
    for (int32_t f = 0; f < clip.frame_count; ++f) {
      for (int32_t b = 0; b < bones; ++b) {
        local[b] = clip.local[static_cast<std::size_t>(f) * bones + b];
        local[b].rotation = Normalize(local[b].rotation);
      }
      ForwardKinematics(settings.skeleton.parents, Transform{}, local.data(), world.data());
      for (int32_t j = 1; j < n; ++j) {
        const RigidPartArchetype& c = frames.parts[j];
        const RigidPartArchetype& p = frames.parts[c.parent];
        const Quat qp = Normalize(world[part_bone[c.parent]].rotation * p.body_in_part.rotation);
        const Quat qc = Normalize(world[part_bone[j]].rotation * c.body_in_part.rotation);
        visit(j, qp * c.joint.frame_in_parent, qc * c.joint.frame_in_child, p.body_pose.rotation * c.joint.frame_in_parent);
      }
    }
  }
  return {};
}

// Learns every joint's limits from the clips (see the header). Hinges become swing-twist
// joints (a hinge cannot hold a clip's off-axis rotation), and every cone is centred on the
// directions the clips move the child in, so a one-sided range (an elbow's fold) stays
// one-sided: the parent's twist axis turns to the mean sampled direction, the child's keeps
// its bone line.
Error LearnLimits(const CharacterSettings& settings, const std::vector<int32_t>& part_bone, RagdollSettings* ragdoll) {
  const auto bones = static_cast<int32_t>(settings.skeleton.names.size());
  if (settings.limit_clips.empty())
    return Fail(ErrorCode::kEmpty, -1, "limit_clips", "limit_source is kClips but limit_clips is empty");
  for (int32_t k = 0; k < static_cast<int32_t>(settings.limit_clips.size()); ++k) {
    if (Error e = CheckClip(settings.limit_clips[k], k, bones); !Ok(e)) return e;
  }
  const auto n = static_cast<int32_t>(part_bone.size());
  for (int32_t j = 1; j < n; ++j) {
    JointSettings& js = ragdoll->parts[j].joint;
    if (js.type == JointType::kHinge) {
      js.type = JointType::kSwingTwist;
      std::swap(js.twist_axis, js.plane_axis);  // the bone line twists; the hinge axis is the plane axis
      std::swap(js.child_twist_axis, js.child_plane_axis);
    }
  }
  // Pass 1: the mean direction of the child's twist axis in the parent's joint frame.
  std::vector<Vec3> mean(n, Vec3{});
  std::vector<Quat> parent_frame_rest(n, Quat{});
  Error e = ForEachClipJoint(settings, part_bone, *ragdoll, [&](int32_t j, Quat fa, Quat fb, Quat rest) {
    mean[j] = mean[j] + Rotate(Conjugate(fa), Rotate(fb, Vec3{1, 0, 0}));
    parent_frame_rest[j] = rest;
  });
  if (!Ok(e)) return e;
  for (int32_t j = 1; j < n; ++j) {
    JointSettings& js = ragdoll->parts[j].joint;
    if (Length(mean[j]) < 1e-3f) continue;  // directions all round: keep the rest axis
    const Vec3 centre = Rotate(parent_frame_rest[j], NormalizeOr(mean[j], Vec3{1, 0, 0}));
    if (Length(js.child_twist_axis) < 1e-6f) {
      js.child_twist_axis = js.twist_axis;
      js.child_plane_axis = js.plane_axis;
    }
    js.plane_axis = Perpendicular(centre, js.plane_axis, js.twist_axis);
    js.twist_axis = centre;
  }
  // Pass 2: the ranges about the centred frames.
  struct Range {
    float y = 0, z = 0, twist_lo = 1e9f, twist_hi = -1e9f;
  };
  std::vector<Range> range(n);
  std::vector<JointAngles> samples;  // per frame and joint, for the ellipse fit
  e = ForEachClipJoint(settings, part_bone, *ragdoll, [&](int32_t j, Quat fa, Quat fb, Quat) {
    const JointAngles m = MeasureJointFrames(fa, fb);
    Range& r = range[j];
    r.y = std::max(r.y, std::fabs(m.swing_y));
    r.z = std::max(r.z, std::fabs(m.swing_z));
    r.twist_lo = std::min(r.twist_lo, m.twist);
    r.twist_hi = std::max(r.twist_hi, m.twist);
    samples.push_back(m);
  });
  if (!Ok(e)) return e;
  // The per-axis extremes make an ellipse that may cut off a diagonal sample: grow it
  // (keeping its shape) until every sample is inside.
  for (int32_t j = 1; j < n; ++j) {
    range[j].y = std::max(range[j].y, 1e-3f);
    range[j].z = std::max(range[j].z, 1e-3f);
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const int32_t j = 1 + static_cast<int32_t>(i % static_cast<std::size_t>(n - 1));
    const float k = std::sqrt((samples[i].swing_y / range[j].y) * (samples[i].swing_y / range[j].y) +
                              (samples[i].swing_z / range[j].z) * (samples[i].swing_z / range[j].z));
    if (k > 1.0f) {
      range[j].y *= k;
      range[j].z *= k;
    }
  }
  const float margin = settings.limits_margin_degrees * kDeg;
  for (int32_t j = 1; j < n; ++j) {
    JointSettings& js = ragdoll->parts[j].joint;
    const Range& r = range[j];
    js.normal_half_cone_degrees = std::min(r.y + margin, kPi) / kDeg;
    js.plane_half_cone_degrees = std::min(r.z + margin, kPi) / kDeg;
    js.twist_min_degrees = std::max(r.twist_lo - margin, -kPi) / kDeg;
    js.twist_max_degrees = std::min(r.twist_hi + margin, kPi) / kDeg;
  }
  return {};
}

Error CheckSkeleton(const SkeletonSettings& s) {
  const auto n = static_cast<int32_t>(s.names.size());
  if (n == 0) return Fail(ErrorCode::kEmpty, -1, "skeleton.names", "the skeleton has no bones");
  if (n > kMaxCharacterBones)
    return Fail(ErrorCode::kCapacity, -1, "skeleton.names", "a skeleton has at most " + std::to_string(kMaxCharacterBones) + " bones");
  if (static_cast<int32_t>(s.parents.size()) != n || static_cast<int32_t>(s.rest_local.size()) != n)
    return Fail(ErrorCode::kNullBuffer, -1, "skeleton.parents",
                "skeleton.parents and skeleton.rest_local need one entry per name (" + std::to_string(n) + ")");
  std::unordered_map<std::string, int32_t> seen;
  for (int32_t i = 0; i < n; ++i) {
    if (s.names[i].empty()) return Fail(ErrorCode::kBadReference, i, Field("skeleton.names", i, ""), "a bone needs a name");
    if (!seen.emplace(s.names[i], i).second)
      return Fail(ErrorCode::kBadReference, i, Field("skeleton.names", i, ""), "the bone name '" + s.names[i] + "' is used twice");
    if (s.parents[i] < -1 || s.parents[i] >= n)
      return Fail(ErrorCode::kParentOutOfRange, i, Field("skeleton.parents", i, ""), "parent index out of range");
    if (s.parents[i] >= i)
      return Fail(s.parents[i] == i ? ErrorCode::kCycle : ErrorCode::kParentNotBefore, i, Field("skeleton.parents", i, ""),
                  "bone '" + s.names[i] + "' must come after its parent");
    const Transform& t = s.rest_local[i];
    if (!IsFinite(t)) return Fail(ErrorCode::kNotFinite, i, Field("skeleton.rest_local", i, ""), "not finite");
    if (std::fabs(std::sqrt(Dot(t.rotation, t.rotation)) - 1.0f) > 1e-3f)
      return Fail(ErrorCode::kNotUnitRotation, i, Field("skeleton.rest_local", i, ".rotation"), "not a unit quaternion");
  }
  return {};
}

}  // namespace

std::string NormalizeBoneName(std::string_view name) {
  if (const auto colon = name.rfind(':'); colon != std::string_view::npos) name.remove_prefix(colon + 1);
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '_' || c == '.' || c == ' ' || c == '-') continue;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

void ForwardKinematics(const std::vector<int32_t>& parents, const Transform& model, const Transform* local,
                       Transform* world) {
  for (std::size_t b = 0; b < parents.size(); ++b) {
    // A host rotation off unit is the rotation it points at (as the chains read the frames
    // they hang from): composed raw, it would scale everything below it by its squared
    // length. A unit one keeps its bits.
    Transform l = local[b];
    if (!NearUnit(l.rotation)) l.rotation = Normalize(l.rotation);
    world[b] = Compose(parents[b] >= 0 ? world[parents[b]] : model, l);
  }
}

// The largest rest skeleton accepted, m (its bounding box's diagonal): giants fit, a
// 1.8 m rig authored in centimetres (180 "m") does not.
constexpr float kMaxSkeletonExtent = 30.0f;

Error BuildCharacterArchetype(const CharacterSettings& settings, CharacterArchetype* out) {
  const SkeletonSettings& sk = settings.skeleton;
  if (Error e = CheckSkeleton(sk); !Ok(e)) return e;
  const auto bones = static_cast<int32_t>(sk.names.size());
  Rig rig;
  rig.world.resize(bones);
  ForwardKinematics(sk.parents, Transform{}, sk.rest_local.data(), rig.world.data());
  for (int32_t b = 0; b < bones; ++b) {
    rig.world[b].rotation = Normalize(rig.world[b].rotation);
    rig.exact.emplace(sk.names[b], b);
    rig.normal.emplace(NormalizeBoneName(sk.names[b]), b);
  }
  for (int32_t i = 0; i < static_cast<int32_t>(settings.humanoid_bones.size()); ++i) {
    const auto& [role, bone] = settings.humanoid_bones[i];
    if (bone < 0 || bone >= bones)
      return Fail(ErrorCode::kBadReference, i, Field("humanoid_bones", i, ".second"),
                  "humanoid bone '" + role + "' names bone " + std::to_string(bone) + ", outside [0, " +
                      std::to_string(bones) + ")");
    if (!rig.table.emplace(NormalizeBoneName(role), bone).second)
      return Fail(ErrorCode::kBadReference, i, Field("humanoid_bones", i, ".first"),
                  "humanoid bone '" + role + "' is listed twice");
  }
  // Tendon works in metres. A rig authored in centimetres (Mixamo's FBX, many DCC exports)
  // would build silently into a ragdoll a hundred times too big: refuse it with the reason.
  {
    Vec3 lo = rig.world[0].translation, hi = lo;
    for (const Transform& t : rig.world) {
      lo = Vec3{std::min(lo.x, t.translation.x), std::min(lo.y, t.translation.y), std::min(lo.z, t.translation.z)};
      hi = Vec3{std::max(hi.x, t.translation.x), std::max(hi.y, t.translation.y), std::max(hi.z, t.translation.z)};
    }
    const float extent = Length(hi - lo);
    if (!(extent <= kMaxSkeletonExtent))
      return Fail(ErrorCode::kOutOfRange, -1, "skeleton.rest_local",
                  "the rest skeleton spans " + std::to_string(extent) + " m (at most " +
                      std::to_string(static_cast<int>(kMaxSkeletonExtent)) +
                      " m): it looks authored in centimetres; scale its translations by 0.01 (Tendon works in metres)");
  }
  if (Error e = CheckPositive(settings.total_mass, -1, "total_mass"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.friction, 0, 10, -1, "friction"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.linear_damping, 0, 100, -1, "linear_damping"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.angular_damping, 0, 100, -1, "angular_damping"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.drive_frequency_hz, 1e-3f, 1000, -1, "drive_frequency_hz"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.drive_damping_ratio, 0, 100, -1, "drive_damping_ratio"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.drive_torque_per_kg, 0, 1e6f, -1, "drive_torque_per_kg"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.joint_friction_per_kg, 0, 1e6f, -1, "joint_friction_per_kg"); !Ok(e)) return e;
  if (Error e = CheckRange(settings.limits_margin_degrees, 0, 90, -1, "limits_margin_degrees"); !Ok(e)) return e;

  CharacterArchetype a;
  a.name = settings.name;
  a.bone_names = sk.names;
  a.parents = sk.parents;
  a.rest_local = sk.rest_local;
  for (Transform& t : a.rest_local) t.rotation = Normalize(t.rotation);
  a.part_of_bone.assign(bones, -1);
  RagdollSettings& rs = a.ragdoll;
  const std::array<int32_t, kHumanCount> human = FindHumanBones(rig);
  Vec3 up, right, forward;
  RigAxes(rig, human, &up, &right, &forward);

  if (!settings.ragdoll.parts.empty()) {
    // A complete ragdoll: map its parts onto bones by name.
    rs = settings.ragdoll;
    for (int32_t i = 0; i < static_cast<int32_t>(rs.parts.size()); ++i) {
      const int32_t bone = rig.Find(rs.parts[i].name);
      if (bone < 0)
        return Fail(ErrorCode::kBadReference, i, Field("ragdoll.parts", i, ".name"),
                    "no bone named '" + rs.parts[i].name + "' in the skeleton");
      if (a.part_of_bone[bone] >= 0)
        return Fail(ErrorCode::kBadReference, i, Field("ragdoll.parts", i, ".name"), "two parts on bone '" + rs.parts[i].name + "'");
      const Transform& rest = rig.world[bone];
      const Transform& pose = rs.parts[i].pose;
      if (Length(rest.translation - pose.translation) > 5e-3f || RotationAngle(Normalize(Conjugate(rest.rotation) * pose.rotation)) > kDeg)
        return Fail(ErrorCode::kOutOfRange, i, Field("ragdoll.parts", i, ".pose"),
                    "part '" + rs.parts[i].name + "' is not at its bone's rest frame (within 5 mm and 1 degree)");
      a.part_of_bone[bone] = i;
      a.part_bone.push_back(bone);
    }
    if (settings.limit_source == LimitSource::kClips) {
      if (Error e = LearnLimits(settings, a.part_bone, &rs); !Ok(e)) return e;
    }
  } else {
    std::vector<CharacterPartSettings> generated;
    const bool humanoid = settings.parts.empty();
    if (humanoid) {
      if (Error e = HumanoidParts(sk, rig, &generated); !Ok(e)) return e;
    }
    const std::vector<CharacterPartSettings>& list = humanoid ? generated : settings.parts;
    const char* kList = "parts";
    if (static_cast<int32_t>(list.size()) > kMaxRagdollParts)
      return Fail(ErrorCode::kCapacity, -1, kList, "at most " + std::to_string(kMaxRagdollParts) + " parts");
    float share_sum = 0;
    std::vector<Vec3> line(list.size());  // each part's axis direction, model space
    for (int32_t i = 0; i < static_cast<int32_t>(list.size()); ++i) {
      const CharacterPartSettings& ps = list[i];
      const int32_t bone = rig.Find(ps.bone);
      if (bone < 0) return Fail(ErrorCode::kBadReference, i, Field(kList, i, ".bone"), "no bone named '" + ps.bone + "'");
      if (a.part_of_bone[bone] >= 0)
        return Fail(ErrorCode::kBadReference, i, Field(kList, i, ".bone"), "bone '" + ps.bone + "' already has a part");
      int32_t to = -1;
      if (!ps.to.empty()) {
        to = rig.Find(ps.to);
        if (to < 0) return Fail(ErrorCode::kBadReference, i, Field(kList, i, ".to"), "no bone named '" + ps.to + "'");
      }
      int32_t parent = i - 1;
      if (!ps.parent.empty()) {
        parent = -1;
        const int32_t parent_bone = rig.Find(ps.parent);
        for (int32_t k = 0; k < i && parent_bone >= 0; ++k)
          if (a.part_bone[k] == parent_bone) parent = k;
        if (parent < 0)
          return Fail(ErrorCode::kBadReference, i, Field(kList, i, ".parent"),
                      "'" + ps.parent + "' is not the bone of an earlier part (parents come before children)");
      }
      if (i == 0 && !ps.parent.empty())
        return Fail(ErrorCode::kBadReference, i, Field(kList, i, ".parent"), "the first part is the root and has no parent");
      if (Error e = CheckPositive(ps.radius, i, Field(kList, i, ".radius")); !Ok(e)) return e;
      if (Error e = CheckRange(ps.length, 0, 1e4f, i, Field(kList, i, ".length")); !Ok(e)) return e;
      if (Error e = CheckPositive(ps.mass_share, i, Field(kList, i, ".mass_share")); !Ok(e)) return e;
      if (Error e = CheckRange(ps.swing_degrees, 0, 180, i, Field(kList, i, ".swing_degrees")); !Ok(e)) return e;
      if (Error e = CheckRange(ps.twist_degrees, 0, 180, i, Field(kList, i, ".twist_degrees")); !Ok(e)) return e;
      if (!IsFinite(ps.leaf_direction))
        return Fail(ErrorCode::kNotFinite, i, Field(kList, i, ".leaf_direction"), "not finite");
      if (ps.hinge) {
        if (!IsFinite(ps.hinge->axis) || Length(ps.hinge->axis) < 1e-6f)
          return Fail(ErrorCode::kOutOfRange, i, Field(kList, i, ".hinge.axis"), "the hinge axis must be a finite non-zero vector");
        if (Error e = CheckRange(ps.hinge->min_degrees, -180, 180, i, Field(kList, i, ".hinge.min_degrees")); !Ok(e)) return e;
        if (Error e = CheckRange(ps.hinge->max_degrees, ps.hinge->min_degrees, 180, i, Field(kList, i, ".hinge.max_degrees")); !Ok(e))
          return e;
      }
      const Transform& rest = rig.world[bone];
      const Vec3 origin = rest.translation;
      Vec3 target;
      if (to >= 0) {
        target = rig.world[to].translation;
        if (ps.length > 0) target = origin + NormalizeOr(target - origin, Vec3{}) * ps.length;
      } else {
        if (!(ps.length > 0))
          return Fail(ErrorCode::kOutOfRange, i, Field(kList, i, ".length"), "a leaf part (no 'to') needs a length > 0");
        const Vec3 dir = Length(ps.leaf_direction) > 1e-6f ? NormalizeOr(ps.leaf_direction, up)
                                                            : (parent >= 0 ? line[parent] : up);
        target = origin + dir * ps.length;
      }
      const Vec3 seg = target - origin;
      const float length = Length(seg);
      if (length < 1e-4f)
        return Fail(ErrorCode::kZeroLengthSegment, i, Field(kList, i, ".to"), "part '" + ps.bone + "' has no length");
      line[i] = seg * (1.0f / length);
      PartSettings part;
      part.name = ps.name.empty() ? ps.bone : ps.name;
      part.parent = parent;
      part.pose = Transform{origin, rest.rotation, {1, 1, 1}};
      part.shape.type = PartShape::kCapsule;
      part.shape.radius = ps.radius;
      part.shape.half_height = std::max(length * 0.5f - ps.radius, 0.0f);
      const Vec3 axis_local = Rotate(Conjugate(rest.rotation), line[i]);
      part.shape.offset = Transform{Rotate(Conjugate(rest.rotation), seg * 0.5f), ShortestArc(Vec3{0, 1, 0}, axis_local), {1, 1, 1}};
      part.mass_share = ps.mass_share;
      share_sum += ps.mass_share;
      part.friction = settings.friction;
      part.linear_damping = settings.linear_damping;
      part.angular_damping = settings.angular_damping;
      JointSettings& js = part.joint;
      js.anchor = origin;
      if (ps.hinge) {
        js.type = JointType::kHinge;
        js.twist_axis = NormalizeOr(ps.hinge->axis, Vec3{1, 0, 0});
        js.plane_axis = Perpendicular(js.twist_axis, line[i], forward);
        js.hinge_min_degrees = ps.hinge->min_degrees;
        js.hinge_max_degrees = ps.hinge->max_degrees;
      } else {
        js.twist_axis = line[i];
        js.plane_axis = Perpendicular(line[i], forward, right);
        js.normal_half_cone_degrees = js.plane_half_cone_degrees = ps.swing_degrees;
        js.twist_min_degrees = -ps.twist_degrees;
        js.twist_max_degrees = ps.twist_degrees;
      }
      js.friction_torque_per_kg = settings.joint_friction_per_kg;
      js.motor = MotorSettings{settings.drive_frequency_hz, settings.drive_damping_ratio, settings.drive_torque_per_kg,
                               /*limb_inertia=*/true};
      rs.parts.push_back(std::move(part));
      a.part_of_bone[bone] = i;
      a.part_bone.push_back(bone);
    }
    for (PartSettings& p : rs.parts) p.mass_share /= share_sum;
    rs.total_mass = settings.total_mass;
    rs.name = settings.name;
    rs.collision_group = settings.collision_group;
    rs.collision_mask = settings.collision_mask;
    // Overrides by part name.
    for (int32_t k = 0; k < static_cast<int32_t>(settings.limit_overrides.size()); ++k) {
      const JointLimitOverride& o = settings.limit_overrides[k];
      int32_t j = -1;
      for (int32_t i = 0; i < static_cast<int32_t>(rs.parts.size()); ++i)
        if (rs.parts[i].name == o.part) j = i;
      if (j < 0) return Fail(ErrorCode::kBadReference, k, Field("limit_overrides", k, ".part"), "no part named '" + o.part + "'");
      if (j == 0) return Fail(ErrorCode::kBadReference, k, Field("limit_overrides", k, ".part"), "the root part has no joint");
      if (Error e = CheckRange(o.swing_degrees, 0, 180, k, Field("limit_overrides", k, ".swing_degrees")); !Ok(e)) return e;
      if (Error e = CheckRange(o.twist_degrees, 0, 180, k, Field("limit_overrides", k, ".twist_degrees")); !Ok(e)) return e;
      JointSettings& js = rs.parts[j].joint;
      js.normal_half_cone_degrees = js.plane_half_cone_degrees = o.swing_degrees;
      js.twist_min_degrees = -o.twist_degrees;
      js.twist_max_degrees = o.twist_degrees;
      js.hinge_min_degrees = 0;
      js.hinge_max_degrees = std::min(2.0f * o.swing_degrees, 180.0f);
    }
    if (settings.limit_source == LimitSource::kClips) {
      if (Error e = LearnLimits(settings, a.part_bone, &rs); !Ok(e)) return e;
    }
  }

  // What hosts read back, and the body's reference directions.
  const auto n = static_cast<int32_t>(rs.parts.size());
  for (int32_t i = 0; i < n; ++i) {
    const PartSettings& p = rs.parts[i];
    CharacterPartInfo info;
    info.name = p.name;
    info.bone = a.part_bone[i];
    info.parent = p.parent;
    info.joint = p.joint.type;
    info.normal_half_cone_degrees = p.joint.normal_half_cone_degrees;
    info.plane_half_cone_degrees = p.joint.plane_half_cone_degrees;
    info.twist_min_degrees = p.joint.twist_min_degrees;
    info.twist_max_degrees = p.joint.twist_max_degrees;
    info.hinge_min_degrees = p.joint.hinge_min_degrees;
    info.hinge_max_degrees = p.joint.hinge_max_degrees;
    a.parts.push_back(info);
  }
  a.root_rest_rotation = rig.world[a.part_bone[0]].rotation;
  for (int32_t i = 0; i < n && human[kSpine] >= 0; ++i)
    if (a.part_bone[i] == human[kSpine]) a.torso_part = i;
  a.forward_in_torso = Rotate(Conjugate(rig.world[a.part_bone[a.torso_part]].rotation), forward);
  const int32_t head_bone = human[kHead] >= 0 ? human[kHead] : human[kNeck];
  for (int32_t i = 0; i < n && head_bone >= 0; ++i)
    if (a.part_bone[i] == head_bone) a.head_part = i;
  if (a.head_part < 0) {
    float best = -1e30f;
    for (int32_t i = 0; i < n; ++i) {
      const float height = Dot(rig.world[a.part_bone[i]].translation, up);
      if (height > best) best = height, a.head_part = i;
    }
  }
  *out = std::move(a);
  return {};
}

}  // namespace tendon::detail
