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

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace tendon::detail {

class BitWriter {
 public:
  explicit BitWriter(std::span<std::byte> out) : out_(out) {}

  // The low `bits` (1..32) of `value`.
  void Bits(uint32_t value, int32_t bits) {
    for (int32_t i = 0; i < bits; ++i) {
      const std::size_t byte = bit_ >> 3;
      if (byte >= out_.size()) {
        overflow_ = true;
        return;
      }
      if ((bit_ & 7u) == 0) out_[byte] = std::byte{0};  // a fresh byte: padding reads as 0
      if ((value >> i) & 1u) out_[byte] |= std::byte(1u << (bit_ & 7u));
      ++bit_;
    }
  }
  void Bool(bool value) { Bits(value ? 1u : 0u, 1); }
  void F32(float value) { Bits(std::bit_cast<uint32_t>(value), 32); }
  void VarUint(uint32_t value) {
    do {
      Bits(value & 0x7Fu, 7);
      value >>= 7;
      Bool(value != 0);
    } while (value != 0);
  }
  bool overflow() const { return overflow_; }
  // Bytes used so far (the last one partly, its unused high bits 0).
  std::size_t bytes() const { return (bit_ + 7) >> 3; }

 private:
  std::span<std::byte> out_;
  std::size_t bit_ = 0;
  bool overflow_ = false;
};

class BitReader {
 public:
  explicit BitReader(std::span<const std::byte> in) : in_(in) {}

  uint32_t Bits(int32_t bits) {
    uint32_t value = 0;
    for (int32_t i = 0; i < bits; ++i) {
      const std::size_t byte = bit_ >> 3;
      if (byte >= in_.size()) {
        overflow_ = true;
        return 0;
      }
      if ((std::to_integer<uint32_t>(in_[byte]) >> (bit_ & 7u)) & 1u) value |= 1u << i;
      ++bit_;
    }
    return value;
  }
  bool Bool() { return Bits(1) != 0; }
  float F32() { return std::bit_cast<float>(Bits(32)); }
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
  std::size_t bytes() const { return (bit_ + 7) >> 3; }
  // Whether the stream was read to its last byte and the bits left in that byte are 0
  // (what a writer leaves): anything else is not a message this reader wrote.
  bool AtCleanEnd() const {
    if (overflow_ || bytes() != in_.size()) return false;
    if ((bit_ & 7u) == 0) return true;
    return (std::to_integer<uint32_t>(in_[bit_ >> 3]) >> (bit_ & 7u)) == 0;
  }

 private:
  std::span<const std::byte> in_;
  std::size_t bit_ = 0;
  bool overflow_ = false;
};

}  // namespace tendon::detail
