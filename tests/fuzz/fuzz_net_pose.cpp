// tests/fuzz/fuzz_net_pose.cpp: DecodeNetPose and DecodeNetCharacterState (tendon/
// net_snapshot.h) fed arbitrary bytes.
//
// The first byte picks how the rest is used:
//   0   a pose message as it is, with and without a baseline (the header's checks, the CRC)
//   1   a valid full or delta pose of 23 parts (velocities on) with the input's bytes XORed
//       in at input-chosen places and its CRC made right again, so the field readers behind
//       the CRC see every kind of corruption (counts, flags, ages, ranges, floats, padding)
//   2   a character state message as it is
// A refusal must name a field and a reason and leave the output as it was; an accepted
// pose must be finite with unit rotations, and an accepted state finite and in range.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_input.h"
#include "tendon/net_snapshot.h"

namespace {

using namespace tendon;
using fuzz::FuzzInput;
using fuzz::Require;

constexpr int kParts = 23;

// The CRC-8 (0x07) the pose message ends with (kernel/net/net_pose_codec.cpp), to make a
// corrupted message's right again.
uint8_t Crc8(std::span<const std::byte> bytes) {
  uint32_t c = 0;
  for (std::byte b : bytes) {
    c ^= std::to_integer<uint32_t>(b);
    for (int k = 0; k < 8; ++k) c = (c & 0x80u) != 0 ? ((c << 1) ^ 0x07u) & 0xFFu : (c << 1) & 0xFFu;
  }
  return static_cast<uint8_t>(c);
}

struct Poses {
  NetPoseSettings settings;
  std::vector<Transform> base_parts = std::vector<Transform>(kParts), moved_parts = base_parts;
  std::vector<Vec3> base_lin = std::vector<Vec3>(kParts), base_ang = base_lin, moved_lin = base_lin,
                    moved_ang = base_lin;
  NetPose base, moved;
  std::vector<std::byte> full, delta;

  Poses() {
    settings.include_velocities = true;
    for (int i = 0; i < kParts; ++i) {
      const float f = static_cast<float>(i);
      base_parts[i].translation = Vec3{10.0f + 0.05f * f, 1.0f + 0.03f * f, -3.0f + 0.02f * f};
      base_parts[i].rotation = AxisAngle(NormalizeOr(Vec3{f, 1, -f * 0.5f}, Vec3{0, 1, 0}), 0.3f * f);
      base_lin[i] = Vec3{0.1f * f, -2.0f, 0.5f};
      base_ang[i] = Vec3{0, 0.2f * f, 1.0f};
    }
    moved_parts = base_parts;
    moved_lin = base_lin;
    moved_ang = base_ang;
    for (int i = 5; i < 9; ++i) moved_parts[i].translation.y += 0.1f;
    moved_parts[0].translation.x += 0.5f;
    base = NetPose{100, base_parts, base_lin, base_ang, false, true};
    moved = NetPose{104, moved_parts, moved_lin, moved_ang, false, true};
    full.resize(MaxNetPoseBytes(kParts, settings));
    delta.resize(full.size());
    full.resize(EncodeNetPose(base, nullptr, settings, full).value());
    delta.resize(EncodeNetPose(moved, &base, settings, delta).value());
  }
};

Poses& ThePoses() {
  static Poses p;
  return p;
}

void Check(const Error& e, std::span<const Transform> out, std::span<const Transform> before,
           std::span<const Vec3> lin, std::span<const Vec3> ang) {
  if (!e.ok()) {
    Require(!e.message.empty() && !e.field.empty(), "a refusal without a field or a reason");
    for (std::size_t i = 0; i < out.size(); ++i)
      Require(out[i] == before[i], "a refused decode wrote into its output");
    return;
  }
  for (const Transform& t : out) {
    Require(IsFinite(t), "a decoded frame is not finite");
    Require(std::fabs(Dot(t.rotation, t.rotation) - 1.0f) < 1e-4f, "a decoded rotation is not unit");
  }
  for (Vec3 v : lin) Require(IsFinite(v), "a decoded velocity is not finite");
  for (Vec3 v : ang) Require(IsFinite(v), "a decoded velocity is not finite");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Poses& p = ThePoses();
  FuzzInput in(data, size);
  const uint8_t mode = in.Byte() % 3;
  const auto* raw = reinterpret_cast<const std::byte*>(data);
  const std::span<const std::byte> rest = std::span<const std::byte>(raw, size).subspan(size > 0 ? 1 : 0);
  std::vector<Transform> out(kParts), before(kParts);
  std::vector<Vec3> lin(kParts), ang(kParts);
  NetPose got{0, out, lin, ang, false, false};
  if (mode == 0) {
    Check(DecodeNetPose(rest, nullptr, p.settings, &got), out, before, lin, ang);
    Check(DecodeNetPose(rest, &p.base, p.settings, &got), out, before, lin, ang);
    Check(DecodeNetPose(rest, &p.base, NetPoseSettings{}, &got), out, before, {}, {});
  } else if (mode == 1) {
    std::vector<std::byte> bytes = in.Bool() ? p.full : p.delta;
    const int flips = 1 + in.Int(0, 15);
    for (int k = 0; k < flips; ++k) {
      const std::size_t at = static_cast<std::size_t>(in.Int(0, static_cast<int32_t>(bytes.size()) - 2));
      bytes[at] ^= std::byte{in.Byte()};
    }
    if (in.Bool()) bytes.resize(static_cast<std::size_t>(in.Int(1, static_cast<int32_t>(bytes.size()))));
    if (!bytes.empty()) bytes.back() = std::byte{Crc8(std::span(bytes).first(bytes.size() - 1))};
    Check(DecodeNetPose(bytes, &p.base, p.settings, &got), out, before, lin, ang);
  } else {
    NetCharacterState s;
    const Error e = DecodeNetCharacterState(rest, &s);
    if (!e.ok()) {
      Require(!e.message.empty() && !e.field.empty(), "a refusal without a field or a reason");
    } else {
      Require(IsFinite(s.impulse) && s.strength >= 0 && s.strength <= 1 && s.limp_seconds >= 0 &&
                  s.limp_seconds <= 25.5f,
              "a decoded character state out of range");
      std::byte again[kMaxNetCharacterStateBytes];
      Require(EncodeNetCharacterState(s, again).ok(), "a decoded character state does not encode again");
    }
  }
  return 0;
}
