// kernel/net/net_pose_codec.cpp: the pose message (tendon/net_snapshot.h): quantising,
// comparing against a baseline, and the bit layout of version 1.
//
// The layout (bit order: kernel/net/bit_stream.h), every field in this order:
//   8  version (kNetPoseVersion)
//   8  part count n (1..255)
//   1  has_baseline   1 asleep   1 has_velocities
//   without a baseline: 32 tick
//   with a baseline: 16 the baseline's tick's low bits (a receiver holding another
//                    baseline is refused), VarUint age (tick - baseline tick, < 2^28: 1 to
//                    4 groups of 8 bits), 1 all_unchanged (then no parts follow: the pose
//                    is the baseline's)
//   n parts, the root first; each:
//     with a baseline: 1 changed (0: the part is the baseline's; nothing else follows)
//     root:   32 x, 32 y, 32 z (float bits)
//     others: 1 far; far: 32 x, 32 y, 32 z (world, float bits); else 3 x B_p bits: the
//             position relative to the root in steps of position_precision, offset by L
//             (L = ceil(position_range / position_precision), B_p = bits of 2L)
//     rotation: 2 bits: which component was dropped (x, y, z, w), 3 x B_r bits: the
//             others in order, in [0, M] (M = 2^B_r - 2, M/2 is 0)
//     velocities (has_velocities): 3 x B_v linear, 3 x B_w angular, offset like positions
//   0 to 7 zero bits to the byte, then one byte: the CRC-8 (polynomial 0x07) of every
//   byte before it, so that any one corrupted byte (any burst of up to 8 bits) is refused.
// Unchanged means: the quantised fields equal the baseline's, and a position sent as floats
// (the root's; a far part's, and then only while the root is unchanged) within
// position_precision / 32 per axis of the baseline's: a body at rest shows its frames to
// the last bit differently from frame to frame under render interpolation. While the root
// is unchanged the receiver keeps its baseline's root and the sender measures the other
// parts from that one, so the tolerance adds no error to them; a receiver copies its
// baseline for an unchanged part (riding the root's move when the root changed).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "kernel/core/validation.h"
#include "kernel/net/bit_stream.h"
#include "kernel/net/net_quantize.h"
#include "tendon/net_snapshot.h"

namespace tendon {
namespace {

using detail::BitReader;
using detail::BitWriter;
using detail::Fail;
using detail::Ok;
using detail::NetLayout;
using detail::QuantizedPart;

constexpr int32_t kMaxAgeGroups = 4;  // a baseline at most 2^28 - 1 ticks old
constexpr uint32_t kMaxAge = (1u << 28) - 1;

// CRC-8, polynomial x^8 + x^2 + x + 1 (0x07), initial 0, no reflection: detects every
// error burst of up to 8 bits (so every corrupted byte). The table is built at compile time.
constexpr std::array<uint8_t, 256> MakeCrcTable() {
  std::array<uint8_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int b = 0; b < 8; ++b) c = (c & 0x80u) != 0 ? ((c << 1) ^ 0x07u) & 0xFFu : (c << 1) & 0xFFu;
    t[i] = static_cast<uint8_t>(c);
  }
  return t;
}
constexpr std::array<uint8_t, 256> kCrcTable = MakeCrcTable();
uint8_t Crc8(std::span<const std::byte> bytes) {
  uint32_t c = 0;
  for (std::byte b : bytes) c = kCrcTable[(c ^ std::to_integer<uint32_t>(b)) & 0xFFu];
  return static_cast<uint8_t>(c);
}

Error CheckPose(const NetPose& pose, const char* name, int32_t count, bool velocities) {
  if (pose.parts.size() != static_cast<std::size_t>(count))
    return Fail(ErrorCode::kBadReference, -1, std::string(name) + ".parts",
                std::string(name) + " has " + std::to_string(pose.parts.size()) + " parts, the pose " +
                    std::to_string(count));
  if (velocities && (pose.linear.size() != pose.parts.size() || pose.angular.size() != pose.parts.size()))
    return Fail(ErrorCode::kNullBuffer, -1, std::string(name) + ".linear",
                std::string(name) + ".linear and .angular need one velocity per part: the settings send velocities");
  for (int32_t i = 0; i < count; ++i) {
    const Transform& t = pose.parts[static_cast<std::size_t>(i)];
    if (!IsFinite(t.translation) || !IsFinite(t.rotation))
      return Fail(ErrorCode::kNotFinite, i, std::string(name) + ".parts",
                  std::string(name) + " part " + std::to_string(i) + " is not finite");
    const float len2 = Dot(t.rotation, t.rotation);
    if (!(std::fabs(len2 - 1.0f) <= 2e-3f))
      return Fail(ErrorCode::kNotUnitRotation, i, std::string(name) + ".parts",
                  std::string(name) + " part " + std::to_string(i) + "'s rotation is not unit");
    if (velocities &&
        (!IsFinite(pose.linear[static_cast<std::size_t>(i)]) || !IsFinite(pose.angular[static_cast<std::size_t>(i)])))
      return Fail(ErrorCode::kNotFinite, i, std::string(name) + ".linear",
                  std::string(name) + " part " + std::to_string(i) + "'s velocity is not finite");
  }
  return {};
}

// Quantises part i of `pose` (the root's translation `root`).
QuantizedPart Quantize(const NetPose& pose, int32_t i, Vec3 root, const NetLayout& layout, bool velocities) {
  const Transform& t = pose.parts[static_cast<std::size_t>(i)];
  QuantizedPart q;
  if (i == 0) {
    q.far = true;  // the root is always sent as floats
    q.far_position = t.translation;
  } else {
    layout.QuantizeOffset(t.translation - root, t.translation, &q);
  }
  detail::QuantizeRotation(t.rotation, layout.rotation_bits, &q);
  if (velocities) {
    layout.QuantizeVelocity(pose.linear[static_cast<std::size_t>(i)], pose.angular[static_cast<std::size_t>(i)], &q);
  }
  return q;
}

void WritePart(BitWriter& w, const QuantizedPart& q, int32_t i, const NetLayout& layout, bool velocities) {
  if (i != 0) w.Bool(q.far);
  if (q.far) {
    w.F32(q.far_position.x);
    w.F32(q.far_position.y);
    w.F32(q.far_position.z);
  } else {
    for (uint32_t v : q.position) w.Bits(v, layout.position_bits);
  }
  w.Bits(q.dropped, 2);
  for (uint32_t v : q.rotation) w.Bits(v, layout.rotation_bits);
  if (velocities) {
    for (uint32_t v : q.linear) w.Bits(v, layout.linear_bits);
    for (uint32_t v : q.angular) w.Bits(v, layout.angular_bits);
  }
}

}  // namespace

namespace {
// CheckRange, building its field's name only on a refusal (a pose per tick allocates nothing).
Error InRange(float value, float lo, float hi, const char* field) {
  if (std::isfinite(value) && value >= lo && value <= hi) return {};
  return detail::CheckRange(value, lo, hi, -1, field);
}
}  // namespace

Error ValidateNetPoseSettings(const NetPoseSettings& s) {
  Error e = InRange(s.position_precision, 1e-5f, 1.0f, "settings.position_precision");
  if (!Ok(e)) return e;
  e = InRange(s.position_range, s.position_precision, 1e4f, "settings.position_range");
  if (!Ok(e)) return e;
  if (s.rotation_bits < 6 || s.rotation_bits > 15)
    return Fail(ErrorCode::kOutOfRange, -1, "settings.rotation_bits",
                "settings.rotation_bits must be within [6, 15], got " + std::to_string(s.rotation_bits));
  if (!s.include_velocities) return {};
  e = InRange(s.linear_precision, 1e-5f, 10.0f, "settings.linear_precision");
  if (!Ok(e)) return e;
  e = InRange(s.linear_range, s.linear_precision, 1e3f, "settings.linear_range");
  if (!Ok(e)) return e;
  e = InRange(s.angular_precision, 1e-5f, 10.0f, "settings.angular_precision");
  if (!Ok(e)) return e;
  e = InRange(s.angular_range, s.angular_precision, 1e3f, "settings.angular_range");
  if (!Ok(e)) return e;
  if (!NetLayout(s).Fits())
    return Fail(ErrorCode::kOutOfRange, -1, "settings",
                "a range over its precision needs more than 24 bits per component: widen the precision");
  return {};
}

std::size_t MaxNetPoseBytes(int32_t part_count, const NetPoseSettings& settings) {
  if (part_count < 1 || part_count > kMaxNetPoseParts || !Ok(ValidateNetPoseSettings(settings))) return 0;
  const NetLayout layout(settings);
  const std::size_t header = 8 + 8 + 3 + 16 + 8 * kMaxAgeGroups + 1;
  std::size_t part = 1 + 1 + 96 + 2 + 3 * static_cast<std::size_t>(layout.rotation_bits);
  if (settings.include_velocities) part += 3 * static_cast<std::size_t>(layout.linear_bits + layout.angular_bits);
  return (header + part * static_cast<std::size_t>(part_count) + 7) / 8 + 1;  // + the CRC
}

Result<std::size_t> EncodeNetPose(const NetPose& pose, const NetPose* baseline, const NetPoseSettings& settings,
                                  std::span<std::byte> out) {
  Error e = ValidateNetPoseSettings(settings);
  if (!Ok(e)) return e;
  const int32_t count = static_cast<int32_t>(pose.parts.size());
  if (count < 1 || count > kMaxNetPoseParts)
    return Fail(ErrorCode::kOutOfRange, -1, "pose.parts",
                "a pose message carries 1 to " + std::to_string(kMaxNetPoseParts) + " parts, got " +
                    std::to_string(pose.parts.size()));
  const bool velocities = settings.include_velocities;
  e = CheckPose(pose, "pose", count, velocities);
  if (!Ok(e)) return e;
  uint32_t age = 0;
  if (baseline != nullptr) {
    e = CheckPose(*baseline, "baseline", count, velocities);
    if (!Ok(e)) return e;
    age = pose.tick - baseline->tick;  // wraps with the tick
    if (age > kMaxAge)
      return Fail(ErrorCode::kOutOfRange, -1, "baseline.tick",
                  "the baseline is " + std::to_string(age) + " ticks before the pose, more than 2^28 - 1: send a full pose");
  }
  const NetLayout layout(settings);
  const Vec3 base_root = baseline != nullptr ? baseline->parts[0].translation : Vec3{};
  // The root first: unchanged, the receiver keeps its baseline's root, and the other parts
  // are measured from that one (so a root within the tolerance adds no error to them).
  bool root_changed = true;
  if (baseline != nullptr) {
    root_changed = !detail::SameAsBaseline(Quantize(pose, 0, Vec3{}, layout, velocities),
                                           Quantize(*baseline, 0, Vec3{}, layout, velocities), 0, false,
                                           layout.root_tolerance);
  }
  const Vec3 root = root_changed ? pose.parts[0].translation : base_root;
  // Whether anything changed decides the header's all_unchanged bit: one pass to find out.
  bool any_changed = root_changed;
  for (int32_t i = 1; i < count && !any_changed; ++i) {
    any_changed = !detail::SameAsBaseline(Quantize(pose, i, root, layout, velocities),
                                          Quantize(*baseline, i, base_root, layout, velocities), i, false,
                                          layout.root_tolerance);
  }

  BitWriter w(out);
  w.Bits(kNetPoseVersion, 8);
  w.Bits(static_cast<uint32_t>(count), 8);
  w.Bool(baseline != nullptr);
  w.Bool(pose.asleep);
  w.Bool(velocities);
  if (baseline == nullptr) {
    w.Bits(pose.tick, 32);
  } else {
    w.Bits(baseline->tick & 0xFFFFu, 16);
    w.VarUint(age);
    w.Bool(!any_changed);
  }
  if (any_changed) {
    for (int32_t i = 0; i < count; ++i) {
      const QuantizedPart q = Quantize(pose, i, root, layout, velocities);
      if (baseline != nullptr) {
        const QuantizedPart b = Quantize(*baseline, i, base_root, layout, velocities);
        const bool changed = !detail::SameAsBaseline(q, b, i, root_changed, layout.root_tolerance);
        w.Bool(changed);
        if (!changed) continue;
      }
      WritePart(w, q, i, layout, velocities);
    }
  }
  w.Flush();
  const std::size_t body = w.bytes();
  if (!w.overflow() && body < out.size()) {
    out[body] = std::byte{Crc8(out.first(body))};
  } else {
    const std::size_t need = MaxNetPoseBytes(count, settings);
    return Fail(ErrorCode::kNullBuffer, -1, "out",
                "out has " + std::to_string(out.size()) + " bytes; a pose of " + std::to_string(count) +
                    " parts needs up to " + std::to_string(need) + " (MaxNetPoseBytes)");
  }
  return body + 1;
}

Result<int32_t> NetPosePartCount(std::span<const std::byte> in) {
  BitReader r(in);
  const uint32_t version = r.Bits(8);
  const uint32_t count = r.Bits(8);
  if (r.overflow()) return Fail(ErrorCode::kOutOfRange, -1, "in", "a pose message is at least 2 bytes");
  if (version != kNetPoseVersion)
    return Fail(ErrorCode::kOutOfRange, -1, "in.version",
                "the message is of version " + std::to_string(version) + ", this reader reads " +
                    std::to_string(kNetPoseVersion));
  if (count == 0) return Fail(ErrorCode::kOutOfRange, -1, "in.count", "the message says it carries no parts");
  return static_cast<int32_t>(count);
}

Result<int32_t> NetPoseBaselineTick(std::span<const std::byte> in) {
  const Result<int32_t> count = NetPosePartCount(in);
  if (!count.ok()) return count.error();
  BitReader r(in);
  r.Bits(8);  // version
  r.Bits(8);  // part count
  const bool has_baseline = r.Bool();
  r.Bool();  // asleep
  r.Bool();  // has_velocities
  const uint32_t base_low = has_baseline ? r.Bits(16) : 0;
  if (r.overflow()) return Fail(ErrorCode::kOutOfRange, -1, "in", "the message ends inside its header");
  return has_baseline ? static_cast<int32_t>(base_low) : -1;
}

namespace {

// Reads the message; writes into `out` only when kWrite (the first pass checks everything,
// so a refused message changes nothing, and `out` may be the baseline itself).
template <bool kWrite>
Error ReadPose(std::span<const std::byte> in, const NetPose* baseline, const NetLayout& layout, int32_t count,
               bool velocities, NetPose* out) {
  BitReader r(in);
  r.Bits(8);  // version and count: checked by the caller
  r.Bits(8);
  const bool has_baseline = r.Bool();
  const bool asleep = r.Bool();
  r.Bool();  // has_velocities: the caller's
  bool all_unchanged = false;
  uint32_t tick = 0;
  if (!has_baseline) {
    tick = r.Bits(32);
  } else {
    const uint32_t base_low = r.Bits(16);
    const uint32_t age = r.VarUint(kMaxAgeGroups);
    all_unchanged = r.Bool();
    if (r.overflow()) return Fail(ErrorCode::kOutOfRange, -1, "in", "the message ends inside its header");
    if (baseline == nullptr)
      return Fail(ErrorCode::kBadReference, -1, "baseline",
                  "the message is a delta against a baseline (tick ...%65536 = " + std::to_string(base_low) +
                      ") and no baseline was given");
    if ((baseline->tick & 0xFFFFu) != base_low)
      return Fail(ErrorCode::kBadReference, -1, "baseline.tick",
                  "the message is a delta against a baseline whose tick % 65536 is " + std::to_string(base_low) +
                      ", the baseline given is tick " + std::to_string(baseline->tick));
    tick = baseline->tick + age;
  }
  const bool copy_velocities = !out->linear.empty();
  const Vec3 base_root = has_baseline ? baseline->parts[0].translation : Vec3{};
  Vec3 root{};
  bool root_changed = true;
  for (int32_t i = 0; i < count; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    const bool changed = !has_baseline || (!all_unchanged && r.Bool());
    if (!changed) {
      if (i == 0) root_changed = false;
      if constexpr (kWrite) {
        const Transform& b = baseline->parts[k];
        // Unchanged relative to the root: it rides the root's move (a part bit-identical
        // to the baseline's, the root unchanged, is copied as it is).
        const Vec3 p = (i == 0 || !root_changed) ? b.translation : root + (b.translation - base_root);
        const Quat q = b.rotation;
        Vec3 lin{}, ang{};
        if (velocities) {
          lin = baseline->linear[k];
          ang = baseline->angular[k];
        }
        out->parts[k] = Transform{p, q, {1, 1, 1}};
        if (copy_velocities) {
          out->linear[k] = lin;
          out->angular[k] = ang;
        }
      }
      if (i == 0) root = baseline->parts[0].translation;
      continue;
    }
    QuantizedPart q;
    q.far = i == 0 || r.Bool();
    if (q.far) {
      q.far_position.x = r.F32();
      q.far_position.y = r.F32();
      q.far_position.z = r.F32();
      if (!IsFinite(q.far_position) || std::fabs(q.far_position.x) > detail::kMaxNetCoordinate ||
          std::fabs(q.far_position.y) > detail::kMaxNetCoordinate ||
          std::fabs(q.far_position.z) > detail::kMaxNetCoordinate)
        return Fail(ErrorCode::kNotFinite, i, "in.parts",
                    "part " + std::to_string(i) + "'s position is not finite or beyond 1e9 m: not a pose message");
    } else {
      for (uint32_t& v : q.position) v = r.Bits(layout.position_bits);
      for (uint32_t v : q.position)
        if (v > 2 * static_cast<uint32_t>(layout.position_steps))
          return Fail(ErrorCode::kOutOfRange, i, "in.parts",
                      "part " + std::to_string(i) + "'s position is outside the settings' range: not a pose message");
    }
    q.dropped = r.Bits(2);
    for (uint32_t& v : q.rotation) v = r.Bits(layout.rotation_bits);
    for (uint32_t v : q.rotation)
      if (v > layout.rotation_max)
        return Fail(ErrorCode::kOutOfRange, i, "in.parts",
                    "part " + std::to_string(i) + "'s rotation is outside its range: not a pose message");
    if (velocities) {
      for (uint32_t& v : q.linear) v = r.Bits(layout.linear_bits);
      for (uint32_t& v : q.angular) v = r.Bits(layout.angular_bits);
      for (uint32_t v : q.linear)
        if (v > 2 * static_cast<uint32_t>(layout.linear_steps))
          return Fail(ErrorCode::kOutOfRange, i, "in.linear", "a linear velocity outside its range: not a pose message");
      for (uint32_t v : q.angular)
        if (v > 2 * static_cast<uint32_t>(layout.angular_steps))
          return Fail(ErrorCode::kOutOfRange, i, "in.angular",
                      "an angular velocity outside its range: not a pose message");
    }
    if (r.overflow())
      return Fail(ErrorCode::kOutOfRange, i, "in", "the message ends inside part " + std::to_string(i));
    const Vec3 p = q.far ? q.far_position : root + layout.DequantizeOffset(q);
    if (i == 0) root = p;
    if constexpr (kWrite) {
      out->parts[k] = Transform{p, detail::DequantizeRotation(q, layout.rotation_bits), {1, 1, 1}};
      if (copy_velocities) {
        if (velocities) {
          layout.DequantizeVelocity(q, &out->linear[k], &out->angular[k]);
        } else {
          out->linear[k] = Vec3{};
          out->angular[k] = Vec3{};
        }
      }
    }
  }
  if (!r.AtCleanEnd()) {
    if (r.overflow()) return Fail(ErrorCode::kOutOfRange, -1, "in", "the message is truncated");
    return Fail(ErrorCode::kOutOfRange, -1, "in",
                "the message has " + std::to_string(in.size()) + " bytes, its fields end at " +
                    std::to_string(r.bytes()) + " (or its padding bits are not 0): not a pose message");
  }
  if constexpr (kWrite) {
    out->tick = tick;
    out->asleep = asleep;
    out->has_velocities = velocities;
  }
  return {};
}

}  // namespace

Error DecodeNetPose(std::span<const std::byte> in, const NetPose* baseline, const NetPoseSettings& settings,
                    NetPose* out) {
  if (out == nullptr) return Fail(ErrorCode::kNullBuffer, -1, "out", "out is null");
  Error e = ValidateNetPoseSettings(settings);
  if (!Ok(e)) return e;
  Result<int32_t> count = NetPosePartCount(in);
  if (!count.ok()) return count.error();
  const int32_t n = count.value();
  if (in.size() < 4) return Fail(ErrorCode::kOutOfRange, -1, "in", "the message is truncated inside its header");
  const std::span<const std::byte> body = in.first(in.size() - 1);
  if (Crc8(body) != std::to_integer<uint8_t>(in.back()))
    return Fail(ErrorCode::kOutOfRange, -1, "in.crc",
                "the message's CRC-8 does not match its bytes: corrupted or truncated");
  const bool velocities = (std::to_integer<uint32_t>(in[2]) >> 2) & 1u;  // bit 18: has_velocities
  if (velocities != settings.include_velocities)
    return Fail(ErrorCode::kBadReference, -1, "settings.include_velocities",
                velocities ? "the message carries velocities and the settings do not"
                           : "the settings send velocities and the message carries none");
  if (out->parts.size() != static_cast<std::size_t>(n))
    return Fail(ErrorCode::kNullBuffer, -1, "out.parts",
                "out.parts has " + std::to_string(out->parts.size()) + " frames, the message " + std::to_string(n) +
                    " parts");
  if (!out->linear.empty() || !out->angular.empty()) {
    if (out->linear.size() != out->parts.size() || out->angular.size() != out->parts.size())
      return Fail(ErrorCode::kNullBuffer, -1, "out.linear",
                  "out.linear and out.angular must be empty or hold one velocity per part");
  }
  const bool has_baseline = (std::to_integer<uint32_t>(in[2]) & 1u) != 0;  // bit 16
  if (has_baseline && baseline != nullptr) {
    e = CheckPose(*baseline, "baseline", n, velocities);
    if (!Ok(e)) return e;
  }
  const NetLayout layout(settings);
  e = ReadPose<false>(body, baseline, layout, n, velocities, out);
  if (!Ok(e)) return e;
  return ReadPose<true>(body, baseline, layout, n, velocities, out);
}

}  // namespace tendon
