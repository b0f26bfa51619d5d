// kernel/core/frame_counters.h: what a frame's work items count, and the state hash.
//
// What it does: WorkCounters is what one work item (a block of chain lanes, a chunk of
// pendulums) counts while it runs; each item has its own, and the owner sums them into
// FrameStats serially in item order, so the totals do not depend on the worker count.
// StateHasher is the FNV-1a 64 fold that World::StateHash feeds every system's state to.
// What it does NOT do: time anything (the World times its phases) or write FrameStats.
// Threading: a WorkCounters belongs to one item at a time. Memory: none.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tendon::detail {

struct WorkCounters {
  int32_t bad_input = 0;  // host input that was not finite (the last good pose was used)
  int32_t reset = 0;      // simulation state that went non-finite (the instance was reset)
  int32_t teleport = 0;   // instances snapped by the teleport guard
};

struct StateHasher {
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  void Mix(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  }
};

}  // namespace tendon::detail
