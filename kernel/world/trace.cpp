// kernel/world/trace.cpp: the Chrome Trace Event JSON writer, as profiler hooks.
//
// Format: a JSON array of events (the "JSON Array Format" of the Trace Event Format
// document, which Perfetto and chrome://tracing both load). Zones are duration events
// ("ph":"B" / "E", microseconds on the writer's steady clock since Open) on track 1 for the
// thread that called Step and track worker + 2 for each worker, each named by a metadata
// event ("ph":"M", thread_name) the first time it appears; counters are "ph":"C" events
// with one series each; a frame's end is an instant event ("ph":"i").
#include "tendon/trace.h"

#include <cinttypes>

namespace tendon {

TraceWriter::~TraceWriter() { Close(); }

bool TraceWriter::Open(const std::string& path) {
  Close();
  std::lock_guard<std::mutex> lock(mutex_);
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) return false;
  std::fputs("[\n", file_);  // also makes stdio allocate its buffer here, not inside a Step
  events_ = 0;
  named_tracks_.reset();
  start_ = std::chrono::steady_clock::now();
  return true;
}

ProfilerHooks TraceWriter::hooks() { return ProfilerHooks{&ZoneBegin, &ZoneEnd, &Counter, &FrameMark, this}; }

double TraceWriter::NowUs() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
}

void TraceWriter::Event(const char* json) {
  if (file_ == nullptr) return;
  if (events_ > 0) std::fputs(",\n", file_);
  std::fputs(json, file_);
  ++events_;
}

uint32_t TraceWriter::Track(uint32_t worker) {
  const uint32_t track = worker == kTendonCallerThread ? 1u : (worker < 1024 ? worker + 2u : 1025u);
  if (!named_tracks_[track]) {
    named_tracks_[track] = true;
    char line[192];
    if (track == 1) {
      std::snprintf(line, sizeof(line),
                    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"tendon caller\"}}");
    } else {
      std::snprintf(line, sizeof(line),
                    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"tendon worker %u\"}}",
                    track, track - 2);
    }
    Event(line);
  }
  return track;
}

void TraceWriter::ZoneBegin(const char* name, uint32_t color, uint32_t worker, void* context) {
  auto* self = static_cast<TraceWriter*>(context);
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (self->file_ == nullptr) return;
  const uint32_t track = self->Track(worker);
  char line[256];
  std::snprintf(line, sizeof(line),
                "{\"name\":\"%s\",\"cat\":\"tendon\",\"ph\":\"B\",\"ts\":%.3f,\"pid\":1,\"tid\":%u,"
                "\"args\":{\"color\":\"#%06" PRIx32 "\"}}",
                name, self->NowUs(), track, color & 0xFFFFFFu);
  self->Event(line);
}

void TraceWriter::ZoneEnd(const char* name, uint32_t worker, void* context) {
  auto* self = static_cast<TraceWriter*>(context);
  const double now = self->NowUs();  // before the lock: the zone ends now, not when the file is free
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (self->file_ == nullptr) return;
  char line[192];
  std::snprintf(line, sizeof(line), "{\"name\":\"%s\",\"ph\":\"E\",\"ts\":%.3f,\"pid\":1,\"tid\":%u}", name, now,
                self->Track(worker));
  self->Event(line);
}

void TraceWriter::Counter(const char* name, double value, void* context) {
  auto* self = static_cast<TraceWriter*>(context);
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (self->file_ == nullptr) return;
  char line[192];
  std::snprintf(line, sizeof(line), "{\"name\":\"%s\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":1,\"args\":{\"value\":%.6g}}",
                name, self->NowUs(), value);
  self->Event(line);
}

void TraceWriter::FrameMark(uint64_t frame, void* context) {
  auto* self = static_cast<TraceWriter*>(context);
  std::lock_guard<std::mutex> lock(self->mutex_);
  if (self->file_ == nullptr) return;
  char line[192];
  std::snprintf(line, sizeof(line),
                "{\"name\":\"frame end\",\"ph\":\"i\",\"s\":\"g\",\"ts\":%.3f,\"pid\":1,\"tid\":1,"
                "\"args\":{\"frame\":%" PRIu64 "}}",
                self->NowUs(), frame);
  self->Event(line);
}

void TraceWriter::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (file_ == nullptr) return;
  std::fputs("\n]\n", file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace tendon
