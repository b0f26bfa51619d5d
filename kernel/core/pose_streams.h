// kernel/core/pose_streams.h: the host's pose streams (tendon/pose_layout.h) as bound.
//
// What it does: checks a binding's PoseStreams once (which stream, which field, why),
// keeps a validated copy, and writes one bone into one stream: a local TRS, or a world
// matrix (row-major 3x4, see Affine) turned model-space or into a palette entry.
// What it does NOT do: compute world matrices (the chain writeback kernel does, in lanes;
// the ragdoll writeback from its parts), or decide when a bone is written.
// Threading: EmitLocal / EmitWorld write only the bone's element, so tasks that own
// distinct bones may call them together; RefreshModel is called by one thread per stream.
// Memory: BindPoseStreams allocates the copies; nothing else allocates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tendon/errors.h"
#include "tendon/pose_layout.h"

namespace tendon::detail {

// The most streams one binding may name.
inline constexpr int32_t kMaxPoseStreams = 4;

// An affine matrix, row-major 3x4: m[r * 4 + c], column 3 the translation.
using Affine = std::array<float, 12>;

// Translation * rotation * diag(scale), the matrix of a Transform.
Affine AffineOf(const Transform& t);

struct BoundPoseStream {
  PoseLayout layout = PoseLayout::kLocalTrs;
  MatrixForm form = MatrixForm::kColumnMajor4x4;
  QuatOrder order = QuatOrder::kXyzw;
  unsigned char* base = nullptr;
  int32_t stride = 0;
  std::size_t extent = 0;  // bytes from base to the end of the last element (debug validation)
  int32_t translation_offset = -1, rotation_offset = 0, scale_offset = -1;
  const Transform* model_world = nullptr;
  // The last good model frame and its inverse matrix (identity until there is one);
  // model_is_identity skips the product.
  Transform model{};
  Affine model_inverse{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  bool model_is_identity = true;
  std::vector<int32_t> element;     // per bone; -1: not written
  std::vector<Affine> inverse_bind;  // per bone (kSkinningMatrix), row-major 3x4
  // A chain's ChainBinding::output_world: kLocalTrs fields of each bone's world transform
  // (not its local one), in tendon::Transform's own layout.
  bool world_frames = false;
};

// Checks `streams` for an instance of `bones` bones and copies them into `out`.
// default_element[k] is bone k's element when a stream's element_of_bone is empty. -1 marks
// a bone with no host bone (a chain's virtual tip): it is never written, and what a
// stream's element_of_bone or inverse_bind says for it is neither checked nor kept.
// `field` names the binding's member in messages.
Error BindPoseStreams(std::span<const PoseStream> streams, std::span<const int32_t> default_element,
                      const char* field, std::vector<BoundPoseStream>* out);

// Debug validation (host_buffers.h): every stream's array and model frame is still the host's.
struct HostBufferOwner;
void CheckStreamBuffers(const HostBufferOwner& owner, const std::vector<BoundPoseStream>& streams);

// Reads the stream's model_world, when it has one, and keeps it if it is good.
void RefreshModel(BoundPoseStream& s);

// Writes bone `bone`: its local transform (kLocalTrs), or its world matrix (the others).
// A bone the stream does not write, or a matrix that came out non-finite, is left alone.
void EmitLocal(const BoundPoseStream& s, int32_t bone, const Transform& local);
void EmitWorld(const BoundPoseStream& s, int32_t bone, const float* world);  // 12 floats, row-major 3x4

// A ragdoll part or a chain bone given as a world Transform: kLocalTrs writes it in the
// model's space (ragdolls), the others its matrix.
void EmitWorldTransform(const BoundPoseStream& s, int32_t bone, const Transform& world);

}  // namespace tendon::detail
