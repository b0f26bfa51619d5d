// ports/c/c_trace.cpp: the C ABI's observability: the host profiler's hooks and the Chrome
// trace file of a world's steps.
//
// The TendonWorld owns its TraceWriter, so a C host names only a path; the World is told of
// the writer only while the file is open.
// What it does NOT do: the per-frame stats (c_world.cpp's step), or write the trace itself
// (tendon::TraceWriter does, inside Step).
// Threading: as the C++ World; neither call is allowed while a frame is in flight (the
// World refuses hooks then, and the trace is refused here). Memory: opening a trace
// allocates its FILE buffer.
#include <string>

#include "ports/c/c_port.h"

using namespace tendon::ports::capi;

extern "C" {

TendonResult tendon_world_set_profiler_hooks(TendonWorld* world, const TendonProfilerHooks* hooks) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  return Guard(world, [&] {
    return Record(world, world->world->SetProfilerHooks(hooks != nullptr ? *hooks : tendon::ProfilerHooks{}));
  });
}

TendonResult tendon_world_set_trace_file(TendonWorld* world, const char* path) {
  if (world == nullptr) return NullArgument(nullptr, "world");
  if (world->world->FrameInFlight()) return InFlight(world);
  return Guard(world, [&] {
    world->world->SetTraceWriter(nullptr);
    world->trace.Close();
    if (path == nullptr) return TENDON_OK;
    if (!world->trace.Open(path)) return Record(world, TENDON_ERROR_IO, std::string(path) + ": cannot be opened for writing", "path");
    world->world->SetTraceWriter(&world->trace);
    return TENDON_OK;
  });
}

}  // extern "C"
