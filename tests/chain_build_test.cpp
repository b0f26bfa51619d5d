// Building and binding reject bad input with an error that names the item, field and reason.
#include <cmath>
#include <limits>

#include "test_util.h"

namespace tendon::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Error BuildError(const ChainArchetypeSettings& s) {
  auto w = MakeWorld();
  auto r = w->BuildChainArchetype(s);
  return r.ok() ? Error{} : r.error();
}

TEST(ChainBuild, AcceptsAValidBranchingHierarchy) {
  ChainArchetypeSettings s = Strand(4);
  ChainBone branch;
  branch.parent = 1;
  branch.rest_local.translation = {0, 0, 0.1f};
  s.bones.push_back(branch);
  auto w = MakeWorld();
  auto r = w->BuildChainArchetype(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(w->ChainBoneCount(r.value()), 5);
}

TEST(ChainBuild, RejectsAnEmptyChain) {
  const Error e = BuildError(ChainArchetypeSettings{});
  EXPECT_EQ(e.code, ErrorCode::kEmpty);
  EXPECT_EQ(e.field, "bones");
}

TEST(ChainBuild, RejectsAParentOutOfRange) {
  ChainArchetypeSettings s = Strand(3);
  s.bones[2].parent = 7;
  const Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kParentOutOfRange);
  EXPECT_EQ(e.item, 2);
  EXPECT_EQ(e.field, "bones[2].parent");
  EXPECT_NE(e.message.find("7"), std::string::npos);
  s.bones[2].parent = -2;
  EXPECT_EQ(BuildError(s).code, ErrorCode::kParentOutOfRange);
}

TEST(ChainBuild, RejectsAParentThatComesAfterItsChild) {
  ChainArchetypeSettings s = Strand(4);
  s.bones[1].parent = 3;  // 3's chain goes 3 -> 2 -> 1 -> 3: that is a cycle
  EXPECT_EQ(BuildError(s).code, ErrorCode::kCycle);
  ChainArchetypeSettings t = Strand(4);
  t.bones[3].parent = -1;
  t.bones[1].parent = 3;  // 3 is a root: only out of order
  const Error e = BuildError(t);
  EXPECT_EQ(e.code, ErrorCode::kParentNotBefore);
  EXPECT_EQ(e.item, 1);
}

TEST(ChainBuild, RejectsABoneThatIsItsOwnParent) {
  ChainArchetypeSettings s = Strand(3);
  s.bones[1].parent = 1;
  const Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kCycle);
  EXPECT_EQ(e.item, 1);
}

TEST(ChainBuild, RejectsAZeroLengthSegment) {
  ChainArchetypeSettings s = Strand(3);
  s.bones[2].rest_local.translation = {};
  const Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kZeroLengthSegment);
  EXPECT_EQ(e.item, 2);
}

TEST(ChainBuild, RejectsNonFiniteNumbers) {
  ChainArchetypeSettings s = Strand(3);
  s.bones[1].rest_local.translation.y = kNaN;
  Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kNotFinite);
  EXPECT_EQ(e.field, "bones[1].rest_local.translation");
  s = Strand(3);
  s.bones[2].rest_local.rotation.x = std::numeric_limits<float>::infinity();
  e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kNotFinite);
  EXPECT_EQ(e.field, "bones[2].rest_local.rotation");
  s = Strand(3);
  s.settings.damping = kNaN;
  EXPECT_EQ(BuildError(s).code, ErrorCode::kNotFinite);
}

TEST(ChainBuild, RejectsANonUnitRotation) {
  ChainArchetypeSettings s = Strand(3);
  s.bones[1].rest_local.rotation = Quat{0, 0, 0, 2};
  const Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kNotUnitRotation);
  EXPECT_EQ(e.item, 1);
}

TEST(ChainBuild, RejectsSettingsOutOfRange) {
  const struct {
    float ChainSettings::*field;
    float value;
    const char* name;
  } cases[] = {{&ChainSettings::damping, 1.5f, "settings.damping"},
               {&ChainSettings::stiffness, -0.1f, "settings.stiffness"},
               {&ChainSettings::gravity_scale, 1000.0f, "settings.gravity_scale"},
               {&ChainSettings::wind_scale, -1000.0f, "settings.wind_scale"},
               {&ChainSettings::node_radius, -1.0f, "settings.node_radius"}};
  for (const auto& c : cases) {
    ChainArchetypeSettings s = Strand(3);
    s.settings.*c.field = c.value;
    const Error e = BuildError(s);
    EXPECT_EQ(e.code, ErrorCode::kOutOfRange) << c.name;
    EXPECT_EQ(e.field, c.name);
  }
}

TEST(ChainBuild, RejectsBadOverrides) {
  ChainArchetypeSettings s = Strand(3);
  s.overrides.push_back({.node = 5});
  Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kBadReference);
  EXPECT_EQ(e.field, "overrides[0].node");
  s.overrides = {{.node = 1, .stiffness = 3.0f}};
  e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(e.field, "overrides[0].stiffness");
  s.overrides = {{.node = 0, .pinned = false}};
  EXPECT_EQ(BuildError(s).code, ErrorCode::kOutOfRange);
}

TEST(ChainBuild, RejectsBadColliders) {
  ChainArchetypeSettings s = Strand(3);
  s.colliders.push_back({.shape = ColliderShape::kSphere, .bone = 9});
  Error e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kBadReference);
  EXPECT_EQ(e.field, "colliders[0].bone");
  s.colliders = {{.shape = ColliderShape::kSphere, .bone = 0, .radius = -1.0f}};
  EXPECT_EQ(BuildError(s).code, ErrorCode::kOutOfRange);
  s.colliders = {{.shape = ColliderShape::kPlane, .bone = 0, .b = {0, 2, 0}}};
  e = BuildError(s);
  EXPECT_EQ(e.code, ErrorCode::kOutOfRange);
  EXPECT_EQ(e.field, "colliders[0].b");
  s.colliders = {{.shape = ColliderShape::kPlane, .inside = true, .bone = 0}};
  EXPECT_EQ(BuildError(s).code, ErrorCode::kOutOfRange);
  s.colliders = {{.shape = ColliderShape::kSphere, .bone = -1, .frame = -1}};
  EXPECT_EQ(BuildError(s).code, ErrorCode::kBadReference);
  s.colliders = {{.shape = ColliderShape::kSphere, .bone = 0, .a = {kNaN, 0, 0}}};
  EXPECT_EQ(BuildError(s).code, ErrorCode::kNotFinite);
}

TEST(ChainBuild, RejectsTooManyBones) {
  EXPECT_EQ(BuildError(Strand(129)).code, ErrorCode::kCapacity);
}

TEST(WorldCreate, RejectsBadSettings) {
  auto check = [](WorldSettings s, ErrorCode code, const char* field) {
    auto r = World::Create(s);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_EQ(r.error().code, code) << field;
    EXPECT_EQ(r.error().field, field);
  };
  WorldSettings s;
  s.fixed_hz = 0;
  check(s, ErrorCode::kOutOfRange, "fixed_hz");
  s = {};
  s.max_substeps = 0;
  check(s, ErrorCode::kOutOfRange, "max_substeps");
  s = {};
  s.gravity.y = kNaN;
  check(s, ErrorCode::kNotFinite, "gravity");
  s = {};
  s.max_distance = -1;
  check(s, ErrorCode::kOutOfRange, "max_distance");
  s = {};
  s.max_chains = -1;
  check(s, ErrorCode::kOutOfRange, "max_chains");
  s = {};
  s.tasks.enqueue = [](TaskFn*, int32_t, int32_t, void*, void*) -> void* { return nullptr; };
  check(s, ErrorCode::kOutOfRange, "tasks");
  s = {};
  s.ragdoll_settle_damping = -1;
  check(s, ErrorCode::kOutOfRange, "ragdoll_settle_damping");
  s.ragdoll_settle_damping = kNaN;
  check(s, ErrorCode::kOutOfRange, "ragdoll_settle_damping");
  s = {};
  s.ragdoll_iterations = 0;
  check(s, ErrorCode::kOutOfRange, "ragdoll_iterations");
}

TEST(ChainBind, RejectsMissingOrShortBuffers) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = Strand(4);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  ChainBinding b = host.Binding(a);
  b.root_parent_world = nullptr;
  EXPECT_EQ(w->BindChain(b).error().code, ErrorCode::kNullBuffer);
  b = host.Binding(a);
  b.output_local = std::span<Transform>(host.output.data(), 2);
  auto r = w->BindChain(b);
  EXPECT_EQ(r.error().code, ErrorCode::kNullBuffer);
  EXPECT_EQ(r.error().field, "output_local");
  b = host.Binding(a);
  b.archetype = ChainArchetypeId{};
  EXPECT_EQ(w->BindChain(b).error().code, ErrorCode::kStaleHandle);
  host.animated[2].rotation.w = kNaN;
  r = w->BindChain(host.Binding(a));
  EXPECT_EQ(r.error().code, ErrorCode::kNotFinite);
  EXPECT_EQ(r.error().item, 2);
}

TEST(ChainBind, RejectsMissingColliderFrames) {
  auto w = MakeWorld();
  ChainArchetypeSettings s = Strand(3);
  s.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 1});
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  host.collider_frames.resize(1);
  EXPECT_EQ(w->BindChain(host.Binding(a)).error().code, ErrorCode::kNullBuffer);
  host.collider_frames.resize(2);
  EXPECT_TRUE(w->BindChain(host.Binding(a)).ok());
}

TEST(PendulumBind, RejectsBadSettings) {
  auto w = MakeWorld();
  Transform joint{}, offset{};
  PendulumBinding b;
  b.joint_world = &joint;
  b.accessory_offset = &offset;
  b.settings.max_swing_degrees = 200;
  auto r = w->BindPendulum(b);
  EXPECT_EQ(r.error().code, ErrorCode::kOutOfRange);
  EXPECT_EQ(r.error().field, "settings.max_swing_degrees");
  b.settings = {};
  b.settings.up_axis = {0, 0, 0};
  EXPECT_EQ(w->BindPendulum(b).error().field, "settings.up_axis");
  b.settings = {};
  b.joint_world = nullptr;
  EXPECT_EQ(w->BindPendulum(b).error().code, ErrorCode::kNullBuffer);
}

}  // namespace
}  // namespace tendon::test
