// kernel/core/snapshot_io.h: the byte-level writer and reader of saved states
// (tendon/snapshot.h says what a saved state is and what it holds).
//
// What it does: SnapshotWriter puts fixed-size little-endian fields (floats and doubles
// as their bits) into a caller's span, or only counts them (a null span: the size
// query). SnapshotReader takes them back out with bounds checks; the first field that
// is missing, not finite where it must be, or not what the World expects sets one Error
// (which field, why) and every later read is a no-op that returns zeros, so a system's
// restore code reads straight through and the caller checks `failed()` once.
// Restores run twice over the same bytes: first with apply = false (every check, nothing
// written), then, only when that passed, with apply = true. One code path for both keeps
// the checks and the writes from drifting apart.
// What it does NOT do: know of any system, allocate (Error's message aside, on failure),
// or care about host byte order (fields are assembled byte by byte).
// Threading: a writer or reader belongs to one thread. Memory: none of its own.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "tendon/errors.h"
#include "tendon/math.h"

namespace tendon::detail {

// A value's bits as another type of the same size. std::bit_cast would do, but the libc++
// of Debian's emscripten 3.1.6 (the WebAssembly build) does not have it.
template <typename To, typename From>
inline To BitsOf(From from) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// FNV-1a 64 of a byte range (the payload's checksum).
inline uint64_t SnapshotChecksum(std::span<const std::byte> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (const std::byte b : bytes) {
    h ^= static_cast<uint64_t>(b);
    h *= 1099511628211ull;
  }
  return h;
}

// Section and record tags: four ASCII characters, first in the low byte.
constexpr uint32_t SnapshotTag(const char (&s)[5]) {
  return static_cast<uint32_t>(static_cast<unsigned char>(s[0])) |
         static_cast<uint32_t>(static_cast<unsigned char>(s[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[3])) << 24;
}

class SnapshotWriter {
 public:
  // out empty: counts only (size()).
  explicit SnapshotWriter(std::span<std::byte> out) : out_(out), counting_(out.empty()) {}

  void U8(uint8_t v) { Put(&v, 1); }
  void Bool(bool v) { U8(v ? 1 : 0); }
  void U32(uint32_t v) {
    uint8_t b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    Put(b, 4);
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void U64(uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    Put(b, 8);
  }
  void F32(float v) { U32(BitsOf<uint32_t>(v)); }
  void F64(double v) { U64(BitsOf<uint64_t>(v)); }
  void V3(Vec3 v) {
    F32(v.x);
    F32(v.y);
    F32(v.z);
  }
  void Q(Quat q) {
    F32(q.x);
    F32(q.y);
    F32(q.z);
    F32(q.w);
  }
  void T(const Transform& t) {
    V3(t.translation);
    Q(t.rotation);
    V3(t.scale);
  }
  // A section or record: its tag, then a length patched in by End (the bytes after it).
  std::size_t Begin(uint32_t tag) {
    U32(tag);
    const std::size_t at = pos_;
    U32(0);
    return at;
  }
  void End(std::size_t at) {
    if (counting_ || overflow_) return;
    const auto length = static_cast<uint32_t>(pos_ - at - 4);
    for (int i = 0; i < 4; ++i) out_[at + i] = static_cast<std::byte>(length >> (8 * i));
  }
  std::size_t size() const { return pos_; }
  bool overflow() const { return overflow_; }

 private:
  void Put(const uint8_t* b, std::size_t n) {
    if (!counting_ && !overflow_) {
      if (pos_ + n > out_.size()) {
        overflow_ = true;
      } else {
        std::memcpy(out_.data() + pos_, b, n);
      }
    }
    pos_ += n;
  }
  std::span<std::byte> out_;
  std::size_t pos_ = 0;
  bool counting_ = false;
  bool overflow_ = false;
};

class SnapshotReader {
 public:
  // apply: the pass that writes (after a checking pass over the same bytes passed).
  SnapshotReader(std::span<const std::byte> in, bool apply) : in_(in), apply_(apply) {}

  bool apply() const { return apply_; }
  bool failed() const { return failed_; }
  const Error& error() const { return error_; }
  std::size_t pos() const { return pos_; }
  std::size_t left() const { return in_.size() - pos_; }

  // The first failure wins: it is the one that explains the others.
  void Fail(ErrorCode code, int32_t item, const char* field, const std::string& why) {
    if (failed_) return;
    failed_ = true;
    error_ = Error{code, item, field, why};
  }

  uint8_t U8(const char* field) {
    uint8_t b = 0;
    Get(&b, 1, field);
    return b;
  }
  bool Bool(const char* field) {
    const uint8_t b = U8(field);
    if (b > 1) Fail(ErrorCode::kOutOfRange, -1, field, std::string(field) + " is neither 0 nor 1: the buffer is corrupted");
    return b == 1;
  }
  uint32_t U32(const char* field) {
    uint8_t b[4] = {};
    Get(b, 4, field);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(b[i]) << (8 * i);
    return v;
  }
  int32_t I32(const char* field) { return static_cast<int32_t>(U32(field)); }
  uint64_t U64(const char* field) {
    uint8_t b[8] = {};
    Get(b, 8, field);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return v;
  }
  // NaN is never state: refused. Infinity is (a break distance, a freeze time, a force
  // cap), unless `finite`.
  float F32(const char* field, bool finite = false) {
    const float v = BitsOf<float>(U32(field));
    if (std::isnan(v) || (finite && !std::isfinite(v))) {
      Fail(ErrorCode::kNotFinite, -1, field, std::string(field) + " is not finite in the saved state: refused");
      return 0.0f;
    }
    return v;
  }
  double F64(const char* field, bool finite = false) {
    const double v = BitsOf<double>(U64(field));
    if (std::isnan(v) || (finite && !std::isfinite(v))) {
      Fail(ErrorCode::kNotFinite, -1, field, std::string(field) + " is not finite in the saved state: refused");
      return 0.0;
    }
    return v;
  }
  Vec3 V3(const char* field, bool finite = true) {
    const float x = F32(field, finite), y = F32(field, finite), z = F32(field, finite);
    return Vec3{x, y, z};
  }
  Quat Q(const char* field) {
    const float x = F32(field, true), y = F32(field, true), z = F32(field, true), w = F32(field, true);
    return Quat{x, y, z, w};
  }
  Transform T(const char* field) {
    Transform t;
    t.translation = V3(field);
    t.rotation = Q(field);
    t.scale = V3(field);
    return t;
  }
  // A count the World fixes (parts, nodes, instances): anything else is another World's.
  void Expect(uint32_t got, uint32_t want, int32_t item, const char* field) {
    if (got != want) {
      Fail(ErrorCode::kBadReference, item, field,
           std::string(field) + " is " + std::to_string(got) + " in the saved state, " + std::to_string(want) +
               " in this World: it was saved from other archetypes or instances");
    }
  }
  // A section or record: checks its tag and that its length fits; returns where it ends.
  std::size_t Begin(uint32_t tag, const char* field) {
    const uint32_t got = U32(field);
    if (!failed_ && got != tag) {
      Fail(ErrorCode::kOutOfRange, -1, field,
           std::string(field) + ": the section tag is not the one expected here: the buffer is corrupted or "
                                "from another kind of save");
    }
    const uint32_t length = U32(field);
    if (!failed_ && length > left()) {
      Fail(ErrorCode::kOutOfRange, -1, field,
           std::string(field) + ": the section is longer than what is left of the buffer: truncated or corrupted");
    }
    return failed_ ? pos_ : pos_ + length;
  }
  // Jumps to a record's end (from Begin) without reading it: for a first walk that reads
  // only a record's head.
  void Skip(std::size_t end) {
    if (!failed_ && end <= in_.size()) pos_ = end;
  }
  // The section must end exactly where its length said.
  void End(std::size_t end, const char* field) {
    if (!failed_ && pos_ != end) {
      Fail(ErrorCode::kOutOfRange, -1, field,
           std::string(field) + ": the section's length does not match its contents: corrupted");
    }
  }

 private:
  void Get(uint8_t* b, std::size_t n, const char* field) {
    if (failed_) return;
    if (n > left()) {
      Fail(ErrorCode::kOutOfRange, -1, field,
           std::string(field) + ": the buffer ends before it: truncated");
      return;
    }
    std::memcpy(b, in_.data() + pos_, n);
    pos_ += n;
  }
  std::span<const std::byte> in_;
  bool apply_ = false;
  bool failed_ = false;
  std::size_t pos_ = 0;
  Error error_{};
};

// A fingerprint of plain constants (an archetype's): FNV-1a 64 of their bytes.
inline uint64_t FingerprintBytes(uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace tendon::detail
