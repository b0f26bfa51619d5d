// kernel/core/pose_streams.cpp: checking, keeping and writing the host's pose streams.
#include "kernel/core/pose_streams.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "kernel/core/host_buffers.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

Affine AffineOf(const Transform& t) {
  // The rotation matrix of a unit quaternion (Shoemake 1985), columns scaled by the scale.
  const Quat& q = t.rotation;
  const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  const Vec3& s = t.scale;
  return {(1 - 2 * (yy + zz)) * s.x, 2 * (xy - wz) * s.y,       2 * (xz + wy) * s.z,       t.translation.x,
          2 * (xy + wz) * s.x,       (1 - 2 * (xx + zz)) * s.y, 2 * (yz - wx) * s.z,       t.translation.y,
          2 * (xz - wy) * s.x,       2 * (yz + wx) * s.y,       (1 - 2 * (xx + yy)) * s.z, t.translation.z};
}

namespace {

bool FiniteAffine(const Affine& m) {
  float probe = 0;
  for (float v : m) probe += v * 0.0f;
  return probe == 0.0f;
}

// inverse(T R S) = S^-1 R^T (x - t); the rotation normalised first (a good model's is only
// within 1e-3 of unit, and R^T is R's inverse only for a unit one).
Affine InverseAffineOf(const Transform& t) {
  const Affine m = AffineOf(Transform{{}, Normalize(t.rotation), {1, 1, 1}});
  const float inv_s[3] = {1.0f / t.scale.x, 1.0f / t.scale.y, 1.0f / t.scale.z};
  Affine inv;
  for (int32_t r = 0; r < 3; ++r) {
    for (int32_t c = 0; c < 3; ++c) inv[r * 4 + c] = m[c * 4 + r] * inv_s[r];
    inv[r * 4 + 3] = -(inv[r * 4] * t.translation.x + inv[r * 4 + 1] * t.translation.y +
                       inv[r * 4 + 2] * t.translation.z);
  }
  return inv;
}

bool GoodModel(const Transform& t) {
  return IsFinite(t) && std::fabs(t.scale.x) >= 1e-6f && std::fabs(t.scale.y) >= 1e-6f &&
         std::fabs(t.scale.z) >= 1e-6f && std::fabs(std::sqrt(Dot(t.rotation, t.rotation)) - 1.0f) <= 1e-3f;
}

int32_t PackedStride(const PoseStream& s) {
  if (s.layout != PoseLayout::kLocalTrs) return s.matrix_form == MatrixForm::kRowMajor3x4 ? 48 : 64;
  int32_t end = s.rotation_offset + 16;
  if (s.translation_offset >= 0) end = std::max(end, s.translation_offset + 12);
  if (s.scale_offset >= 0) end = std::max(end, s.scale_offset + 12);
  return end;
}

}  // namespace

Error BindPoseStreams(std::span<const PoseStream> streams, std::span<const int32_t> default_element,
                      const char* field, std::vector<BoundPoseStream>* out) {
  out->clear();
  if (streams.empty()) return {};
  const std::string base_field = field;
  if (streams.data() == nullptr)
    return Fail(ErrorCode::kNullBuffer, -1, base_field, base_field + " is null with a non-zero size");
  if (static_cast<int64_t>(streams.size()) > kMaxPoseStreams)
    return Fail(ErrorCode::kCapacity, -1, base_field,
                base_field + " has " + std::to_string(streams.size()) + " streams; at most " +
                    std::to_string(kMaxPoseStreams));
  const int32_t bones = static_cast<int32_t>(default_element.size());
  std::vector<BoundPoseStream> bound(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const PoseStream& s = streams[i];
    const auto item = static_cast<int32_t>(i);
    const std::string f = base_field + "[" + std::to_string(i) + "].";
    const auto layout = static_cast<int32_t>(s.layout);
    if (layout < 0 || layout > static_cast<int32_t>(PoseLayout::kSkinningMatrix))
      return Fail(ErrorCode::kOutOfRange, item, f + "layout", f + "layout = " + std::to_string(layout) + " is not a PoseLayout");
    const auto form = static_cast<int32_t>(s.matrix_form);
    if (form < 0 || form > static_cast<int32_t>(MatrixForm::kRowMajor3x4))
      return Fail(ErrorCode::kOutOfRange, item, f + "matrix_form",
                  f + "matrix_form = " + std::to_string(form) + " is not a MatrixForm");
    const auto order = static_cast<int32_t>(s.rotation_order);
    if (order < 0 || order > static_cast<int32_t>(QuatOrder::kWxyz))
      return Fail(ErrorCode::kOutOfRange, item, f + "rotation_order",
                  f + "rotation_order = " + std::to_string(order) + " is not a QuatOrder");
    if (s.base == nullptr) return Fail(ErrorCode::kNullBuffer, item, f + "base", f + "base is null");
    if (s.element_count <= 0)
      return Fail(ErrorCode::kNullBuffer, item, f + "element_count",
                  f + "element_count must be positive, got " + std::to_string(s.element_count));
    if (s.layout == PoseLayout::kLocalTrs) {
      // Each field inside the element, none overlapping another.
      struct Field {
        const char* name;
        int32_t offset, bytes;
      };
      const Field fields[3] = {{"translation_offset", s.translation_offset, 12},
                               {"rotation_offset", s.rotation_offset, 16},
                               {"scale_offset", s.scale_offset, 12}};
      if (s.rotation_offset < 0)
        return Fail(ErrorCode::kOutOfRange, item, f + "rotation_offset",
                    f + "rotation_offset must be >= 0 (the rotation is always written)");
      for (int32_t a = 0; a < 3; ++a) {
        if (fields[a].offset < -1 || fields[a].offset > (1 << 20))
          return Fail(ErrorCode::kOutOfRange, item, f + fields[a].name,
                      f + fields[a].name + " = " + std::to_string(fields[a].offset) + " is outside [-1, 1048576]");
        for (int32_t b = 0; b < a; ++b) {
          if (fields[a].offset < 0 || fields[b].offset < 0) continue;
          if (fields[a].offset < fields[b].offset + fields[b].bytes && fields[b].offset < fields[a].offset + fields[a].bytes)
            return Fail(ErrorCode::kOutOfRange, item, f + fields[a].name,
                        f + fields[a].name + " overlaps " + fields[b].name);
        }
      }
    }
    const int32_t packed = PackedStride(s);
    const int32_t stride = s.byte_stride == 0 ? packed : s.byte_stride;
    if (stride < packed || stride > (1 << 20))
      return Fail(ErrorCode::kOutOfRange, item, f + "byte_stride",
                  f + "byte_stride = " + std::to_string(s.byte_stride) + " does not hold the element's " +
                      std::to_string(packed) + " bytes (or exceeds 1 MiB)");
    BoundPoseStream& b = bound[i];
    b.layout = s.layout;
    b.form = s.matrix_form;
    b.order = s.rotation_order;
    b.base = static_cast<unsigned char*>(s.base);
    b.stride = stride;
    b.translation_offset = s.translation_offset;
    b.rotation_offset = s.rotation_offset;
    b.scale_offset = s.scale_offset;
    b.model_world = s.model_world;
    // Elements: distinct, inside the array.
    if (!s.element_of_bone.empty() && static_cast<int32_t>(s.element_of_bone.size()) != bones)
      return Fail(ErrorCode::kBadReference, item, f + "element_of_bone",
                  f + "element_of_bone has " + std::to_string(s.element_of_bone.size()) + " entries; the instance has " +
                      std::to_string(bones) + " bones");
    if (!s.element_of_bone.empty() && s.element_of_bone.data() == nullptr)
      return Fail(ErrorCode::kNullBuffer, item, f + "element_of_bone", f + "element_of_bone is null");
    b.element.resize(static_cast<std::size_t>(bones));
    std::vector<std::pair<int32_t, int32_t>> written;  // (element, bone), sorted to find repeats
    written.reserve(static_cast<std::size_t>(bones));
    for (int32_t k = 0; k < bones; ++k) {
      if (default_element[k] < 0) {  // no host bone
        b.element[k] = -1;
        continue;
      }
      const int32_t e = s.element_of_bone.empty() ? default_element[k] : s.element_of_bone[k];
      if (e < -1 || e >= s.element_count)
        return Fail(ErrorCode::kBadReference, item, f + "element_of_bone",
                    "bone " + std::to_string(k) + " goes to element " + std::to_string(e) + ", outside [-1, " +
                        std::to_string(s.element_count) + ")");
      if (e >= 0) written.emplace_back(e, k);
      b.element[k] = e;
    }
    std::sort(written.begin(), written.end());
    for (std::size_t w = 1; w < written.size(); ++w) {
      if (written[w].first == written[w - 1].first)
        return Fail(ErrorCode::kBadReference, item, f + "element_of_bone",
                    "bones " + std::to_string(written[w - 1].second) + " and " + std::to_string(written[w].second) +
                        " both go to element " + std::to_string(written[w].first));
    }
    if (s.layout == PoseLayout::kSkinningMatrix) {
      if (static_cast<int64_t>(s.inverse_bind.size()) != 16 * static_cast<int64_t>(bones) ||
          (bones > 0 && s.inverse_bind.data() == nullptr))
        return Fail(ErrorCode::kNullBuffer, item, f + "inverse_bind",
                    f + "inverse_bind needs 16 floats per bone (" + std::to_string(16 * bones) + "), got " +
                        std::to_string(s.inverse_bind.size()));
      b.inverse_bind.resize(static_cast<std::size_t>(bones));
      for (int32_t k = 0; k < bones; ++k) {
        if (default_element[k] < 0) continue;  // no host bone: never read
        const float* m = s.inverse_bind.data() + 16 * k;  // column-major: m[c * 4 + r]
        for (int32_t v = 0; v < 16; ++v) {
          if (!std::isfinite(m[v]))
            return Fail(ErrorCode::kNotFinite, item, f + "inverse_bind",
                        "bone " + std::to_string(k) + "'s inverse bind matrix is not finite");
        }
        if (m[3] != 0.0f || m[7] != 0.0f || m[11] != 0.0f || m[15] != 1.0f)
          return Fail(ErrorCode::kOutOfRange, item, f + "inverse_bind",
                      "bone " + std::to_string(k) + "'s inverse bind matrix is not affine (last row must be 0 0 0 1)");
        for (int32_t r = 0; r < 3; ++r) {
          for (int32_t c = 0; c < 4; ++c) b.inverse_bind[k][r * 4 + c] = m[c * 4 + r];
        }
      }
    } else if (!s.inverse_bind.empty()) {
      return Fail(ErrorCode::kOutOfRange, item, f + "inverse_bind",
                  f + "inverse_bind is only read by PoseLayout::kSkinningMatrix");
    }
    // The highest byte written must be addressable: checked by arithmetic, not by touching.
    const int64_t extent = static_cast<int64_t>(s.element_count - 1) * stride + packed;
    if (extent > (int64_t{1} << 40))
      return Fail(ErrorCode::kOutOfRange, item, f + "element_count", f + "element_count * byte_stride is too large");
    b.extent = static_cast<std::size_t>(extent);
    RefreshModel(b);
  }
  *out = std::move(bound);
  return {};
}

void CheckStreamBuffers(const HostBufferOwner& owner, const std::vector<BoundPoseStream>& streams) {
  for (const BoundPoseStream& s : streams) {
    CheckHostBuffer(owner, "pose_streams.base", s.base, s.extent);
    if (s.model_world != nullptr) CheckHostBuffer(owner, "pose_streams.model_world", s.model_world, sizeof(Transform));
  }
}

void RefreshModel(BoundPoseStream& s) {
  if (s.model_world == nullptr) return;
  const Transform t = *s.model_world;
  if (!s.model_is_identity && t == s.model) return;  // unchanged: its inverse is kept
  if (!GoodModel(t)) return;
  const Affine inverse = InverseAffineOf(t);
  if (!FiniteAffine(inverse)) return;
  s.model = t;
  s.model_inverse = inverse;
  s.model_is_identity = false;
}

namespace {

void StoreQuat(unsigned char* at, const Quat& q, QuatOrder order) {
  const float xyzw[4] = {q.x, q.y, q.z, q.w};
  const int32_t first = order == QuatOrder::kXyzw ? 0 : 1;  // wxyz: w first, then x, y, z
  for (int32_t i = 0; i < 4; ++i) std::memcpy(at + 4 * ((first + i) % 4), xyzw + i, 4);
}

// Float by float: the transform was usually just written field by field, and a wider load
// over narrower stores cannot be forwarded (a stall of about 15 cycles per field).
void StoreFloats(unsigned char* at, const float* values, int32_t count) {
  for (int32_t i = 0; i < count; ++i) std::memcpy(at + 4 * i, values + i, 4);
}

void StoreTrs(const BoundPoseStream& s, unsigned char* element, const Transform& t) {
  if (s.translation_offset >= 0) StoreFloats(element + s.translation_offset, &t.translation.x, 3);
  StoreQuat(element + s.rotation_offset, t.rotation, s.order);
  if (s.scale_offset >= 0) StoreFloats(element + s.scale_offset, &t.scale.x, 3);
}

}  // namespace

void EmitLocal(const BoundPoseStream& s, int32_t bone, const Transform& local) {
  const int32_t e = s.element[bone];
  if (e < 0 || !IsFinite(local)) return;  // a host's own NaN (an aliased buffer) is not copied on
  StoreTrs(s, s.base + static_cast<std::ptrdiff_t>(e) * s.stride, local);
}

namespace {

// m = a * b for affine row-major 3x4 matrices, in loops over the four columns that
// compilers vectorize. Each element is stored once: adding a's translation into m after a
// vector store made a scalar store that the next 16-byte load could not forward from
// (about 15 cycles each, measured as half of a matrix stream's cost).
inline void AffineProductInto(const float* a, const float* b, float* m) {
  for (int32_t r = 0; r < 3; ++r) {
    const float a0 = a[r * 4], a1 = a[r * 4 + 1], a2 = a[r * 4 + 2];
    const float translation[4] = {0.0f, 0.0f, 0.0f, a[r * 4 + 3]};
    for (int32_t c = 0; c < 4; ++c) m[r * 4 + c] = a0 * b[c] + a1 * b[4 + c] + a2 * b[8 + c] + translation[c];
  }
}

}  // namespace

void EmitWorld(const BoundPoseStream& s, int32_t bone, const float* world) {
  const int32_t e = s.element[bone];
  if (e < 0) return;
  alignas(16) float in_model[12], palette[12];
  const float* m = world;
  if (!s.model_is_identity) {
    AffineProductInto(s.model_inverse.data(), m, in_model);
    m = in_model;
  }
  if (s.layout == PoseLayout::kSkinningMatrix) {
    AffineProductInto(m, s.inverse_bind[bone].data(), palette);
    m = palette;
  }
  // x * 0 is 0 for finite x, NaN otherwise; summed by column, then across, so the adds do
  // not wait on each other (a chain of 12 was a third of a matrix stream's cost).
  float sums[4];
  for (int32_t c = 0; c < 4; ++c) sums[c] = m[c] * 0.0f + m[4 + c] * 0.0f + m[8 + c] * 0.0f;
  if ((sums[0] + sums[1]) + (sums[2] + sums[3]) != 0.0f) return;
  unsigned char* element = s.base + static_cast<std::ptrdiff_t>(e) * s.stride;
  if (s.form == MatrixForm::kRowMajor3x4) {
    std::memcpy(element, m, sizeof(float) * 12);
  } else {
    // Column by column, each float stored where it goes (no staging array to reload).
    constexpr float kLastRow[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    for (int32_t c = 0; c < 4; ++c) {
      unsigned char* column = element + 16 * c;
      std::memcpy(column, m + c, 4);
      std::memcpy(column + 4, m + 4 + c, 4);
      std::memcpy(column + 8, m + 8 + c, 4);
      std::memcpy(column + 12, kLastRow + c, 4);
    }
  }
}

void EmitWorldTransform(const BoundPoseStream& s, int32_t bone, const Transform& world) {
  if (s.layout == PoseLayout::kLocalTrs) {
    const Transform in_model = s.model_is_identity ? world : Relative(s.model, world);
    if (IsFinite(in_model)) EmitLocal(s, bone, in_model);
    return;
  }
  const Affine m = AffineOf(world);
  EmitWorld(s, bone, m.data());
}

}  // namespace tendon::detail
