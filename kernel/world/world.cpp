// kernel/world/world.cpp: the World, the facade over Tendon's systems.
//
// The World owns one system per concern and composes them; none of them knows of the
// World. Below them all sits kernel/core (the parallel-for over the host's task hooks,
// denormal flushing, rotation helpers, the frame's counters).
//   StaticWorld      kernel/collide/static_world.h   what ragdolls collide with; rays
//   ChainSystem      kernel/chains/chain_system.h     verlet chains in lanes by topology
//   PendulumSystem   kernel/pendulums/pendulum_system.h  accessory pendulums
//   RagdollSystem    kernel/ragdolls/ragdoll_system.h    ragdoll lanes by archetype, the
//                    ragdoll frame, and the systems it composes: Sleep, BroadPhase,
//                    Islands, PairContacts (kernel/rigid, kernel/contacts)
//   CharacterSystem  kernel/character/character_system.h  characters, above ragdolls
// This file creates the World and forwards its calls to the systems; world_impl.h holds
// what a World owns, and world_frame.cpp the frame's phase order. Results are the same for
// any worker count, and Step allocates nothing: every system sizes itself at build and
// bind time.
#include "tendon/world.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include "kernel/chains/chain_kernels.h"
#include "kernel/chains/chain_system.h"
#include "kernel/character/character_system.h"
#include "kernel/collide/static_world.h"
#include "kernel/core/fpu.h"
#include "kernel/core/frame_counters.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/profile.h"
#include "kernel/core/tick_clock.h"
#include "kernel/core/validation.h"
#include "kernel/pendulums/pendulum_system.h"
#include "kernel/ragdolls/ragdoll_system.h"
#include "kernel/rigid/rigid_kernels.h"
#include "kernel/world/fixed_clock.h"
#include "kernel/world/frame_budget.h"
#include "kernel/world/wind.h"
#include "kernel/world/world_access.h"
#include "kernel/world/world_impl.h"
#include "tendon/device_profile.h"
#include "tendon/landing.h"
#include "tendon/trace.h"

namespace tendon {

using detail::CheckPositive;
using detail::Fail;

constexpr int32_t kMaxWorkers = 1024;  // TaskHooks::worker_count

namespace {

// What a call from inside Step gets (see World::Step).
Error Reentrant() {
  return Fail(ErrorCode::kReentrant, -1, "world",
              "a World call from inside Step (a host callback) would change the world mid-frame: refused");
}

}  // namespace

// ---- World: creation ----

World::World(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
World::~World() {
  if (impl_ != nullptr && impl_->frame_state.in_flight) impl_->FinishStep();  // its tasks use the World
}

namespace {

// Every profiled setting still at its default takes the profile's value.
Result<WorldSettings> ApplyDeviceProfile(WorldSettings s) {
  s.from_device_profile = 0;
  const DeviceProfile* p = s.device_profile;
  s.device_profile = nullptr;
  if (p == nullptr) return s;
  if (Error e = ValidateDeviceProfile(*p); e.code != ErrorCode::kNone) {
    e.field = "device_profile." + e.field;
    return e;
  }
  const WorldSettings defaults{};
  // A setting still at its default takes the profile's value, and says so.
  auto fill = [&](auto& setting, auto default_value, auto profile_value, ProfiledSetting bit) {
    if (setting != default_value) return;
    setting = profile_value;
    s.from_device_profile |= bit;
  };
  fill(s.max_chains, defaults.max_chains, p->max_chains, kProfiledMaxChains);
  fill(s.max_distance, defaults.max_distance, p->max_distance, kProfiledMaxDistance);
  fill(s.max_active_characters, defaults.max_active_characters, p->max_active_characters,
       kProfiledMaxActiveCharacters);
  fill(s.ragdoll_substeps, defaults.ragdoll_substeps, p->ragdoll_substeps, kProfiledRagdollSubsteps);
  fill(s.fixed_hz, defaults.fixed_hz, p->fixed_hz, kProfiledFixedHz);
  // The measured best instruction set, unless the environment picks one (ResolveIsa's
  // rule) or this CPU cannot run it (a profile from another machine).
  if (detail::EnvironmentIsa() == Isa::kAuto && IsIsaSupported(p->best_isa))
    fill(s.isa, defaults.isa, p->best_isa, kProfiledIsa);
  return s;
}

}  // namespace

Result<std::unique_ptr<World>> World::Create(const WorldSettings& host_settings) {
  auto applied = ApplyDeviceProfile(host_settings);
  if (!applied.ok()) return applied.error();
  const WorldSettings& s = applied.value();
  if (!IsFinite(s.gravity)) return Fail(ErrorCode::kNotFinite, -1, "gravity", "gravity is not finite");
  if (!IsFinite(s.ambient_wind)) return Fail(ErrorCode::kNotFinite, -1, "ambient_wind", "ambient_wind is not finite");
  if (!(s.fixed_hz >= 10.0f && s.fixed_hz <= 1000.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "fixed_hz", "fixed_hz must be within [10, 1000]");
  if (s.max_substeps < 1 || s.max_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "max_substeps", "max_substeps must be within [1, 64]");
  if (Error e = CheckPositive(s.max_distance, -1, "max_distance", true); e.code != ErrorCode::kNone) return e;
  if (Error e = CheckPositive(s.pendulum_max_distance, -1, "pendulum_max_distance", true); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPositive(s.teleport_distance, -1, "teleport_distance", true); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPositive(s.teleport_angle_degrees, -1, "teleport_angle_degrees", true);
      e.code != ErrorCode::kNone)
    return e;
  if (s.max_chains < 0) return Fail(ErrorCode::kOutOfRange, -1, "max_chains", "max_chains must be >= 0");
  if (s.ragdoll_substeps < 1 || s.ragdoll_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_substeps", "ragdoll_substeps must be within [1, 64]");
  if (!(s.frame_budget_ms >= 0) || !std::isfinite(s.frame_budget_ms))
    return Fail(ErrorCode::kOutOfRange, -1, "frame_budget_ms", "frame_budget_ms must be finite and >= 0 (0: no budget)");
  if (s.frame_budget_ms > 0 && !s.time_phases)
    return Fail(ErrorCode::kOutOfRange, -1, "frame_budget_ms",
                "frame_budget_ms steers by the phase times: it needs time_phases (or frame_budget_ms = 0)");
  if (s.budget_min_ragdoll_substeps < 1 || s.budget_min_ragdoll_substeps > 64)
    return Fail(ErrorCode::kOutOfRange, -1, "budget_min_ragdoll_substeps",
                "budget_min_ragdoll_substeps must be within [1, 64]");
  if (!(s.ragdoll_sleep_speed >= 0) || !std::isfinite(s.ragdoll_sleep_speed))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_sleep_speed", "ragdoll_sleep_speed must be finite and >= 0");
  if (!(s.ragdoll_contact_angular_damping >= 0 && s.ragdoll_contact_angular_damping <= 1000))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_contact_angular_damping", "must be within [0, 1000]");
  if (!(s.ragdoll_max_push_speed > 0))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_max_push_speed", "must be > 0 m/s (infinity disables the bound)");
  if (!(s.ragdoll_sleep_seconds > 0) || !std::isfinite(s.ragdoll_sleep_seconds))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_sleep_seconds", "ragdoll_sleep_seconds must be positive");
  if (!(s.ragdoll_settle_damping >= 0.0f && s.ragdoll_settle_damping <= 100.0f))
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_settle_damping", "ragdoll_settle_damping must be within [0, 100] 1/s");
  if (s.ragdoll_iterations < 1 || s.ragdoll_iterations > 16)
    return Fail(ErrorCode::kOutOfRange, -1, "ragdoll_iterations", "ragdoll_iterations must be within [1, 16]");
  if ((s.tasks.enqueue == nullptr) != (s.tasks.finish == nullptr))
    return Fail(ErrorCode::kOutOfRange, -1, "tasks", "tasks.enqueue and tasks.finish must both be set or both null");
  if (s.tasks.enqueue != nullptr && (s.tasks.worker_count < 1 || s.tasks.worker_count > kMaxWorkers))
    return Fail(ErrorCode::kOutOfRange, -1, "tasks.worker_count",
                "tasks.worker_count must be within [1, " + std::to_string(kMaxWorkers) + "]");
  if (s.max_active_characters < 0)
    return Fail(ErrorCode::kOutOfRange, -1, "max_active_characters", "max_active_characters must be >= 0");
  if (s.contact_event_capacity < 0 || s.contact_event_capacity > (1 << 20))
    return Fail(ErrorCode::kOutOfRange, -1, "contact_event_capacity",
                "contact_event_capacity must be within [0, 1048576] (0: contact events off)");
  const Isa isa = detail::ResolveIsa(s.isa);
  if (!IsIsaSupported(isa)) {
    return Fail(ErrorCode::kOutOfRange, -1, "isa",
                std::string("this CPU cannot run the ") + ToString(isa) + " kernels");
  }
  return std::unique_ptr<World>(new World(std::make_unique<Impl>(s, isa)));
}

// ---- the static world ----

Error World::BuildStaticWorld(const StaticWorldSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->static_world.Build(settings);
}
bool World::RaycastStatic(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  RaycastHit unwanted;
  return impl_->static_world.Raycast(origin, dir, max_distance, hit != nullptr ? hit : &unwanted);
}

// ---- chains and pendulums ----

Result<ChainArchetypeId> World::BuildChainArchetype(const ChainArchetypeSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->chains.BuildArchetype(settings);
}
int32_t World::ChainBoneCount(ChainArchetypeId id) const { return impl_->chains.BoneCount(id); }
Error World::RemoveChainArchetype(ChainArchetypeId id) {
  if (impl_->stepping) return Reentrant();
  return impl_->chains.RemoveArchetype(id);
}
Error World::RebindChain(ChainId id, const ChainBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->chains.Rebind(id, b);
}
Result<ChainId> World::BindChain(const ChainBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->chains.Bind(b);
}
Error World::UnbindChain(ChainId id) {
  if (impl_->stepping) return Reentrant();
  if constexpr (detail::kDebugValidation) impl_->chains.CheckHostBuffers(id);
  impl_->dependencies_dirty = true;
  return impl_->chains.Unbind(id);
}
bool World::IsValid(ChainId id) const { return impl_->chains.IsValid(id); }
bool World::IsSimulated(ChainId id) const { return impl_->chains.IsSimulated(id); }
Error World::GetChainNodePositions(ChainId id, std::span<Vec3> out) const {
  return impl_->chains.GetNodePositions(id, out);
}
Error World::SetMaxChains(int32_t max_chains) {
  if (impl_->stepping) return Reentrant();
  if (max_chains < 0) return Fail(ErrorCode::kOutOfRange, -1, "max_chains", "max_chains must be >= 0");
  impl_->settings.max_chains = max_chains;
  impl_->chains.SetMaxChains(max_chains);
  impl_->frame_budget.SetHostMaxChains(max_chains);
  return {};
}

Result<PendulumId> World::BindPendulum(const PendulumBinding& b) {
  if (impl_->stepping) return Reentrant();
  return impl_->pendulums.Bind(b);
}
Error World::UnbindPendulum(PendulumId id) {
  if (impl_->stepping) return Reentrant();
  if constexpr (detail::kDebugValidation) impl_->pendulums.CheckHostBuffers(id);
  return impl_->pendulums.Unbind(id);
}
bool World::IsValid(PendulumId id) const { return impl_->pendulums.IsValid(id); }
Error World::GetPendulumState(PendulumId id, Vec3* bob, float* swing_radians) const {
  return impl_->pendulums.GetState(id, bob, swing_radians);
}

// ---- ragdolls (kernel/ragdolls/ragdoll_*.cpp do the work) ----

Result<RagdollArchetypeId> World::BuildRagdollArchetype(const RagdollSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.BuildArchetype(settings);
}
int32_t World::RagdollPartCount(RagdollArchetypeId id) const { return impl_->ragdolls.PartCount(id); }
Error World::GetRagdollPartInfo(RagdollArchetypeId id, int32_t part, RagdollPartInfo* out) const {
  return impl_->ragdolls.GetPartInfo(id, part, out);
}
Error World::RemoveRagdollArchetype(RagdollArchetypeId id) {
  if (impl_->stepping) return Reentrant();
  if (impl_->characters.UsesRagdollArchetype(id))
    return Fail(ErrorCode::kInUse, -1, "archetype", "a character archetype is built on it: RemoveCharacterArchetype removes both");
  return impl_->ragdolls.RemoveArchetype(id);
}
Result<RagdollId> World::BindRagdoll(const RagdollBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->ragdolls.Bind(b);
}
Error World::UnbindRagdoll(RagdollId id) {
  if (impl_->stepping) return Reentrant();
  if (impl_->ragdolls.IsValid(id) && impl_->characters.CharacterOf(id).generation != 0)
    return Fail(ErrorCode::kInUse, -1, "ragdoll", "this ragdoll belongs to a character: UnbindCharacter frees it");
  if constexpr (detail::kDebugValidation) impl_->ragdolls.CheckHostBuffers(id);
  impl_->dependencies_dirty = true;
  Error e = impl_->ragdolls.Unbind(id);
  if (detail::Ok(e)) impl_->follow.Forget(id);  // unbinding a followed ragdoll stops following it
  return e;
}
bool World::IsValid(RagdollId id) const { return impl_->ragdolls.IsValid(id); }
Error World::SetRagdollEnabled(RagdollId id, bool enabled) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetEnabled(id, enabled);
}
bool World::IsRagdollEnabled(RagdollId id) const { return impl_->ragdolls.IsEnabled(id); }
Error World::SetRagdollKinematicRoot(RagdollId id, const Transform* root) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->ragdolls.SetKinematicRoot(id, root);
}
Error World::ReserveRagdollKinematicToggle(RagdollArchetypeId archetype, int32_t instances) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.ReserveKinematicToggle(archetype, instances);
}
Error World::SetRagdollPartVelocity(RagdollId id, int32_t part, Vec3 linear, Vec3 angular) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetPartVelocity(id, part, linear, angular);
}
Error World::SetRagdollSleeping(RagdollId id, bool can_sleep, bool freeze_when_asleep, float freeze_after_seconds) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetSleeping(id, can_sleep, freeze_when_asleep, freeze_after_seconds);
}
Error World::SetRagdollPartStates(RagdollId id, std::span<const Transform> parts, std::span<const Vec3> linear,
                                  std::span<const Vec3> angular) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetPartStates(id, parts, linear, angular);
}
Error World::WakeRagdoll(RagdollId id) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.Wake(id);
}
Error World::ApplyRagdollImpulse(RagdollId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.ApplyImpulse(id, part, impulse, world_point);
}
Result<PartDriveId> World::AddPartDrive(RagdollId id, const PartDriveSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.AddPartDrive(id, settings);
}
Error World::SetPartDriveTarget(PartDriveId drive, Vec3 target) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetPartDriveTarget(drive, target);
}
Error World::RemovePartDrive(PartDriveId drive) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.RemovePartDrive(drive);
}
Error World::GetPartDriveState(PartDriveId drive, PartDriveState* out) const {
  return impl_->ragdolls.GetPartDriveState(drive, out);
}
bool World::IsValid(PartDriveId drive) const { return impl_->ragdolls.IsValid(drive); }
Error World::SetRagdollAcceleration(RagdollId id, Vec3 acceleration) {
  if (impl_->stepping) return Reentrant();
  // Followed: kept for the handover (gravity is cancelled while it is steered).
  if (impl_->follow.IsFollowing(id)) return impl_->follow.SetHostAcceleration(impl_->ragdolls, id, acceleration);
  return impl_->ragdolls.SetAcceleration(id, acceleration);
}
Error World::SetRagdollPartForce(RagdollId id, int32_t part, Vec3 force) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetPartForce(id, part, force);
}
Result<Vec3> World::ThrowRagdoll(RagdollId id, Vec3 direction, float strength, float min_speed, float max_speed) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.Throw(id, direction, strength, min_speed, max_speed, &ThrowSpeed);
}
Error World::SetRagdollMotorTargets(RagdollId id, std::span<const Quat> local_rotations, float strength,
                                    std::span<const Vec3> local_angular_velocities) {
  if (impl_->stepping) return Reentrant();
  return impl_->ragdolls.SetMotorTargets(id, local_rotations, strength, local_angular_velocities);
}
bool World::IsRagdollAsleep(RagdollId id) const { return impl_->ragdolls.IsAsleep(id); }
bool World::IsRagdollFrozen(RagdollId id) const { return impl_->ragdolls.IsFrozen(id); }
Error World::GetRagdollVelocities(RagdollId id, std::span<Vec3> linear, std::span<Vec3> angular) const {
  return impl_->ragdolls.GetVelocities(id, linear, angular);
}
Result<int32_t> World::GetRagdollPartTransforms(RagdollId id, std::span<Transform> out) const {
  return impl_->ragdolls.GetPartTransforms(id, out);
}
bool World::RaycastRagdolls(Vec3 origin, Vec3 dir, float max_distance, RaycastHit* hit) const {
  RaycastHit unwanted;
  return impl_->ragdolls.Raycast(origin, dir, max_distance, hit != nullptr ? hit : &unwanted);
}

// Characters: the system does the work (kernel/character/character_*.cpp).
Result<CharacterArchetypeId> World::BuildCharacterArchetype(const CharacterSettings& settings) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.BuildArchetype(settings);
}
int32_t World::CharacterPartCount(CharacterArchetypeId id) const {
  const detail::CharacterArchetype* a = impl_->characters.Archetype(id);
  return a != nullptr ? static_cast<int32_t>(a->parts.size()) : 0;
}
Error World::GetCharacterPartInfo(CharacterArchetypeId id, int32_t part, CharacterPartInfo* out) const {
  const detail::CharacterArchetype* a = impl_->characters.Archetype(id);
  if (a == nullptr) return Fail(ErrorCode::kStaleHandle, -1, "archetype", "the character archetype id is null or stale");
  if (part < 0 || part >= static_cast<int32_t>(a->parts.size())) return Fail(ErrorCode::kBadReference, part, "part", "no such part");
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  *out = a->parts[part];
  return {};
}
int32_t World::FindCharacterPart(CharacterArchetypeId id, std::string_view name) const {
  const detail::CharacterArchetype* a = impl_->characters.Archetype(id);
  if (a == nullptr) return -1;
  // Exact names first, then as the humanoid table matches them.
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (a->parts[j].name == name) return j;
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (a->bone_names[a->parts[j].bone] == name) return j;
  const std::string wanted = detail::NormalizeBoneName(name);
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (detail::NormalizeBoneName(a->parts[j].name) == wanted) return j;
  for (int32_t j = 0; j < static_cast<int32_t>(a->parts.size()); ++j)
    if (detail::NormalizeBoneName(a->bone_names[a->parts[j].bone]) == wanted) return j;
  return -1;
}
Result<CharacterId> World::BindCharacter(const CharacterBinding& binding) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->characters.Bind(binding);
}
Error World::RemoveCharacterArchetype(CharacterArchetypeId id) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.RemoveArchetype(id);
}
Error World::RebindCharacter(CharacterId id, const CharacterBinding& b) {
  if (impl_->stepping) return Reentrant();
  impl_->dependencies_dirty = true;
  return impl_->characters.Rebind(id, b);
}
Error World::UnbindCharacter(CharacterId id) {
  if (impl_->stepping) return Reentrant();
  if constexpr (detail::kDebugValidation) impl_->characters.CheckHostBuffers(id);
  impl_->dependencies_dirty = true;
  return impl_->characters.Unbind(id);
}
bool World::IsValid(CharacterId id) const { return impl_->characters.IsValid(id); }
bool World::ActivateCharacter(CharacterId id, const CharacterActivateOptions& options, Error* why) {
  if (impl_->stepping) {
    if (why != nullptr) *why = Reentrant();
    return false;
  }
  return impl_->characters.Activate(id, options, why);
}
Error World::DeactivateCharacter(CharacterId id, float blend_seconds, HandBackSpace space) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.Deactivate(id, blend_seconds, space);
}
Error World::SetCharacterStrength(CharacterId id, float strength) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.SetStrength(id, strength);
}
Error World::SetCharacterAnchored(CharacterId id, bool anchored) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.SetAnchored(id, anchored);
}
bool World::HitCharacter(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point, const CharacterHitOptions& options,
                         Error* why) {
  if (impl_->stepping) {
    if (why != nullptr) *why = Reentrant();
    return false;
  }
  return impl_->characters.Hit(id, part, impulse, world_point, options, why);
}
Error World::GoLimp(CharacterId id, float seconds) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.GoLimp(id, seconds);
}
Error World::ApplyCharacterImpulse(CharacterId id, Vec3 impulse) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.ApplyImpulse(id, impulse);
}
Error World::ApplyCharacterPartImpulse(CharacterId id, int32_t part, Vec3 impulse, Vec3 world_point) {
  if (impl_->stepping) return Reentrant();
  return impl_->characters.ApplyPartImpulse(id, part, impulse, world_point);
}
Error World::GetCharacterState(CharacterId id, CharacterState* out) const { return impl_->characters.GetState(id, out); }
Error World::GetCharacterRecoveryRoot(CharacterId id, float leg_room, Transform* out) const {
  return impl_->characters.GetRecoveryRoot(id, leg_room, out);
}
RagdollId World::CharacterRagdoll(CharacterId id) const { return impl_->characters.RagdollOf(id); }
CharacterId World::CharacterOfRagdoll(RagdollId id) const { return impl_->characters.CharacterOf(id); }
int32_t World::DrainCharacterEvents(std::span<CharacterEvent> out) {
  return impl_->stepping ? 0 : impl_->characters.DrainEvents(out);
}
int32_t World::DrainContactEvents(std::span<ContactEvent> out) {
  if (impl_->stepping) return 0;
  const int32_t n = impl_->ragdolls.DrainContactEvents(out);
  // The ragdoll system knows neither characters nor the clock: every queued event is from
  // the last Step, which ended at the clock's time now.
  for (int32_t i = 0; i < n; ++i) {
    out[i].character = impl_->characters.CharacterOf(out[i].ragdoll);
    out[i].time = impl_->clock.time();
  }
  return n;
}
int32_t World::ActiveCharacterCount() const { return impl_->characters.ActiveCount(); }
int32_t World::BoundCharacterCount() const { return impl_->characters.BoundCount(); }

// ---- host bodies ----

Result<HostBodyId> World::AddHostBody(const HostBodySettings& settings) {
  if (impl_->stepping) return Reentrant();
  Result<HostBodyId> added = impl_->host_bodies.Add(settings);
  if (added.ok()) {
    impl_->host_shapes.reserve(static_cast<std::size_t>(impl_->host_bodies.Count()));
    impl_->chains.ReserveHostShapes(static_cast<std::size_t>(impl_->host_bodies.Count()));  // the chains' broad phase
  }
  return added;
}
Error World::RemoveHostBody(HostBodyId body) {
  if (impl_->stepping) return Reentrant();
  return impl_->host_bodies.Remove(body);
}
bool World::IsValid(HostBodyId body) const { return impl_->host_bodies.IsValid(body); }
Error World::SetHostBodyMotion(HostBodyId body, const Transform& transform, Vec3 linear_velocity,
                               Vec3 angular_velocity) {
  if (impl_->stepping) return Reentrant();
  return impl_->host_bodies.SetMotion(body, transform, linear_velocity, angular_velocity);
}
Error World::MoveHostBodyTo(HostBodyId body, const Transform& target) {
  if (impl_->stepping) return Reentrant();
  return impl_->host_bodies.MoveTo(body, target);
}
Error World::GetHostBodyState(HostBodyId body, HostBodyState* out) const {
  if (impl_->stepping) return Reentrant();
  return impl_->host_bodies.GetState(body, out);
}
int32_t World::HostBodyCount() const { return impl_->host_bodies.Count(); }

int32_t World::UnbindAll() {
  impl_->dependencies_dirty = true;
  if (impl_->stepping) return 0;
  if constexpr (detail::kDebugValidation) impl_->CheckHostBuffers();
  // Characters first: they own ragdolls.
  impl_->follow.ForgetAll();
  return impl_->characters.UnbindAll() + impl_->chains.UnbindAll() + impl_->pendulums.UnbindAll() +
         impl_->ragdolls.UnbindAll();
}

// ---- the frame ----

void World::SetCamera(Vec3 position) {
  if (impl_->stepping) return;
  if (IsFinite(position)) {
    impl_->camera = position;
  } else {
    ++impl_->pending_bad_input;
  }
}
void World::SetWindSampler(WindSampler sampler) {
  if (!impl_->stepping) impl_->wind_sampler = sampler;
}
void World::SetSimulatePredicate(SimulatePredicate predicate) {
  if (!impl_->stepping) impl_->predicate = predicate;
}
Error World::SetProfilerHooks(const ProfilerHooks& hooks) {
  if (impl_->stepping) return Reentrant();
  if ((hooks.zone_begin == nullptr) != (hooks.zone_end == nullptr))
    return Fail(ErrorCode::kOutOfRange, -1, "profiler", "zone_begin and zone_end must both be set or both null");
  impl_->profiler_hooks = hooks;
  impl_->profiler = hooks.zone_begin != nullptr ? &impl_->profiler_hooks : nullptr;
  impl_->chains.SetProfiler(impl_->profiler);
  impl_->ragdolls.SetProfiler(impl_->profiler);
  impl_->pendulums.SetProfiler(impl_->profiler);
  return {};
}
void World::SetTraceWriter(TraceWriter* writer) {
  // A writer's hooks always pair zone_begin with zone_end, so the only refusal left is
  // kReentrant (from inside Step), which changes nothing: what world.h says of calls that
  // return no Error.
  (void)SetProfilerHooks(writer != nullptr ? writer->hooks() : ProfilerHooks{});
}

const FrameStats& World::Step(float dt) { return impl_->Step(dt); }
bool World::BeginStep(float dt) { return impl_->BeginStep(dt); }
const FrameStats& World::FinishStep() { return impl_->FinishStep(); }
const FrameStats& World::LastStats() const {
  // While a BeginStep frame runs its stats are being written (lane 0 writes the ragdolls'):
  // the last whole frame's instead.
  return impl_->frame_state.in_flight ? impl_->previous_stats : impl_->stats;
}
bool World::FrameInFlight() const { return impl_->frame_state.in_flight; }
const WorldSettings& World::Settings() const { return impl_->settings; }
Isa World::ActiveIsa() const { return impl_->isa; }
int32_t World::LaneWidth() const { return detail::kBlockLanes; }
int32_t World::RagdollLaneWidth() const { return detail::RigidKernelsFor(impl_->isa).block_lanes; }

uint64_t World::StateHash() const {
  detail::StateHasher hasher;
  impl_->chains.HashState(hasher);
  impl_->pendulums.HashState(hasher);
  impl_->ragdolls.HashState(hasher);
  return hasher.h;
}

// ---- detail::WorldAccess ----

void detail::WorldAccess::SolveOnly(World& world, int32_t substeps) {
  detail::DenormalGuard guard;
  const auto step = static_cast<float>(world.impl_->clock.step());
  detail::ChainSystem& chains = world.impl_->chains;
  chains.BeginFrame(substeps, step, world.impl_->frame_wind, step);
  chains.Solve(chains.Pass(0));
  chains.Solve(chains.Pass(1));
  chains.EndFrame();
}
void detail::WorldAccess::WritebackOnly(World& world) {
  detail::DenormalGuard guard;
  detail::ChainSystem& chains = world.impl_->chains;
  chains.RefreshLists();  // binds since the last Step changed the lists
  chains.Writeback(chains.Pass(0), 1.0f);
  chains.Writeback(chains.Pass(1), 1.0f);
}
void detail::WorldAccess::SetPhaseClock(World& world, PhaseClock clock) { world.impl_->phase_clock = clock; }
int32_t detail::WorldAccess::SimulatedBlocks(const World& world) { return world.impl_->chains.SimulatedBlocks(); }
void detail::WorldAccess::PoisonRagdollState(World& world, RagdollId ragdoll) {
  world.impl_->ragdolls.PoisonStateForTest(ragdoll);
}
Error detail::WorldAccess::RagdollEnergy(const World& world, RagdollId ragdoll, std::span<PartEnergy> out) {
  return world.impl_->ragdolls.EnergyForTest(ragdoll, world.impl_->settings.gravity, out);
}
std::span<const PartDriveId> detail::WorldAccess::BrokenDrives(const World& world) {
  return world.impl_->ragdolls.BrokenDrives();
}
int32_t detail::WorldAccess::RagdollLane(const World& world, RagdollId ragdoll) {
  return world.impl_->ragdolls.LaneForTest(ragdoll);
}

void detail::WorldAccess::SetRagdollDomains(World& world, bool enabled) { world.impl_->ragdolls.SetDomainsForTest(enabled); }

int32_t detail::WorldAccess::RagdollDomains(const World& world) { return world.impl_->ragdolls.DomainsForTest(); }

}  // namespace tendon
