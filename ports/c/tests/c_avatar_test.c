/* ports/c/tests/c_avatar_test.c: a C11 host that skins a VRM avatar through tendon_c
 * (compiled -Wall -Wextra -Wpedantic -Werror). It loads Godette, reads her skeleton and skins,
 * binds her with a skinning palette for the skin that holds the most hair joints, walks her,
 * and checks that the palette is the simulated bone's model matrix times its inverse bind
 * for a hair joint that moved, and that output_world holds that simulated bone. Then it
 * checks the refusals (a stale kind, a skin out of range, unloading a kind in use) and that
 * 50 loads and unloads leave every unloaded id stale. Skips (exit 0) without the shared data.
 * Prints "N passed, N failed" and exits non-zero on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tendon/tendon_c.h"

static int g_passed = 0, g_failed = 0;
#define CHECK(cond)                                                                                              \
  do {                                                                                                           \
    if (cond) {                                                                                                  \
      ++g_passed;                                                                                                \
    } else {                                                                                                     \
      ++g_failed;                                                                                                \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, tendon_last_error()); \
    }                                                                                                            \
  } while (0)

enum { kMaxBones = 256, kMaxJoints = 256 };

static TendonQuat Mul(TendonQuat a, TendonQuat b) {
  TendonQuat q;
  q.w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z;
  q.x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y;
  q.y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x;
  q.z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w;
  return q;
}
static TendonVec3 Rotate(TendonQuat q, TendonVec3 v) {
  const TendonQuat p = {v.x, v.y, v.z, 0.0f};
  const TendonQuat c = {-q.x, -q.y, -q.z, q.w};
  const TendonQuat r = Mul(Mul(q, p), c);
  TendonVec3 out;
  out.x = r.x;
  out.y = r.y;
  out.z = r.z;
  return out;
}
/* parent * local, as tendon::Compose. */
static TendonTransform Compose(const TendonTransform* parent, const TendonTransform* local) {
  TendonTransform out;
  TendonVec3 scaled;
  scaled.x = parent->scale.x * local->translation.x;
  scaled.y = parent->scale.y * local->translation.y;
  scaled.z = parent->scale.z * local->translation.z;
  scaled = Rotate(parent->rotation, scaled);
  out.translation.x = parent->translation.x + scaled.x;
  out.translation.y = parent->translation.y + scaled.y;
  out.translation.z = parent->translation.z + scaled.z;
  out.rotation = Mul(parent->rotation, local->rotation);
  out.scale.x = parent->scale.x * local->scale.x;
  out.scale.y = parent->scale.y * local->scale.y;
  out.scale.z = parent->scale.z * local->scale.z;
  return out;
}
/* Column-major 4x4 of translation * rotation * diag(scale). */
static void MatrixOf(const TendonTransform* t, float* m) {
  const TendonQuat q = t->rotation;
  const TendonVec3 s = t->scale;
  memset(m, 0, 16 * sizeof(float));
  m[0] = (1 - 2 * (q.y * q.y + q.z * q.z)) * s.x;
  m[1] = 2 * (q.x * q.y + q.w * q.z) * s.x;
  m[2] = 2 * (q.x * q.z - q.w * q.y) * s.x;
  m[4] = 2 * (q.x * q.y - q.w * q.z) * s.y;
  m[5] = (1 - 2 * (q.x * q.x + q.z * q.z)) * s.y;
  m[6] = 2 * (q.y * q.z + q.w * q.x) * s.y;
  m[8] = 2 * (q.x * q.z + q.w * q.y) * s.z;
  m[9] = 2 * (q.y * q.z - q.w * q.x) * s.z;
  m[10] = (1 - 2 * (q.x * q.x + q.y * q.y)) * s.z;
  m[12] = t->translation.x;
  m[13] = t->translation.y;
  m[14] = t->translation.z;
  m[15] = 1;
}
/* Column-major a * b. */
static void Product(const float* a, const float* b, float* out) {
  int r, c, k;
  for (c = 0; c < 4; ++c)
    for (r = 0; r < 4; ++r) {
      float sum = 0;
      for (k = 0; k < 4; ++k) sum += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = sum;
    }
}
static float Distance(TendonVec3 a, TendonVec3 b) {
  const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return sqrtf(dx * dx + dy * dy + dz * dz);
}

static void SkinsAPaletteThatFollowsTheHair(TendonWorld* w, TendonVrmKindId kind) {
  static float palette[kMaxJoints * 16], inverse_bind[kMaxBones * 16];
  static int32_t element_of_bone[kMaxBones];
  static TendonTransform animated_world[kMaxBones];
  TendonVrmSkeleton sk;
  TendonVrmSkin skin;
  TendonVrmAvatarBinding binding;
  TendonPoseStream stream;
  TendonVrmAvatarId avatar = 0;
  TendonVrmAvatarBuffers buf;
  int32_t s, j, b, f, best_skin = -1, best_count = 0, moved_joint = -1;
  float moved = 0.0f;
  const int32_t skins = tendon_vrm_kind_skin_count(w, kind);

  CHECK(tendon_vrm_kind_skeleton(w, kind, &sk) == TENDON_OK);
  CHECK(sk.bone_count == 71 && sk.bone_count <= kMaxBones);
  CHECK(sk.names != NULL && sk.parents != NULL && sk.rest_local != NULL);
  if (sk.bone_count > kMaxBones || sk.names == NULL) return;
  CHECK(sk.parents[0] == -1);
  for (b = 0; b < sk.bone_count; ++b) CHECK(sk.parents[b] < b && sk.names[b] != NULL);
  CHECK(skins > 0);
  /* The skin with the most bones whose names say hair ("Hair" in Godette's bone names). */
  for (s = 0; s < skins; ++s) {
    int32_t count = 0;
    CHECK(tendon_vrm_kind_skin(w, kind, s, &skin) == TENDON_OK);
    for (j = 0; j < skin.joint_count; ++j) count += strstr(sk.names[skin.joints[j]], "air") != NULL ? 1 : 0;
    if (count > best_count) {
      best_count = count;
      best_skin = s;
    }
  }
  CHECK(best_skin >= 0);
  if (best_skin < 0) return;
  CHECK(tendon_vrm_kind_skin(w, kind, best_skin, &skin) == TENDON_OK);
  CHECK(skin.joint_count <= kMaxJoints);
  if (skin.joint_count > kMaxJoints) return;
  /* The palette map: each joint's bone to its slot, every other bone nowhere. */
  for (b = 0; b < sk.bone_count; ++b) {
    element_of_bone[b] = -1;
    memset(inverse_bind + 16 * b, 0, 16 * sizeof(float));
    inverse_bind[16 * b] = inverse_bind[16 * b + 5] = inverse_bind[16 * b + 10] = inverse_bind[16 * b + 15] = 1.0f;
  }
  for (j = 0; j < skin.joint_count; ++j) {
    element_of_bone[skin.joints[j]] = j;
    memcpy(inverse_bind + 16 * skin.joints[j], skin.inverse_binds + 16 * j, 16 * sizeof(float));
  }
  tendon_pose_stream_defaults(&stream);
  stream.layout = TENDON_POSE_SKINNING_MATRIX;
  stream.base = palette;
  stream.element_count = skin.joint_count;
  stream.element_of_bone = element_of_bone;
  stream.element_of_bone_count = sk.bone_count;
  stream.inverse_bind = inverse_bind;
  stream.inverse_bind_count = 16 * sk.bone_count;
  tendon_vrm_avatar_binding_defaults(&binding);
  CHECK(binding.pose_streams == NULL && binding.pose_stream_count == 0 && binding.model_world.rotation.w == 1.0f);
  binding.pose_streams = &stream;
  binding.pose_stream_count = 1;
  /* A map one entry short is refused by name. */
  stream.element_of_bone_count = sk.bone_count - 1;
  CHECK(tendon_bind_vrm_avatar_with(w, kind, &binding, &avatar) != TENDON_OK);
  CHECK(strcmp(tendon_last_error_field(), "pose_streams[0].element_of_bone") == 0);
  stream.element_of_bone_count = sk.bone_count;
  CHECK(tendon_bind_vrm_avatar_with(w, kind, &binding, &avatar) == TENDON_OK && avatar != 0);
  CHECK(tendon_unload_vrm_kind(w, kind) == TENDON_ERROR_IN_USE); /* its avatar holds it */
  CHECK(tendon_vrm_avatar_buffers(w, avatar, &buf) == TENDON_OK && buf.bone_count == sk.bone_count);
  for (f = 0; f < 20; ++f) {
    buf.model_world->translation.x += 0.03f; /* walks sideways: the hair trails */
    tendon_world_step(w, 1.0f / 60.0f, NULL);
  }
  /* The animated pose, to find the joint the simulation moved most. */
  for (b = 0; b < sk.bone_count; ++b)
    animated_world[b] = sk.parents[b] < 0 ? Compose(buf.model_world, &buf.animated_local[b])
                                          : Compose(&animated_world[sk.parents[b]], &buf.animated_local[b]);
  for (j = 0; j < skin.joint_count; ++j) {
    const int32_t bone = skin.joints[j];
    const TendonTransform* world_pose = &buf.output_world[bone];
    const TendonTransform fk = sk.parents[bone] < 0 ? Compose(buf.model_world, &buf.output_local[bone])
                                                    : Compose(&buf.output_world[sk.parents[bone]], &buf.output_local[bone]);
    float model[16], want[16];
    TendonTransform in_model = *world_pose;
    int v;
    const float d = Distance(world_pose->translation, animated_world[bone].translation);
    /* output_world is the forward kinematics of output_local, hair included. */
    CHECK(Distance(world_pose->translation, fk.translation) < 1e-4f);
    /* Model space: Godette's model frame is a pure translation here. */
    in_model.translation.x -= buf.model_world->translation.x;
    in_model.translation.y -= buf.model_world->translation.y;
    in_model.translation.z -= buf.model_world->translation.z;
    MatrixOf(&in_model, model);
    Product(model, skin.inverse_binds + 16 * j, want);
    for (v = 0; v < 16; ++v) {
      if (fabsf(palette[16 * j + v] - want[v]) > 2e-4f) {
        CHECK(fabsf(palette[16 * j + v] - want[v]) <= 2e-4f);
        break;
      }
    }
    if (d > moved) {
      moved = d;
      moved_joint = j;
    }
  }
  CHECK(moved_joint >= 0 && moved > 0.005f); /* a joint of the palette moved with the hair */
  CHECK(tendon_unbind_vrm_avatar(w, avatar) == TENDON_OK);
}

int main(void) {
  const char* data = getenv("TENDON_SHARED_DATA");
  char path[4096];
  TendonWorld* w = NULL;
  TendonWorldSettings ws;
  TendonVrmKindId kind = 0, first = 0;
  TendonVrmSkin skin;
  TendonVrmSkeleton sk;
  TendonVrmOptions refuse;
  int i;
  FILE* probe;
  snprintf(path, sizeof path, "%s/vrm/godette/Godette_vrm_v4.vrm", data != NULL ? data : "../shared/data");
  probe = fopen(path, "rb");
  if (probe == NULL) {
    printf("skipped: %s is not there\n", path);
    return 0;
  }
  fclose(probe);
  tendon_world_settings_defaults(&ws);
  CHECK(tendon_world_create(&ws, &w) == TENDON_OK);
  if (w == NULL) return 1;
  CHECK(tendon_load_vrm_kind(w, path, NULL, &kind) == TENDON_OK);
  SkinsAPaletteThatFollowsTheHair(w, kind);
  CHECK(tendon_vrm_kind_skin(w, kind, tendon_vrm_kind_skin_count(w, kind), &skin) == TENDON_ERROR_OUT_OF_RANGE);
  CHECK(strcmp(tendon_last_error_field(), "skin") == 0);
  CHECK(tendon_unload_vrm_kind(w, kind) == TENDON_OK); /* no avatar left */
  CHECK(tendon_unload_vrm_kind(w, kind) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_vrm_kind_skeleton(w, kind, &sk) == TENDON_ERROR_STALE_HANDLE);
  CHECK(tendon_vrm_kind_skin_count(w, kind) == 0);
  /* A refused load (no clips to learn limits from) leaves no kind, and loads and unloads
   * reuse the kinds' slots. */
  tendon_vrm_options_defaults(&refuse);
  refuse.limit_source = TENDON_LIMITS_CLIPS;
  CHECK(tendon_load_vrm_kind(w, path, &refuse, &kind) != TENDON_OK);
  for (i = 0; i < 50; ++i) {
    CHECK(tendon_load_vrm_kind(w, path, NULL, &kind) == TENDON_OK);
    if (i == 0) first = kind;
    CHECK((uint32_t)kind == (uint32_t)first); /* the same slot, a newer generation */
    CHECK(tendon_unload_vrm_kind(w, kind) == TENDON_OK);
  }
  CHECK(tendon_vrm_kind_bone_count(w, first) == 0);
  tendon_world_destroy(w);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
