// kernel/chains/chain_streams.cpp: a chain's pose streams and host-buffer checks.
//
// What it owns: binding a chain's pose streams (tendon/pose_layout.h: which element each
// bone is written to), writing a chain's bones into them from its local poses (unbind,
// a reset), and the debug validation of every host buffer a chain names.
// What it does NOT do: the per-frame stream writes of awake lanes (the writeback does).
// Threading: the World's thread. Memory: BindStreams allocates (bind time only).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "kernel/chains/chain_kernels.h"
#include "kernel/chains/chain_storage.h"
#include "kernel/chains/chain_system.h"
#include "kernel/core/finite.h"
#include "kernel/core/host_buffers.h"
#include "kernel/core/parallel.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/rotation.h"
#include "kernel/core/validation.h"

namespace tendon::detail {

void ChainSystem::EmitStreams(const Slot& slot, const ChainArchetype& a, int32_t begin, int32_t end,
                              const Transform* locals, const Transform& root_parent) {
  // Parents come before children in lane order, and a strand's nodes are contiguous.
  PoseScratch scratch;
  Transform* world = scratch.world();
  for (int32_t k = begin; k < end; ++k) {
    const int32_t p = a.parent[k];
    world[k - begin] = Compose(p < 0 ? root_parent : world[p - begin], locals[k]);
  }
  for (const detail::BoundPoseStream& stream : slot.streams) {
    for (int32_t k = begin; k < end; ++k) {
      if (slot.Virtual(k)) continue;
      if (stream.world_frames) {
        detail::EmitLocal(stream, k, world[k - begin]);  // output_world: the world TRS itself
      } else if (stream.layout == PoseLayout::kLocalTrs) {
        detail::EmitLocal(stream, k, locals[k]);
      } else {
        const detail::Affine m = detail::AffineOf(world[k - begin]);
        detail::EmitWorld(stream, k, m.data());
      }
    }
  }
}

void ChainSystem::CheckHostBuffers(ChainId only) const {
  auto check = [this](uint32_t index, const Slot& c) {
    const HostBufferOwner owner{"chain", index, handles_.HandleAt(index).generation};
    int32_t span = c.bone_count;  // the transforms Tendon touches in animated_local / output_local
    for (int32_t k : c.bone_map) span = std::max(span, k + 1);
    const std::size_t bytes = static_cast<std::size_t>(span) * sizeof(Transform);
    CheckHostBuffer(owner, "root_parent_world", c.root_parent_world, sizeof(Transform));
    CheckHostBuffer(owner, "animated_local", c.animated, bytes);
    CheckHostBuffer(owner, "output_local", c.output, bytes);
    CheckHostBuffer(owner, "collider_frames", c.collider_frames,
                    static_cast<std::size_t>(c.collider_frame_count) * sizeof(Transform));
    CheckStreamBuffers(owner, c.streams);
  };
  if (only.generation != 0) {
    if (const Slot* c = Find(only)) check(only.index, *c);
    return;
  }
  for (int32_t slot : live_chains_) check(static_cast<uint32_t>(slot), chains_[slot]);
}

Error ChainSystem::BindStreams(const ChainBinding& b, const ChainArchetype& a, std::vector<detail::BoundPoseStream>* out) const {
  // The host names bones in its settings' order; the slot keeps them in lane order.
  std::vector<int32_t> default_element(a.node_count);
  for (int32_t j = 0; j < a.node_count; ++j) {
    const bool is_virtual = a.virtual_tip[a.lane_node[j]] != 0;
    default_element[j] = is_virtual ? -1 : (b.bone_map.empty() ? j : b.bone_map[j]);
  }
  if (Error e = detail::BindPoseStreams(b.pose_streams, default_element, "pose_streams", out); !Ok(e)) return e;
  for (detail::BoundPoseStream& stream : *out) {
    std::vector<int32_t> element(a.node_count);
    std::vector<detail::Affine> inverse_bind(stream.inverse_bind.empty() ? 0 : a.node_count);
    for (int32_t k = 0; k < a.node_count; ++k) {
      const int32_t j = a.settings_node[k];
      element[k] = stream.element[j];  // -1 for a virtual tip (BindPoseStreams)
      if (!inverse_bind.empty()) inverse_bind[k] = stream.inverse_bind[j];
    }
    stream.element = std::move(element);
    stream.inverse_bind = std::move(inverse_bind);
  }
  if (!b.output_world.empty()) {
    // output_world rides as one more stream (it is not one of the host's 4): a packed
    // tendon::Transform per element, at output_local's indices, in world space.
    const int32_t needed = b.bone_map.empty() ? a.node_count : 0;
    int32_t highest = -1;
    for (int32_t k = 0; k < a.node_count; ++k)
      if (default_element[k] >= 0) highest = std::max(highest, default_element[k]);
    if (b.output_world.data() == nullptr ||
        static_cast<int64_t>(b.output_world.size()) < std::max<int64_t>({needed, highest + 1, 1}))
      return Fail(ErrorCode::kNullBuffer, -1, "output_world",
                  "output_world needs " + std::to_string(std::max(needed, highest + 1)) + " transforms, got " +
                      std::to_string(b.output_world.size()));
    detail::BoundPoseStream world;
    world.world_frames = true;
    world.layout = PoseLayout::kLocalTrs;
    world.base = reinterpret_cast<unsigned char*>(b.output_world.data());
    world.stride = static_cast<int32_t>(sizeof(Transform));
    world.extent = b.output_world.size() * sizeof(Transform);
    world.translation_offset = static_cast<int32_t>(offsetof(Transform, translation));
    world.rotation_offset = static_cast<int32_t>(offsetof(Transform, rotation));
    world.scale_offset = static_cast<int32_t>(offsetof(Transform, scale));
    world.element.resize(static_cast<std::size_t>(a.node_count));
    for (int32_t k = 0; k < a.node_count; ++k) world.element[k] = default_element[a.settings_node[k]];
    out->push_back(std::move(world));
  }
  return {};
}

void ChainSystem::SetStreams(Slot& slot, std::vector<detail::BoundPoseStream> streams) {
  bool matrices = false, frames = false;
  for (const detail::BoundPoseStream& s : streams) {
    matrices = matrices || s.layout != PoseLayout::kLocalTrs;
    frames = frames || s.world_frames;
  }
  groups_[slot.group].matrix_stream_chains += (matrices ? 1 : 0) - (slot.matrix_streams ? 1 : 0);
  groups_[slot.group].world_frame_chains += (frames ? 1 : 0) - (slot.world_frame_stream ? 1 : 0);
  slot.streams = std::move(streams);
  slot.matrix_streams = matrices;
  slot.world_frame_stream = frames;
  groups_[slot.group].lists_stale = true;  // a block with streams also emits them lane by lane
}

}  // namespace tendon::detail
