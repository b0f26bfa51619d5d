/* ports/c/tests/c_host_test.c: a C11 host of tendon_c (compiled -Wall -Wextra -Wpedantic
 * -Werror). It builds a chain, a ragdoll and a character from plain arrays, binds them on
 * its own buffers, steps, reads poses back, checks every refusal it provokes (code, field,
 * message), writes a trace, and, when ../shared/data is there, loads a VRM avatar.
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

static void TestVrm(TendonWorld* w) {
  char path[1024];
  const char* data = getenv("TENDON_SHARED_DATA");
  TendonVrmKindId kind = 0;
  TendonVrmAvatarId avatar = 0;
  TendonVrmAvatarBuffers buf;
  FILE* probe;
  int f, i, moved = 0;
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
