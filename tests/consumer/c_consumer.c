/* A C11 host of the installed C ABI (find_package(tendon COMPONENTS c), or pkg-config
 * tendon_c): a chain of three bones steps, and its pose comes back finite and swinging. */
#include <math.h>
#include <stdio.h>

#include "tendon/tendon_c.h"

int main(void) {
  TendonWorldSettings ws;
  TendonWorld* world = NULL;
  TendonChainBone bones[3];
  TendonChainArchetypeSettings s;
  TendonChainArchetypeId arch = 0;
  TendonChainBinding b = {0};
  TendonChainId chain = 0;
  TendonTransform root = tendon_transform_identity(), animated[3], output[3];
  int i, f;
  tendon_world_settings_defaults(&ws);
  if (tendon_world_create(&ws, &world) != TENDON_OK) return 1;
  tendon_chain_archetype_settings_defaults(&s);
  for (i = 0; i < 3; ++i) {
    bones[i].parent = i - 1;
    bones[i].rest_local = tendon_transform_identity();
    bones[i].rest_local.translation.y = i == 0 ? 0.0f : -0.1f;
    bones[i].virtual_tip = 0;
    animated[i] = output[i] = bones[i].rest_local;
  }
  s.bones = bones;
  s.bone_count = 3;
  if (tendon_build_chain_archetype(world, &s, &arch) != TENDON_OK) return 2;
  b.archetype = arch;
  b.root_parent_world = &root;
  b.animated_local = animated;
  b.animated_count = 3;
  b.output_local = output;
  b.output_count = 3;
  if (tendon_bind_chain(world, &b, &chain) != TENDON_OK) return 3;
  for (f = 0; f < 60; ++f) {
    root.translation.x = 0.3f * sinf(0.2f * (float)f);
    tendon_world_step(world, 1.0f / 60.0f, NULL);
  }
  if (!isfinite(output[1].rotation.w) || fabsf(output[1].rotation.z) < 1e-4f) return 4;
  tendon_world_destroy(world);
  puts("c consumer: ok");
  return 0;
}
