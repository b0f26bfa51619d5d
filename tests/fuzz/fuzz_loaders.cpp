// tests/fuzz/fuzz_loaders.cpp: every file loader in ports/ over arbitrary bytes. A loader
// may refuse a file (with a reason), never crash, hang, allocate absurdly or hit undefined
// behaviour (built with AddressSanitizer and UndefinedBehaviorSanitizer). The first byte
// picks the loader (mod 6: JSON, Jolt ragdoll, Jolt animation, VRM skeleton, glTF / VRM,
// device profile); the rest is the file. A glTF / VRM that imports goes on through
// VrmAvatarArchetype::Build, VrmAvatar::Bind, three animated frames, a knock-down
// (ActivateCharacter) and three ragdoll frames, with output_local and output_world checked
// finite after each. Seeds: tests/fuzz/corpus/loaders and the real assets in
// ../shared/data, Godette's VRM included (scripts/fuzz.sh).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "ports/device/device_profile_json.h"
#include "ports/gltf/gltf_import.h"
#include "ports/gltf/vrm_avatar.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/json/json.h"
#include "ports/vrm/vrm_skeleton.h"

namespace {

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

// The loaders read paths: one scratch file per process.
const std::string& ScratchPath() {
  static const std::string path = "/tmp/tendon_fuzz_loaders_" + std::to_string(getpid());
  return path;
}

void WriteScratch(const uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(ScratchPath().c_str(), "wb");
  if (f == nullptr) return;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0] % 6;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  using namespace tendon;
  // TENDON_FUZZ_TRACE=1 says how far an imported asset got (Build, Bind, the knock-down).
  static const bool trace = std::getenv("TENDON_FUZZ_TRACE") != nullptr;
  switch (which) {
    case 0: {
      const json::ParseResult parsed = json::Parse(text);
      fuzz::Require(parsed.ok || !parsed.error.empty(), "a JSON parse failure says why");
      break;
    }
    case 1: {
      WriteScratch(data + 1, size - 1);
      auto r = ports::LoadJoltHumanRagdoll(ScratchPath(), (data[0] & 4) != 0);
      fuzz::Require(r.ok() || !r.error().message.empty(), "a ragdoll file refused says why");
      break;
    }
    case 2: {
      WriteScratch(data + 1, size - 1);
      auto r = ports::LoadJoltAnimation(ScratchPath());
      if (r.ok()) {
        const ports::JoltAnimation& a = r.value();
        fuzz::Require(a.parents.size() == a.joints.size(), "one parent per joint");
        for (std::size_t j = 0; j < a.parents.size(); ++j)
          fuzz::Require(a.parents[j] < static_cast<int32_t>(j), "parents come first");
        fuzz::Require(a.keys.size() == a.joints.size() * a.key_times.size(), "keys sized from the file");
        std::vector<Transform> pose(a.joints.size());
        ports::SampleJoltAnimation(a, 0.5f, pose);
      } else {
        fuzz::Require(!r.error().message.empty(), "an animation refused says why");
      }
      break;
    }
    case 4: {
      // The glTF / VRM importer from memory: whatever it accepts is consistent.
      auto r = ports::ImportGltf(std::span<const uint8_t>(data + 1, size - 1), "fuzz.gltf", "/nonexistent");
      if (!r.ok()) {
        fuzz::Require(!r.error().message.empty(), "an asset refused says why");
        break;
      }
      const ports::GltfAsset& a = r.value();
      const auto bones = static_cast<int32_t>(a.skeleton.names.size());
      for (int32_t b = 0; b < bones; ++b) fuzz::Require(a.skeleton.parents[b] < b, "parents first");
      for (int32_t bone : a.bone_of_node) fuzz::Require(bone < bones, "nodes map to bones");
      for (const ports::GltfSkin& s : a.skins) {
        fuzz::Require(s.inverse_bind.size() == s.joints.size(), "one inverse bind matrix per joint");
        for (int32_t j : s.joints) fuzz::Require(j >= 0 && j < bones, "skin joints are bones");
      }
      for (const auto& h : a.humanoid) fuzz::Require(h.second >= 0 && h.second < bones, "humanoid bones are bones");
      const ports::VrmSpringBones& sb = a.spring_bones;
      for (const ports::VrmSpring& s : sb.springs) {
        for (std::size_t j = 0; j < s.joints.size(); ++j) {
          fuzz::Require(s.joints[j].bone >= 0 && s.joints[j].bone < bones, "joints are bones");
          fuzz::Require(s.joints[j].parent < static_cast<int32_t>(j), "joints parents first");
        }
        for (int32_t g : s.collider_groups) fuzz::Require(g >= 0 && g < static_cast<int32_t>(sb.collider_groups.size()), "groups exist");
      }
      for (const ports::VrmColliderGroup& g : sb.collider_groups)
        for (int32_t c : g.colliders) fuzz::Require(c >= 0 && c < static_cast<int32_t>(sb.colliders.size()), "colliders exist");
      std::vector<Transform> pose = a.skeleton.rest_local;
      for (const ports::GltfClip& clip : a.clips) {
        ports::SampleClip(clip, 0.5f * clip.duration, pose);
        for (const Transform& t : pose) fuzz::Require(IsFinite(t), "a sampled pose is finite");
      }
      // Whatever imports either becomes an avatar, or is refused saying why; a bound one
      // steps to finite poses.
      if (bones > 0 && bones <= 256) {
        auto world = World::Create(WorldSettings{}).value();
        auto kind = ports::VrmAvatarArchetype::Build(*world, a);
        if (trace) std::fprintf(stderr, "Build: %s\n", kind.ok() ? "built" : kind.error().message.c_str());
        if (!kind.ok()) {
          fuzz::Require(!kind.error().message.empty(), "an avatar refused says why");
          break;
        }
        auto avatar = ports::VrmAvatar::Bind(*world, kind.value(), Transform{});
        if (trace) std::fprintf(stderr, "Bind: %s\n", avatar.ok() ? "bound" : avatar.error().message.c_str());
        if (!avatar.ok()) {
          fuzz::Require(!avatar.error().message.empty(), "a bind refused says why");
          break;
        }
        ports::VrmAvatar& v = *avatar.value();
        const std::vector<int32_t> written = WorldWrittenBones(*kind.value());
        // Every buffer the avatar offers the host is finite from Bind on: output_world is
        // what a host skins from (hostile finding 2 was inf there with every local finite).
        fuzz::RequireFinite(v.output_local, "an avatar's bound local pose is finite");
        fuzz::RequireFinite(v.output_world, "an avatar's bound world pose is finite");
        // Three animated frames, then (with a character) a knock-down: activated with an
        // impulse from the input's last byte, three ragdoll frames, and handed back.
        const auto push = static_cast<float>(data[size - 1]) - 128.0f;
        for (int f = 0; f < 7; ++f) {
          v.model_world.translation.x = 0.1f * static_cast<float>(f);
          if (f == 3 && world->IsValid(v.character)) {
            Error why;
            const bool activated = world->ActivateCharacter(v.character, {.impulse = {push * 0.2f, 5, 0}}, &why);
            if (trace) std::fprintf(stderr, "ActivateCharacter: %s\n", activated ? "active" : why.message.c_str());
            if (!activated) fuzz::Require(!why.message.empty(), "a refused activation says why");
          }
          if (f == 6 && world->IsValid(v.character)) (void)world->DeactivateCharacter(v.character, 0.1f);
          if (!world->IsValid(v.character)) v.UpdateWorld();
          const FrameStats& stats = world->Step(1.0f / 60.0f);
          fuzz::RequireFinite(v.output_local, "an avatar's local pose is finite");
          fuzz::RequireFinite(v.output_world, "an avatar's world pose is finite");
          // (A frame that held a chain against bad input keeps its last good pose.)
          if (stats.snapped_bad_input == 0 && stats.reset_non_finite == 0)
            fuzz::RequireWorldFromLocal(written, a.skeleton.parents, v.model_world, v.output_local, v.output_world,
                                        "an avatar's output_world is not its output_local composed (simulated bones missing)");
        }
        fuzz::Require(v.Unbind().code == ErrorCode::kNone, "an avatar unbinds");
      }
      break;
    }
    case 5: {
      // A device profile: whatever is read passed validation, so a World takes it.
      auto r = ports::DeviceProfileFromJson(text, "fuzz.json");
      if (!r.ok()) {
        fuzz::Require(!r.error().message.empty() && !r.error().field.empty(), "a profile refused says where and why");
        break;
      }
      WorldSettings settings;
      settings.device_profile = &r.value();
      auto world = World::Create(settings);
      fuzz::Require(world.ok(), "a World takes every profile the reader accepts");
      break;
    }
    default: {
      WriteScratch(data + 1, size - 1);
      auto r = ports::LoadVrmSkeleton(ScratchPath());
      if (r.ok()) {
        const SkeletonSettings& s = r.value().skeleton;
        fuzz::Require(s.names.size() == s.parents.size() && s.parents.size() == s.rest_local.size(), "one of each per bone");
        for (std::size_t b = 0; b < s.parents.size(); ++b) fuzz::Require(s.parents[b] < static_cast<int32_t>(b), "parents first");
      }
      break;
    }
  }
  return 0;
}
