// tendon/pose_layout.h: poses written in the layouts engines consume.
//
// What it does: a PoseStream, named in a ChainBinding or RagdollBinding, asks Step to
// write every simulated bone (a chain's bones, a ragdoll's parts) into one more host
// array, in the host's own layout, inside the writeback that fills output_local /
// output_parts:
//   - kLocalTrs: a float3 translation, a quaternion (xyzw or wxyz) and optionally a float3
//     scale at byte offsets inside the host's bone struct (Unity, Unreal and most engines
//     keep local TRS). Chains write their bones' local transforms (those of output_local);
//     ragdolls write their parts' frames in model space.
//   - kModelMatrix: each bone's model-space matrix, model = inverse(model_world) * world,
//     as a column-major 4x4 (three.js, glTF) or a row-major 3x4 (D3D-style constants).
//   - kSkinningMatrix: the skinning palette, model * inverse bind, in either matrix form:
//     what the GPU reads, so an engine can skip its own matrix pass for simulated bones
//     (the joint remap is element_of_bone, as in ozz-animation's skinning sample).
// A matrix of a Transform is translation * rotation * diag(scale); a chain bone's world
// transform is root_parent_world composed with the written locals (tendon::Compose).
// Chains compute their bones' world matrices in SIMD lanes inside the writeback kernel;
// the per-bone work outside the lanes is one affine product per bone and stream.
//
// What it does NOT do: write bones that Step does not write (a chain that is culled,
// budgeted out or asleep keeps its stream's old contents, exactly as output_local does),
// or blend with animation. A stream is written when output_local / output_parts is: every
// simulated frame, on a reset (from the pose written instead), and by UnbindChain (the
// animated pose handed back).
//
// Threading: written by Step's writeback tasks; a host must not read a stream while Step
// runs. Memory: the World copies a binding's streams (and their element maps and inverse
// binds) at bind time; the host arrays must stay valid until the instance is unbound.
#pragma once

#include <cstdint>
#include <span>

#include "tendon/math.h"

namespace tendon {

enum class PoseLayout : int32_t {
  kLocalTrs = 0,        // translation, rotation, optional scale at byte offsets
  kModelMatrix = 1,     // inverse(model_world) * world, in matrix_form
  kSkinningMatrix = 2,  // kModelMatrix * inverse_bind, in matrix_form
};

enum class QuatOrder : int32_t {
  kXyzw = 0,  // x, y, z, w: Unity, three.js, glTF, Tendon
  kWxyz = 1,  // w, x, y, z: Eigen's coefficients order in some engines, GLM's constructor
};

enum class MatrixForm : int32_t {
  kColumnMajor4x4 = 0,  // 16 floats, column by column, last row 0 0 0 1 (OpenGL, glTF, three.js)
  kRowMajor3x4 = 1,     // 12 floats, row by row, the affine 3x4 (D3D-style skinning constants)
};

// One more place a binding's poses are written. Defaults: a packed local TRS array of
// {float3 translation; float4 rotation xyzw}, element k for bone k.
struct PoseStream {
  PoseLayout layout = PoseLayout::kLocalTrs;
  // Element 0 of the host's array (any alignment: fields are written with memcpy).
  void* base = nullptr;
  // Elements in the host's array; every element written is checked against it at bind.
  int32_t element_count = 0;
  // Bytes from one element to the next. 0: packed (kLocalTrs: the end of its last field;
  // matrices: 64 bytes for kColumnMajor4x4, 48 for kRowMajor3x4). Must hold the fields.
  int32_t byte_stride = 0;
  // kLocalTrs: byte offsets of the fields inside an element; -1 leaves that field alone
  // (the rotation is always written). The fields must not overlap.
  int32_t translation_offset = 0;  // float3, m
  int32_t rotation_offset = 12;    // float4, unit quaternion in rotation_order
  int32_t scale_offset = -1;       // float3
  QuatOrder rotation_order = QuatOrder::kXyzw;
  // kModelMatrix, kSkinningMatrix: the matrices' layout.
  MatrixForm matrix_form = MatrixForm::kColumnMajor4x4;
  // The model's world frame, read every Step (it may move): matrices (and a ragdoll's
  // kLocalTrs) are written in its space. Null: world space. A frame that is not finite or
  // has a scale component of magnitude under 1e-6 is not used: the stream keeps the last
  // good one (the identity until there is one).
  const Transform* model_world = nullptr;
  // The element each bone is written to, one entry per bone (the archetype's bones in
  // order, virtual tips included, or the ragdoll's parts); -1: the bone is not written.
  // Empty: the bone's own index (a chain's bone_map entry when it has a bone map).
  // Written elements must be distinct and inside element_count.
  std::span<const int32_t> element_of_bone{};
  // kSkinningMatrix only (required there, refused elsewhere): each bone's inverse bind
  // matrix, 16 floats per bone, column-major 4x4 as glTF stores skins' inverseBindMatrices;
  // finite, with a last row of 0 0 0 1.
  std::span<const float> inverse_bind{};
};

}  // namespace tendon
