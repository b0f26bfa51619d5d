// Every loader validates before it allocates, runs in time linear in its input, and
// range-checks every number (issue 11): hostile files get an error that says why, never a
// crash, a huge allocation or undefined behaviour.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "ports/device/device_profile_json.h"
#include "ports/gltf/gltf_import.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/json/json.h"
#include "ports/vrm/vrm_skeleton.h"

namespace tendon::test {
namespace {

// A scratch file under the test's working directory, removed when it goes.
struct ScratchFile {
  std::string path;
  ScratchFile(const std::string& name, const std::string& bytes) : path("loader_input_" + name) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  ~ScratchFile() { std::remove(path.c_str()); }
};

// "j<index>" (built by append: g++ 12 warns falsely on "j" + std::string under -O3).
std::string JointName(int index) {
  std::string name = "j";
  name += std::to_string(index);
  return name;
}

// A binary glTF holding only a JSON chunk.
std::string Glb(std::string json) {
  while (json.size() % 4 != 0) json.push_back(' ');
  std::string out = "glTF";
  auto u32 = [&out](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
  };
  u32(2);
  u32(static_cast<uint32_t>(12 + 8 + json.size()));
  u32(static_cast<uint32_t>(json.size()));
  u32(0x4E4F534Au);
  out.append(json);
  return out;
}

TEST(Loaders, AnAnimationWhoseKeyCountsDisagreeIsRefusedBeforeAnythingIsSized) {
  // 30,000 joints, the first with 30,000 keys: sizing storage from the first joint alone
  // would ask for 9e8 transforms (36 GB) from a 1 MB file.
  std::string text = "{\"name\":\"bomb\",\"joints\":[{\"name\":\"j0\",\"keys\":[";
  for (int k = 0; k < 30000; ++k) text += k ? ",{}" : "{}";
  text += "]}";
  for (int j = 1; j < 30000; ++j) text += ",{\"name\":\"j" + std::to_string(j) + "\",\"keys\":[]}";
  text += "]}";
  ScratchFile file("bomb.json", text);
  auto loaded = ports::LoadJoltAnimation(file.path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("different key count"), std::string::npos) << loaded.error().message;
}

TEST(Loaders, ParentsFirstOrderingIsLinearInTheJointCount) {
  // A chain of 20,000 joints listed leaf first: each round of the old ordering placed one
  // joint after a scan of all of them (cubic, hours); now it is one pass.
  constexpr int kJoints = 20000;
  std::string text = "{\"name\":\"chain\",\"joints\":[";
  for (int j = kJoints - 1; j >= 0; --j) {
    text += "{\"name\":\"j" + std::to_string(j) + "\"";
    if (j > 0) text += ",\"parent\":\"j" + std::to_string(j - 1) + "\"";
    text += ",\"keys\":[{\"time\":0,\"translation\":[0,0.1,0],\"rotation\":[0,0,0,1]}]}";
    if (j > 0) text += ",";
  }
  text += "]}";
  ScratchFile file("chain.json", text);
  auto loaded = ports::LoadJoltAnimation(file.path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const ports::JoltAnimation& a = loaded.value();
  ASSERT_EQ(a.joints.size(), static_cast<std::size_t>(kJoints));
  for (int i = 0; i < kJoints; ++i) {
    ASSERT_LT(a.parents[i], i) << "parents first";
    EXPECT_EQ(a.joints[i], JointName(i));
  }
}

TEST(Loaders, ACycleOrAMissingParentIsRefused) {
  ScratchFile cycle("cycle.json",
                    "{\"joints\":[{\"name\":\"a\",\"parent\":\"b\",\"keys\":[{}]},{\"name\":\"b\",\"parent\":\"a\",\"keys\":[{}]}]}");
  auto r = ports::LoadJoltAnimation(cycle.path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cycle"), std::string::npos);
  ScratchFile missing("missing.json", "{\"joints\":[{\"name\":\"a\",\"parent\":\"z\",\"keys\":[{}]}]}");
  r = ports::LoadJoltAnimation(missing.path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not in the file"), std::string::npos);
}

TEST(Loaders, AParseErrorNamesTheIndexOfTheBadByte) {
  const std::string text = "{\"x\": }";
  const json::ParseResult bad = json::Parse(text);
  ASSERT_FALSE(bad.ok);
  ASSERT_LT(bad.error_offset, text.size());
  EXPECT_EQ(text[bad.error_offset], '}');
  const json::ParseResult junk = json::Parse("[1, 2, @]");
  ASSERT_FALSE(junk.ok);
  EXPECT_EQ(junk.error_offset, 7u);
  EXPECT_EQ(json::Parse("").error_offset, 0u);  // nothing to read: the end, not one past it
  EXPECT_EQ(json::Parse("[1, 2").error_offset, 5u);
}

TEST(Loaders, NumbersOutOfRangeAreRefusedNotConverted) {
  const json::ParseResult huge = json::Parse("{\"x\": 1e999}");
  EXPECT_FALSE(huge.ok);
  EXPECT_NE(huge.error.find("number overflow"), std::string::npos) << huge.error;  // nlohmann-json says so
  EXPECT_TRUE(json::Parse("{\"x\": 1e300}").ok);
  // Past float: refused by path, never converted to infinity or clamped.
  const json::ParseResult doc = json::Parse("{\"a\": [1e300, 1.5, 3e9, 7]}");
  ASSERT_TRUE(doc.ok);
  json::Reader floats("doc.json");
  const json::Node a = floats.Member(json::Reader::Root(*doc.document), "a");
  EXPECT_EQ(floats.Float(floats.Element(a, 0)), 0.0f);
  ASSERT_FALSE(floats.ok());
  EXPECT_EQ(floats.error().message, "doc.json: a[0]: is 1e+300, beyond the range of a float");
  json::Reader ints("doc.json");
  EXPECT_EQ(ints.Int(ints.Element(ints.Member(json::Reader::Root(*doc.document), "a"), 3), 0, 10), 7);
  EXPECT_TRUE(ints.ok());
  ints.Int(ints.Element(ints.Member(json::Reader::Root(*doc.document), "a"), 1), 0, 10);
  EXPECT_EQ(ints.error().message, "doc.json: a[1]: is 1.5; expected an integer within [0, 10)");
  json::Reader wide("doc.json");
  wide.Int(wide.Element(wide.Member(json::Reader::Root(*doc.document), "a"), 2), 0, INT32_MAX);
  EXPECT_EQ(wide.error().field, "a[2]");
  for (const char* parent : {"1e10", "-7", "0.5", "\"x\""}) {
    ScratchFile file("parts.json", std::string("{\"parts\":[{\"name\":\"a\",\"parent_index\":") + parent +
                                       ",\"shape\":{\"type\":\"sphere\",\"radius\":0.1}}]}");
    auto r = ports::LoadJoltHumanRagdoll(file.path);
    ASSERT_FALSE(r.ok()) << parent;
    EXPECT_NE(r.error().message.find("parent_index"), std::string::npos) << r.error().message;
  }
}

TEST(Loaders, AVrmWhoseIndicesAreNotNodesIsRefused) {
  for (const char* bad : {"{\"scene\":5,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{}]}",
                          "{\"scenes\":[{\"nodes\":[3e9]}],\"nodes\":[{}]}",
                          "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[-1]}]}",
                          "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[0.5]}]}"}) {
    ScratchFile file("bad.vrm", Glb("{\"asset\":{\"version\":\"2.0\"}," + std::string(bad + 1)));
    auto r = ports::LoadVrmSkeleton(file.path);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.find("asset"), std::string::npos) << "refused for its index: " << r.error().message;
  }
  // A humanoid bone whose node is out of range is an error that says which (it was
  // skipped before the glTF importer).
  ScratchFile bad("bad_humanoid.vrm", Glb("{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],"
                                         "\"nodes\":[{\"name\":\"root\",\"children\":[1]},{\"name\":\"leaf\"}],"
                                         "\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":[{\"bone\":\"hips\",\"node\":1e12},"
                                         "{\"bone\":\"head\",\"node\":1}]}}}}"));
  auto refused = ports::LoadVrmSkeleton(bad.path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("extensions.VRM.humanoid.humanBones[0]"), std::string::npos)
      << refused.error().message;
  ScratchFile good("good.vrm", Glb("{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],"
                                   "\"nodes\":[{\"name\":\"root\",\"children\":[1]},{\"name\":\"leaf\"}],"
                                   "\"extensions\":{\"VRM\":{\"humanoid\":{\"humanBones\":[{\"bone\":\"head\",\"node\":1}]}}}}"));
  auto r = ports::LoadVrmSkeleton(good.path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().humanoid.size(), 1u);
  EXPECT_EQ(r.value().humanoid[0].first, "head");
  EXPECT_EQ(r.value().humanoid[0].second, 1);
}

// ---- issue 37: strict typed reading, messages that say where, and no exception ----

// A two-part Jolt ragdoll the loader accepts: the root (no parent, no joint) and a child on
// a swing-twist joint. Tests break one member of it.
nlohmann::json TwoPartRagdoll() {
  const nlohmann::json shape = {{"type", "capsule"}, {"radius", 0.1}, {"half_height_of_cylinder", 0.1},
                                {"offset_position", {0, 0, 0}}, {"offset_rotation", {0, 0, 0, 1}}};
  nlohmann::json root = {{"name", "root"}, {"parent_index", nullptr}, {"position", {0, 1, 0}}, {"rotation", {0, 0, 0, 1}},
                         {"shape", shape}, {"mass", 10.0}, {"friction", 0.8}, {"joint", nullptr}};
  nlohmann::json child = root;
  child["name"] = "child";
  child["parent_index"] = 0;
  child["position"] = {0, 0.6, 0};
  child["mass"] = 5.0;
  child["joint"] = {{"type", "swing_twist"},        {"position1", {0, 0.8, 0}},    {"twist_axis1", {0, -1, 0}},
                    {"plane_axis1", {1, 0, 0}},     {"twist_axis2", {0, -1, 0}},   {"plane_axis2", {1, 0, 0}},
                    {"normal_half_cone_angle", 0.5}, {"plane_half_cone_angle", 0.5}, {"twist_min_angle", -0.3},
                    {"twist_max_angle", 0.3},       {"max_friction_torque", 5.0},
                    {"swing_motor", {{"frequency", 20.0}, {"damping", 2.0}, {"max_torque_limit", 1000.0}}}};
  return {{"name", "two"}, {"parts", {root, child}}};
}

Result<RagdollSettings> LoadRagdollJson(const nlohmann::json& doc) {
  ScratchFile file("ragdoll.json", doc.dump());
  return ports::LoadJoltHumanRagdoll(file.path);
}

TEST(Loaders, TheTwoPartRagdollTheStrictTestsBreakLoads) {
  auto loaded = LoadRagdollJson(TwoPartRagdoll());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded.value().parts.size(), 2u);
  EXPECT_EQ(loaded.value().parts[1].parent, 0);
  EXPECT_EQ(loaded.value().parts[1].pose.translation.y, 0.6f);
  EXPECT_NEAR(loaded.value().parts[1].joint.friction_torque_per_kg, 1.0f, 1e-6f);  // 5 N m / 5 kg
}

TEST(Loaders, AStringWhereANumberBelongsIsRefusedWithItsJsonPath) {
  nlohmann::json doc = TwoPartRagdoll();
  doc["parts"][1]["position"][1] = "NaN";  // read as 0 by the tolerant view before
  auto loaded = LoadRagdollJson(doc);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().field, "parts[1].position[1]");
  EXPECT_EQ(loaded.error().message, "loader_input_ragdoll.json: parts[1].position[1]: expected a number, got a string");
  // The same for an optional member that is present: typed, not ignored.
  doc = TwoPartRagdoll();
  doc["parts"][0]["friction"] = {1};
  loaded = LoadRagdollJson(doc);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message, "loader_input_ragdoll.json: parts[0].friction: expected a number, got an array");
}

TEST(Loaders, AMissingRequiredMemberIsRefusedNotDefaulted) {
  struct Case {
    const char* part_member;
    const char* path;
  };
  for (const Case& c : {Case{"position", "parts[1].position"}, Case{"rotation", "parts[1].rotation"},
                        Case{"mass", "parts[1].mass"}, Case{"shape", "parts[1].shape"}}) {
    nlohmann::json doc = TwoPartRagdoll();
    doc["parts"][1].erase(c.part_member);  // became (0,0,0), identity or 0 kg before
    auto loaded = LoadRagdollJson(doc);
    ASSERT_FALSE(loaded.ok()) << c.path;
    EXPECT_EQ(loaded.error().message, std::string("loader_input_ragdoll.json: ") + c.path + ": is missing");
  }
  nlohmann::json doc = TwoPartRagdoll();
  doc["parts"][1]["joint"].erase("twist_axis2");
  auto loaded = LoadRagdollJson(doc);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().field, "parts[1].joint.twist_axis2");
  doc = TwoPartRagdoll();
  doc["parts"][1]["position"] = {0, 1};
  loaded = LoadRagdollJson(doc);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("parts[1].position: expected 3 numbers [x, y, z], got 2"), std::string::npos)
      << loaded.error().message;
}

TEST(Loaders, AnAnimationKeyOfTheWrongTypeIsRefusedWithItsJsonPath) {
  const std::string good =
      R"({"name": "a", "joints": [{"name": "root", "parent": null, "keys": [{"time": 0, "translation": [0, 1, 0], "rotation": [0, 0, 0, 1]},)"
      R"( {"time": 1, "translation": [0, 1, 0], "rotation": [0, 0, 0, 1]}]}]})";
  ScratchFile ok_file("anim.json", good);
  ASSERT_TRUE(ports::LoadJoltAnimation(ok_file.path).ok());
  nlohmann::json doc = nlohmann::json::parse(good);
  doc["joints"][0]["keys"][1]["rotation"][2] = true;
  ScratchFile bad("anim.json", doc.dump());
  auto loaded = ports::LoadJoltAnimation(bad.path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message, "loader_input_anim.json: joints[0].keys[1].rotation[2]: expected a number, got a boolean");
  doc = nlohmann::json::parse(good);
  doc["joints"][0]["keys"][0].erase("translation");
  ScratchFile missing("anim.json", doc.dump());
  loaded = ports::LoadJoltAnimation(missing.path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().field, "joints[0].keys[0].translation");
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Loaders, ASyntaxErrorNamesTheFileOnceWithLineAndColumn) {
  // 1e999 on line 3, column 14 (byte 28): it was reported "at byte 0".
  const std::string text = "{\n  \"parts\": [\n    {\"mass\": 1e999}\n  ]\n}\n";
  ASSERT_EQ(text.substr(28, 5), "1e999");
  ScratchFile file("overflow.json", text);
  auto loaded = ports::LoadJoltHumanRagdoll(file.path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message,
            "loader_input_overflow.json:3:14: number overflow parsing '1e999' (past the range of a double) (byte 28)");
  const json::ParseResult parsed = json::Parse(text);
  EXPECT_EQ(parsed.error_offset, 28u);
  EXPECT_EQ(parsed.error_line, 3);
  EXPECT_EQ(parsed.error_column, 14);
  // A NaN literal: the path once, no nlohmann prefix.
  ScratchFile nan("nan.json", "{\"parts\": [NaN]}");
  auto refused = ports::LoadJoltAnimation(nan.path);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(Count(refused.error().message, nan.path), 1u) << refused.error().message;
  EXPECT_EQ(refused.error().message.find("[json.exception"), std::string::npos) << refused.error().message;
  EXPECT_EQ(refused.error().message.rfind("loader_input_nan.json:1:12: syntax error", 0), 0u) << refused.error().message;
}

// A scratch directory, removed when it goes.
struct ScratchDir {
  std::string path;
  explicit ScratchDir(const std::string& name) : path("loader_input_" + name) { std::filesystem::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// An I/O failure is kIo, names the path once, and carries the system's reason.
void ExpectIo(const Error& e, const std::string& path, const std::string& reason) {
  EXPECT_EQ(e.code, ErrorCode::kIo) << e.message;
  EXPECT_EQ(e.field, "file");
  EXPECT_EQ(e.message.rfind(path + ": ", 0), 0u) << e.message;
  EXPECT_EQ(Count(e.message, path), 1u) << e.message;
  EXPECT_NE(e.message.find(reason), std::string::npos) << e.message;
}
const std::string kNoSuchFile = std::make_error_code(std::errc::no_such_file_or_directory).message();
const std::string kIsADirectory = std::make_error_code(std::errc::is_a_directory).message();

TEST(Loaders, AJoltRagdollPathThatIsADirectoryOrMissingIsAnIoError) {
  ScratchDir dir("ragdoll_dir.json");
  ExpectIo(ports::LoadJoltHumanRagdoll(dir.path).error(), dir.path, kIsADirectory);
  ExpectIo(ports::LoadJoltHumanRagdoll("/nonexistent/ragdoll.json").error(), "/nonexistent/ragdoll.json", kNoSuchFile);
}

TEST(Loaders, AJoltAnimationPathThatIsADirectoryOrMissingIsAnIoError) {
  ScratchDir dir("anim_dir.json");
  ExpectIo(ports::LoadJoltAnimation(dir.path).error(), dir.path, kIsADirectory);
  ExpectIo(ports::LoadJoltAnimation("/nonexistent/walk.json").error(), "/nonexistent/walk.json", kNoSuchFile);
  // json::ParseFile under them says the same.
  const json::ParseResult r = json::ParseFile(dir.path);
  EXPECT_TRUE(r.io_error);
  ExpectIo(json::ParseFailure(r), dir.path, kIsADirectory);
  const json::ParseResult device = json::ParseFile("/dev/null");
  EXPECT_TRUE(device.io_error) << "a device is not a regular file: " << device.error;
}

TEST(Loaders, ADeviceProfilePathThatIsADirectoryOrMissingIsAnIoError) {
  ScratchDir dir("profile_dir.json");
  ExpectIo(ports::LoadDeviceProfile(dir.path).error(), dir.path, kIsADirectory);
  ExpectIo(ports::LoadDeviceProfile("/nonexistent/profile.json").error(), "/nonexistent/profile.json", kNoSuchFile);
  DeviceProfile profile;
  ExpectIo(ports::SaveDeviceProfile(profile, dir.path), dir.path, kIsADirectory);
  ExpectIo(ports::SaveDeviceProfile(profile, "/nonexistent/profile.json"), "/nonexistent/profile.json", kNoSuchFile);
}

TEST(Loaders, AGltfPathThatIsADirectoryOrMissingIsAnIoError) {
  // Before: std::ios_base::failure out of ImportGltf, aborting a C++ host.
  ScratchDir dir("model_dir.vrm");
  ExpectIo(ports::ImportGltf(dir.path).error(), dir.path, kIsADirectory);
  ExpectIo(ports::ImportGltf("/nonexistent/model.vrm").error(), "/nonexistent/model.vrm", kNoSuchFile);
  ExpectIo(ports::LoadVrmSkeleton(dir.path).error(), dir.path, kIsADirectory);
  ExpectIo(ports::LoadVrmSkeleton("/nonexistent/model.vrm").error(), "/nonexistent/model.vrm", kNoSuchFile);
}

TEST(Loaders, AGltfFromMemoryWhoseBufferUriIsADirectoryOrMissingSaysSo) {
  // ImportGltf from memory reads external buffers relative to base_dir: a buffer whose
  // uri is a directory, or a file that is not there, is an error naming it, never a throw.
  ScratchDir dir("buffers");
  std::filesystem::create_directories(dir.path + "/sub.bin");
  for (const char* uri : {"sub.bin", "missing.bin"}) {
    const std::string text = std::string(R"({"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "nodes": [{"name": "root"}],)") +
                             R"("buffers": [{"byteLength": 4, "uri": ")" + uri + R"("}]})";
    auto r = ports::ImportGltf(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mem.gltf",
                               dir.path);
    ASSERT_FALSE(r.ok()) << uri;
    EXPECT_NE(r.error().message.find(uri), std::string::npos) << r.error().message;
  }
}

TEST(Loaders, ATruncatedGlbSaysWhichLengthAndHowManyBytes) {
  const std::string whole = Glb(R"({"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"name":"root"}]})");
  auto import = [](const std::string& bytes) {
    return ports::ImportGltf(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "cut.glb");
  };
  ASSERT_TRUE(import(whole).ok()) << import(whole).error().message;
  // Cut after 50 bytes: the header says the whole length.
  auto cut = import(whole.substr(0, 50));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().message, "cut.glb: glb: is truncated: the length in its header needs " + std::to_string(whole.size()) +
                                     " bytes, 50 are there");
  // Cut inside the header.
  auto header = import(whole.substr(0, 9));
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.error().message, "cut.glb: glb: is truncated: the 12-byte header needs 12 bytes, 9 are there");
  // A header length that was patched to the cut size: the JSON chunk is what is short.
  std::string patched = whole.substr(0, 40);
  patched[8] = 40;
  patched[9] = patched[10] = patched[11] = 0;
  auto chunk = import(patched);
  ASSERT_FALSE(chunk.ok());
  EXPECT_EQ(chunk.error().message, "cut.glb: glb: is truncated: the JSON chunk (at byte 20) needs " +
                                       std::to_string(whole.size() - 20) + " bytes, 20 are there");
  // A BIN chunk whose length runs past the end.
  std::string with_bin = whole;
  const uint32_t bin_claims = 64, total = static_cast<uint32_t>(whole.size() + 8 + 16);
  for (uint32_t v : {bin_claims, 0x004E4942u})
    for (int i = 0; i < 4; ++i) with_bin.push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
  with_bin.append(16, '\0');
  for (int i = 0; i < 4; ++i) with_bin[static_cast<std::size_t>(8 + i)] = static_cast<char>((total >> (8 * i)) & 0xffu);
  auto bin = import(with_bin);
  ASSERT_FALSE(bin.ok());
  EXPECT_EQ(bin.error().message, "cut.glb: glb: is truncated: the BIN chunk (at byte " + std::to_string(whole.size() + 8) +
                                     ") needs 64 bytes, 16 are there");
}

TEST(Loaders, GltfJsonNestedPastTheDepthLimitIsRefusedNotAStackOverflow) {
  // tinygltf converts JSON to its values recursively: 100,000 nested arrays in "extras"
  // overflowed the stack (a crash) before the depth was checked.
  auto with_extras = [](int depth) {
    return std::string(R"({"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"name":"root"}],"extras":)") +
           std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']') + "}";
  };
  auto import = [](const std::string& text) {
    return ports::ImportGltf(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "deep.gltf");
  };
  const std::string deep = with_extras(100000);
  auto refused = import(deep);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().field, "json");
  EXPECT_NE(refused.error().message.find("more than 128 deep"), std::string::npos) << refused.error().message;
  auto glb = import(Glb(deep));
  ASSERT_FALSE(glb.ok());
  EXPECT_EQ(glb.error().field, "json");
  // Brackets inside strings are text, not nesting; 120 levels are read.
  EXPECT_TRUE(import(with_extras(120)).ok());
  const std::string quoted = std::string(R"({"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"name":")") +
                             std::string(1000, '[') + R"(\"[["}]})";
  auto named = import(quoted);
  ASSERT_TRUE(named.ok()) << named.error().message;
}

TEST(Loaders, AHandBuiltJoltAnimationWithoutKeysIsNotReadPastItsEnd) {
  // Keys for fewer joints than it names (no loader returns one; a host may build one):
  // sampled, it writes nothing; as a skeleton, it has only the rest poses it holds.
  ports::JoltAnimation a;
  a.joints = {"root", "tip"};
  a.parents = {-1, 0};
  a.key_times = {0.0f, 1.0f};
  a.keys = {Transform{{0, 1, 0}, {}, {1, 1, 1}}};
  std::vector<Transform> pose(2, Transform{{7, 7, 7}, {}, {1, 1, 1}});
  ports::SampleJoltAnimation(a, 0.5f, pose);
  EXPECT_EQ(pose[0].translation, (Vec3{7, 7, 7}));
  EXPECT_EQ(ports::JoltSkeleton(a).rest_local.size(), 1u);
  ports::SampleJoltAnimation(ports::JoltAnimation{}, 0.5f, pose);
  EXPECT_EQ(pose[1].translation, (Vec3{7, 7, 7}));
  // A whole one samples as before.
  a.keys.push_back(Transform{{0, 2, 0}, {}, {1, 1, 1}});
  a.keys.push_back(Transform{{0, 3, 0}, {}, {1, 1, 1}});
  a.keys.push_back(Transform{{0, 4, 0}, {}, {1, 1, 1}});
  a.duration = 1.0f;
  a.looping = false;
  ports::SampleJoltAnimation(a, 0.5f, pose);
  EXPECT_NEAR(pose[0].translation.y, 2.0f, 1e-6f);
  EXPECT_NEAR(pose[1].translation.y, 3.0f, 1e-6f);
}

}  // namespace
}  // namespace tendon::test
