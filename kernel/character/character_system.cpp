// kernel/character/character_system.cpp: character archetypes, binding and unbinding, and
// the host's buffers.
//
// What it owns: building a character archetype (the skeleton mapped onto ragdoll parts,
// character_archetype.cpp) and its ragdoll archetype together; binding, which checks the
// host's buffers, sizes every per-frame vector of the slot, binds the character's ragdoll
// switched off (with a lane reserved in its archetype's other group, so anchoring never
// allocates) and only then takes a handle, so a refused bind changes no handle; rebinding
// to new buffers; unbinding, which hands the bones back to the animation; and the debug
// checks of the host's buffers.
// What it does NOT do: activate, step or query (character_controls.cpp,
// character_frame.cpp, character_queries.cpp).
// Threading: the World's thread. Memory: Bind allocates (the slot, its vectors, the event
// queue's room); Unbind of a character with pose streams allocates one world pose.
#include <memory>
#include <string>
#include <utility>

#include "kernel/character/character_slot.h"
#include "kernel/core/host_buffers.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/ragdoll_archetype.h"
#include "tendon/ragdoll_settings.h"

namespace tendon {

const char* ToString(CharacterEndReason reason) {
  switch (reason) {
    case CharacterEndReason::kReleased: return "released";
    case CharacterEndReason::kEvicted: return "evicted";
    case CharacterEndReason::kExpired: return "expired";
    case CharacterEndReason::kRemoved: return "removed";
  }
  return "unknown";
}

const char* ToString(HandBackSpace space) {
  switch (space) {
    case HandBackSpace::kAuto: return "auto";
    case HandBackSpace::kWorld: return "world";
    case HandBackSpace::kModel: return "model";
  }
  return "unknown";
}

const char* ToString(CharacterFacing facing) {
  switch (facing) {
    case CharacterFacing::kUp: return "face_up";
    case CharacterFacing::kDown: return "face_down";
    case CharacterFacing::kSide: return "side";
  }
  return "unknown";
}

}  // namespace tendon

namespace tendon::detail {
namespace {

constexpr std::size_t kBaseEventCapacity = 64;

}  // namespace

CharacterSystem::CharacterSystem(RagdollSystem& ragdolls) : ragdolls_(ragdolls) { events_.reserve(event_capacity_); }
CharacterSystem::~CharacterSystem() = default;

Result<CharacterArchetypeId> CharacterSystem::BuildArchetype(const CharacterSettings& settings) {
  CharacterArchetype a;
  if (Error e = BuildCharacterArchetype(settings, &a); !Ok(e)) return e;
  Result<RagdollArchetypeId> rigid = ragdolls_.BuildArchetype(a.ragdoll);
  if (!rigid.ok()) return rigid.error();
  a.ragdoll_archetype = rigid.value();
  if (settings.inactive_bodies == CharacterInactiveBodies::kKinematic) {
    Result<RagdollArchetypeId> twin = ragdolls_.BuildKinematicArchetype(a.ragdoll, false);
    if (!twin.ok()) {
      MustSucceed(ragdolls_.RemoveArchetype(a.ragdoll_archetype));  // bound by no one yet
      return twin.error();
    }
    a.twin_archetype = twin.value();
  }
  a.total_mass = 0;
  for (int32_t j = 0; j < static_cast<int32_t>(a.parts.size()); ++j) {
    RagdollPartInfo info;
    if (Error e = ragdolls_.GetPartInfo(a.ragdoll_archetype, j, &info); !Ok(e)) {
      MustSucceed(ragdolls_.RemoveArchetype(a.ragdoll_archetype));  // bound by no one yet
      if (!a.twin_archetype.IsNull()) MustSucceed(ragdolls_.RemoveArchetype(a.twin_archetype));
      return e;
    }
    a.parts[j].mass = info.mass;
    a.total_mass += info.mass;
    const Transform& pose = a.ragdoll.parts[j].pose;
    a.com_in_part.push_back(Rotate(Conjugate(Normalize(pose.rotation)), info.body_pose.translation - pose.translation));
  }
  for (std::size_t i = 0; i < archetypes_.size(); ++i) {
    if (!removed_[i] || generation_[i] == UINT32_MAX) continue;
    archetypes_[i] = std::move(a);
    removed_[i] = false;
    ++generation_[i];
    return CharacterArchetypeId{static_cast<uint32_t>(i), generation_[i]};
  }
  archetypes_.push_back(std::move(a));
  removed_.push_back(false);
  generation_.push_back(1);
  return CharacterArchetypeId{static_cast<uint32_t>(archetypes_.size() - 1), 1};
}

const CharacterArchetype* CharacterSystem::Archetype(CharacterArchetypeId id) const {
  return id.index < archetypes_.size() && !removed_[id.index] && id.generation == generation_[id.index]
             ? &archetypes_[id.index]
             : nullptr;
}

Error CharacterSystem::RemoveArchetype(CharacterArchetypeId id) {
  if (Archetype(id) == nullptr)
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null, stale or not this world's");
  int32_t bound = 0;
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i)
    bound += handles_.IsLiveAt(i) && slots_[i]->archetype == static_cast<int32_t>(id.index) ? 1 : 0;
  if (bound > 0)
    return Fail(ErrorCode::kInUse, -1, "archetype", std::to_string(bound) + " characters of this archetype are still bound");
  if (Error e = ragdolls_.RemoveArchetype(archetypes_[id.index].ragdoll_archetype); !Ok(e)) return e;
  if (!archetypes_[id.index].twin_archetype.IsNull())
    MustSucceed(ragdolls_.RemoveArchetype(archetypes_[id.index].twin_archetype));  // its twins went with their characters
  removed_[id.index] = true;
  archetypes_[id.index] = CharacterArchetype{};
  return {};
}

bool CharacterSystem::UsesRagdollArchetype(RagdollArchetypeId id) const {
  for (std::size_t i = 0; i < archetypes_.size(); ++i)
    if (!removed_[i] && (archetypes_[i].ragdoll_archetype == id || archetypes_[i].twin_archetype == id)) return true;
  return false;
}

Error CharacterSystem::CheckBuffers(const CharacterBinding& b, int32_t bones) const {
  if (b.model_world == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "model_world", "model_world is null");
  if (!IsFinite(*b.model_world)) return Fail(ErrorCode::kNotFinite, -1, "model_world", "model_world is not finite at bind");
  auto need = [&](std::size_t size, const char* field) -> Error {
    if (static_cast<int32_t>(size) < bones)
      return Fail(ErrorCode::kNullBuffer, -1, field,
                  std::string(field) + " needs " + std::to_string(bones) + " transforms, got " + std::to_string(size));
    return {};
  };
  if (b.animated_local.data() == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "animated_local", "animated_local is null");
  if (Error e = need(b.animated_local.size(), "animated_local"); !Ok(e)) return e;
  if (b.output_local.data() == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "output_local", "output_local is null");
  if (Error e = need(b.output_local.size(), "output_local"); !Ok(e)) return e;
  if (!b.output_world.empty()) {
    if (Error e = need(b.output_world.size(), "output_world"); !Ok(e)) return e;
  }
  if (!AllFinite(b.animated_local.first(bones)))
    return Fail(ErrorCode::kNotFinite, -1, "animated_local", "animated_local is not finite at bind");
  return {};
}

Error CharacterSystem::BindStreams(const CharacterBinding& b, int32_t bones, std::vector<BoundPoseStream>* out) {
  std::vector<int32_t> bone_index(static_cast<std::size_t>(bones));
  for (int32_t k = 0; k < bones; ++k) bone_index[k] = k;
  return BindPoseStreams(b.pose_streams, bone_index, "pose_streams", out);
}

void CharacterSystem::EmitStreams(Slot& c, std::span<const Transform> world) {
  for (BoundPoseStream& stream : c.streams) {
    RefreshModel(stream);
    for (std::size_t k = 0; k < c.output_local.size(); ++k) {
      const auto bone = static_cast<int32_t>(k);
      if (stream.layout == PoseLayout::kLocalTrs) {
        EmitLocal(stream, bone, c.output_local[k]);
      } else {
        EmitWorldTransform(stream, bone, world[k]);
      }
    }
  }
}

CharacterSystem::Slot* CharacterSystem::Find(CharacterId id) {
  return handles_.IsLive(id) ? slots_[id.index].get() : nullptr;
}
const CharacterSystem::Slot* CharacterSystem::Find(CharacterId id) const {
  return const_cast<CharacterSystem*>(this)->Find(id);
}
bool CharacterSystem::IsValid(CharacterId id) const { return handles_.IsLive(id); }

Result<CharacterId> CharacterSystem::Bind(const CharacterBinding& b) {
  const CharacterArchetype* a = Archetype(b.archetype);
  if (a == nullptr)
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null or was not built by this world");
  const auto bones = static_cast<int32_t>(a->parents.size());
  const auto parts = static_cast<int32_t>(a->parts.size());
  if (Error e = CheckBuffers(b, bones); !Ok(e)) return e;
  if (std::isnan(b.freeze_after_seconds) || b.freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i) && slots_[i]->output_local.data() == b.output_local.data()) return handles_.HandleAt(i);
  }
  std::vector<BoundPoseStream> streams;
  if (Error e = BindStreams(b, bones, &streams); !Ok(e)) return e;
  // The slot is filled and its ragdoll bound before it takes a handle: a refused bind
  // leaves the handles as they were.
  auto slot = std::make_unique<Slot>();
  Slot& c = *slot;
  c.archetype = static_cast<int32_t>(b.archetype.index);
  c.model_world = b.model_world;
  c.last_good_model = Rigid(*b.model_world);
  c.animated_local = b.animated_local.first(bones);
  c.output_local = b.output_local.first(bones);
  c.world_storage.resize(b.output_world.empty() ? bones : 0);
  c.output_world = b.output_world.empty() ? std::span<Transform>(c.world_storage) : b.output_world.first(bones);
  c.anim_world.resize(bones);
  c.part_frames.resize(parts);
  c.shown_prev.resize(parts);
  c.shown_cur.resize(parts);
  c.target.resize(parts);
  c.target_prev.resize(parts);
  c.target_w.resize(parts);
  c.blend_from.resize(bones);
  c.scratch_v.resize(parts);
  c.scratch_w.resize(parts);
  c.freeze_when_settled = b.freeze_when_settled;
  c.freeze_after_seconds = b.freeze_after_seconds;
  // The animated pose now: the ragdoll starts there, switched off.
  ForwardKinematics(a->parents, Rigid(*b.model_world), c.animated_local.data(), c.anim_world.data());
  for (int32_t j = 0; j < parts; ++j) c.part_frames[j] = c.shown_prev[j] = c.shown_cur[j] = Rigid(c.anim_world[a->part_bone[j]]);
  c.anchor = c.part_frames[0];
  c.animated_ok = true;
  RagdollBinding rb;
  rb.archetype = a->ragdoll_archetype;
  rb.start_parts = c.part_frames;
  rb.output_parts = c.part_frames;
  rb.planar_normal = b.planar_normal;
  rb.collide_mode = b.collide_mode;
  rb.enabled = false;
  // Room to move between the archetype's dynamic and kinematic-root lanes (anchoring)
  // without allocating later.
  if (Error e = ragdolls_.ReserveKinematicToggle(a->ragdoll_archetype, 1); !Ok(e)) return e;
  Result<RagdollId> r = ragdolls_.Bind(rb);
  if (!r.ok()) {
    MustSucceed(ragdolls_.ReserveKinematicToggle(a->ragdoll_archetype, -1));
    return r.error();
  }
  c.ragdoll = r.value();
  const CharacterId id = handles_.Allocate();
  if (!a->twin_archetype.IsNull()) {
    // The kinematic copy, where the animation is now, switched on (the character starts inactive).
    c.twin_frames = c.part_frames;
    RagdollBinding tb;
    tb.archetype = a->twin_archetype;
    tb.start_parts = c.twin_frames;
    tb.output_parts = c.twin_frames;
    tb.collide_mode = b.collide_mode;
    // Its owner is the character's ragdoll: contact events name that ragdoll for the copy.
    Result<RagdollId> twin = ragdolls_.BindInternal(tb, kCharacterTwinSlot, c.ragdoll.index, c.ragdoll.generation);
    if (!twin.ok()) {
      handles_.Free(id);
      MustSucceed(ragdolls_.Unbind(c.ragdoll));
      MustSucceed(ragdolls_.ReserveKinematicToggle(a->ragdoll_archetype, -1));
      return twin.error();
    }
    c.twin = twin.value();
  }
  const auto index = static_cast<int32_t>(id.index);
  c.index = index;
  if (slots_.size() < handles_.SlotCount()) slots_.resize(handles_.SlotCount());
  slots_[index] = std::move(slot);
  if (character_of_ragdoll_.size() <= c.ragdoll.index) character_of_ragdoll_.resize(c.ragdoll.index + 1, -1);
  character_of_ragdoll_[c.ragdoll.index] = index;
  for (int32_t k = 0; k < bones; ++k) {
    c.output_local[k] = c.animated_local[k];
    c.output_world[k] = c.anim_world[k];
  }
  c.streams = std::move(streams);
  EmitStreams(c, c.output_world);
  // Room for every event a frame can produce (Started, Ended per character and then some):
  // 64 + 4 per bound character. Unbinding gives the room back, so bind/unbind churn
  // never grows the queue past what the most characters bound at once needed.
  event_capacity_ = kBaseEventCapacity + 4 * static_cast<std::size_t>(handles_.LiveCount());
  events_.reserve(event_capacity_);
  return id;
}

Error CharacterSystem::Rebind(CharacterId id, const CharacterBinding& b) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (b.archetype.index != static_cast<uint32_t>(c->archetype) || b.archetype.generation != generation_[c->archetype])
    return Fail(ErrorCode::kBadReference, -1, "archetype", "a rebind keeps the character's archetype");
  const auto bones = static_cast<int32_t>(archetypes_[c->archetype].parents.size());
  if (Error e = CheckBuffers(b, bones); !Ok(e)) return e;
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i) && slots_[i].get() != c && slots_[i]->output_local.data() == b.output_local.data())
      return Fail(ErrorCode::kBadReference, -1, "output_local", "this output buffer is already bound to another character");
  }
  std::vector<BoundPoseStream> streams;
  if (Error e = BindStreams(b, bones, &streams); !Ok(e)) return e;
  c->streams = std::move(streams);
  // The ragdoll, its state and every timer stay; only where the host's numbers live changes.
  if (b.output_world.empty() && c->world_storage.empty()) {
    c->world_storage.assign(c->output_world.begin(), c->output_world.end());
  }
  c->model_world = b.model_world;
  c->animated_local = b.animated_local.first(bones);
  c->output_local = b.output_local.first(bones);
  c->output_world = b.output_world.empty() ? std::span<Transform>(c->world_storage) : b.output_world.first(bones);
  return {};
}

Error CharacterSystem::Unbind(CharacterId id) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (c->active) {
    if (Error e = Release(*c, CharacterEndReason::kRemoved, 0); !Ok(e)) return e;
  }
  if (Error e = ragdolls_.Unbind(c->ragdoll); !Ok(e)) return e;
  if (!c->twin.IsNull()) MustSucceed(ragdolls_.Unbind(c->twin));
  // The reservation Bind made; its archetype is live while this character's is.
  MustSucceed(ragdolls_.ReserveKinematicToggle(archetypes_[c->archetype].ragdoll_archetype, -1));
  // Torn down: the host's bones go back to the animation.
  for (std::size_t k = 0; k < c->output_local.size(); ++k) c->output_local[k] = c->animated_local[k];
  if (!c->streams.empty()) {
    // The animated world pose, composed from the model frame (as the host's output_world
    // would be once the animation writes it).
    const CharacterArchetype& a = archetypes_[c->archetype];
    std::vector<Transform> world(c->output_local.size());
    for (std::size_t k = 0; k < world.size(); ++k) {
      const int32_t parent = a.parents[k];
      world[k] = Compose(parent >= 0 ? world[parent] : c->last_good_model, c->output_local[k]);
    }
    EmitStreams(*c, world);
    std::vector<BoundPoseStream>().swap(c->streams);
  }
  handles_.Free(id);
  event_capacity_ = kBaseEventCapacity + 4 * static_cast<std::size_t>(handles_.LiveCount());
  return {};
}

int32_t CharacterSystem::UnbindAll() {
  int32_t count = 0;
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i) && Unbind(handles_.HandleAt(i)).code == ErrorCode::kNone) ++count;
  }
  return count;
}

bool CharacterSystem::OverlapsHostBuffers(const void* data, std::size_t bytes) const {
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    const Slot& c = *slots_[i];
    if (RangesOverlap(data, bytes, c.model_world, sizeof(Transform)) ||
        RangesOverlap(data, bytes, c.animated_local.data(), c.animated_local.size_bytes()) ||
        RangesOverlap(data, bytes, c.output_local.data(), c.output_local.size_bytes()) ||
        RangesOverlap(data, bytes, c.output_world.data(), c.output_world.size_bytes()))
      return true;
    for (const BoundPoseStream& stream : c.streams) {
      if (RangesOverlap(data, bytes, stream.base, stream.extent) ||
          RangesOverlap(data, bytes, stream.model_world, sizeof(Transform)))
        return true;
    }
  }
  return false;
}

void CharacterSystem::CheckHostBuffers(CharacterId only) const {
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    const CharacterId id = handles_.HandleAt(i);
    if (!only.IsNull() && !(only == id)) continue;
    const Slot& c = *slots_[i];
    const HostBufferOwner owner{"character", i, id.generation};
    CheckHostBuffer(owner, "model_world", c.model_world, sizeof(Transform));
    CheckHostBuffer(owner, "animated_local", c.animated_local.data(), c.animated_local.size_bytes());
    CheckHostBuffer(owner, "output_local", c.output_local.data(), c.output_local.size_bytes());
    CheckHostBuffer(owner, "output_world", c.output_world.data(), c.output_world.size_bytes());
    CheckStreamBuffers(owner, c.streams);
  }
}

}  // namespace tendon::detail
