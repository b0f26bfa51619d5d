// kernel/pendulums/pendulum_system.cpp: accessory pendulums, bound and stepped.
//
// The bob moves between the hinge's interpolated positions across the substeps (the host
// joint moves once a frame), so a fast joint does not jerk its accessory once per frame.
// The swing is clamped against the substep's rest direction and again against the
// frame's: with no substep this frame the joint may still have turned.
#include "kernel/pendulums/pendulum_system.h"

#include <algorithm>
#include <cmath>

#include "kernel/core/finite.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/parallel.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

namespace {
constexpr int32_t kPendulumChunk = 256;
// The BonePhysics reference's 0.1 and 0.75 studs, in metres (1 stud = 0.28 m).
constexpr float kShortLever = 0.028f;    // m: a lever shorter than this is replaced
constexpr float kSyntheticLever = 0.21f;  // m: by one this long down the up axis
}  // namespace

PendulumSystem::Slot* PendulumSystem::Find(PendulumId id) {
  return handles_.IsLive(id) ? &pendulums_[id.index] : nullptr;
}
const PendulumSystem::Slot* PendulumSystem::Find(PendulumId id) const {
  return const_cast<PendulumSystem*>(this)->Find(id);
}

Result<PendulumId> PendulumSystem::Bind(const PendulumBinding& b) {
  if (b.joint_world == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "joint_world", "joint_world is null");
  if (b.accessory_offset == nullptr)
    return Fail(ErrorCode::kNullBuffer, -1, "accessory_offset", "accessory_offset is null");
  if (auto it = pendulum_by_offset_.find(b.accessory_offset); it != pendulum_by_offset_.end()) {
    return handles_.HandleAt(static_cast<uint32_t>(it->second));
  }
  const PendulumSettings& s = b.settings;
  const struct {
    float v, lo, hi;
    const char* field;
  } checks[] = {{s.damping, 0, 1, "settings.damping"},
                {s.stiffness, 0, 1, "settings.stiffness"},
                {s.gravity_scale, -100, 100, "settings.gravity_scale"},
                {s.wind_scale, -100, 100, "settings.wind_scale"},
                {s.max_swing_degrees, 0, 180, "settings.max_swing_degrees"}};
  for (const auto& c : checks) {
    if (Error e = CheckRange(c.v, c.lo, c.hi, -1, c.field); e.code != ErrorCode::kNone) return e;
  }
  if (!IsFinite(s.centre)) return Fail(ErrorCode::kNotFinite, -1, "settings.centre", "centre is not finite");
  if (!IsFinite(s.up_axis) || std::fabs(Length(s.up_axis) - 1.0f) > 1e-3f)
    return Fail(ErrorCode::kOutOfRange, -1, "settings.up_axis", "up_axis must be a finite unit vector");
  const Transform offset = *b.accessory_offset;
  if (!IsFinite(offset))
    return Fail(ErrorCode::kNotFinite, -1, "accessory_offset", "the accessory offset is not finite at bind");
  if (!IsFinite(*b.joint_world))
    return Fail(ErrorCode::kNotFinite, -1, "joint_world", "the joint transform is not finite at bind");
  if (!UsableRotation(b.joint_world->rotation))
    return Fail(ErrorCode::kNotUnitRotation, -1, "joint_world.rotation",
                "the joint's rotation is too far from unit length to use (|q|^2 outside [0.25, 4])");
  // The rest lever, in the joint's frame: hinge (joint origin) -> accessory centre.
  Vec3 lever = TransformPoint(offset, s.centre);
  if (Length(lever) < kShortLever) lever = Rotate(offset.rotation, -s.up_axis) * kSyntheticLever;
  const Transform& joint = *b.joint_world;
  if (!IsFinite(joint.translation + Rotate(joint.rotation, Mul(joint.scale, lever))))
    return Fail(ErrorCode::kNotFinite, -1, "joint_world",
                "the joint's frame puts the accessory beyond float range at bind");
  const PendulumId id = handles_.Allocate();
  const auto index = static_cast<int32_t>(id.index);
  if (pendulums_.size() < handles_.SlotCount()) pendulums_.resize(handles_.SlotCount());
  Slot& p = pendulums_[index];
  p = Slot{};
  p.settings = s;
  p.joint = b.joint_world;
  p.offset_out = b.accessory_offset;
  p.rest_offset = offset;
  p.last_good_joint = *b.joint_world;
  p.max_swing = s.max_swing_degrees * kPi / 180.0f;
  p.lever_local = lever;
  p.lever_length = Length(lever);
  p.live_index = static_cast<int32_t>(live_pendulums_.size());
  live_pendulums_.push_back(index);
  pendulum_by_offset_.emplace(b.accessory_offset, index);
  awake_this_frame_.resize(live_pendulums_.size());
  chunk_counters_.resize((live_pendulums_.size() + kPendulumChunk - 1) / kPendulumChunk);
  return id;
}

int32_t PendulumSystem::UnbindAll() {
  int32_t count = 0;
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (handles_.IsLiveAt(i) && Ok(Unbind(handles_.HandleAt(i)))) ++count;
  }
  return count;
}

Error PendulumSystem::Unbind(PendulumId id) {
  Slot* p = Find(id);
  if (p == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "pendulum", "the pendulum handle is null or stale");
  *p->offset_out = p->rest_offset;
  pendulum_by_offset_.erase(p->offset_out);
  const int32_t li = p->live_index;
  const int32_t moved = live_pendulums_.back();
  live_pendulums_[li] = moved;
  pendulums_[moved].live_index = li;
  live_pendulums_.pop_back();
  handles_.Free(id);
  return {};
}

Error PendulumSystem::GetState(PendulumId id, Vec3* bob, float* swing_radians) const {
  const Slot* p = Find(id);
  if (p == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "pendulum", "the pendulum handle is null or stale");
  if (bob != nullptr) *bob = p->bob;
  if (swing_radians != nullptr) *swing_radians = p->swing;
  return {};
}

void PendulumSystem::StepOne(Slot& p, int32_t substeps, float dt, float alpha, Vec3 camera, Vec3 wind,
                             WorkCounters& counters, uint8_t& awake_flag) const {
  // A joint frame that is not finite, whose rotation is too far off unit to use (its
  // square overflows, or it is near zero), or that puts the accessory beyond float range is
  // bad input: the last good one stays, and it is counted.
  auto rest_bob_of = [&p](const Transform& j) { return j.translation + Rotate(j.rotation, Mul(j.scale, p.lever_local)); };
  Transform joint = *p.joint;
  Vec3 rest_bob{};
  if (IsFinite(joint) && UsableRotation(joint.rotation) && IsFinite(rest_bob = rest_bob_of(joint))) {
    p.last_good_joint = joint;
  } else {
    joint = p.last_good_joint;
    rest_bob = rest_bob_of(joint);
    ++counters.bad_input;
  }
  const Vec3 hinge = joint.translation;
  const float max_d = settings_.max_distance;
  awake_flag = 0;
  if (!(LengthSquared(hinge - camera) <= max_d * max_d)) {
    p.awake = false;
    return;
  }
  const Vec3 rest_dir = NormalizeOr(rest_bob - hinge, Vec3{0, -1, 0});
  const float length = Length(rest_bob - hinge);
  const bool teleported = p.awake && LengthSquared(hinge - p.prev_hinge) > settings_.teleport_distance * settings_.teleport_distance;
  if (!p.awake || teleported) {
    awake_flag = p.awake ? 1 : 2;
    if (teleported) ++counters.teleport;
    p.awake = true;
    p.bob = p.prev_bob = p.prev_rest_bob = rest_bob;
    p.prev_hinge = hinge;
    p.dir = rest_dir;
    p.prev_swing = Quat{};
  } else {
    awake_flag = 1;
  }
  const float cos_max = std::cos(p.max_swing);
  auto clamp_dir = [&](Vec3 dir, Vec3 rest) {
    if (Dot(dir, rest) >= cos_max) return dir;
    const Vec3 axis = NormalizeOr(Cross(rest, dir), NormalizeOr(Cross(rest, Vec3{1, 0, 0}), Vec3{0, 0, 1}));
    return Rotate(AxisAngle(axis, p.max_swing), rest);
  };
  if (substeps > 0) {
    const Vec3 accel = (settings_.gravity * p.settings.gravity_scale + wind * p.settings.wind_scale) * (dt * dt);
    Vec3 rd_last = NormalizeOr(p.prev_rest_bob - p.prev_hinge, rest_dir);
    for (int32_t s = 0; s < substeps; ++s) {
      // The swing the substep before this one ended with (only the last two are written).
      if (s + 2 >= substeps) p.prev_swing = ShortestArc(rd_last, p.dir);
      const float along = static_cast<float>(s + 1) / static_cast<float>(substeps);
      const Vec3 h = Lerp(p.prev_hinge, hinge, along);
      const Vec3 rb = Lerp(p.prev_rest_bob, rest_bob, along);
      const Vec3 velocity = (p.bob - p.prev_bob) * p.settings.damping;
      p.prev_bob = p.bob;
      Vec3 bob = p.bob + velocity + accel;
      bob = Lerp(bob, rb, p.settings.stiffness);
      const Vec3 rd = NormalizeOr(rb - h, rest_dir);
      const Vec3 dir = clamp_dir(NormalizeOr(bob - h, rd), rd);
      p.bob = h + dir * length;
      p.dir = dir;
      rd_last = rd;
    }
    p.prev_hinge = hinge;
    p.prev_rest_bob = rest_bob;
  }
  // Clamp again against this frame's rest: with no substep the joint may have turned.
  const Vec3 dir = clamp_dir(p.dir, rest_dir);
  const Quat swing = ShortestArc(rest_dir, dir);
  // Render interpolation: the swing alpha of the way from the substep before the last.
  const Quat shown = alpha < 1.0f ? Nlerp(p.prev_swing, swing, alpha) : swing;
  const Quat local = Conjugate(joint.rotation) * shown * joint.rotation;
  Transform out{Rotate(local, p.rest_offset.translation), Normalize(local * p.rest_offset.rotation),
                p.rest_offset.scale};
  if (!IsFinite(out) || !IsFinite(p.bob)) {
    ++counters.reset;
    p.bob = p.prev_bob = p.prev_rest_bob = rest_bob;
    p.prev_hinge = hinge;
    p.dir = rest_dir;
    p.prev_swing = Quat{};
    out = p.rest_offset;
  }
  p.swing = RotationAngle(swing);
  *p.offset_out = out;
}

void PendulumSystem::Step(int32_t substeps, float dt, float alpha, Vec3 camera, Vec3 wind, FrameStats& stats) {
  const auto live = static_cast<int32_t>(live_pendulums_.size());
  const int32_t chunks = (live + kPendulumChunk - 1) / kPendulumChunk;
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t c = begin; c < end; ++c) {
      chunk_counters_[c] = {};
      const int32_t last = std::min(live, (c + 1) * kPendulumChunk);
      for (int32_t i = c * kPendulumChunk; i < last; ++i) {
        StepOne(pendulums_[live_pendulums_[i]], substeps, dt, alpha, camera, wind, chunk_counters_[c],
                awake_this_frame_[i]);
      }
    }
  };
  ParallelFor(settings_.tasks, chunks, 1, task, {profiler_, "pendulums/task", kPendulumColor});
  int32_t awake = 0, woke = 0;
  for (int32_t i = 0; i < live; ++i) {
    awake += awake_this_frame_[i] != 0 ? 1 : 0;
    woke += awake_this_frame_[i] == 2 ? 1 : 0;
  }
  for (int32_t c = 0; c < chunks; ++c) {
    stats.snapped_bad_input += chunk_counters_[c].bad_input;
    stats.reset_non_finite += chunk_counters_[c].reset;
    stats.snapped_teleport += chunk_counters_[c].teleport;
  }
  stats.snapped_wake += woke;
  stats.simulated_pendulums = awake;
  stats.sleeping_pendulums = live - awake;
}

void PendulumSystem::CheckHostBuffers(PendulumId only) const {
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    const Slot& p = pendulums_[i];
    const PendulumId id = handles_.HandleAt(i);
    if (!handles_.IsLiveAt(i) || (!only.IsNull() && only != id)) continue;
    const HostBufferOwner owner{"pendulum", i, id.generation};
    CheckHostBuffer(owner, "joint_world", p.joint, sizeof(Transform));
    CheckHostBuffer(owner, "accessory_offset", p.offset_out, sizeof(Transform));
  }
}

void PendulumSystem::HashState(StateHasher& hasher) const {
for (std::size_t i = 0; i < pendulums_.size(); ++i) {
  const Slot& p = pendulums_[i];
  if (!handles_.IsLiveAt(static_cast<uint32_t>(i)) || !p.awake) continue;
  hasher.Mix(&i, sizeof(i));
  hasher.Mix(&p.bob, sizeof(Vec3));
  hasher.Mix(&p.prev_bob, sizeof(Vec3));
}
}

// Saved states: the motion of every bound pendulum (awake or not), and its last good
// joint frame (the teleport guard compares against it).
void PendulumSystem::SaveState(SnapshotWriter& w) const {
  const std::size_t at = w.Begin(SnapshotTag("PNDS"));
  w.U32(handles_.SlotCount());
  w.U32(handles_.LiveCount());
  for (uint32_t i = 0; i < handles_.SlotCount(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    const Slot& p = pendulums_[i];
    w.U32(i);
    w.Bool(p.awake);
    w.T(p.last_good_joint);
    for (const Vec3 v : {p.bob, p.prev_bob, p.prev_hinge, p.prev_rest_bob, p.dir}) w.V3(v);
    w.Q(p.prev_swing);
    w.F32(p.swing);
  }
  w.End(at);
}

void PendulumSystem::RestoreState(SnapshotReader& r) {
  const std::size_t end = r.Begin(SnapshotTag("PNDS"), "pendulums");
  r.Expect(r.U32("pendulums.slot_count"), handles_.SlotCount(), -1, "pendulums.slot_count");
  r.Expect(r.U32("pendulums.live_count"), handles_.LiveCount(), -1, "pendulums.live_count");
  for (uint32_t i = 0; i < handles_.SlotCount() && !r.failed(); ++i) {
    if (!handles_.IsLiveAt(i)) continue;
    r.Expect(r.U32("pendulum.slot"), i, static_cast<int32_t>(i), "pendulum.slot");
    const bool awake = r.Bool("pendulum.awake");
    const Transform joint = r.T("pendulum.last_good_joint");
    Vec3 v[5];
    for (Vec3& x : v) x = r.V3("pendulum.motion");
    const Quat prev_swing = r.Q("pendulum.prev_swing");
    const float swing = r.F32("pendulum.swing", true);
    if (!r.apply() || r.failed()) continue;
    Slot& p = pendulums_[i];
    p.awake = awake;
    p.last_good_joint = joint;
    p.bob = v[0];
    p.prev_bob = v[1];
    p.prev_hinge = v[2];
    p.prev_rest_bob = v[3];
    p.dir = v[4];
    p.prev_swing = prev_swing;
    p.swing = swing;
  }
  r.End(end, "pendulums");
}

}  // namespace tendon::detail
