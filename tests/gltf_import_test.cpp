// The glTF / VRM importer (issue 12): every shared model imports with what its file holds;
// clips sample as glTF's three interpolations say; every class of malformed file is an
// error that names the file, where in it, and why.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "character_test_util.h"
#include "ports/gltf/gltf_import.h"
#include "ports/gltf/vrm_avatar.h"
#include "test_util.h"

namespace tendon::test {
namespace {

using ports::GltfAsset;
using ports::ImportGltf;

std::string Examples(const std::string& file) { return SharedData("vrm/three-vrm-springbone-examples/" + file); }

// ---- the shared models ----

TEST(GltfImport, GodetteImportsAsVrm0WithTheSkeletonHumanoidAndSprings) {
  TENDON_NEED_SHARED_DATA();
  const std::string path = SharedData("vrm/godette/Godette_vrm_v4.vrm");
  auto imported = ImportGltf(path);
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  const GltfAsset& a = imported.value();
  EXPECT_EQ(a.vrm, ports::VrmVersion::k0x);
  // The skeleton the character suites were built on (the hand-written GLB reader gave the
  // same bones in the same order, checked when this importer replaced it).
  EXPECT_EQ(a.skeleton.names.size(), 71u);
  EXPECT_EQ(a.humanoid.size(), 45u);
  EXPECT_EQ(a.skeleton.parents[0], -1);
  EXPECT_EQ(a.skins.size(), 1u);
  EXPECT_EQ(a.spring_bones.springs.size(), 3u);
  EXPECT_EQ(a.spring_bones.colliders.size(), 4u);
  EXPECT_EQ(a.spring_bones.collider_groups.size(), 2u);
  for (std::size_t p = 0; p < a.skeleton.parents.size(); ++p) EXPECT_LT(a.skeleton.parents[p], static_cast<int32_t>(p));
  // Spring bones: joints under each root, tails and virtual tips, settings in range.
  const ports::VrmSpringBones& sb = a.spring_bones;
  ASSERT_FALSE(sb.springs.empty());
  int joints = 0, tips = 0;
  for (const ports::VrmSpring& s : sb.springs) {
    for (std::size_t j = 0; j < s.joints.size(); ++j) {
      const ports::VrmJoint& jt = s.joints[j];
      ++joints;
      EXPECT_LT(jt.parent, static_cast<int32_t>(j)) << "parents first";
      if (jt.parent >= 0) {
        EXPECT_EQ(a.skeleton.parents[jt.bone], s.joints[jt.parent].bone);
      }
      if (jt.tail_bone < 0) {
        ++tips;
        EXPECT_NEAR(Length(jt.virtual_tip), 0.07f, 1e-6f);
      } else {
        EXPECT_EQ(a.skeleton.parents[jt.tail_bone], jt.bone);
      }
      EXPECT_TRUE(std::isfinite(jt.stiffness) && std::isfinite(jt.drag_force) && jt.hit_radius >= 0);
    }
    for (int32_t g : s.collider_groups) EXPECT_LT(g, static_cast<int32_t>(sb.collider_groups.size()));
  }
  EXPECT_EQ(joints, 16);
  EXPECT_EQ(tips, 8) << "leaves get the 7 cm virtual tip";
  std::printf("Godette: %zu bones, %zu humanoid bones, %zu springs with %d joints (%d virtual tips), %zu colliders in %zu groups, %zu skins\n",
              a.skeleton.names.size(), a.humanoid.size(), sb.springs.size(), joints, tips, sb.colliders.size(),
              sb.collider_groups.size(), a.skins.size());
}

TEST(GltfImport, TheThreeVrmExamplesImportAsVrm1WithTheirColliders) {
  TENDON_NEED_SHARED_DATA();
  struct Case {
    const char* file;
    ports::VrmColliderShape shape;
    bool inside;
    float radius;
  };
  for (const Case& c : {Case{"sphere-collider.gltf", ports::VrmColliderShape::kSphere, false, 0.5f},
                        Case{"inside-collider.gltf", ports::VrmColliderShape::kSphere, true, 1.25f},
                        Case{"plane-collider.gltf", ports::VrmColliderShape::kPlane, false, 0.0f}}) {
    auto imported = ImportGltf(Examples(c.file));
    ASSERT_TRUE(imported.ok()) << imported.error().message;
    const GltfAsset& a = imported.value();
    EXPECT_EQ(a.vrm, ports::VrmVersion::k1) << c.file;
    EXPECT_EQ(a.skeleton.names.size(), 6u) << c.file;
    ASSERT_EQ(a.spring_bones.springs.size(), 1u) << c.file;
    const ports::VrmSpring& s = a.spring_bones.springs[0];
    ASSERT_EQ(s.joints.size(), 4u) << c.file << ": five nodes, the last only a tail";
    for (const ports::VrmJoint& j : s.joints) {
      EXPECT_EQ(j.hit_radius, 0.25f);
      EXPECT_EQ(j.stiffness, 1.0f);
      EXPECT_EQ(j.drag_force, 0.4f);
      EXPECT_EQ(a.skeleton.parents[j.tail_bone], j.bone);
    }
    ASSERT_EQ(a.spring_bones.colliders.size(), 1u);
    const ports::VrmCollider& col = a.spring_bones.colliders[0];
    EXPECT_EQ(col.shape, c.shape) << c.file << ": the extended collider's shape wins";
    EXPECT_EQ(col.inside, c.inside) << c.file;
    if (c.shape == ports::VrmColliderShape::kPlane) {
      EXPECT_EQ(col.normal.z, 1.0f);
    } else {
      EXPECT_EQ(col.radius, c.radius) << c.file;
    }
    ASSERT_EQ(s.collider_groups.size(), 1u);
    EXPECT_EQ(a.spring_bones.collider_groups[0].colliders, std::vector<int32_t>{0});
  }
}

// ---- a glTF written here: a clip with each interpolation, a skin ----

std::string Base64(const std::vector<float>& floats) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(floats.size() * 4, '\0');
  std::memcpy(bytes.data(), floats.data(), bytes.size());
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t b0 = static_cast<uint8_t>(bytes[i]);
    const uint32_t b1 = i + 1 < bytes.size() ? static_cast<uint8_t>(bytes[i + 1]) : 0;
    const uint32_t b2 = i + 2 < bytes.size() ? static_cast<uint8_t>(bytes[i + 2]) : 0;
    const uint32_t v = (b0 << 16) | (b1 << 8) | b2;
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? k[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? k[v & 63] : '=';
  }
  return out;
}

// Two nodes (root, child), one skin, one clip: times [0, 1]; translation LINEAR on the
// child, rotation STEP on the root, scale CUBICSPLINE on the child. `patch` edits the JSON.
std::string TestGltf(const std::string& patch_from = "", const std::string& patch_to = "") {
  const std::vector<float> data = {
      0, 1,                                   // 0: times (8 bytes)
      0, 0, 0, 2, 0, 0,                       // 8: translations (24 bytes)
      0, 0, 0, 1, 0, 0.7071068f, 0, 0.7071068f,  // 32: rotations (32 bytes)
      // 64: cubic scale: per key in-tangent, value, out-tangent (72 bytes)
      0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 3, 3, 3, 0, 0, 0,
      // 136: two inverse bind matrices (128 bytes)
      1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1};
  std::string j = R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
    "nodes": [{"name": "root", "children": [1]}, {"name": "child", "translation": [0, 1, 0]}],
    "skins": [{"joints": [0, 1], "inverseBindMatrices": 4}],
    "buffers": [{"byteLength": 264, "uri": "data:application/octet-stream;base64,)" +
                  Base64(data) + R"("}],
    "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 8}, {"buffer": 0, "byteOffset": 8, "byteLength": 24},
                    {"buffer": 0, "byteOffset": 32, "byteLength": 32}, {"buffer": 0, "byteOffset": 64, "byteLength": 72},
                    {"buffer": 0, "byteOffset": 136, "byteLength": 128}],
    "accessors": [{"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]},
                  {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"},
                  {"bufferView": 2, "componentType": 5126, "count": 2, "type": "VEC4"},
                  {"bufferView": 3, "componentType": 5126, "count": 6, "type": "VEC3"},
                  {"bufferView": 4, "componentType": 5126, "count": 2, "type": "MAT4"}],
    "animations": [{"name": "wave", "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"},
                                                 {"input": 0, "output": 2, "interpolation": "STEP"},
                                                 {"input": 0, "output": 3, "interpolation": "CUBICSPLINE"}],
                    "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}},
                                 {"sampler": 1, "target": {"node": 0, "path": "rotation"}},
                                 {"sampler": 2, "target": {"node": 1, "path": "scale"}}]}]})";
  if (!patch_from.empty()) {
    const std::size_t at = j.find(patch_from);
    EXPECT_NE(at, std::string::npos) << patch_from;
    if (at != std::string::npos) j.replace(at, patch_from.size(), patch_to);
  }
  return j;
}

Result<GltfAsset> Import(const std::string& text) {
  return ImportGltf(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "test.gltf");
}

TEST(GltfImport, ClipsSampleAsStepLinearAndCubicSplineSay) {
  auto imported = Import(TestGltf());
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  const GltfAsset& a = imported.value();
  ASSERT_EQ(a.clips.size(), 1u);
  EXPECT_EQ(a.clips[0].name, "wave");
  EXPECT_EQ(a.clips[0].duration, 1.0f);
  ASSERT_EQ(a.skins.size(), 1u);
  EXPECT_EQ(a.skins[0].joints, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(a.skins[0].inverse_bind[1][13], -1.0f);
  std::vector<Transform> pose = a.skeleton.rest_local;
  ports::SampleClip(a.clips[0], 0.25f, pose);
  EXPECT_NEAR(pose[1].translation.x, 0.5f, 1e-6f);  // linear: a quarter of the way to 2
  EXPECT_EQ(pose[0].rotation.w, 1.0f);               // step: the first key until the second
  // Hermite with zero tangents: 1 + 2 (3u^2 - 2u^3) at u = 0.25.
  EXPECT_NEAR(pose[1].scale.x, 1.0f + 2.0f * (3 * 0.0625f - 2 * 0.015625f), 1e-6f);
  ports::SampleClip(a.clips[0], 5.0f, pose);  // past the end: the last keys
  EXPECT_NEAR(pose[0].rotation.w, 0.7071068f, 1e-6f);
  EXPECT_NEAR(pose[1].translation.x, 2.0f, 1e-6f);
  EXPECT_NEAR(pose[1].scale.y, 3.0f, 1e-6f);
}

// ---- malformed files: an error naming the file, where, and why; never a crash ----

void ExpectError(const std::string& text, const std::string& where, const char* what) {
  auto imported = Import(text);
  ASSERT_FALSE(imported.ok()) << what;
  EXPECT_NE(imported.error().message.find("test.gltf: "), std::string::npos) << imported.error().message;
  EXPECT_NE(imported.error().message.find(where), std::string::npos) << what << ": " << imported.error().message;
}

TEST(GltfImport, EveryMalformedFileClassIsAnErrorThatSaysWhere) {
  auto truncated_json = Import("{\"asset\": ");
  ASSERT_FALSE(truncated_json.ok());
  EXPECT_EQ(truncated_json.error().field, "json");
  EXPECT_EQ(truncated_json.error().message.rfind("test.gltf:1:11: syntax error", 0), 0u) << truncated_json.error().message;
  EXPECT_EQ(truncated_json.error().message.find("json.exception"), std::string::npos) << "nlohmann's raw words";
  ExpectError(std::string("glTF\x02\0\0\0\x10\0\0\0", 12), "glb", "a truncated GLB");
  ExpectError(TestGltf("\"children\": [1]", "\"children\": [7]"), "nodes[0].children[0]", "a child out of range");
  ExpectError(TestGltf("\"translation\": [0, 1, 0]}", "\"translation\": [0, 1, 0], \"children\": [0]}"), "is reached twice",
              "a cycle");
  ExpectError(TestGltf("\"translation\": [0, 1, 0]", "\"translation\": [0, 1e39, 0]"), "nodes[1].translation",
              "a number past float");
  ExpectError(TestGltf("\"count\": 6, \"type\": \"VEC3\"", "\"count\": 600, \"type\": \"VEC3\""), "accessors[3]",
              "an accessor larger than its view");
  ExpectError(TestGltf("\"byteOffset\": 136, \"byteLength\": 128", "\"byteOffset\": 136, \"byteLength\": 128000"),
              "accessors[4]", "a view larger than its buffer");
  ExpectError(TestGltf("\"count\": 6, \"type\": \"VEC3\"", "\"count\": 2000000000, \"type\": \"VEC3\""), "accessors[3]",
              "a huge count");
  ExpectError(TestGltf("\"interpolation\": \"STEP\"", "\"interpolation\": \"SMOOTH\""), "animations[0].samplers[1]",
              "an unknown interpolation");
  ExpectError(TestGltf("\"sampler\": 2,", "\"sampler\": 9,"), "animations[0].channels[2].sampler", "a sampler out of range");
  ExpectError(TestGltf("\"joints\": [0, 1]", "\"joints\": [0, 5]"), "skins[0].joints[1]", "a joint out of range");
  ExpectError(TestGltf("\"asset\": {\"version\": \"2.0\"},",
                       "\"asset\": {\"version\": \"2.0\"}, \"extensions\": {\"VRMC_springBone\": {\"springs\": "
                       "[{\"joints\": [{\"node\": 0}, {\"node\": 9}]}]}},"),
              "extensions.VRMC_springBone.springs[0].joints[1].node", "a spring joint out of range");
  ExpectError(TestGltf("\"asset\": {\"version\": \"2.0\"},",
                       "\"asset\": {\"version\": \"2.0\"}, \"extensions\": {\"VRM\": {\"secondaryAnimation\": "
                       "{\"boneGroups\": [{\"stiffiness\": \"stiff\", \"bones\": [0]}]}}},"),
              "extensions.VRM.secondaryAnimation.boneGroups[0]", "a VRM 0.x setting that is not a number");
  // And a well-formed VRM 0.x spring reads its misspelt stiffness and flips collider z.
  auto vrm0 = Import(TestGltf("\"asset\": {\"version\": \"2.0\"},",
                              "\"asset\": {\"version\": \"2.0\"}, \"extensions\": {\"VRM\": {\"secondaryAnimation\": "
                              "{\"colliderGroups\": [{\"node\": 0, \"colliders\": [{\"offset\": {\"x\": 0, \"y\": 0.1, "
                              "\"z\": 0.2}, \"radius\": 0.05}]}], \"boneGroups\": [{\"stiffiness\": 0.7, \"bones\": [0], "
                              "\"colliderGroups\": [0]}]}}},"));
  ASSERT_TRUE(vrm0.ok()) << vrm0.error().message;
  ASSERT_EQ(vrm0.value().spring_bones.springs.size(), 1u);
  EXPECT_EQ(vrm0.value().spring_bones.springs[0].joints.size(), 2u) << "root and child";
  EXPECT_EQ(vrm0.value().spring_bones.springs[0].joints[0].stiffness, 0.7f);
  EXPECT_EQ(vrm0.value().spring_bones.springs[0].joints[1].tail_bone, -1) << "the leaf gets a virtual tip";
  EXPECT_EQ(vrm0.value().spring_bones.colliders[0].offset.z, -0.2f);
}

TEST(GltfImport, AFileThatCannotBeReadSaysSo) {
  auto missing = ImportGltf("/nonexistent/model.vrm");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  EXPECT_EQ(missing.error().message,
            "/nonexistent/model.vrm: cannot be read: " + std::make_error_code(std::errc::no_such_file_or_directory).message());
}

TEST(GltfImport, AVrmAvatarLoadedFromADirectoryOrAMissingFileIsAnIoError) {
  const std::string dir = "gltf_import_dir.vrm";
  std::filesystem::create_directories(dir);
  auto world = MakeWorld();
  auto from_dir = ports::VrmAvatarArchetype::Load(*world, dir);
  ASSERT_FALSE(from_dir.ok());
  EXPECT_EQ(from_dir.error().code, ErrorCode::kIo);
  EXPECT_NE(from_dir.error().message.find(std::make_error_code(std::errc::is_a_directory).message()), std::string::npos)
      << from_dir.error().message;
  auto missing = ports::VrmAvatarArchetype::Load(*world, "/nonexistent/model.vrm");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// ---- node transforms that are finite alone but not composed (hostile finding 2) ----

TEST(GltfImport, NodeTransformsThatOverflowWhenComposedAreRefusedByNode) {
  struct Case {
    const char* root;
    const char* child;
    const char* field;  // the node refused: the first past the bounds, by index and name
    const char* why;
  };
  for (const Case& c : {
           // The hostile reports: past the bounds at the root already.
           Case{R"("scale": [1e30, 1e30, 1e30])", R"("translation": [1e10, 0, 0])", "nodes[0]", "world scale"},
           Case{R"("translation": [3e38, 0, 0])", R"("translation": [3e38, 0, 0])", "nodes[0]", "world translation"},
           // Each within the bounds alone, past them composed: refused at the child.
           Case{R"("scale": [1000, 1000, 1000])", R"("translation": [1000, 0, 0])", "nodes[1]", "world translation"},
           Case{R"("translation": [90000, 0, 0])", R"("translation": [90000, 0, 0])", "nodes[1]", "world translation"},
           Case{R"("scale": [1000, 1, 1])", R"("scale": [1000, 1, 1])", "nodes[1]", "world scale"}}) {
    const std::string text = std::string(R"({"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}],)") +
                             R"("nodes": [{"name": "root", "children": [1], )" + c.root + R"(}, {"name": "leaf", )" + c.child + "}]}";
    auto r = Import(text);
    ASSERT_FALSE(r.ok()) << c.root << " / " << c.child;
    EXPECT_EQ(r.error().field, c.field) << r.error().message;
    EXPECT_NE(r.error().message.find(std::string(c.field) + (c.field[6] == '0' ? " (\"root\")" : " (\"leaf\")")), std::string::npos)
        << "named: " << r.error().message;
    EXPECT_NE(r.error().message.find(c.why), std::string::npos) << r.error().message;
  }
  // Within the bounds: a model in centimetres under a 0.01 root, 90 km out, imports.
  auto fine = Import(R"({"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}],
    "nodes": [{"name": "root", "children": [1], "scale": [0.01, 0.01, 0.01], "translation": [90000, 0, 0]},
              {"name": "leaf", "translation": [0, 170, 0]}]})");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(fine.value().skeleton.rest_local[1].translation.y, 170.0f);
}

// ---- a VRM 0.x bone under two roots (hostile finding 3) ----

// The GLB's JSON chunk, edited, and the GLB rebuilt around the same BIN chunk.
std::vector<uint8_t> EditGlbJson(const std::vector<uint8_t>& glb, const std::function<void(nlohmann::json&)>& edit) {
  uint32_t json_length = 0;
  std::memcpy(&json_length, glb.data() + 12, 4);
  nlohmann::json doc = nlohmann::json::parse(glb.begin() + 20, glb.begin() + 20 + json_length);
  edit(doc);
  std::string text = doc.dump();
  while (text.size() % 4 != 0) text.push_back(' ');
  std::vector<uint8_t> out(glb.begin(), glb.begin() + 12);
  auto u32 = [&out](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>((v >> (8 * i)) & 0xffu));
  };
  u32(static_cast<uint32_t>(text.size()));
  u32(0x4E4F534Au);
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), glb.begin() + 20 + json_length, glb.end());
  const auto total = static_cast<uint32_t>(out.size());
  std::memcpy(out.data() + 8, &total, 4);
  return out;
}

// Every bone is the bone of at most one joint, across all springs.
void ExpectEachBoneSimulatedOnce(const GltfAsset& a) {
  std::vector<int> joints_on(a.skeleton.names.size(), 0);
  for (const ports::VrmSpring& s : a.spring_bones.springs)
    for (const ports::VrmJoint& j : s.joints) ++joints_on[static_cast<std::size_t>(j.bone)];
  for (std::size_t b = 0; b < joints_on.size(); ++b) EXPECT_LE(joints_on[b], 1) << a.skeleton.names[b];
}

TEST(GltfImport, AVrm0BoneUnderTwoRootsIsSimulatedOnceAndTheAvatarBindsAndSteps) {
  TENDON_NEED_SHARED_DATA();
  std::ifstream in(SharedData("vrm/godette/Godette_vrm_v4.vrm"), std::ios::binary);
  const std::vector<uint8_t> godette((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(godette.size(), 20u);
  // Group 0's first root (node 22, FrontHair_Center_L) again, as a root of a new group and
  // of its own group with its child (23): the bone is under two and three roots.
  const std::vector<uint8_t> twice = EditGlbJson(godette, [](nlohmann::json& doc) {
    nlohmann::json& groups = doc["extensions"]["VRM"]["secondaryAnimation"]["boneGroups"];
    groups[0]["bones"].push_back(23);
    nlohmann::json extra = groups[2];  // other settings: stiffness 4, drag 0.1
    extra["bones"] = {22, 15};
    groups.push_back(extra);
  });
  auto imported = ImportGltf(twice, "godette-twice.vrm");
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  const GltfAsset& a = imported.value();
  ASSERT_EQ(a.spring_bones.springs.size(), 4u);
  ExpectEachBoneSimulatedOnce(a);
  int joints = 0;
  for (const ports::VrmSpring& s : a.spring_bones.springs) joints += static_cast<int>(s.joints.size());
  EXPECT_EQ(joints, 16) << "the same joints as the file without the repeats";
  EXPECT_TRUE(a.spring_bones.springs[3].joints.empty()) << "every bone of the extra group was reached before";
  EXPECT_EQ(a.spring_bones.springs[0].joints[0].stiffness, 2.5f) << "the first group to reach a bone keeps it";
  // It builds, binds (refused before: "bone_map names one buffer element twice") and steps
  // with every output finite.
  auto world = MakeWorld();
  auto kind = ports::VrmAvatarArchetype::Build(*world, a);
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  auto avatar = ports::VrmAvatar::Bind(*world, kind.value(), Transform{});
  ASSERT_TRUE(avatar.ok()) << avatar.error().message;
  for (int f = 0; f < 60; ++f) {
    avatar.value()->model_world.translation.x = 0.3f * std::sin(0.1f * static_cast<float>(f));
    world->Step(1.0f / 60.0f);
  }
  for (const Transform& t : avatar.value()->output_world) EXPECT_TRUE(IsFinite(t));
  for (const Transform& t : avatar.value()->output_local) EXPECT_TRUE(IsFinite(t));
}

TEST(GltfImport, AVrm0RootAboveAnEarlierRootStopsThereWithAVirtualTipWhereItRests) {
  // root -> child -> leaf; group 0 roots at child, group 1 at root: root is simulated by
  // group 1, with its tail where child rests (child is group 0's), so no bone is a node of
  // two chains.
  const std::string text = R"({"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}],
    "nodes": [{"name": "base", "children": [1]}, {"name": "root", "translation": [0, 1, 0], "children": [2]},
              {"name": "child", "translation": [0, 0.2, 0], "children": [3]}, {"name": "leaf", "translation": [0, 0.2, 0]}],
    "extensions": {"VRM": {"secondaryAnimation": {"boneGroups": [{"stiffiness": 1, "bones": [2]}, {"stiffiness": 2, "bones": [1, 2]}]}}}})";
  auto imported = Import(text);
  ASSERT_TRUE(imported.ok()) << imported.error().message;
  const GltfAsset& a = imported.value();
  ExpectEachBoneSimulatedOnce(a);
  ASSERT_EQ(a.spring_bones.springs.size(), 2u);
  ASSERT_EQ(a.spring_bones.springs[0].joints.size(), 2u);  // child, leaf
  ASSERT_EQ(a.spring_bones.springs[1].joints.size(), 1u);  // root only
  const ports::VrmJoint& root = a.spring_bones.springs[1].joints[0];
  EXPECT_EQ(a.skeleton.names[static_cast<std::size_t>(root.bone)], "root");
  EXPECT_EQ(root.tail_bone, -1);
  EXPECT_EQ(root.virtual_tip, (Vec3{0, 0.2f, 0}));
  EXPECT_EQ(root.stiffness, 2.0f);
  auto world = MakeWorld();
  auto kind = ports::VrmAvatarArchetype::Build(*world, a);
  ASSERT_TRUE(kind.ok()) << kind.error().message;
  auto avatar = ports::VrmAvatar::Bind(*world, kind.value(), Transform{});
  ASSERT_TRUE(avatar.ok()) << avatar.error().message;
  for (int f = 0; f < 30; ++f) {
    avatar.value()->model_world.translation.x = 0.2f * static_cast<float>(f % 7);
    avatar.value()->UpdateWorld();
    world->Step(1.0f / 60.0f);
  }
  for (const Transform& t : avatar.value()->output_world) EXPECT_TRUE(IsFinite(t));
}

}  // namespace
}  // namespace tendon::test

namespace tendon::test {
namespace {

// A file's clips teach a character its joint limits (LimitSource::kClips), as the Jolt
// JSON clips do: an elbow bent further in the clip gets a wider learned range.
TEST(GltfImport, AClipOfTheFileTeachesTheAvatarsCharacterItsLimits) {
  TENDON_NEED_SHARED_DATA();
  auto imported = ports::ImportGltf(SharedData("vrm/godette/Godette_vrm_v4.vrm"));
  ASSERT_TRUE(imported.ok());
  const ports::GltfAsset base = imported.value();
  int32_t elbow = -1;
  for (const auto& [role, bone] : base.humanoid)
    if (role == "leftLowerArm") elbow = bone;
  ASSERT_GE(elbow, 0);
  const Quat rest = base.skeleton.rest_local[elbow].rotation;
  auto bending = [&](float degrees) {
    ports::GltfClip clip;
    clip.name = "bend";
    clip.duration = 1.0f;
    ports::GltfChannel ch;
    ch.bone = elbow;
    ch.path = ports::GltfChannelPath::kRotation;
    ch.interpolation = ports::GltfInterpolation::kLinear;
    ch.components = 4;
    ch.times = {0.0f, 1.0f};
    const Quat bent = rest * AxisAngle(Vec3{0, 0, 1}, degrees * 3.14159265f / 180.0f);
    ch.values = {rest.x, rest.y, rest.z, rest.w, bent.x, bent.y, bent.z, bent.w};
    clip.channels.push_back(ch);
    return clip;
  };
  // The clip sampled into frames: 31 at 30 fps, each the clip's pose at f / 30 s.
  const ports::GltfClip wide = bending(100.0f);
  const SampledClip frames = ports::SampleClipFrames(wide, base.skeleton.rest_local, 30.0f);
  const std::size_t bones = base.skeleton.rest_local.size();
  ASSERT_EQ(frames.frame_count, 31);
  ASSERT_EQ(frames.local.size(), 31 * bones);
  std::vector<Transform> pose = base.skeleton.rest_local;
  ports::SampleClip(wide, 0.5f, pose);
  EXPECT_NEAR(Dot(frames.local[15 * bones + elbow].rotation, pose[elbow].rotation), 1.0f, 1e-6f);
  auto learned_range = [&](float degrees) {
    ports::GltfAsset a = base;
    a.clips = {bending(degrees)};
    auto world = MakeWorld();
    ports::VrmAvatarOptions options;
    options.limit_source = LimitSource::kClips;
    auto kind = ports::VrmAvatarArchetype::Build(*world, a, options);
    EXPECT_TRUE(kind.ok()) << kind.error().message;
    if (!kind.ok()) return 0.0f;
    const CharacterArchetypeId c = kind.value()->character();
    CharacterPartInfo info;
    EXPECT_EQ(world->GetCharacterPartInfo(c, world->FindCharacterPart(c, "LeftLowerArm"), &info).code, ErrorCode::kNone);
    return info.normal_half_cone_degrees + info.plane_half_cone_degrees + info.twist_max_degrees - info.twist_min_degrees;
  };
  EXPECT_GT(learned_range(100.0f), learned_range(20.0f) + 40.0f);
  // No clips to learn from: refused, saying where.
  auto world = MakeWorld();
  ports::VrmAvatarOptions options;
  options.limit_source = LimitSource::kClips;
  ports::GltfAsset no_clips = base;
  no_clips.clips.clear();
  auto refused = ports::VrmAvatarArchetype::Build(*world, no_clips, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "animations");
}

}  // namespace
}  // namespace tendon::test
