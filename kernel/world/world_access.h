// kernel/world/world_access.h: the World's phases one at a time, for benchmarks and tests.
//
// Not part of the public API: tendon_bench measures the solve and the writeback kernels
// through it on a World whose chains were bound and packed through the public API, and
// tests reach states no valid input can.
#pragma once

#include <cstdint>
#include <span>

#include "kernel/core/host_shapes.h"
#include "kernel/ragdolls/part_energy.h"
#include "tendon/world.h"

namespace tendon::detail {

// The phases a frame times (FrameStats::times).
enum class FramePhase : int32_t { kGather, kBudget, kRagdolls, kPose, kSolve, kWriteback, kPendulums };

// A test's clock for the phase times: when set, each phase's time is ms(phase, items)
// instead of the CPU counter's, and a frame's total is the sum of its phases, so a test
// can give a scene an exact cost. items: bound chains (gather, budget), the pass's
// simulated chains (pose, solve, writeback), simulated ragdolls x ragdoll substeps run
// (ragdolls), simulated pendulums (pendulums).
struct PhaseClock {
  double (*ms)(FramePhase phase, int32_t items, void* user) = nullptr;
  void* user = nullptr;
};

struct WorldAccess {
  // Runs `substeps` substeps of the solve phase over every simulated block (through the
  // World's task hooks), without reading host poses or writing them.
  static void SolveOnly(World& world, int32_t substeps);
  // Runs the writeback phase (kernel and scatter into host buffers) alone.
  static void WritebackOnly(World& world);
  static int32_t SimulatedBlocks(const World& world);
  // Writes NaN into a ragdoll's solver state (its root part's velocity), as an overflow
  // inside the substeps would: for tests of the reset path, which no valid input reaches.
  static void PoisonRagdollState(World& world, RagdollId ragdoll);
  // A ragdoll's lane in its group (-1 for an invalid id): where its state sits in the
  // blocks, which a stepping frame may change as it opens (RagdollSystem::PackAwakeLanes).
  static int32_t RagdollLane(const World& world, RagdollId ragdoll);
  // Whether frames with pairs between ragdolls may run each domain's substeps in one task
  // (RagdollDomains, kernel/ragdolls/ragdoll_domains.h; on by default), and how many
  // domains the last frame had (0 or 1: it ran substep by substep).
  static void SetRagdollDomains(World& world, bool enabled);
  static int32_t RagdollDomains(const World& world);
  // Each part's energy (out.size() >= the part count; kStaleHandle, kNullBuffer as
  // GetRagdollVelocities), from the lane state: what the last substep left.
  static Error RagdollEnergy(const World& world, RagdollId ragdoll, std::span<PartEnergy> out);
  // Replaces the CPU counter for the phase times (null ms: the counter again).
  static void SetPhaseClock(World& world, PhaseClock clock);
  // The part drives that broke in the last Step (RagdollSystem::BrokenDrives), until the
  // World's event queue carries them.
  static std::span<const PartDriveId> BrokenDrives(const World& world);
};

}  // namespace tendon::detail
