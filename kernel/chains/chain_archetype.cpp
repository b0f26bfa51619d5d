// kernel/chains/chain_archetype.cpp: validation and derived data of chain archetypes.
//
// Every rejection names the offending item (bone, override or collider index), the field
// as a host would write it ("bones[3].parent") and the reason, so that a tool can point
// at the asset. Checks run in the order a host would fix them: structure, numbers, ranges.
#include "kernel/chains/chain_archetype.h"

#include <algorithm>
#include <iterator>
#include <bit>
#include <cmath>
#include <string>

#include "kernel/chains/chain_block.h"
#include "kernel/core/validation.h"

namespace tendon {

namespace detail {
namespace {

std::string Indexed(const char* list, int32_t index, const char* member) {
  return std::string(list) + "[" + std::to_string(index) + "]" + member;
}

// VRM's stiffness is a push rate (1/s), not a fraction.
float MaxStiffness(ChainModel model) { return model == ChainModel::kVrm ? 1000.0f : 1.0f; }

Error CheckPush(const Vec3& v, int32_t item, const std::string& field) {
  if (!IsFinite(v)) return Fail(ErrorCode::kNotFinite, item, field, "gravity_push is not finite");
  if (std::fabs(v.x) > 1000 || std::fabs(v.y) > 1000 || std::fabs(v.z) > 1000)
    return Fail(ErrorCode::kOutOfRange, item, field, "gravity_push components must be within [-1000, 1000] m/s");
  return {};
}

Error CheckSettings(const ChainSettings& s, ChainModel model) {
  if (Error e = CheckRange(s.damping, 0, 1, -1, "settings.damping"); e.code != ErrorCode::kNone) return e;
  if (Error e = CheckRange(s.stiffness, 0, MaxStiffness(model), -1, "settings.stiffness"); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckPush(s.gravity_push, -1, "settings.gravity_push"); e.code != ErrorCode::kNone) return e;
  if (Error e = CheckRange(s.gravity_scale, -100, 100, -1, "settings.gravity_scale"); e.code != ErrorCode::kNone)
    return e;
  if (Error e = CheckRange(s.wind_scale, -100, 100, -1, "settings.wind_scale"); e.code != ErrorCode::kNone) return e;
  return CheckRange(s.node_radius, 0, 10, -1, "settings.node_radius");
}

Error CheckBones(const std::vector<ChainBone>& bones) {
  const auto count = static_cast<int32_t>(bones.size());
  if (count == 0) return Fail(ErrorCode::kEmpty, -1, "bones", "a chain needs at least one bone");
  if (count > kMaxChainNodes) {
    return Fail(ErrorCode::kCapacity, -1, "bones",
                "a chain has at most " + std::to_string(kMaxChainNodes) + " bones, got " + std::to_string(count));
  }
  for (int32_t i = 0; i < count; ++i) {
    const int32_t parent = bones[i].parent;
    const std::string field = Indexed("bones", i, ".parent");
    if (parent < -1 || parent >= count) {
      return Fail(ErrorCode::kParentOutOfRange, i, field,
                  "bone " + std::to_string(i) + " has parent " + std::to_string(parent) + ", outside [-1, " +
                      std::to_string(count) + ")");
    }
    if (parent == i) return Fail(ErrorCode::kCycle, i, field, "bone " + std::to_string(i) + " is its own parent");
    if (parent > i) {
      // Walk up from the parent: coming back to i is a cycle, otherwise it is only out of order.
      int32_t at = parent;
      for (int32_t guard = 0; at >= 0 && guard <= count; ++guard) {
        if (at == i) {
          return Fail(ErrorCode::kCycle, i, field, "bone " + std::to_string(i) + " is its own ancestor");
        }
        at = bones[at].parent >= -1 && bones[at].parent < count ? bones[at].parent : -1;
      }
      return Fail(ErrorCode::kParentNotBefore, i, field,
                  "bone " + std::to_string(i) + " has parent " + std::to_string(parent) +
                      ", which must come before it");
    }
  }
  for (int32_t i = 0; i < count; ++i) {
    const int32_t frame = bones[i].parent_frame;
    if (frame < -1)
      return Fail(ErrorCode::kBadReference, i, Indexed("bones", i, ".parent_frame"),
                  "bone " + std::to_string(i) + " names host frame " + std::to_string(frame) +
                      "; a frame is an index into collider_frames, or -1 for root_parent_world");
    if (frame >= kMaxHostFrames)
      return Fail(ErrorCode::kOutOfRange, i, Indexed("bones", i, ".parent_frame"),
                  "host frame " + std::to_string(frame) + " is past the limit of " + std::to_string(kMaxHostFrames));
    if (frame >= 0 && bones[i].parent >= 0)
      return Fail(ErrorCode::kOutOfRange, i, Indexed("bones", i, ".parent_frame"),
                  "bone " + std::to_string(i) + " has a parent in the chain; only a root hangs from a host frame");
  }
  for (int32_t i = 0; i < count; ++i) {
    const Transform& t = bones[i].rest_local;
    if (!IsFinite(t.translation))
      return Fail(ErrorCode::kNotFinite, i, Indexed("bones", i, ".rest_local.translation"), "translation is not finite");
    if (!IsFinite(t.rotation))
      return Fail(ErrorCode::kNotFinite, i, Indexed("bones", i, ".rest_local.rotation"), "rotation is not finite");
    if (!IsFinite(t.scale))
      return Fail(ErrorCode::kNotFinite, i, Indexed("bones", i, ".rest_local.scale"), "scale is not finite");
    const float len = std::sqrt(Dot(t.rotation, t.rotation));
    if (std::fabs(len - 1.0f) > 1e-3f) {
      return Fail(ErrorCode::kNotUnitRotation, i, Indexed("bones", i, ".rest_local.rotation"),
                  "rotation has length " + std::to_string(len) + ", not 1");
    }
    if (!(t.scale.x > 0 && t.scale.y > 0 && t.scale.z > 0)) {
      return Fail(ErrorCode::kOutOfRange, i, Indexed("bones", i, ".rest_local.scale"),
                  "scale components must be positive");
    }
  }
  return {};
}

// The lane layout (see ChainArchetype::strands): a kVrm chain splits into its strands when
// every strand has the first one's shape, every collider sits on a host frame, and each
// strand's non-root nodes share one collider mask (which becomes its lanes' collider
// switches). Otherwise the chain is one strand, in settings order, as it was built.
void LayOutLanes(ChainArchetype& a) {
  const int32_t count = a.node_count;
  const std::vector<int32_t> parents = a.topology.parent;  // settings order
  a.strands = 1;
  a.lane_nodes = count;
  a.parent = parents;
  a.settings_node.resize(count);
  a.lane_node.resize(count);
  for (int32_t i = 0; i < count; ++i) a.settings_node[i] = a.lane_node[i] = i;
  a.strand_colliders.assign(1, 0xffffffffu);
  if (a.topology.model != ChainModel::kVrm) return;
  for (const ColliderSettings& c : a.colliders)
    if (c.bone >= 0) return;
  // Strands in the order of their roots, each one's nodes in settings order.
  std::vector<int32_t> strand_of(count, -1), local(count, -1);
  std::vector<std::vector<int32_t>> strands;
  for (int32_t i = 0; i < count; ++i) {
    const int32_t p = parents[i];
    strand_of[i] = p < 0 ? static_cast<int32_t>(strands.size()) : strand_of[p];
    if (p < 0) strands.emplace_back();
    local[i] = static_cast<int32_t>(strands[strand_of[i]].size());
    strands[strand_of[i]].push_back(i);
  }
  const auto n = static_cast<int32_t>(strands[0].size());
  std::vector<uint32_t> masks;
  for (const std::vector<int32_t>& strand : strands) {
    if (static_cast<int32_t>(strand.size()) != n) return;
    uint32_t mask = 0;
    bool any = false;
    for (int32_t j = 0; j < n; ++j) {
      const int32_t node = strand[j], shape_node = strands[0][j];
      const int32_t p = parents[node], shape_p = parents[shape_node];
      if ((p < 0) != (shape_p < 0) || (p >= 0 && local[p] != local[shape_p])) return;
      if (p < 0) continue;  // a root is pinned: its mask never acts
      if (any && a.topology.collider_mask[node] != mask) return;
      mask = a.topology.collider_mask[node];
      any = true;
    }
    masks.push_back(any ? mask : 0xffffffffu);
  }
  a.strands = static_cast<int32_t>(strands.size());
  a.lane_nodes = n;
  a.strand_colliders = masks;
  int32_t at = 0;
  for (const std::vector<int32_t>& strand : strands)
    for (int32_t node : strand) {
      a.settings_node[at] = node;
      a.lane_node[node] = at++;
    }
  auto permute = [&](auto& values) {
    auto copy = values;
    for (int32_t i = 0; i < count; ++i) values[i] = copy[a.settings_node[i]];
  };
  permute(a.rest_local);
  permute(a.rest_length);
  permute(a.damping);
  permute(a.stiffness);
  permute(a.gravity_scale);
  permute(a.wind_scale);
  permute(a.radius);
  permute(a.pinned);
  permute(a.virtual_tip);
  permute(a.gravity_push);
  permute(a.rest_direction);
  for (int32_t i = 0; i < count; ++i) {
    const int32_t p = parents[a.settings_node[i]];
    a.parent[i] = p < 0 ? -1 : a.lane_node[p];
  }
  // The topology is one strand's; its masks let every collider act, and each lane's
  // collider switches say which do.
  const uint32_t all = a.colliders.size() >= 32 ? 0xffffffffu : (1u << a.colliders.size()) - 1u;
  a.topology.parent.assign(a.parent.begin(), a.parent.begin() + n);
  a.topology.collider_mask.assign(n, all);
  a.first_child.assign(n, -1);
  for (int32_t j = n - 1; j >= 0; --j)
    if (a.topology.parent[j] >= 0) a.first_child[a.topology.parent[j]] = j;
}

// Which chain collider each lane's collider slots hold (ChainArchetype::strand_slot_collider),
// after LayOutLanes. In a chain laid out a lane per strand, slot j holds the strand's own
// j-th collider when every strand's j-th collider (where it has one) is of one kind and
// that takes fewer slots than the chain has colliders; a strand with fewer colliders has
// its last slots switched off. Otherwise slot j holds collider j.
void SetColliderSlots(ChainArchetype& a) {
  const auto count = static_cast<int32_t>(a.colliders.size());
  const uint32_t existing = count >= 32 ? 0xffffffffu : (1u << count) - 1u;
  std::vector<std::vector<int32_t>> on(a.strands);
  std::vector<uint8_t> slot_kind;  // per slot: the kind every strand's collider in it has
  bool compact = a.strands > 1;
  for (int32_t s = 0; s < a.strands; ++s) {
    for (uint32_t bits = a.strand_colliders[s] & existing; bits != 0; bits &= bits - 1)
      on[s].push_back(std::countr_zero(bits));
    for (std::size_t j = 0; j < on[s].size(); ++j) {
      const uint8_t kind = a.collider_kind[on[s][j]];
      if (j == slot_kind.size()) slot_kind.push_back(kind);
      compact = compact && slot_kind[j] == kind;
    }
  }
  const auto slots = static_cast<int32_t>(slot_kind.size());
  compact = compact && slots < count;
  a.strand_slot_collider.assign(a.strands, {});
  if (compact) {
    a.topology.collider_kind.assign(slot_kind.begin(), slot_kind.end());
    a.topology.collider_mask.assign(a.topology.collider_mask.size(), slots >= 32 ? 0xffffffffu : (1u << slots) - 1u);
    for (int32_t s = 0; s < a.strands; ++s) {
      const auto own = static_cast<int32_t>(on[s].size());
      a.strand_slot_collider[s] = on[s];
      a.strand_slot_collider[s].resize(slots, -1);  // switched off
      a.strand_colliders[s] = own >= 32 ? 0xffffffffu : (1u << own) - 1u;
    }
  } else {
    for (int32_t s = 0; s < a.strands; ++s)
      for (int32_t c = 0; c < count; ++c) a.strand_slot_collider[s].push_back(c);
  }
  a.strand_host_slots.assign(a.strands, 0u);
  for (int32_t s = 0; s < a.strands; ++s) {
    const auto held = static_cast<int32_t>(a.strand_slot_collider[s].size());
    for (int32_t j = 0; j < held; ++j) {
      const int32_t c = a.strand_slot_collider[s][j];
      const bool on_slot = c >= 0 && ((a.strand_colliders[s] >> j) & 1u) != 0;
      if (on_slot && ((a.host_colliders >> c) & 1u) != 0) a.strand_host_slots[s] |= 1u << j;
    }
  }
}

}  // namespace

Error BuildChainArchetype(const ChainArchetypeSettings& settings, ChainArchetype* out) {
  if (Error e = CheckBones(settings.bones); e.code != ErrorCode::kNone) return e;
  if (settings.model != ChainModel::kTendon && settings.model != ChainModel::kVrm)
    return Fail(ErrorCode::kOutOfRange, -1, "model", "unknown chain model");
  if (Error e = CheckSettings(settings.settings, settings.model); e.code != ErrorCode::kNone) return e;
  const auto count = static_cast<int32_t>(settings.bones.size());

  ChainArchetype a;
  a.name = settings.name;
  a.topology.model = settings.model;
  a.teleport_guard = settings.teleport_guard.value_or(settings.model == ChainModel::kTendon);
  a.node_count = count;
  a.topology.parent.resize(count);
  a.first_child.assign(count, -1);
  a.rest_local.resize(count);
  std::vector<Transform> rest_world(count);
  a.rest_length.assign(count, 0.0f);
  for (int32_t i = 0; i < count; ++i) {
    const ChainBone& bone = settings.bones[i];
    a.topology.parent[i] = bone.parent;
    a.rest_local[i] = bone.rest_local;
    rest_world[i] = bone.parent < 0 ? bone.rest_local : Compose(rest_world[bone.parent], bone.rest_local);
    if (bone.parent >= 0) {
      if (a.first_child[bone.parent] < 0) a.first_child[bone.parent] = i;
      const float len = Length(rest_world[i].translation - rest_world[bone.parent].translation);
      if (!(len >= 1e-6f)) {
        return Fail(ErrorCode::kZeroLengthSegment, i, Indexed("bones", i, ".rest_local.translation"),
                    "bone " + std::to_string(i) + " is " + std::to_string(len) +
                        " m from its parent; links need at least 1e-6 m");
      }
      a.rest_length[i] = len;
    }
  }
  a.virtual_tip.assign(count, 0);
  a.rest_direction.assign(count, Vec3{0, 1, 0});
  for (int32_t i = 0; i < count; ++i) {
    const ChainBone& bone = settings.bones[i];
    const float len = Length(bone.rest_local.translation);
    if (len > 0) a.rest_direction[i] = bone.rest_local.translation * (1.0f / len);
    if (!bone.virtual_tip) continue;
    if (bone.parent < 0 || a.first_child[i] >= 0) {
      return Fail(ErrorCode::kOutOfRange, i, Indexed("bones", i, ".virtual_tip"),
                  "a virtual tip must be a leaf with a parent (bone " + std::to_string(i) + " is " +
                      (bone.parent < 0 ? "a root)" : "a parent)"));
    }
    a.virtual_tip[i] = 1;
    a.any_virtual_tip = true;
  }

  const ChainSettings& s = settings.settings;
  a.damping.assign(count, s.damping);
  a.stiffness.assign(count, s.stiffness);
  a.gravity_scale.assign(count, s.gravity_scale);
  a.wind_scale.assign(count, s.wind_scale);
  a.radius.assign(count, s.node_radius);
  a.gravity_push.assign(count, s.gravity_push);
  a.topology.collider_mask.assign(count, 0xffffffffu);
  a.pinned.assign(count, 0.0f);
  for (int32_t i = 0; i < count; ++i) a.pinned[i] = a.topology.parent[i] < 0 ? 1.0f : 0.0f;

  for (int32_t o = 0; o < static_cast<int32_t>(settings.overrides.size()); ++o) {
    const ChainNodeOverride& ov = settings.overrides[o];
    if (ov.node < 0 || ov.node >= count) {
      return Fail(ErrorCode::kBadReference, o, Indexed("overrides", o, ".node"),
                  "override " + std::to_string(o) + " names node " + std::to_string(ov.node) + ", outside [0, " +
                      std::to_string(count) + ")");
    }
    struct Item {
      const std::optional<float>& value;
      float lo, hi;
      const char* member;
      std::vector<float>& dest;
    };
    if (ov.collider_mask) a.topology.collider_mask[ov.node] = *ov.collider_mask;
    if (ov.gravity_push) {
      if (Error e = CheckPush(*ov.gravity_push, o, Indexed("overrides", o, ".gravity_push")); e.code != ErrorCode::kNone)
        return e;
      a.gravity_push[ov.node] = *ov.gravity_push;
    }
    const Item items[] = {{ov.damping, 0, 1, ".damping", a.damping},
                          {ov.stiffness, 0, MaxStiffness(settings.model), ".stiffness", a.stiffness},
                          {ov.gravity_scale, -100, 100, ".gravity_scale", a.gravity_scale},
                          {ov.wind_scale, -100, 100, ".wind_scale", a.wind_scale},
                          {ov.radius, 0, 10, ".radius", a.radius}};
    for (const Item& item : items) {
      if (!item.value) continue;
      if (Error e = CheckRange(*item.value, item.lo, item.hi, o, Indexed("overrides", o, item.member));
          e.code != ErrorCode::kNone)
        return e;
      item.dest[ov.node] = *item.value;
      if (item.member != std::string(".radius")) a.uniform_parameters = false;
    }
    if (ov.pinned) {
      if (!*ov.pinned && a.topology.parent[ov.node] < 0) {
        return Fail(ErrorCode::kOutOfRange, o, Indexed("overrides", o, ".pinned"),
                    "node " + std::to_string(ov.node) + " is a root; roots are always pinned");
      }
      a.pinned[ov.node] = *ov.pinned ? 1.0f : 0.0f;
    }
  }

  const auto collider_count = static_cast<int32_t>(settings.colliders.size());
  if (collider_count > kMaxChainColliders) {
    return Fail(ErrorCode::kCapacity, -1, "colliders",
                "a chain has at most " + std::to_string(kMaxChainColliders) + " colliders");
  }
  if (settings.host_body_mask != 0) {
    if (settings.max_host_bodies < 0 || settings.max_host_bodies > kMaxChainHostBodies) {
      return Fail(ErrorCode::kOutOfRange, -1, "max_host_bodies",
                  "max_host_bodies is " + std::to_string(settings.max_host_bodies) + "; it must be within [0, " +
                      std::to_string(kMaxChainHostBodies) + "]");
    }
    if (collider_count + settings.max_host_bodies > kMaxChainColliders) {
      return Fail(ErrorCode::kCapacity, -1, "max_host_bodies",
                  std::to_string(collider_count) + " colliders and max_host_bodies " +
                      std::to_string(settings.max_host_bodies) + " make more than " +
                      std::to_string(kMaxChainColliders) + " collider slots");
    }
  }
  for (int32_t c = 0; c < collider_count; ++c) {
    const ColliderSettings& col = settings.colliders[c];
    if (col.bone >= count) {
      return Fail(ErrorCode::kBadReference, c, Indexed("colliders", c, ".bone"),
                  "collider " + std::to_string(c) + " is attached to bone " + std::to_string(col.bone) +
                      ", outside [0, " + std::to_string(count) + ")");
    }
    if (col.bone < 0 && col.frame >= kMaxHostFrames) {
      return Fail(ErrorCode::kOutOfRange, c, Indexed("colliders", c, ".frame"),
                  "host frame " + std::to_string(col.frame) + " is past the limit of " + std::to_string(kMaxHostFrames));
    }
    if (col.bone < 0 && col.frame < 0) {
      return Fail(ErrorCode::kBadReference, c, Indexed("colliders", c, ".frame"),
                  "collider " + std::to_string(c) + " has no bone and a negative host frame");
    }
    if (!IsFinite(col.a)) return Fail(ErrorCode::kNotFinite, c, Indexed("colliders", c, ".a"), "a is not finite");
    if (!IsFinite(col.b)) return Fail(ErrorCode::kNotFinite, c, Indexed("colliders", c, ".b"), "b is not finite");
    uint8_t kind = kSphereOutside;
    switch (col.shape) {
      case ColliderShape::kSphere: kind = col.inside ? kSphereInside : kSphereOutside; break;
      case ColliderShape::kCapsule: kind = col.inside ? kCapsuleInside : kCapsuleOutside; break;
      case ColliderShape::kPlane:
        if (col.inside) {
          return Fail(ErrorCode::kOutOfRange, c, Indexed("colliders", c, ".inside"),
                      "a plane has no inside; its normal says which side nodes stay on");
        }
        if (std::fabs(Length(col.b) - 1.0f) > 1e-3f) {
          return Fail(ErrorCode::kOutOfRange, c, Indexed("colliders", c, ".b"), "a plane's normal b must be unit");
        }
        kind = kPlaneKind;
        break;
      default:
        return Fail(ErrorCode::kOutOfRange, c, Indexed("colliders", c, ".shape"), "unknown collider shape");
    }
    if (col.shape != ColliderShape::kPlane) {
      if (Error e = CheckRange(col.radius, 0, 100, c, Indexed("colliders", c, ".radius")); e.code != ErrorCode::kNone)
        return e;
    }
    a.topology.collider_kind.push_back(kind);
    if (col.bone < 0 && col.frame + 1 > a.collider_frames_needed) a.collider_frames_needed = col.frame + 1;
    if (col.bone < 0) a.collider_frames_used.push_back(col.frame);
    if (col.bone >= 0) a.any_node_collider = true;
    if (col.bone < 0) a.host_colliders |= 1u << c;
  }
  // Masks name existing colliders only (what is left is the same topology for any count).
  const uint32_t existing = collider_count >= 32 ? 0xffffffffu : (1u << collider_count) - 1u;
  for (uint32_t& m : a.topology.collider_mask) m &= existing;
  std::sort(a.collider_frames_used.begin(), a.collider_frames_used.end());
  a.collider_frames_used.erase(std::unique(a.collider_frames_used.begin(), a.collider_frames_used.end()),
                               a.collider_frames_used.end());
  a.colliders = settings.colliders;
  a.collider_kind = a.topology.collider_kind;
  a.host_collider_place.assign(collider_count, -1);
  for (int32_t c = 0; c < collider_count; ++c) {
    if (a.colliders[c].bone >= 0) continue;
    a.host_collider_place[c] = static_cast<int32_t>(a.host_collider.size());
    a.host_collider.push_back(c);
    a.host_collider_frame.push_back(a.colliders[c].frame);
  }
  const auto host_count = static_cast<int32_t>(a.host_collider.size());
  a.host_collider_stride = (host_count + kBlockLanes - 1) / kBlockLanes * kBlockLanes;
  a.host_collider_local.assign(static_cast<std::size_t>(kColliderLocalRows) * a.host_collider_stride, 0.0f);
  for (int32_t i = 0; i < host_count; ++i) {
    const ColliderSettings& col = a.colliders[a.host_collider[i]];
    const uint8_t kind = a.collider_kind[a.host_collider[i]];
    const float values[kColliderLocalRows] = {col.a.x, col.a.y, col.a.z, col.b.x, col.b.y, col.b.z, col.radius,
                                              kind == kPlaneKind ? 1.0f : 0.0f,
                                              kind == kCapsuleOutside || kind == kCapsuleInside ? 1.0f : 0.0f};
    for (int32_t r = 0; r < kColliderLocalRows; ++r) a.host_collider_local[r * a.host_collider_stride + i] = values[r];
  }
  LayOutLanes(a);
  SetColliderSlots(a);
  // Host bodies: one more capsule slot per host body, acting on every node, after the
  // chain's own slots (kTendon: one strand, slot j holds collider j). A chain without a
  // mask keeps its topology, and so shares lanes and results with what it was.
  a.host_body_mask = settings.host_body_mask;
  a.host_body_slots = settings.host_body_mask != 0 ? settings.max_host_bodies : 0;
  a.host_body_first_slot = static_cast<int32_t>(a.topology.collider_kind.size());
  a.topology.host_slots = a.host_body_slots;
  for (float r : a.radius) a.max_node_radius = std::max(a.max_node_radius, r);
  for (int32_t i = 0; i < a.host_body_slots; ++i) {
    a.topology.collider_kind.push_back(kCapsuleOutside);
    for (uint32_t& m : a.topology.collider_mask) m |= 1u << (a.host_body_first_slot + i);
  }
  // Each lane's roots hang from one frame (the lane has one root-parent transform): per
  // strand, its roots' frame. A chain of one lane with roots on different frames is refused.
  a.strand_root_frame.assign(a.strands, -1);
  std::vector<int32_t> strand_root(a.strands, -1);  // the settings index of the first root seen
  for (int32_t k = 0; k < count; ++k) {
    const int32_t bone = a.settings_node[k];
    if (settings.bones[bone].parent >= 0) continue;
    const int32_t strand = k / a.lane_nodes;
    const int32_t frame = settings.bones[bone].parent_frame;
    if (strand_root[strand] < 0) {
      strand_root[strand] = bone;
      a.strand_root_frame[strand] = frame;
    } else if (a.strand_root_frame[strand] != frame) {
      return Fail(ErrorCode::kOutOfRange, bone, Indexed("bones", bone, ".parent_frame"),
                  "root " + std::to_string(bone) + " hangs from frame " + std::to_string(frame) + " and root " +
                      std::to_string(strand_root[strand]) + " from " + std::to_string(a.strand_root_frame[strand]) +
                      ": the roots of one chain hang from different frames only in a kVrm chain whose roots' "
                      "subtrees all have one shape and whose colliders all sit on host frames; make a chain per frame");
    }
    if (frame >= 0) {
      a.root_frames = true;
      a.collider_frames_needed = std::max(a.collider_frames_needed, frame + 1);
      a.root_frames_used.push_back(frame);
    }
  }
  a.vrm_roots_pose = a.topology.model == ChainModel::kVrm && !a.any_node_collider;
  for (int32_t k = 0; k < count && a.vrm_roots_pose; ++k) {
    if (a.parent[k] < 0) continue;
    const bool leaf = a.first_child[k % a.lane_nodes] < 0;
    a.vrm_roots_pose = a.pinned[k] < 0.5f && (!leaf || a.virtual_tip[k] != 0);
  }
  std::sort(a.root_frames_used.begin(), a.root_frames_used.end());
  a.root_frames_used.erase(std::unique(a.root_frames_used.begin(), a.root_frames_used.end()), a.root_frames_used.end());
  std::set_union(a.collider_frames_used.begin(), a.collider_frames_used.end(), a.root_frames_used.begin(),
                 a.root_frames_used.end(), std::back_inserter(a.frames_checked));
  for (int32_t f : a.strand_root_frame) {
    if (!a.root_frames) break;
    const auto at = std::lower_bound(a.root_frames_used.begin(), a.root_frames_used.end(), f);
    a.strand_root_slot.push_back(f < 0 ? -1 : static_cast<int32_t>(at - a.root_frames_used.begin()));
  }
  *out = std::move(a);
  return {};
}

}  // namespace detail
}  // namespace tendon
