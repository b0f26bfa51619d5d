// Several lanes per instance (issue 41, docs/chains.md): a lone avatar whose strands have
// different lengths gets one chain per length, a lane per strand, and its results are the
// bits of the one-lane layout (VRM's rule evaluates strands independently below their
// animated roots).
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ports/gltf/vrm_avatar.h"
#include "ports/shared_data.h"
#include "character_test_util.h"
#include "test_util.h"

namespace tendon::test {
namespace {

using ports::VrmAvatar;
using ports::VrmAvatarArchetype;

constexpr float kDt = 1.0f / 60.0f;
constexpr int kStrands = 25;

// A VRM 1.0-style head of 25 hair springs (one linear strand each) of 6 to 10 joints
// (5 of each length), each joint's tail the next bone, all colliding with one sphere on
// the head: the "lone avatar with many strands" of issue 41.
ports::GltfAsset HairyHead() {
  ports::GltfAsset asset;
  asset.name = "hairy-head.vrm";
  asset.vrm = ports::VrmVersion::k1;
  SkeletonSettings& sk = asset.skeleton;
  auto add = [&](const std::string& name, int32_t parent, Vec3 t) {
    sk.names.push_back(name);
    sk.parents.push_back(parent);
    sk.rest_local.push_back(Transform{t, {}, {1, 1, 1}});
    return static_cast<int32_t>(sk.parents.size()) - 1;
  };
  add("root", -1, {0, 0, 0});
  const int32_t head = add("head", 0, {0, 1.6f, 0});
  asset.spring_bones.colliders.push_back(ports::VrmCollider{.bone = head, .offset = {0, 0.05f, 0}, .radius = 0.09f});
  asset.spring_bones.collider_groups.push_back(ports::VrmColliderGroup{"head", {0}});
  for (int s = 0; s < kStrands; ++s) {
    const int joints = 6 + s % 5;
    const float a = 6.2831853f * static_cast<float>(s) / kStrands;
    int32_t bone = add("hair" + std::to_string(s) + "_0", head, {0.1f * std::cos(a), 0.08f, 0.1f * std::sin(a)});
    ports::VrmSpring spring;
    spring.name = "hair" + std::to_string(s);
    spring.collider_groups = {0};
    for (int j = 0; j < joints; ++j) {
      const int32_t tail = add("hair" + std::to_string(s) + "_" + std::to_string(j + 1), bone,
                               {0.01f * std::cos(a), -0.035f, 0.01f * std::sin(a)});
      spring.joints.push_back(ports::VrmJoint{.bone = bone,
                                              .parent = j - 1,
                                              .tail_bone = tail,
                                              .hit_radius = 0.01f,
                                              .stiffness = 1.0f - 0.05f * static_cast<float>(j),
                                              .gravity_power = 0.2f,
                                              .drag_force = 0.4f});
      bone = tail;
    }
    asset.spring_bones.springs.push_back(spring);
  }
  return asset;
}

struct AvatarRun {
  std::unique_ptr<World> world;
  std::shared_ptr<const VrmAvatarArchetype> kind;
  std::unique_ptr<VrmAvatar> avatar;
};

AvatarRun Bound(bool strand_lanes) {
  AvatarRun r;
  r.world = MakeWorld();
  auto kind = VrmAvatarArchetype::Build(*r.world, HairyHead(), {.character = false, .strand_lanes = strand_lanes});
  EXPECT_TRUE(kind.ok()) << kind.error().message;
  if (!kind.ok()) return r;
  r.kind = kind.value();
  r.avatar = VrmAvatar::Bind(*r.world, r.kind, Transform{}).value();
  return r;
}

// The head swings and bobs, as bench-vrm.mjs drives its avatars.
void Drive(AvatarRun& r, int frame) {
  const float t = static_cast<float>(frame) * kDt;
  r.avatar->model_world.rotation = AxisAngle(Vec3{0, 1, 0}, 0.8f * std::sin(2.0f * t));
  r.avatar->model_world.translation = Vec3{0.5f * std::sin(3.0f * t), 0.2f * std::fabs(std::sin(5.0f * t)), 0};
  r.avatar->UpdateWorld();
  r.world->Step(kDt);
}

TEST(VrmLanes, StrandsOfOneLengthShareAChainAndEachTakesALane) {
  AvatarRun spread = Bound(true), one = Bound(false);
  ASSERT_TRUE(spread.avatar && one.avatar);
  // Five lengths: five chains of five strands each; the one-lane layout puts the head's
  // roots together up to the 128-node limit.
  ASSERT_EQ(spread.kind->chains().size(), 5u);
  for (const ports::VrmChain& chain : spread.kind->chains()) {
    int roots = 0;
    for (const ChainBone& b : chain.settings.bones) roots += b.parent < 0 ? 1 : 0;
    EXPECT_EQ(roots, 5) << chain.settings.name;
  }
  EXPECT_LT(one.kind->chains().size(), 5u);
  Drive(spread, 0);
  Drive(one, 0);
  EXPECT_EQ(spread.world->LastStats().lanes_used, kStrands);
  EXPECT_EQ(one.world->LastStats().lanes_used, static_cast<int32_t>(one.kind->chains().size()));
  EXPECT_EQ(spread.kind->joint_count(), one.kind->joint_count());
}

TEST(VrmLanes, SpreadAndOneLaneLayoutsWriteTheSameBitsForEveryBone) {
  AvatarRun spread = Bound(true), one = Bound(false);
  ASSERT_TRUE(spread.avatar && one.avatar);
  const std::vector<Transform> rest = spread.avatar->output_world;
  for (int f = 0; f < 120; ++f) {
    Drive(spread, f);
    Drive(one, f);
  }
  const std::vector<Transform>& a = spread.avatar->output_world;
  const std::vector<Transform>& b = one.avatar->output_world;
  ASSERT_EQ(a.size(), b.size());
  // The hair moved (else equal bits would prove nothing): some tip is off its rest frame
  // carried by the head, by more than a centimetre.
  const std::vector<Transform> animated = [&] {
    std::vector<Transform> w(a.size());
    for (std::size_t k = 0; k < w.size(); ++k) {
      const int32_t p = spread.kind->skeleton().parents[k];
      w[k] = Compose(p >= 0 ? w[p] : spread.avatar->model_world, spread.avatar->animated_local[k]);
    }
    return w;
  }();
  float moved = 0;
  for (std::size_t k = 0; k < a.size(); ++k) moved = std::fmax(moved, Length(a[k].translation - animated[k].translation));
  EXPECT_GT(moved, 0.01f);
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(std::memcmp(&a[k], &b[k], sizeof(Transform)), 0) << "output_world of bone " << spread.kind->skeleton().names[k];
    EXPECT_EQ(std::memcmp(&spread.avatar->output_local[k], &one.avatar->output_local[k], sizeof(Transform)), 0)
        << "output_local of bone " << spread.kind->skeleton().names[k];
  }
}

// A strand whose shape no other strand has stays with the other such roots on its bone
// (one lane among them): a lane of its own would cost a chain's fixed work for one strand.
TEST(VrmLanes, AStrandOfAUniqueLengthStaysInTheOneLaneChainOfItsBone) {
  ports::GltfAsset asset = HairyHead();
  // Make strands 0 and 1 the only ones of their lengths: 11 and 12 joints.
  for (int s = 0; s < 2; ++s) {
    ports::VrmSpring& spring = asset.spring_bones.springs[s];
    for (int extra = 0; extra < 5 + s; ++extra) {
      const int32_t last = spring.joints.back().tail_bone;
      const auto tail = static_cast<int32_t>(asset.skeleton.parents.size());
      asset.skeleton.names.push_back("extra" + std::to_string(s) + "_" + std::to_string(extra));
      asset.skeleton.parents.push_back(last);
      asset.skeleton.rest_local.push_back(Transform{{0, -0.03f, 0}, {}, {1, 1, 1}});
      ports::VrmJoint j = spring.joints.back();
      j.bone = last;
      j.tail_bone = tail;
      j.parent = static_cast<int32_t>(spring.joints.size()) - 1;
      spring.joints.push_back(j);
    }
  }
  auto chains = ports::VrmChains(asset);
  ASSERT_TRUE(chains.ok()) << chains.error().message;
  int unique_chains = 0;
  for (const ports::VrmChain& chain : chains.value()) {
    int roots = 0;
    for (const ChainBone& b : chain.settings.bones) roots += b.parent < 0 ? 1 : 0;
    if (chain.settings.name.find("hair0:") == 0) {
      EXPECT_EQ(roots, 2) << "hair0 and hair1 share their one-lane chain: " << chain.settings.name;
      ++unique_chains;
    }
  }
  EXPECT_EQ(unique_chains, 1);
}

// The shared models' strands (Godette's 8 of one shape; the three-vrm examples' one per
// spring) were already a lane each or alone: strand_lanes leaves their chains as they were,
// so their traces and golden hashes stand.
TEST(VrmLanes, TheSharedModelsChainsAreTheSameWithOrWithoutStrandLanes) {
  TENDON_NEED_SHARED_DATA();
  for (const std::string& file : {std::string("vrm/godette/Godette_vrm_v4.vrm"),
                                  std::string("vrm/three-vrm-springbone-examples/sphere-collider.gltf"),
                                  std::string("vrm/three-vrm-springbone-examples/plane-collider.gltf"),
                                  std::string("vrm/three-vrm-springbone-examples/inside-collider.gltf")}) {
    auto asset = ports::ImportGltf(ports::SharedDataPath(file));
    ASSERT_TRUE(asset.ok()) << file << ": " << asset.error().message;
    auto spread = ports::VrmChains(asset.value(), true, true);
    auto one = ports::VrmChains(asset.value(), true, false);
    ASSERT_TRUE(spread.ok() && one.ok()) << file;
    ASSERT_EQ(spread.value().size(), one.value().size()) << file;
    for (std::size_t c = 0; c < one.value().size(); ++c) {
      EXPECT_EQ(spread.value()[c].bone_map, one.value()[c].bone_map) << file << " chain " << c;
      EXPECT_EQ(spread.value()[c].settings.name, one.value()[c].settings.name) << file << " chain " << c;
    }
  }
}

}  // namespace
}  // namespace tendon::test
