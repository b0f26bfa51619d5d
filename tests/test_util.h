// tests/test_util.h: small rigs shared by the test suites.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tendon/tendon.h"

namespace tendon::test {

// A straight strand of `nodes` bones hanging from its root along `direction`.
inline ChainArchetypeSettings Strand(int nodes, float segment = 0.1f, Vec3 direction = {1, 0, 0}) {
  ChainArchetypeSettings s;
  s.name = "strand";
  for (int i = 0; i < nodes; ++i) {
    ChainBone bone;
    bone.parent = i - 1;
    bone.rest_local.translation = i == 0 ? Vec3{} : direction * segment;
    s.bones.push_back(bone);
  }
  return s;
}

// The host side of one chain instance: buffers Tendon reads and writes.
struct HostChain {
  Transform root_parent{};
  std::vector<Transform> animated;
  std::vector<Transform> output;
  std::vector<Transform> collider_frames;

  explicit HostChain(const ChainArchetypeSettings& s, Vec3 position = {}) {
    root_parent.translation = position;
    for (const ChainBone& b : s.bones) animated.push_back(b.rest_local);
    output = animated;
  }
  ChainBinding Binding(ChainArchetypeId archetype) {
    ChainBinding b;
    b.archetype = archetype;
    b.root_parent_world = &root_parent;
    b.animated_local = animated;
    b.output_local = output;
    b.collider_frames = collider_frames;
    return b;
  }
};

inline std::unique_ptr<World> MakeWorld(WorldSettings s = {}) {
  auto r = World::Create(s);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : nullptr;
}

inline std::vector<Vec3> Positions(const World& w, ChainId id, int n) {
  std::vector<Vec3> p(n);
  EXPECT_EQ(w.GetChainNodePositions(id, p).code, ErrorCode::kNone);
  return p;
}

}  // namespace tendon::test
