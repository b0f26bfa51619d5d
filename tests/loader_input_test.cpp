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
  EXPECT_TRUE(std::isinf(json::Parse("[1e300]").value[0].Float()));  // past float: infinity, by name
  int32_t index = 0;
  EXPECT_FALSE(json::Parse("[1.5]").value[0].Int(0, 10, &index));
  EXPECT_FALSE(json::Parse("[3e9]").value[0].Int(0, INT32_MAX, &index));
  EXPECT_TRUE(json::Parse("[7]").value[0].Int(0, 10, &index));
  EXPECT_EQ(index, 7);
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

}  // namespace
}  // namespace tendon::test
