// kernel/character/character_system.cpp: activation, powered and limp bodies, hits, the
// hand-back crossfade, the budget and the event queue.
#include "kernel/character/character_system.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

#include "kernel/core/finite.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/validation.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/ragdoll_archetype.h"
#include "tendon/world.h"

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

constexpr float kRadToDeg = 57.2957795f;
constexpr float kMaxBlendSeconds = 1e4f;  // every duration and crossfade a host passes, s
constexpr float kMinEaseSeconds = 1e-3f;  // a GoLimp shorter than this is at once
constexpr std::size_t kBaseEventCapacity = 64;
// Velocities are estimated from the last two frames' poses only over frames at least this
// long: a denormal dt would turn them infinite (found by tests/fuzz/fuzz_world.cpp).
constexpr float kMinFrameSeconds = 1e-4f;

// A call on the character's own ragdoll that cannot fail: the ragdoll is live while the
// character is bound (the World refuses to unbind it directly), its archetype while the
// character's is, and the numbers passed were checked. Used where the caller has no error
// to return (an undo, a timer's release); debug builds stop on a broken promise.
void MustSucceed(const Error& e) {
  assert(Ok(e) && "a call on a character's own ragdoll failed");
  (void)e;
}

bool AllFinite(std::span<const Transform> t) { return detail::AllFinite(t.data(), static_cast<int64_t>(t.size())); }

Transform Rigid(const Transform& t) { return Transform{t.translation, Normalize(t.rotation), {1, 1, 1}}; }

// The rotation vector (axis times angle) of unit q, shortest way round.
Vec3 RotationVector(Quat q) {
  if (q.w < 0) q = Quat{-q.x, -q.y, -q.z, -q.w};
  const Vec3 v{q.x, q.y, q.z};
  const float s = Length(v);
  if (s < 1e-9f) return v * 2.0f;
  return v * (2.0f * std::atan2(s, q.w) / s);
}

Quat Nlerp(Quat a, Quat b, float t) {
  if (Dot(a, b) < 0) b = Quat{-b.x, -b.y, -b.z, -b.w};
  return Normalize(Quat{a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t, a.w + (b.w - a.w) * t});
}

Transform Blend(const Transform& a, const Transform& b, float t) {
  return Transform{Lerp(a.translation, b.translation, t), Nlerp(a.rotation, b.rotation, t), Lerp(a.scale, b.scale, t)};
}

// The twist of q about unit axis u (swing-twist decomposition): the yaw part for u = up.
Quat TwistAbout(Quat q, Vec3 u) {
  const float d = q.x * u.x + q.y * u.y + q.z * u.z;
  const Quat t{u.x * d, u.y * d, u.z * d, q.w};
  const float len = std::sqrt(Dot(t, t));
  return len > 1e-6f ? Quat{t.x / len, t.y / len, t.z / len, t.w / len} : Quat{};
}

}  // namespace

struct CharacterSystem::Slot {
  uint32_t generation = 1;
  int32_t index = 0;
  bool live = false;
  int32_t archetype = -1;
  RagdollId ragdoll{};
  const Transform* model_world = nullptr;
  Transform last_good_model{};  // the model frame at the last Step it was finite (rigid)
  std::span<const Transform> animated_local;
  std::span<Transform> output_local;
  std::span<Transform> output_world;  // the host's, or world_storage
  std::vector<BoundPoseStream> streams;  // the host's pose streams (tendon/pose_layout.h)
  std::vector<Transform> world_storage;
  std::vector<Transform> anim_world;   // per bone, this frame
  std::vector<Transform> part_frames;  // the ragdoll's output (per part)
  std::vector<Transform> shown_prev, shown_cur;  // per part: what the last two frames showed
  std::vector<Quat> target, target_prev;         // motor targets (part-relative)
  std::vector<Vec3> target_w;
  std::vector<Transform> blend_from;  // per bone: the pose handed back (world or local)
  bool blend_in_world = false;        // blend_from is world poses (HandBackSpace::kWorld)
  std::vector<Vec3> scratch_v, scratch_w;
  Transform anchor{};                 // the animated root part frame (kinematic target)
  Transform anchor_prev{};            // last frame's, for the hips' speed when let go
  float last_frame_dt = 0;
  bool animated_ok = false;
  // What the host set (strength and anchored persist across activations).
  float strength = 0;
  bool anchored = false;
  bool active = false;
  bool kinematic = false;  // whether the ragdoll's root follows `anchor` now
  bool blending = false;
  float blend_total = 0, blend_elapsed = 0;
  float limp_total = 0, limp_left = 0, limp_from = 0;
  bool hit_mode = false;
  float hit_left = 0, hit_blend = 0, saved_strength = 0;
  bool saved_anchored = false;
  double deadline = std::numeric_limits<double>::infinity();
  float release_blend = 0;
  uint64_t serial = 0;       // activation order, for eviction
  uint32_t activations = 0;  // CharacterState::generation
  bool freeze_when_settled = true;
  float freeze_after_seconds = std::numeric_limits<float>::infinity();
};

CharacterSystem::CharacterSystem(RagdollSystem& ragdolls) : ragdolls_(ragdolls) { events_.reserve(event_capacity_); }
CharacterSystem::~CharacterSystem() = default;

Result<CharacterArchetypeId> CharacterSystem::BuildArchetype(const CharacterSettings& settings) {
  CharacterArchetype a;
  if (Error e = BuildCharacterArchetype(settings, &a); !Ok(e)) return e;
  Result<RagdollArchetypeId> rigid = ragdolls_.BuildArchetype(a.ragdoll);
  if (!rigid.ok()) return rigid.error();
  a.ragdoll_archetype = rigid.value();
  a.total_mass = 0;
  for (int32_t j = 0; j < static_cast<int32_t>(a.parts.size()); ++j) {
    RagdollPartInfo info;
    if (Error e = ragdolls_.GetPartInfo(a.ragdoll_archetype, j, &info); !Ok(e)) {
      MustSucceed(ragdolls_.RemoveArchetype(a.ragdoll_archetype));  // bound by no one yet
      return e;
    }
    a.parts[j].mass = info.mass;
    a.total_mass += info.mass;
    const Transform& pose = a.ragdoll.parts[j].pose;
    a.com_in_part.push_back(Rotate(Conjugate(Normalize(pose.rotation)), info.body_pose.translation - pose.translation));
  }
  archetypes_.push_back(std::move(a));
  removed_.push_back(false);
  return CharacterArchetypeId{static_cast<uint32_t>(archetypes_.size() - 1), 1};
}

const CharacterArchetype* CharacterSystem::Archetype(CharacterArchetypeId id) const {
  return id.generation == 1 && id.index < archetypes_.size() && !removed_[id.index] ? &archetypes_[id.index] : nullptr;
}

Error CharacterSystem::RemoveArchetype(CharacterArchetypeId id) {
  if (Archetype(id) == nullptr)
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null, stale or not this world's");
  int32_t bound = 0;
  for (const auto& s : slots_) bound += s->live && s->archetype == static_cast<int32_t>(id.index) ? 1 : 0;
  if (bound > 0)
    return Fail(ErrorCode::kInUse, -1, "archetype", std::to_string(bound) + " characters of this archetype are still bound");
  if (Error e = ragdolls_.RemoveArchetype(archetypes_[id.index].ragdoll_archetype); !Ok(e)) return e;
  removed_[id.index] = true;
  archetypes_[id.index] = CharacterArchetype{};
  return {};
}

bool CharacterSystem::UsesRagdollArchetype(RagdollArchetypeId id) const {
  for (std::size_t i = 0; i < archetypes_.size(); ++i)
    if (!removed_[i] && archetypes_[i].ragdoll_archetype == id) return true;
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

bool CharacterSystem::OverlapsHostBuffers(const void* data, std::size_t bytes) const {
  for (const auto& slot : slots_) {
    const Slot& c = *slot;
    if (!c.live) continue;
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

Error CharacterSystem::Rebind(CharacterId id, const CharacterBinding& b) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (b.archetype.index != static_cast<uint32_t>(c->archetype) || b.archetype.generation != 1)
    return Fail(ErrorCode::kBadReference, -1, "archetype", "a rebind keeps the character's archetype");
  const auto bones = static_cast<int32_t>(archetypes_[c->archetype].parents.size());
  if (Error e = CheckBuffers(b, bones); !Ok(e)) return e;
  for (const auto& s : slots_) {
    if (s.get() != c && s->live && s->output_local.data() == b.output_local.data())
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

int32_t CharacterSystem::UnbindAll() {
  int32_t count = 0;
  for (const auto& s : slots_) {
    if (s->live && Unbind(CharacterId{static_cast<uint32_t>(s->index), s->generation}).code == ErrorCode::kNone) ++count;
  }
  return count;
}

CharacterSystem::Slot* CharacterSystem::Find(CharacterId id) {
  if (id.generation == 0 || id.index >= slots_.size()) return nullptr;
  Slot* s = slots_[id.index].get();
  return s->live && s->generation == id.generation ? s : nullptr;
}
const CharacterSystem::Slot* CharacterSystem::Find(CharacterId id) const {
  return const_cast<CharacterSystem*>(this)->Find(id);
}
bool CharacterSystem::IsValid(CharacterId id) const { return Find(id) != nullptr; }

Result<CharacterId> CharacterSystem::Bind(const CharacterBinding& b) {
  const CharacterArchetype* a = Archetype(b.archetype);
  if (a == nullptr)
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null or was not built by this world");
  const auto bones = static_cast<int32_t>(a->parents.size());
  const auto parts = static_cast<int32_t>(a->parts.size());
  if (Error e = CheckBuffers(b, bones); !Ok(e)) return e;
  if (std::isnan(b.freeze_after_seconds) || b.freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  for (const auto& s : slots_) {
    if (s->live && s->output_local.data() == b.output_local.data())
      return CharacterId{static_cast<uint32_t>(&s - slots_.data()), s->generation};
  }
  std::vector<BoundPoseStream> streams;
  if (Error e = BindStreams(b, bones, &streams); !Ok(e)) return e;
  int32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<int32_t>(slots_.size());
    slots_.push_back(std::make_unique<Slot>());
  }
  Slot& c = *slots_[index];
  const uint32_t generation = c.generation;
  c = Slot{};
  c.generation = generation;
  c.index = index;
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
  if (Error e = ragdolls_.ReserveKinematicToggle(a->ragdoll_archetype, 1); !Ok(e)) {
    free_.push_back(index);
    return e;
  }
  Result<RagdollId> r = ragdolls_.Bind(rb);
  if (!r.ok()) {
    MustSucceed(ragdolls_.ReserveKinematicToggle(a->ragdoll_archetype, -1));
    free_.push_back(index);
    return r.error();
  }
  c.ragdoll = r.value();
  c.live = true;
  ++bound_count_;
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
  event_capacity_ = kBaseEventCapacity + 4 * static_cast<std::size_t>(bound_count_);
  events_.reserve(event_capacity_);
  return CharacterId{static_cast<uint32_t>(index), c.generation};
}

Error CharacterSystem::Unbind(CharacterId id) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (c->active) {
    if (Error e = Release(*c, CharacterEndReason::kRemoved, 0); !Ok(e)) return e;
  }
  if (Error e = ragdolls_.Unbind(c->ragdoll); !Ok(e)) return e;
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
  c->live = false;
  --bound_count_;
  event_capacity_ = kBaseEventCapacity + 4 * static_cast<std::size_t>(bound_count_);
  c->generation = c->generation == UINT32_MAX ? 1 : c->generation + 1;
  free_.push_back(static_cast<int32_t>(id.index));
  return {};
}

void CharacterSystem::Push(const Slot& c, CharacterEvent::Type type, CharacterEndReason reason) {
  if (events_.size() >= event_capacity_) {
    ++dropped_events_;
    return;
  }
  events_.push_back(CharacterEvent{type, CharacterId{static_cast<uint32_t>(c.index), c.generation}, c.activations, reason, now_});
}

int32_t CharacterSystem::DrainEvents(std::span<CharacterEvent> out) {
  const auto n = static_cast<int32_t>(std::min(out.size(), events_.size()));
  std::copy(events_.begin(), events_.begin() + n, out.begin());
  events_.erase(events_.begin(), events_.begin() + n);
  return n;
}

int32_t CharacterSystem::ActiveCount() const { return active_count_; }

int32_t CharacterSystem::BoundCount() const { return bound_count_; }

// The kinematic anchor, freezing and waking follow the host's controls. An error (the
// anchor or the hips' let-go velocity not finite: an animated pose that overflowed) leaves
// what it was about as it was, to be tried again at the next change.
Error CharacterSystem::ApplyControls(Slot& c) {
  const bool kinematic = c.anchored;
  if (kinematic != c.kinematic) {
    if (Error e = ragdolls_.SetKinematicRoot(c.ragdoll, kinematic ? &c.anchor : nullptr); !Ok(e)) return e;
    c.kinematic = kinematic;
    if (!kinematic && c.active && c.last_frame_dt >= kMinFrameSeconds) {
      // Let go: the hips keep the motion the animation was giving them.
      const float inv_dt = 1.0f / c.last_frame_dt;
      if (Error e = ragdolls_.SetPartVelocity(
              c.ragdoll, 0, (c.anchor.translation - c.anchor_prev.translation) * inv_dt,
              RotationVector(Normalize(c.anchor.rotation * Conjugate(c.anchor_prev.rotation))) * inv_dt);
          !Ok(e))
        return e;
    }
  }
  // A driven or anchored body never sleeps or freezes; a limp one's clocks start now.
  const bool powered = c.anchored || c.strength > 0;
  return ragdolls_.SetSleeping(c.ragdoll, !powered, !powered && c.freeze_when_settled,
                               powered ? std::numeric_limits<float>::infinity() : c.freeze_after_seconds);
}

// Motor targets: each part's animated rotation relative to its parent part's.
void CharacterSystem::ComputeTargets(Slot& c, const CharacterArchetype& a) {
  c.target[0] = Quat{};
  for (int32_t j = 1; j < static_cast<int32_t>(a.parts.size()); ++j) {
    const Quat parent = Normalize(c.anim_world[a.part_bone[a.parts[j].parent]].rotation);
    c.target[j] = Normalize(Conjugate(parent) * Normalize(c.anim_world[a.part_bone[j]].rotation));
  }
}

bool CharacterSystem::Activate(CharacterId id, const CharacterActivateOptions& o, Error* why) {
  // The error is built only for a caller who asked why: a refusal allocates nothing then.
  auto refuse = [why](const auto& make) {
    if (why != nullptr) *why = make();
    return false;
  };
  Slot* found = Find(id);
  if (found == nullptr)
    return refuse([&] {
      return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
    });
  if (found->active)
    return refuse([&] { return Fail(ErrorCode::kInUse, -1, "character", "the character is already active"); });
  if (max_active_ <= 0)
    return refuse([&] {
      return Fail(ErrorCode::kCapacity, -1, "max_active_characters", "max_active_characters is 0: no character may be active");
    });
  Slot& c = *found;
  const CharacterArchetype& a = archetypes_[c.archetype];
  if (a.parts.empty())
    return refuse([&] { return Fail(ErrorCode::kEmpty, -1, "archetype", "the character has no parts"); });
  if (!IsFinite(o.launch_velocity))
    return refuse([&] {
      return Fail(ErrorCode::kNotFinite, -1, "launch_velocity", "launch_velocity is not finite");
    });
  if (!IsFinite(o.impulse))
    return refuse([&] { return Fail(ErrorCode::kNotFinite, -1, "impulse", "impulse is not finite"); });
  // The checks build their messages only when they fail: toggling never allocates.
  if (o.strength && !(*o.strength >= 0 && *o.strength <= 1))
    return refuse([&] { return CheckRange(*o.strength, 0, 1, -1, "strength"); });
  if (std::isnan(o.duration_seconds) || o.duration_seconds < 0)
    return refuse([&] {
      return Fail(ErrorCode::kOutOfRange, -1, "duration_seconds", "duration_seconds must be >= 0 (infinity: never)");
    });
  if (!(o.release_blend_seconds >= 0 && o.release_blend_seconds <= kMaxBlendSeconds))
    return refuse([&] {
      return CheckRange(o.release_blend_seconds, 0, kMaxBlendSeconds, -1, "release_blend_seconds");
    });
  // Every part keeps the motion it showed over the last two frames, plus the launch and
  // the whole-body impulse (the same velocity change for every part); the motors start at
  // the animated pose. Worked out before anyone is evicted: finite poses far apart can
  // overflow a velocity or a target, which refuses the activation and must evict no one.
  const auto n = static_cast<int32_t>(a.parts.size());
  const Vec3 extra = o.launch_velocity + o.impulse * (1.0f / a.total_mass);
  bool finite = true;
  for (int32_t j = 0; j < n; ++j) {
    Vec3 v{}, w{};
    if (c.last_frame_dt >= kMinFrameSeconds) {
      v = (c.shown_cur[j].translation - c.shown_prev[j].translation) * (1.0f / c.last_frame_dt);
      w = RotationVector(Normalize(c.shown_cur[j].rotation * Conjugate(c.shown_prev[j].rotation))) * (1.0f / c.last_frame_dt);
    }
    c.scratch_v[j] = v + extra;
    c.scratch_w[j] = w;
    finite = finite && IsFinite(c.scratch_v[j]) && IsFinite(c.scratch_w[j]);
  }
  ComputeTargets(c, a);
  for (int32_t j = 0; j < n; ++j) finite = finite && IsFinite(c.target[j]);
  if (!finite)
    return refuse([&] {
      return Fail(ErrorCode::kNotFinite, -1, "character",
                  "the pose the character shows gives non-finite part velocities or motor targets");
    });
  // The budget: the oldest live ragdoll goes.
  while (ActiveCount() >= max_active_) {
    Slot* oldest = nullptr;
    for (const auto& s : slots_) {
      if (s->live && s->active && (oldest == nullptr || s->serial < oldest->serial)) oldest = s.get();
    }
    if (Error e = Release(*oldest, CharacterEndReason::kEvicted, oldest->release_blend); !Ok(e))
      return refuse([&] { return e; });
  }
  const float strength = o.strength ? *o.strength : c.strength;
  const bool anchored = o.anchored ? *o.anchored : c.anchored;
  const bool powered = anchored || strength > 0;
  c.anchor = c.shown_cur[0];
  c.anchor_prev = c.shown_prev[0];
  for (int32_t j = 0; j < n; ++j) {
    c.target_prev[j] = c.target[j];
    c.target_w[j] = Vec3{};
  }
  // One call switches the ragdoll on: the anchor, the motors, the sleeping rule (a driven
  // or anchored body never sleeps or freezes), the parts where the character shows them.
  RagdollActivation activation;
  activation.kinematic_root = anchored ? &c.anchor : nullptr;
  activation.motor_targets = c.target;
  activation.motor_strength = strength;
  activation.motor_angular_velocities = c.target_w;
  activation.can_sleep = !powered;
  activation.freeze_when_asleep = !powered && c.freeze_when_settled;
  activation.freeze_after_seconds = powered ? std::numeric_limits<float>::infinity() : c.freeze_after_seconds;
  activation.parts = c.shown_cur;
  activation.linear = c.scratch_v;
  activation.angular = c.scratch_w;
  if (Error e = ragdolls_.Activate(c.ragdoll, activation); !Ok(e)) return refuse([&] { return e; });
  c.strength = strength;
  c.anchored = anchored;
  c.kinematic = anchored;
  c.limp_left = 0;  // activating cancels a running go_limp
  c.hit_mode = false;
  c.active = true;
  ++active_count_;
  c.blending = false;
  c.serial = ++activation_serial_;
  ++c.activations;
  c.deadline = now_ + static_cast<double>(o.duration_seconds);
  c.release_blend = o.release_blend_seconds;
  Push(c, CharacterEvent::Type::kStarted, CharacterEndReason::kReleased);
  if (why != nullptr) *why = Error{};
  return true;
}

Error CharacterSystem::Release(Slot& c, CharacterEndReason reason, float blend_seconds, HandBackSpace space) {
  if (!c.active) return {};
  if (Error e = ragdolls_.SetEnabled(c.ragdoll, false); !Ok(e)) return e;
  c.blend_in_world = space == HandBackSpace::kWorld || (space == HandBackSpace::kAuto && !c.anchored && !c.hit_mode);
  c.active = false;
  --active_count_;
  c.hit_mode = false;
  c.limp_left = 0;
  // The crossfade starts from the pose the body shows: in the world, or under the model.
  for (std::size_t k = 0; k < c.blend_from.size(); ++k)
    c.blend_from[k] = c.blend_in_world ? c.output_world[k] : c.output_local[k];
  c.blending = blend_seconds > 0;
  c.blend_total = blend_seconds;
  c.blend_elapsed = 0;
  Push(c, CharacterEvent::Type::kEnded, reason);
  return {};
}

Error CharacterSystem::Deactivate(CharacterId id, float blend_seconds, HandBackSpace space) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(blend_seconds, 0, kMaxBlendSeconds, -1, "blend_seconds"); !Ok(e)) return e;
  if (c->hit_mode) {
    c->strength = c->saved_strength;
    c->anchored = c->saved_anchored;
  }
  if (static_cast<uint8_t>(space) > static_cast<uint8_t>(HandBackSpace::kModel))
    return Fail(ErrorCode::kOutOfRange, -1, "space", "not a HandBackSpace");
  return Release(*c, CharacterEndReason::kReleased, blend_seconds, space);
}

Error CharacterSystem::SetStrength(CharacterId id, float strength) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(strength, 0, 1, -1, "strength"); !Ok(e)) return e;
  c->strength = strength;
  c->limp_left = 0;
  return c->active ? ApplyControls(*c) : Error{};
}

Error CharacterSystem::SetAnchored(CharacterId id, bool anchored) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  c->anchored = anchored;
  return c->active ? ApplyControls(*c) : Error{};
}

bool CharacterSystem::Hit(CharacterId id, int32_t part, Vec3 impulse, Vec3 point, const CharacterHitOptions& o,
                          Error* why) {
  // The error is built only for a caller who asked why: a refusal allocates nothing then.
  auto refuse = [why](const auto& make) {
    if (why != nullptr) *why = make();
    return false;
  };
  Slot* c = Find(id);
  if (c == nullptr)
    return refuse([&] {
      return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
    });
  if (part < 0 || part >= static_cast<int32_t>(archetypes_[c->archetype].parts.size()))
    return refuse([&] { return Fail(ErrorCode::kBadReference, part, "part", "no such part"); });
  if (!IsFinite(impulse) || !IsFinite(point))
    return refuse([&] {
      return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse or its point is not finite");
    });
  if (!(o.duration_seconds > 0) || o.duration_seconds > kMaxBlendSeconds)
    return refuse([&] {
      return Fail(ErrorCode::kOutOfRange, -1, "duration_seconds", "duration_seconds must be within (0, 10000]");
    });
  if (!(o.blend_seconds >= 0 && o.blend_seconds <= kMaxBlendSeconds))
    return refuse([&] { return CheckRange(o.blend_seconds, 0, kMaxBlendSeconds, -1, "blend_seconds"); });
  if (!(o.strength >= 0 && o.strength <= 1))
    return refuse([&] { return CheckRange(o.strength, 0, 1, -1, "strength"); });
  if (!c->active) {
    // A flinch: powered up anchored to the animation, handed back after the duration.
    const float saved_strength = c->strength;
    const bool saved_anchored = c->anchored;
    CharacterActivateOptions activate;
    activate.strength = o.strength;
    activate.anchored = true;
    if (!Activate(id, activate, why)) return false;
    c->hit_mode = true;
    c->saved_strength = saved_strength;
    c->saved_anchored = saved_anchored;
  }
  if (c->hit_mode) {
    c->hit_left = o.duration_seconds;
    c->hit_blend = o.blend_seconds;
  }
  Error e = ragdolls_.ApplyImpulse(c->ragdoll, part, impulse, point);
  const bool ok = e.code == ErrorCode::kNone;
  if (why != nullptr) *why = std::move(e);
  return ok;
}

Error CharacterSystem::GoLimp(CharacterId id, float seconds) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(seconds, 0, kMaxBlendSeconds, -1, "seconds"); !Ok(e)) return e;
  if (!c->active) return Fail(ErrorCode::kInactive, -1, "character", "go_limp needs an active character: activate it first");
  c->anchored = false;
  c->hit_mode = false;
  // Under a millisecond (a denormal would flush to zero inside Step): limp at once.
  if (seconds >= kMinEaseSeconds && c->strength > 0) {
    c->limp_total = c->limp_left = seconds;
    c->limp_from = c->strength;
  } else {
    c->strength = 0;
    c->limp_left = 0;
  }
  return ApplyControls(*c);
}

Error CharacterSystem::ApplyImpulse(CharacterId id, Vec3 impulse) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (!IsFinite(impulse)) return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse is not finite");
  if (!c->active) return Fail(ErrorCode::kInactive, -1, "character", "the character is not active");
  const CharacterArchetype& a = archetypes_[c->archetype];
  // Applied per assembly at its mass: every part gets impulse / total mass, through its
  // centre of mass (no spin). All of them checked first, so a refusal applies none.
  const auto n = static_cast<int32_t>(a.parts.size());
  const Vec3 dv = impulse * (1.0f / a.total_mass);
  Vec3 part_impulse[kMaxRagdollParts], centre[kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j) {
    part_impulse[j] = dv * a.parts[j].mass;
    centre[j] = TransformPoint(c->part_frames[j], a.com_in_part[j]);
    if (!IsFinite(part_impulse[j]) || !IsFinite(centre[j]))
      return Fail(ErrorCode::kNotFinite, j, "impulse", "part " + std::to_string(j) + "'s share of the impulse is not finite");
  }
  for (int32_t j = 0; j < n; ++j) {
    if (Error e = ragdolls_.ApplyImpulse(c->ragdoll, j, part_impulse[j], centre[j]); !Ok(e)) return e;
  }
  return {};
}

Error CharacterSystem::ApplyPartImpulse(CharacterId id, int32_t part, Vec3 impulse, Vec3 point) {
  Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (!c->active) return Fail(ErrorCode::kInactive, -1, "character", "the character is not active");
  return ragdolls_.ApplyImpulse(c->ragdoll, part, impulse, point);
}

Error CharacterSystem::GetState(CharacterId id, CharacterState* out) const {
  const Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  const CharacterArchetype& a = archetypes_[c->archetype];
  CharacterState s;
  s.active = c->active;
  s.blending_out = c->blending;
  s.settled = c->active && (ragdolls_.IsAsleep(c->ragdoll) || ragdolls_.IsFrozen(c->ragdoll));
  s.anchored = c->anchored;
  s.strength = c->strength;
  s.generation = c->activations;
  s.root = c->active ? c->part_frames[0] : c->shown_cur[0];
  s.total_mass = a.total_mass;
  s.unanchored_mass = a.total_mass - (c->active && c->kinematic ? a.parts[0].mass : 0.0f);
  if (c->active) {
    const auto n = static_cast<int32_t>(a.parts.size());
    Vec3 v[kMaxRagdollParts], w[kMaxRagdollParts];
    if (Error e = ragdolls_.GetVelocities(c->ragdoll, std::span<Vec3>(v, n), std::span<Vec3>(w, n)); !Ok(e)) return e;
    s.root_velocity = v[0];
    Vec3 momentum{};
    for (int32_t j = 0; j < n; ++j) momentum = momentum + v[j] * a.parts[j].mass;
    s.speed = Length(momentum) / a.total_mass;
  } else if (c->last_frame_dt >= kMinFrameSeconds) {
    s.root_velocity = (c->shown_cur[0].translation - c->shown_prev[0].translation) * (1.0f / c->last_frame_dt);
    s.speed = Length(s.root_velocity);
  }
  const std::span<const Transform> frames = c->active ? std::span<const Transform>(c->part_frames) : c->shown_cur;
  const Vec3 front = Rotate(frames[a.torso_part].rotation, a.forward_in_torso);
  // The nearest of the three: the chest within 45 degrees of straight up is on its back.
  constexpr float kSin45 = 0.70710678f;
  s.facing = front.y > kSin45 ? CharacterFacing::kUp : (front.y < -kSin45 ? CharacterFacing::kDown : CharacterFacing::kSide);
  const Vec3 toward = frames[a.head_part >= 0 ? a.head_part : 0].translation - frames[0].translation;
  s.heading_degrees = (std::fabs(toward.x) + std::fabs(toward.z) > 1e-6f) ? std::atan2(toward.x, toward.z) * kRadToDeg : 0.0f;
  // Finite poses far apart can still overflow a difference: no query returns non-finite.
  if (!IsFinite(s.root_velocity) || !std::isfinite(s.speed)) {
    s.root_velocity = Vec3{};
    s.speed = 0;
  }
  if (!std::isfinite(s.heading_degrees)) s.heading_degrees = 0;
  *out = s;
  return {};
}

Error CharacterSystem::GetRecoveryRoot(CharacterId id, float leg_room, Transform* out) const {
  const Slot* c = Find(id);
  if (c == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "character", "the character handle is null or stale");
  if (Error e = CheckRange(leg_room, 0, 1e4f, -1, "leg_room"); !Ok(e)) return e;
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  const CharacterArchetype& a = archetypes_[c->archetype];
  const Transform& root = c->active ? c->part_frames[0] : c->shown_cur[0];
  // The model's rotation the root implies, reduced to its yaw; the root stood upright in it.
  const Quat model = Normalize(root.rotation * Conjugate(a.root_rest_rotation));
  const Quat yaw = TwistAbout(model, Vec3{0, 1, 0});
  *out = Transform{root.translation + Vec3{0, leg_room, 0}, Normalize(yaw * a.root_rest_rotation), {1, 1, 1}};
  return {};
}

RagdollId CharacterSystem::RagdollOf(CharacterId id) const {
  const Slot* c = Find(id);
  return c != nullptr ? c->ragdoll : RagdollId{};
}

CharacterId CharacterSystem::CharacterOf(RagdollId ragdoll) const {
  if (ragdoll.index >= character_of_ragdoll_.size()) return CharacterId{};
  const int32_t index = character_of_ragdoll_[ragdoll.index];
  if (index < 0 || !slots_[index]->live || !(slots_[index]->ragdoll == ragdoll)) return CharacterId{};
  return CharacterId{static_cast<uint32_t>(index), slots_[index]->generation};
}

void CharacterSystem::BeforePhysics(float frame_dt, float sim_seconds, double now, int32_t max_active) {
  now_ = now;
  max_active_ = max_active;
  bad_inputs_ = 0;
  for (const auto& slot : slots_) {
    Slot& c = *slot;
    if (!c.live) continue;
    const CharacterArchetype& a = archetypes_[c.archetype];
    const auto n = static_cast<int32_t>(a.parts.size());
    c.last_frame_dt = frame_dt;
    // The animated pose; non-finite input holds the last good one.
    const bool model_finite = IsFinite(*c.model_world);
    if (model_finite) c.last_good_model = Rigid(*c.model_world);
    c.animated_ok = model_finite && AllFinite(c.animated_local);
    if (c.animated_ok) {
      ForwardKinematics(a.parents, Rigid(*c.model_world), c.animated_local.data(), c.anim_world.data());
    } else {
      ++bad_inputs_;
    }
    // Timers on the world clock.
    if (c.active && c.hit_mode) {
      c.hit_left -= sim_seconds;
      if (c.hit_left <= 0) {
        c.strength = c.saved_strength;
        c.anchored = c.saved_anchored;
        MustSucceed(Release(c, CharacterEndReason::kReleased, c.hit_blend));
      }
    }
    if (c.active && now >= c.deadline) MustSucceed(Release(c, CharacterEndReason::kExpired, c.release_blend));
    if (c.active && c.limp_left > 0) {
      c.limp_left = std::max(c.limp_left - sim_seconds, 0.0f);
      c.strength = c.limp_from * (c.limp_left / c.limp_total);
      // Now limp: it may freeze. (Only the sleeping rule changes here, which cannot fail;
      // an error would be an anchor that overflowed, held and counted like one.)
      if (c.limp_left == 0 && !Ok(ApplyControls(c))) ++bad_inputs_;
    }
    if (c.blending) {
      c.blend_elapsed += sim_seconds;
      if (c.blend_elapsed >= c.blend_total) c.blending = false;
    }
    if (!c.active) {
      // Switched off: the parts follow the animation (raycasts see them there).
      for (int32_t j = 0; j < n; ++j) c.part_frames[j] = Rigid(c.anim_world[a.part_bone[j]]);
      continue;
    }
    // Powered: the motors pull toward the animated pose; the anchor follows the hips.
    c.anchor_prev = c.anchor;
    c.anchor = Rigid(c.anim_world[a.part_bone[0]]);
    for (int32_t j = 0; j < n; ++j) c.target_prev[j] = c.target[j];
    ComputeTargets(c, a);
    for (int32_t j = 1; j < n; ++j) {
      // The animation's own relative angular velocity, in the parent part's frame.
      c.target_w[j] = frame_dt >= kMinFrameSeconds ? RotationVector(Normalize(c.target[j] * Conjugate(c.target_prev[j]))) * (1.0f / frame_dt)
                                   : Vec3{};
    }
    // Targets an overflowing animated pose made non-finite are refused: the motors hold
    // the last ones, and the frame counts a bad input.
    if (!Ok(ragdolls_.SetMotorTargets(c.ragdoll, c.target, c.strength, c.target_w))) ++bad_inputs_;
  }
}

void CharacterSystem::CheckHostBuffers(CharacterId only) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& c = *slots_[i];
    if (!c.live || (!only.IsNull() && (only.index != i || only.generation != c.generation))) continue;
    const HostBufferOwner owner{"character", static_cast<uint32_t>(i), c.generation};
    CheckHostBuffer(owner, "model_world", c.model_world, sizeof(Transform));
    CheckHostBuffer(owner, "animated_local", c.animated_local.data(), c.animated_local.size_bytes());
    CheckHostBuffer(owner, "output_local", c.output_local.data(), c.output_local.size_bytes());
    CheckHostBuffer(owner, "output_world", c.output_world.data(), c.output_world.size_bytes());
    CheckStreamBuffers(owner, c.streams);
  }
}

void CharacterSystem::AfterPhysics() {
  for (const auto& slot : slots_) {
    Slot& c = *slot;
    if (!c.live) continue;
    const CharacterArchetype& a = archetypes_[c.archetype];
    const auto bones = static_cast<int32_t>(a.parents.size());
    const auto n = static_cast<int32_t>(a.parts.size());
    // A model frame that is not finite this frame: the last good one (counted in Before).
    const Transform model = c.last_good_model;
    const bool model_ok = IsFinite(model);
    bool wrote_non_finite = false;
    // What is composed is checked too, not only what was read: finite host numbers can
    // still overflow (a translation near FLT_MAX under a turned parent). A bone whose
    // result is not finite keeps the pose it was last written.
    auto store = [&](int32_t b, const Transform& world, const Transform& local) {
      if (!IsFinite(world) || !IsFinite(local)) {
        wrote_non_finite = true;
        return;
      }
      c.output_world[b] = world;
      c.output_local[b] = local;
    };
    if (c.active) {
      // Part bones take their part's frame; the others ride their parent with the
      // animated local transform.
      for (int32_t b = 0; b < bones; ++b) {
        const int32_t p = a.part_of_bone[b];
        const int32_t parent = a.parents[b];
        const Transform& parent_world = parent >= 0 ? c.output_world[parent] : model;
        const Transform animated = c.animated_ok ? c.animated_local[b] : c.output_local[b];
        if (p >= 0) {
          Transform world = c.part_frames[p];
          world.scale = Mul(parent >= 0 ? parent_world.scale : Vec3{1, 1, 1}, animated.scale);
          Transform local = Relative(parent >= 0 || model_ok ? parent_world : Transform{}, world);
          local.scale = animated.scale;
          store(b, world, local);
        } else {
          store(b, Compose(parent_world, animated), animated);
        }
      }
    } else if (c.animated_ok) {
      const float t = c.blending ? std::clamp(c.blend_elapsed / c.blend_total, 0.0f, 1.0f) : 1.0f;
      for (int32_t b = 0; b < bones; ++b) {
        const Transform& parent_world = a.parents[b] >= 0 ? c.output_world[a.parents[b]] : model;
        if (t >= 1.0f) {
          store(b, c.anim_world[b], c.animated_local[b]);
        } else if (c.blend_in_world) {
          // World space: from where the body lay to where the animation puts the bone now.
          const Transform world = Blend(c.blend_from[b], c.anim_world[b], t);
          store(b, world, Relative(a.parents[b] >= 0 || model_ok ? parent_world : Transform{}, world));
        } else {
          const Transform local = Blend(c.blend_from[b], c.animated_local[b], t);
          store(b, Compose(parent_world, local), local);
        }
      }
    }
    if (wrote_non_finite) ++bad_inputs_;
    if (!c.streams.empty() && (c.active || c.animated_ok)) EmitStreams(c, c.output_world);
    for (int32_t j = 0; j < n; ++j) {
      c.shown_prev[j] = c.shown_cur[j];
      c.shown_cur[j] = Rigid(c.output_world[a.part_bone[j]]);
    }
  }
}

}  // namespace tendon::detail
