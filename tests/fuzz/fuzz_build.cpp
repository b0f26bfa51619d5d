// tests/fuzz/fuzz_build.cpp: bytes decoded into every Build* settings struct. A build
// either fails with an error naming the item and field, or succeeds; after a success one
// instance is bound and stepped, and everything it writes must stay finite.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "tendon/tendon.h"

namespace {

using namespace tendon;
using fuzz::FuzzInput;
using fuzz::Require;
using fuzz::RequireFinite;

void RequireNamed(const Error& e) {
  Require(e.code == ErrorCode::kNone || !e.message.empty(), "a refused build says why");
}

std::unique_ptr<World> NewWorld(FuzzInput& in) {
  WorldSettings ws;
  ws.ragdoll_substeps = in.Int(1, 8);
  ws.max_substeps = in.Int(1, 4);
  auto created = World::Create(ws);
  Require(created.ok(), "the default world builds");
  return std::move(created.value());
}

void FuzzChain(FuzzInput& in) {
  auto w = NewWorld(in);
  ChainArchetypeSettings s;
  const int32_t n = in.Int(0, 10);
  for (int32_t k = 0; k < n; ++k) {
    ChainBone bone;
    bone.parent = in.Int(-2, k);
    bone.rest_local = Transform{in.Vec(-0.3f, 0.3f), in.Rotation(), in.Byte() < 8 ? in.Vec(-2, 2) : Vec3{1, 1, 1}};
    s.bones.push_back(bone);
  }
  s.settings.damping = in.Float(0, 1);
  s.settings.stiffness = in.Float(0, 1);
  s.settings.gravity_scale = in.Float(-2, 2);
  s.settings.wind_scale = in.Float(-2, 2);
  s.settings.node_radius = in.Float(0, 0.1f);
  for (int32_t o = in.Int(0, 2); o > 0; --o) {
    ChainNodeOverride ov;
    ov.node = in.Int(-1, n);
    if (in.Bool()) ov.damping = in.Float(0, 1);
    if (in.Bool()) ov.pinned = in.Bool();
    if (in.Bool()) ov.radius = in.Float(0, 0.1f);
    s.overrides.push_back(ov);
  }
  for (int32_t c = in.Int(0, 3); c > 0; --c) {
    ColliderSettings col;
    col.shape = static_cast<ColliderShape>(in.Byte() % 6);
    col.bone = in.Int(-2, n);
    col.frame = in.Int(-1, 2);
    col.a = in.Vec(-0.5f, 0.5f);
    col.b = in.Vec(-0.5f, 0.5f);
    col.radius = in.Float(0, 0.3f);
    s.colliders.push_back(col);
  }
  auto built = w->BuildChainArchetype(s);
  if (!built.ok()) return RequireNamed(built.error());
  Transform root = in.Pose(2);
  std::vector<Transform> animated(n), output(n), frames(3, Transform{});
  for (int32_t k = 0; k < n; ++k) animated[k] = output[k] = s.bones[k].rest_local;
  ChainBinding b;
  b.archetype = built.value();
  b.root_parent_world = &root;
  b.animated_local = animated;
  b.output_local = output;
  b.collider_frames = frames;
  auto bound = w->BindChain(b);
  if (!bound.ok()) return RequireNamed(bound.error());
  for (int f = 0; f < 4; ++f) {
    root.translation = root.translation + in.Vec(-0.2f, 0.2f);
    w->Step(in.Float(0, 0.1f));
    RequireFinite(output, "a chain wrote a non-finite local");
  }
  std::vector<Vec3> nodes(n);
  if (w->GetChainNodePositions(bound.value(), nodes).code == ErrorCode::kNone)
    for (const Vec3& p : nodes) Require(IsFinite(p), "a chain query returned a non-finite position");
}

PartShapeSettings Shape(FuzzInput& in) {
  PartShapeSettings sh;
  sh.type = static_cast<PartShape>(in.Byte() % 5);
  sh.radius = in.Float(0, 0.3f);
  sh.half_height = in.Float(0, 0.5f);
  sh.top_radius = in.Float(0, 0.3f);
  sh.bottom_radius = in.Float(0, 0.3f);
  sh.half_extents = in.Vec(0, 0.5f);
  if (in.Bool()) sh.offset = in.Pose(0.2f);
  return sh;
}

void DropAndCheck(World& w, FuzzInput& in, RagdollArchetypeId archetype, int32_t parts) {
  std::vector<Transform> out(parts);
  RagdollBinding b;
  b.archetype = archetype;
  b.placement = in.Pose(1);
  b.linear_velocity = in.Vec(-5, 5);
  b.angular_velocity = in.Vec(-5, 5);
  b.output_parts = out;
  auto bound = w.BindRagdoll(b);
  if (!bound.ok()) return RequireNamed(bound.error());
  for (int f = 0; f < 6; ++f) {
    w.Step(1.0f / 60.0f);
    RequireFinite(out, "a ragdoll wrote a non-finite part frame");
  }
  std::vector<Vec3> v(parts), av(parts);
  if (w.GetRagdollVelocities(bound.value(), v, av).code == ErrorCode::kNone)
    for (int32_t j = 0; j < parts; ++j) Require(IsFinite(v[j]) && IsFinite(av[j]), "non-finite velocities reported");
}

void FuzzRagdoll(FuzzInput& in) {
  auto w = NewWorld(in);
  (void)w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}});
  RagdollSettings s;
  const int32_t n = in.Int(0, 5);
  for (int32_t j = 0; j < n; ++j) {
    PartSettings p;
    p.parent = in.Int(-2, j);
    p.pose = in.Pose(1);
    p.shape = Shape(in);
    p.mass = in.Float(0, 20);
    p.mass_share = in.Float(0, 1);
    p.density = in.Float(0, 2000);
    p.friction = in.Float(0, 2);
    p.restitution = in.Float(0, 1);
    p.max_linear_speed = in.Float(0, 500);
    p.max_angular_speed = in.Float(0, 50);
    p.joint.type = static_cast<JointType>(in.Byte() % 3);
    p.joint.anchor = in.Vec(-1, 1);
    p.joint.twist_axis = in.Vec(-1, 1);
    p.joint.plane_axis = in.Vec(-1, 1);
    p.joint.normal_half_cone_degrees = in.Float(0, 180);
    p.joint.plane_half_cone_degrees = in.Float(0, 180);
    p.joint.twist_min_degrees = in.Float(-180, 0);
    p.joint.twist_max_degrees = in.Float(0, 180);
    p.joint.hinge_min_degrees = in.Float(-180, 0);
    p.joint.hinge_max_degrees = in.Float(0, 180);
    p.joint.motor.frequency_hz = in.Float(0, 30);
    p.joint.motor.max_torque_per_kg = in.Float(0, 100);
    s.parts.push_back(p);
  }
  s.total_mass = in.Float(0, 100);
  s.stabilize.enabled = in.Bool();
  auto built = w->BuildRagdollArchetype(s);
  if (!built.ok()) return RequireNamed(built.error());
  DropAndCheck(*w, in, built.value(), n);
}

void FuzzCharacter(FuzzInput& in) {
  auto w = NewWorld(in);
  (void)w->BuildStaticWorld(StaticWorldSettings{{StaticPlane{{0, 1, 0}, 0}}});
  static const char* kNames[] = {"Hips",         "Spine",        "Chest",        "Neck",      "Head",
                                 "LeftUpperArm", "LeftLowerArm", "LeftHand",     "RightUpperArm", "RightLowerArm",
                                 "RightHand",    "LeftUpperLeg", "LeftLowerLeg", "LeftFoot",  "RightUpperLeg",
                                 "RightLowerLeg", "RightFoot",   "Tail"};
  CharacterSettings cs;
  const int32_t bones = in.Int(0, 18);
  for (int32_t b = 0; b < bones; ++b) {
    cs.skeleton.names.push_back(in.Byte() < 230 ? kNames[b] : kNames[in.Int(0, 17)]);
    cs.skeleton.parents.push_back(b == 0 ? -1 : in.Int(-1, b - 1));
    cs.skeleton.rest_local.push_back(Transform{in.Vec(-0.4f, 0.4f), in.Rotation(), Vec3{1, 1, 1}});
  }
  cs.total_mass = in.Float(0, 100);
  cs.drive_frequency_hz = in.Float(0, 20);
  cs.limit_source = in.Bool() ? LimitSource::kTable : LimitSource::kClips;
  if (cs.limit_source == LimitSource::kClips) {
    SampledClip clip;
    clip.frame_count = in.Int(0, 3);
    clip.local.resize(static_cast<std::size_t>(clip.frame_count) * bones);
    for (Transform& t : clip.local) t = Transform{in.Vec(-0.4f, 0.4f), in.Rotation(), Vec3{1, 1, 1}};
    cs.limit_clips.push_back(clip);
  }
  auto built = w->BuildCharacterArchetype(cs);
  if (!built.ok()) return RequireNamed(built.error());
  Transform model = in.Pose(1);
  std::vector<Transform> animated = cs.skeleton.rest_local, output = animated, world(bones);
  CharacterBinding b;
  b.archetype = built.value();
  b.model_world = &model;
  b.animated_local = animated;
  b.output_local = output;
  b.output_world = world;
  auto bound = w->BindCharacter(b);
  if (!bound.ok()) return RequireNamed(bound.error());
  CharacterActivateOptions activate;
  activate.impulse = in.Vec(-50, 50);
  activate.strength = in.Float(0, 1);
  (void)w->ActivateCharacter(bound.value(), activate);
  for (int f = 0; f < 6; ++f) {
    w->Step(1.0f / 60.0f);
    RequireFinite(output, "a character wrote a non-finite local");
    RequireFinite(world, "a character wrote a non-finite world transform");
  }
}

void FuzzStaticWorld(FuzzInput& in) {
  auto w = NewWorld(in);
  StaticWorldSettings sw;
  for (int32_t i = in.Int(0, 2); i > 0; --i) sw.planes.push_back(StaticPlane{in.Vec(-1, 1), in.Float(-1, 1)});
  for (int32_t i = in.Int(0, 2); i > 0; --i) sw.spheres.push_back(StaticSphere{in.Vec(-2, 2), in.Float(0, 1)});
  for (int32_t i = in.Int(0, 2); i > 0; --i) sw.boxes.push_back(StaticBox{in.Pose(2), in.Vec(0, 1)});
  for (int32_t i = in.Int(0, 1); i > 0; --i) {
    StaticHeightfield h;
    h.samples_x = in.Int(0, 6);
    h.samples_z = in.Int(0, 6);
    h.spacing = in.Float(0, 1);
    h.origin = in.Vec(-3, 0);
    for (int32_t k = in.Int(0, 40); k > 0; --k) h.heights.push_back(in.Float(-0.5f, 0.5f));
    sw.heightfields.push_back(h);
  }
  for (int32_t i = in.Int(0, 1); i > 0; --i) {
    StaticTriangleMesh m;
    for (int32_t k = in.Int(0, 8); k > 0; --k) m.vertices.push_back(in.Vec(-2, 2));
    for (int32_t k = in.Int(0, 12); k > 0; --k) m.indices.push_back(static_cast<uint32_t>(in.Int(0, 9)));
    sw.meshes.push_back(m);
  }
  const Error e = w->BuildStaticWorld(sw);
  if (e.code != ErrorCode::kNone) return RequireNamed(e);
  RagdollSettings box;
  box.parts.push_back(PartSettings{});
  box.parts[0].shape = {.type = PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}};
  box.parts[0].mass = 1;
  DropAndCheck(*w, in, w->BuildRagdollArchetype(box).value(), 1);
  RaycastHit hit;
  if (w->RaycastStatic(in.Vec(-3, 3), in.Vec(-1, 1), in.Float(0, 10), &hit))
    Require(IsFinite(hit.point) && IsFinite(hit.normal) && std::isfinite(hit.distance), "a raycast hit is finite");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  switch (in.Byte() % 4) {
    case 0: FuzzChain(in); break;
    case 1: FuzzRagdoll(in); break;
    case 2: FuzzCharacter(in); break;
    default: FuzzStaticWorld(in); break;
  }
  return 0;
}
