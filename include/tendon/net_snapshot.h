// tendon/net_snapshot.h: network snapshots: a ragdoll's pose as a compact, quantised, lossy
// message for sending every network tick, and a character's state changes as a small
// message of their own (docs/snapshots.md, "Network snapshots").
//
// What it does: EncodeNetPose writes a pose (every part's world frame, optionally its
// velocities, a tick and an asleep flag) into the caller's bytes: the root part's position
// as three full floats, every other part's position relative to the root's at
// NetPoseSettings::position_precision, every rotation as a smallest-three quaternion
// (Glenn Fiedler, "Snapshot Compression", gafferongames.com, is the source of the idea).
// Against a baseline (a pose the receiver acknowledged) a part whose quantised values are
// those of the baseline costs one bit, and a pose that is all unchanged costs a header:
// a sleeping 23-part human is 7 bytes, a full one 205 (within 1.6 mm and 0.15 degrees).
// DecodeNetPose reads it back into the caller's spans; everything it writes is finite and
// every rotation unit. The message ends with a CRC-8: any one corrupted byte is refused.
// EncodeNetCharacterState / DecodeNetCharacterState do the same for a character's state
// (active, limp, anchored, strength, an impulse, the activation's generation). The World
// calls that capture and apply them are in tendon/world.h (CaptureRagdollPose,
// CaptureNetCharacterState, ApplyNetCharacterState).
// The format: little-endian, bits written least significant first into bytes in order,
// so x86-64, ARM64 and WebAssembly agree; the first byte is the version
// (kNetPoseVersion, kNetCharacterStateVersion).
// What it does NOT do: send anything, keep baselines, acknowledge, or interpolate (the
// receiving side's following is tendon/world.h's business); carry scale (ragdoll parts are
// unscaled: a decoded frame has scale 1); carry the settings (both ends must use the same
// NetPoseSettings: the decoder cannot tell other precisions from garbage).
// Bad input: the encoder refuses a non-finite pose, spans of the wrong size, or a baseline
// of another part count; the decoder refuses truncated, trailing or garbage bytes, another
// version, a baseline of another part count or tick, or spans too small, with an Error
// naming why. A refused decode writes nothing.
// Threading: pure functions of their arguments; any thread. Memory: none allocated (the
// caller owns every buffer), except the Error of a refusal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tendon/errors.h"
#include "tendon/export.h"
#include "tendon/math.h"

namespace tendon {

// The pose message's first byte; a message of another version is refused.
inline constexpr uint8_t kNetPoseVersion = 1;
// The character state message's first byte.
inline constexpr uint8_t kNetCharacterStateVersion = 1;
// The most parts a pose message carries (its count is one byte).
inline constexpr int32_t kMaxNetPoseParts = 255;

// How a pose is quantised. Both ends must use the same values.
struct NetPoseSettings {
  // Metres, (0, 1]: the step of a part's position relative to the root's, per axis. A
  // decoded position is within half a step per axis (sqrt(3)/2 steps in all: 1.73 mm at
  // the default 2 mm). The root's position is sent as full floats.
  float position_precision = 0.002f;
  // Metres, [position_precision, 1e4]: how far from the root a part may be per axis and
  // still be sent quantised. A part farther away is sent as full floats (3 bytes more per
  // axis than quantised; never refused).
  float position_range = 2.0f;
  // Bits per smallest-three component, [6, 15]: the three smallest components of the
  // rotation, each in [-1/sqrt(2), 1/sqrt(2)], in this many bits, plus 2 bits for which
  // one was dropped. 10 bits keep every rotation within 0.25 degrees (the bound is
  // 4 * asin(sqrt(3) * 0.5 * sqrt(2) / (2^bits - 1)) ~ 0.39 degrees at 10 bits; measured
  // max 0.2 degrees, tests/net_snapshot_test.cpp).
  int32_t rotation_bits = 10;
  // Send every part's velocities (linear m/s, angular rad/s). false: not sent; the decoder
  // writes zeros into the velocity spans it was given and sets NetPose::has_velocities false.
  bool include_velocities = false;
  // m/s, (0, 10]: the step of a linear velocity component; range +-linear_range, (0, 1e3]
  // m/s (a faster component is clamped to it).
  float linear_precision = 0.01f;
  float linear_range = 50.0f;
  // rad/s, (0, 10]: the step of an angular velocity component; range +-angular_range,
  // (0, 1e3] rad/s (clamped likewise).
  float angular_precision = 0.02f;
  float angular_range = 60.0f;
};

// A pose: what the encoder reads and the decoder writes (a view: the caller owns the
// spans). Part order is the archetype's; part 0 is the root.
struct NetPose {
  uint32_t tick = 0;             // the sender's clock, in whatever ticks the game counts
  std::span<Transform> parts{};  // every part's world frame (scale ignored; decoded as 1)
  // Every part's centre-of-mass velocity (m/s) and angular velocity (rad/s), world space;
  // empty when not sent or not wanted (parts.size() each otherwise).
  std::span<Vec3> linear{};
  std::span<Vec3> angular{};
  bool asleep = false;           // the ragdoll was asleep or frozen
  bool has_velocities = false;   // written by the decoder: the message carried velocities
};

// Validates the settings (which field, why).
TENDON_API Error ValidateNetPoseSettings(const NetPoseSettings& settings);
// The most bytes EncodeNetPose writes for `part_count` parts (a full pose, every part far):
// a buffer this large never fails for size. 0 for bad settings or count.
TENDON_API std::size_t MaxNetPoseBytes(int32_t part_count, const NetPoseSettings& settings);
// Writes `pose` into `out`; returns the bytes written. With a baseline (a pose the
// receiver acknowledged, tick baseline->tick at most 2^28 - 1 before pose.tick: the one
// the receiver will pass to DecodeNetPose, or the sender's own copy of what it sent),
// parts whose quantised values equal the baseline's cost one bit (the root: within
// position_precision / 32 per axis); without, every part is sent. kNullBuffer when `out` is too
// small (naming the bytes needed); kNotFinite for a non-finite part (naming it);
// kOutOfRange for bad settings; kBadReference for a baseline of another part count or
// without the velocities the settings send.
TENDON_API Result<std::size_t> EncodeNetPose(const NetPose& pose, const NetPose* baseline,
                                             const NetPoseSettings& settings, std::span<std::byte> out);
// Reads a message into `out` (its spans the caller's: parts exactly the message's part
// count; linear and angular empty or that size). A message encoded against a baseline
// needs that baseline (the receiver's decoded copy of it: the same tick modulo 2^16, the
// same part count, velocities when the settings send them): kBadReference otherwise. It
// checks everything before it writes (a refused message writes nothing), so `out` may be
// the baseline itself. Every rotation written is unit, every value finite.
TENDON_API Error DecodeNetPose(std::span<const std::byte> in, const NetPose* baseline,
                               const NetPoseSettings& settings, NetPose* out);
// The part count a message says it carries (to size `out` before decoding); kOutOfRange
// for bytes that are not a pose message of this version.
TENDON_API Result<int32_t> NetPosePartCount(std::span<const std::byte> in);
// Which baseline a message needs: -1 for a full pose (none), else the low 16 bits of the
// baseline's tick, so a receiver holding several decoded baselines passes the one whose
// tick matches. kOutOfRange for bytes that are not a pose message of this version.
TENDON_API Result<int32_t> NetPoseBaselineTick(std::span<const std::byte> in);

// A character's state, as a message of its own (sent when it changes).
struct NetCharacterState {
  // The sender's CharacterState::generation: counts activations. A receiver ignores a
  // message older than the last it applied (ApplyNetCharacterState).
  uint32_t generation = 0;
  bool active = false;    // physics owns the bones
  bool anchored = false;  // the hips follow the animation
  // Going limp (GoLimp): strength easing to 0 over limp_seconds. Only while active.
  bool limp = false;
  float limp_seconds = 0.4f;  // [0, 25.5] s, sent in 0.1 s steps
  float strength = 0;         // [0, 1], sent in 1/255 steps
  // N s on the whole body, applied once by the receiver (zero: none): each component as
  // a 24-bit float (sign, 8-bit exponent, 15-bit mantissa: relative error < 2^-16).
  Vec3 impulse{};
};

// The most bytes a character state message takes (with an impulse): 18.
inline constexpr std::size_t kMaxNetCharacterStateBytes = 18;
// Writes `state` into `out`; returns the bytes written (4 to kMaxNetCharacterStateBytes:
// 13 for an activation with an impulse at a generation under 128). kNullBuffer when too
// small; kOutOfRange / kNotFinite for a value outside its range (naming the field).
TENDON_API Result<std::size_t> EncodeNetCharacterState(const NetCharacterState& state, std::span<std::byte> out);
TENDON_API Error DecodeNetCharacterState(std::span<const std::byte> in, NetCharacterState* out);

}  // namespace tendon
