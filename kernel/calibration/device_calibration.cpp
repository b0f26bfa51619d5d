// kernel/calibration/device_calibration.cpp: CalibrateDevice (tendon/device_calibration.h):
// three synthetic scenes stepped through real Worlds per instruction set and job system,
// timed by the Worlds' own phase times. A client of the World, so a layer above it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernel/core/validation.h"
#include "kernel/calibration/device_calibration.h"

#include "kernel/world/world_access.h"
#include "tendon/device_calibration.h"
#include "tendon/world.h"

namespace tendon {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Fail;

constexpr float kDt = 1.0f / 60.0f;

// A straight 8-node strand hanging sideways, so it swings.
ChainArchetypeSettings Strand() {
  ChainArchetypeSettings s;
  s.name = "calibration strand";
  for (int i = 0; i < 8; ++i) {
    ChainBone b;
    b.parent = i - 1;
    b.rest_local.translation = i == 0 ? Vec3{} : Vec3{0.08f, 0, 0};
    s.bones.push_back(b);
  }
  return s;
}

// A two-part ragdoll: a box and a capsule on a ball joint.
RagdollSettings TwoParts() {
  RagdollSettings s;
  PartSettings root;
  root.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  root.mass = 2;
  s.parts.push_back(root);
  PartSettings arm;
  arm.parent = 0;
  arm.pose.translation = {0, -0.4f, 0};
  arm.shape = {.type = PartShape::kCapsule, .radius = 0.05f, .half_height = 0.2f};
  arm.mass = 1;
  arm.joint.anchor = {0, -0.1f, 0};
  arm.joint.normal_half_cone_degrees = 120;
  arm.joint.plane_half_cone_degrees = 120;
  s.parts.push_back(arm);
  return s;
}

RagdollSettings Box() {
  RagdollSettings s;
  PartSettings box;
  box.shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  box.mass = 1;
  s.parts.push_back(box);
  return s;
}

// What one scene measured: items and seconds of its phase.
struct Timed {
  double items = 0, seconds = 0;
  double Rate() const { return seconds > 0 ? items / seconds : 0; }
};

// A scene's World: timed by the CPU's counter, or by the test's clock (then it steps a fixed
// number of frames, so two runs see the same work).
Result<std::unique_ptr<World>> SceneWorld(const WorldSettings& settings, const detail::PhaseClock* clock) {
  auto created = World::Create(settings);
  if (created.ok() && clock != nullptr) detail::WorldAccess::SetPhaseClock(*created.value(), *clock);
  return created;
}

WorldSettings SceneSettings(Isa isa, const TaskHooks* pool) {
  WorldSettings ws;
  ws.isa = isa;
  if (pool != nullptr) ws.tasks = *pool;
  ws.max_distance = INFINITY;
  ws.render_interpolation = false;
  ws.ragdoll_sleep_speed = 0;  // nothing sleeps: every frame does the same work
  return ws;
}

// Steps `world` until `deadline` (at least 3 timed frames after 2 warm-up frames; exactly 3
// under a test's clock), adding each frame's work and phase time through `add`.
template <class Add>
void StepUntil(World& world, Clock::time_point deadline, bool fixed_frames, Add&& add) {
  for (int i = 0; i < 2; ++i) world.Step(kDt);
  for (int frame = 0; frame < 3 || (!fixed_frames && Clock::now() < deadline); ++frame) add(world.Step(kDt));
}

// Chains: the solve kernel, and pose plus writeback.
Result<std::pair<Timed, Timed>> MeasureChains(Isa isa, const TaskHooks* pool, Clock::time_point deadline,
                                              const detail::PhaseClock* clock) {
  auto created = SceneWorld(SceneSettings(isa, pool), clock);
  if (!created.ok()) return created.error();
  World& world = *created.value();
  const ChainArchetypeSettings strand = Strand();
  const ChainArchetypeId archetype = world.BuildChainArchetype(strand).value();
  constexpr int kChains = 512;
  std::vector<Transform> roots(kChains);
  std::vector<Transform> locals(kChains * strand.bones.size());
  for (int c = 0; c < kChains; ++c) {
    roots[c].translation = {static_cast<float>(c % 32), 2.0f, static_cast<float>(c / 32)};
    for (std::size_t b = 0; b < strand.bones.size(); ++b) locals[c * strand.bones.size() + b] = strand.bones[b].rest_local;
  }
  std::vector<Transform> outputs = locals;
  for (int c = 0; c < kChains; ++c) {
    ChainBinding binding;
    binding.archetype = archetype;
    binding.root_parent_world = &roots[c];
    binding.animated_local = std::span<const Transform>(locals).subspan(c * strand.bones.size(), strand.bones.size());
    binding.output_local = std::span<Transform>(outputs).subspan(c * strand.bones.size(), strand.bones.size());
    auto bound = world.BindChain(binding);
    if (!bound.ok()) return bound.error();
  }
  Timed solve, pose;
  int frame = 0;
  StepUntil(world, deadline, clock != nullptr, [&](const FrameStats& s) {
    // The roots sway, so the chains do work every frame.
    ++frame;
    for (int c = 0; c < kChains; ++c) roots[c].translation.y = 2.0f + 0.05f * std::sin(0.3f * static_cast<float>(frame + c));
    solve.items += static_cast<double>(s.simulated_chains) * s.substeps;
    solve.seconds += s.times.solve_ms * 1e-3;
    pose.items += s.simulated_chains;
    pose.seconds += (s.times.pose_ms + s.times.writeback_ms) * 1e-3;
  });
  return std::pair<Timed, Timed>{solve, pose};
}

// Ragdolls: 64 two-part ragdolls apart (joints and static contacts), or a pile of 64 boxes
// in a 4 x 4 x 4 block on the floor (pair contacts). Items: ragdoll-substeps, or
// pair-substeps.
Result<Timed> MeasureRagdolls(Isa isa, const TaskHooks* pool, Clock::time_point deadline, bool pile,
                              const detail::PhaseClock* clock) {
  auto created = SceneWorld(SceneSettings(isa, pool), clock);
  if (!created.ok()) return created.error();
  World& world = *created.value();
  if (Error e = world.BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}}); e.code != ErrorCode::kNone)
    return e;
  const RagdollArchetypeId archetype = world.BuildRagdollArchetype(pile ? Box() : TwoParts()).value();
  constexpr int kRagdolls = 64;
  std::vector<Transform> parts(kRagdolls * 2);
  for (int i = 0; i < kRagdolls; ++i) {
    RagdollBinding b;
    b.archetype = archetype;
    if (pile) {
      b.placement.translation = {0.2f * static_cast<float>(i % 4), 0.1f + 0.2f * static_cast<float>(i / 16),
                                 0.2f * static_cast<float>((i / 4) % 4)};
      b.output_parts = std::span<Transform>(parts).subspan(i, 1);
    } else {
      b.placement.translation = {1.5f * static_cast<float>(i % 8), 0.7f, 1.5f * static_cast<float>(i / 8)};
      b.angular_velocity = {0, 1, 2};
      b.output_parts = std::span<Transform>(parts).subspan(i * 2, 2);
    }
    auto bound = world.BindRagdoll(b);
    if (!bound.ok()) return bound.error();
  }
  Timed timed;
  StepUntil(world, deadline, clock != nullptr, [&](const FrameStats& s) {
    timed.items += static_cast<double>(pile ? s.ragdoll_pairs : s.simulated_ragdolls) * s.ragdoll_substeps;
    timed.seconds += s.times.ragdoll_ms * 1e-3;
  });
  return timed;
}

}  // namespace

std::string CpuModelName() {
  // stdio, not an ifstream: the WebAssembly module links this file, and an ifstream would
  // pull libc++'s iostreams into it (docs/javascript.md, Size). A line longer than
  // the buffer arrives in pieces; only a piece that starts a line can match a key.
  std::FILE* in = std::fopen("/proc/cpuinfo", "r");
  if (in == nullptr) return "";
  char line[512];
  bool at_line_start = true;
  std::string found;
  while (found.empty() && std::fgets(line, sizeof(line), in) != nullptr) {
    const std::size_t length = std::strlen(line);
    const bool starts_line = at_line_start;
    at_line_start = length > 0 && line[length - 1] == '\n';
    if (!starts_line) continue;
    std::string text(line, at_line_start ? length - 1 : length);
    // x86: "model name : ..."; some ARM kernels: "Model : ...", others "Hardware : ...".
    for (const char* key : {"model name", "Model", "Hardware"}) {
      if (text.rfind(key, 0) == 0) {
        const std::size_t colon = text.find(':');
        if (colon == std::string::npos) continue;
        std::string value = text.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (!value.empty()) {
          found = value;
          break;
        }
      }
    }
  }
  std::fclose(in);
  return found;
}

Result<DeviceProfile> CalibrateDevice(const CalibrationSettings& settings) {
  return detail::CalibrateDeviceTimedBy(settings, nullptr);
}

Result<DeviceProfile> detail::CalibrateDeviceTimedBy(const CalibrationSettings& settings, const PhaseClock* clock) {
  if (!(settings.max_seconds > 0 && settings.max_seconds <= 60))
    return Fail(ErrorCode::kOutOfRange, -1, "max_seconds", "max_seconds must be within (0, 60]");
  std::vector<Isa> isas(settings.isas.begin(), settings.isas.end());
  if (isas.empty()) {
    for (Isa isa : kConcreteIsas)
      if (IsIsaSupported(isa)) isas.push_back(isa);
  }
  for (std::size_t i = 0; i < isas.size(); ++i) {
    if (isas[i] == Isa::kAuto || !IsIsaSupported(isas[i]))
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "isas",
                  std::string("instruction set ") + ToString(isas[i]) + " is not supported by this build and CPU");
  }
  for (std::size_t i = 0; i < settings.worker_pools.size(); ++i) {
    const TaskHooks& p = settings.worker_pools[i];
    if (p.enqueue == nullptr || p.finish == nullptr || p.worker_count < 1 || p.worker_count > 1024)
      return Fail(ErrorCode::kOutOfRange, static_cast<int32_t>(i), "worker_pools",
                  "a worker pool needs enqueue, finish and a worker_count within [1, 1024]");
  }
  std::vector<const TaskHooks*> pools;
  for (const TaskHooks& p : settings.worker_pools) pools.push_back(&p);
  if (pools.empty()) pools.push_back(nullptr);  // the calling thread alone

  DeviceProfile profile;
  profile.machine = CpuModelName();
  const auto start = Clock::now();
  const double share = settings.max_seconds * 0.9 / static_cast<double>(isas.size() * pools.size() * 4);
  int32_t config = 0;
  for (Isa isa : isas) {
    for (const TaskHooks* pool : pools) {
      auto deadline = [&](int scene) {
        return start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(share * static_cast<double>(config * 4 + scene + 1)));
      };
      // Deadlines are absolute: a scene's World is built inside its share, so a World that
      // binds slowly shortens its own share only (building is not what is measured).
      auto chains = MeasureChains(isa, pool, deadline(1), clock);
      if (!chains.ok()) return chains.error();
      auto rigid = MeasureRagdolls(isa, pool, deadline(2), false, clock);
      if (!rigid.ok()) return rigid.error();
      auto pile = MeasureRagdolls(isa, pool, deadline(3), true, clock);
      if (!pile.ok()) return pile.error();
      DeviceMeasurement m;
      m.isa = isa;
      m.workers = pool != nullptr ? pool->worker_count : 1;
      m.axes.chain_solve = chains.value().first.Rate() / kReferenceRates.chain_solve;
      m.axes.pose_writeback = chains.value().second.Rate() / kReferenceRates.pose_writeback;
      m.axes.rigid_substeps = rigid.value().Rate() / kReferenceRates.rigid_substeps;
      m.axes.pair_contacts = pile.value().Rate() / kReferenceRates.pair_contacts;
      profile.measurements.push_back(m);
      ++config;
    }
  }
  if (Error e = DeriveBudgets(profile); e.code != ErrorCode::kNone) return e;
  return profile;
}

}  // namespace tendon
