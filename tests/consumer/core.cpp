// Builds against the installed tendon and tendon_ports only (no oneTBB), with the
// designated initialisers README shows, under -Wall -Wextra -Wpedantic -Werror; steps a
// chain with a collider and a ragdoll on a static world, and exits 0 when both moved and
// stayed finite and the port reported a missing file as an error.
#include <cstdio>
#include <vector>

#include <ports/jolt_human/jolt_human.h>
#include <tendon/tendon.h>

int main() {
  auto created = tendon::World::Create(tendon::WorldSettings{});
  if (!created.ok()) return 1;
  tendon::World& world = *created.value();
  tendon::ChainArchetypeSettings hair;
  hair.bones = {{-1, {}}, {0, {{0, -0.06f, 0}}}, {1, {{0, -0.06f, 0}}}};
  hair.colliders.push_back({.shape = tendon::ColliderShape::kSphere, .bone = -1, .frame = 0, .radius = 0.1f});
  auto archetype = world.BuildChainArchetype(hair);
  if (!archetype.ok()) return 2;
  tendon::Transform head{};
  std::vector<tendon::Transform> animated(3), output(3);
  for (int i = 0; i < 3; ++i) animated[i] = output[i] = hair.bones[i].rest_local;
  tendon::ChainBinding b;
  b.archetype = archetype.value();
  b.root_parent_world = &head;
  b.animated_local = animated;
  b.output_local = output;
  b.collider_frames = {&head, 1};
  if (!world.BindChain(b).ok()) return 3;
  if (world.BuildStaticWorld({.planes = {{{0, 1, 0}, 0}}}).code != tendon::ErrorCode::kNone) return 4;
  tendon::RagdollSettings box;
  box.parts.push_back({.shape = {.type = tendon::PartShape::kBox, .half_extents = {0.1f, 0.1f, 0.1f}}, .mass = 1.0f});
  auto box_archetype = world.BuildRagdollArchetype(box);
  if (!box_archetype.ok()) return 5;
  std::vector<tendon::Transform> part(1);
  tendon::RagdollBinding rb;
  rb.archetype = box_archetype.value();
  rb.placement = {{0.5f, 1.0f, 0}, {}, {1, 1, 1}};
  rb.output_parts = part;
  if (!world.BindRagdoll(rb).ok()) return 6;
  for (int f = 0; f < 60; ++f) {
    head.translation.x = 0.01f * static_cast<float>(f);
    world.Step(1.0f / 60.0f);
  }
  const bool swung = !(output[1].rotation == animated[1].rotation);
  const bool fell = part[0].translation.y < 0.5f;
  const bool port_says_why = !tendon::ports::LoadJoltHumanRagdoll("no/such/file.json").ok();
  std::printf("consumer_core: %s kernel, swung=%d fell=%d\n", tendon::ToString(world.ActiveIsa()), swung, fell);
  return swung && fell && port_says_why && tendon::IsFinite(output[2]) && tendon::IsFinite(part[0]) ? 0 : 7;
}
