// tests/fuzz/fuzz_avatar.cpp: the surfaces a host reaches without a file. The first byte
// picks one:
//   - a hand-built GltfAsset (a humanoid with a hair spring, its skeleton, humanoid table,
//     skins, clips and springs bent by the input: parents out of order or out of range,
//     arrays of different lengths, transforms that overflow only when composed) through
//     VrmAvatarArchetype::Build, VrmAvatar::Bind, four frames, a knock-down and two more
//     frames, with output_local and output_world checked finite after each;
//   - device-profile writing: DeviceProfileToJson and SaveDeviceProfile with a machine name
//     of any bytes (not UTF-8 included) and any field values; what is written reads back.
// Nothing may crash, throw, or write a non-finite value into a host buffer; a refusal says
// why.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "ports/device/device_profile_json.h"
#include "ports/gltf/vrm_avatar.h"
#include "tendon/device_profile.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;
using fuzz::Finding;
using fuzz::FuzzInput;
using fuzz::Require;
using fuzz::RequireFinite;

// The bones an avatar's chains write into output_world (VrmAvatarArchetype's file note:
// a chain another chain reads, and bones below a simulated one, keep animated frames).
std::vector<int32_t> WorldWrittenBones(const tendon::ports::VrmAvatarArchetype& kind) {
  std::vector<int32_t> bones;
  for (std::size_t c = 0; c < kind.chains().size(); ++c)
    if (kind.chain_writes_world(c))
      for (int32_t b : kind.chains()[c].bone_map)
        if (b >= 0) bones.push_back(b);
  return bones;
}

// A T-posed humanoid (VRM's required bones) with three hair bones under the head.
struct BoneSpec {
  const char* name;
  int32_t parent;
  Vec3 at;
};
constexpr BoneSpec kBones[] = {
    {"hips", -1, {0, 0.9f, 0}},          {"spine", 0, {0, 0.1f, 0}},          {"chest", 1, {0, 0.15f, 0}},
    {"neck", 2, {0, 0.2f, 0}},           {"head", 3, {0, 0.1f, 0}},           {"leftUpperArm", 2, {0.18f, 0.15f, 0}},
    {"leftLowerArm", 5, {0.25f, 0, 0}},  {"leftHand", 6, {0.22f, 0, 0}},      {"rightUpperArm", 2, {-0.18f, 0.15f, 0}},
    {"rightLowerArm", 8, {-0.25f, 0, 0}}, {"rightHand", 9, {-0.22f, 0, 0}},   {"leftUpperLeg", 0, {0.09f, -0.05f, 0}},
    {"leftLowerLeg", 11, {0, -0.4f, 0}}, {"leftFoot", 12, {0, -0.4f, 0}},     {"rightUpperLeg", 0, {-0.09f, -0.05f, 0}},
    {"rightLowerLeg", 14, {0, -0.4f, 0}}, {"rightFoot", 15, {0, -0.4f, 0}},   {"hair1", 4, {0, 0.1f, -0.08f}},
    {"hair2", 17, {0, -0.08f, 0}},       {"hair3", 18, {0, -0.08f, 0}},
};
constexpr int32_t kBoneCount = static_cast<int32_t>(sizeof kBones / sizeof kBones[0]);
constexpr int32_t kHumanoidBones = 17;

// TENDON_FUZZ_TRACE=1 says what Build and Bind answered (to replay a finding).
bool Tracing() {
  static const bool trace = std::getenv("TENDON_FUZZ_TRACE") != nullptr;
  return trace;
}

ports::GltfAsset HandBuiltAsset(FuzzInput& in) {
  ports::GltfAsset a;
  a.name = "hand-built";
  a.vrm = ports::VrmVersion::k1;
  for (const BoneSpec& b : kBones) {
    a.skeleton.names.emplace_back(b.name);
    a.skeleton.parents.push_back(b.parent);
    a.skeleton.rest_local.push_back(Transform{b.at, {}, {1, 1, 1}});
    a.bone_of_node.push_back(static_cast<int32_t>(a.bone_of_node.size()));
  }
  for (int32_t b = 0; b < kHumanoidBones; ++b) a.humanoid.emplace_back(kBones[b].name, b);
  ports::VrmSpring spring;
  spring.name = "hair";
  for (int32_t j = 0; j < 3; ++j)
    spring.joints.push_back(ports::VrmJoint{.bone = 17 + j, .parent = j - 1, .tail_bone = j < 2 ? 18 + j : -1,
                                            .virtual_tip = {0, -0.07f, 0}, .hit_radius = 0.02f, .stiffness = 1});
  spring.collider_groups = {0};
  a.spring_bones.springs.push_back(spring);
  a.spring_bones.colliders.push_back(ports::VrmCollider{.bone = 4, .offset = {0, 0.08f, 0}, .radius = 0.1f});
  a.spring_bones.collider_groups.push_back(ports::VrmColliderGroup{.name = "head", .colliders = {0}});
  ports::GltfSkin skin;
  for (int32_t b = 0; b < kBoneCount; ++b) {
    skin.joints.push_back(b);
    skin.inverse_bind.push_back({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  }
  a.skins.push_back(skin);
  // Mutations, as many as the input asks for.
  for (int32_t m = in.Int(0, 8); m > 0 && !in.empty(); --m) {
    const int32_t b = in.Int(0, kBoneCount - 1);
    switch (in.Byte() % 12) {
      case 0: a.skeleton.parents[b] = in.Int(-3, kBoneCount + 2); break;  // out of order or range
      case 1: a.skeleton.parents.push_back(in.Int(-1, kBoneCount)); break;  // longer than rest_local
      case 2: a.skeleton.rest_local.pop_back(); break;
      case 3: a.skeleton.rest_local[b] = in.Pose(5); break;
      case 4: {
        // Each finite, overflowing when composed: a huge scale over a huge translation.
        a.skeleton.rest_local[b].scale = Vec3{1e30f, 1e30f, 1e30f} * in.Float(0, 1);
        const int32_t below = in.Int(b, kBoneCount - 1);
        a.skeleton.rest_local[below].translation = Vec3{3e38f, 1e10f, 0} * in.Float(-1, 1);
        break;
      }
      case 5: a.humanoid[static_cast<std::size_t>(in.Int(0, kHumanoidBones - 1))].second = in.Int(-2, kBoneCount + 2); break;
      case 6: {
        ports::VrmJoint& j = a.spring_bones.springs[0].joints[static_cast<std::size_t>(in.Int(0, 2))];
        j.bone = in.Int(-2, kBoneCount + 2);
        j.tail_bone = in.Int(-2, kBoneCount + 2);
        j.parent = in.Int(-2, 3);
        break;
      }
      case 7: {
        ports::VrmJoint& j = a.spring_bones.springs[0].joints[static_cast<std::size_t>(in.Int(0, 2))];
        j.stiffness = in.Float(-1, 4);
        j.drag_force = in.Float(-1, 2);
        j.gravity_power = in.Float(-1, 2);
        j.gravity_dir = in.Vec(-1, 1);
        j.hit_radius = in.Float(-0.1f, 0.5f);
        j.virtual_tip = in.Vec(-0.2f, 0.2f);
        break;
      }
      case 8: {
        ports::VrmCollider& c = a.spring_bones.colliders[0];
        c.bone = in.Int(-2, kBoneCount + 2);
        c.shape = static_cast<ports::VrmColliderShape>(in.Int(0, 2));
        c.inside = in.Bool();
        c.offset = in.Vec(-0.3f, 0.3f);
        c.tail = in.Vec(-0.3f, 0.3f);
        c.normal = in.Vec(-1, 1);
        c.radius = in.Float(-0.1f, 0.5f);
        if (in.Bool()) a.spring_bones.collider_groups[0].colliders.push_back(in.Int(-1, 2));
        if (in.Bool()) a.spring_bones.springs[0].collider_groups.push_back(in.Int(-1, 2));
        break;
      }
      case 9: {
        // A second spring sharing (or not) a bone with the first.
        ports::VrmSpring extra = a.spring_bones.springs[0];
        extra.joints.resize(static_cast<std::size_t>(in.Int(0, 3)));
        for (ports::VrmJoint& j : extra.joints) j.bone = in.Int(0, kBoneCount - 1);
        extra.center = in.Int(-2, kBoneCount);
        a.spring_bones.springs.push_back(extra);
        break;
      }
      case 10: {
        ports::GltfSkin& s = a.skins[0];
        s.joints[static_cast<std::size_t>(b)] = in.Int(-2, kBoneCount + 2);
        s.inverse_bind[static_cast<std::size_t>(b)][static_cast<std::size_t>(in.Int(0, 15))] = in.Float(-1e3f, 1e3f);
        if (in.Bool()) s.inverse_bind.pop_back();
        break;
      }
      default: {
        ports::GltfClip clip;
        clip.name = "clip";
        clip.duration = in.Float(0, 2);
        ports::GltfChannel ch;
        ch.bone = in.Int(-2, kBoneCount + 2);
        ch.path = static_cast<ports::GltfChannelPath>(in.Int(0, 3));
        ch.interpolation = static_cast<ports::GltfInterpolation>(in.Int(0, 2));
        ch.components = in.Int(0, 5);
        for (int32_t k = in.Int(0, 3); k > 0; --k) ch.times.push_back(in.Float(0, 2));
        for (int32_t k = in.Int(0, 12); k > 0; --k) ch.values.push_back(in.Float(-1, 1));
        clip.channels.push_back(ch);
        a.clips.push_back(clip);
        break;
      }
    }
  }
  return a;
}

void FuzzHandBuiltAvatar(FuzzInput& in) {
  auto world = World::Create(WorldSettings{}).value();
  (void)world->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}});
  ports::VrmAvatarOptions options;
  options.character = in.Byte() < 200;
  options.limit_source = in.Byte() < 32 ? LimitSource::kClips : LimitSource::kTable;
  options.total_mass = in.Byte() < 16 ? in.Float(-10, 100) : 60.0f;
  ports::GltfAsset asset = HandBuiltAsset(in);
  const std::vector<int32_t> parents = asset.skeleton.parents;
  const std::size_t rest_count = asset.skeleton.rest_local.size(), name_count = asset.skeleton.names.size();
  auto kind = ports::VrmAvatarArchetype::Build(*world, std::move(asset), options);
  if (Tracing()) std::fprintf(stderr, "Build: %s\n", kind.ok() ? "built" : kind.error().message.c_str());
  if (!kind.ok()) {
    Require(!kind.error().message.empty(), "a refused hand-built asset says why");
    return;
  }
  // What Build took is a skeleton Bind and UpdateWorld can walk: one parent and one rest
  // transform per bone, parents first (hostile finding 1: it took any).
  Require(parents.size() == name_count && rest_count == name_count, "Build took a skeleton whose arrays differ in length");
  for (std::size_t b = 0; b < parents.size(); ++b)
    Require(parents[b] < static_cast<int32_t>(b), "Build took a skeleton whose parents do not come first");
  // At a model frame any host may pass, Bind takes what Build took: a file's fault is
  // refused at Build, not at every Bind (hostile finding 3: a bone in two springs).
  const Transform model{Vec3{0.5f, 0, -0.5f}, AxisAngle(Vec3{0, 1, 0}, 0.3f), {1, 1, 1}};
  auto avatar = ports::VrmAvatar::Bind(*world, kind.value(), model);
  if (Tracing()) std::fprintf(stderr, "Bind: %s\n", avatar.ok() ? "bound" : avatar.error().message.c_str());
  if (!avatar.ok()) {
    Require(!avatar.error().message.empty(), "a refused avatar says why");
    Finding("Bind refused an avatar Build accepted, at a plain model frame");
  }
  avatar.value()->model_world = in.Pose(3);  // then anything the host writes
  ports::VrmAvatar& v = *avatar.value();
  const std::vector<int32_t> written = WorldWrittenBones(*kind.value());
  if (Tracing()) {
    for (int32_t b : written) std::fprintf(stderr, "written by a chain: bone %d\n", b);
    for (std::size_t b = 0; b < v.output_world.size(); ++b)
      std::fprintf(stderr, "bone %zu (parent %d): rest t %g %g %g s %g; world t %g %g %g\n", b, parents[b], v.animated_local[b].translation.x,
                   v.animated_local[b].translation.y, v.animated_local[b].translation.z, v.animated_local[b].scale.x,
                   v.output_world[b].translation.x, v.output_world[b].translation.y, v.output_world[b].translation.z);
  }
  RequireFinite(v.output_local, "a bound avatar's output_local");
  RequireFinite(v.output_world, "a bound avatar's output_world");
  for (int f = 0; f < 6; ++f) {
    if (in.Byte() < 32 && !v.animated_local.empty())
      v.animated_local[static_cast<std::size_t>(in.Int(0, static_cast<int32_t>(v.animated_local.size()) - 1))] = in.Pose(0.5f);
    if (f == 4 && world->IsValid(v.character)) {
      Error why;
      if (!world->ActivateCharacter(v.character, {.impulse = in.Vec(-50, 50)}, &why))
        Require(!why.message.empty(), "a refused activation says why");
    }
    if (!world->IsValid(v.character)) v.UpdateWorld();
    const FrameStats& stats = world->Step(1.0f / 60.0f);
    if (Tracing())
      for (std::size_t b = 0; b < v.animated_local.size(); ++b)
        if (v.animated_local[b].scale.x != 1 || v.animated_local[b].scale.y != 1 || v.animated_local[b].scale.z != 1)
          std::fprintf(stderr, "animated bone %zu scale %g %g %g\n", b, v.animated_local[b].scale.x, v.animated_local[b].scale.y,
                       v.animated_local[b].scale.z);
    if (Tracing())
      std::fprintf(stderr, "frame %d: simulated chains %d, sleeping %d, snapped (teleport %d, wake %d, bad input %d), reset %d\n", f,
                   stats.simulated_chains, stats.sleeping_chains, stats.snapped_teleport, stats.snapped_wake,
                   stats.snapped_bad_input, stats.reset_non_finite);
    if (Tracing() && !v.chains.empty()) {
      std::vector<Vec3> nodes(8);
      if (world->GetChainNodePositions(v.chains[0], nodes).code == ErrorCode::kNone)
        std::fprintf(stderr, "  chain node 0 at %g %g %g; character %s; head world %g %g %g; bone 17 world %g %g %g\n", nodes[0].x,
                     nodes[0].y, nodes[0].z, world->IsValid(v.character) ? "bound" : "none", v.output_world[4].translation.x,
                     v.output_world[4].translation.y, v.output_world[4].translation.z, v.output_world[17].translation.x,
                     v.output_world[17].translation.y, v.output_world[17].translation.z);
    }
    RequireFinite(v.output_local, "an avatar's output_local after Step");
    RequireFinite(v.output_world, "an avatar's output_world after Step");
    // A frame that held a chain against bad input (a degenerate frame the host wrote) keeps
    // the last good pose under the new, bad parent: nothing to compose there.
    // A scale that is not uniform and positive on the way (zero, mirrored, or different per
    // axis) makes TRS composition lossy (shear and mirror have no TRS), so two orders of
    // composing the same frames differ by more than rounding: the check needs rigid frames.
    bool uniform_positive_scale = true;
    for (const Transform& t : v.animated_local) {
      const Vec3 sc = t.scale;
      uniform_positive_scale &= sc.x > 1e-3f && std::fabs(sc.y - sc.x) <= 1e-4f * sc.x && std::fabs(sc.z - sc.x) <= 1e-4f * sc.x;
    }
    const Vec3 ms = v.model_world.scale;
    uniform_positive_scale &= ms.x > 1e-3f && std::fabs(ms.y - ms.x) <= 1e-4f * ms.x && std::fabs(ms.z - ms.x) <= 1e-4f * ms.x;
    if (stats.snapped_bad_input == 0 && stats.reset_non_finite == 0 && uniform_positive_scale)
      fuzz::RequireWorldFromLocal(written, parents, v.model_world, v.output_local, v.output_world,
                                  "an avatar's output_world is not its output_local composed (simulated bones missing)");
  }
  Require(v.Unbind().code == ErrorCode::kNone, "an avatar unbinds");
}

const std::string& ScratchPath() {
  static const std::string path = "/tmp/tendon_fuzz_avatar_" + std::to_string(getpid()) + ".json";
  return path;
}

void FuzzDeviceProfileWriting(FuzzInput& in) {
  DeviceProfile p;
  const int32_t machine_bytes = in.Int(0, 48);
  for (int32_t k = 0; k < machine_bytes; ++k) p.machine.push_back(static_cast<char>(in.Byte()));
  p.version = in.Byte() < 16 ? in.Int(-2, 3) : DeviceProfile::kVersion;
  p.tier = static_cast<DeviceTier>(in.Int(0, 4));
  p.best_isa = static_cast<Isa>(in.Int(0, 8));
  p.useful_workers = in.Int(-1, 64);
  p.compute = in.Float(0, 4);
  p.chain_compute = in.Float(0, 4);
  p.rigid_compute = in.Float(0, 4);
  p.max_chains = in.Int(-1, 5000);
  p.max_distance = in.Float(0, 200);
  p.max_active_characters = in.Int(-1, 64);
  p.ragdoll_substeps = in.Int(0, 65);
  p.fixed_hz = in.Float(0, 1000);
  for (int32_t m = in.Int(0, 3); m > 0; --m) {
    DeviceMeasurement dm;
    dm.isa = static_cast<Isa>(in.Int(0, 8));
    dm.workers = in.Int(-1, 64);
    dm.axes = {in.Float(0, 1e6f), in.Float(0, 1e6f), in.Float(0, 1e6f), in.Float(0, 1e6f)};
    p.measurements.push_back(dm);
  }
  // Writing never throws (an exception here aborts the target: a finding), whatever the
  // profile holds; what it writes is JSON a reader takes or refuses with a reason.
  const std::string text = ports::DeviceProfileToJson(p);
  Require(!text.empty(), "a profile writes something");
  auto back = ports::DeviceProfileFromJson(text, "written");
  if (back.ok()) {
    Require(back.value().max_chains == p.max_chains && back.value().ragdoll_substeps == p.ragdoll_substeps,
            "a profile read back keeps its budgets");
  } else {
    Require(!back.error().message.empty(), "a written profile refused on reading says why");
  }
  const Error saved = ports::SaveDeviceProfile(p, ScratchPath());
  if (saved.code == ErrorCode::kNone) {
    auto loaded = ports::LoadDeviceProfile(ScratchPath());
    Require(loaded.ok() == back.ok(), "a saved profile loads as its text reads");
  }
  // A directory and a path under a missing directory are I/O errors, not exceptions.
  Require(ports::SaveDeviceProfile(p, "/tmp").code != ErrorCode::kNone, "a profile saved over a directory");
  Require(ports::SaveDeviceProfile(p, "/nonexistent-tendon-dir/p.json").code != ErrorCode::kNone,
          "a profile saved under a missing directory");
  std::remove(ScratchPath().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  if (in.Byte() % 4 == 3) {
    FuzzDeviceProfileWriting(in);
  } else {
    FuzzHandBuiltAvatar(in);
  }
  return 0;
}
