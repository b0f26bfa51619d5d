// tests/fuzz/fuzz_c_abi.cpp: the C ABI (tendon_c.h) as a C host that makes every mistake C
// allows: null worlds, null settings and null outputs, handles that are null, stale (an
// unbound instance's), forged (any 64 bits) or of another kind, counts that disagree with
// the archetype (each buffer really as long as the count claims: a host that lies about a
// length is outside any contract), enum values that are not in the enum, BeginStep /
// FinishStep out of order with calls between them, and a VRM kind from arbitrary bytes.
// Every call must return a TendonResult of the header's list with a message when it fails,
// and nothing written into a host buffer may be non-finite.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "tendon/tendon_c.h"

namespace {

using tendon::fuzz::FuzzInput;
using tendon::fuzz::Require;

bool Known(TendonResult r) {
  const int v = static_cast<int>(r);
  return (v >= 0 && v <= 16) || (v >= 100 && v <= 102);
}

// A failed call names a result and leaves a message.
void Check(TendonResult r, const char* what) {
  Require(Known(r), what);
  if (r != TENDON_OK) Require(tendon_last_error() != nullptr && tendon_last_error()[0] != '\0', what);
}

bool Finite(const TendonTransform& t) {
  const float v[] = {t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y,
                     t.rotation.z,    t.rotation.w,    t.scale.x,       t.scale.y,       t.scale.z};
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

void RequireFinite(const std::vector<TendonTransform>& buffer, const char* what) {
  for (const TendonTransform& t : buffer) Require(Finite(t), what);
}

// A handle the host might pass: live, null, stale, of another instance, or forged.
uint64_t Handle(FuzzInput& in, uint64_t live, uint64_t other) {
  switch (in.Byte() % 6) {
    case 0: return 0;
    case 1: return live + (uint64_t{1} << 32);  // the next generation of the slot: stale
    case 2: return other;                       // another kind's handle
    case 3: {
      uint64_t forged = 0;
      for (int k = 0; k < 8; ++k) forged |= static_cast<uint64_t>(in.Byte()) << (8 * k);
      return forged;
    }
    default: return live;
  }
}

constexpr int32_t kBones = 4;

struct Host {
  TendonWorld* world = nullptr;
  TendonChainArchetypeId strand = 0;
  TendonTransform root = tendon_transform_identity();
  std::vector<TendonTransform> animated, output;
  std::vector<TendonTransform> streamed = std::vector<TendonTransform>(kBones);
  TendonChainId chain = 0;
  TendonRagdollArchetypeId limb = 0;
  std::vector<TendonTransform> limb_out = std::vector<TendonTransform>(2);
  TendonRagdollId ragdoll = 0;
  TendonTransform joint = tendon_transform_identity(), offset = tendon_transform_identity();
  TendonPendulumId pendulum = 0;

  // A chain binding whose counts the input may bend (each buffer as long as claimed).
  TendonResult BindChain(FuzzInput& in, std::vector<TendonTransform>& anim, std::vector<TendonTransform>& out,
                         TendonChainId* id) {
    anim.assign(static_cast<std::size_t>(in.Byte() < 200 ? kBones : in.Int(0, kBones + 2)), tendon_transform_identity());
    for (std::size_t k = 1; k < anim.size(); ++k) anim[k].translation.x = 0.1f;
    out = anim;
    TendonChainBinding b{};
    b.archetype = in.Byte() < 220 ? strand : Handle(in, strand, limb);
    b.root_parent_world = in.Byte() < 8 ? nullptr : &root;
    b.animated_local = anim.empty() ? nullptr : anim.data();
    b.animated_count = static_cast<int32_t>(anim.size());
    b.output_local = out.empty() ? nullptr : out.data();
    b.output_count = static_cast<int32_t>(out.size());
    std::vector<int32_t> map;
    if (in.Byte() < 32) {
      map.resize(static_cast<std::size_t>(in.Int(0, kBones + 1)));
      for (int32_t& m : map) m = in.Int(-2, kBones + 1);
      b.bone_map = map.empty() ? nullptr : map.data();
      b.bone_map_count = static_cast<int32_t>(map.size());
    }
    TendonPoseStream stream;
    tendon_pose_stream_defaults(&stream);
    if (in.Byte() < 64) {
      stream.base = streamed.data();  // 40 bytes a bone: a packed TRS of 28 fits
      stream.element_count = in.Int(-1, kBones);
      stream.byte_stride = in.Byte() < 200 ? static_cast<int32_t>(sizeof(TendonTransform)) : in.Int(-4, 44);
      stream.layout = static_cast<TendonPoseLayout>(in.Int(0, 3));
      stream.rotation_order = static_cast<TendonQuatOrder>(in.Int(0, 2));
      b.pose_streams = &stream;
      b.pose_stream_count = in.Byte() < 240 ? 1 : in.Int(-1, 5) > 1 ? 0 : 1;
    }
    if (in.Byte() < 8) return tendon_bind_chain(world, nullptr, id);
    return tendon_bind_chain(world, &b, in.Byte() < 8 ? nullptr : id);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  Host h;
  TendonWorldSettings ws;
  tendon_world_settings_defaults(&ws);
  if (in.Byte() < 32) {
    ws.max_substeps = in.Int(-1, 65);
    ws.fixed_hz = in.Float(0, 2000);
    ws.frame_budget_ms = in.Float(-1, 4);
    ws.isa = static_cast<TendonIsa>(in.Int(0, 9));
    ws.render_interpolation = in.Int(-1, 2);
  }
  Check(tendon_world_create(nullptr, &h.world), "create from null settings");
  Require(h.world == nullptr, "a refused create leaves *out null");
  Check(tendon_world_create(&ws, nullptr), "create into null");
  const TendonResult created = tendon_world_create(&ws, &h.world);
  Check(created, "create");
  if (created != TENDON_OK) {
    tendon_world_settings_defaults(&ws);
    Require(tendon_world_create(&ws, &h.world) == TENDON_OK, "the default world");
  }
  // Every call with a null world is refused.
  tendon_world_step(nullptr, 1.0f / 60.0f, nullptr);
  Check(tendon_world_begin_step(nullptr, 0.01f), "begin_step(null)");
  tendon_world_finish_step(nullptr, nullptr);
  Require(tendon_world_unbind_all(nullptr) == 0, "unbind_all(null)");
  Check(tendon_unbind_chain(nullptr, 1), "unbind_chain(null)");
  // tendon_result_name takes any int a C caller passes.
  Require(tendon_result_name(static_cast<TendonResult>(in.Int(-1000, 1000))) != nullptr, "a result's name");

  const float plane_normal[3] = {0, 1, 0};
  const float plane_offset = 0;
  TendonStaticWorldSettings sw{};
  sw.plane_normals = reinterpret_cast<const TendonVec3*>(plane_normal);
  sw.plane_offsets = &plane_offset;
  sw.plane_count = 1;
  Check(tendon_build_static_world(h.world, &sw), "static world");
  std::vector<TendonChainBone> bones(kBones);
  for (int32_t k = 0; k < kBones; ++k) {
    bones[k].parent = k - 1;
    bones[k].rest_local = tendon_transform_identity();
    bones[k].rest_local.translation.x = k == 0 ? 0.0f : 0.1f;
  }
  TendonChainArchetypeSettings cs;
  tendon_chain_archetype_settings_defaults(&cs);
  cs.bones = bones.data();
  cs.bone_count = kBones;
  Require(tendon_build_chain_archetype(h.world, &cs, &h.strand) == TENDON_OK, "the strand builds");
  std::vector<TendonPartSettings> parts(2);
  for (int j = 0; j < 2; ++j) {
    tendon_part_settings_defaults(&parts[j]);
    parts[j].parent = j - 1;
    parts[j].pose.translation.y = 1.0f - 0.3f * static_cast<float>(j);
    parts[j].joint_anchor.y = 1.15f - 0.3f * static_cast<float>(j);
  }
  TendonRagdollSettings rs;
  tendon_ragdoll_settings_defaults(&rs);
  rs.parts = parts.data();
  rs.part_count = 2;
  Require(tendon_build_ragdoll_archetype(h.world, &rs, &h.limb) == TENDON_OK, "the limb builds");
  Check(h.BindChain(in, h.animated, h.output, &h.chain), "bind_chain");
  TendonRagdollBinding rb;
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = h.limb;
  rb.placement = tendon_transform_identity();
  rb.output_parts = h.limb_out.data();
  rb.output_part_count = static_cast<int32_t>(h.limb_out.size());
  Check(tendon_bind_ragdoll(h.world, &rb, &h.ragdoll), "bind_ragdoll");
  TendonPendulumSettings ps;
  tendon_pendulum_settings_defaults(&ps);
  h.offset.translation.y = -0.2f;
  Check(tendon_bind_pendulum(h.world, &ps, &h.joint, &h.offset, &h.pendulum), "bind_pendulum");

  std::vector<TendonTransform> spare_anim, spare_out;
  TendonFrameStats stats;
  bool in_flight = false;
  for (int op = 0; op < 48 && !in.empty(); ++op) {
    TendonWorld* w = in.Byte() < 4 ? nullptr : h.world;
    switch (in.Byte() % 16) {
      case 0: tendon_world_step(w, in.Float(0, 0.1f), in.Bool() ? &stats : nullptr); break;
      case 1: {
        const TendonResult r = tendon_world_begin_step(w, in.Float(0, 0.1f));
        Check(r, "begin_step");
        if (w != nullptr && in_flight) Require(r == TENDON_ERROR_REENTRANT, "begin_step with a frame in flight");
        if (w != nullptr && r == TENDON_OK) in_flight = true;
        break;
      }
      case 2:
        tendon_world_finish_step(w, in.Bool() ? &stats : nullptr);
        if (w != nullptr) in_flight = false;
        break;
      case 3: {
        // A second chain on buffers whose counts the input bends; unbound again at once.
        TendonChainId id = 0;
        const TendonResult r = h.BindChain(in, spare_anim, spare_out, &id);
        Check(r, "bind_chain (spare)");
        if (in_flight) Require(r != TENDON_OK, "bind_chain with a frame in flight");
        if (r == TENDON_OK) Check(tendon_unbind_chain(h.world, id), "unbind_chain (spare)");
        break;
      }
      case 4: {
        const TendonResult r = tendon_unbind_chain(w, Handle(in, h.chain, h.ragdoll));
        Check(r, "unbind_chain");
        if (r == TENDON_OK) {
          h.chain = 0;
          Check(h.BindChain(in, h.animated, h.output, &h.chain), "bind_chain (again)");
        }
        break;
      }
      case 5: {
        const TendonResult r = tendon_set_ragdoll_enabled(w, Handle(in, h.ragdoll, h.chain), in.Int(-1, 2));
        Check(r, "set_ragdoll_enabled");
        break;
      }
      case 6: {
        const TendonVec3 impulse{in.Float(-50, 50), in.Float(-50, 50), in.Float(-50, 50)};
        Check(tendon_apply_ragdoll_impulse(w, Handle(in, h.ragdoll, h.pendulum), in.Int(-2, 3), impulse, TendonVec3{0, 1, 0}),
              "apply_ragdoll_impulse");
        break;
      }
      case 7: {
        std::vector<TendonVec3> nodes(static_cast<std::size_t>(in.Int(0, kBones + 1)));
        const TendonResult r = tendon_get_chain_node_positions(w, Handle(in, h.chain, h.ragdoll),
                                                               nodes.empty() || in.Byte() < 8 ? nullptr : nodes.data(),
                                                               static_cast<int32_t>(nodes.size()));
        Check(r, "get_chain_node_positions");
        if (r == TENDON_OK)
          for (const TendonVec3& p : nodes) Require(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z), "a node position");
        break;
      }
      case 8: {
        const int32_t unbound = tendon_world_unbind_all(w);
        if (in_flight) Require(unbound == 0, "unbind_all with a frame in flight");
        if (w != nullptr && unbound > 0) h.chain = h.ragdoll = h.pendulum = 0;
        break;
      }
      case 9:
        Check(tendon_unbind_ragdoll(w, Handle(in, h.ragdoll, h.chain)), "unbind_ragdoll");
        Check(tendon_unbind_pendulum(w, Handle(in, h.pendulum, h.ragdoll)), "unbind_pendulum");
        break;
      case 10: {
        // A VRM kind from the input's bytes, and an avatar on it when it imports.
        const std::size_t n = static_cast<std::size_t>(in.Int(0, 64));
        std::vector<uint8_t> bytes(n);
        for (uint8_t& b : bytes) b = in.Byte();
        TendonVrmKindId kind = 0;
        TendonVrmOptions options;
        tendon_vrm_options_defaults(&options);
        options.limit_source = static_cast<TendonLimitSource>(in.Int(0, 2));
        const TendonResult r = tendon_load_vrm_kind_from_memory(w, bytes.empty() ? nullptr : bytes.data(), n,
                                                                in.Bool() ? nullptr : "fuzz.gltf", &options, &kind);
        Check(r, "load_vrm_kind_from_memory");
        TendonVrmAvatarId avatar = 0;
        Check(tendon_bind_vrm_avatar(w, Handle(in, kind, h.strand), tendon_transform_identity(), &avatar), "bind_vrm_avatar");
        TendonVrmAvatarBuffers buffers;
        Check(tendon_vrm_avatar_buffers(w, Handle(in, avatar, h.chain), in.Byte() < 8 ? nullptr : &buffers), "vrm_avatar_buffers");
        const TendonResult updated = tendon_vrm_avatar_update_world(w, Handle(in, avatar, kind));
        Check(updated, "vrm_avatar_update_world");
        if (in_flight) Require(updated != TENDON_OK, "update_world with a frame in flight");
        Check(tendon_unbind_vrm_avatar(w, Handle(in, avatar, kind)), "unbind_vrm_avatar");
        break;
      }
      case 11: {
        TendonRaycastHit hit;
        const TendonVec3 origin{in.Float(-3, 3), in.Float(0, 3), in.Float(-3, 3)}, dir{0, -1, 0};
        if (tendon_raycast_ragdolls(w, origin, dir, in.Float(0, 10), in.Bool() ? &hit : nullptr) == 1 && w != nullptr)
          (void)hit;
        (void)tendon_raycast_static(w, origin, dir, in.Float(0, 10), nullptr);
        break;
      }
      case 12: {
        const TendonResult r = tendon_world_set_max_chains(w, in.Int(-2, 3));
        Check(r, "set_max_chains");
        if (w != nullptr && in_flight) Require(r == TENDON_ERROR_REENTRANT, "set_max_chains with a frame in flight");
        break;
      }
      case 13: {
        // Bad enums and bad counts in an archetype build.
        TendonChainArchetypeSettings bad = cs;
        bad.model = static_cast<TendonChainModel>(in.Int(0, 3));
        bad.teleport_guard = in.Int(-2, 2);
        bad.bone_count = in.Int(-1, kBones);
        bad.bones = in.Byte() < 16 ? nullptr : bones.data();
        TendonChainArchetypeId id = 0;
        Check(tendon_build_chain_archetype(w, in.Byte() < 8 ? nullptr : &bad, &id), "build_chain_archetype (bent)");
        break;
      }
      case 14:
        if (!in_flight) {
          h.root.translation = TendonVec3{in.Float(-3, 3), in.Float(-3, 3), in.Float(-3, 3)};
          h.joint.translation = h.root.translation;
        }
        break;
      default: tendon_world_set_camera(w, TendonVec3{in.Float(-50, 50), 0, 0}); break;
    }
    if (!in_flight) {
      RequireFinite(h.output, "a chain's output");
      RequireFinite(h.limb_out, "a ragdoll's output");
      Require(Finite(h.offset), "a pendulum's offset");
    }
  }
  tendon_world_finish_step(h.world, nullptr);
  tendon_world_step(h.world, 1.0f / 60.0f, &stats);
  RequireFinite(h.output, "a chain's output");
  RequireFinite(h.limb_out, "a ragdoll's output");
  tendon_world_destroy(h.world);
  tendon_world_destroy(nullptr);
  return 0;
}
