// Building ragdoll characters: the humanoid table on Mixamo-, Unreal-, VRM- and Jolt-named
// rigs, explicit part lists, the limit table, overrides and limits learned from clips.
#include <algorithm>
#include <cmath>
#include <string>

#include "character_test_util.h"

namespace tendon::test {
namespace {

constexpr float kStep = 1.0f / 60.0f;
constexpr float kRadToDeg = 57.29578f;

CharacterSettings Humanoid(const SkeletonSettings& skeleton) {
  CharacterSettings s;
  s.name = "humanoid";
  s.skeleton = skeleton;
  return s;
}

std::vector<CharacterPartInfo> Parts(World& w, CharacterArchetypeId a) {
  std::vector<CharacterPartInfo> out(w.CharacterPartCount(a));
  for (int32_t j = 0; j < static_cast<int32_t>(out.size()); ++j) EXPECT_EQ(w.GetCharacterPartInfo(a, j, &out[j]).code, ErrorCode::kNone);
  return out;
}

TEST(CharacterBuild, MixamoUnrealUnityAndVrmNamedRigsMapToTheSameParts) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld();
  std::vector<std::vector<CharacterPartInfo>> layouts;
  for (const auto& names : {VrmNames(), MixamoNames(), UnrealNames(), UnityNames()}) {
    auto built = w->BuildCharacterArchetype(Humanoid(Godette(names)));
    ASSERT_TRUE(built.ok()) << built.error().field << ": " << built.error().message;
    layouts.push_back(Parts(*w, built.value()));
  }
  const std::vector<std::string> expected = {"Hips", "Spine", "Head", "LeftUpperArm", "LeftLowerArm", "LeftHand",
                                             "LeftUpperLeg", "LeftLowerLeg", "LeftFoot", "RightUpperArm",
                                             "RightLowerArm", "RightHand", "RightUpperLeg", "RightLowerLeg", "RightFoot"};
  ASSERT_EQ(layouts[0].size(), expected.size());
  for (const std::string& name : expected) {
    bool found = false;
    for (const CharacterPartInfo& p : layouts[0]) found = found || p.name == name;
    EXPECT_TRUE(found) << name;
  }
  for (std::size_t k = 1; k < layouts.size(); ++k) {
    ASSERT_EQ(layouts[k].size(), layouts[0].size()) << "naming " << k;
    for (std::size_t j = 0; j < layouts[0].size(); ++j) {
      const CharacterPartInfo &a = layouts[0][j], &b = layouts[k][j];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.bone, b.bone) << a.name;
      EXPECT_EQ(a.parent, b.parent) << a.name;
      EXPECT_EQ(a.joint, b.joint) << a.name;
      EXPECT_EQ(a.mass, b.mass) << a.name;
      EXPECT_EQ(a.normal_half_cone_degrees, b.normal_half_cone_degrees) << a.name;
      EXPECT_EQ(a.hinge_max_degrees, b.hinge_max_degrees) << a.name;
    }
  }
}

TEST(CharacterBuild, TheJoltHumanSkeletonMapsByItsNames) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld();
  const SkeletonSettings sk = ports::JoltSkeleton(JoltAnim("animations/neutral.json"));
  auto built = w->BuildCharacterArchetype(Humanoid(sk));
  ASSERT_TRUE(built.ok()) << built.error().message;
  const auto parts = Parts(*w, built.value());
  auto bone_of = [&](const char* part) {
    for (const CharacterPartInfo& p : parts)
      if (p.name == part) return sk.names[p.bone];
    return std::string("(none)");
  };
  EXPECT_EQ(bone_of("Hips"), "hipsBone");
  EXPECT_EQ(bone_of("Spine"), "C_Spine_sjnt_0");
  EXPECT_EQ(bone_of("Head"), "C_Head_sjnt_0");
  EXPECT_EQ(bone_of("LeftLowerArm"), "L_Arm_sjnt_1");
  EXPECT_EQ(bone_of("RightHand"), "R_Wrist_sjnt_0");
  EXPECT_EQ(bone_of("LeftLowerLeg"), "L_Leg_sjnt_1");
  EXPECT_EQ(bone_of("RightFoot"), "R_Foot_sjnt_0");
  float mass = 0;
  for (const CharacterPartInfo& p : parts) mass += p.mass;
  EXPECT_NEAR(mass, 70.0f, 1e-3f) << "the default total mass is split over the parts";
}

TEST(CharacterBuild, TheDefaultTableSetsEveryJointAndOverridesReplaceIt) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld();
  CharacterSettings s = Humanoid(Godette(VrmNames()));
  s.limit_overrides.push_back({"LeftUpperArm", 30, 10});
  s.limit_overrides.push_back({"RightLowerLeg", 60, 0});
  const CharacterArchetypeId a = w->BuildCharacterArchetype(s).value();
  struct Row {
    const char* part;
    JointType type;
    float swing, twist_or_hinge_max;
  };
  const Row rows[] = {{"Spine", JointType::kSwingTwist, 40, 40},     {"Head", JointType::kSwingTwist, 45, 60},
                      {"RightUpperArm", JointType::kSwingTwist, 120, 60}, {"LeftUpperArm", JointType::kSwingTwist, 30, 10},
                      {"LeftLowerArm", JointType::kHinge, 0, 160},    {"LeftHand", JointType::kSwingTwist, 60, 30},
                      {"LeftUpperLeg", JointType::kSwingTwist, 90, 45}, {"LeftLowerLeg", JointType::kHinge, 0, 160},
                      {"RightLowerLeg", JointType::kHinge, 0, 120},   {"LeftFoot", JointType::kSwingTwist, 50, 20}};
  for (const Row& r : rows) {
    const int32_t j = w->FindCharacterPart(a, r.part);
    ASSERT_GE(j, 0) << r.part;
    CharacterPartInfo info;
    EXPECT_TRUE(w->GetCharacterPartInfo(a, j, &info).ok());
    EXPECT_EQ(info.joint, r.type) << r.part;
    if (r.type == JointType::kHinge) {
      EXPECT_EQ(info.hinge_min_degrees, 0.0f) << r.part;
      EXPECT_EQ(info.hinge_max_degrees, r.twist_or_hinge_max) << r.part;
    } else {
      EXPECT_EQ(info.normal_half_cone_degrees, r.swing) << r.part;
      EXPECT_EQ(info.plane_half_cone_degrees, r.swing) << r.part;
      EXPECT_EQ(info.twist_max_degrees, r.twist_or_hinge_max) << r.part;
      EXPECT_EQ(info.twist_min_degrees, -r.twist_or_hinge_max) << r.part;
    }
  }
  s.limit_overrides.push_back({"Tail", 10, 10});
  auto bad = w->BuildCharacterArchetype(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "limit_overrides[2].part");
  EXPECT_NE(bad.error().message.find("Tail"), std::string::npos);
}

TEST(CharacterBuild, BadRigsAndPartListsAreNamed) {
  TENDON_NEED_SHARED_DATA();
  auto w = MakeWorld();
  // No hips.
  SkeletonSettings sk = Godette(VrmNames());
  for (std::string& n : sk.names)
    if (n == "hips") n = "root_of_it_all";
  auto e = w->BuildCharacterArchetype(Humanoid(sk));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "skeleton.names");
  EXPECT_NE(e.error().message.find("hips"), std::string::npos);
  // Explicit parts: an unknown bone, a parent that is not an earlier part, a leaf without length.
  CharacterSettings s;
  s.skeleton = Godette(VrmNames());
  s.parts = {{.bone = "hips", .to = "chest"}, {.bone = "Tail", .to = "chest"}};
  e = w->BuildCharacterArchetype(s);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "parts[1].bone");
  EXPECT_NE(e.error().message.find("'Tail'"), std::string::npos);
  s.parts = {{.bone = "hips", .to = "chest"}, {.bone = "head", .parent = "leftUpperArm", .length = 0.2f}};
  e = w->BuildCharacterArchetype(s);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "parts[1].parent");
  s.parts = {{.bone = "hips", .to = "chest"}, {.bone = "head"}};
  e = w->BuildCharacterArchetype(s);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().field, "parts[1].length");
  s.parts = {{.bone = "hips", .to = "chest", .radius = -1}};
  EXPECT_EQ(w->BuildCharacterArchetype(s).error().field, "parts[0].radius");
  // A skeleton whose parent comes after the child, and one with a repeated name.
  SkeletonSettings loop = s.skeleton;
  loop.parents[1] = 5;
  EXPECT_EQ(w->BuildCharacterArchetype(Humanoid(loop)).error().code, ErrorCode::kParentNotBefore);
  SkeletonSettings twice = s.skeleton;
  twice.names[3] = twice.names[2];
  EXPECT_EQ(w->BuildCharacterArchetype(Humanoid(twice)).error().field, "skeleton.names[3]");
  // An explicit list that is valid builds, with its own angles and hinge.
  s.parts = {{.bone = "hips", .to = "chest", .radius = 0.1f},
             {.bone = "leftUpperLeg", .to = "leftLowerLeg", .parent = "hips", .swing_degrees = 25},
             {.bone = "leftLowerLeg", .to = "leftFoot", .hinge = CharacterHinge{{1, 0, 0}, 0, 140}}};
  auto ok = w->BuildCharacterArchetype(s);
  ASSERT_TRUE(ok.ok()) << ok.error().field << ": " << ok.error().message;
  CharacterPartInfo info;
  EXPECT_TRUE(w->GetCharacterPartInfo(ok.value(), 1, &info).ok());
  EXPECT_EQ(info.normal_half_cone_degrees, 25.0f);
  EXPECT_TRUE(w->GetCharacterPartInfo(ok.value(), 2, &info).ok());
  EXPECT_EQ(info.joint, JointType::kHinge);
  EXPECT_EQ(info.hinge_max_degrees, 140.0f);
  EXPECT_EQ(info.parent, 1);
}

// How far the solver turns a body that starts at rest at each frame of a clip (no gravity,
// no motors, no contacts): only a joint limit can turn it. Every part takes its world
// rotation from the clip; the bones between parts keep their rest locals and every bone
// its rest length, so the joints' anchors meet exactly as built (the clip's own
// intermediate bones would move them, which is not what limits are about).
struct Push {
  float degrees = 0;
  int frame = -1;
};
Push LargestLimitPush(const CharacterSettings& settings, const ports::JoltAnimation& clip) {
  WorldSettings ws = LastSubstepOutputs();
  ws.gravity = {};
  auto w = MakeWorld(ws);
  auto built = w->BuildCharacterArchetype(settings);
  EXPECT_TRUE(built.ok()) << built.error().field << ": " << built.error().message;
  if (!built.ok()) return {};
  HostCharacter host(settings.skeleton);
  host.id = w->BindCharacter(host.Binding(built.value())).value();
  const int32_t n = w->CharacterPartCount(built.value());
  std::vector<int32_t> part_bones(n);
  for (int32_t j = 0; j < n; ++j) {
    CharacterPartInfo info;
    EXPECT_TRUE(w->GetCharacterPartInfo(built.value(), j, &info).ok());
    part_bones[j] = info.bone;
  }
  const std::size_t bones = clip.joints.size();
  Push worst;
  for (std::size_t f = 0; f < clip.key_times.size(); ++f) {
    std::vector<Transform> clip_world(bones), world(bones);
    for (std::size_t b = 0; b < bones; ++b) {
      const int32_t parent = settings.skeleton.parents[b];
      clip_world[b] = Compose(parent >= 0 ? clip_world[parent] : Transform{}, clip.keys[f * bones + b]);
    }
    for (std::size_t b = 0; b < bones; ++b) {
      const int32_t parent = settings.skeleton.parents[b];
      Transform local = settings.skeleton.rest_local[b];
      if (parent < 0) local = clip.keys[f * bones + b];
      if (std::find(part_bones.begin(), part_bones.end(), static_cast<int32_t>(b)) != part_bones.end())
        local.rotation = Normalize(Conjugate(parent >= 0 ? world[parent].rotation : Quat{}) * clip_world[b].rotation);
      world[b] = Compose(parent >= 0 ? world[parent] : Transform{}, local);
      host.animated[b] = local;
    }
    w->Step(kStep);
    w->Step(kStep);  // the pose held for two frames: it starts at rest
    const std::vector<Transform> before = host.world;
    EXPECT_TRUE(w->ActivateCharacter(host.id, {.strength = 0.0f, .anchored = false}));
    w->Step(kStep);
    for (int32_t j = 0; j < n; ++j) {
      const Quat d = Normalize(Conjugate(before[part_bones[j]].rotation) * host.world[part_bones[j]].rotation);
      const float degrees = RotationAngle(d) * kRadToDeg;
      if (degrees > worst.degrees) worst = {degrees, static_cast<int>(f)};
    }
    EXPECT_TRUE(w->DeactivateCharacter(host.id).ok());
  }
  return worst;
}

TEST(CharacterBuild, LimitsLearnedFromWalkAndSprintContainEverySampledPose) {
  TENDON_NEED_SHARED_DATA();
  const ports::JoltAnimation neutral = JoltAnim("animations/neutral.json");
  const ports::JoltAnimation walk = JoltAnim("animations/walk.json");
  const ports::JoltAnimation sprint = JoltAnim("animations/sprint.json");
  CharacterSettings s = Humanoid(ports::JoltSkeleton(neutral));
  s.joint_friction_per_kg = 0;
  // The default table is too tight for a sprint somewhere: the solver pushes that pose.
  EXPECT_GT(LargestLimitPush(s, sprint).degrees, 2.0f) << "the table should clip some sprint pose";
  s.limit_source = LimitSource::kClips;
  s.limit_clips = {ports::JoltClip(walk), ports::JoltClip(sprint)};
  for (const ports::JoltAnimation* clip : {&walk, &sprint}) {
    const Push p = LargestLimitPush(s, *clip);
    EXPECT_LT(p.degrees, 0.2f) << clip->name << " frame " << p.frame << " was pushed by a learned limit";
  }
  // Margins widen the learned ranges symmetrically.
  auto w = MakeWorld();
  s.limits_margin_degrees = 0;
  const CharacterArchetypeId tight = w->BuildCharacterArchetype(s).value();
  s.limits_margin_degrees = 10;
  const CharacterArchetypeId loose = w->BuildCharacterArchetype(s).value();
  for (int32_t j = 1; j < w->CharacterPartCount(tight); ++j) {
    CharacterPartInfo a, b;
    EXPECT_TRUE(w->GetCharacterPartInfo(tight, j, &a).ok());
    EXPECT_TRUE(w->GetCharacterPartInfo(loose, j, &b).ok());
    if (a.joint == JointType::kHinge) {
      EXPECT_NEAR(b.hinge_max_degrees - a.hinge_max_degrees, 10.0f, 1e-3f) << a.name;
      EXPECT_NEAR(a.hinge_min_degrees - b.hinge_min_degrees, 10.0f, 1e-3f) << a.name;
    } else {
      EXPECT_NEAR(b.twist_max_degrees - a.twist_max_degrees, 10.0f, 1e-3f) << a.name;
      EXPECT_LE(a.normal_half_cone_degrees + 9.999f, b.normal_half_cone_degrees) << a.name;
    }
  }
  s.limit_clips[0].local.pop_back();
  EXPECT_EQ(w->BuildCharacterArchetype(s).error().field, "limit_clips[0].local");
  s.limit_clips.clear();
  EXPECT_EQ(w->BuildCharacterArchetype(s).error().field, "limit_clips");
}

TEST(CharacterBuild, TheHdJogSkeletonMapsOntoThe23JoltPartsAndLearnsItsLimits) {
  TENDON_NEED_SHARED_DATA();
  const ports::JoltAnimation neutral_hd = JoltAnim("hd/animations/neutral_hd.json");
  const ports::JoltAnimation jog = JoltAnim("hd/animations/jog_hd.json");
  auto ragdoll = ports::LoadJoltHumanRagdoll(SharedData("jolt-human/ragdoll.json"));
  ASSERT_TRUE(ragdoll.ok());
  CharacterSettings s;
  s.skeleton = ports::JoltSkeleton(neutral_hd);
  ASSERT_EQ(s.skeleton.names.size(), 71u);
  s.ragdoll = ragdoll.value();
  s.limit_source = LimitSource::kClips;
  s.limit_clips = {ports::JoltClip(jog)};
  auto w = MakeWorld();
  auto built = w->BuildCharacterArchetype(s);
  ASSERT_TRUE(built.ok()) << built.error().field << ": " << built.error().message;
  EXPECT_EQ(w->CharacterPartCount(built.value()), 23);
  const Push p = LargestLimitPush(s, jog);
  EXPECT_LT(p.degrees, 0.2f) << "jog frame " << p.frame;
  // A part whose pose is not its bone's rest frame is refused by name.
  s.ragdoll.parts[5].pose.translation.y += 0.1f;
  auto bad = w->BuildCharacterArchetype(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "ragdoll.parts[5].pose");
}

}  // namespace
}  // namespace tendon::test
