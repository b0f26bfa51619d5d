// ports/c/c_pose_streams.cpp: the C ABI's pose streams (tendon/pose_layout.h), which chain,
// ragdoll and character bindings all name: their defaults, their checks and their
// conversion.
//
// TendonPoseStream mirrors tendon::PoseStream through the table below. Its enums cross as
// the ints the host stored: the bind refuses an out-of-range one naming pose_streams[i]
// and the field, so none is checked here.
// What it does NOT do: bind anything (the binding's domain does), or copy the host's arrays
// (the World copies the streams at bind).
// Threading: none of its own. Memory: a binding's converted streams live in a vector the
// caller keeps until the bind returns.
#include <span>
#include <vector>

#include "ports/c/c_port.h"

static_assert(static_cast<int>(tendon::PoseLayout::kSkinningMatrix) == TENDON_POSE_SKINNING_MATRIX &&
                  static_cast<int>(tendon::QuatOrder::kWxyz) == TENDON_QUAT_WXYZ &&
                  static_cast<int>(tendon::MatrixForm::kRowMajor3x4) == TENDON_MATRIX_ROW_MAJOR_3X4,
              "the C pose stream enums mirror tendon/pose_layout.h");

namespace tendon::ports::capi {

template <>
struct MirrorTable<TendonPoseStream, PoseStream> : TableOf<TendonPoseStream, PoseStream> {
  using Rows = RowList<Field<&C::layout, &P::layout>, Field<&C::base, &P::base>,
                       Field<&C::element_count, &P::element_count>, Field<&C::byte_stride, &P::byte_stride>,
                       Field<&C::translation_offset, &P::translation_offset>,
                       Field<&C::rotation_offset, &P::rotation_offset>, Field<&C::scale_offset, &P::scale_offset>,
                       Field<&C::rotation_order, &P::rotation_order>, Field<&C::matrix_form, &P::matrix_form>,
                       Field<&C::model_world, &P::model_world>,
                       SpanOf<&C::element_of_bone, &C::element_of_bone_count, &P::element_of_bone>,
                       SpanOf<&C::inverse_bind, &C::inverse_bind_count, &P::inverse_bind>>;
};
TENDON_C_CHECK_MIRROR(TendonPoseStream, tendon::PoseStream);

std::span<const PoseStream> PoseStreamsToCpp(const TendonPoseStream* c, int32_t count, std::vector<PoseStream>* storage) {
  storage->clear();
  for (int32_t i = 0; c != nullptr && i < count; ++i) {
    PoseStream p;
    MirrorIn(c[i], p);
    storage->push_back(p);
  }
  return *storage;
}
TendonResult CheckPoseStreams(TendonWorld* w, const TendonPoseStream* c, int32_t count) {
  if (BadArray(c, count)) return BadArrayError(w, "pose_streams");
  for (int32_t i = 0; c != nullptr && i < count; ++i) {
    if (BadArray(c[i].element_of_bone, c[i].element_of_bone_count)) return BadArrayError(w, "pose_streams.element_of_bone");
    if (BadArray(c[i].inverse_bind, c[i].inverse_bind_count)) return BadArrayError(w, "pose_streams.inverse_bind");
  }
  return TENDON_OK;
}

}  // namespace tendon::ports::capi

using namespace tendon::ports::capi;

extern "C" {

void tendon_pose_stream_defaults(TendonPoseStream* c) {
  if (c == nullptr) return;
  *c = TendonPoseStream{};
  MirrorOut(tendon::PoseStream{}, *c);
}

}  // extern "C"
