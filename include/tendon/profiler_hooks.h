// tendon/profiler_hooks.h: the host's profiler, as callbacks (after Jolt's
// JPH_EXTERNAL_PROFILE and Tracy's C API).
//
// What it does: World::SetProfilerHooks routes Tendon's zones and counters into the
// profiler a studio already uses. Every phase of a frame is a zone (gather, budget, the
// characters, the ragdolls and their broad phase, pairs, islands, substeps and writeback,
// the chains' pose, solve and writeback, pendulums), every task the host's job system runs
// is a zone on its worker, each frame ends with counters (chains, ragdolls, characters,
// pairs, islands, sleeping, lane occupancy, the budget's actions) and a frame mark.
// tendon::TraceWriter (trace.h) is one implementation: a Chrome trace.
// What it does NOT do: allocate, or own any profiler. With no hooks set, the only cost is
// one pointer test per phase and per task.
//
// Threading: zone_begin / zone_end come from whichever thread runs the zone: the thread
// that called Step (worker_index kTendonCallerThread), or a worker of the task hooks
// (worker_index < TaskHooks::worker_count). A thread's zones nest. counter and frame_mark
// come from the thread that called Step or FinishStep. Names are string literals: their
// addresses are stable for the life of the process (Tracy's static source locations may
// key on them). Colours are 0xRRGGBB. Memory: Tendon allocates nothing for the hooks.
#pragma once

#ifdef __cplusplus
#include <cstdint>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

// The worker index of zones on the thread that called Step / BeginStep / FinishStep.
#define TENDON_CALLER_THREAD 0xFFFFFFFFu

typedef struct TendonProfilerHooks {
  // Both or neither: a zone opens and closes on one thread.
  void (*zone_begin)(const char* name, uint32_t color, uint32_t worker_index, void* user_context);
  void (*zone_end)(const char* name, uint32_t worker_index, void* user_context);
  // Optional: a named value once per frame (counts, a ratio for lane occupancy).
  void (*counter)(const char* name, double value, void* user_context);
  // Optional: the frame is done (its counters came just before).
  void (*frame_mark)(uint64_t frame, void* user_context);
  void* user_context;
} TendonProfilerHooks;

#ifdef __cplusplus
}
namespace tendon {
using ProfilerHooks = TendonProfilerHooks;
inline constexpr uint32_t kTendonCallerThread = TENDON_CALLER_THREAD;
}  // namespace tendon
#endif
