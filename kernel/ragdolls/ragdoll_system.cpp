// kernel/ragdolls/ragdoll_system.cpp: the ragdoll system's construction and its archetypes.
//
// The system is split by concept (ragdoll_system.h lists the files); this one builds the
// parts every other file leans on. An archetype is validated and built once
// (BuildRagdollArchetype, kernel/rigid/) and never changes; its id stays live until
// RemoveArchetype, which refuses while instances of it are bound and then frees its
// groups' lanes. The constructor wires the contacts between ragdolls (broad phase,
// islands, pair contacts) to the store they read, which is why the system cannot be
// copied.
#include "kernel/ragdolls/ragdoll_system.h"

#include <string>

#include "kernel/core/validation.h"

namespace tendon::detail {

RagdollSystem::RagdollSystem(const RagdollSystemSettings& settings, const RigidKernels& kernels)
    : settings_(settings),
      kernels_(&kernels),
      sleep_(SleepSettings{settings.ragdoll_sleep_speed, settings.ragdoll_sleep_seconds, settings.ragdoll_settle_damping}),
      broad_(settings.tasks),
      contacts_(PairContactSettings{settings.tasks, nullptr, settings.gravity, settings.ragdoll_contact_angular_damping,
                                    settings.ragdoll_max_push_speed, &kernels}, store_,
                broad_, islands_) {
  events_.reserve(static_cast<std::size_t>(std::max(settings.contact_event_capacity, 0)));
}

RagdollSystem::~RagdollSystem() = default;

bool RagdollSystem::Live(RagdollArchetypeId id) const {
  return id.index < archetypes_.size() && !removed_[id.index] && id.generation == generation_[id.index];
}

const RagdollArchetype* RagdollSystem::Archetype(RagdollArchetypeId id) const {
  return Live(id) ? &archetypes_[id.index] : nullptr;
}

Result<RagdollArchetypeId> RagdollSystem::BuildArchetype(const RagdollSettings& settings) {
  RagdollArchetype archetype;
  if (Error e = BuildRagdollArchetype(settings, &archetype); e.code != ErrorCode::kNone) return e;
  for (std::size_t i = 0; i < archetypes_.size(); ++i) {
    if (!removed_[i] || generation_[i] == UINT32_MAX) continue;
    archetypes_[i] = std::move(archetype);
    removed_[i] = false;
    ++generation_[i];
    // The groups the removed archetype left (no lanes since RemoveArchetype) are made again
    // for this one, where they are: a group's layout comes from its archetype.
    for (RagdollGroup& g : store_.groups)
      if (g.archetype == static_cast<int32_t>(i)) g = MakeGroup(g.archetype, g.kinematic_root);
    return RagdollArchetypeId{static_cast<uint32_t>(i), generation_[i]};
  }
  archetypes_.push_back(std::move(archetype));
  removed_.push_back(false);
  generation_.push_back(1);
  return RagdollArchetypeId{static_cast<uint32_t>(archetypes_.size() - 1), 1};
}

int32_t RagdollSystem::PartCount(RagdollArchetypeId id) const {
  if (!Live(id)) return 0;
  return static_cast<int32_t>(archetypes_[id.index].parts.size());
}

Error RagdollSystem::GetPartInfo(RagdollArchetypeId id, int32_t part, RagdollPartInfo* out) const {
  if (!Live(id))
    return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null or was not built by this world");
  const RagdollArchetype& a = archetypes_[id.index];
  if (part < 0 || part >= static_cast<int32_t>(a.parts.size()) || out == nullptr)
    return Fail(ErrorCode::kBadReference, part, "part", "no such part (or a null output)");
  const RigidPartArchetype& p = a.parts[part];
  out->mass = p.mass;
  out->principal_inertia = p.inertia;
  out->body_pose = p.body_pose;
  out->volume = p.volume;
  return {};
}

Error RagdollSystem::RemoveArchetype(RagdollArchetypeId id) {
  if (!Live(id)) return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the ragdoll archetype id is null, stale or not this world's");
  int32_t bound = 0;
  for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i)
    bound += store_.handles.IsLiveAt(i) && store_.groups[store_.slots[i].group].archetype == static_cast<int32_t>(id.index) ? 1 : 0;
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

void RagdollSystem::SetProfiler(const ProfilerHooks* profiler) {
  profiler_ = profiler;
  broad_.SetProfiler(profiler);
  contacts_.SetProfiler(profiler);
}

}  // namespace tendon::detail
