// tendon/trace.h: a Chrome trace of every frame, one implementation of the profiler hooks.
//
// What it does: a TraceWriter's hooks() (profiler_hooks.h), given to a World
// (World::SetTraceWriter, or SetProfilerHooks), write a Trace Event JSON file that Perfetto
// (ui.perfetto.dev) and chrome://tracing load: every zone as a begin / end pair ("ph":"B"
// and "E") at its real time, on its own track ("tendon caller" for the thread that called
// Step, "tendon worker N" for each worker of the task hooks), every frame counter as a
// counter track ("ph":"C"), and each frame's end as an instant event.
// What it does NOT do: sample. The file is valid JSON only after Close() (or the
// destructor).
// Threading: the hooks may be called from any thread at once (a mutex orders the
// events). Memory: a FILE buffer, at Open; writing happens inside Step when attached, which
// is the one exception to "Step does no I/O".
#pragma once

#include <bitset>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "tendon/export.h"
#include "tendon/profiler_hooks.h"

namespace tendon {

class TENDON_API TraceWriter {
 public:
  TraceWriter() = default;
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Opens (truncates) `path`; the trace's clock starts here. False when it cannot be opened.
  bool Open(const std::string& path);
  bool IsOpen() const { return file_ != nullptr; }
  // The hooks that write this trace (valid while this object lives).
  ProfilerHooks hooks();
  // Terminates the JSON array and closes the file.
  void Close();
  uint64_t events_written() const { return events_; }

 private:
  static void ZoneBegin(const char* name, uint32_t color, uint32_t worker, void* self);
  static void ZoneEnd(const char* name, uint32_t worker, void* self);
  static void Counter(const char* name, double value, void* self);
  static void FrameMark(uint64_t frame, void* self);
  // Appends one event; the caller holds mutex_.
  void Event(const char* json);
  // The track of a worker index, named in the trace the first time it is seen.
  uint32_t Track(uint32_t worker);
  double NowUs() const;

  std::FILE* file_ = nullptr;
  uint64_t events_ = 0;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_{};
  std::bitset<1026> named_tracks_{};
};

}  // namespace tendon
