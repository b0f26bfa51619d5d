/* ports/c/tests/c_host_test.c: a C11 host of tendon_c (compiled -Wall -Wextra -Wpedantic
 * -Werror). It builds a chain, a ragdoll and a character from plain arrays, binds them on
 * its own buffers, steps, reads poses back, checks every refusal it provokes (code, field,
 * message), writes a trace, and, when ../shared/data is there, loads a VRM avatar. It
 * then calls every C counterpart of a World call (ragdoll controls and queries, part info,
 * archetype removal, handle checks, the wind sampler and simulate predicate, pendulum
 * state), the defaults functions, and the asset loaders (glTF clips, the Jolt ragdoll and
 * animations), each with real behaviour and its refusals.
 * Prints "N passed, N failed" and exits non-zero on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tendon/tendon_c.h"

static int g_passed = 0, g_failed = 0;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (cond) {                                                          \
      ++g_passed;                                                        \
    } else {                                                             \
      ++g_failed;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, tendon_last_error()); \
    }                                                                    \
  } while (0)

static TendonTransform At(float x, float y, float z) {
  TendonTransform t = tendon_transform_identity();
  t.translation.x = x;
  t.translation.y = y;
  t.translation.z = z;
  return t;
}
static float Dist(TendonVec3 a, TendonVec3 b) {
  const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return sqrtf(dx * dx + dy * dy + dz * dz);
}
static int FiniteT(const TendonTransform* t) {
  const float* f = &t->translation.x;
  int i;
  for (i = 0; i < 10; ++i)
    if (!isfinite(f[i])) return 0;
  return 1;
}

/* Profiler hooks that count what arrives. */
static int g_zone_depth = 0, g_zones = 0, g_counters = 0, g_marks = 0, g_unbalanced = 0;
static void ZoneBegin(const char* name, uint32_t color, uint32_t worker, void* user) {
  (void)name, (void)color, (void)worker, (void)user;
  ++g_zones;
  ++g_zone_depth;
}
static void ZoneEnd(const char* name, uint32_t worker, void* user) {
  (void)name, (void)worker, (void)user;
  if (--g_zone_depth < 0) ++g_unbalanced;
}
static void CountValue(const char* name, double value, void* user) {
  (void)name, (void)value, (void)user;
  ++g_counters;
}
static void Mark(uint64_t frame, void* user) {
  (void)frame, (void)user;
  ++g_marks;
}

/* A debug draw recorder: counts each primitive, keeps the points and the last sphere. */
typedef struct DrawRecord {
  int lines, points, spheres, capsules, boxes;
  TendonVec3 point_at[16];
  TendonVec3 sphere_centre;
  float sphere_radius;
  uint32_t point_color;
} DrawRecord;
static void RecLine(TendonVec3 a, TendonVec3 b, uint32_t color, void* user) {
  (void)a, (void)b, (void)color;
  ++((DrawRecord*)user)->lines;
}
static void RecPoint(TendonVec3 p, float size, uint32_t color, void* user) {
  DrawRecord* r = (DrawRecord*)user;
  (void)size;
  if (r->points < 16) r->point_at[r->points] = p;
  r->point_color = color;
  ++r->points;
}
static void RecSphere(TendonVec3 c, float radius, uint32_t color, void* user) {
  DrawRecord* r = (DrawRecord*)user;
  (void)color;
  r->sphere_centre = c;
  r->sphere_radius = radius;
  ++r->spheres;
}
static void RecCapsule(TendonVec3 a, TendonVec3 b, float ra, float rb, uint32_t color, void* user) {
  (void)a, (void)b, (void)ra, (void)rb, (void)color;
  ++((DrawRecord*)user)->capsules;
}
static void RecBox(TendonTransform frame, TendonVec3 half, uint32_t color, void* user) {
  (void)frame, (void)half, (void)color;
  ++((DrawRecord*)user)->boxes;
}

/* The debug draw of a simulated 4-node chain with a sphere collider on host frame 0:
 * every node once where the world has it, 3 links, the sphere; then its refusals. */
static void TestDebugDraw(TendonWorld* w, TendonChainId chain, const TendonVec3* collider_at, float radius) {
  TendonDebugDraw d;
  DrawRecord r;
  TendonVec3 nodes[4];
  const uint32_t chains = TENDON_DEBUG_DRAW_CHAIN_NODES | TENDON_DEBUG_DRAW_CHAIN_LINKS | TENDON_DEBUG_DRAW_CHAIN_COLLIDERS;
  int i, j, found;
  tendon_debug_draw_defaults(&d);
  CHECK(d.draw_line == NULL && d.user == NULL && d.point_size == 0.02f && d.normal_length == 0.1f &&
        d.limit_length == 0.1f && d.plane_size == 0.5f);
  CHECK(d.colors.chain_node == 0xFFD700FFu && d.colors.contact_normal == 0xFF80FFFFu && d.colors.host_body == 0xC0C0C0FFu);
  memset(&r, 0, sizeof r);
  d.draw_line = RecLine;
  d.draw_point = RecPoint;
  d.draw_sphere = RecSphere;
  d.draw_capsule = RecCapsule;
  d.draw_box = RecBox;
  d.user = &r;
  d.colors.chain_node = 0x11223344u;
  CHECK(tendon_get_chain_node_positions(w, chain, nodes, 4) == TENDON_OK);
  CHECK(tendon_world_draw_debug(w, &d, chains) == TENDON_OK);
  CHECK(r.points == 4 && r.lines == 3 && r.spheres == 1 && r.capsules == 0 && r.boxes == 0);
  CHECK(r.point_color == 0x11223344u); /* the host's palette */
  for (i = 0; i < 4; ++i) {
    found = 0;
    for (j = 0; j < r.points && j < 16; ++j) found += Dist(r.point_at[j], nodes[i]) == 0.0f;
    CHECK(found == 1);
  }
  CHECK(Dist(r.sphere_centre, *collider_at) < 1e-5f && r.sphere_radius == radius);
  /* Each flag alone; NULL callbacks skipped. */
  memset(&r, 0, sizeof r);
  CHECK(tendon_world_draw_debug(w, &d, TENDON_DEBUG_DRAW_CHAIN_LINKS) == TENDON_OK);
  CHECK(r.lines == 3 && r.points == 0 && r.spheres == 0);
  memset(&r, 0, sizeof r);
  d.draw_line = NULL;
  d.draw_sphere = NULL;
  CHECK(tendon_world_draw_debug(w, &d, TENDON_DEBUG_DRAW_ALL) == TENDON_OK);
  CHECK(r.lines == 0 && r.spheres == 0 && r.points == 4);
  /* Refusals, by code and field. */
  CHECK(tendon_world_draw_debug(NULL, &d, chains) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_world_draw_debug(w, NULL, chains) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(strcmp(tendon_last_error_field(), "draw") == 0);
  CHECK(tendon_world_draw_debug(w, &d, 1u << 30) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "flags") == 0);
  d.normal_length = -1.0f;
  CHECK(tendon_world_draw_debug(w, &d, chains) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "draw.normal_length") == 0);
  d.normal_length = NAN;
  CHECK(tendon_world_draw_debug(w, &d, chains) == TENDON_ERROR_OUT_OF_RANGE);
  d.normal_length = 0.1f;
  memset(&r, 0, sizeof r);
  CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
  CHECK(tendon_world_draw_debug(w, &d, chains) == TENDON_ERROR_REENTRANT);
  CHECK(strcmp(tendon_last_error_field(), "world") == 0);
  tendon_world_finish_step(w, NULL);
  CHECK(r.points == 0);
  CHECK(tendon_world_draw_debug(w, &d, chains) == TENDON_OK && r.points == 4);
}

static void TestChain(TendonWorld* w) {
  enum { kBones = 4 };
  TendonChainBone bones[kBones];
  TendonChainArchetypeSettings s;
  TendonChainArchetypeId arch = 0;
  TendonCollider ball;
  TendonTransform root = At(0, 2, 0), animated[kBones], output[kBones], frames[1];
  TendonChainBinding b;
  TendonChainId chain = 0;
  TendonVec3 nodes[kBones];
  TendonFrameStats st;
  int i, f;
  for (i = 0; i < kBones; ++i) {
    bones[i].parent = i - 1;
    bones[i].rest_local = i == 0 ? tendon_transform_identity() : At(0, -0.1f, 0);
    bones[i].virtual_tip = 0;
  }
  tendon_chain_archetype_settings_defaults(&s);
  s.name = "c tail";
  s.bones = bones;
  s.bone_count = kBones;
  memset(&ball, 0, sizeof ball);
  ball.shape = TENDON_COLLIDER_SPHERE;
  ball.bone = -1;
  ball.frame = 0;
  ball.radius = 0.05f;
  s.colliders = &ball;
  s.collider_count = 1;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_OK && arch != 0);

  /* A refusal names the item and the field. */
  bones[2].parent = 7;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_ERROR_PARENT_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "bones[2].parent") == 0);
  CHECK(tendon_last_error_item() == 2);
  CHECK(strstr(tendon_world_last_error(w), "parent 7") != NULL);
  bones[2].parent = 1;
  s.bone_count = -1;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_ERROR_NULL_BUFFER);
  s.bone_count = kBones;
  CHECK(tendon_build_chain_archetype(w, NULL, &arch) == TENDON_ERROR_NULL_ARGUMENT);
  /* Any int is a legal argument from C: one that is no TendonResult is "unknown". */
  CHECK(strcmp(tendon_result_name((TendonResult)1234), "unknown") == 0);
  CHECK(strcmp(tendon_result_name((TendonResult)-77), "unknown") == 0);
  CHECK(strcmp(tendon_result_name(TENDON_ERROR_IO), "io") == 0);
  s.model = (TendonChainModel)257; /* would narrow to kVrm as a uint8_t: refused first */
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "model") == 0);
  s.model = TENDON_CHAIN_MODEL_TENDON;
  ball.shape = (TendonColliderShape)3;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_ERROR_OUT_OF_RANGE);
  ball.shape = TENDON_COLLIDER_SPHERE;
  /* Host bodies: no mask by default (4 bodies when one is set); a count past 16 is refused. */
  CHECK(s.host_body_mask == 0 && s.max_host_bodies == 4);
  s.host_body_mask = 1u;
  s.max_host_bodies = 17;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "max_host_bodies") == 0);
  s.max_host_bodies = 2;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_OK);
  s.host_body_mask = 0;
  s.max_host_bodies = 4;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_OK);

  for (i = 0; i < kBones; ++i) animated[i] = output[i] = bones[i].rest_local;
  frames[0] = At(0.3f, 1.75f, 0);
  memset(&b, 0, sizeof b);
  b.archetype = arch;
  b.root_parent_world = &root;
  b.animated_local = animated;
  b.animated_count = kBones;
  b.output_local = output;
  b.output_count = 2; /* too small */
  b.collider_frames = frames;
  b.collider_frame_count = 1;
  CHECK(tendon_bind_chain(w, &b, &chain) == TENDON_ERROR_NULL_BUFFER);
  CHECK(strcmp(tendon_last_error_field(), "output_local") == 0);
  b.output_count = kBones;
  CHECK(tendon_bind_chain(w, &b, &chain) == TENDON_OK && chain != 0);

  for (f = 0; f < 90; ++f) {
    root.translation.x = 0.4f * sinf(0.1f * (float)f);
    tendon_world_step(w, 1.0f / 60.0f, &st);
  }
  CHECK(st.frame == 90 && st.simulated_chains >= 1 && st.reset_non_finite == 0);
  CHECK(st.budget_action == TENDON_BUDGET_HELD && st.budget_max_chains == -1 && st.budget_ragdoll_substeps == 16 &&
        st.budget_estimate_ms > 0.0f && st.times.total_ms > 0.0);
  CHECK(tendon_chain_is_simulated(w, chain) == 1);
  CHECK(tendon_get_chain_node_positions(w, chain, nodes, kBones) == TENDON_OK);
  for (i = 1; i < kBones; ++i) CHECK(fabsf(Dist(nodes[i], nodes[i - 1]) - 0.1f) < 0.01f); /* links keep their length */
  CHECK(Dist(nodes[0], root.translation) < 1e-4f);                                      /* the root follows its parent */
  CHECK(fabsf(output[1].rotation.z) + fabsf(output[1].rotation.x) > 1e-3f);             /* the tail swings */
  for (i = 0; i < kBones; ++i) CHECK(FiniteT(&output[i]));
  CHECK(tendon_get_chain_node_positions(w, chain, nodes, 2) == TENDON_ERROR_NULL_BUFFER);
  TestDebugDraw(w, chain, &frames[0].translation, ball.radius);

  CHECK(tendon_unbind_chain(w, chain) == TENDON_OK);
  CHECK(tendon_unbind_chain(w, chain) == TENDON_ERROR_STALE_HANDLE); /* generation-checked */
}

/* Pose streams: the host's own bone struct (wxyz, no scale) and a row-major 3x4 palette
 * with a joint remap; both equal what output_local says, composed by hand. */
typedef struct HostBone {
  float position[3];
  float wxyz[4];
  int32_t tag;
} HostBone;

static void TestPoseStreams(TendonWorld* w) {
  enum { kBones = 3 };
  TendonChainBone bones[kBones];
  TendonChainArchetypeSettings s;
  TendonChainArchetypeId arch = 0;
  TendonTransform root = At(0.2f, 1.5f, 0), animated[kBones], output[kBones];
  TendonChainBinding b;
  TendonChainId chain = 0;
  TendonPoseStream streams[2];
  HostBone host[kBones];
  float palette[12 * 4], inverse_bind[16 * kBones];
  const int32_t joint[kBones] = {3, 0, 2};
  TendonFrameStats st;
  int i, f;
  for (i = 0; i < kBones; ++i) {
    bones[i].parent = i - 1;
    bones[i].rest_local = i == 0 ? tendon_transform_identity() : At(0.1f, 0, 0);
    bones[i].virtual_tip = 0;
    animated[i] = output[i] = bones[i].rest_local;
    host[i].tag = 77;
  }
  memset(inverse_bind, 0, sizeof inverse_bind);
  for (i = 0; i < kBones; ++i) {
    inverse_bind[16 * i + 0] = inverse_bind[16 * i + 5] = inverse_bind[16 * i + 10] = inverse_bind[16 * i + 15] = 1.0f;
  }
  tendon_chain_archetype_settings_defaults(&s);
  s.bones = bones;
  s.bone_count = kBones;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_OK);
  tendon_pose_stream_defaults(&streams[0]);
  CHECK(streams[0].layout == TENDON_POSE_LOCAL_TRS && streams[0].rotation_offset == 12 && streams[0].scale_offset == -1);
  streams[0].base = host;
  streams[0].element_count = kBones;
  streams[0].byte_stride = (int32_t)sizeof(HostBone);
  streams[0].translation_offset = 0;
  streams[0].rotation_offset = 12;
  streams[0].rotation_order = TENDON_QUAT_WXYZ;
  tendon_pose_stream_defaults(&streams[1]);
  streams[1].layout = TENDON_POSE_SKINNING_MATRIX;
  streams[1].matrix_form = TENDON_MATRIX_ROW_MAJOR_3X4;
  streams[1].base = palette;
  streams[1].element_count = 4;
  streams[1].element_of_bone = joint;
  streams[1].element_of_bone_count = kBones;
  streams[1].inverse_bind = inverse_bind;
  streams[1].inverse_bind_count = 16 * kBones;
  memset(&b, 0, sizeof b);
  b.archetype = arch;
  b.root_parent_world = &root;
  b.animated_local = animated;
  b.animated_count = kBones;
  b.output_local = output;
  b.output_count = kBones;
  b.pose_streams = streams;
  b.pose_stream_count = 2;
  streams[1].base = NULL; /* refused, naming the stream and field */
  CHECK(tendon_bind_chain(w, &b, &chain) == TENDON_ERROR_NULL_BUFFER);
  CHECK(strcmp(tendon_last_error_field(), "pose_streams[1].base") == 0);
  streams[1].base = palette;
  streams[1].layout = (TendonPoseLayout)9;
  CHECK(tendon_bind_chain(w, &b, &chain) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "pose_streams[1].layout") == 0);
  streams[1].layout = TENDON_POSE_SKINNING_MATRIX;
  b.pose_stream_count = -1;
  CHECK(tendon_bind_chain(w, &b, &chain) == TENDON_ERROR_NULL_BUFFER);
  b.pose_stream_count = 2;
  CHECK(tendon_bind_chain(w, &b, &chain) == TENDON_OK && chain != 0);
  for (f = 0; f < 30; ++f) {
    root.translation.y = 1.5f + 0.2f * sinf(0.2f * (float)f);
    tendon_world_step(w, 1.0f / 60.0f, &st);
  }
  for (i = 0; i < kBones; ++i) {
    CHECK(host[i].tag == 77);
    CHECK(host[i].position[0] == output[i].translation.x && host[i].position[1] == output[i].translation.y);
    CHECK(host[i].wxyz[0] == output[i].rotation.w && host[i].wxyz[1] == output[i].rotation.x &&
          host[i].wxyz[3] == output[i].rotation.z);
  }
  /* Bone 0 sits at the root parent (identity inverse binds: the palette is the world matrix);
     bone 1 one link along bone 0's written x axis. */
  CHECK(fabsf(palette[12 * 3 + 3] - root.translation.x) < 1e-5f && fabsf(palette[12 * 3 + 7] - root.translation.y) < 1e-5f);
  CHECK(fabsf(palette[12 * 0 + 3] - (root.translation.x + 0.1f * palette[12 * 3 + 0])) < 1e-5f);
  CHECK(fabsf(palette[12 * 0 + 7] - (root.translation.y + 0.1f * palette[12 * 3 + 4])) < 1e-5f);
  CHECK(fabsf(palette[12 * 3 + 4]) > 1e-3f); /* bone 0 swung off +x */
  CHECK(tendon_unbind_chain(w, chain) == TENDON_OK);
}

/* A humanoid of 18 bones named by VRM's roles, standing with its hips at 1 m, facing +Z. */
enum { kHumanBones = 18 };
static const char* const kNames[kHumanBones] = {
    "hips",         "spine",         "neck",         "head",          "leftUpperArm",  "leftLowerArm",
    "leftHand",     "rightUpperArm", "rightLowerArm", "rightHand",    "leftUpperLeg",  "leftLowerLeg",
    "leftFoot",     "leftToes",      "rightUpperLeg", "rightLowerLeg", "rightFoot",     "rightToes"};
static const int32_t kParents[kHumanBones] = {-1, 0, 1, 2, 1, 4, 5, 1, 7, 8, 0, 10, 11, 12, 0, 14, 15, 16};
static const float kOffsets[kHumanBones][3] = {
    {0, 1.0f, 0},     {0, 0.25f, 0},    {0, 0.3f, 0},    {0, 0.1f, 0},     {0.18f, 0.25f, 0}, {0.28f, 0, 0},
    {0.25f, 0, 0},    {-0.18f, 0.25f, 0}, {-0.28f, 0, 0}, {-0.25f, 0, 0},  {0.1f, -0.05f, 0}, {0, -0.45f, 0},
    {0, -0.45f, 0},   {0, -0.05f, 0.12f}, {-0.1f, -0.05f, 0}, {0, -0.45f, 0}, {0, -0.45f, 0}, {0, -0.05f, 0.12f}};

static void TestCharacterAndRagdoll(TendonWorld* w) {
  TendonTransform rest[kHumanBones], animated[kHumanBones], output[kHumanBones], world_pose[kHumanBones];
  TendonTransform model = At(0, 0, 0);
  TendonCharacterSettings cs;
  TendonCharacterArchetypeId arch = 0;
  TendonCharacterBinding cb;
  TendonCharacterId character = 0;
  TendonCharacterState state;
  TendonCharacterEvent events[8];
  TendonVec3 up = {0, 1, 0};
  float plane_offset = 0.0f;
  TendonStaticWorldSettings sw;
  TendonRaycastHit hit;
  TendonVec3 origin = {0, 5, 0}, down = {0, -1, 0};
  TendonPartSettings parts[2];
  TendonRagdollSettings rs;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonTransform ragdoll_out[2];
  int i, f, n;

  memset(&sw, 0, sizeof sw);
  sw.plane_normals = &up;
  sw.plane_offsets = &plane_offset;
  sw.plane_count = 1;
  CHECK(tendon_build_static_world(w, &sw) == TENDON_OK);
  CHECK(tendon_raycast_static(w, origin, down, 100.0f, &hit) == 1 && fabsf(hit.distance - 5.0f) < 1e-4f);

  for (i = 0; i < kHumanBones; ++i) rest[i] = animated[i] = output[i] = world_pose[i] = At(kOffsets[i][0], kOffsets[i][1], kOffsets[i][2]);
  tendon_character_settings_defaults(&cs);
  cs.name = "c humanoid";
  cs.bone_count = kHumanBones;
  cs.bone_names = kNames;
  cs.bone_parents = kParents;
  cs.bone_rest_local = rest;
  CHECK(tendon_build_character_archetype(w, &cs, &arch) == TENDON_OK);
  CHECK(tendon_character_part_count(w, arch) >= 10);
  CHECK(tendon_find_character_part(w, arch, "Hips") >= 0 || tendon_find_character_part(w, arch, "hips") >= 0);

  tendon_character_binding_defaults(&cb);
  cb.archetype = arch;
  cb.model_world = &model;
  cb.animated_local = animated;
  cb.output_local = output;
  cb.output_world = world_pose;
  cb.bone_count = kHumanBones;
  CHECK(tendon_bind_character(w, &cb, &character) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(fabsf(world_pose[0].translation.y - 1.0f) < 1e-4f); /* inactive: the animation, in world space */
  CHECK(tendon_activate_character(w, character, NULL) == TENDON_OK);
  for (f = 0; f < 120; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_get_character_state(w, character, &state) == TENDON_OK);
  CHECK(state.active == 1 && state.total_mass > 60.0f);
  CHECK(world_pose[0].translation.y < 0.6f); /* limp and unpowered, it fell */
  for (i = 0; i < kHumanBones; ++i) CHECK(FiniteT(&output[i]) && FiniteT(&world_pose[i]));
  n = tendon_drain_character_events(w, events, 8);
  CHECK(n >= 1 && events[0].type == TENDON_EVENT_STARTED && events[0].character == character);
  CHECK(tendon_character_ragdoll(w, character) != 0);
  CHECK(tendon_deactivate_character(w, character, 0.2f, TENDON_HAND_BACK_AUTO) == TENDON_OK);
  CHECK(tendon_hit_character(w, character, 999, origin, origin, NULL) != TENDON_OK); /* no part 999 */
  {
    /* Network state: captured, through bytes, applied; stale messages and bad values refused. */
    TendonNetCharacterState ns, back;
    uint8_t msg[TENDON_MAX_NET_CHARACTER_STATE_BYTES];
    size_t msg_size = 0;
    int32_t applied = -1;
    tendon_net_character_state_defaults(&ns);
    CHECK(ns.limp_seconds > 0.39f && ns.limp_seconds < 0.41f && ns.active == 0);
    CHECK(tendon_capture_net_character_state(w, character, &ns) == TENDON_OK && ns.generation == 1 && ns.active == 0);
    ns.generation = 2;
    ns.active = 1;
    ns.strength = 0.5f;
    ns.impulse.y = 20.0f;
    CHECK(tendon_encode_net_character_state(&ns, msg, sizeof(msg), &msg_size) == TENDON_OK && msg_size == 13);
    CHECK(tendon_decode_net_character_state(msg, msg_size, &back) == TENDON_OK && back.generation == 2 && back.active == 1);
    CHECK(tendon_apply_net_character_state(w, character, &back, &applied) == TENDON_OK && applied == 1);
    CHECK(tendon_get_character_state(w, character, &state) == TENDON_OK && state.active == 1 && state.generation == 2);
    back.generation = 1; /* older */
    CHECK(tendon_apply_net_character_state(w, character, &back, &applied) == TENDON_OK && applied == 0);
    back.generation = 2;
    back.active = 0;
    CHECK(tendon_apply_net_character_state(w, character, &back, NULL) == TENDON_OK);
    CHECK(tendon_get_character_state(w, character, &state) == TENDON_OK && state.active == 0);
    CHECK(tendon_decode_net_character_state(msg, msg_size - 1, &back) == TENDON_ERROR_OUT_OF_RANGE &&
          strcmp(tendon_last_error_field(), "in.impulse") == 0);
    CHECK(tendon_decode_net_character_state(NULL, 4, &back) == TENDON_ERROR_NULL_ARGUMENT);
    CHECK(tendon_encode_net_character_state(&ns, msg, 3, &msg_size) == TENDON_ERROR_NULL_BUFFER);
    ns.strength = 2.0f;
    CHECK(tendon_encode_net_character_state(&ns, msg, sizeof(msg), &msg_size) == TENDON_ERROR_OUT_OF_RANGE &&
          strcmp(tendon_last_error_field(), "state.strength") == 0);
    CHECK(tendon_apply_net_character_state(w, character, &ns, &applied) == TENDON_ERROR_OUT_OF_RANGE && applied == 0);
    CHECK(tendon_apply_net_character_state(w, 0, &back, &applied) == TENDON_ERROR_STALE_HANDLE);
    CHECK(tendon_apply_net_character_state(w, character, NULL, &applied) == TENDON_ERROR_NULL_ARGUMENT);
    CHECK(tendon_capture_net_character_state(w, 0, &ns) == TENDON_ERROR_STALE_HANDLE);
    CHECK(tendon_capture_net_character_state(NULL, character, &ns) == TENDON_ERROR_NULL_ARGUMENT);
  }
  CHECK(tendon_unbind_character(w, character) == TENDON_OK);

  tendon_part_settings_defaults(&parts[0]);
  tendon_part_settings_defaults(&parts[1]);
  parts[0].name = "upper";
  parts[0].pose = At(0, 1.5f, 0);
  parts[0].mass = 3.0f;
  parts[1].name = "lower";
  parts[1].parent = 0;
  parts[1].pose = At(0, 1.2f, 0);
  parts[1].mass = 2.0f;
  parts[1].joint_anchor.y = 1.35f;
  tendon_ragdoll_settings_defaults(&rs);
  rs.name = "c limb";
  rs.parts = parts;
  rs.part_count = 2;
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  CHECK(tendon_ragdoll_part_count(w, rarch) == 2);
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = ragdoll_out;
  rb.output_part_count = 2;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  for (f = 0; f < 120; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(ragdoll_out[0].translation.y < 0.5f && ragdoll_out[0].translation.y > 0.0f); /* fell onto the plane */
  CHECK(tendon_raycast_ragdolls(w, (TendonVec3){0, 3, 0}, down, 10.0f, &hit) == 1 && hit.ragdoll == ragdoll);
  CHECK(tendon_unbind_ragdoll(w, ragdoll) == TENDON_OK);
}

static int Field(const char* field) { return strcmp(tendon_last_error_field(), field) == 0; }

static void TestVrm(TendonWorld* w) {
  char path[1024];
  const char* data = getenv("TENDON_SHARED_DATA");
  TendonVrmKindId kind = 0;
  TendonVrmAvatarId avatar = 0;
  TendonVrmAvatarBuffers buf;
  TendonVrmOptions options;
  TendonTransform frames[32];
  TendonCharacterArchetypeId archetype;
  FILE* probe;
  int32_t f, parts;
  int i, moved = 0;
  CHECK(tendon_load_vrm_kind(w, "/nonexistent/model.vrm", NULL, &kind) == TENDON_ERROR_IO);
  CHECK(strstr(tendon_last_error(), "/nonexistent/model.vrm") != NULL);
  CHECK(tendon_load_vrm_kind_from_memory(w, "not a glb", 9, "junk.glb", NULL, &kind) != TENDON_OK);
  if (data == NULL) return;
  snprintf(path, sizeof path, "%s/vrm/godette/Godette_vrm_v4.vrm", data);
  probe = fopen(path, "rb");
  if (probe == NULL) {
    printf("c_host_test: %s not found, the VRM part is skipped\n", path);
    return;
  }
  fclose(probe);
  CHECK(tendon_load_vrm_kind(w, path, NULL, &kind) == TENDON_OK);
  CHECK(tendon_vrm_kind_joint_count(w, kind) == 16 && tendon_vrm_kind_bone_count(w, kind) == 71);
  /* The kind's character archetype: a humanoid's parts; none for a stale kind or a NULL world. */
  archetype = tendon_vrm_kind_character_archetype(w, kind);
  parts = tendon_character_part_count(w, archetype);
  CHECK(archetype != 0 && parts > 8 && parts <= 32);
  CHECK(tendon_vrm_kind_character_archetype(w, kind + ((uint64_t)1 << 32)) == 0);
  CHECK(tendon_vrm_kind_character_archetype(NULL, kind) == 0);
  /* inactive_bodies: an enum, refused by field when out of range. */
  tendon_vrm_options_defaults(&options);
  CHECK(options.inactive_bodies == TENDON_INACTIVE_BODIES_NONE);
  options.inactive_bodies = (TendonInactiveBodies)7;
  CHECK(tendon_load_vrm_kind(w, path, &options, &kind) == TENDON_ERROR_OUT_OF_RANGE && Field("options.inactive_bodies"));
  CHECK(tendon_bind_vrm_avatar(w, kind, At(5, 0, 0), &avatar) == TENDON_OK);
  CHECK(tendon_vrm_avatar_buffers(w, avatar, &buf) == TENDON_OK && buf.bone_count == 71 && buf.character != 0);
  for (f = 0; f < 60; ++f) {
    buf.model_world->translation.x = 5.0f + 0.5f * sinf(0.2f * (float)f);
    tendon_world_step(w, 1.0f / 60.0f, NULL);
  }
  for (i = 0; i < buf.bone_count; ++i) {
    CHECK(FiniteT(&buf.output_local[i]));
    moved += memcmp(&buf.output_local[i].rotation, &buf.animated_local[i].rotation, sizeof(TendonQuat)) != 0;
  }
  CHECK(moved >= 8); /* the springs' bones swing away from the animation */
  /* An active character's ragdoll: its part frames, which no host buffer shows. */
  CHECK(tendon_activate_character(w, buf.character, NULL) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_get_ragdoll_part_transforms(w, tendon_character_ragdoll(w, buf.character), frames, 32, &f) == TENDON_OK);
  CHECK(f == parts);
  CHECK(FiniteT(&frames[0]) && fabsf(frames[0].translation.x - 5.0f) < 1.0f && frames[0].translation.y > 0.3f);
  /* output_world is what the frame's lanes read: no writing it while a frame is in flight. */
  CHECK(tendon_vrm_avatar_update_world(w, avatar) == TENDON_OK);
  CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
  CHECK(tendon_vrm_avatar_update_world(w, avatar) == TENDON_ERROR_REENTRANT);
  tendon_world_finish_step(w, NULL);
  CHECK(tendon_vrm_avatar_update_world(w, avatar) == TENDON_OK);
  CHECK(tendon_unbind_vrm_avatar(w, avatar) == TENDON_OK);
  CHECK(tendon_vrm_avatar_buffers(w, avatar, &buf) == TENDON_ERROR_STALE_HANDLE);
}

/* Device profiles: calibrate, save, load, and a world that takes the budgets left unset. */
static void TestDeviceProfile(void) {
  TendonDeviceProfile* profile = NULL;
  TendonDeviceProfile* loaded = NULL;
  TendonDeviceBudgets a, b;
  TendonWorldSettings ws, applied;
  TendonWorld* w = NULL;
  FILE* f;
  const char* path = "/tmp/tendon_c_host_test_profile.json";
  CHECK(tendon_device_profile_calibrate(0.0, &profile) == TENDON_ERROR_OUT_OF_RANGE && profile == NULL);
  CHECK(strcmp(tendon_last_error_field(), "max_seconds") == 0);
  CHECK(tendon_device_profile_calibrate(0.2, &profile) == TENDON_OK && profile != NULL);
  CHECK(tendon_device_profile_budgets(profile, &a) == TENDON_OK);
  CHECK(a.tier >= TENDON_TIER_LOW && a.tier <= TENDON_TIER_ULTRA && a.max_chains >= 1 && a.useful_workers == 1);
  CHECK(a.compute >= 0.25 && a.compute <= 4.0 && a.fixed_hz >= 30.0f);
  CHECK(tendon_device_profile_save(profile, path) == TENDON_OK);
  CHECK(tendon_device_profile_load(path, &loaded) == TENDON_OK && loaded != NULL);
  CHECK(tendon_device_profile_budgets(loaded, &b) == TENDON_OK);
  CHECK(b.max_chains == a.max_chains && b.tier == a.tier && b.compute == a.compute && b.best_isa == a.best_isa);
  tendon_world_settings_defaults(&ws);
  ws.device_profile = loaded;
  ws.max_distance = 33.0f; /* the host's: stays */
  CHECK(tendon_world_create(&ws, &w) == TENDON_OK);
  tendon_world_get_settings(w, &applied);
  CHECK(applied.max_chains == a.max_chains && applied.max_distance == 33.0f && applied.device_profile == NULL);
  CHECK((applied.from_device_profile & TENDON_PROFILED_MAX_CHAINS) != 0);
  CHECK((applied.from_device_profile & TENDON_PROFILED_MAX_DISTANCE) == 0);
  tendon_world_destroy(w);
  f = fopen(path, "wb");
  CHECK(f != NULL);
  fputs("{\"format\": \"tendon-device-profile\", \"version\": 7}", f);
  fclose(f);
  tendon_device_profile_destroy(loaded);
  loaded = NULL;
  CHECK(tendon_device_profile_load(path, &loaded) == TENDON_ERROR_OUT_OF_RANGE && loaded == NULL);
  CHECK(strcmp(tendon_last_error_field(), "version") == 0 && strstr(tendon_last_error(), path) != NULL);
  remove(path);
  tendon_device_profile_destroy(profile);
  tendon_device_profile_destroy(NULL);
}

/* ---- the calls of issue 37's first point: each with its behaviour and its refusals ---- */

static TendonWorld* NewWorld(void) {
  TendonWorldSettings ws;
  TendonWorld* w = NULL;
  tendon_world_settings_defaults(&ws);
  ws.max_distance = INFINITY;
  ws.render_interpolation = 0;
  CHECK(tendon_world_create(&ws, &w) == TENDON_OK && w != NULL);
  return w;
}
static TendonQuat AboutZ(float radians) {
  TendonQuat q;
  q.x = q.y = 0.0f;
  q.z = sinf(0.5f * radians);
  q.w = cosf(0.5f * radians);
  return q;
}

/* A two-part limb hanging from its upper part (as TestCharacterAndRagdoll's), with motors. */
static void LimbSettings(TendonPartSettings parts[2], TendonRagdollSettings* rs) {
  tendon_part_settings_defaults(&parts[0]);
  tendon_part_settings_defaults(&parts[1]);
  parts[0].name = "upper";
  parts[0].pose = At(0, 1.5f, 0);
  parts[0].mass = 3.0f;
  parts[1].name = "lower";
  parts[1].parent = 0;
  parts[1].pose = At(0, 1.2f, 0);
  parts[1].mass = 2.0f;
  parts[1].joint_anchor.y = 1.35f;
  parts[1].motor_frequency_hz = 4.0f;
  parts[1].motor_max_torque_per_kg = 200.0f;
  tendon_ragdoll_settings_defaults(rs);
  rs->name = "c limb";
  rs->parts = parts;
  rs->part_count = 2;
}

/* Contact events: a crate dropped 2 m onto a plane reports one began event at its fall speed;
   the settings' defaults and refusals; capacity and draining. */
static void TestContactEvents(void) {
  TendonWorldSettings ws;
  TendonWorld* w = NULL;
  TendonStaticWorldSettings sw;
  TendonVec3 up = {0, 1, 0};
  float plane_offset = 0.0f;
  TendonPartSettings part;
  TendonRagdollSettings rs;
  TendonContactEventSettings defaults;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonTransform out[1];
  TendonContactEvent events[4];
  TendonFrameStats st;
  int f, n = 0;

  tendon_contact_event_settings_defaults(&defaults);
  CHECK(defaults.enabled == 1 && defaults.report_ended == 0 && defaults.min_normal_speed == 1.0f &&
        defaults.min_impulse > 0.0f);
  tendon_contact_event_settings_defaults(NULL); /* a no-op */
  tendon_world_settings_defaults(&ws);
  CHECK(ws.contact_event_capacity == 256);
  ws.contact_event_capacity = -1;
  CHECK(tendon_world_create(&ws, &w) == TENDON_ERROR_OUT_OF_RANGE && w == NULL && Field("contact_event_capacity"));
  tendon_world_settings_defaults(&ws);
  ws.render_interpolation = 0;
  CHECK(tendon_world_create(&ws, &w) == TENDON_OK && w != NULL);
  memset(&sw, 0, sizeof sw);
  sw.plane_normals = &up;
  sw.plane_offsets = &plane_offset;
  sw.plane_count = 1;
  CHECK(tendon_build_static_world(w, &sw) == TENDON_OK);

  tendon_part_settings_defaults(&part);
  part.shape = TENDON_PART_BOX;
  part.half_extents.x = part.half_extents.y = part.half_extents.z = 0.25f;
  part.mass = 10.0f;
  tendon_ragdoll_settings_defaults(&rs);
  CHECK(rs.contact_events.enabled == 1 && rs.contact_events.min_normal_speed == defaults.min_normal_speed);
  rs.name = "c crate";
  rs.parts = &part;
  rs.part_count = 1;
  rs.contact_events.min_impulse = -1.0f;
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_ERROR_OUT_OF_RANGE &&
        Field("contact_events.min_impulse"));
  rs.contact_events.min_impulse = defaults.min_impulse;
  rs.contact_events.min_normal_speed = NAN;
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_ERROR_NOT_FINITE &&
        Field("contact_events.min_normal_speed"));
  rs.contact_events.min_normal_speed = defaults.min_normal_speed;
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.placement = At(0, 2.25f, 0);
  rb.output_parts = out;
  rb.output_part_count = 1;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  /* Refusals move nothing (and keep the queue). */
  CHECK(tendon_world_drain_contact_events(NULL, events, 4) == 0);
  CHECK(tendon_world_drain_contact_events(w, NULL, 4) == 0);
  CHECK(tendon_world_drain_contact_events(w, events, 0) == 0);
  CHECK(tendon_world_drain_contact_events(w, events, -3) == 0);
  for (f = 0; f < 120 && n == 0; ++f) {
    tendon_world_step(w, 1.0f / 60.0f, &st);
    n = tendon_world_drain_contact_events(w, events, 4);
  }
  CHECK(n == 1 && st.contact_events == 1 && st.dropped_contact_events == 0);
  CHECK(events[0].kind == TENDON_CONTACT_BEGAN && events[0].ragdoll == ragdoll && events[0].part == 0);
  CHECK(events[0].b_kind == TENDON_CONTACT_SIDE_STATIC_WORLD && events[0].character == 0);
  CHECK(fabsf(events[0].normal.y - 1.0f) < 1e-4f && fabsf(events[0].normal_speed - 6.26f) < 0.2f);
  CHECK(events[0].impulse > 0.0f && events[0].time > 0.5);
  for (f = 0; f < 60; ++f) {
    tendon_world_step(w, 1.0f / 60.0f, &st);
    CHECK(tendon_world_drain_contact_events(w, events, 4) == 0); /* resting: nothing more */
  }
  tendon_world_destroy(w);
}

static void TestRagdollControls(void) {
  TendonWorld* w = NewWorld();
  TendonPartSettings parts[2];
  TendonRagdollSettings rs;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0, stale;
  TendonRagdollPartInfo info0, info1;
  TendonTransform out[2], root = At(0, 1.5f, 0), states[2], frames[2];
  int32_t frame_count;
  TendonVec3 lin[2], ang[2], zero = {0, 0, 0}, push = {5, 0, 0};
  TendonQuat targets[2];
  int f;

  LimbSettings(parts, &rs);
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  /* Part info: the masses as built (the limb's 5 kg), a shape with volume. */
  CHECK(tendon_get_ragdoll_part_info(w, rarch, 0, &info0) == TENDON_OK);
  CHECK(tendon_get_ragdoll_part_info(w, rarch, 1, &info1) == TENDON_OK);
  CHECK(fabsf(info0.mass + info1.mass - 5.0f) < 1e-3f && info0.volume > 0.0f && info0.principal_inertia.x > 0.0f);
  CHECK(fabsf(info0.body_pose.translation.y - 1.5f) < 0.2f);
  CHECK(tendon_get_ragdoll_part_info(w, rarch, 2, &info0) == TENDON_ERROR_BAD_REFERENCE && Field("part"));
  CHECK(tendon_get_ragdoll_part_info(w, rarch, 0, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_get_ragdoll_part_info(w, rarch + ((uint64_t)1 << 32), 0, &info0) == TENDON_ERROR_STALE_HANDLE);

  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = out;
  rb.output_part_count = 2;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  CHECK(tendon_ragdoll_is_valid(w, ragdoll) == 1 && tendon_ragdoll_is_enabled(w, ragdoll) == 1);
  CHECK(tendon_character_of_ragdoll(w, ragdoll) == 0); /* a plain ragdoll has no character */

  /* A part's velocity shows in the velocities at once (no step between). */
  CHECK(tendon_set_ragdoll_part_velocity(w, ragdoll, 0, push, zero) == TENDON_OK);
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, lin, ang, 2) == TENDON_OK);
  CHECK(fabsf(lin[0].x - 5.0f) < 1e-3f && fabsf(lin[1].x) < 1e-3f);
  CHECK(tendon_set_ragdoll_part_velocity(w, ragdoll, 7, push, zero) != TENDON_OK && Field("part"));
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, lin, ang, 1) == TENDON_ERROR_NULL_BUFFER && Field("linear"));
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, NULL, ang, 2) == TENDON_ERROR_NULL_ARGUMENT && Field("linear"));
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, lin, ang, -1) == TENDON_ERROR_NULL_BUFFER && Field("count"));

  /* Part states: the whole body put 10 m up, at rest. */
  states[0] = At(0, 10.0f, 0);
  states[1] = At(0, 9.7f, 0);
  CHECK(tendon_set_ragdoll_part_states(w, ragdoll, states, 2, NULL, 0, NULL, 0) == TENDON_OK);
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, lin, ang, 2) == TENDON_OK && fabsf(lin[0].x) < 1e-6f);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(out[0].translation.y > 9.9f && out[0].translation.y < 10.0f); /* falling from 10 m */
  /* The part frames, read back: what the step wrote into output_parts. */
  frame_count = 0;
  CHECK(tendon_get_ragdoll_part_transforms(w, ragdoll, frames, 2, &frame_count) == TENDON_OK && frame_count == 2);
  CHECK(memcmp(frames, out, sizeof(frames)) == 0);
  CHECK(tendon_get_ragdoll_part_transforms(w, ragdoll, frames, 2, NULL) == TENDON_OK);
  CHECK(tendon_get_ragdoll_part_transforms(w, ragdoll, frames, 1, NULL) == TENDON_ERROR_NULL_BUFFER && Field("out"));
  CHECK(tendon_get_ragdoll_part_transforms(w, ragdoll, NULL, 2, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_get_ragdoll_part_transforms(w, ragdoll, frames, -1, NULL) == TENDON_ERROR_NULL_BUFFER && Field("capacity"));
  CHECK(tendon_get_ragdoll_part_transforms(NULL, ragdoll, frames, 2, NULL) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_set_ragdoll_part_states(w, ragdoll, states, 1, NULL, 0, NULL, 0) == TENDON_ERROR_NULL_BUFFER && Field("parts"));
  CHECK(tendon_set_ragdoll_part_states(w, ragdoll, NULL, 2, NULL, 0, NULL, 0) == TENDON_ERROR_NULL_BUFFER && Field("parts"));
  CHECK(tendon_set_ragdoll_part_states(w, ragdoll, states, 2, lin, 1, NULL, 0) == TENDON_ERROR_NULL_BUFFER && Field("linear"));

  /* A kinematic root holds the upper part where the host says (back in the build pose, at
     rest, the lower part hangs straight under it); NULL lets it fall again. */
  CHECK(tendon_reserve_ragdoll_kinematic_toggle(w, rarch, 1) == TENDON_OK);
  CHECK(tendon_reserve_ragdoll_kinematic_toggle(w, 0, 1) == TENDON_ERROR_STALE_HANDLE && Field("archetype"));
  CHECK(tendon_reserve_ragdoll_kinematic_toggle(w, rarch, 1 << 30) == TENDON_ERROR_CAPACITY && Field("instances"));
  states[0] = At(0, 1.5f, 0);
  states[1] = At(0, 1.2f, 0);
  CHECK(tendon_set_ragdoll_part_states(w, ragdoll, states, 2, NULL, 0, NULL, 0) == TENDON_OK);
  CHECK(tendon_set_ragdoll_kinematic_root(w, ragdoll, &root) == TENDON_OK);
  for (f = 0; f < 60; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(fabsf(out[0].translation.y - 1.5f) < 1e-3f && fabsf(out[0].translation.x) < 1e-3f);
  CHECK(fabsf(out[1].rotation.z) < 0.05f); /* the lower part hangs straight */

  /* Motor targets bend the lower part 40 degrees about z against gravity (a powered body
     may not sleep: at rest it had fallen asleep, and asleep nothing moves it). */
  CHECK(tendon_ragdoll_is_asleep(w, ragdoll) == 1);
  CHECK(tendon_set_ragdoll_sleeping(w, ragdoll, 0, 0, INFINITY) == TENDON_OK && tendon_ragdoll_is_asleep(w, ragdoll) == 0);
  targets[0] = AboutZ(0.0f);
  targets[1] = AboutZ(0.6981317f);
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, targets, 2, 1.0f, NULL, 0) == TENDON_OK);
  for (f = 0; f < 120; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(fabsf(out[1].rotation.z) > 0.25f && fabsf(out[1].rotation.z) < 0.45f); /* sin(20 degrees) = 0.34 */
  root.translation.x = 1.0f;
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(fabsf(out[0].translation.x - 1.0f) < 1e-3f); /* the root follows the host's frame */
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, targets, 1, 1.0f, NULL, 0) == TENDON_ERROR_NULL_BUFFER &&
        Field("local_rotations"));
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, NULL, 2, 1.0f, NULL, 0) == TENDON_ERROR_NULL_BUFFER &&
        Field("local_rotations"));
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, targets, 2, 1.0f, NULL, 3) == TENDON_ERROR_NULL_BUFFER &&
        Field("local_angular_velocities"));
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, targets, 2, 0.0f, NULL, 0) == TENDON_OK);
  CHECK(tendon_set_ragdoll_kinematic_root(w, ragdoll, NULL) == TENDON_OK);
  for (f = 0; f < 10; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(out[0].translation.y < 1.45f); /* dynamic again: it falls */

  /* Sleeping: with sleep off it never sleeps; a freeze clock freezes it mid-fall. */
  CHECK(tendon_set_ragdoll_sleeping(w, ragdoll, 0, 0, INFINITY) == TENDON_OK);
  CHECK(tendon_ragdoll_is_asleep(w, ragdoll) == 0 && tendon_ragdoll_is_frozen(w, ragdoll) == 0);
  CHECK(tendon_set_ragdoll_sleeping(w, ragdoll, 1, 0, 0.25f) == TENDON_OK);
  for (f = 0; f < 30; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_ragdoll_is_frozen(w, ragdoll) == 1);
  CHECK(tendon_set_ragdoll_sleeping(w, ragdoll, 0, 0, INFINITY) == TENDON_OK); /* sleep off wakes it */
  CHECK(tendon_ragdoll_is_frozen(w, ragdoll) == 0 && tendon_ragdoll_is_asleep(w, ragdoll) == 0);
  CHECK(tendon_set_ragdoll_sleeping(w, ragdoll, 1, 0, -1.0f) != TENDON_OK);

  /* While a frame is in flight every control is refused (and says so). */
  CHECK(tendon_world_frame_in_flight(w) == 0);
  CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
  CHECK(tendon_world_frame_in_flight(w) == 1);
  CHECK(tendon_set_ragdoll_part_velocity(w, ragdoll, 0, push, zero) == TENDON_ERROR_REENTRANT);
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, targets, 2, 1.0f, NULL, 0) == TENDON_ERROR_REENTRANT);
  CHECK(tendon_remove_ragdoll_archetype(w, rarch) == TENDON_ERROR_REENTRANT);
  tendon_world_finish_step(w, NULL);
  CHECK(tendon_world_frame_in_flight(w) == 0 && tendon_world_frame_in_flight(NULL) == 0);

  /* Removing: refused while an instance is bound; after, the id is stale everywhere. */
  CHECK(tendon_remove_ragdoll_archetype(w, rarch) == TENDON_ERROR_IN_USE);
  stale = ragdoll;
  CHECK(tendon_unbind_ragdoll(w, ragdoll) == TENDON_OK);
  CHECK(tendon_ragdoll_is_valid(w, stale) == 0 && tendon_ragdoll_is_frozen(w, stale) == 0);
  CHECK(tendon_set_ragdoll_part_velocity(w, stale, 0, push, zero) == TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  CHECK(tendon_set_ragdoll_sleeping(w, stale, 1, 0, INFINITY) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_set_ragdoll_kinematic_root(w, stale, &root) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_get_ragdoll_velocities(w, stale, lin, ang, 2) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_get_ragdoll_part_transforms(w, stale, frames, 2, NULL) == TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  CHECK(tendon_remove_ragdoll_archetype(w, rarch) == TENDON_OK);
  CHECK(tendon_ragdoll_part_count(w, rarch) == 0);
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_remove_ragdoll_archetype(w, rarch) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_remove_ragdoll_archetype(NULL, rarch) == TENDON_ERROR_NULL_ARGUMENT);
  tendon_world_destroy(w);
}

/* Grab, drag, hold, push and throw: a drive lifts the limb's lower part toward a target
   and lets go past its break distance; acceleration, part forces and a throw; every
   refusal by code and field. */
static void TestPartDrives(void) {
  TendonWorld* w = NewWorld();
  TendonPartSettings parts[2];
  TendonRagdollSettings rs;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonPartDriveSettings ds;
  TendonPartDriveId drive = 0, stale = 0;
  TendonPartDriveState st;
  TendonFrameStats stats;
  TendonTransform out[2];
  TendonVec3 zero = {0, 0, 0}, target = {0, 2.5f, 0}, thrown, bad = {NAN, 0, 0};
  TendonContactEvent events[8];
  int f, n, broken_events;

  LimbSettings(parts, &rs);
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = out;
  rb.output_part_count = 2;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);

  tendon_part_drive_settings_defaults(&ds);
  CHECK(ds.part == 0 && ds.response_time > 0.0f && isinf(ds.max_force) && ds.damping_ratio == 1.0f && isinf(ds.break_distance));
  ds.part = 1;
  ds.target = target;
  ds.response_time = 0.2f;
  ds.break_distance = 2.0f;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_OK && drive != 0);
  CHECK(tendon_part_drive_is_valid(w, drive) == 1 && tendon_part_drive_is_valid(NULL, drive) == 0);
  for (f = 0; f < 60; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_get_part_drive_state(w, drive, &st) == TENDON_OK);
  CHECK(st.active == 1 && st.broken == 0 && st.distance < 0.1f && st.force > 0.0f && st.target.y == 2.5f);
  CHECK(out[1].translation.y > 2.3f); /* lifted to the target, 1.3 m above where it hung */
  /* Jerked 5 m away: past its 2 m break distance by the end of the frame. */
  target.x = 5.0f;
  CHECK(tendon_set_part_drive_target(w, drive, target) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, &stats);
  CHECK(stats.broken_drives == 1);
  CHECK(tendon_get_part_drive_state(w, drive, &st) == TENDON_OK && st.broken == 1 && st.active == 0 && st.force == 0.0f);
  /* ... and queued one TENDON_CONTACT_DRIVE_BROKEN event naming it, its part and ragdoll. */
  n = tendon_world_drain_contact_events(w, events, 8);
  for (f = 0, broken_events = 0; f < n; ++f) {
    if (events[f].kind != TENDON_CONTACT_DRIVE_BROKEN) continue;
    ++broken_events;
    CHECK(events[f].b_kind == TENDON_CONTACT_SIDE_PART_DRIVE && events[f].b_drive == drive &&
          events[f].ragdoll == ragdoll && events[f].part == 1 && events[f].distance == st.distance &&
          events[f].distance > 2.0f);
  }
  CHECK(broken_events == 1);
  tendon_world_step(w, 1.0f / 60.0f, &stats);
  CHECK(stats.broken_drives == 0); /* once */
  n = tendon_world_drain_contact_events(w, events, 8);
  for (f = 0; f < n; ++f) CHECK(events[f].kind != TENDON_CONTACT_DRIVE_BROKEN);
  stale = drive;
  CHECK(tendon_remove_part_drive(w, drive) == TENDON_OK && tendon_part_drive_is_valid(w, stale) == 0);

  /* Refusals, by code and field. */
  CHECK(tendon_add_part_drive(w, ragdoll, NULL, &drive) == TENDON_ERROR_NULL_ARGUMENT && Field("settings"));
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_add_part_drive(NULL, ragdoll, &ds, &drive) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_add_part_drive(w, 0, &ds, &drive) == TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  ds.part = 2;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_ERROR_BAD_REFERENCE && Field("settings.part"));
  ds.part = 1;
  ds.response_time = 0.0f;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_ERROR_OUT_OF_RANGE && Field("settings.response_time"));
  ds.response_time = 0.2f;
  ds.max_force = -1.0f;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_ERROR_OUT_OF_RANGE && Field("settings.max_force"));
  ds.max_force = INFINITY;
  ds.damping_ratio = NAN;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_ERROR_NOT_FINITE && Field("settings.damping_ratio"));
  ds.damping_ratio = 1.0f;
  ds.break_distance = 0.0f;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_ERROR_OUT_OF_RANGE && Field("settings.break_distance"));
  ds.break_distance = INFINITY;
  ds.target = bad;
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_ERROR_NOT_FINITE && Field("settings.target"));
  ds.target = target;
  CHECK(tendon_set_part_drive_target(w, stale, target) == TENDON_ERROR_STALE_HANDLE && Field("drive"));
  CHECK(tendon_remove_part_drive(w, stale) == TENDON_ERROR_STALE_HANDLE && Field("drive"));
  CHECK(tendon_get_part_drive_state(w, stale, &st) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_OK);
  CHECK(tendon_get_part_drive_state(w, drive, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_set_part_drive_target(w, drive, bad) == TENDON_ERROR_NOT_FINITE && Field("target"));

  /* Acceleration, part forces, the throw. */
  CHECK(tendon_set_ragdoll_acceleration(w, ragdoll, bad) == TENDON_ERROR_NOT_FINITE && Field("acceleration"));
  CHECK(tendon_set_ragdoll_acceleration(w, 0, zero) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_set_ragdoll_acceleration(w, ragdoll, zero) == TENDON_OK);
  CHECK(tendon_set_ragdoll_part_force(w, ragdoll, 5, target) == TENDON_ERROR_BAD_REFERENCE && Field("part"));
  CHECK(tendon_set_ragdoll_part_force(w, ragdoll, 0, bad) == TENDON_ERROR_NOT_FINITE && Field("force"));
  CHECK(tendon_set_ragdoll_part_force(w, ragdoll, 0, target) == TENDON_OK);
  CHECK(tendon_set_ragdoll_part_force(w, ragdoll, 0, zero) == TENDON_OK);
  CHECK(tendon_remove_part_drive(w, drive) == TENDON_OK);
  target.x = 0.0f;
  target.y = 0.0f;
  target.z = 2.0f;
  CHECK(tendon_throw_ragdoll(w, ragdoll, target, 50.0f, 1.0f, 20.0f, &thrown) == TENDON_OK);
  CHECK(fabsf(thrown.z - 10.0f) < 1e-3f && thrown.x == 0.0f); /* 50 N s over the limb's 5 kg */
  CHECK(tendon_throw_ragdoll(w, ragdoll, zero, 50.0f, 1.0f, 20.0f, NULL) == TENDON_ERROR_OUT_OF_RANGE && Field("direction"));
  CHECK(tendon_throw_ragdoll(w, ragdoll, target, -1.0f, 1.0f, 20.0f, NULL) == TENDON_ERROR_OUT_OF_RANGE && Field("strength"));
  CHECK(tendon_throw_ragdoll(w, ragdoll, target, 1.0f, 5.0f, 2.0f, NULL) == TENDON_ERROR_OUT_OF_RANGE && Field("max_speed"));
  CHECK(tendon_throw_ragdoll(w, 0, target, 1.0f, 0.0f, 2.0f, NULL) == TENDON_ERROR_STALE_HANDLE);
  /* Unbinding takes its drives. */
  CHECK(tendon_add_part_drive(w, ragdoll, &ds, &drive) == TENDON_OK);
  CHECK(tendon_unbind_ragdoll(w, ragdoll) == TENDON_OK && tendon_part_drive_is_valid(w, drive) == 0);
  tendon_world_destroy(w);
}

/* Host callbacks: the wind sampler, called once per frame, blows the chain; the predicate
 * skips the chain it is told to. */
static int g_wind_calls = 0, g_wind_nan = 0, g_nested = -1;
static TendonWorld* g_callback_world = NULL;
static TendonVec3 Gale(double time_seconds, void* user) {
  TendonVec3 v = {30.0f, 0.0f, 0.0f};
  (void)time_seconds;
  ++g_wind_calls;
  ++*(int*)user;
  if (g_callback_world != NULL) g_nested = (int)tendon_world_set_wind_sampler(g_callback_world, NULL, NULL);
  if (g_wind_nan) v.x = NAN;
  return v;
}
static int g_mark_result = -1;
static void DetachWindOnMark(uint64_t frame, void* user) {
  (void)frame;
  g_mark_result = (int)tendon_world_set_wind_sampler((TendonWorld*)user, NULL, NULL);
}
static int32_t OnlyOthers(TendonChainId chain, TendonVec3 root_world, void* user) {
  (void)root_world;
  return chain != *(const TendonChainId*)user;
}

static void TestCallbacks(void) {
  TendonWorld* w = NewWorld();
  enum { kBones = 4 };
  TendonChainBone bones[kBones];
  TendonChainArchetypeSettings s;
  TendonChainArchetypeId arch = 0;
  TendonTransform roots[2], animated[2][kBones], output[2][kBones];
  TendonChainBinding b;
  TendonChainId chains[2] = {0, 0}, skipped;
  TendonVec3 nodes[kBones];
  TendonFrameStats st;
  int i, k, f, user_calls = 0;
  for (i = 0; i < kBones; ++i) {
    tendon_chain_bone_defaults(&bones[i]);
    bones[i].parent = i - 1;
    bones[i].rest_local = i == 0 ? tendon_transform_identity() : At(0, -0.1f, 0);
  }
  tendon_chain_archetype_settings_defaults(&s);
  s.bones = bones;
  s.bone_count = kBones;
  CHECK(tendon_build_chain_archetype(w, &s, &arch) == TENDON_OK && tendon_chain_bone_count(w, arch) == kBones);
  for (k = 0; k < 2; ++k) {
    roots[k] = At(2.0f * (float)k, 2.0f, 0);
    for (i = 0; i < kBones; ++i) animated[k][i] = output[k][i] = bones[i].rest_local;
    tendon_chain_binding_defaults(&b);
    CHECK(b.archetype == 0 && b.animated_local == NULL && b.pose_stream_count == 0);
    b.archetype = arch;
    b.root_parent_world = &roots[k];
    b.animated_local = animated[k];
    b.animated_count = kBones;
    b.output_local = output[k];
    b.output_count = kBones;
    CHECK(tendon_bind_chain(w, &b, &chains[k]) == TENDON_OK && tendon_chain_is_valid(w, chains[k]) == 1);
  }
  for (f = 0; f < 30; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_get_chain_node_positions(w, chains[0], nodes, kBones) == TENDON_OK);
  CHECK(fabsf(nodes[kBones - 1].x - roots[0].translation.x) < 1e-3f); /* calm: it hangs straight */

  CHECK(tendon_world_set_wind_sampler(NULL, Gale, NULL) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_world_set_wind_sampler(w, Gale, &user_calls) == TENDON_OK);
  for (f = 0; f < 60; ++f) tendon_world_step(w, 1.0f / 60.0f, &st);
  CHECK(g_wind_calls >= 58 && g_wind_calls <= 60 && user_calls == g_wind_calls); /* once a frame, with its context */
  CHECK(tendon_get_chain_node_positions(w, chains[0], nodes, kBones) == TENDON_OK);
  CHECK(nodes[kBones - 1].x - roots[0].translation.x > 0.05f); /* blown downwind */
  /* From inside the callback (and mid-frame) a callback cannot change. */
  g_callback_world = w;
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  g_callback_world = NULL;
  CHECK(g_nested == TENDON_ERROR_REENTRANT);
  CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
  CHECK(tendon_world_set_wind_sampler(w, NULL, NULL) == TENDON_ERROR_REENTRANT && Field("world"));
  CHECK(tendon_world_set_simulate_predicate(w, NULL, NULL) == TENDON_ERROR_REENTRANT);
  tendon_world_finish_step(w, NULL);
  /* Nor from a profiler hook at the end of finish_step (the World would not take it, and
     the sampler set must stay the one the World calls). */
  {
    TendonProfilerHooks hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.frame_mark = DetachWindOnMark;
    hooks.user_context = w;
    CHECK(tendon_world_set_profiler_hooks(w, &hooks) == TENDON_OK);
    CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
    tendon_world_finish_step(w, NULL);
    CHECK(g_mark_result == TENDON_ERROR_REENTRANT);
    g_mark_result = -1;
    tendon_world_step(w, 1.0f / 60.0f, NULL);
    CHECK(g_mark_result == TENDON_ERROR_REENTRANT);
    CHECK(tendon_world_set_profiler_hooks(w, NULL) == TENDON_OK);
    k = g_wind_calls;
    tendon_world_step(w, 1.0f / 60.0f, NULL);
    CHECK(g_wind_calls == k + 1); /* still the gale */
  }
  /* A non-finite wind is no wind that frame, counted as bad input. */
  g_wind_nan = 1;
  tendon_world_step(w, 1.0f / 60.0f, &st);
  g_wind_nan = 0;
  CHECK(st.snapped_bad_input >= 1 && st.reset_non_finite == 0);
  CHECK(tendon_world_set_wind_sampler(w, NULL, NULL) == TENDON_OK);
  k = g_wind_calls;
  for (f = 0; f < 5; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(g_wind_calls == k); /* detached */

  /* The predicate: chain 0 skipped, chain 1 simulated. */
  skipped = chains[0];
  CHECK(tendon_world_set_simulate_predicate(w, OnlyOthers, &skipped) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, &st);
  CHECK(tendon_chain_is_simulated(w, chains[0]) == 0 && tendon_chain_is_simulated(w, chains[1]) == 1);
  CHECK(st.simulated_chains == 1);
  CHECK(tendon_world_set_simulate_predicate(w, NULL, NULL) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, &st);
  CHECK(tendon_chain_is_simulated(w, chains[0]) == 1 && st.simulated_chains == 2);

  /* Removing a chain archetype: refused while bound, then stale. */
  CHECK(tendon_remove_chain_archetype(w, arch) == TENDON_ERROR_IN_USE);
  CHECK(tendon_unbind_chain(w, chains[0]) == TENDON_OK && tendon_unbind_chain(w, chains[1]) == TENDON_OK);
  CHECK(tendon_chain_is_valid(w, chains[0]) == 0);
  CHECK(tendon_remove_chain_archetype(w, arch) == TENDON_OK && tendon_chain_bone_count(w, arch) == 0);
  CHECK(tendon_bind_chain(w, &b, &chains[0]) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_remove_chain_archetype(w, arch) == TENDON_ERROR_STALE_HANDLE);
  tendon_world_destroy(w);
}

static void TestPendulumState(void) {
  TendonWorld* w = NewWorld();
  TendonPendulumSettings ps;
  TendonTransform joint = At(0, 1.5f, 0), offset = tendon_transform_identity();
  TendonPendulumId pendulum = 0;
  TendonVec3 bob, first;
  float swing = -1.0f, most = 0.0f;
  int f;
  tendon_pendulum_settings_defaults(&ps);
  CHECK(tendon_bind_pendulum(w, &ps, &joint, &offset, &pendulum) == TENDON_OK && tendon_pendulum_is_valid(w, pendulum) == 1);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_get_pendulum_state(w, pendulum, &first, &swing) == TENDON_OK);
  CHECK(isfinite(first.x) && isfinite(first.y) && isfinite(first.z) && swing >= 0.0f);
  for (f = 0; f < 60; ++f) { /* the joint jerks sideways: the bob lags and swings */
    joint.translation.x = (f / 10) % 2 == 0 ? 0.0f : 0.5f;
    tendon_world_step(w, 1.0f / 60.0f, NULL);
    CHECK(tendon_get_pendulum_state(w, pendulum, &bob, &swing) == TENDON_OK);
    CHECK(isfinite(bob.x) && isfinite(bob.y) && isfinite(bob.z) && isfinite(swing));
    if (swing > most) most = swing;
  }
  CHECK(most > 0.05f && Dist(bob, first) > 1e-3f);
  CHECK(tendon_get_pendulum_state(w, pendulum, NULL, NULL) == TENDON_OK); /* either output may be NULL */
  CHECK(tendon_get_pendulum_state(NULL, pendulum, &bob, &swing) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_unbind_pendulum(w, pendulum) == TENDON_OK && tendon_pendulum_is_valid(w, pendulum) == 0);
  CHECK(tendon_get_pendulum_state(w, pendulum, &bob, &swing) == TENDON_ERROR_STALE_HANDLE);
  tendon_world_destroy(w);
}

/* The humanoid of TestCharacterAndRagdoll: part info maps parts to bones; a part impulse
 * changes that part's velocity by impulse / mass; the ragdoll knows its character. */
static void TestCharacterParts(void) {
  TendonWorld* w = NewWorld();
  TendonTransform rest[kHumanBones], animated[kHumanBones], output[kHumanBones], model = At(0, 0, 0);
  TendonCharacterSettings cs;
  TendonCharacterArchetypeId arch = 0, explicit_arch = 0;
  TendonCharacterBinding cb;
  TendonCharacterId character = 0;
  TendonCharacterPartInfo info;
  TendonCharacterPartSettings list[3];
  TendonJointLimitOverride limit;
  TendonRagdollId ragdoll;
  TendonVec3 lin0[32], ang0[32], lin1[32], ang1[32], j = {0, 0, 0};
  int i, n, hips, hand, bone_ok = 1;
  for (i = 0; i < kHumanBones; ++i) rest[i] = animated[i] = output[i] = At(kOffsets[i][0], kOffsets[i][1], kOffsets[i][2]);
  tendon_character_settings_defaults(&cs);
  CHECK(cs.parts == NULL && cs.part_count == 0 && cs.ragdoll == NULL && cs.limit_override_count == 0);
  cs.bone_count = kHumanBones;
  cs.bone_names = kNames;
  cs.bone_parents = kParents;
  cs.bone_rest_local = rest;
  tendon_joint_limit_override_defaults(&limit);
  limit.part = "LeftLowerArm";
  limit.swing_degrees = 20.0f;
  cs.limit_overrides = &limit;
  cs.limit_override_count = 1;
  CHECK(tendon_build_character_archetype(w, &cs, &arch) == TENDON_OK);
  n = tendon_character_part_count(w, arch);
  CHECK(n >= 10 && n <= 32);
  for (i = 0; i < n; ++i) {
    CHECK(tendon_get_character_part_info(w, arch, i, &info) == TENDON_OK);
    bone_ok &= info.bone >= 0 && info.bone < kHumanBones && info.name[0] != '\0' && info.name_truncated == 0 &&
               info.parent < i && info.mass > 0.0f;
  }
  CHECK(bone_ok);
  hips = tendon_find_character_part(w, arch, "Hips");
  CHECK(tendon_get_character_part_info(w, arch, hips, &info) == TENDON_OK && info.bone == 0 && info.parent == -1);
  CHECK(strcmp(info.name, "Hips") == 0);
  CHECK(tendon_get_character_part_info(w, arch, tendon_find_character_part(w, arch, "LeftLowerArm"), &info) == TENDON_OK);
  CHECK(info.bone == 5 && info.joint == TENDON_JOINT_HINGE && info.hinge_max_degrees - info.hinge_min_degrees <= 40.5f);
  CHECK(tendon_get_character_part_info(w, arch, n, &info) == TENDON_ERROR_BAD_REFERENCE && Field("part"));
  CHECK(tendon_get_character_part_info(w, arch, 0, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_get_character_part_info(w, 0, 0, &info) == TENDON_ERROR_STALE_HANDLE);
  limit.swing_degrees = 500.0f;
  CHECK(tendon_build_character_archetype(w, &cs, &explicit_arch) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strstr(tendon_last_error_field(), "limit_overrides") != NULL);
  cs.limit_override_count = -1;
  CHECK(tendon_build_character_archetype(w, &cs, &explicit_arch) == TENDON_ERROR_NULL_BUFFER && Field("limit_overrides"));
  cs.limit_overrides = NULL;
  cs.limit_override_count = 0;

  /* Explicit parts: hips -> spine -> head, a chain of three capsules. */
  for (i = 0; i < 3; ++i) tendon_character_part_settings_defaults(&list[i]);
  CHECK(list[0].radius > 0.0f && list[0].has_hinge == 0 && list[0].hinge.max_degrees > list[0].hinge.min_degrees);
  list[0].bone = "hips";
  list[0].to = "spine";
  list[1].bone = "spine";
  list[1].to = "head";
  list[2].bone = "head";
  list[2].length = 0.2f;
  list[2].name = "Skull";
  list[2].has_hinge = 1;
  cs.parts = list;
  cs.part_count = 3;
  CHECK(tendon_build_character_archetype(w, &cs, &explicit_arch) == TENDON_OK);
  CHECK(tendon_character_part_count(w, explicit_arch) == 3);
  CHECK(tendon_get_character_part_info(w, explicit_arch, 2, &info) == TENDON_OK);
  CHECK(strcmp(info.name, "Skull") == 0 && info.bone == 3 && info.parent == 1 && info.joint == TENDON_JOINT_HINGE);
  list[1].bone = "tail"; /* no such bone: refused by item and field */
  CHECK(tendon_build_character_archetype(w, &cs, &explicit_arch) != TENDON_OK);
  CHECK(strstr(tendon_last_error_field(), "parts[1]") != NULL);
  cs.part_count = -2;
  CHECK(tendon_build_character_archetype(w, &cs, &explicit_arch) == TENDON_ERROR_NULL_BUFFER && Field("parts"));

  tendon_character_binding_defaults(&cb);
  cb.archetype = arch;
  cb.model_world = &model;
  cb.animated_local = animated;
  cb.output_local = output;
  cb.bone_count = kHumanBones;
  CHECK(tendon_bind_character(w, &cb, &character) == TENDON_OK && tendon_character_is_valid(w, character) == 1);
  CHECK(tendon_bound_character_count(w) == 1 && tendon_active_character_count(w) == 0);
  hand = tendon_find_character_part(w, arch, "LeftHand");
  CHECK(hand >= 0);
  CHECK(tendon_apply_character_part_impulse(w, character, hand, j, model.translation) == TENDON_ERROR_INACTIVE);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_activate_character(w, character, NULL) == TENDON_OK && tendon_active_character_count(w) == 1);
  ragdoll = tendon_character_ragdoll(w, character);
  CHECK(tendon_character_of_ragdoll(w, ragdoll) == character);
  CHECK(tendon_get_character_part_info(w, arch, hand, &info) == TENDON_OK);
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, lin0, ang0, n) == TENDON_OK);
  j.x = 3.0f * info.mass;
  CHECK(tendon_apply_character_part_impulse(w, character, hand, j, output[6].translation) == TENDON_OK);
  CHECK(tendon_get_ragdoll_velocities(w, ragdoll, lin1, ang1, n) == TENDON_OK);
  CHECK(fabsf(lin1[hand].x - lin0[hand].x - 3.0f) < 1e-3f); /* impulse / mass, on that part alone */
  CHECK(fabsf(lin1[hips].x - lin0[hips].x) < 1e-6f);
  CHECK(tendon_apply_character_part_impulse(w, character, 99, j, model.translation) != TENDON_OK && Field("part"));
  /* Archetypes in use are not removed; the character's ragdoll archetype goes with it. */
  CHECK(tendon_remove_character_archetype(w, arch) == TENDON_ERROR_IN_USE);
  CHECK(tendon_unbind_character(w, character) == TENDON_OK && tendon_character_is_valid(w, character) == 0);
  CHECK(tendon_character_of_ragdoll(w, ragdoll) == 0 && tendon_ragdoll_is_valid(w, ragdoll) == 0);
  CHECK(tendon_apply_character_part_impulse(w, character, hand, j, model.translation) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_remove_character_archetype(w, arch) == TENDON_OK && tendon_character_part_count(w, arch) == 0);
  CHECK(tendon_bind_character(w, &cb, &character) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_bound_character_count(w) == 0);
  tendon_world_destroy(w);
}

/* Defaults of every struct a host fills: the C++ defaults, and empty arrays. */
static void TestDefaults(void) {
  TendonChainBone bone;
  TendonChainNodeOverride node;
  TendonCollider collider;
  TendonStaticWorldSettings sw;
  TendonHumanoidBone humanoid;
  TendonSampledClip clip;
  TendonCharacterHinge hinge;
  memset(&bone, 0x7f, sizeof bone);
  tendon_chain_bone_defaults(&bone);
  CHECK(bone.parent == -1 && bone.rest_local.rotation.w == 1.0f && bone.rest_local.scale.y == 1.0f && bone.virtual_tip == 0);
  memset(&node, 0x7f, sizeof node);
  tendon_chain_node_override_defaults(&node);
  CHECK(node.has_damping == 0 && node.has_stiffness == 0 && node.has_pinned == 0);
  memset(&collider, 0x7f, sizeof collider);
  tendon_collider_defaults(&collider);
  CHECK(collider.shape == TENDON_COLLIDER_SPHERE && collider.inside == 0);
  memset(&sw, 0x7f, sizeof sw);
  tendon_static_world_settings_defaults(&sw);
  CHECK(sw.plane_normals == NULL && sw.plane_count == 0 && sw.heightfield_samples_x == 0 && sw.mesh_index_count == 0);
  tendon_humanoid_bone_defaults(&humanoid);
  CHECK(humanoid.role == NULL && humanoid.bone == -1);
  tendon_sampled_clip_defaults(&clip);
  CHECK(clip.name == NULL && clip.frame_count == 0 && clip.local == NULL);
  tendon_character_hinge_defaults(&hinge);
  CHECK(hinge.axis.x == 1.0f && hinge.min_degrees == 0.0f && hinge.max_degrees == 140.0f);
  tendon_chain_bone_defaults(NULL); /* NULL is a no-op */
  tendon_static_world_settings_defaults(NULL);
}

/* A two-bone glTF with one clip sliding the tip from x 0 to 2 over a second. */
static const char kSlideGltf[] =
    "{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0]}],"
    "\"nodes\":[{\"name\":\"root\",\"children\":[1]},{\"name\":\"tip\",\"translation\":[0,1,0]}],"
    "\"buffers\":[{\"byteLength\":32,\"uri\":\"data:application/octet-stream;base64,"
    "AAAAAAAAgD8AAAAAAAAAAAAAAAAAAABAAAAAAAAAAAA=\"}],"
    "\"bufferViews\":[{\"buffer\":0,\"byteOffset\":0,\"byteLength\":8},{\"buffer\":0,\"byteOffset\":8,\"byteLength\":24}],"
    "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\",\"min\":[0],\"max\":[1]},"
    "{\"bufferView\":1,\"componentType\":5126,\"count\":2,\"type\":\"VEC3\"}],"
    "\"animations\":[{\"name\":\"slide\",\"channels\":[{\"sampler\":0,\"target\":{\"node\":1,\"path\":\"translation\"}}],"
    "\"samplers\":[{\"input\":0,\"output\":1,\"interpolation\":\"LINEAR\"}]}]}";

static void TestGltfAsset(void) {
  TendonGltfAsset* a = NULL;
  TendonTransform pose[2];
  TendonCharacterSettings cs;
  char path[1024];
  const char* data = getenv("TENDON_SHARED_DATA");
  int32_t joints[128];
  float inverse[16 * 128];
  CHECK(tendon_gltf_import_from_memory(kSlideGltf, sizeof kSlideGltf - 1, "slide.gltf", &a) == TENDON_OK && a != NULL);
  CHECK(tendon_gltf_asset_bone_count(a) == 2 && strcmp(tendon_gltf_asset_bone_name(a, 1), "tip") == 0);
  CHECK(tendon_gltf_asset_bone_parent(a, 1) == 0 && tendon_gltf_asset_bone_parent(a, 0) == -1);
  CHECK(tendon_gltf_asset_bone_name(a, 2) == NULL && tendon_gltf_asset_bone_parent(a, -1) == -2);
  CHECK(tendon_gltf_asset_clip_count(a) == 1 && strcmp(tendon_gltf_asset_clip_name(a, 0), "slide") == 0);
  CHECK(tendon_gltf_asset_clip_duration(a, 0) == 1.0f && tendon_gltf_asset_clip_name(a, 1) == NULL);
  CHECK(tendon_gltf_asset_rest_local(a, pose, 2) == TENDON_OK && pose[1].translation.y == 1.0f);
  CHECK(tendon_gltf_sample_clip(a, 0, 0.25f, pose, 2) == TENDON_OK);
  CHECK(fabsf(pose[1].translation.x - 0.5f) < 1e-6f && pose[1].translation.y == 0.0f);
  CHECK(tendon_gltf_sample_clip(a, 0, 9.0f, pose, 2) == TENDON_OK && fabsf(pose[1].translation.x - 2.0f) < 1e-6f);
  CHECK(tendon_gltf_sample_clip(a, 0, 0.5f, pose, 1) == TENDON_ERROR_NULL_BUFFER && Field("locals"));
  CHECK(tendon_gltf_sample_clip(a, 3, 0.5f, pose, 2) == TENDON_ERROR_BAD_REFERENCE && Field("clip"));
  CHECK(tendon_gltf_sample_clip(a, 0, NAN, pose, 2) == TENDON_ERROR_NOT_FINITE && Field("time"));
  CHECK(tendon_gltf_sample_clip(NULL, 0, 0.5f, pose, 2) == TENDON_ERROR_NULL_ARGUMENT && Field("asset"));
  tendon_gltf_asset_destroy(a);
  tendon_gltf_asset_destroy(NULL);
  a = (TendonGltfAsset*)&cs; /* overwritten with NULL on failure */
  CHECK(tendon_gltf_import_from_memory("{\"asset\":{}}", 12, "broken.gltf", &a) != TENDON_OK && a == NULL);
  CHECK(strstr(tendon_last_error(), "broken.gltf") != NULL);
  CHECK(tendon_gltf_import("/nonexistent/x.glb", &a) == TENDON_ERROR_IO && strstr(tendon_last_error(), "/nonexistent/x.glb") != NULL);
  CHECK(tendon_gltf_import("/tmp", &a) == TENDON_ERROR_IO && strstr(tendon_last_error(), "directory") != NULL);
  CHECK(tendon_gltf_import(NULL, &a) == TENDON_ERROR_NULL_ARGUMENT && Field("path"));
  if (data == NULL) return;
  snprintf(path, sizeof path, "%s/vrm/godette/Godette_vrm_v4.vrm", data);
  if (tendon_gltf_import(path, &a) != TENDON_OK) {
    printf("c_host_test: %s not imported (%s), the Godette part is skipped\n", path, tendon_last_error());
    return;
  }
  CHECK(tendon_gltf_asset_bone_count(a) == 71 && tendon_gltf_asset_skin_count(a) == 1);
  CHECK(tendon_gltf_asset_skin_joint_count(a, 0) > 0 && tendon_gltf_asset_skin_joint_count(a, 0) <= 128);
  CHECK(tendon_gltf_asset_skin_joints(a, 0, joints, tendon_gltf_asset_skin_joint_count(a, 0), inverse,
                                      16 * tendon_gltf_asset_skin_joint_count(a, 0)) == TENDON_OK);
  CHECK(joints[0] >= 0 && joints[0] < 71 && inverse[15] == 1.0f);
  CHECK(tendon_gltf_asset_skin_joints(a, 0, joints, 1, NULL, 0) == TENDON_ERROR_NULL_BUFFER && Field("joints"));
  CHECK(tendon_gltf_asset_skin_joints(a, 1, joints, 1, NULL, 0) == TENDON_ERROR_BAD_REFERENCE && Field("skin"));
  /* Its skeleton and humanoid build a character through the ordinary call. */
  {
    TendonWorld* w = NewWorld();
    TendonCharacterArchetypeId arch = 0;
    TendonCharacterPartInfo info;
    int head_bone = -1, h;
    tendon_character_settings_defaults(&cs);
    CHECK(tendon_gltf_asset_character_settings(a, &cs) == TENDON_OK);
    CHECK(cs.bone_count == 71 && cs.humanoid_bone_count == 45 && cs.total_mass == 70.0f);
    CHECK(tendon_build_character_archetype(w, &cs, &arch) == TENDON_OK);
    for (h = 0; h < cs.humanoid_bone_count; ++h)
      if (strcmp(cs.humanoid_bones[h].role, "head") == 0) head_bone = cs.humanoid_bones[h].bone;
    CHECK(head_bone > 0 && strcmp(cs.bone_names[head_bone], tendon_gltf_asset_bone_name(a, head_bone)) == 0);
    /* The Head part sits on the bone the humanoid table names head. */
    CHECK(tendon_get_character_part_info(w, arch, tendon_find_character_part(w, arch, "Head"), &info) == TENDON_OK);
    CHECK(info.bone == head_bone);
    tendon_world_destroy(w);
  }
  tendon_gltf_asset_destroy(a);
}

/* The Jolt "Human": its ragdoll built as a ragdoll, posed by an animation's motor targets,
 * and as a character over the animation's skeleton. */
static void TestJolt(void) {
  char ragdoll_path[1024], neutral_path[1024], pose_path[1024], dir[1024];
  const char* data = getenv("TENDON_SHARED_DATA");
  TendonJoltRagdoll* jr = NULL;
  TendonJoltAnimation* anim = NULL;
  TendonJoltAnimation* pose = NULL;
  TendonRagdollSettings rs;
  TendonCharacterSettings cs;
  TendonSampledClip clip;
  TendonWorld* w;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonCharacterArchetypeId carch = 0;
  TendonCharacterBinding cb;
  TendonCharacterId character = 0;
  TendonCharacterPartInfo info;
  TendonTransform parts_out[64], model_parts[64], model = At(3, 0, 0);
  TendonTransform animated[128], output[128];
  TendonQuat rotations[64];
  int i, f, n, joints, finite = 1;
  CHECK(tendon_jolt_ragdoll_load("/nonexistent/ragdoll.json", 0, &jr) == TENDON_ERROR_IO && jr == NULL);
  CHECK(strstr(tendon_last_error(), "/nonexistent/ragdoll.json") != NULL && Field("path"));
  CHECK(tendon_jolt_animation_load("/tmp", &anim) == TENDON_ERROR_IO && anim == NULL);
  CHECK(tendon_jolt_ragdoll_settings(NULL, &rs) == TENDON_ERROR_NULL_ARGUMENT && Field("ragdoll"));
  if (data == NULL) return;
  snprintf(ragdoll_path, sizeof ragdoll_path, "%s/jolt-human/ragdoll.json", data);
  snprintf(neutral_path, sizeof neutral_path, "%s/jolt-human/hd/animations/neutral_hd.json", data);
  snprintf(pose_path, sizeof pose_path, "%s/jolt-human/animations/dead_pose1.json", data);
  snprintf(dir, sizeof dir, "%s/jolt-human", data);
  CHECK(tendon_jolt_ragdoll_load(dir, 0, &jr) == TENDON_ERROR_IO && strstr(tendon_last_error(), "directory") != NULL);
  if (tendon_jolt_ragdoll_load(ragdoll_path, 0, &jr) != TENDON_OK) {
    printf("c_host_test: %s not loaded (%s), the Jolt part is skipped\n", ragdoll_path, tendon_last_error());
    return;
  }
  CHECK(tendon_jolt_animation_load(neutral_path, &anim) == TENDON_OK && anim != NULL);
  CHECK(tendon_jolt_animation_load(pose_path, &pose) == TENDON_OK && pose != NULL);
  if (anim == NULL || pose == NULL) {
    tendon_jolt_animation_destroy(anim);
    tendon_jolt_animation_destroy(pose);
    tendon_jolt_ragdoll_destroy(jr);
    return;
  }
  CHECK(tendon_jolt_ragdoll_settings(jr, &rs) == TENDON_OK && rs.part_count == 23 && rs.parts[0].name != NULL);
  joints = tendon_jolt_animation_joint_count(anim);
  CHECK(joints == 71 && tendon_jolt_animation_joint_count(pose) == 23 && tendon_jolt_animation_duration(NULL) == 0.0f);
  w = NewWorld();
  /* As a ragdoll: the file's own pose, then a dead pose's frames and motor targets (part j
     is the pose's joint j). */
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK && tendon_ragdoll_part_count(w, rarch) == 23);
  n = rs.part_count;
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = parts_out;
  rb.output_part_count = n;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  CHECK(tendon_jolt_animation_sample_parts(jr, pose, 0.0f, model_parts, rotations, n) == TENDON_OK);
  CHECK(tendon_jolt_animation_sample_parts(jr, pose, 0.0f, model_parts, rotations, n - 1) == TENDON_ERROR_NULL_BUFFER &&
        Field("model"));
  for (i = 0; i < n; ++i) model_parts[i].translation.y += 2.0f; /* 2 m up */
  CHECK(tendon_set_ragdoll_part_states(w, ragdoll, model_parts, n, NULL, 0, NULL, 0) == TENDON_OK);
  CHECK(tendon_set_ragdoll_motor_targets(w, ragdoll, rotations, n, 1.0f, NULL, 0) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(fabsf(parts_out[0].translation.y - model_parts[0].translation.y) < 0.01f); /* placed where the pose said */
  for (f = 0; f < 30; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  for (i = 0; i < n; ++i) finite &= FiniteT(&parts_out[i]);
  CHECK(finite && parts_out[0].translation.y < model_parts[0].translation.y - 0.5f); /* and falling */
  CHECK(tendon_unbind_ragdoll(w, ragdoll) == TENDON_OK);
  /* As a character: the animation's skeleton, the whole ragdoll, limits learned from it. */
  tendon_character_settings_defaults(&cs);
  CHECK(tendon_jolt_animation_character_settings(anim, &cs) == TENDON_OK && cs.bone_count == 71);
  CHECK(tendon_jolt_animation_clip(anim, &clip) == TENDON_OK && clip.frame_count >= 1 && clip.local != NULL);
  cs.name = "jolt human";
  cs.ragdoll = &rs;
  cs.limit_source = TENDON_LIMITS_CLIPS;
  cs.limit_clips = &clip;
  cs.limit_clip_count = 1;
  CHECK(tendon_build_character_archetype(w, &cs, &carch) == TENDON_OK);
  CHECK(tendon_character_part_count(w, carch) == 23);
  CHECK(tendon_get_character_part_info(w, carch, 0, &info) == TENDON_OK && strcmp(info.name, rs.parts[0].name) == 0);
  CHECK(strcmp(cs.bone_names[info.bone], rs.parts[0].name) == 0); /* part 0 sits on its bone */
  CHECK(tendon_jolt_animation_sample(anim, 0.0f, 1, animated, joints) == TENDON_OK);
  CHECK(tendon_jolt_animation_sample(anim, 0.0f, 1, animated, joints + 1) == TENDON_ERROR_NULL_BUFFER && Field("out"));
  for (i = 0; i < joints; ++i) output[i] = animated[i];
  tendon_character_binding_defaults(&cb);
  cb.archetype = carch;
  cb.model_world = &model;
  cb.animated_local = animated;
  cb.output_local = output;
  cb.bone_count = joints;
  CHECK(tendon_bind_character(w, &cb, &character) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_activate_character(w, character, NULL) == TENDON_OK);
  for (f = 0; f < 60; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  finite = 1;
  for (i = 0; i < joints; ++i) finite &= FiniteT(&output[i]);
  CHECK(finite);
  /* A ragdoll whose enum is no TendonPartShape is refused naming the nested field. */
  {
    TendonPartSettings bad[64];
    TendonRagdollSettings bad_rs = rs;
    for (i = 0; i < n; ++i) bad[i] = rs.parts[i];
    bad[3].shape = (TendonPartShape)9;
    bad_rs.parts = bad;
    cs.ragdoll = &bad_rs;
    CHECK(tendon_build_character_archetype(w, &cs, &carch) == TENDON_ERROR_OUT_OF_RANGE && Field("ragdoll.parts.shape"));
  }
  tendon_world_destroy(w);
  tendon_jolt_animation_destroy(anim);
  tendon_jolt_animation_destroy(pose);
  tendon_jolt_ragdoll_destroy(jr);
  tendon_jolt_animation_destroy(NULL);
  tendon_jolt_ragdoll_destroy(NULL);
}


/* Host bodies: a platform box carries nothing off, a trigger counts, motion and refusals. */
static void TestHostBodies(void) {
  TendonWorld* w = NewWorld();
  TendonHostBodySettings hs;
  TendonHostBodyId body = 0, trigger = 0;
  TendonHostBodyState st;
  TendonFrameStats fs;
  TendonTransform target = At(0.5f, 0, 0);
  TendonVec3 v = {1, 0, 0}, zero = {0, 0, 0};
  int i;
  tendon_host_body_settings_defaults(&hs);
  CHECK(hs.shape == TENDON_HOST_BODY_CAPSULE && hs.radius == 0.3f && hs.half_height == 0.6f && hs.trigger == 0);
  CHECK(hs.collision_group == 1u && hs.collision_mask == 0xffffffffu && hs.friction == 0.6f);
  tendon_host_body_settings_defaults(NULL);
  CHECK(tendon_add_host_body(NULL, &hs, &body) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_add_host_body(w, NULL, &body) == TENDON_ERROR_NULL_ARGUMENT && Field("settings"));
  CHECK(tendon_add_host_body(w, &hs, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  hs.shape = (TendonHostBodyShape)7;
  CHECK(tendon_add_host_body(w, &hs, &body) == TENDON_ERROR_OUT_OF_RANGE && Field("shape"));
  tendon_host_body_settings_defaults(&hs);
  hs.radius = -1.0f;
  CHECK(tendon_add_host_body(w, &hs, &body) == TENDON_ERROR_OUT_OF_RANGE && Field("radius"));
  tendon_host_body_settings_defaults(&hs);
  hs.linear_velocity.x = NAN;
  CHECK(tendon_add_host_body(w, &hs, &body) == TENDON_ERROR_OUT_OF_RANGE && Field("linear_velocity"));
  CHECK(tendon_host_body_count(w) == 0 && tendon_host_body_count(NULL) == 0);
  tendon_host_body_settings_defaults(&hs);
  CHECK(tendon_add_host_body(w, &hs, &body) == TENDON_OK && body != 0);
  CHECK(tendon_host_body_is_valid(w, body) == 1 && tendon_host_body_is_valid(NULL, body) == 0);
  hs.trigger = 1;
  hs.shape = TENDON_HOST_BODY_SPHERE;
  hs.transform = At(5, 0, 0);
  CHECK(tendon_add_host_body(w, &hs, &trigger) == TENDON_OK && tendon_host_body_count(w) == 2);
  /* Moving to a target: there at the end of the next frame, at the velocity that takes it. */
  CHECK(tendon_move_host_body_to(w, body, &target) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, &fs);
  CHECK(tendon_get_host_body_state(w, body, &st) == TENDON_OK);
  CHECK(fabsf(st.transform.translation.x - 0.5f) < 1e-4f && fabsf(st.linear_velocity.x - 30.0f) < 0.01f);
  CHECK(fs.bound_ragdolls == 0);
  /* Moving on at a velocity. */
  CHECK(tendon_set_host_body_motion(w, body, &target, v, zero) == TENDON_OK);
  for (i = 0; i < 60; ++i) tendon_world_step(w, 1.0f / 60.0f, &fs);
  CHECK(tendon_get_host_body_state(w, body, &st) == TENDON_OK && fabsf(st.transform.translation.x - 1.5f) < 1e-3f);
  CHECK(tendon_get_host_body_state(w, trigger, &st) == TENDON_OK && st.overlapping_parts == 0);
  /* Refusals. */
  CHECK(tendon_set_host_body_motion(w, body, NULL, v, zero) == TENDON_ERROR_NULL_ARGUMENT && Field("transform"));
  CHECK(tendon_move_host_body_to(w, body, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("target"));
  v.y = INFINITY;
  CHECK(tendon_set_host_body_motion(w, body, &target, v, zero) == TENDON_ERROR_OUT_OF_RANGE && Field("linear_velocity"));
  CHECK(tendon_get_host_body_state(w, body, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_remove_host_body(w, body) == TENDON_OK && tendon_host_body_is_valid(w, body) == 0);
  CHECK(tendon_remove_host_body(w, body) == TENDON_ERROR_STALE_HANDLE && Field("host_body"));
  CHECK(tendon_get_host_body_state(w, body, &st) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_move_host_body_to(w, body, &target) == TENDON_ERROR_STALE_HANDLE);
  tendon_world_destroy(w);
}

/* Saved states: a save, a few steps, a restore, the same steps: the same hash; refusals by
   code and field, each leaving the world's hash as it was. */
static void TestSnapshots(void) {
  TendonWorld* w = NewWorld();
  TendonPartSettings parts[2];
  TendonRagdollSettings rs;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonTransform out[2];
  uint8_t bytes[8192], one[4096];
  size_t size, written = 0, one_size;
  uint64_t after, before;
  int f;

  LimbSettings(parts, &rs);
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = out;
  rb.output_part_count = 2;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  for (f = 0; f < 5; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  size = tendon_world_saved_state_size(w);
  CHECK(size > 32 && size <= sizeof(bytes));
  CHECK(tendon_world_saved_state_size(NULL) == 0);
  CHECK(tendon_world_save_state(w, bytes, sizeof(bytes), &written) == TENDON_OK && written == size);
  for (f = 0; f < 5; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  after = tendon_world_state_hash(w);
  CHECK(tendon_world_restore_state(w, bytes, size) == TENDON_OK);
  for (f = 0; f < 5; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(tendon_world_state_hash(w) == after);

  /* Refusals. */
  CHECK(tendon_world_save_state(w, bytes, size - 1, &written) == TENDON_ERROR_NULL_BUFFER && Field("out"));
  CHECK(tendon_world_save_state(w, NULL, size, &written) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_world_save_state(w, bytes, size, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("written"));
  CHECK(tendon_world_save_state(NULL, bytes, size, &written) == TENDON_ERROR_NULL_ARGUMENT && Field("world"));
  CHECK(tendon_world_restore_state(NULL, bytes, size) == TENDON_ERROR_NULL_ARGUMENT && Field("world"));
  CHECK(tendon_world_restore_state(w, NULL, size) == TENDON_ERROR_NULL_ARGUMENT && Field("bytes"));
  before = tendon_world_state_hash(w);
  CHECK(tendon_world_restore_state(w, bytes, size - 1) == TENDON_ERROR_OUT_OF_RANGE && Field("length"));
  CHECK(tendon_world_restore_state(w, bytes, 7) == TENDON_ERROR_OUT_OF_RANGE && Field("in"));
  bytes[size - 1] ^= 0x40u;
  CHECK(tendon_world_restore_state(w, bytes, size) == TENDON_ERROR_OUT_OF_RANGE && Field("checksum"));
  bytes[size - 1] ^= 0x40u;
  bytes[0] ^= 0x01u;
  CHECK(tendon_world_restore_state(w, bytes, size) == TENDON_ERROR_OUT_OF_RANGE && Field("magic"));
  bytes[0] ^= 0x01u;
  CHECK(tendon_world_state_hash(w) == before);

  /* One ragdoll's state: restored into it; a stale handle and a whole world's buffer refused. */
  one_size = tendon_saved_ragdoll_state_size(w, ragdoll);
  CHECK(one_size > 32 && one_size <= sizeof(one));
  CHECK(tendon_save_ragdoll_state(w, ragdoll, one, sizeof(one), &written) == TENDON_OK && written == one_size);
  CHECK(tendon_restore_ragdoll_state(w, ragdoll, one, one_size) == TENDON_OK);
  CHECK(tendon_restore_ragdoll_state(w, ragdoll, bytes, size) == TENDON_ERROR_OUT_OF_RANGE && Field("kind"));
  CHECK(tendon_save_ragdoll_state(w, ragdoll + ((uint64_t)1 << 32), one, sizeof(one), &written) ==
            TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  CHECK(tendon_saved_ragdoll_state_size(w, 0) == 0);
  CHECK(tendon_saved_chain_state_size(w, 0) == 0 && tendon_saved_character_state_size(w, 0) == 0);
  CHECK(tendon_save_chain_state(w, 0, one, sizeof(one), &written) == TENDON_ERROR_STALE_HANDLE && Field("chain"));
  CHECK(tendon_restore_chain_state(w, 0, one, one_size) == TENDON_ERROR_STALE_HANDLE && Field("chain"));
  CHECK(tendon_save_character_state(w, 0, one, sizeof(one), &written) == TENDON_ERROR_STALE_HANDLE &&
        Field("character"));
  CHECK(tendon_restore_character_state(w, 0, one, one_size) == TENDON_ERROR_STALE_HANDLE && Field("character"));

  /* Mid-frame: refused. */
  CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
  CHECK(tendon_world_restore_state(w, bytes, size) == TENDON_ERROR_REENTRANT && Field("world"));
  tendon_world_finish_step(w, NULL);
  tendon_world_destroy(w);
}

/* Following received poses: a two-part limb followed toward a sample 0.5 m up, the
   settings' defaults, the handover, and the refusals by code and field. */
static void TestFollow(void) {
  TendonWorld* w = NewWorld();
  TendonPartSettings parts[2];
  TendonRagdollSettings rs;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonTransform out[2], target[2];
  TendonFollowSettings fs;
  TendonVec3 nan_v[2];
  uint8_t bytes[8192];
  size_t written = 0;
  double t;
  int f;

  LimbSettings(parts, &rs);
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = out;
  rb.output_part_count = 2;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  tendon_world_step(w, 1.0f / 60.0f, NULL);
  tendon_follow_settings_defaults(&fs);
  CHECK(fs.interpolation_delay_seconds == 0.1f && fs.max_extrapolation_seconds == 0.25f && fs.response_seconds == 0.0f &&
        fs.max_speed == 50.0f && fs.snap_distance == 1.0f);
  tendon_follow_settings_defaults(NULL); /* a no-op */
  CHECK(tendon_follow_ragdoll(w, ragdoll, &fs) == TENDON_OK);
  CHECK(tendon_is_following(w, ragdoll) == 1 && tendon_is_following(NULL, ragdoll) == 0);
  CHECK(tendon_set_follow_clock(w, 100.0) == TENDON_OK);
  t = tendon_follow_clock(w);
  CHECK(t == 100.0 && tendon_follow_clock(NULL) == 0.0);
  target[0] = out[0];
  target[1] = out[1];
  target[0].translation.y += 0.5f;
  target[1].translation.y += 0.5f;
  /* Still samples around the played time: the limb rises 0.5 m and holds there. */
  CHECK(tendon_push_follow_sample(w, ragdoll, t - 1.0, target, 2, NULL, NULL, 0) == TENDON_OK);
  CHECK(tendon_push_follow_sample(w, ragdoll, t + 10.0, target, 2, NULL, NULL, 0) == TENDON_OK);
  for (f = 0; f < 30; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);
  CHECK(Dist(out[0].translation, target[0].translation) < 0.02f);
  /* Saved states refused while following. */
  CHECK(tendon_world_save_state(w, bytes, sizeof(bytes), &written) == TENDON_ERROR_IN_USE && Field("ragdoll"));

  /* Refusals. */
  CHECK(tendon_follow_ragdoll(NULL, ragdoll, &fs) == TENDON_ERROR_NULL_ARGUMENT && Field("world"));
  CHECK(tendon_follow_ragdoll(w, ragdoll, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("settings"));
  CHECK(tendon_follow_ragdoll(w, 0, &fs) == TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  fs.interpolation_delay_seconds = 0.0f;
  CHECK(tendon_follow_ragdoll(w, ragdoll, &fs) == TENDON_ERROR_OUT_OF_RANGE &&
        Field("settings.interpolation_delay_seconds"));
  tendon_follow_settings_defaults(&fs);
  fs.snap_distance = -1.0f;
  CHECK(tendon_follow_ragdoll(w, ragdoll, &fs) == TENDON_ERROR_OUT_OF_RANGE && Field("settings.snap_distance"));
  CHECK(tendon_push_follow_sample(w, ragdoll, t, target, 1, NULL, NULL, 0) == TENDON_ERROR_NULL_BUFFER && Field("parts"));
  CHECK(tendon_push_follow_sample(w, ragdoll, t, NULL, 2, NULL, NULL, 0) == TENDON_ERROR_NULL_BUFFER && Field("parts"));
  CHECK(tendon_push_follow_sample(w, ragdoll, t, target, 2, NULL, NULL, 2) == TENDON_ERROR_NULL_BUFFER && Field("linear"));
  CHECK(tendon_push_follow_sample(w, ragdoll, (double)NAN, target, 2, NULL, NULL, 0) == TENDON_ERROR_NOT_FINITE &&
        Field("sample_time"));
  nan_v[0].x = nan_v[0].y = nan_v[0].z = 0.0f;
  nan_v[1] = nan_v[0];
  nan_v[1].y = NAN;
  CHECK(tendon_push_follow_sample(w, ragdoll, t, target, 2, nan_v, nan_v, 2) == TENDON_ERROR_NOT_FINITE &&
        Field("linear") && tendon_last_error_item() == 1);
  CHECK(tendon_push_follow_sample(w, ragdoll + ((uint64_t)1 << 32), t, target, 2, NULL, NULL, 0) ==
            TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  CHECK(tendon_push_follow_sample(NULL, ragdoll, t, target, 2, NULL, NULL, 0) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_set_follow_clock(w, (double)INFINITY) == TENDON_ERROR_NOT_FINITE && Field("now"));
  CHECK(tendon_set_follow_clock(NULL, 1.0) == TENDON_ERROR_NULL_ARGUMENT);

  /* The handover, then refusals of a ragdoll not followed. */
  CHECK(tendon_stop_following(w, ragdoll) == TENDON_OK && tendon_is_following(w, ragdoll) == 0);
  CHECK(tendon_stop_following(w, ragdoll) == TENDON_ERROR_INACTIVE && Field("ragdoll"));
  CHECK(tendon_push_follow_sample(w, ragdoll, t, target, 2, NULL, NULL, 0) == TENDON_ERROR_INACTIVE);
  CHECK(tendon_stop_following(NULL, ragdoll) == TENDON_ERROR_NULL_ARGUMENT);
  CHECK(tendon_world_save_state(w, bytes, sizeof(bytes), &written) == TENDON_OK);
  CHECK(tendon_set_ragdoll_enabled(w, ragdoll, 0) == TENDON_OK);
  CHECK(tendon_follow_ragdoll(w, ragdoll, &fs) == TENDON_ERROR_INACTIVE && Field("ragdoll"));
  tendon_world_destroy(w);
}

static void TestNetSnapshots(void) {
  TendonWorld* w = NewWorld();
  TendonPartSettings parts[2];
  TendonRagdollSettings rs;
  TendonRagdollArchetypeId rarch = 0;
  TendonRagdollBinding rb;
  TendonRagdollId ragdoll = 0;
  TendonTransform out[2], sent_parts[2], base_parts[2], got_parts[2];
  TendonVec3 lin[2], ang[2];
  TendonNetPoseSettings settings;
  TendonNetPose sent, base, got;
  uint8_t bytes[256];
  size_t size = 0, max;
  int32_t count = 0;
  int f;

  LimbSettings(parts, &rs);
  CHECK(tendon_build_ragdoll_archetype(w, &rs, &rarch) == TENDON_OK);
  tendon_ragdoll_binding_defaults(&rb);
  rb.archetype = rarch;
  rb.output_parts = out;
  rb.output_part_count = 2;
  CHECK(tendon_bind_ragdoll(w, &rb, &ragdoll) == TENDON_OK);
  for (f = 0; f < 5; ++f) tendon_world_step(w, 1.0f / 60.0f, NULL);

  tendon_net_pose_settings_defaults(&settings);
  CHECK(settings.position_precision == 0.002f && settings.rotation_bits == 10 && settings.include_velocities == 0);
  memset(&sent, 0, sizeof(sent));
  sent.parts = sent_parts;
  sent.part_count = 2;
  sent.linear = lin;
  sent.angular = ang;
  sent.tick = 77;
  CHECK(tendon_capture_ragdoll_pose(w, ragdoll, &sent) == TENDON_OK && sent.has_velocities == 1);
  CHECK(Dist(sent_parts[1].translation, out[1].translation) == 0.0f);
  max = tendon_max_net_pose_bytes(2, NULL);
  CHECK(max > 20 && max <= sizeof(bytes));
  CHECK(tendon_encode_net_pose(&sent, NULL, NULL, bytes, sizeof(bytes), &size) == TENDON_OK && size > 0 && size <= max);
  CHECK(tendon_net_pose_part_count(bytes, size, &count) == TENDON_OK && count == 2);
  CHECK(tendon_net_pose_baseline_tick(bytes, size, &count) == TENDON_OK && count == -1);
  base = sent;
  base.parts = base_parts;
  base.linear = base.angular = NULL;
  CHECK(tendon_decode_net_pose(bytes, size, NULL, &settings, &base) == TENDON_OK && base.tick == 77);
  CHECK(Dist(base_parts[1].translation, sent_parts[1].translation) < 0.002f);
  /* Unchanged against the decoded baseline: a header. */
  sent.tick = 80;
  CHECK(tendon_encode_net_pose(&sent, &base, &settings, bytes, sizeof(bytes), &size) == TENDON_OK && size <= 8);
  CHECK(tendon_net_pose_baseline_tick(bytes, size, &count) == TENDON_OK && count == 77);
  got = base;
  got.parts = got_parts;
  CHECK(tendon_decode_net_pose(bytes, size, &base, &settings, &got) == TENDON_OK && got.tick == 80);
  CHECK(memcmp(got_parts, base_parts, sizeof(got_parts)) == 0);

  /* Refusals, by code and field. */
  CHECK(tendon_decode_net_pose(bytes, size, NULL, &settings, &got) == TENDON_ERROR_BAD_REFERENCE &&
        Field("baseline"));
  base.tick = 81;
  CHECK(tendon_decode_net_pose(bytes, size, &base, &settings, &got) == TENDON_ERROR_BAD_REFERENCE &&
        Field("baseline.tick"));
  base.tick = 77;
  CHECK(tendon_decode_net_pose(bytes, size - 1, &base, &settings, &got) == TENDON_ERROR_OUT_OF_RANGE);
  bytes[1] ^= 0x10u;
  CHECK(tendon_decode_net_pose(bytes, size, &base, &settings, &got) != TENDON_OK);
  bytes[1] ^= 0x10u;
  bytes[0] = 9;
  CHECK(tendon_decode_net_pose(bytes, size, &base, &settings, &got) == TENDON_ERROR_OUT_OF_RANGE && Field("in.version"));
  CHECK(tendon_net_pose_part_count(bytes, size, &count) == TENDON_ERROR_OUT_OF_RANGE && count == 0);
  CHECK(tendon_net_pose_baseline_tick(bytes, size, &count) == TENDON_ERROR_OUT_OF_RANGE && Field("in.version"));
  CHECK(tendon_net_pose_baseline_tick(NULL, 4, &count) == TENDON_ERROR_NULL_ARGUMENT && Field("bytes"));
  CHECK(tendon_decode_net_pose(NULL, 4, NULL, NULL, &got) == TENDON_ERROR_NULL_ARGUMENT && Field("bytes"));
  CHECK(tendon_decode_net_pose(bytes, size, NULL, NULL, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  CHECK(tendon_encode_net_pose(&sent, NULL, NULL, bytes, 4, &size) == TENDON_ERROR_NULL_BUFFER && Field("out"));
  CHECK(tendon_encode_net_pose(&sent, NULL, NULL, bytes, sizeof(bytes), NULL) == TENDON_ERROR_NULL_ARGUMENT &&
        Field("written"));
  CHECK(tendon_encode_net_pose(NULL, NULL, NULL, bytes, sizeof(bytes), &size) == TENDON_ERROR_NULL_ARGUMENT &&
        Field("pose"));
  settings.rotation_bits = 3;
  CHECK(tendon_encode_net_pose(&sent, NULL, &settings, bytes, sizeof(bytes), &size) == TENDON_ERROR_OUT_OF_RANGE &&
        Field("settings.rotation_bits"));
  sent_parts[1].translation.x = NAN;
  CHECK(tendon_encode_net_pose(&sent, NULL, NULL, bytes, sizeof(bytes), &size) == TENDON_ERROR_NOT_FINITE &&
        tendon_last_error_item() == 1);
  sent.part_count = -1;
  CHECK(tendon_encode_net_pose(&sent, NULL, NULL, bytes, sizeof(bytes), &size) != TENDON_OK && Field("parts"));
  sent.part_count = 3;
  CHECK(tendon_capture_ragdoll_pose(w, ragdoll, &sent) == TENDON_ERROR_NULL_BUFFER && Field("out.parts"));
  sent.part_count = 2;
  CHECK(tendon_capture_ragdoll_pose(w, 0, &sent) == TENDON_ERROR_STALE_HANDLE && Field("ragdoll"));
  CHECK(tendon_capture_ragdoll_pose(NULL, ragdoll, &sent) == TENDON_ERROR_NULL_ARGUMENT && Field("world"));
  CHECK(tendon_capture_ragdoll_pose(w, ragdoll, NULL) == TENDON_ERROR_NULL_ARGUMENT && Field("out"));
  tendon_world_destroy(w);
}

int main(void) {
  TendonWorldSettings ws;
  TendonWorld* w = NULL;
  FILE* trace;
  long size;
  tendon_world_settings_defaults(&ws);
  CHECK(ws.fixed_hz == 60.0f && ws.max_substeps == 3);
  ws.fixed_hz = 5.0f; /* outside [10, 1000] */
  CHECK(tendon_world_create(&ws, &w) == TENDON_ERROR_OUT_OF_RANGE && w == NULL);
  CHECK(strstr(tendon_last_error(), "fixed_hz") != NULL || strcmp(tendon_last_error_field(), "fixed_hz") == 0);
  tendon_world_settings_defaults(&ws);
  CHECK(ws.frame_budget_ms == 0.0f && ws.budget_min_ragdoll_substeps == 4);
  ws.frame_budget_ms = -1.0f;
  CHECK(tendon_world_create(&ws, &w) == TENDON_ERROR_OUT_OF_RANGE && w == NULL);
  CHECK(strcmp(tendon_last_error_field(), "frame_budget_ms") == 0);
  tendon_world_settings_defaults(&ws);
  ws.frame_budget_ms = 1000.0f; /* a budget that never binds */
  ws.max_distance = INFINITY;
  ws.render_interpolation = 0;
  CHECK(tendon_world_create(&ws, &w) == TENDON_OK && w != NULL);
  CHECK(tendon_world_lane_width(w) >= 1);
  /* Ragdoll blocks are the kernel's: 16 lanes on AVX-512, 8 on every other instruction set. */
  CHECK(tendon_world_ragdoll_lane_width(w) == (tendon_world_active_isa(w) == TENDON_ISA_AVX512 ? 16 : 8));
  CHECK(tendon_world_ragdoll_lane_width(NULL) == 0);
  CHECK(tendon_world_set_trace_file(w, "/tmp/tendon_c_host_test_trace.json") == TENDON_OK);
  TestChain(w);
  TestPoseStreams(w);
  TestDeviceProfile();
  {
    /* The frame in two halves: a second begin while one is in flight is refused. */
    TendonFrameStats before, after;
    tendon_world_last_stats(w, &before);
    CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_OK);
    CHECK(tendon_world_begin_step(w, 1.0f / 60.0f) == TENDON_ERROR_REENTRANT);
    tendon_world_finish_step(w, &after);
    CHECK(after.frame == before.frame + 1);
    CHECK(tendon_world_begin_step(NULL, 0.1f) == TENDON_ERROR_NULL_ARGUMENT);
  }
  {
    /* Profiler hooks: zones balance, and each frame brings counters and one mark. */
    TendonProfilerHooks hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.zone_begin = ZoneBegin;
    CHECK(tendon_world_set_profiler_hooks(w, &hooks) == TENDON_ERROR_OUT_OF_RANGE); /* zone_end missing */
    hooks.zone_end = ZoneEnd;
    hooks.counter = CountValue;
    hooks.frame_mark = Mark;
    CHECK(tendon_world_set_profiler_hooks(w, &hooks) == TENDON_OK);
    tendon_world_step(w, 1.0f / 60.0f, NULL);
    tendon_world_step(w, 1.0f / 60.0f, NULL);
    CHECK(g_zones > 2 && g_zone_depth == 0 && g_unbalanced == 0);
    CHECK(g_marks == 2 && g_counters > 2 && g_counters % 2 == 0);
    CHECK(tendon_world_set_profiler_hooks(w, NULL) == TENDON_OK);
    tendon_world_step(w, 1.0f / 60.0f, NULL);
    CHECK(g_marks == 2);
  }
  TestCharacterAndRagdoll(w);
  TestVrm(w);
  TestRagdollControls();
  TestContactEvents();
  TestPartDrives();
  TestCallbacks();
  TestPendulumState();
  TestCharacterParts();
  TestDefaults();
  TestGltfAsset();
  TestJolt();
  TestHostBodies();
  TestSnapshots();
  TestFollow();
  TestNetSnapshots();
  CHECK(tendon_world_set_trace_file(w, NULL) == TENDON_OK);
  trace = fopen("/tmp/tendon_c_host_test_trace.json", "rb");
  CHECK(trace != NULL);
  if (trace != NULL) {
    fseek(trace, 0, SEEK_END);
    size = ftell(trace);
    fclose(trace);
    CHECK(size > 1000);
  }
  CHECK(tendon_world_set_trace_file(w, "/nonexistent-dir/trace.json") == TENDON_ERROR_IO);
  tendon_world_destroy(w);
  tendon_world_destroy(NULL);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
