// ports/c/c_errors.cpp: the C ABI's errors: the last error per thread, the refusals every
// domain shares (c_port.h), and the entry points that read them (tendon_last_error,
// tendon_result_name), with tendon_transform_identity.
//
// Every failing call ends in Record: the code is returned, the message, field and item are
// kept for the calling thread (tendon_last_error) and, when there is one, on the world
// (tendon_world_last_error).
// What it does NOT do: decide what is an error (the World and the domain files do).
// Threading: the last error is thread_local; a world's is written by its one thread.
// Memory: a message is a std::string; when it cannot be allocated the code is still
// returned and the previous message stays.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "ports/c/c_port.h"

namespace tendon::ports::capi {
namespace {

struct ThreadError {
  std::string message, field;
  int32_t item = -1;
};
thread_local ThreadError t_error;

}  // namespace

TendonResult Record(TendonWorld* w, TendonResult code, std::string message, std::string field, int32_t item) {
  try {
    t_error.message = std::move(message);
    t_error.field = std::move(field);
    t_error.item = item;
    if (w != nullptr) w->last_error = t_error.message;
  } catch (...) {
  }
  return code;
}
TendonResult Record(TendonWorld* w, const Error& e) {
  if (e.code == ErrorCode::kNone) return TENDON_OK;
  // kIo is the one code past the mirrored range: C has had TENDON_ERROR_IO (101) since before it.
  const TendonResult code = e.code == ErrorCode::kIo ? TENDON_ERROR_IO : static_cast<TendonResult>(e.code);
  return Record(w, code, e.message, e.field, e.item);
}
TendonResult Refuse(TendonWorld* w, TendonResult code, const char* field, const char* why) {
  try {
    return Record(w, code, std::string(field) + why, field);
  } catch (...) {
    return code;
  }
}
TendonResult NullArgument(TendonWorld* w, const char* what) { return Refuse(w, TENDON_ERROR_NULL_ARGUMENT, what, " is NULL"); }
TendonResult InFlight(TendonWorld* w) {
  return Refuse(w, TENDON_ERROR_REENTRANT, "world", ": a frame is in flight (call tendon_world_finish_step)");
}
TendonResult BadArrayError(TendonWorld* w, const char* field) {
  return Refuse(w, TENDON_ERROR_NULL_BUFFER, field, ": a negative count, or a count with a NULL pointer");
}
TendonResult BadEnum(TendonWorld* w, const char* field) {
  return Refuse(w, TENDON_ERROR_OUT_OF_RANGE, field, " is not one of its enum's values");
}
TendonResult CheckReadable(const char* path, const char* field) {
  if (path == nullptr) return NullArgument(nullptr, field);
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      return Record(nullptr, TENDON_ERROR_IO, std::string(path) + ": cannot be read: it is a directory", field);
    errno = 0;
    std::FILE* f = std::fopen(path, "rb");
    if (f == nullptr) {
      const int why = errno;
      return Record(nullptr, TENDON_ERROR_IO,
                    std::string(path) + ": cannot be opened: " + (why != 0 ? std::strerror(why) : "unknown reason"), field);
    }
    std::fclose(f);
    return TENDON_OK;
  } catch (...) {
    return TENDON_ERROR_INTERNAL;
  }
}
const char* LastErrorMessage() { return t_error.message.c_str(); }
const char* LastErrorField() { return t_error.field.c_str(); }
int32_t LastErrorItem() { return t_error.item; }

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

TendonTransform tendon_transform_identity(void) { return ToC(tendon::Transform{}); }

const char* tendon_last_error(void) { return LastErrorMessage(); }
const char* tendon_last_error_field(void) { return LastErrorField(); }
int32_t tendon_last_error_item(void) { return LastErrorItem(); }

const char* tendon_result_name(TendonResult result) {
  // From C any int may arrive here, and loading a value outside the enumerators as the enum
  // is undefined in C++: read the argument's bytes as the int they are.
  int32_t code = 0;
  static_assert(sizeof(code) == sizeof(result), "TendonResult is an int");
  std::memcpy(&code, &result, sizeof(code));
  switch (code) {
    case TENDON_ERROR_NULL_ARGUMENT: return "null argument";
    case TENDON_ERROR_IO: return "io";
    case TENDON_ERROR_INTERNAL: return "internal";
    default: break;
  }
  if (code >= TENDON_OK && code <= TENDON_ERROR_IN_USE) return ToString(static_cast<tendon::ErrorCode>(code));
  return "unknown";
}

}  // extern "C"
