// kernel/world/trace.cpp: the Chrome Trace Event JSON writer.
//
// Format: a JSON array of events (the "JSON Array Format" of the Trace Event Format
// document, which Perfetto and chrome://tracing both load). Per frame, one complete event
// ("ph":"X", timestamp and duration in microseconds) per phase, laid end to end from the
// frame's start, and one counter event ("ph":"C") per group of stats.
#include "tendon/trace.h"

#include <cinttypes>

namespace tendon {

TraceWriter::~TraceWriter() { Close(); }

bool TraceWriter::Open(const std::string& path) {
  Close();
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) return false;
  std::fputs("[\n", file_);
  events_ = 0;
  return true;
}

void TraceWriter::Event(const char* json) {
  if (file_ == nullptr) return;
  if (events_ > 0) std::fputs(",\n", file_);
  std::fputs(json, file_);
  ++events_;
}

void TraceWriter::WriteFrame(const FrameStats& s, double start_us) {
  if (file_ == nullptr) return;
  char line[512];
  const struct {
    const char* name;
    double ms;
  } phases[] = {{"gather", s.times.gather_ms},       {"budget", s.times.budget_ms},
                {"pose", s.times.pose_ms},           {"solve", s.times.solve_ms},
                {"writeback", s.times.writeback_ms}, {"pendulums", s.times.pendulum_ms}};
  std::snprintf(line, sizeof(line),
                "{\"name\":\"frame\",\"cat\":\"tendon\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":1,"
                "\"args\":{\"frame\":%" PRIu64 ",\"substeps\":%d}}",
                start_us, s.times.total_ms * 1000.0, s.frame, s.substeps);
  Event(line);
  double at = start_us;
  for (const auto& phase : phases) {
    std::snprintf(line, sizeof(line),
                  "{\"name\":\"%s\",\"cat\":\"tendon\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":2}",
                  phase.name, at, phase.ms * 1000.0);
    Event(line);
    at += phase.ms * 1000.0;
  }
  std::snprintf(line, sizeof(line),
                "{\"name\":\"chains\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":1,\"args\":{\"bound\":%d,\"simulated\":%d,"
                "\"sleeping\":%d,\"pendulums\":%d}}",
                start_us, s.bound_chains, s.simulated_chains, s.sleeping_chains, s.simulated_pendulums);
  Event(line);
  std::snprintf(line, sizeof(line),
                "{\"name\":\"snapped\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":1,\"args\":{\"teleport\":%d,\"wake\":%d,"
                "\"bad_input\":%d,\"reset\":%d}}",
                start_us, s.snapped_teleport, s.snapped_wake, s.snapped_bad_input, s.reset_non_finite);
  Event(line);
  std::snprintf(line, sizeof(line),
                "{\"name\":\"lanes\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":1,\"args\":{\"occupancy\":%.4f,\"blocks\":%d}}",
                start_us, static_cast<double>(s.lane_occupancy), s.chain_blocks);
  Event(line);
}

void TraceWriter::Close() {
  if (file_ == nullptr) return;
  std::fputs("\n]\n", file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace tendon
