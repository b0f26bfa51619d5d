// kernel/world/world_access.h: the World's phases one at a time, for benchmarks and tests.
//
// Not part of the public API: tendon_bench measures the solve and the writeback kernels
// through it on a World whose chains were bound and packed through the public API, and
// tests reach states no valid input can.
#pragma once

#include <cstdint>

#include "tendon/world.h"

namespace tendon::detail {

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
};

}  // namespace tendon::detail
