// The avatar a host can skin (ports/gltf/vrm_avatar.h): pose streams at bind indexed by the
// avatar's bones, output_world holding the simulated hair after Step, the skeleton and skins
// a host maps its bones with, hand-built assets checked before anything reads them, and
// kinds that leave nothing behind in the World (refused, dropped or released).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "character_test_util.h"
#include "ports/gltf/vrm_avatar.h"
#include "test_util.h"

namespace tendon::test {
namespace {

using ports::VrmAvatar;
using ports::VrmAvatarArchetype;
using ports::VrmAvatarBinding;

constexpr float kDt = 1.0f / 60.0f;

std::string GodettePath() { return SharedData("vrm/godette/Godette_vrm_v4.vrm"); }

// Row-major 3x4 of translation * rotation * diag(scale).
std::array<float, 12> MatrixOf(const Transform& t) {
  const Quat& q = t.rotation;
  const Vec3& s = t.scale;
  return {(1 - 2 * (q.y * q.y + q.z * q.z)) * s.x, 2 * (q.x * q.y - q.w * q.z) * s.y, 2 * (q.x * q.z + q.w * q.y) * s.z,
          t.translation.x, 2 * (q.x * q.y + q.w * q.z) * s.x, (1 - 2 * (q.x * q.x + q.z * q.z)) * s.y,
          2 * (q.y * q.z - q.w * q.x) * s.z, t.translation.y, 2 * (q.x * q.z - q.w * q.y) * s.x,
          2 * (q.y * q.z + q.w * q.x) * s.y, (1 - 2 * (q.x * q.x + q.y * q.y)) * s.z, t.translation.z};
}

// model (row-major 3x4) * inverse_bind (column-major 4x4), as a column-major 4x4.
std::array<float, 16> Palette(const std::array<float, 12>& m, const float* ib) {
  std::array<float, 16> out{};
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 3; ++r)
      out[c * 4 + r] = m[r * 4] * ib[c * 4] + m[r * 4 + 1] * ib[c * 4 + 1] + m[r * 4 + 2] * ib[c * 4 + 2] +
                       (c == 3 ? m[r * 4 + 3] : 0.0f);
    out[c * 4 + 3] = c == 3 ? 1.0f : 0.0f;
  }
  return out;
}

// Every bone's world frame from a pose of locals, under the model frame.
std::vector<Transform> Forward(const VrmAvatarArchetype& kind, const Transform& model, const std::vector<Transform>& local) {
  std::vector<Transform> world(local.size());
  for (std::size_t b = 0; b < local.size(); ++b) {
    const int32_t p = kind.skeleton().parents[b];
    world[b] = Compose(p >= 0 ? world[p] : model, local[b]);
  }
  return world;
}

// The bones the chains simulate (not virtual tips).
std::vector<int32_t> SimulatedBones(const VrmAvatarArchetype& kind) {
  std::vector<int32_t> out;
  for (const ports::VrmChain& chain : kind.chains())
    for (std::size_t k = 0; k < chain.bone_map.size(); ++k)
      if (chain.bone_map[k] >= 0 && chain.settings.bones[k].parent >= 0) out.push_back(chain.bone_map[k]);
  return out;
}

// Walks the avatar sideways for `frames` frames (the hair trails behind).
void Walk(World& world, VrmAvatar& avatar, int frames) {
  for (int f = 0; f < frames; ++f) {
    avatar.model_world.translation.x += 0.03f;
    if (avatar.character.generation == 0) avatar.UpdateWorld();
    world.Step(kDt);
  }
}

// The hair joint whose simulated world position is furthest from its animated one.
int32_t MostMovedHairBone(const VrmAvatar& avatar, float* moved) {
  const std::vector<Transform> animated = Forward(avatar.kind(), avatar.model_world, avatar.animated_local);
  int32_t best = -1;
  *moved = 0.0f;
  for (int32_t bone : SimulatedBones(avatar.kind())) {
    const float d = Length(avatar.output_world[bone].translation - animated[bone].translation);
    if (d > *moved) {
      *moved = d;
      best = bone;
    }
  }
  return best;
}

void ExpectNear(const Transform& a, const Transform& b, float tolerance, const std::string& what) {
  EXPECT_LT(Length(a.translation - b.translation), tolerance) << what;
  EXPECT_GT(std::fabs(Dot(a.rotation, b.rotation)), 1.0f - tolerance) << what;
}

// ---- output_world holds the simulated pose ----

TEST(VrmAvatarOutputs, OutputWorldOfMovedHairIsTheForwardKinematicsOfOutputLocalNotTheAnimatedPose) {
  TENDON_NEED_SHARED_DATA();
  for (const bool character : {true, false}) {
    SCOPED_TRACE(character ? "with a character" : "without a character");
    auto world = MakeWorld();
    auto kind = VrmAvatarArchetype::Load(*world, GodettePath(), {.character = character});
    ASSERT_TRUE(kind.ok()) << kind.error().message;
    auto avatar = VrmAvatar::Bind(*world, kind.value(), Transform{}).value();
    Walk(*world, *avatar, 20);
    float moved = 0.0f;
    const int32_t hair = MostMovedHairBone(*avatar, &moved);
    ASSERT_GE(hair, 0);
    // The hair trails: 20 frames at 1.8 m/s swing it centimetres off its animated place.
    EXPECT_GT(moved, 0.005f) << "output_world still holds the animated hair";
    const std::vector<Transform> fk = Forward(*kind.value(), avatar->model_world, avatar->output_local);
    for (std::size_t b = 0; b < fk.size(); ++b)
      ExpectNear(avatar->output_world[b], fk[b], 1e-4f, "bone " + std::to_string(b) + " " + kind.value()->skeleton().names[b]);
  }
}

// A host pose whose rotations are off unit (an unnormalised blend: each 0.6 long) is read
// as the rotations it points at, by the character, UpdateWorld and the chains alike: every
// output_world rotation is unit and output_world is still output_local composed (a raw
// compose would shrink each bone below by 0.36 where the hair's roots do not).
TEST(VrmAvatarOutputs, AHostPoseWithRotationsOffUnitGivesRigidOutputsThatAgree) {
  TENDON_NEED_SHARED_DATA();
  for (const bool character : {true, false}) {
    SCOPED_TRACE(character ? "with a character" : "without a character");
    auto world = MakeWorld();
    auto kind = VrmAvatarArchetype::Load(*world, GodettePath(), {.character = character});
    ASSERT_TRUE(kind.ok()) << kind.error().message;
    auto avatar = VrmAvatar::Bind(*world, kind.value(), Transform{}).value();
    for (Transform& t : avatar->animated_local)
      t.rotation = Quat{t.rotation.x * 0.6f, t.rotation.y * 0.6f, t.rotation.z * 0.6f, t.rotation.w * 0.6f};
    Walk(*world, *avatar, 10);
    const std::vector<Transform> fk = Forward(*kind.value(), avatar->model_world, avatar->output_local);
    for (std::size_t b = 0; b < fk.size(); ++b) {
      const std::string bone = "bone " + std::to_string(b) + " " + kind.value()->skeleton().names[b];
      EXPECT_NEAR(Dot(avatar->output_world[b].rotation, avatar->output_world[b].rotation), 1.0f, 1e-4f) << bone;
      ExpectNear(avatar->output_world[b], fk[b], 1e-4f, bone);
    }
  }
}

// The kernel's side: a chain bound with output_world writes every bone's world frame (its
// root frame composed with the locals it wrote: on a frame of bad input, the last good root
// frame it stepped under), and a buffer too small for its bones is refused by name.
TEST(VrmAvatarOutputs, AChainsOutputWorldIsItsRootFrameComposedWithTheLocalsItWrote) {
  auto world = MakeWorld();
  const ChainArchetypeSettings strand = Strand(4);
  const ChainArchetypeId archetype = world->BuildChainArchetype(strand).value();
  HostChain host(strand, Vec3{0, 1.5f, 0});
  std::vector<Transform> world_frames(4, Transform{{9, 9, 9}, {}, {1, 1, 1}});
  ChainBinding b = host.Binding(archetype);
  b.output_world = std::span<Transform>(world_frames.data(), 3);
  auto refused = world->BindChain(b);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "output_world");
  b.output_world = world_frames;
  ASSERT_TRUE(world->BindChain(b).ok());
  for (int f = 0; f < 30; ++f) {
    host.root_parent.translation.z += 0.02f;
    if (f == 20) host.animated[2].translation.x = std::nanf("");  // bad input: held at the last good pose
    if (f == 21) host.animated[2].translation.x = 0.1f;
    world->Step(kDt);
    // On the frame of bad input the chain steps under its last good input, the root frame
    // included (the previous frame's), and output_world is composed on that same frame.
    Transform parent = host.root_parent;
    if (f == 20) parent.translation.z -= 0.02f;
    for (int k = 0; k < 4; ++k) {
      parent = Compose(parent, host.output[k]);
      ExpectNear(world_frames[k], parent, 1e-5f, "frame " + std::to_string(f) + " bone " + std::to_string(k));
      // Composed in lanes, with Compose's bits (the held frame's root is only near: z - 0.02).
      if (f != 20) {
        EXPECT_EQ(std::memcmp(&world_frames[k], &parent, sizeof(Transform)), 0) << "frame " << f << " bone " << k;
      }
    }
  }
  // The tail swung off the straight line it would hang on unsimulated.
  EXPECT_GT(std::fabs(world_frames[3].translation.z - host.root_parent.translation.z), 1e-3f);
}

// ---- pose streams at bind ----

// A skin's palette, as a GPU reads it: slot j is the model matrix of the skin's joint j (the
// simulated pose for a hair joint that moved) times its inverse bind.
TEST(VrmAvatarStreams, ASkinsPaletteIsTheSimulatedModelMatrixTimesTheInverseBindForAMovedHairJoint) {
  TENDON_NEED_SHARED_DATA();
  for (const bool character : {true, false}) {
    SCOPED_TRACE(character ? "with a character" : "without a character");
    auto world = MakeWorld();
    auto loaded = VrmAvatarArchetype::Load(*world, GodettePath(), {.character = character});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const auto kind = loaded.value();
    // The skin with the most hair joints in it.
    const std::vector<int32_t> hair = SimulatedBones(*kind);
    int32_t skin = -1, best = 0;
    for (std::size_t s = 0; s < kind->skins().size(); ++s) {
      int32_t n = 0;
      for (int32_t j : kind->skins()[s].joints) n += std::count(hair.begin(), hair.end(), j) > 0 ? 1 : 0;
      if (n > best) {
        best = n;
        skin = static_cast<int32_t>(s);
      }
    }
    ASSERT_GE(skin, 0) << "no skin holds a hair joint";
    const ports::GltfSkin& s = kind->skins()[skin];
    const ports::VrmAvatarPalette map = ports::PaletteOfSkin(*kind, skin);
    std::vector<std::array<float, 16>> palette(s.joints.size());
    std::vector<float> locals(7 * kind->bone_count(), -1.0f);  // a packed TRS stream, no scale
    PoseStream streams[2];
    streams[0].layout = PoseLayout::kSkinningMatrix;
    streams[0].base = palette.data();
    streams[0].element_count = static_cast<int32_t>(palette.size());
    streams[0].element_of_bone = map.element_of_bone;
    streams[0].inverse_bind = map.inverse_bind;
    streams[1].base = locals.data();
    streams[1].element_count = kind->bone_count();
    VrmAvatarBinding binding;
    binding.pose_streams = streams;
    auto bound = VrmAvatar::Bind(*world, kind, binding);
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    VrmAvatar& avatar = *bound.value();
    Walk(*world, avatar, 20);
    float moved = 0.0f;
    int32_t moved_joint = -1;
    const std::vector<Transform> animated = Forward(*kind, avatar.model_world, avatar.animated_local);
    for (std::size_t j = 0; j < s.joints.size(); ++j) {
      const int32_t bone = s.joints[j];
      // Model space: the avatar's model frame is the palette's (the stream's model_world was null).
      const Transform in_model = Relative(avatar.model_world, avatar.output_world[bone]);
      const std::array<float, 16> want = Palette(MatrixOf(in_model), s.inverse_bind[j].data());
      for (int v = 0; v < 16; ++v)
        ASSERT_NEAR(palette[j][v], want[v], 2e-4f) << "joint " << j << " (bone " << bone << ") entry " << v;
      const float d = Length(avatar.output_world[bone].translation - animated[bone].translation);
      if (std::count(hair.begin(), hair.end(), bone) > 0 && d > moved) {
        moved = d;
        moved_joint = static_cast<int32_t>(j);
      }
    }
    ASSERT_GE(moved_joint, 0);
    EXPECT_GT(moved, 0.005f) << "the palette's hair joints did not move";
    // The local TRS stream holds output_local, the simulated locals, bone by bone.
    for (int32_t b = 0; b < kind->bone_count(); ++b) {
      const Transform& t = avatar.output_local[b];
      const float* e = locals.data() + 7 * b;
      EXPECT_NEAR(e[0], t.translation.x, 1e-6f) << b;
      EXPECT_NEAR(e[3], t.rotation.x, 1e-6f) << b;
      EXPECT_NEAR(e[6], t.rotation.w, 1e-6f) << b;
    }
  }
}

TEST(VrmAvatarStreams, AStreamWhosePerBoneArraysDoNotFitTheSkeletonIsRefusedNamingIt) {
  TENDON_NEED_SHARED_DATA();
  auto world = MakeWorld();
  auto kind = VrmAvatarArchetype::Load(*world, GodettePath()).value();
  std::vector<float> palette(16 * 4);
  const std::vector<int32_t> short_map(3, 0);
  PoseStream stream;
  stream.layout = PoseLayout::kModelMatrix;
  stream.base = palette.data();
  stream.element_count = 4;
  stream.element_of_bone = short_map;
  auto refused = VrmAvatar::Bind(*world, kind, VrmAvatarBinding{{}, {&stream, 1}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "pose_streams[0].element_of_bone");
  // Two bones into one element: a chain and the character would write one slot twice.
  std::vector<int32_t> twice(kind->bone_count(), -1);
  twice[0] = twice[1] = 2;
  stream.element_of_bone = twice;
  refused = VrmAvatar::Bind(*world, kind, VrmAvatarBinding{{}, {&stream, 1}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("both go to element 2"), std::string::npos) << refused.error().message;
  // A palette without its inverse binds.
  std::vector<int32_t> one(kind->bone_count(), -1);
  one[0] = 0;
  stream.element_of_bone = one;
  stream.layout = PoseLayout::kSkinningMatrix;
  refused = VrmAvatar::Bind(*world, kind, VrmAvatarBinding{{}, {&stream, 1}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "pose_streams[0].inverse_bind");
  // Five streams: at most 4.
  const PoseStream five[5] = {};
  refused = VrmAvatar::Bind(*world, kind, VrmAvatarBinding{{}, five});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kCapacity);
}

// ---- the skeleton and skins ----

TEST(VrmAvatarSkeleton, TheKindOffersItsBonesNamesParentsRestPoseAndSkinsAsTheFileHasThem) {
  TENDON_NEED_SHARED_DATA();
  auto asset = ports::ImportGltf(GodettePath());
  ASSERT_TRUE(asset.ok());
  auto world = MakeWorld();
  auto kind = VrmAvatarArchetype::Build(*world, asset.value()).value();
  ASSERT_EQ(kind->bone_count(), static_cast<int32_t>(asset.value().skeleton.parents.size()));
  EXPECT_EQ(kind->skeleton().names, asset.value().skeleton.names);
  EXPECT_EQ(kind->skeleton().parents, asset.value().skeleton.parents);
  ASSERT_EQ(kind->bone_name_pointers().size(), asset.value().skeleton.names.size());
  for (std::size_t b = 0; b < asset.value().skeleton.names.size(); ++b)
    EXPECT_STREQ(kind->bone_name_pointers()[b], asset.value().skeleton.names[b].c_str());
  ASSERT_FALSE(kind->skins().empty());
  ASSERT_EQ(kind->skins().size(), asset.value().skins.size());
  EXPECT_EQ(kind->skins()[0].joints, asset.value().skins[0].joints);
  // The palette map puts each joint at its slot and every other bone nowhere.
  const ports::VrmAvatarPalette map = ports::PaletteOfSkin(*kind, 0);
  for (std::size_t j = 0; j < kind->skins()[0].joints.size(); ++j)
    EXPECT_EQ(map.element_of_bone[kind->skins()[0].joints[j]], static_cast<int32_t>(j));
  EXPECT_TRUE(ports::PaletteOfSkin(*kind, 99).element_of_bone.empty());
}

// ---- hand-built assets (hostile finding 1) ----

ports::GltfAsset Hanging() {
  ports::GltfAsset asset;
  asset.name = "hand-built.vrm";
  asset.skeleton.names = {"root", "head", "hair", "tip"};
  asset.skeleton.parents = {-1, 0, 1, 2};
  asset.skeleton.rest_local = {Transform{}, Transform{{0, 1.6f, 0}, {}, {1, 1, 1}},
                               Transform{{0, -0.05f, 0}, {}, {1, 1, 1}}, Transform{{0, -0.1f, 0}, {}, {1, 1, 1}}};
  ports::VrmSpring spring;
  spring.joints.push_back(ports::VrmJoint{.bone = 2, .tail_bone = 3});
  asset.spring_bones.springs.push_back(spring);
  asset.spring_bones.colliders.push_back(ports::VrmCollider{.bone = 1, .radius = 0.1f});
  asset.skins.push_back(ports::GltfSkin{"skin", {1, 2, 3}, std::vector<std::array<float, 16>>(3)});
  for (auto& m : asset.skins[0].inverse_bind) m = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  return asset;
}

TEST(VrmAvatarArchetypeChecks, AHandBuiltAssetThatIsWellFormedBuildsAndSteps) {
  auto world = MakeWorld();
  auto kind = VrmAvatarArchetype::Build(*world, Hanging(), {.character = false});
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  auto avatar = VrmAvatar::Bind(*world, kind.value(), Transform{}).value();
  Walk(*world, *avatar, 5);
  for (const Transform& t : avatar->output_world) EXPECT_TRUE(IsFinite(t));
}

// A NaN the host writes into animated_local (or model_world) never reaches output_world:
// UpdateWorld holds the bone's last good frame and counts it, and the Step after it keeps
// every output finite.
TEST(VrmAvatarArchetypeChecks, UpdateWorldHoldsABoneWhoseHostPoseIsNotFiniteAndCountsIt) {
  auto world = MakeWorld();
  auto kind = VrmAvatarArchetype::Build(*world, Hanging(), {.character = false});
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  auto avatar = VrmAvatar::Bind(*world, kind.value(), Transform{}).value();
  Walk(*world, *avatar, 3);
  const Transform head_before = avatar->output_world[1];
  EXPECT_EQ(avatar->held_bad_input(), 0);
  avatar->animated_local[1].rotation.x = std::nanf("");
  avatar->UpdateWorld();
  EXPECT_GE(avatar->held_bad_input(), 1);
  ExpectNear(avatar->output_world[1], head_before, 1e-6f, "the head keeps its last good frame");
  (void)world->Step(1.0f / 60.0f);
  for (const Transform& t : avatar->output_world) EXPECT_TRUE(IsFinite(t));
  for (const Transform& t : avatar->output_local) EXPECT_TRUE(IsFinite(t));
  avatar->model_world.translation.y = std::numeric_limits<float>::infinity();
  avatar->animated_local[1] = Hanging().skeleton.rest_local[1];
  avatar->UpdateWorld();
  (void)world->Step(1.0f / 60.0f);
  for (const Transform& t : avatar->output_world) EXPECT_TRUE(IsFinite(t));
}

// A host rotation that is not unit (a blend that was not renormalised) is used as the
// rotation it points at, as the kernel reads the frames a chain hangs from: so output_world
// stays a rigid frame and a chain root's output_world is its output_local composed on it.
TEST(VrmAvatarArchetypeChecks, UpdateWorldNormalisesAHostRotationThatIsNotUnit) {
  auto world = MakeWorld();
  auto kind = VrmAvatarArchetype::Build(*world, Hanging(), {.character = false});
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  auto avatar = VrmAvatar::Bind(*world, kind.value(), Transform{}).value();
  const float s = std::sqrt(0.5f) * 0.7f;  // a 90 degree turn about z, 0.7 long
  avatar->animated_local[1].rotation = Quat{0, 0, s, s};
  avatar->UpdateWorld();
  EXPECT_NEAR(Dot(avatar->output_world[1].rotation, avatar->output_world[1].rotation), 1.0f, 1e-5f);
  EXPECT_EQ(avatar->held_bad_input(), 0);
  (void)world->Step(1.0f / 60.0f);
  const Transform composed = Compose(avatar->output_world[1], avatar->output_local[2]);
  EXPECT_LT(Length(composed.translation - avatar->output_world[2].translation), 1e-4f);
}

// Each malformed skeleton or index is refused by Build, naming the field and index, before
// anything reads it (these read and wrote past buffers in Bind, UpdateWorld and VrmChains).
TEST(VrmAvatarArchetypeChecks, EveryMalformedSkeletonOrBoneIndexIsRefusedNamingTheFieldAndIndex) {
  struct Case {
    const char* what;
    void (*spoil)(ports::GltfAsset&);
    const char* field;
    ErrorCode code;
  };
  const Case cases[] = {
      {"parents longer than rest_local", [](ports::GltfAsset& a) { a.skeleton.parents.push_back(3); },
       "skeleton.rest_local", ErrorCode::kBadReference},
      {"names shorter than parents", [](ports::GltfAsset& a) { a.skeleton.names.pop_back(); }, "skeleton.names",
       ErrorCode::kBadReference},
      {"a parent after its bone", [](ports::GltfAsset& a) { a.skeleton.parents[1] = 2; }, "skeleton.parents[1]",
       ErrorCode::kParentNotBefore},
      {"a parent that is its own bone", [](ports::GltfAsset& a) { a.skeleton.parents[2] = 2; }, "skeleton.parents[2]",
       ErrorCode::kParentNotBefore},
      {"a parent outside the skeleton", [](ports::GltfAsset& a) { a.skeleton.parents[3] = -7; }, "skeleton.parents[3]",
       ErrorCode::kParentOutOfRange},
      {"a rest pose that is not finite",
       [](ports::GltfAsset& a) { a.skeleton.rest_local[2].translation.y = std::nanf(""); }, "skeleton.rest_local[2]",
       ErrorCode::kNotFinite},
      {"a rest rotation that is not unit", [](ports::GltfAsset& a) { a.skeleton.rest_local[1].rotation = {0, 0, 0, 2}; },
       "skeleton.rest_local[1].rotation", ErrorCode::kNotUnitRotation},
      {"a joint's bone outside the skeleton", [](ports::GltfAsset& a) { a.spring_bones.springs[0].joints[0].bone = 4; },
       "spring_bones.springs[0].joints[0].bone", ErrorCode::kBadReference},
      {"a joint's tail outside the skeleton",
       [](ports::GltfAsset& a) { a.spring_bones.springs[0].joints[0].tail_bone = 40; },
       "spring_bones.springs[0].joints[0].tail_bone", ErrorCode::kBadReference},
      {"a collider's bone outside the skeleton", [](ports::GltfAsset& a) { a.spring_bones.colliders[0].bone = -1; },
       "spring_bones.colliders[0].bone", ErrorCode::kBadReference},
      {"a spring's center outside the skeleton", [](ports::GltfAsset& a) { a.spring_bones.springs[0].center = 9; },
       "spring_bones.springs[0].center", ErrorCode::kBadReference},
      {"a skin joint outside the skeleton", [](ports::GltfAsset& a) { a.skins[0].joints[2] = 4; },
       "skins[0].joints[2]", ErrorCode::kBadReference},
      {"a skin with fewer inverse binds than joints", [](ports::GltfAsset& a) { a.skins[0].inverse_bind.pop_back(); },
       "skins[0].inverse_bind", ErrorCode::kBadReference},
      {"a humanoid bone outside the skeleton", [](ports::GltfAsset& a) { a.humanoid.emplace_back("head", 12); },
       "humanoid[0]", ErrorCode::kBadReference},
      {"rest poses each finite that overflow when composed (scale 1e3 over scale 1e3)",
       [](ports::GltfAsset& a) {
         a.skeleton.rest_local[1].scale = {1e3f, 1e3f, 1e3f};
         a.skeleton.rest_local[2].scale = {1e3f, 1e3f, 1e3f};
       },
       "skeleton.rest_local[2]", ErrorCode::kOutOfRange},
      {"a bone simulated by two springs",
       [](ports::GltfAsset& a) {
         ports::VrmSpring again;
         again.joints.push_back(ports::VrmJoint{.bone = 2, .tail_bone = 3});
         a.spring_bones.springs.push_back(again);
       },
       "spring_bones.springs[1].joints[0].bone", ErrorCode::kBadReference},
      {"a clip channel on no bone",
       [](ports::GltfAsset& a) {
         a.clips.push_back(ports::GltfClip{"idle", 1.0f, {ports::GltfChannel{.bone = 5, .times = {0}, .values = {0, 0, 0}}}});
       },
       "clips[0].channels[0].bone", ErrorCode::kBadReference},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto world = MakeWorld();
    ports::GltfAsset asset = Hanging();
    c.spoil(asset);
    auto refused = VrmAvatarArchetype::Build(*world, asset, {.character = false});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().field, c.field);
    EXPECT_EQ(refused.error().code, c.code) << refused.error().message;
    EXPECT_NE(refused.error().message.find("hand-built.vrm"), std::string::npos) << refused.error().message;
    // VrmChains, public too, refuses the same.
    EXPECT_FALSE(ports::VrmChains(asset).ok());
  }
}

// ---- kinds leave nothing behind (hostile finding 6) ----

// Live chain archetypes of a World, counted through its public query (ChainBoneCount is 0
// for a removed, stale or never-built id): every index and generation below 64.
int32_t LiveChainArchetypes(const World& world) {
  int32_t live = 0;
  for (uint32_t i = 0; i < 64; ++i)
    for (uint32_t g = 1; g <= 64; ++g) live += world.ChainBoneCount(ChainArchetypeId{i, g}) > 0 ? 1 : 0;
  return live;
}

TEST(VrmAvatarKinds, RefusedLoadsLeaveNoArchetypesInTheWorld) {
  TENDON_NEED_SHARED_DATA();
  auto world = MakeWorld();
  auto asset = ports::ImportGltf(GodettePath());
  ASSERT_TRUE(asset.ok());
  ASSERT_TRUE(asset.value().clips.empty()) << "this test refuses Godette for having no clips";
  ASSERT_FALSE(asset.value().spring_bones.springs.empty());
  for (int i = 0; i < 20; ++i) {
    // The chains are built first; the character is then refused (no clips to learn from).
    auto refused = VrmAvatarArchetype::Build(*world, asset.value(), {.limit_source = LimitSource::kClips});
    ASSERT_FALSE(refused.ok());
    ASSERT_EQ(refused.error().field, "animations");
  }
  EXPECT_EQ(LiveChainArchetypes(*world), 0);
  // A well-formed kind still builds afterwards, and its archetypes are the only ones.
  auto kind = VrmAvatarArchetype::Build(*world, asset.value());
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  EXPECT_EQ(LiveChainArchetypes(*world), static_cast<int32_t>(kind.value()->chains().size()));
}

TEST(VrmAvatarKinds, ADroppedKindRemovesItsArchetypesOnceItsAvatarsAreGoneAndTheNextReusesTheirSlots) {
  TENDON_NEED_SHARED_DATA();
  auto world = MakeWorld();
  auto asset = ports::ImportGltf(GodettePath());
  ASSERT_TRUE(asset.ok());
  ChainArchetypeId first_chain{};
  CharacterArchetypeId first_character{};
  for (int cycle = 0; cycle < 50; ++cycle) {
    auto kind = VrmAvatarArchetype::Build(*world, asset.value()).value();
    const CharacterArchetypeId character = kind->character();
    const ChainArchetypeId chain = kind->chain_archetypes()[0];
    if (cycle == 0) {
      first_chain = chain;
      first_character = character;
    }
    // The World builds each kind into the slots the last one gave back, under a newer id.
    EXPECT_EQ(chain.index, first_chain.index) << "cycle " << cycle;
    EXPECT_EQ(character.index, first_character.index) << "cycle " << cycle;
    EXPECT_EQ(chain.generation, first_chain.generation + static_cast<uint32_t>(cycle)) << "cycle " << cycle;
    auto avatar = VrmAvatar::Bind(*world, kind, Transform{}).value();
    // Ragdolled: its ragdoll's lanes live in the group the reused ragdoll slot made again.
    ASSERT_TRUE(world->ActivateCharacter(avatar->character));
    for (int f = 0; f < 3; ++f) world->Step(kDt);
    for (const Transform& t : avatar->output_world) ASSERT_TRUE(IsFinite(t)) << "cycle " << cycle;
    kind.reset();  // the avatar still holds it: nothing is removed under a bound avatar
    ASSERT_GT(world->ChainBoneCount(chain), 0);
    ASSERT_GE(world->FindCharacterPart(character, "Hips"), 0);
    avatar.reset();  // unbinds, then drops the last hold on the kind
    ASSERT_EQ(world->ChainBoneCount(chain), 0) << "cycle " << cycle;
    ASSERT_LT(world->FindCharacterPart(character, "Hips"), 0) << "cycle " << cycle;
  }
  EXPECT_EQ(LiveChainArchetypes(*world), 0);
  EXPECT_EQ(world->ChainBoneCount(first_chain), 0) << "an old id stays stale in a reused slot";
}

TEST(VrmAvatarKinds, ReleaseRemovesTheArchetypesNowAndIsRefusedMidFrame) {
  TENDON_NEED_SHARED_DATA();
  auto world = MakeWorld();
  auto kind = VrmAvatarArchetype::Load(*world, GodettePath()).value();
  const ChainArchetypeId chain = kind->chain_archetypes()[0];
  ASSERT_TRUE(world->BeginStep(kDt));
  EXPECT_EQ(kind->Release().code, ErrorCode::kReentrant);
  world->FinishStep();
  EXPECT_EQ(kind->Release().code, ErrorCode::kNone);
  EXPECT_EQ(world->ChainBoneCount(chain), 0);
  EXPECT_EQ(kind->Release().code, ErrorCode::kNone);  // idempotent
}

}  // namespace
}  // namespace tendon::test
