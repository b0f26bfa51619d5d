// tendon/trace.h: Chrome Trace Event JSON of every frame's phases and stats.
//
// What it does: a TraceWriter attached to a World (World::SetTraceWriter) appends, per
// Step, one complete ("ph":"X") event per phase and one counter ("ph":"C") event per
// stat, to a file that Perfetto (ui.perfetto.dev) and chrome://tracing load.
// What it does NOT do: sample, or trace inside tasks. The file is valid JSON only after
// Close() (or the destructor).
// Threading: used by the thread that calls Step. Memory: a FILE buffer; writing happens
// inside Step when attached, which is the one exception to "Step does no I/O".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "tendon/export.h"
#include "tendon/stats.h"

namespace tendon {

class TENDON_API TraceWriter {
 public:
  TraceWriter() = default;
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Opens (truncates) `path`. Returns false when it cannot be opened.
  bool Open(const std::string& path);
  bool IsOpen() const { return file_ != nullptr; }
  // Appends the events of one frame; `start_us` is the frame's start on the trace clock.
  void WriteFrame(const FrameStats& stats, double start_us);
  // Terminates the JSON array and closes the file.
  void Close();
  uint64_t events_written() const { return events_; }

 private:
  void Event(const char* json);
  std::FILE* file_ = nullptr;
  uint64_t events_ = 0;
};

}  // namespace tendon
