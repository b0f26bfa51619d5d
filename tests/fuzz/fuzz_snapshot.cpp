// tests/fuzz/fuzz_snapshot.cpp: World::RestoreState (and the per-instance restores) fed
// arbitrary bytes, on a small bound world (two limbs, a chain, a pendulum, a character).
//
// The first byte picks how the rest is used:
//   0   the bytes as they are (the header's checks: magic, version, kind, length, checksum)
//   1   a valid saved state of the world with the input's bytes XORed in at input-chosen
//       places and its checksum made right again, so the readers behind the checksum see
//       every kind of corruption (counts, tags, lengths, NaNs, flags)
//   2   the same for one ragdoll's saved state, restored into the other limb
// A refused restore must leave StateHash as it was; an accepted one must leave nothing
// non-finite: the velocities, the chain's nodes, and every pose the next Step writes.
// After each input the world is put back from its valid state.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "fuzz_input.h"
#include "stickman_rig.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;
using fuzz::FuzzInput;
using fuzz::Require;
using fuzz::RequireFinite;

struct Scene {
  std::unique_ptr<World> world;
  std::vector<Transform> chain_animated, chain_output;
  Transform root{};
  ChainId chain{};
  Transform joint{{0, 1, 0}, {}, {1, 1, 1}}, offset{{0, -0.2f, 0}, {}, {1, 1, 1}};
  std::vector<std::vector<Transform>> limb_out = std::vector<std::vector<Transform>>(2, std::vector<Transform>(2));
  std::vector<RagdollId> limbs;
  SkeletonSettings skeleton;
  Transform model{{2, 0, 0}, {}, {1, 1, 1}};
  std::vector<Transform> man_output;
  CharacterId character{};
  std::vector<std::byte> valid, valid_limb;

  Scene() {
    world = World::Create(WorldSettings{}).value();
    ChainArchetypeSettings strand;
    for (int i = 0; i < 4; ++i) {
      ChainBone b;
      b.parent = i - 1;
      b.rest_local.translation = i == 0 ? Vec3{} : Vec3{0.1f, 0, 0};
      strand.bones.push_back(b);
    }
    chain_animated.resize(4);
    for (int i = 0; i < 4; ++i) chain_animated[i] = strand.bones[i].rest_local;
    chain_output = chain_animated;
    ChainBinding cb;
    cb.archetype = world->BuildChainArchetype(strand).value();
    cb.root_parent_world = &root;
    cb.animated_local = chain_animated;
    cb.output_local = chain_output;
    chain = world->BindChain(cb).value();
    PendulumBinding pb;
    pb.joint_world = &joint;
    pb.accessory_offset = &offset;
    (void)world->BindPendulum(pb).value();
    Require(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).ok(), "static world");
    RagdollSettings limb;
    for (int j = 0; j < 2; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * j, 0};
      p.joint.anchor = {0, 1.15f - 0.3f * j, 0};
      limb.parts.push_back(p);
    }
    const RagdollArchetypeId limb_id = world->BuildRagdollArchetype(limb).value();
    for (int i = 0; i < 2; ++i) {
      RagdollBinding rb;
      rb.archetype = limb_id;
      rb.placement.translation = {static_cast<float>(i) * 0.3f, 1.0f + 0.5f * static_cast<float>(i), 0};
      rb.output_parts = limb_out[i];
      limbs.push_back(world->BindRagdoll(rb).value());
    }
    skeleton = tendon::test::StickmanSkeleton();
    man_output = skeleton.rest_local;
    CharacterBinding chb;
    chb.archetype = world->BuildCharacterArchetype(tendon::test::StickmanCharacter()).value();
    chb.model_world = &model;
    chb.animated_local = skeleton.rest_local;
    chb.output_local = man_output;
    character = world->BindCharacter(chb).value();
    (void)world->ActivateCharacter(character, {.strength = 1.0f, .anchored = true});
    for (int f = 0; f < 20; ++f) world->Step(1.0f / 60.0f);
    valid.resize(world->SavedStateSize());
    Require(world->SaveState(valid).ok(), "a saved state of the fuzz world");
    valid_limb.resize(world->SavedRagdollStateSize(limbs[0]));
    Require(world->SaveRagdollState(limbs[0], valid_limb).ok(), "a saved ragdoll state");
  }

  void RequireFiniteState() {
    for (const RagdollId r : limbs) {
      Vec3 v[2], w[2];
      Require(world->GetRagdollVelocities(r, v, w).ok(), "velocities");
      for (int j = 0; j < 2; ++j) {
        Require(std::isfinite(v[j].x) && std::isfinite(v[j].y) && std::isfinite(v[j].z) && std::isfinite(w[j].x) &&
                    std::isfinite(w[j].y) && std::isfinite(w[j].z),
                "a restored ragdoll's velocity is not finite");
      }
    }
    Vec3 nodes[4];
    if (world->GetChainNodePositions(chain, nodes).ok()) {
      for (const Vec3& n : nodes) {
        Require(std::isfinite(n.x) && std::isfinite(n.y) && std::isfinite(n.z), "a restored chain node is not finite");
      }
    }
  }
};

Scene& TheScene() {
  static Scene scene;
  return scene;
}

// The payload's FNV-1a 64 into the header (bytes 24..31), as a save writes it.
void FixChecksum(std::vector<std::byte>& bytes) {
  if (bytes.size() < kSnapshotHeaderBytes) return;
  uint64_t h = 1469598103934665603ull;
  for (std::size_t i = kSnapshotHeaderBytes; i < bytes.size(); ++i) {
    h ^= static_cast<uint64_t>(bytes[i]);
    h *= 1099511628211ull;
  }
  for (int i = 0; i < 8; ++i) bytes[24 + i] = static_cast<std::byte>(h >> (8 * i));
}

// XORs the input's bytes into `bytes`: a place (two bytes), then a value, repeatedly.
void Corrupt(FuzzInput& in, std::vector<std::byte>& bytes) {
  while (!in.empty() && !bytes.empty()) {
    const auto at = static_cast<std::size_t>(in.Int(0, 65535)) % bytes.size();
    bytes[at] ^= static_cast<std::byte>(in.Byte());
  }
  FixChecksum(bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Scene& s = TheScene();
  FuzzInput in(data, size);
  const uint8_t mode = in.Byte() % 3;
  const uint64_t before = s.world->StateHash();
  Error e;
  if (mode == 0) {
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    e = s.world->RestoreState(std::span<const std::byte>(bytes, size).subspan(size > 0 ? 1 : 0));
  } else if (mode == 1) {
    std::vector<std::byte> bytes = s.valid;
    Corrupt(in, bytes);
    e = s.world->RestoreState(bytes);
  } else {
    std::vector<std::byte> bytes = s.valid_limb;
    Corrupt(in, bytes);
    e = s.world->RestoreRagdollState(s.limbs[1], bytes);
  }
  if (!e.ok()) {
    Require(s.world->StateHash() == before, "a refused restore changed the world");
    Require(!e.message.empty() && !e.field.empty(), "a refusal without a field or a reason");
  } else {
    s.RequireFiniteState();
    s.world->Step(1.0f / 60.0f);
    s.RequireFiniteState();
    RequireFinite(s.chain_output, "chain output after a restore");
    RequireFinite(s.man_output, "character output after a restore");
    for (const auto& out : s.limb_out) RequireFinite(out, "ragdoll output after a restore");
  }
  Require(s.world->RestoreState(s.valid).ok(), "the valid state restores");
  return 0;
}
