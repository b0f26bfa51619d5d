// kernel/ragdolls/ragdoll_system.cpp: ragdoll lanes by archetype, the host's controls, and
// the ragdoll frame.
//
// A frame (Step):
//   1. kinematic roots follow their host frames (a moving one wakes its ragdoll);
//   2. when two or more ragdolls are enabled: the broad phase, the islands and the pairs'
//      contacts, once for the frame;
//   3. the substeps: with no pair, each block runs all of them in one kernel call (its
//      bodies stay in registers and L1); otherwise one substep at a time, in XPBD order
//      with the pairs inside: the kernel's positions, the pairs' positions, the kernel's
//      velocities (derived from positions), the pairs' velocity pass. Where the pairs
//      leave the stepped blocks in two or more domains (BuildDomains; not when an island
//      is split by colour, nor when one domain would keep the workers unbalanced), each
//      domain runs that sequence for every substep in one task, with no barrier between
//      the passes; otherwise each pass is a parallel-for over blocks or islands;
//   4. per block: lanes that went non-finite are reset to the last written pose at rest
//      and counted; sleep; part frames into the host's buffers.
// Work items are blocks with enabled lanes (disabled instances cost the solver nothing);
// every count that crosses items is summed serially in item order.
#include "kernel/ragdolls/ragdoll_system.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <string>

#include "kernel/collide/part_distance.h"
#include "kernel/collide/sphere_trace.h"
#include "kernel/collide/static_world.h"
#include "kernel/core/finite.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/parallel.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"
#include "kernel/rigid/rigid_constants.h"

namespace tendon::detail {

namespace {

// Double-precision vectors for the rare velocity whose float arithmetic overflowed.
struct Vec3d {
  double x, y, z;
};
Vec3d ToDouble(Vec3 v) { return {v.x, v.y, v.z}; }
Vec3d Add(Vec3d a, Vec3d b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
Vec3d Scale(Vec3d a, double k) { return {a.x * k, a.y * k, a.z * k}; }
Vec3d CrossD(Vec3d a, Vec3d b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
// v rotated by the unit quaternion q: v + 2w (u x v) + 2 u x (u x v).
Vec3d RotateD(Quat q, Vec3d v) {
  const Vec3d u{q.x, q.y, q.z};
  const Vec3d t = Scale(CrossD(u, v), 2.0);
  return Add(Add(v, Scale(t, q.w)), CrossD(u, t));
}

// A velocity the host's numbers give, as it is stored: the float result when it is finite;
// else (a huge but finite impulse or velocity whose sum or product overflowed float) the
// part's speed cap along the direction `exact()` works out in double. The kernels hold
// every velocity to the caps each substep; this keeps an overflow from ever reaching the
// solver state, or GetRagdollVelocities.
template <class F>
Vec3 Storable(Vec3 v, float cap, const F& exact) {
  if (IsFinite(v)) return v;
  const Vec3d d = exact();
  const double len = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
  if (!(len > 0) || !std::isfinite(len)) return Vec3{};
  const double k = static_cast<double>(cap) / len;
  return Vec3{static_cast<float>(d.x * k), static_cast<float>(d.y * k), static_cast<float>(d.z * k)};
}

}  // namespace

RagdollSystem::RagdollSystem(const RagdollSystemSettings& settings, const RigidKernels& kernels)
    : settings_(settings),
      kernels_(&kernels),
      sleep_(SleepSettings{settings.ragdoll_sleep_speed, settings.ragdoll_sleep_seconds, settings.ragdoll_settle_damping}),
      broad_(settings.tasks),
      contacts_(PairContactSettings{settings.tasks, nullptr, settings.gravity, settings.ragdoll_contact_angular_damping,
                                    settings.ragdoll_max_push_speed, &kernels}, store_,
                broad_, islands_) {}

RagdollSystem::~RagdollSystem() = default;

bool RagdollSystem::Live(RagdollArchetypeId id) const {
  return id.generation == 1 && id.index < archetypes_.size() && !removed_[id.index];
}

const RagdollArchetype* RagdollSystem::Archetype(RagdollArchetypeId id) const {
  return Live(id) ? &archetypes_[id.index] : nullptr;
}

Error RagdollSystem::RemoveArchetype(RagdollArchetypeId id) {
  if (!Live(id)) return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null, stale or not this world's");
  int32_t bound = 0;
  for (const RagdollSlot& r : store_.slots) bound += r.live && store_.groups[r.group].archetype == static_cast<int32_t>(id.index) ? 1 : 0;
  if (bound > 0)
    return Fail(ErrorCode::kInUse, -1, "archetype", std::to_string(bound) + " ragdolls of this archetype are still bound");
  removed_[id.index] = true;
  archetypes_[id.index] = RagdollArchetype{};
  for (RagdollGroup& g : store_.groups) {
    if (g.archetype != static_cast<int32_t>(id.index)) continue;
    std::vector<AlignedFloats>().swap(g.blocks);  // its lanes' memory goes too
    std::vector<int32_t>().swap(g.lane_owner);
    g.lanes_enabled = g.lanes_used = g.reserved = 0;
  }
  return {};
}

int32_t RagdollSystem::UnbindAll() {
  int32_t count = 0;
  for (std::size_t i = 0; i < store_.slots.size(); ++i) {
    if (store_.slots[i].live && Unbind(RagdollId{static_cast<uint32_t>(i), store_.slots[i].generation}).code == ErrorCode::kNone)
      ++count;
  }
  return count;
}

// Contacts between ragdolls are sized with the bound parts and slots, here, never in Step.
void RagdollSystem::ReserveContacts() {
  broad_.Reserve(total_parts_, static_cast<int32_t>(store_.slots.size()));
  islands_.Reserve(total_parts_, broad_.pair_capacity(), static_cast<int32_t>(store_.slots.size()));
  contacts_.Reserve(broad_.pair_capacity());
  domain_islands_.resize(store_.slots.size());  // an island per ragdoll at most
}

int32_t RagdollSystem::BuildDomains(int32_t count, int32_t pair_count) {
  if (islands_.HasSplitIsland()) return 0;
  int32_t* parent = domain_parent_.data();
  auto find = [parent](int32_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  };
  auto work_of = [&](int32_t body) {
    const PairBody& b = broad_.body(body);
    return group_first_work_[b.group] + b.lane / store_.groups[b.group].block_lanes;
  };
  // A block runs when the kernel steps one of its lanes (live and awake: the kernel's own
  // test, RunStages). One that does not is not written this frame, by the kernel or by
  // the pairs (a sleeping body is fixed in its pairs), so any domain may read it.
  for (int32_t i = 0; i < count; ++i) {
    parent[i] = i;
    const detail::RigidBlockView view = store_.groups[work_[i].group].View(work_[i].block);
    const float* asleep = view.Lane(detail::kAsleep);
    const float* active = view.Lane(detail::kActive);
    bool runs = false;
    for (int32_t l = 0; l < view.lanes; ++l) runs = runs || !(asleep[l] > 0.5f || active[l] < 0.5f);
    domain_runs_[i] = runs ? 1 : 0;
  }
  // A pair joins its two blocks when both run: the kernel writes a block's every lane that
  // runs (a sleeping one too, if the kernel stores its slice whole), and another domain's
  // pairs would read it meanwhile.
  for (int32_t i = 0; i < pair_count; ++i) {
    const PartPair& pair = islands_.pair(i);
    const int32_t wa = work_of(pair.a), wb = work_of(pair.b);
    if (domain_runs_[wa] == 0 || domain_runs_[wb] == 0) continue;
    const int32_t ra = find(wa), rb = find(wb);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  int32_t domains = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (domain_runs_[i] != 0 && find(i) == i) domain_of_[i] = domains++;
  }
  if (domains < 2) return domains;
  // An island's domain is that of a body of its that runs (an island has an awake body).
  auto island_domain = [&](int32_t k) {
    const PartPair& first = islands_.pair(islands_.IslandBegin(k));
    const int32_t wa = work_of(first.a);
    assert(domain_runs_[wa] != 0 || domain_runs_[work_of(first.b)] != 0);  // an awake body's block runs
    return domain_of_[find(domain_runs_[wa] != 0 ? wa : work_of(first.b))];
  };
  // Counting sorts: the blocks that run by domain (in work order), the islands by domain
  // (in island order); a domain's weight is its lanes' parts plus its pairs, roughly the
  // substeps' work.
  for (int32_t d = 0; d <= domains; ++d) domain_block_start_[d] = domain_island_start_[d] = 0;
  for (int32_t d = 0; d < domains; ++d) domain_weight_[d] = 0;
  int64_t total = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (domain_runs_[i] == 0) continue;
    domain_of_[i] = domain_of_[find(i)];
    ++domain_block_start_[domain_of_[i] + 1];
    const RagdollGroup& g = store_.groups[work_[i].group];
    domain_weight_[domain_of_[i]] += g.block_lanes * g.part_count;
    total += g.block_lanes * g.part_count;
  }
  const int32_t islands = islands_.island_count();
  for (int32_t k = 0; k < islands; ++k) {
    const int32_t d = island_domain(k);
    ++domain_island_start_[d + 1];
    domain_weight_[d] += islands_.IslandEnd(k) - islands_.IslandBegin(k);
    total += islands_.IslandEnd(k) - islands_.IslandBegin(k);
  }
  // The domains, heaviest first (ties in domain order): the order workers take them in.
  for (int32_t d = 0; d < domains; ++d) domain_order_[d] = d;
  std::sort(domain_order_.begin(), domain_order_.begin() + domains, [&](int32_t x, int32_t y) {
    return domain_weight_[x] > domain_weight_[y] || (domain_weight_[x] == domain_weight_[y] && x < y);
  });
  // With workers to share it: the domains dealt in that order, each to the least loaded
  // worker, must finish within 4/3 of the work spread evenly over the workers, or the
  // substep-by-substep schedule (which spreads blocks and islands over all of them) runs.
  // Two workers and two domains: the heaviest may hold up to two thirds.
  const int32_t workers = std::min(WorkerSlots(settings_.tasks), kMaxDomainWorkers);
  if (workers > 1) {
    std::array<int64_t, kMaxDomainWorkers> load{};
    for (int32_t k = 0; k < domains; ++k) {
      int32_t least = 0;
      for (int32_t w = 1; w < workers; ++w) least = load[w] < load[least] ? w : least;
      load[least] += domain_weight_[domain_order_[k]];
    }
    const int64_t makespan = *std::max_element(load.begin(), load.begin() + workers);
    if (3 * static_cast<int64_t>(workers) * makespan > 4 * total) return 1;
  }
  for (int32_t d = 0; d < domains; ++d) {
    domain_block_start_[d + 1] += domain_block_start_[d];
    domain_island_start_[d + 1] += domain_island_start_[d];
  }
  for (int32_t d = 0; d < domains; ++d) domain_fill_[d] = domain_block_start_[d];
  for (int32_t i = 0; i < count; ++i) {
    if (domain_runs_[i] != 0) domain_blocks_[domain_fill_[domain_of_[i]]++] = i;
  }
  for (int32_t d = 0; d < domains; ++d) domain_fill_[d] = domain_island_start_[d];
  for (int32_t k = 0; k < islands; ++k) domain_islands_[domain_fill_[island_domain(k)]++] = k;
  return domains;
}

Result<RagdollArchetypeId> RagdollSystem::BuildArchetype(const RagdollSettings& settings) {
  detail::RagdollArchetype archetype;
  if (Error e = detail::BuildRagdollArchetype(settings, &archetype); e.code != ErrorCode::kNone) return e;
  archetypes_.push_back(std::move(archetype));
  removed_.push_back(false);
  return RagdollArchetypeId{static_cast<uint32_t>(archetypes_.size() - 1), 1};
}

int32_t RagdollSystem::PartCount(RagdollArchetypeId id) const {
  if (!Live(id)) return 0;
  return static_cast<int32_t>(archetypes_[id.index].parts.size());
}

Error RagdollSystem::GetPartInfo(RagdollArchetypeId id, int32_t part, RagdollPartInfo* out) const {
  if (!Live(id))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  const detail::RagdollArchetype& a = archetypes_[id.index];
  if (part < 0 || part >= static_cast<int32_t>(a.parts.size()) || out == nullptr)
    return Fail(ErrorCode::kBadReference, part, "part", "no such part (or a null output)");
  const detail::RigidPartArchetype& p = a.parts[part];
  out->mass = p.mass;
  out->principal_inertia = p.inertia;
  out->body_pose = p.body_pose;
  out->volume = p.volume;
  return {};
}


Result<RagdollId> RagdollSystem::Bind(const RagdollBinding& b) {
  if (!Live(b.archetype))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  const detail::RagdollArchetype& a = archetypes_[b.archetype.index];
  const auto n = static_cast<int32_t>(a.parts.size());
  if (b.output_parts.data() == nullptr || static_cast<int32_t>(b.output_parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "output_parts",
                "output_parts needs " + std::to_string(n) + " transforms, got " + std::to_string(b.output_parts.size()));
  if (!b.start_parts.empty() && static_cast<int32_t>(b.start_parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "start_parts", "start_parts is shorter than the part count");
  if (auto it = by_output_.find(b.output_parts.data()); it != by_output_.end())
    return RagdollId{static_cast<uint32_t>(it->second), store_.slots[it->second].generation};
  std::vector<detail::BoundPoseStream> streams;
  {
    std::vector<int32_t> part_index(static_cast<std::size_t>(n));
    for (int32_t j = 0; j < n; ++j) part_index[j] = j;
    if (Error e = detail::BindPoseStreams(b.pose_streams, part_index, "pose_streams", &streams); !Ok(e)) return e;
  }
  if (!IsFinite(b.placement) || !IsFinite(b.linear_velocity) || !IsFinite(b.angular_velocity))
    return Fail(ErrorCode::kNotFinite, -1, "placement", "placement or the start velocities are not finite");
  // Rotations far from unit are refused (kernel/core/finite.h; found by fuzz_build: a
  // placement of |q| ~ 1e30 overflowed the bind pose).
  if (!UsableRotation(b.placement.rotation))
    return Fail(ErrorCode::kNotUnitRotation, -1, "placement", "placement's rotation is far from unit length");
  for (int32_t j = 0; j < static_cast<int32_t>(b.start_parts.size()) && j < n; ++j) {
    if (!IsFinite(b.start_parts[j]))
      return Fail(ErrorCode::kNotFinite, j, "start_parts", "start_parts[" + std::to_string(j) + "] is not finite");
    if (!UsableRotation(b.start_parts[j].rotation))
      return Fail(ErrorCode::kNotUnitRotation, j, "start_parts",
                  "start_parts[" + std::to_string(j) + "]'s rotation is far from unit length");
  }
  if (!IsFinite(b.planar_normal) || (!(b.planar_normal == Vec3{}) && std::fabs(Length(b.planar_normal) - 1.0f) > 1e-3f))
    return Fail(ErrorCode::kOutOfRange, -1, "planar_normal", "planar_normal must be zero (3D) or a unit vector");
  if (std::isnan(b.freeze_after_seconds) || b.freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  if (b.kinematic_root != nullptr && (!IsFinite(*b.kinematic_root) || !UsableRotation(b.kinematic_root->rotation)))
    return Fail(ErrorCode::kNotFinite, -1, "kinematic_root", "the kinematic root frame is not finite (or not a rotation) at bind");
  // A placement rotation a little off unit would scale the placed parts: normalised.
  Transform placement = b.placement;
  if (!NearUnit(placement.rotation)) placement.rotation = Normalize(placement.rotation);
  const bool kinematic = b.kinematic_root != nullptr;
  const int32_t gi = FindOrAddGroup(static_cast<int32_t>(b.archetype.index), kinematic);
  RagdollGroup& g = store_.groups[gi];
  // Body poses to start from.
  Transform bodies[detail::kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j) {
    // A part's frame in the build pose is its body pose times the inverse body offset.
    const Transform part =
        b.start_parts.empty()
            ? Compose(placement, Compose(a.parts[j].body_pose, Relative(a.parts[j].body_in_part, Transform{})))
            : b.start_parts[j];
    bodies[j] = Compose(Transform{part.translation, Normalize(part.rotation), {1, 1, 1}}, a.parts[j].body_in_part);
    // Finite numbers can still overflow when composed: refuse them here, or the body
    // would reset to a non-finite pose every frame.
    if (!IsFinite(bodies[j]) || !IsFinite(Compose(bodies[j], Relative(a.parts[j].body_in_part, Transform{}))))
      return Fail(ErrorCode::kNotFinite, j, b.start_parts.empty() ? "placement" : "start_parts",
                  "part " + std::to_string(j) + "'s starting frame is not finite once composed with its body frame");
  }
  // Capacity: one more lane (blocks grow here, never in Step).
  EnsureLanes(gi, g.lanes_used + 1);
  int32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<int32_t>(store_.slots.size());
    store_.slots.emplace_back();
  }
  RagdollSlot& slot = store_.slots[index];
  slot.live = true;
  slot.group = gi;
  slot.lane = g.lanes_used++;
  slot.output = b.output_parts.data();
  slot.kinematic_root = b.kinematic_root;
  slot.part_count = n;
  slot.still_seconds = slot.slow_seconds = 0;
  slot.sleep_x.resize(n);
  slot.sleep_q.resize(n);
  slot.frame_x.resize(n);
  slot.frame_q.resize(n);
  slot.frame_speed.assign(n, 0.0f);
  for (int32_t j = 0; j < n; ++j) {
    slot.frame_x[j] = bodies[j].translation;
    slot.frame_q[j] = bodies[j].rotation;
  }
  slot.age_seconds = 0;
  slot.asleep = slot.frozen = false;
  slot.can_sleep = true;
  slot.freeze_when_asleep = b.freeze_when_asleep;
  slot.freeze_after_seconds = b.freeze_after_seconds;
  slot.collide_mode = b.collide_mode;
  slot.enabled = b.enabled;
  g.lane_owner[slot.lane] = index;
  g.SetLane(slot.lane, bodies, b.linear_velocity, b.angular_velocity, false);
  if (!(b.planar_normal == Vec3{})) g.SetPlanar(slot.lane, NormalizeOr(b.planar_normal, Vec3{0, 0, 1}));
  if (slot.enabled) EnableLane(slot);
  for (int32_t j = 0; j < n; ++j) slot.output[j] = Compose(bodies[j], Relative(a.parts[j].body_in_part, Transform{}));
  slot.streams = std::move(streams);
  EmitStreams(slot);
  by_output_.emplace(b.output_parts.data(), index);
  ++live_count_;
  total_parts_ += n;
  ReserveContacts();
  return RagdollId{static_cast<uint32_t>(index), slot.generation};
}

bool RagdollSystem::OverlapsHostBuffers(const void* data, std::size_t bytes) const {
  for (const RagdollSlot& r : store_.slots) {
    if (!r.live) continue;
    if (detail::RangesOverlap(data, bytes, r.output, static_cast<std::size_t>(r.part_count) * sizeof(Transform)) ||
        detail::RangesOverlap(data, bytes, r.kinematic_root, sizeof(Transform)))
      return true;
    for (const detail::BoundPoseStream& stream : r.streams) {
      if (detail::RangesOverlap(data, bytes, stream.base, stream.extent) ||
          detail::RangesOverlap(data, bytes, stream.model_world, sizeof(Transform)))
        return true;
    }
  }
  return false;
}

void RagdollSystem::EmitStreams(RagdollSlot& slot) {
  for (detail::BoundPoseStream& stream : slot.streams) {
    detail::RefreshModel(stream);
    for (int32_t j = 0; j < slot.part_count; ++j) detail::EmitWorldTransform(stream, j, slot.output[j]);
  }
}

Error RagdollSystem::Unbind(RagdollId id) {
  if (id.generation == 0 || id.index >= store_.slots.size() || !store_.slots[id.index].live ||
      store_.slots[id.index].generation != id.generation)
    return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& slot = store_.slots[id.index];
  RemoveLane(slot);
  by_output_.erase(slot.output);
  std::vector<detail::BoundPoseStream>().swap(slot.streams);
  slot.live = false;
  slot.generation = slot.generation == UINT32_MAX ? 1 : slot.generation + 1;
  free_.push_back(static_cast<int32_t>(id.index));
  --live_count_;
  total_parts_ -= slot.part_count;
  return {};
}

Error RagdollSystem::SetEnabled(RagdollId id, bool enabled) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& slot = store_.slots[id.index];
  if (slot.enabled == enabled) return {};
  slot.enabled = enabled;
  if (enabled) {
    EnableLane(slot);
    store_.groups[slot.group].MarkPlaced(slot.lane);
    slot.asleep = slot.frozen = false;
    slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;
    store_.groups[slot.group].LaneField(slot.lane, detail::kAsleep) = 0.0f;
  } else {
    DisableLane(slot);
  }
  return {};
}

Error RagdollSystem::SetSleeping(RagdollId id, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  if (std::isnan(freeze_after_seconds) || freeze_after_seconds < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "freeze_after_seconds", "freeze_after_seconds must be >= 0 (infinity: never)");
  RagdollSlot& slot = store_.slots[id.index];
  if (!can_sleep && slot.asleep) Wake(id);
  if (can_sleep && !slot.can_sleep) slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;  // clocks restart
  slot.can_sleep = can_sleep;
  slot.freeze_when_asleep = freeze_when_asleep;
  slot.freeze_after_seconds = freeze_after_seconds;
  return {};
}


Error RagdollSystem::SetPartVelocity(RagdollId id, int32_t part, Vec3 linear, Vec3 angular) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& slot = store_.slots[id.index];
  if (part < 0 || part >= slot.part_count) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (!IsFinite(linear) || !IsFinite(angular))
    return Fail(ErrorCode::kNotFinite, part, "linear", "the velocities are not finite");
  RagdollGroup& g = store_.groups[slot.group];
  if (g.constants[part].inv_mass == 0.0f) return {};  // a kinematic root follows its frame
  const detail::RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  // Given at the part's origin; the lane holds the centre of mass's.
  const Transform& frame = slot.output[part];
  const Vec3 com{view.Part(detail::kRbXx, part)[l], view.Part(detail::kRbXy, part)[l], view.Part(detail::kRbXz, part)[l]};
  const Vec3 v = Storable(linear + Cross(angular, com - frame.translation), g.constants[part].max_linear_speed, [&] {
    return Add(ToDouble(linear), CrossD(ToDouble(angular), Add(ToDouble(com), Scale(ToDouble(frame.translation), -1.0))));
  });
  const float values[6] = {v.x, v.y, v.z, angular.x, angular.y, angular.z};
  const int32_t fields[6] = {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz};
  for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], part)[l] = values[f];
  return Wake(id);
}

bool RagdollSystem::IsEnabled(RagdollId id) const { return IsValid(id) && store_.slots[id.index].enabled; }

Error RagdollSystem::SetKinematicRoot(RagdollId id, const Transform* root) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  if (root != nullptr && (!IsFinite(*root) || !UsableRotation(root->rotation)))
    return Fail(ErrorCode::kNotFinite, -1, "root", "the kinematic root frame is not finite (or not a rotation)");
  RagdollSlot& slot = store_.slots[id.index];
  const int32_t target = FindOrAddGroup(store_.groups[slot.group].archetype, root != nullptr);
  MoveToGroup(static_cast<int32_t>(id.index), target);
  slot.kinematic_root = root;
  return {};
}

Error RagdollSystem::ReserveKinematicToggle(RagdollArchetypeId archetype, int32_t instances) {
  if (!Live(archetype))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  for (bool kinematic : {false, true}) {
    const int32_t gi = FindOrAddGroup(static_cast<int32_t>(archetype.index), kinematic);
    const int64_t reserved = static_cast<int64_t>(store_.groups[gi].reserved) + instances;
    if (reserved + store_.groups[gi].lanes_used > kMaxRagdollInstances)
      return Fail(ErrorCode::kCapacity, -1, "instances",
                  "at most " + std::to_string(kMaxRagdollInstances) + " instances of one ragdoll archetype, reserved or bound");
  }
  for (bool kinematic : {false, true}) {
    const int32_t gi = FindOrAddGroup(static_cast<int32_t>(archetype.index), kinematic);
    RagdollGroup& g = store_.groups[gi];
    g.reserved = static_cast<int32_t>(std::max<int64_t>(static_cast<int64_t>(g.reserved) + instances, 0));
    EnsureLanes(gi, g.lanes_used);
  }
  return {};
}

Error RagdollSystem::SetPartStates(RagdollId id, std::span<const Transform> parts, std::span<const Vec3> linear,
                                  std::span<const Vec3> angular) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& slot = store_.slots[id.index];
  const int32_t n = slot.part_count;
  if (static_cast<int32_t>(parts.size()) < n)
    return Fail(ErrorCode::kNullBuffer, -1, "parts", "one part frame per part is needed");
  if ((!linear.empty() && static_cast<int32_t>(linear.size()) < n) || (!angular.empty() && static_cast<int32_t>(angular.size()) < n))
    return Fail(ErrorCode::kNullBuffer, -1, "linear", "velocities, when given, are needed for every part");
  for (int32_t j = 0; j < n; ++j) {
    if (!IsFinite(parts[j]) || !(Dot(parts[j].rotation, parts[j].rotation) > 0.5f))
      return Fail(ErrorCode::kNotFinite, j, "parts", "parts[" + std::to_string(j) + "] is not a finite frame");
    if ((!linear.empty() && !IsFinite(linear[j])) || (!angular.empty() && !IsFinite(angular[j])))
      return Fail(ErrorCode::kNotFinite, j, "linear", "the velocities of part " + std::to_string(j) + " are not finite");
  }
  RagdollGroup& g = store_.groups[slot.group];
  Transform bodies[detail::kMaxRagdollParts];
  for (int32_t j = 0; j < n; ++j)
    bodies[j] = Compose(Transform{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}}, g.body_in_part[j]);
  g.PlaceBodies(slot.lane, bodies, Vec3{}, Vec3{});
  const detail::RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  for (int32_t j = 0; j < n; ++j) {
    if (g.constants[j].inv_mass == 0.0f) continue;  // a kinematic root is driven by the host
    // The velocity given at the part's origin, moved to its centre of mass.
    const Vec3 wv = angular.empty() ? Vec3{} : angular[j];
    const Vec3 lv = linear.empty() ? Vec3{} : linear[j];
    const Vec3 v = Storable(lv + Cross(wv, bodies[j].translation - parts[j].translation), g.constants[j].max_linear_speed, [&] {
      return Add(ToDouble(lv), CrossD(ToDouble(wv), Add(ToDouble(bodies[j].translation), Scale(ToDouble(parts[j].translation), -1.0))));
    });
    const float values[6] = {v.x, v.y, v.z, wv.x, wv.y, wv.z};
    const int32_t fields[6] = {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz};
    for (int32_t f = 0; f < 6; ++f) view.Part(fields[f], j)[l] = values[f];
  }
  for (int32_t j = 0; j < n; ++j) slot.output[j] = Transform{parts[j].translation, Normalize(parts[j].rotation), {1, 1, 1}};
  EmitStreams(slot);
  slot.asleep = slot.frozen = false;
  slot.still_seconds = slot.slow_seconds = slot.age_seconds = 0;
  view.Lane(detail::kAsleep)[l] = 0.0f;
  return {};
}

bool RagdollSystem::IsValid(RagdollId id) const {
  return id.generation != 0 && id.index < store_.slots.size() && store_.slots[id.index].live &&
         store_.slots[id.index].generation == id.generation;
}

Error RagdollSystem::Wake(RagdollId id) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& r = store_.slots[id.index];
  r.asleep = r.frozen = false;
  r.still_seconds = r.slow_seconds = 0;
  r.age_seconds = 0;
  store_.groups[r.group].LaneField(r.lane, detail::kAsleep) = 0.0f;
  return {};
}

Error RagdollSystem::ApplyImpulse(RagdollId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& r = store_.slots[id.index];
  if (part < 0 || part >= r.part_count) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (!IsFinite(impulse) || !IsFinite(world_point))
    return Fail(ErrorCode::kNotFinite, -1, "impulse", "the impulse or its point is not finite");
  // A switched-off ragdoll is not stepped: the velocity would wait in its lane and fire
  // whenever the host switches it on again, long after the hit it was for.
  if (!r.enabled)
    return Fail(ErrorCode::kInactive, -1, "ragdoll",
                "the ragdoll is switched off (SetRagdollEnabled(false)): switch it on before applying an impulse");
  Wake(id);
  RagdollGroup& g = store_.groups[r.group];
  const detail::RigidPartConstants& c = g.constants[part];
  const detail::RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  const Vec3 x{view.Part(detail::kRbXx, part)[l], view.Part(detail::kRbXy, part)[l], view.Part(detail::kRbXz, part)[l]};
  const Quat q{view.Part(detail::kRbQx, part)[l], view.Part(detail::kRbQy, part)[l], view.Part(detail::kRbQz, part)[l],
               view.Part(detail::kRbQw, part)[l]};
  const Vec3 torque_body = Rotate(Conjugate(q), Cross(world_point - x, impulse));
  const Vec3 dw = Rotate(q, Vec3{torque_body.x * c.inv_inertia[0], torque_body.y * c.inv_inertia[1],
                                 torque_body.z * c.inv_inertia[2]});
  const Vec3 dv = impulse * c.inv_mass;
  const Vec3 v0{view.Part(detail::kRbVx, part)[l], view.Part(detail::kRbVy, part)[l], view.Part(detail::kRbVz, part)[l]};
  const Vec3 w0{view.Part(detail::kRbWx, part)[l], view.Part(detail::kRbWy, part)[l], view.Part(detail::kRbWz, part)[l]};
  const Vec3 v = Storable(v0 + dv, c.max_linear_speed,
                          [&] { return Add(ToDouble(v0), Scale(ToDouble(impulse), c.inv_mass)); });
  const Vec3 w = Storable(w0 + dw, c.max_angular_speed, [&] {
    const Vec3d lever = Add(ToDouble(world_point), Scale(ToDouble(x), -1.0));
    const Vec3d t = RotateD(Conjugate(q), CrossD(lever, ToDouble(impulse)));
    return Add(ToDouble(w0), RotateD(q, Vec3d{t.x * c.inv_inertia[0], t.y * c.inv_inertia[1], t.z * c.inv_inertia[2]}));
  });
  view.Part(detail::kRbVx, part)[l] = v.x;
  view.Part(detail::kRbVy, part)[l] = v.y;
  view.Part(detail::kRbVz, part)[l] = v.z;
  view.Part(detail::kRbWx, part)[l] = w.x;
  view.Part(detail::kRbWy, part)[l] = w.y;
  view.Part(detail::kRbWz, part)[l] = w.z;
  return {};
}

Error RagdollSystem::SetMotorTargets(RagdollId id, std::span<const Quat> local_rotations, float strength,
                                    std::span<const Vec3> local_angular_velocities) {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  RagdollSlot& r = store_.slots[id.index];
  if (static_cast<int32_t>(local_rotations.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "local_rotations", "one rotation per part is needed");
  if (!local_angular_velocities.empty() && static_cast<int32_t>(local_angular_velocities.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "local_angular_velocities", "one angular velocity per part is needed");
  if (!std::isfinite(strength) || strength < 0 || strength > 1)
    return Fail(ErrorCode::kOutOfRange, -1, "strength", "strength must be within [0, 1]");
  for (int32_t j = 1; j < r.part_count; ++j) {
    if (!IsFinite(local_rotations[j]) || !(Dot(local_rotations[j], local_rotations[j]) > 0.5f))
      return Fail(ErrorCode::kNotFinite, j, "local_rotations", "local_rotations[" + std::to_string(j) + "] is not a finite rotation");
    if (!local_angular_velocities.empty() && !IsFinite(local_angular_velocities[j]))
      return Fail(ErrorCode::kNotFinite, j, "local_angular_velocities", "not finite");
  }
  RagdollGroup& g = store_.groups[r.group];
  const detail::RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  const detail::RagdollArchetype& a = archetypes_[g.archetype];
  for (int32_t j = 1; j < r.part_count; ++j) {
    const Quat parent_bip = g.body_in_part[a.parts[j].parent].rotation;
    // Part-relative target -> body-relative: q_pb^-1 q_cb = bip_p^-1 (q_pp^-1 q_cp) bip_c.
    const Quat target = Normalize(Conjugate(parent_bip) * Normalize(local_rotations[j]) * g.body_in_part[j].rotation);
    const Vec3 w = local_angular_velocities.empty() ? Vec3{} : Rotate(Conjugate(parent_bip), local_angular_velocities[j]);
    const float values[7] = {target.x, target.y, target.z, target.w, w.x, w.y, w.z};
    for (int32_t f = 0; f < 7; ++f) view.Part(detail::kMotorQx + f, j)[l] = values[f];
  }
  view.Lane(detail::kMotorStrength)[l] = strength;
  return {};
}

bool RagdollSystem::Raycast(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  if (!RayReady(origin, dir, max_distance)) return false;
  float best = max_distance;
  bool found = false;
  for (std::size_t i = 0; i < store_.slots.size(); ++i) {
    const RagdollSlot& r = store_.slots[i];
    if (!r.live) continue;
    const RagdollGroup& g = store_.groups[r.group];
    const detail::RagdollArchetype& a = archetypes_[g.archetype];
    for (int32_t j = 0; j < r.part_count; ++j) {
      const detail::RigidPartArchetype& part = a.parts[j];
      const Transform& part_world = r.output[j];
      // The shape's frame: body frame times the shape's frame in the body.
      const Transform shape_world = Compose(Compose(part_world, part.body_in_part), part.shape_in_body);
      // Cheap reject: the ray's distance to the part's centre against its extent.
      const Vec3 to = shape_world.translation - origin;
      const float along = Dot(to, dir);
      const float extent = g.constants[j].extent + Length(part.shape_in_body.translation) + 0.01f;
      if (along < -extent || along - extent > best || LengthSquared(to - dir * along) > extent * extent) continue;
      const PartShapeSettings& sh = part.shape;
      auto sdf = [&](Vec3 p) { return PartShapeDistance(sh, shape_world, p); };
      const float t = SphereTrace(sdf, origin, dir, best);
      if (t < 0 || t > best) continue;
      best = t;
      found = true;
      hit->ragdoll = RagdollId{static_cast<uint32_t>(i), r.generation};
      hit->part = j;
      hit->static_shape = -1;
      hit->distance = t;
      hit->point = origin + dir * t;
      hit->normal = DistanceNormal(sdf, hit->point);
    }
  }
  return found;
}

bool RagdollSystem::IsAsleep(RagdollId id) const { return IsValid(id) && store_.slots[id.index].asleep; }
bool RagdollSystem::IsFrozen(RagdollId id) const { return IsValid(id) && store_.slots[id.index].frozen; }

Error RagdollSystem::GetVelocities(RagdollId id, std::span<Vec3> linear, std::span<Vec3> angular) const {
  if (!IsValid(id)) return Fail(ErrorCode::kStaleHandle, -1, "ragdoll", "the ragdoll handle is null or stale");
  const RagdollSlot& r = store_.slots[id.index];
  if (static_cast<int32_t>(linear.size()) < r.part_count || static_cast<int32_t>(angular.size()) < r.part_count)
    return Fail(ErrorCode::kNullBuffer, -1, "linear", "the spans are shorter than the part count");
  RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
  const detail::RigidBlockView view = g.ViewOfLane(r.lane);
  const int32_t l = g.LaneInBlock(r.lane);
  for (int32_t j = 0; j < r.part_count; ++j) {
    linear[j] = Vec3{view.Part(detail::kRbVx, j)[l], view.Part(detail::kRbVy, j)[l], view.Part(detail::kRbVz, j)[l]};
    angular[j] = Vec3{view.Part(detail::kRbWx, j)[l], view.Part(detail::kRbWy, j)[l], view.Part(detail::kRbWz, j)[l]};
  }
  return {};
}

void RagdollSystem::SetProfiler(const ProfilerHooks* profiler) {
  profiler_ = profiler;
  broad_.SetProfiler(profiler);
  contacts_.SetProfiler(profiler);
}

void RagdollSystem::Step(int32_t substeps, double step_seconds, float alpha, const StaticWorld& static_world,
                         FrameStats& stats, uint32_t thread) {
  int32_t count = 0, enabled = 0;
  for (int32_t gi = 0; gi < static_cast<int32_t>(store_.groups.size()); ++gi) {
    // Only blocks with enabled lanes are work: disabled instances cost the solver nothing.
    const int32_t width = store_.groups[gi].block_lanes;
    const int32_t blocks = (store_.groups[gi].lanes_enabled + width - 1) / width;
    group_first_work_[gi] = count;
    for (int32_t b = 0; b < blocks; ++b) work_[count++] = {gi, b};
    enabled += store_.groups[gi].lanes_enabled;
  }
  stats.bound_ragdolls = live_count_;
  stats.disabled_ragdolls = live_count_ - enabled;
  stats.simulated_ragdolls = 0;
  if (count == 0) return;
  const int32_t ragdoll_steps = substeps * frame_substeps_;
  stats.ragdoll_substeps = ragdoll_steps;
  detail::RigidSolveParams params;
  params.substeps = ragdoll_steps;
  params.iterations = settings_.ragdoll_iterations;
  params.dt = static_cast<float>(step_seconds) / static_cast<float>(frame_substeps_);
  params.gravity[0] = settings_.gravity.x;
  params.gravity[1] = settings_.gravity.y;
  params.gravity[2] = settings_.gravity.z;
  static_world.FillSolveParams(params);
  params.contact_angular_damping = settings_.ragdoll_contact_angular_damping;
  params.max_push = settings_.ragdoll_max_push_speed * params.dt;
  params.frame_seconds = static_cast<float>(step_seconds) * static_cast<float>(substeps);
  const detail::RigidKernels* kernel_set = kernels_;
  const float frame_seconds = static_cast<float>(step_seconds) * static_cast<float>(substeps);
  // 1. Kinematic roots follow their host frames.
  auto pre = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t i = begin; i < end; ++i) {
      bad_inputs_[i] = 0;
      RagdollGroup& g = store_.groups[work_[i].group];
      const detail::RigidBlockView view = g.View(work_[i].block);
      // The pairs' bounded depenetration: what they left in last frame (or a placement's
      // mark) is read by this frame's contacts.
      for (int32_t j = 0; j < g.part_count; ++j) {
        float* now = view.Part(detail::kRbPairDeferNow, j);
        float* last = view.Part(detail::kRbPairDeferLast, j);
        for (int32_t l = 0; l < view.lanes; ++l) last[l] = now[l], now[l] = 0.0f;
        // Render interpolation starts from where this frame's fixed steps start.
        if (substeps > 0) {
          for (int32_t f = 0; f < 7; ++f) {
            const float* pose = view.Part(detail::kRbXx + f, j);
            float* start = view.Part(detail::kRbFrameStartX + f, j);
            for (int32_t l = 0; l < view.lanes; ++l) start[l] = pose[l];
          }
        }
      }
      for (int32_t l = 0; l < g.block_lanes; ++l) {
        const int32_t lane = work_[i].block * g.block_lanes + l;
        const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
        if (owner < 0 || store_.slots[owner].kinematic_root == nullptr) continue;
        const Transform target = *store_.slots[owner].kinematic_root;
        if (!IsFinite(target) || !UsableRotation(target.rotation)) {
          ++bad_inputs_[i];  // held where it was, and counted
          continue;
        }
        const Transform body = Compose(Transform{target.translation, Normalize(target.rotation), {1, 1, 1}}, g.body_in_part[0]);
        const float values[7] = {body.translation.x, body.translation.y, body.translation.z, body.rotation.x,
                                 body.rotation.y,    body.rotation.z,    body.rotation.w};
        bool moved = false;
        for (int32_t f = 0; f < 7; ++f) {
          float& field = view.Part(detail::kRbXx + f, 0)[l];
          moved = moved || std::fabs(field - values[f]) > 1e-6f;
          field = values[f];
        }
        // A moving kinematic root wakes (and unfreezes) its ragdoll.
        if (moved && store_.slots[owner].asleep) {
          store_.slots[owner].asleep = store_.slots[owner].frozen = false;
          store_.slots[owner].still_seconds = store_.slots[owner].slow_seconds = 0;
          view.Lane(detail::kAsleep)[l] = 0.0f;
        }
      }
    }
  };
  {
    ProfileZone zone(profiler_, "ragdolls.prepare", kRagdollColor, thread);
    ParallelFor(settings_.tasks, count, 1, pre, {profiler_, "ragdolls.prepare/task", kRagdollColor});
  }
  // 2. The substeps: all at once per block when no pair between ragdolls has a contact
  //    this frame; otherwise one at a time, each with the pairs' passes inside it. The
  //    pairs in reach get their contacts; only those with one are ordered into islands
  //    and solved.
  stats.ragdoll_pairs = stats.dropped_ragdoll_pairs = stats.contact_ragdoll_pairs = 0;
  broad_.Clear();
  int32_t pair_count = 0;
  if (substeps > 0 && enabled > 1) {
    {
      ProfileZone zone(profiler_, "ragdolls.broad_phase", kRagdollColor, thread);
      broad_.Run(store_, sleep_, frame_seconds, stats);
    }
    if (broad_.pair_count() > 0) {
      ProfileZone zone(profiler_, "ragdolls.pairs", kRagdollColor, thread);
      pair_count = contacts_.Find(broad_.pairs(), frame_seconds);
    }
    stats.contact_ragdoll_pairs = pair_count;
    ProfileZone zone(profiler_, "ragdolls.islands", kRagdollColor, thread);
    islands_.Order(broad_.pairs().first(static_cast<std::size_t>(pair_count)), broad_.bodies(), broad_.body_count(),
                   store_.slots, stats);
  }
  const int32_t calls = pair_count > 0 ? ragdoll_steps : (substeps > 0 ? 1 : 0);
  params.substeps = pair_count > 0 ? 1 : ragdoll_steps;
  // The kernel over work item i: 0 the whole substeps, 1 positions, 2 velocities; static
  // contacts found when find_static (a frame's first substep).
  auto run_block = [&](int32_t i, int32_t which, bool find_static) {
    RagdollGroup& g = store_.groups[work_[i].group];
    const detail::RigidBlockView view = g.View(work_[i].block);
    detail::RigidSolveParams local = params;
    local.parts = g.constants.data();
    local.part_count = g.part_count;
    local.find_static_contacts = find_static;
    (which == 0 ? kernel_set->solve : (which == 1 ? kernel_set->positions : kernel_set->velocities))(&view, 1, local);
  };
  auto run = [&](int32_t which) {
    auto task_fn = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t i = begin; i < end; ++i) run_block(i, which, params.find_static_contacts);
    };
    ParallelFor(settings_.tasks, count, 1, task_fn, {profiler_, "ragdolls.substeps/task", kRagdollColor});
  };
  const float h = params.dt;
  const int32_t domains = pair_count > 0 && domains_enabled_ ? BuildDomains(count, pair_count) : 0;
  last_domains_ = domains;
  if (domains >= 2) {
    // Each domain runs every substep in one task, in the order below: its blocks stay
    // with one worker, and no barrier stands between the halves of a substep.
    ProfileZone zone(profiler_, "ragdolls.domains", kRagdollColor, thread);
    auto run_domain = [&](int32_t k, uint32_t worker) {
      const int32_t d = domain_order_[k];  // the heaviest first
      const int32_t* islands = domain_islands_.data() + domain_island_start_[d];
      const int32_t island_count = domain_island_start_[d + 1] - domain_island_start_[d];
      for (int32_t call = 0; call < calls; ++call) {
        for (int32_t b = domain_block_start_[d]; b < domain_block_start_[d + 1]; ++b) run_block(domain_blocks_[b], 1, call == 0);
        for (int32_t i = 0; i < island_count; ++i) contacts_.SolveIslandPositions(islands[i], h, worker);
        for (int32_t b = domain_block_start_[d]; b < domain_block_start_[d + 1]; ++b) run_block(domain_blocks_[b], 2, call == 0);
        for (int32_t i = 0; i < island_count; ++i) contacts_.SolveIslandVelocities(islands[i], h, worker);
      }
    };
    ParallelForDealt(settings_.tasks, domains, run_domain, {profiler_, "ragdolls.domains/task", kRagdollColor});
  }
  for (int32_t call = 0; call < (domains >= 2 ? 0 : calls); ++call) {
    ProfileZone substep_zone(profiler_, "ragdolls.substep", kRagdollColor, thread);
    if (pair_count == 0) {
      run(0);
      continue;
    }
    // XPBD order with the pairs inside the substep: positions (the kernel's, then the
    // pairs'), velocities from positions (the kernel's pass), the pairs' velocity pass.
    params.find_static_contacts = call == 0;
    run(1);
    contacts_.SolvePositions(h);
    run(2);
    contacts_.SolveVelocities(h);
  }
  // 3. Non-finite lanes are reset; sleep; part frames go to the host, alpha of the way from
  //    the start of the last fixed step (render interpolation): along the path from the
  //    last stepping frame's start, (n - 1 + alpha) / n of the way over its n fixed steps.
  if (substeps > 0) last_fixed_steps_ = substeps;
  const float shown_along =
      alpha >= 1.0f ? 1.0f
                    : (static_cast<float>(last_fixed_steps_ - 1) + alpha) / static_cast<float>(last_fixed_steps_);
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t i = begin; i < end; ++i) {
      RagdollGroup& g = store_.groups[work_[i].group];
      const detail::RigidBlockView view = g.View(work_[i].block);
      int32_t resets = 0;
      // x * 0 is 0 for every finite x and NaN otherwise: a lane's sum over its state is 0
      // exactly when all of it is finite. Summed row by row (each row holds the block's
      // lanes side by side), one pass over the block instead of a strided one per lane.
      float nonfinite[detail::kMaxRigidBlockLanes] = {};
      for (int32_t j = 0; j < g.part_count; ++j) {
        for (int32_t f = 0; f < detail::kRigidFieldCount; ++f) {
          const float* row = view.Part(f, j);
          for (int32_t l = 0; l < view.lanes; ++l) nonfinite[l] += row[l] * 0.0f;
        }
      }
      for (int32_t l = 0; l < g.block_lanes; ++l) {
        const int32_t lane = work_[i].block * g.block_lanes + l;
        const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
        if (owner < 0) continue;
        RagdollSlot& slot = store_.slots[owner];
        const bool finite = nonfinite[l] == 0.0f;
        // Back to the last pose written (the output holds it), at rest; the host's motors
        // and planar mode stay as they were.
        auto reset = [&] {
          ++resets;
          Transform bodies[detail::kMaxRagdollParts];
          for (int32_t j = 0; j < g.part_count; ++j) bodies[j] = Compose(slot.output[j], g.body_in_part[j]);
          g.PlaceBodies(slot.lane, bodies, Vec3{}, Vec3{});
        };
        if (!finite) {
          reset();
          continue;
        }
        if (!slot.asleep) {
          Sleep::UpdateFrameSpeeds(slot, view, l, g, frame_seconds);
          sleep_.Update(slot, view, l, g, frame_seconds);
        }
        auto pose_of = [&](int32_t field, int32_t j) {
          return Transform{{view.Part(field, j)[l], view.Part(field + 1, j)[l], view.Part(field + 2, j)[l]},
                           {view.Part(field + 3, j)[l], view.Part(field + 4, j)[l], view.Part(field + 5, j)[l],
                            view.Part(field + 6, j)[l]},
                           {1, 1, 1}};
        };
        // A kinematic root is shown where its host frame is now, and the other parts'
        // poses relative to it are interpolated under it: a ragdoll hanging from an
        // animated bone does not lag the bone.
        const bool under_root = g.kinematic_root && shown_along < 1.0f;
        const Transform root_now = under_root ? pose_of(detail::kRbXx, 0) : Transform{};
        const Transform root_start = under_root ? pose_of(detail::kRbFrameStartX, 0) : Transform{};
        // Finite state can still overflow once composed (a kinematic root near FLT_MAX, the
        // parts relative to it): such a frame writes nothing and resets, counted.
        Transform shown[detail::kMaxRagdollParts];
        bool shown_finite = true;
        for (int32_t j = 0; j < g.part_count; ++j) {
          Transform body = pose_of(detail::kRbXx, j);
          if (shown_along < 1.0f) {
            Transform start = pose_of(detail::kRbFrameStartX, j);
            if (under_root) start = Relative(root_start, start), body = Relative(root_now, body);
            body.translation = start.translation + (body.translation - start.translation) * shown_along;
            body.rotation = Nlerp(start.rotation, body.rotation, shown_along);
            if (under_root) body = Compose(root_now, body);
          }
          shown[j] = Compose(body, Relative(g.body_in_part[j], Transform{}));
          shown_finite = shown_finite && IsFinite(shown[j]);
        }
        if (!shown_finite) {
          reset();
          continue;
        }
        for (int32_t j = 0; j < g.part_count; ++j) slot.output[j] = shown[j];
        if (!slot.streams.empty()) EmitStreams(slot);
      }
      resets_[i] = resets;
    }
  };
  {
    ProfileZone zone(profiler_, "ragdolls.writeback", kRagdollColor, thread);
    ParallelFor(settings_.tasks, count, 1, task, {profiler_, "ragdolls.writeback/task", kRagdollColor});
  }
  for (int32_t i = 0; i < count; ++i) {
    stats.reset_non_finite += resets_[i];
    stats.snapped_bad_input += bad_inputs_[i];
  }
  int32_t asleep = 0, frozen = 0;
  for (const RagdollSlot& r : store_.slots) {
    if (!r.live || !r.enabled) continue;
    asleep += r.asleep ? 1 : 0;
    frozen += r.frozen ? 1 : 0;
  }
  stats.sleeping_ragdolls = asleep;
  stats.frozen_ragdolls = frozen;
  stats.simulated_ragdolls = enabled - asleep;
}

// The group of an archetype's instances with (kinematic) or without a kinematic root,
// created on first use (bind time).
int32_t RagdollSystem::FindOrAddGroup(int32_t archetype, bool kinematic) {
  for (int32_t i = 0; i < static_cast<int32_t>(store_.groups.size()); ++i) {
    if (store_.groups[i].archetype == archetype && store_.groups[i].kinematic_root == kinematic) return i;
  }
  const detail::RagdollArchetype& a = archetypes_[archetype];
  const auto n = static_cast<int32_t>(a.parts.size());
  RagdollGroup g;
  g.archetype = archetype;
  g.kinematic_root = kinematic;
  g.part_count = n;
  g.constants = RigidConstants(a, kinematic);
  g.self_pairs = a.self_collision_pairs;
  g.collision_group = a.collision_group;
  g.collision_mask = a.collision_mask;
  for (const detail::RigidPartArchetype& p : a.parts) {
    g.shapes.push_back(p.shape);
    g.shape_in_body.push_back(p.shape_in_body);
    g.pair_points.push_back(PairSamplePoints(p));
    g.body_in_part.push_back(p.body_in_part);
    const Quat parent = p.parent >= 0 ? a.parts[p.parent].body_pose.rotation : Quat{};
    g.neutral_motor.push_back(Normalize(Conjugate(parent) * p.body_pose.rotation));
  }
  g.block_lanes = kernels_->block_lanes;
  g.floats_per_block = detail::RigidFloatsPerBlock(n, g.block_lanes);
  store_.groups.push_back(std::move(g));
  group_first_work_.resize(store_.groups.size());
  return static_cast<int32_t>(store_.groups.size()) - 1;
}

// Grows group `gi`'s blocks to hold `lanes` lanes plus its reserve (never in Step), and
// the per-block work arrays with them. New padding lanes hold the archetype's build pose.
// The reserve keeps room for every instance that may move in later without allocating.
void RagdollSystem::EnsureLanes(int32_t gi, int32_t lanes, bool with_reserve) {
  RagdollGroup& g = store_.groups[gi];
  if (with_reserve) lanes += g.reserved;
  if (lanes <= static_cast<int32_t>(g.blocks.size()) * g.block_lanes) return;
  const detail::RagdollArchetype& a = archetypes_[g.archetype];
  Transform bodies[detail::kMaxRagdollParts];
  for (int32_t j = 0; j < g.part_count; ++j) bodies[j] = a.parts[j].body_pose;
  while (static_cast<int32_t>(g.blocks.size()) * g.block_lanes < lanes) {
    g.blocks.emplace_back(g.floats_per_block);
    g.lane_owner.resize(g.blocks.size() * static_cast<std::size_t>(g.block_lanes), -1);
    const int32_t first = static_cast<int32_t>(g.blocks.size() - 1) * g.block_lanes;
    for (int32_t l = 0; l < g.block_lanes; ++l) g.SetLane(first + l, bodies, Vec3{}, Vec3{}, false);
  }
  int32_t total = 0;
  for (const RagdollGroup& other : store_.groups) total += static_cast<int32_t>(other.blocks.size());
  work_.resize(total);
  resets_.resize(total);
  bad_inputs_.resize(total);
  for (std::vector<int32_t>* v : {&domain_parent_, &domain_of_, &domain_blocks_, &domain_weight_, &domain_order_, &domain_fill_})
    v->resize(total);
  domain_runs_.resize(total);
  domain_block_start_.resize(static_cast<std::size_t>(total) + 1);
  domain_island_start_.resize(static_cast<std::size_t>(total) + 1);
}

// Lane bookkeeping. Swapping keeps every slot's lane index true.
void RagdollSystem::SwapLanes(RagdollGroup& g, int32_t a, int32_t b) {
  g.SwapLanes(a, b);
  for (int32_t lane : {a, b}) {
    if (g.lane_owner[lane] >= 0) store_.slots[g.lane_owner[lane]].lane = lane;
  }
}
// Sleeping ragdolls cost the kernels nothing only where a whole slice of lanes sleeps
// (RunStages); scattered among awake ones (a pile that settles while its neighbours in the
// block still move) they ride along in every substep. A lane's arithmetic never depends
// on where it is, so packing moves no result. Packed only when it frees a block, so lanes
// do not move every time one ragdoll sleeps or wakes.
void RagdollSystem::PackAwakeLanes(uint32_t thread) {
  ProfileZone zone(profiler_, "ragdolls.pack_awake", kRagdollColor, thread);
  for (RagdollGroup& g : store_.groups) PackAwakeLanesOf(g);
}
void RagdollSystem::PackAwakeLanesOf(RagdollGroup& g) {
  auto awake = [&](int32_t lane) {
    const int32_t owner = g.lane_owner[lane];
    return owner >= 0 && !store_.slots[owner].asleep;
  };
  // With workers, the blocks are cut into a run per worker and each run is packed on its
  // own: a lane never leaves its run, so ragdolls bound together (a pile, a crowd hit by
  // one blast) stay in blocks of their own and the frame's domains (BuildDomains) can
  // keep them apart, instead of sleepers and wakers of every pile sharing the blocks.
  const int32_t blocks = (g.lanes_enabled + g.block_lanes - 1) / g.block_lanes;
  const int32_t runs = std::max(1, std::min(WorkerSlots(settings_.tasks), blocks));
  for (int32_t run = 0; run < runs; ++run) {
    const int32_t lo = (run * blocks / runs) * g.block_lanes;
    const int32_t hi = std::min(g.lanes_enabled, ((run + 1) * blocks / runs) * g.block_lanes);
    int32_t awake_count = 0, blocks_awake = 0;
    for (int32_t block = lo; block < hi; block += g.block_lanes) {
      const int32_t end = std::min(hi, block + g.block_lanes);
      int32_t in_block = 0;
      for (int32_t lane = block; lane < end; ++lane) in_block += awake(lane) ? 1 : 0;
      awake_count += in_block;
      blocks_awake += in_block > 0 ? 1 : 0;
    }
    if (blocks_awake <= (awake_count + g.block_lanes - 1) / g.block_lanes) continue;
    int32_t front = lo, back = hi - 1;
    for (;;) {
      while (front < back && awake(front)) ++front;
      while (front < back && !awake(back)) --back;
      if (front >= back) break;
      SwapLanes(g, front++, back--);
    }
  }
}
void RagdollSystem::EnableLane(RagdollSlot& slot) {
  RagdollGroup& g = store_.groups[slot.group];
  if (slot.lane >= g.lanes_enabled) SwapLanes(g, slot.lane, g.lanes_enabled++);
  g.SetActiveFlag(slot.lane, true);
}
void RagdollSystem::DisableLane(RagdollSlot& slot) {
  RagdollGroup& g = store_.groups[slot.group];
  if (slot.lane < g.lanes_enabled) SwapLanes(g, slot.lane, --g.lanes_enabled);
  g.SetActiveFlag(slot.lane, false);
}
// Takes the slot's lane out of its group (the last lane fills the hole).
void RagdollSystem::RemoveLane(RagdollSlot& slot) {
  DisableLane(slot);
  RagdollGroup& g = store_.groups[slot.group];
  const int32_t last = --g.lanes_used;
  SwapLanes(g, slot.lane, last);
  g.lane_owner[last] = -1;
  g.SetActiveFlag(last, false);
}
// Moves a ragdoll to another group of its archetype (a kinematic root on or off), state
// and all. Allocates only when the target group has no lane reserved for it.
void RagdollSystem::MoveToGroup(int32_t index, int32_t target) {
  RagdollSlot& slot = store_.slots[index];
  if (slot.group == target) return;
  EnsureLanes(target, store_.groups[target].lanes_used + 1, false);
  RagdollGroup& to = store_.groups[target];
  const int32_t lane = to.lanes_used++;
  to.CopyLaneFrom(store_.groups[slot.group], slot.lane, lane);
  to.SetActiveFlag(lane, false);
  RemoveLane(slot);
  to.lane_owner[lane] = index;
  slot.group = target;
  slot.lane = lane;
  if (to.kinematic_root) {
    // A kinematic root does not move by itself: its stale velocities must not feed the
    // joints' velocity terms.
    for (int32_t f : {detail::kRbVx, detail::kRbVy, detail::kRbVz, detail::kRbWx, detail::kRbWy, detail::kRbWz})
      to.PartField(lane, f, 0) = 0.0f;
  }
  if (slot.enabled) EnableLane(slot);
}

void RagdollSystem::PoisonStateForTest(RagdollId id) {
  if (!IsValid(id)) return;
  const RagdollSlot& r = store_.slots[id.index];
  store_.groups[r.group].PartField(r.lane, kRbVx, 0) = NAN;
}

void RagdollSystem::CheckHostBuffers(RagdollId only) const {
  for (std::size_t i = 0; i < store_.slots.size(); ++i) {
    const RagdollSlot& r = store_.slots[i];
    if (!r.live || (!only.IsNull() && (only.index != i || only.generation != r.generation))) continue;
    const detail::HostBufferOwner owner{"ragdoll", static_cast<uint32_t>(i), r.generation};
    detail::CheckHostBuffer(owner, "output_parts", r.output, static_cast<std::size_t>(r.part_count) * sizeof(Transform));
    detail::CheckStreamBuffers(owner, r.streams);
    if (r.kinematic_root != nullptr) detail::CheckHostBuffer(owner, "kinematic_root", r.kinematic_root, sizeof(Transform));
  }
}

// The bodies' state and the host's controls; not the bounded depenetration's bookkeeping
// (kRbPairDeferNow and after), which only changes what the bodies do when it matters.
void RagdollSystem::HashState(StateHasher& hasher) const {
  for (std::size_t i = 0; i < store_.slots.size(); ++i) {
    const RagdollSlot& r = store_.slots[i];
    if (!r.live) continue;
    hasher.Mix(&i, sizeof(i));
    RagdollGroup& g = const_cast<RagdollGroup&>(store_.groups[r.group]);
    const detail::RigidBlockView view = g.ViewOfLane(r.lane);
    for (int32_t j = 0; j < r.part_count; ++j) {
      for (int32_t f = 0; f < detail::kRbPairDeferNow; ++f) hasher.Mix(view.Part(f, j) + g.LaneInBlock(r.lane), sizeof(float));
    }
  }
}

}  // namespace tendon::detail
