// kernel/net/bit_stream.h: a bit writer and reader over caller-owned bytes, for the network
// messages (tendon/net_snapshot.h).
//
// What it does: writes and reads unsigned fields of 1 to 32 bits, least significant bit
// first, into bytes in order (bit k of the stream is bit k % 8 of byte k / 8), so the
// layout is the same on every machine whatever its byte order; floats as their 32 bits;
// unsigned integers as 7-bit groups, each followed by a bit that says whether another
// comes (VarUint). Running past the end does not write or read out of bounds: the stream
// remembers it (overflow()) and reads give 0 from then on, so a caller checks once.
// What it does NOT do: allocate, throw, or know what the fields mean.
// Threading: one object, one thread. Memory: none; the spans are the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "kernel/core/snapshot_io.h"  // BitsOf

namespace tendon::detail {

class BitWriter {
 public:
  explicit BitWriter(std::span<std::byte> out) : out_(out) {}

  // The low `bits` (1..32) of `value`.
  void Bits(uint32_t value, int32_t bits) {
    acc_ |= static_cast<uint64_t>(value & Mask(bits)) << fill_;
    fill_ += bits;
    while (fill_ >= 8) {
      Emit(static_cast<uint8_t>(acc_));
      acc_ >>= 8;
      fill_ -= 8;
    }
  }
  void Bool(bool value) { Bits(value ? 1u : 0u, 1); }
  void F32(float value) { Bits(BitsOf<uint32_t>(value), 32); }
  void VarUint(uint32_t value) {
    do {
      Bits(value & 0x7Fu, 7);
      value >>= 7;
      Bool(value != 0);
    } while (value != 0);
  }
  // Writes the last, partly filled byte (its unused high bits 0): call once, at the end.
  void Flush() {
    if (fill_ > 0) Emit(static_cast<uint8_t>(acc_));
    acc_ = 0;
    fill_ = 0;
  }
  bool overflow() const { return overflow_; }
  // Bytes used so far (after Flush, every one written).
  std::size_t bytes() const { return pos_ + (fill_ > 0 ? 1 : 0); }

  static uint32_t Mask(int32_t bits) { return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u; }

 private:
  void Emit(uint8_t byte) {
    if (pos_ < out_.size()) {
      out_[pos_] = std::byte{byte};
    } else {
      overflow_ = true;
    }
    ++pos_;
  }
  std::span<std::byte> out_;
  std::size_t pos_ = 0;
  uint64_t acc_ = 0;  // bits not yet written, the next one lowest
  int32_t fill_ = 0;
  bool overflow_ = false;
};

class BitReader {
 public:
  explicit BitReader(std::span<const std::byte> in) : in_(in) {}

  uint32_t Bits(int32_t bits) {
    while (fill_ < bits) {
      if (pos_ >= in_.size()) {
        overflow_ = true;
        return 0;
      }
      acc_ |= static_cast<uint64_t>(std::to_integer<uint8_t>(in_[pos_++])) << fill_;
      fill_ += 8;
    }
    const uint32_t value = static_cast<uint32_t>(acc_) & BitWriter::Mask(bits);
    acc_ >>= bits;
    fill_ -= bits;
    return value;
  }
  bool Bool() { return Bits(1) != 0; }
  float F32() { return BitsOf<float>(Bits(32)); }
  // At most `max_groups` groups (a longer run is garbage: overflow).
  uint32_t VarUint(int32_t max_groups) {
    uint32_t value = 0;
    for (int32_t g = 0; g < max_groups; ++g) {
      value |= Bits(7) << (7 * g);
      if (!Bool()) return value;
    }
    overflow_ = true;
    return 0;
  }
  bool overflow() const { return overflow_; }
  // Bytes read so far (the last one perhaps in part).
  std::size_t bytes() const { return pos_; }
  // Whether the stream was read to its last byte and the bits left in that byte are 0
  // (what a writer leaves): anything else is not a message this reader wrote.
  bool AtCleanEnd() const { return !overflow_ && pos_ == in_.size() && acc_ == 0; }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  uint64_t acc_ = 0;  // bytes read but not yet consumed, the next bit lowest
  int32_t fill_ = 0;
  bool overflow_ = false;
};

}  // namespace tendon::detail
