// kernel/net/net_character_codec.cpp: the character state message (tendon/net_snapshot.h).
//
// The layout, bytes in order:
//   0  version (kNetCharacterStateVersion)
//   1  flags: bit 0 active, 1 anchored, 2 limp, 3 impulse; the others 0
//   2  strength, 0..255 for [0, 1]
//   3  limp_seconds in 0.1 s (only when limp)
//   .  generation: 7 bits a byte, least significant first, the high bit "more" (1-5 bytes)
//   .  impulse (only when the flag is set): x, y, z, each the high 24 bits of its float
//      (rounded to nearest), little-endian: the reference's "Vector3F24"
// An activation with an impulse at a generation under 128 is 13 bytes: the reference's
// 10-byte push (Boolean8 and a Vector3F24) plus the version, the strength and the generation.
#include <cmath>
#include <cstdint>
#include <string>

#include "kernel/core/snapshot_io.h"
#include "kernel/core/validation.h"
#include "tendon/net_snapshot.h"

namespace tendon {
namespace {

using detail::Fail;
using detail::Ok;

constexpr uint8_t kActive = 1, kAnchored = 2, kLimp = 4, kImpulse = 8;
constexpr float kMaxImpulse = 1e8f;  // N s per component, as the World's impulse calls take

// The high 24 bits of a float, rounded to nearest; truncated instead where rounding would
// carry it past kMaxImpulse, so that every message the decoder accepts is within it.
uint32_t F24(float value) {
  const uint32_t bits = detail::BitsOf<uint32_t>(value);
  const uint32_t rounded = (bits + 0x80u) >> 8;
  return std::fabs(detail::BitsOf<float>(rounded << 8)) <= kMaxImpulse ? rounded : bits >> 8;
}

}  // namespace

Result<std::size_t> EncodeNetCharacterState(const NetCharacterState& s, std::span<std::byte> out) {
  Error e = detail::CheckRange(s.strength, 0.0f, 1.0f, -1, "state.strength");
  if (!Ok(e)) return e;
  if (s.limp) {
    e = detail::CheckRange(s.limp_seconds, 0.0f, 25.5f, -1, "state.limp_seconds");
    if (!Ok(e)) return e;
  }
  if (!IsFinite(s.impulse)) return Fail(ErrorCode::kNotFinite, -1, "state.impulse", "state.impulse is not finite");
  if (std::fabs(s.impulse.x) > kMaxImpulse || std::fabs(s.impulse.y) > kMaxImpulse ||
      std::fabs(s.impulse.z) > kMaxImpulse)
    return Fail(ErrorCode::kOutOfRange, -1, "state.impulse", "state.impulse must be within 1e8 N s per component");
  const bool impulse = !(s.impulse == Vec3{});
  std::byte buffer[kMaxNetCharacterStateBytes];
  std::size_t n = 0;
  buffer[n++] = std::byte{kNetCharacterStateVersion};
  buffer[n++] = std::byte(static_cast<uint8_t>((s.active ? kActive : 0) | (s.anchored ? kAnchored : 0) |
                                               (s.limp ? kLimp : 0) | (impulse ? kImpulse : 0)));
  buffer[n++] = std::byte(static_cast<uint8_t>(std::floor(s.strength * 255.0f + 0.5f)));
  if (s.limp) buffer[n++] = std::byte(static_cast<uint8_t>(std::floor(s.limp_seconds * 10.0f + 0.5f)));
  uint32_t g = s.generation;
  do {
    const uint8_t low = static_cast<uint8_t>(g & 0x7Fu);
    g >>= 7;
    buffer[n++] = std::byte(static_cast<uint8_t>(low | (g != 0 ? 0x80u : 0u)));
  } while (g != 0);
  if (impulse) {
    for (float c : {s.impulse.x, s.impulse.y, s.impulse.z}) {
      const uint32_t v = F24(c);
      buffer[n++] = std::byte(static_cast<uint8_t>(v));
      buffer[n++] = std::byte(static_cast<uint8_t>(v >> 8));
      buffer[n++] = std::byte(static_cast<uint8_t>(v >> 16));
    }
  }
  if (out.size() < n)
    return Fail(ErrorCode::kNullBuffer, -1, "out",
                "out has " + std::to_string(out.size()) + " bytes, the message " + std::to_string(n));
  for (std::size_t i = 0; i < n; ++i) out[i] = buffer[i];
  return n;
}

Error DecodeNetCharacterState(std::span<const std::byte> in, NetCharacterState* out) {
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  auto byte = [&](std::size_t i) { return std::to_integer<uint32_t>(in[i]); };
  if (in.size() < 4) return Fail(ErrorCode::kOutOfRange, -1, "in", "a character state message is at least 4 bytes");
  if (byte(0) != kNetCharacterStateVersion)
    return Fail(ErrorCode::kOutOfRange, -1, "in.version",
                "the message is of version " + std::to_string(byte(0)) + ", this reader reads " +
                    std::to_string(kNetCharacterStateVersion));
  const uint32_t flags = byte(1);
  if ((flags & ~0xFu) != 0) return Fail(ErrorCode::kOutOfRange, -1, "in.flags", "unknown flags: not a state message");
  NetCharacterState s;
  s.active = (flags & kActive) != 0;
  s.anchored = (flags & kAnchored) != 0;
  s.limp = (flags & kLimp) != 0;
  s.strength = static_cast<float>(byte(2)) / 255.0f;
  std::size_t n = 3;
  if (s.limp) s.limp_seconds = static_cast<float>(byte(n++)) * 0.1f;
  uint32_t g = 0;
  for (int32_t k = 0;; ++k) {
    if (n >= in.size()) return Fail(ErrorCode::kOutOfRange, -1, "in.generation", "the message ends inside its generation");
    const uint32_t b = byte(n++);
    if (k == 4 && b > 0x0Fu)
      return Fail(ErrorCode::kOutOfRange, -1, "in.generation", "the generation is longer than 32 bits");
    g |= (b & 0x7Fu) << (7 * k);
    if ((b & 0x80u) == 0) break;
  }
  s.generation = g;
  if ((flags & kImpulse) != 0) {
    if (in.size() < n + 9) return Fail(ErrorCode::kOutOfRange, -1, "in.impulse", "the message ends inside its impulse");
    float c[3];
    for (float& v : c) {
      const uint32_t bits = (byte(n) | (byte(n + 1) << 8) | (byte(n + 2) << 16)) << 8;
      n += 3;
      v = detail::BitsOf<float>(bits);
      if (!std::isfinite(v) || std::fabs(v) > kMaxImpulse)
        return Fail(ErrorCode::kNotFinite, -1, "in.impulse", "the impulse is not finite or beyond 1e8 N s");
    }
    s.impulse = {c[0], c[1], c[2]};
  }
  if (n != in.size())
    return Fail(ErrorCode::kOutOfRange, -1, "in",
                "the message has " + std::to_string(in.size()) + " bytes, its fields end at " + std::to_string(n));
  *out = s;
  return {};
}

}  // namespace tendon
