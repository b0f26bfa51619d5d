// ports/c/c_assets.cpp: the C ABI's asset loaders: glTF / VRM files (ports/gltf/gltf_import.h:
// skeleton, skins, clips, the humanoid, clip sampling) and the Jolt "Human" ragdoll and its
// animations (ports/jolt_human/jolt_human.h), as opaque objects the host owns.
//
// Each object holds the C++ result and the C views it lends: the character and ragdoll
// settings it fills point into vectors the object keeps (names as C strings, parts as
// TendonPartSettings made by the ragdoll's mirror tables), so a host builds from them with
// the ordinary calls and the mirrors carry every field both ways.
// What it does NOT do: parse anything itself (the ports do, naming the file, element and
// why), or touch a world: these objects are independent of worlds.
// Threading: none of its own; one call per object at a time, objects on any thread.
// Memory: loading allocates the object; queries and sampling allocate nothing.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ports/c/c_port.h"
#include "ports/gltf/gltf_import.h"
#include "ports/jolt_human/jolt_human.h"

struct TendonGltfAsset {
  tendon::ports::GltfAsset asset;
  std::vector<const char*> bone_names;       // into asset.skeleton.names
  std::vector<TendonHumanoidBone> humanoid;  // roles into asset.humanoid
};

struct TendonJoltRagdoll {
  tendon::RagdollSettings settings;
  std::vector<TendonPartSettings> parts;  // names into settings.parts
  std::vector<int32_t> pairs;             // two part indices per self-collision pair
};

struct TendonJoltAnimation {
  tendon::ports::JoltAnimation animation;
  tendon::SkeletonSettings skeleton;  // JoltSkeleton: the first key as the rest pose
  tendon::SampledClip clip;           // JoltClip: every key a frame
  std::vector<const char*> bone_names;
};

namespace tendon::ports::capi {
namespace {

// A loader's refusal: the file's own words; a file that cannot be read is I/O.
// A loader's refusal as it is: ErrorCode::kIo becomes TENDON_ERROR_IO (Record maps it).
TendonResult RecordLoad(const Error& e) { return Record(nullptr, e); }
bool InRange(int32_t i, std::size_t n) { return i >= 0 && static_cast<std::size_t>(i) < n; }
// Messages are formatted with snprintf: std::to_string's inline digit table is a unique
// global that hidden visibility cannot hide, and the library exports tendon_* alone.
TendonResult WrongCount(const char* field, int32_t want) {
  char text[160];
  std::snprintf(text, sizeof text, "%s must be non-NULL and hold %d entries", field, static_cast<int>(want));
  return Refuse(nullptr, TENDON_ERROR_NULL_BUFFER, field, text + std::strlen(field));
}
TendonResult NoSuch(const char* field, int32_t item) {
  char text[160];
  std::snprintf(text, sizeof text, "no %s %d", field, static_cast<int>(item));
  return Record(nullptr, TENDON_ERROR_BAD_REFERENCE, text, field, item);
}
TendonResult TakeGltf(Result<GltfAsset> imported, TendonGltfAsset** out) {
  if (!imported.ok()) return RecordLoad(imported.error());
  auto a = std::make_unique<TendonGltfAsset>();
  a->asset = std::move(imported).value();
  for (const std::string& n : a->asset.skeleton.names) a->bone_names.push_back(n.c_str());
  for (const auto& [role, bone] : a->asset.humanoid) a->humanoid.push_back(TendonHumanoidBone{role.c_str(), bone});
  *out = a.release();
  return TENDON_OK;
}
// Points a C character settings' skeleton at a skeleton and its C names.
void LendSkeleton(const SkeletonSettings& s, const std::vector<const char*>& names, TendonCharacterSettings* c) {
  c->bone_count = static_cast<int32_t>(s.names.size());
  c->bone_names = names.data();
  c->bone_parents = s.parents.data();
  c->bone_rest_local = ConvertOut<const TendonTransform*>(s.rest_local.data());
}

}  // namespace
}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

// ---- glTF / VRM ----

TendonResult tendon_gltf_import(const char* path, TendonGltfAsset** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (TendonResult r = CheckReadable(path, "path"); r != TENDON_OK) return r;
  return Guard(nullptr, [&] { return TakeGltf(tendon::ports::ImportGltf(std::string(path)), out); });
}
TendonResult tendon_gltf_import_from_memory(const void* bytes, size_t size, const char* name, TendonGltfAsset** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (bytes == nullptr && size > 0) return NullArgument(nullptr, "bytes");
  return Guard(nullptr, [&] {
    const std::span<const uint8_t> view(static_cast<const uint8_t*>(bytes), bytes != nullptr ? size : 0);
    return TakeGltf(tendon::ports::ImportGltf(view, name != nullptr ? name : "memory"), out);
  });
}
void tendon_gltf_asset_destroy(TendonGltfAsset* asset) { delete asset; }

int32_t tendon_gltf_asset_bone_count(const TendonGltfAsset* a) {
  return a != nullptr ? static_cast<int32_t>(a->bone_names.size()) : 0;
}
const char* tendon_gltf_asset_bone_name(const TendonGltfAsset* a, int32_t bone) {
  return a != nullptr && InRange(bone, a->bone_names.size()) ? a->bone_names[bone] : nullptr;
}
int32_t tendon_gltf_asset_bone_parent(const TendonGltfAsset* a, int32_t bone) {
  return a != nullptr && InRange(bone, a->asset.skeleton.parents.size()) ? a->asset.skeleton.parents[bone] : -2;
}
TendonResult tendon_gltf_asset_rest_local(const TendonGltfAsset* a, TendonTransform* out, int32_t count) {
  if (a == nullptr) return NullArgument(nullptr, "asset");
  const auto& rest = a->asset.skeleton.rest_local;
  if (out == nullptr || count != static_cast<int32_t>(rest.size())) return WrongCount("out", static_cast<int32_t>(rest.size()));
  for (std::size_t i = 0; i < rest.size(); ++i) out[i] = ToC(rest[i]);
  return TENDON_OK;
}
int32_t tendon_gltf_asset_skin_count(const TendonGltfAsset* a) {
  return a != nullptr ? static_cast<int32_t>(a->asset.skins.size()) : 0;
}
int32_t tendon_gltf_asset_skin_joint_count(const TendonGltfAsset* a, int32_t skin) {
  return a != nullptr && InRange(skin, a->asset.skins.size()) ? static_cast<int32_t>(a->asset.skins[skin].joints.size()) : 0;
}
TendonResult tendon_gltf_asset_skin_joints(const TendonGltfAsset* a, int32_t skin, int32_t* joints, int32_t joint_count,
                                           float* inverse_binds, int32_t inverse_bind_count) {
  if (a == nullptr) return NullArgument(nullptr, "asset");
  if (!InRange(skin, a->asset.skins.size())) return NoSuch("skin", skin);
  const tendon::ports::GltfSkin& s = a->asset.skins[skin];
  const int32_t n = static_cast<int32_t>(s.joints.size());
  if (joints != nullptr && joint_count != n) return WrongCount("joints", n);
  if (inverse_binds != nullptr && inverse_bind_count != 16 * n) return WrongCount("inverse_binds", 16 * n);
  for (int32_t j = 0; j < n; ++j) {
    if (joints != nullptr) joints[j] = s.joints[j];
    if (inverse_binds != nullptr)
      for (int32_t k = 0; k < 16; ++k) inverse_binds[16 * j + k] = s.inverse_bind[j][k];
  }
  return TENDON_OK;
}
TendonResult tendon_gltf_asset_character_settings(const TendonGltfAsset* a, TendonCharacterSettings* settings) {
  if (a == nullptr) return NullArgument(nullptr, "asset");
  if (settings == nullptr) return NullArgument(nullptr, "settings");
  LendSkeleton(a->asset.skeleton, a->bone_names, settings);
  settings->humanoid_bones = a->humanoid.empty() ? nullptr : a->humanoid.data();
  settings->humanoid_bone_count = static_cast<int32_t>(a->humanoid.size());
  return TENDON_OK;
}
int32_t tendon_gltf_asset_clip_count(const TendonGltfAsset* a) {
  return a != nullptr ? static_cast<int32_t>(a->asset.clips.size()) : 0;
}
const char* tendon_gltf_asset_clip_name(const TendonGltfAsset* a, int32_t clip) {
  return a != nullptr && InRange(clip, a->asset.clips.size()) ? a->asset.clips[clip].name.c_str() : nullptr;
}
float tendon_gltf_asset_clip_duration(const TendonGltfAsset* a, int32_t clip) {
  return a != nullptr && InRange(clip, a->asset.clips.size()) ? a->asset.clips[clip].duration : 0.0f;
}
TendonResult tendon_gltf_sample_clip(const TendonGltfAsset* a, int32_t clip, float time, TendonTransform* locals,
                                     int32_t count) {
  if (a == nullptr) return NullArgument(nullptr, "asset");
  if (!InRange(clip, a->asset.clips.size())) return NoSuch("clip", clip);
  const int32_t bones = static_cast<int32_t>(a->asset.skeleton.names.size());
  if (locals == nullptr || count != bones) return WrongCount("locals", bones);
  if (!std::isfinite(time)) return Record(nullptr, TENDON_ERROR_NOT_FINITE, "time is not finite", "time");
  return Guard(nullptr, [&] {
    tendon::ports::SampleClip(a->asset.clips[clip], time, Span(ConvertIn<tendon::Transform*>(locals), count));
    return TENDON_OK;
  });
}

// ---- the Jolt "Human" ragdoll and its animations ----

TendonResult tendon_jolt_ragdoll_load(const char* path, int32_t stabilized_masses, TendonJoltRagdoll** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (TendonResult r = CheckReadable(path, "path"); r != TENDON_OK) return r;
  return Guard(nullptr, [&] {
    auto loaded = tendon::ports::LoadJoltHumanRagdoll(path, stabilized_masses != 0);
    if (!loaded.ok()) return RecordLoad(loaded.error());
    auto r = std::make_unique<TendonJoltRagdoll>();
    r->settings = std::move(loaded).value();
    for (const tendon::PartSettings& p : r->settings.parts) {
      TendonPartSettings c = PartSettingsToC(p);
      c.name = p.name.c_str();
      r->parts.push_back(c);
    }
    for (const auto& [a, b] : r->settings.self_collision_pairs) {
      r->pairs.push_back(a);
      r->pairs.push_back(b);
    }
    *out = r.release();
    return TENDON_OK;
  });
}
void tendon_jolt_ragdoll_destroy(TendonJoltRagdoll* ragdoll) { delete ragdoll; }
TendonResult tendon_jolt_ragdoll_settings(const TendonJoltRagdoll* r, TendonRagdollSettings* out) {
  if (r == nullptr) return NullArgument(nullptr, "ragdoll");
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = RagdollSettingsToC(r->settings);
  out->name = r->settings.name.c_str();
  out->parts = r->parts.data();
  out->part_count = static_cast<int32_t>(r->parts.size());
  out->self_collision_pairs = r->pairs.empty() ? nullptr : r->pairs.data();
  out->self_collision_pair_count = static_cast<int32_t>(r->pairs.size() / 2);
  return TENDON_OK;
}

TendonResult tendon_jolt_animation_load(const char* path, TendonJoltAnimation** out) {
  if (out == nullptr) return NullArgument(nullptr, "out");
  *out = nullptr;
  if (TendonResult r = CheckReadable(path, "path"); r != TENDON_OK) return r;
  return Guard(nullptr, [&] {
    auto loaded = tendon::ports::LoadJoltAnimation(path);
    if (!loaded.ok()) return RecordLoad(loaded.error());
    auto a = std::make_unique<TendonJoltAnimation>();
    a->animation = std::move(loaded).value();
    a->skeleton = tendon::ports::JoltSkeleton(a->animation);
    a->clip = tendon::ports::JoltClip(a->animation);
    for (const std::string& n : a->skeleton.names) a->bone_names.push_back(n.c_str());
    *out = a.release();
    return TENDON_OK;
  });
}
void tendon_jolt_animation_destroy(TendonJoltAnimation* animation) { delete animation; }
int32_t tendon_jolt_animation_joint_count(const TendonJoltAnimation* a) {
  return a != nullptr ? static_cast<int32_t>(a->animation.joints.size()) : 0;
}
float tendon_jolt_animation_duration(const TendonJoltAnimation* a) { return a != nullptr ? a->animation.duration : 0.0f; }
TendonResult tendon_jolt_animation_sample(const TendonJoltAnimation* a, float time, int32_t in_place, TendonTransform* out,
                                          int32_t count) {
  if (a == nullptr) return NullArgument(nullptr, "animation");
  const int32_t joints = static_cast<int32_t>(a->animation.joints.size());
  if (out == nullptr || count != joints) return WrongCount("out", joints);
  if (!std::isfinite(time)) return Record(nullptr, TENDON_ERROR_NOT_FINITE, "time is not finite", "time");
  return Guard(nullptr, [&] {
    tendon::ports::SampleJoltAnimation(a->animation, time, Span(ConvertIn<tendon::Transform*>(out), count), in_place != 0);
    return TENDON_OK;
  });
}
TendonResult tendon_jolt_animation_sample_parts(const TendonJoltRagdoll* r, const TendonJoltAnimation* a, float time,
                                                TendonTransform* model, TendonQuat* local_rotations, int32_t count) {
  if (r == nullptr) return NullArgument(nullptr, "ragdoll");
  if (a == nullptr) return NullArgument(nullptr, "animation");
  const int32_t parts = static_cast<int32_t>(r->settings.parts.size());
  if (model == nullptr || count != parts) return WrongCount("model", parts);
  if (local_rotations == nullptr) return WrongCount("local_rotations", parts);
  if (a->animation.joints.size() < r->settings.parts.size())
    return Record(nullptr, TENDON_ERROR_BAD_REFERENCE, "the animation has fewer joints than the ragdoll has parts",
                  "animation");
  if (!std::isfinite(time)) return Record(nullptr, TENDON_ERROR_NOT_FINITE, "time is not finite", "time");
  return Guard(nullptr, [&] {
    tendon::ports::SampleJoltPartPose(r->settings, a->animation, time, Span(ConvertIn<tendon::Transform*>(model), count),
                                      Span(ConvertIn<tendon::Quat*>(local_rotations), count));
    return TENDON_OK;
  });
}
TendonResult tendon_jolt_animation_character_settings(const TendonJoltAnimation* a, TendonCharacterSettings* settings) {
  if (a == nullptr) return NullArgument(nullptr, "animation");
  if (settings == nullptr) return NullArgument(nullptr, "settings");
  LendSkeleton(a->skeleton, a->bone_names, settings);
  return TENDON_OK;
}
TendonResult tendon_jolt_animation_clip(const TendonJoltAnimation* a, TendonSampledClip* out) {
  if (a == nullptr) return NullArgument(nullptr, "animation");
  if (out == nullptr) return NullArgument(nullptr, "out");
  out->name = a->clip.name.c_str();
  out->frame_count = a->clip.frame_count;
  out->local = ConvertOut<const TendonTransform*>(a->clip.local.data());
  return TENDON_OK;
}

}  // extern "C"
