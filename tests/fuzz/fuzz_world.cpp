// tests/fuzz/fuzz_world.cpp: a bound world (a chain, a kVrm chain, a pendulum, ragdolls, a character)
// driven by hostile frames: dt of any float, host poses of any float, a hostile camera,
// stale and forged handles, and the World's calls in random order. After every call and
// every Step, nothing Tendon writes or returns may be non-finite.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
  ChainArchetypeSettings strand;
  ChainArchetypeId chain_archetype{};
  Transform root{};
  std::vector<Transform> chain_animated, chain_output, chain_output_moved;
  std::vector<Transform> collider_frames = std::vector<Transform>(1);
  ChainId chain{};
  // A kVrm chain (VRM's rule, a virtual tip, a collider) whose root hangs from host frame 0
  // (ChainBone::parent_frame), where its collider sits too.
  ChainArchetypeSettings vrm_strand;
  std::vector<Transform> vrm_animated, vrm_output;
  ChainId vrm_chain{};
  Transform joint{{0, 1, 0}, {}, {1, 1, 1}}, offset{{0, -0.2f, 0}, {}, {1, 1, 1}};
  PendulumId pendulum{};
  RagdollArchetypeId limb{};
  std::vector<std::vector<Transform>> limb_out = std::vector<std::vector<Transform>>(3, std::vector<Transform>(2));
  std::vector<RagdollId> ragdolls;
  Transform kinematic{{0, 2, 0}, {}, {1, 1, 1}};
  CharacterArchetypeId man{};
  Transform model{{2, 0, 0}, {}, {1, 1, 1}};
  std::vector<Transform> man_animated, man_output, man_world;
  CharacterId character{};

  // The first byte picks the world: render interpolation on or off, and the bounded
  // depenetration at its default, slow, or off.
  explicit Scene(uint8_t flags) {
    WorldSettings ws;
    ws.render_interpolation = (flags & 1) == 0;
    ws.ragdoll_max_push_speed = (flags & 6) == 2 ? 0.2f : ((flags & 6) == 4 ? INFINITY : 1.0f);
    auto created = World::Create(ws);
    Require(created.ok(), "the default world builds");
    world = std::move(created.value());
    Require(world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}).code == ErrorCode::kNone, "static");
    for (int i = 0; i < 5; ++i) strand.bones.push_back(ChainBone{i - 1, Transform{{i == 0 ? 0.0f : 0.08f, 0, 0}, {}, {1, 1, 1}}});
    strand.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 0, .radius = 0.05f});
    chain_archetype = world->BuildChainArchetype(strand).value();
    for (const ChainBone& b : strand.bones) chain_animated.push_back(b.rest_local);
    chain_output = chain_animated;
    BindChain();
    vrm_strand.model = ChainModel::kVrm;
    vrm_strand.settings.stiffness = 2.0f;
    vrm_strand.settings.gravity_push = {0, -0.5f, 0};
    for (int i = 0; i < 3; ++i) {
      ChainBone b{i - 1, Transform{{0, i == 0 ? 0.0f : -0.1f, 0}, {}, {1, 1, 1}}};
      b.virtual_tip = i == 2;
      if (i == 0) b.parent_frame = 0;  // its root hangs from host frame 0, not the root
      vrm_strand.bones.push_back(b);
    }
    vrm_strand.colliders.push_back({.shape = ColliderShape::kSphere, .bone = -1, .frame = 0, .a = {0, -0.2f, 0.05f}, .radius = 0.05f});
    const ChainArchetypeId vrm_archetype = world->BuildChainArchetype(vrm_strand).value();
    for (const ChainBone& b : vrm_strand.bones) vrm_animated.push_back(b.rest_local);
    vrm_output = vrm_animated;
    vrm_chain = BindOnRoot(vrm_archetype, vrm_animated, vrm_output);
    PendulumBinding pb;
    pb.joint_world = &joint;
    pb.accessory_offset = &offset;
    pendulum = world->BindPendulum(pb).value();
    RagdollSettings limb_settings;
    for (int j = 0; j < 2; ++j) {
      PartSettings p;
      p.parent = j - 1;
      p.pose.translation = {0, 1.0f - 0.3f * j, 0};
      p.joint.anchor = {0, 1.15f - 0.3f * j, 0};
      limb_settings.parts.push_back(p);
    }
    limb = world->BuildRagdollArchetype(limb_settings).value();
    for (int i = 0; i < 3; ++i) BindLimb(i);
    man = world->BuildCharacterArchetype(test::StickmanCharacter()).value();
    man_animated = test::StickmanSkeleton().rest_local;
    man_output = man_animated;
    man_world.resize(man_animated.size());
    BindMan();
  }
  // A chain on the scene's root and collider frames.
  ChainId BindOnRoot(ChainArchetypeId archetype, std::span<const Transform> animated, std::span<Transform> output) {
    ChainBinding b;
    b.archetype = archetype;
    b.root_parent_world = &root;
    b.animated_local = animated;
    b.output_local = output;
    b.collider_frames = collider_frames;
    return world->BindChain(b).value();
  }
  void BindChain() { chain = BindOnRoot(chain_archetype, chain_animated, chain_output); }
  void BindLimb(int i) {
    RagdollBinding b;
    b.archetype = limb;
    b.placement.translation = {static_cast<float>(i) * 0.3f, 0.5f, 0};
    b.output_parts = limb_out[i];
    if (i == 2) b.kinematic_root = &kinematic;
    if (ragdolls.size() <= static_cast<std::size_t>(i)) ragdolls.resize(i + 1);
    ragdolls[i] = world->BindRagdoll(b).value();
  }
  void BindMan() {
    CharacterBinding b;
    b.archetype = man;
    b.model_world = &model;
    b.animated_local = man_animated;
    b.output_local = man_output;
    b.output_world = man_world;
    character = world->BindCharacter(b).value();
  }
  void Trace(int op, int call) const {
    std::fprintf(stderr, "op %d: call %d; kinematic root t %g %g %g q %g %g %g %g s %g %g %g\n", op, call,
                 kinematic.translation.x, kinematic.translation.y, kinematic.translation.z, kinematic.rotation.x,
                 kinematic.rotation.y, kinematic.rotation.z, kinematic.rotation.w, kinematic.scale.x, kinematic.scale.y,
                 kinematic.scale.z);
    for (std::size_t i = 0; i < limb_out.size(); ++i)
      for (const Transform& t : limb_out[i])
        std::fprintf(stderr, "  limb %zu: t %g %g %g q %g %g %g %g\n", i, t.translation.x, t.translation.y, t.translation.z,
                     t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
  }
  void CheckOutputs() const {
    RequireFinite(chain_output, "a chain output");
    RequireFinite(vrm_output, "a kVrm chain output");
    std::vector<Vec3> vrm_nodes(vrm_strand.bones.size());
    if (world->GetChainNodePositions(vrm_chain, vrm_nodes).code == ErrorCode::kNone)
      for (const Vec3& p : vrm_nodes) Require(IsFinite(p), "a kVrm chain query");
    for (const auto& parts : limb_out) RequireFinite(parts, "a ragdoll output");
    RequireFinite(man_output, "a character's local output");
    RequireFinite(man_world, "a character's world output");
    Require(IsFinite(offset), "a pendulum's offset");
    std::vector<Vec3> nodes(strand.bones.size());
    if (world->GetChainNodePositions(chain, nodes).code == ErrorCode::kNone)
      for (const Vec3& p : nodes) Require(IsFinite(p), "a chain query");
    for (RagdollId id : ragdolls) {
      std::vector<Vec3> v(2), w(2);
      if (world->GetRagdollVelocities(id, v, w).code == ErrorCode::kNone)
        for (int j = 0; j < 2; ++j) Require(IsFinite(v[j]) && IsFinite(w[j]), "a ragdoll velocity query");
    }
    CharacterState st;
    if (world->GetCharacterState(character, &st).code == ErrorCode::kNone)
    {
      Require(IsFinite(st.root), "a character state query: root");
      Require(IsFinite(st.root_velocity), "a character state query: root velocity");
      Require(std::isfinite(st.speed) && std::isfinite(st.heading_degrees), "a character state query: speed or heading");
    }
  }
};

// A handle that is live, stale, or forged, picked by the fuzzer.
template <class Id>
Id Handle(FuzzInput& in, Id live) {
  switch (in.Byte() % 4) {
    case 0: return Id{};
    case 1: return Id{live.index, live.generation + 1};
    case 2: return Id{static_cast<uint32_t>(in.Int(0, 1 << 20)), static_cast<uint32_t>(in.Int(0, 3))};
    default: return live;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  Scene s(in.Byte());
  // TENDON_FUZZ_TRACE=1 prints each call and the ragdoll outputs after it (to replay a finding).
  static const bool trace = std::getenv("TENDON_FUZZ_TRACE") != nullptr;
  for (int op = 0; op < 64 && !in.empty(); ++op) {
    World& w = *s.world;
    const int call = in.Byte() % 16;
    if (trace) s.Trace(op, call);
    switch (call) {
      case 0: {
        const float dt = in.Float(0, 0.1f);
        if (trace) std::fprintf(stderr, "  Step(%g)\n", dt);
        w.Step(dt);
        if (trace) s.Trace(op, -1);
        break;
      }
      case 1: (in.Bool() ? s.root : s.collider_frames[0]) = in.Pose(3); break;
      case 2: {
        const Transform pose = in.Pose(0.2f);
        const int32_t k = in.Int(0, 4);
        s.chain_animated[k] = pose;
        if (k < 2) s.vrm_animated[k] = pose;  // the kVrm chain's host bones (its tip has none)
        break;
      }
      case 3: s.joint = in.Pose(3); break;
      case 4: w.SetCamera(in.Vec(-50, 50)); break;
      case 5: s.model = in.Pose(3); break;
      case 6: s.man_animated[in.Int(0, static_cast<int32_t>(s.man_animated.size()) - 1)] = in.Pose(0.5f); break;
      case 7: s.kinematic = in.Pose(3); break;
      case 8: (void)w.ApplyRagdollImpulse(Handle(in, s.ragdolls[in.Int(0, 2)]), in.Int(-1, 2), in.Vec(-100, 100), in.Vec(-2, 2)); break;
      case 9: (void)w.SetRagdollEnabled(Handle(in, s.ragdolls[in.Int(0, 2)]), in.Bool()); break;
      case 10: (void)w.ActivateCharacter(Handle(in, s.character), {.impulse = in.Vec(-50, 50), .strength = in.Float(0, 1)}); break;
      case 11:
        (void)w.DeactivateCharacter(Handle(in, s.character), in.Float(0, 1), static_cast<HandBackSpace>(in.Int(0, 3)));
        break;
      case 12: (void)w.HitCharacter(Handle(in, s.character), in.Int(-1, 10), in.Vec(-30, 30), in.Vec(-2, 2)); break;
      case 13: (void)w.GoLimp(Handle(in, s.character), in.Float(0, 1)); break;
      case 14: {
        const std::vector<Quat> targets = {Quat{}, in.Rotation()};
        (void)w.SetRagdollMotorTargets(Handle(in, s.ragdolls[in.Int(0, 2)]), targets, in.Float(0, 1));
        break;
      }
      default: {
        // Rebinding churn: unbind and bind again (a stale handle is then refused). Binding
        // refuses non-finite input, so the host's buffers are made sane first.
        const int32_t which = in.Int(0, 2);
        s.root = Transform{};
        s.collider_frames[0] = Transform{};
        for (std::size_t k = 0; k < s.chain_animated.size(); ++k) s.chain_animated[k] = s.strand.bones[k].rest_local;
        for (std::size_t k = 0; k < s.vrm_animated.size(); ++k) s.vrm_animated[k] = s.vrm_strand.bones[k].rest_local;
        s.model = Transform{{2, 0, 0}, {}, {1, 1, 1}};
        const std::vector<Transform> rest = test::StickmanSkeleton().rest_local;
        std::copy(rest.begin(), rest.end(), s.man_animated.begin());  // in place: the binding reads this buffer
        if (which == 0 && w.UnbindChain(s.chain).code == ErrorCode::kNone) s.BindChain();
        if (which == 1 && w.UnbindRagdoll(s.ragdolls[0]).code == ErrorCode::kNone) s.BindLimb(0);
        if (which == 2 && w.UnbindCharacter(s.character).code == ErrorCode::kNone) s.BindMan();
        // And a move to new buffers that keeps the state (ECS chunk moves).
        if (in.Bool()) {
          s.chain_output_moved = s.chain_output;
          ChainBinding b;
          b.archetype = s.chain_archetype;
          b.root_parent_world = &s.root;
          b.animated_local = s.chain_animated;
          b.output_local = s.chain_output_moved;
          b.collider_frames = s.collider_frames;
          // Swapping the vectors swaps their storage: chain_output names the bound one again.
          if (w.RebindChain(s.chain, b).code == ErrorCode::kNone) s.chain_output.swap(s.chain_output_moved);
        }
        break;
      }
    }
    s.CheckOutputs();
  }
  s.world->Step(1.0f / 60.0f);
  s.CheckOutputs();
  return 0;
}
