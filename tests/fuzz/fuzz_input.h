// tests/fuzz/fuzz_input.h: turning a fuzzer's bytes into hostile values, and the checks
// every target makes (a failed check aborts, which libFuzzer reports as a finding).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "tendon/math.h"

namespace tendon::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  bool Bool() { return (Byte() & 1) != 0; }
  // An integer in [lo, hi] (inclusive), from one or four bytes.
  int32_t Int(int32_t lo, int32_t hi) {
    const uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo) + 1;
    const uint32_t raw = span <= 256 ? Byte() : Raw32();
    return static_cast<int32_t>(lo + static_cast<int64_t>(raw % span));
  }
  // Any float at all: NaN, infinities, denormals, huge and tiny values, from four bytes.
  float AnyFloat() {
    const uint32_t bits = Raw32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  // Mostly a plausible value in [lo, hi], sometimes anything: a fuzzer reaches the
  // interesting paths through valid input, and the hostile ones through the rest.
  float Float(float lo, float hi) {
    const uint8_t mode = Byte();
    if (mode < 8) return AnyFloat();
    if (mode < 12) return mode == 8 ? 0.0f : (mode == 9 ? -1e30f : (mode == 10 ? 1e-39f : 3e38f));
    return lo + (hi - lo) * static_cast<float>(Byte()) / 255.0f;
  }
  Vec3 Vec(float lo, float hi) { return Vec3{Float(lo, hi), Float(lo, hi), Float(lo, hi)}; }
  Quat Rotation() {
    if (Byte() < 16) return Quat{AnyFloat(), AnyFloat(), AnyFloat(), AnyFloat()};
    return AxisAngle(NormalizeOr(Vec(-1, 1), Vec3{0, 1, 0}), Float(-6.3f, 6.3f));
  }
  Transform Pose(float extent) { return Transform{Vec(-extent, extent), Rotation(), Byte() < 8 ? Vec(-2, 2) : Vec3{1, 1, 1}}; }

 private:
  uint32_t Raw32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(Byte()) << (8 * i);
    return v;
  }
  const uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// A finding: print what broke and abort (libFuzzer saves the input).
[[noreturn]] inline void Finding(const char* what) {
  std::fprintf(stderr, "tendon fuzz finding: %s\n", what);
  std::abort();
}
inline void Require(bool ok, const char* what) {
  if (!ok) Finding(what);
}
// The promise: nothing non-finite in any host buffer Tendon writes.
inline void RequireFinite(std::span<const Transform> written, const char* what) {
  for (const Transform& t : written) Require(IsFinite(t), what);
}

// The promise of every pose a host skins from (issue 37, section 3): a simulated bone's
// output_world is its output_local composed on its parent's output_world (model_world for a
// root), so the hair a chain moves shows in both. Checked for `bones` (those the avatar
// says its chains write into output_world) where everything is finite, to a millimetre
// plus float rounding of the distances involved.
inline void RequireWorldFromLocal(std::span<const int32_t> bones, std::span<const int32_t> parents,
                                  const Transform& model_world, std::span<const Transform> output_local,
                                  std::span<const Transform> output_world, const char* what) {
  if (output_local.size() != parents.size() || output_world.size() != parents.size()) return;
  for (const int32_t bone : bones) {
    if (bone < 0 || static_cast<std::size_t>(bone) >= parents.size()) continue;
    const auto b = static_cast<std::size_t>(bone);
    const int32_t p = parents[b];
    if (p >= bone) continue;  // not parents-first: another check's finding
    const Transform& parent = p >= 0 ? output_world[static_cast<std::size_t>(p)] : model_world;
    if (!IsFinite(parent) || !IsFinite(output_local[b]) || !IsFinite(output_world[b])) continue;
    const Vec3 expected = Compose(parent, output_local[b]).translation;
    const float tolerance = 1e-3f + 1e-4f * (Length(expected) + Length(output_world[b].translation));
    if (!(Length(expected - output_world[b].translation) <= tolerance)) {
      std::fprintf(stderr, "bone %zu: output_world at %g %g %g, its output_local composed puts it at %g %g %g\n", b,
                   output_world[b].translation.x, output_world[b].translation.y, output_world[b].translation.z,
                   expected.x, expected.y, expected.z);
      Finding(what);
    }
  }
}

}  // namespace tendon::fuzz
