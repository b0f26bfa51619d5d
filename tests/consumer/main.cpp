// Builds against the installed headers and libraries only, steps a chain on oneTBB and
// exits 0 when the chain swung and stayed finite.
#include <cstdio>

#include <tendon/tbb_task_system.h>
#include <tendon/tendon.h>

int main() {
  tendon::TbbTaskSystem tasks(2);
  tendon::WorldSettings ws;
  ws.tasks = tasks.hooks();
  auto created = tendon::World::Create(ws);
  if (!created.ok()) return 1;
  tendon::World& world = *created.value();
  tendon::ChainArchetypeSettings s;
  for (int i = 0; i < 4; ++i) s.bones.push_back({i - 1, {{i == 0 ? 0.0f : 0.1f, 0, 0}, {}, {1, 1, 1}}});
  s.settings.stiffness = 0.0f;
  auto archetype = world.BuildChainArchetype(s);
  if (!archetype.ok()) return 2;
  tendon::Transform root{};
  tendon::Transform animated[4], output[4];
  for (int i = 0; i < 4; ++i) animated[i] = output[i] = s.bones[i].rest_local;
  tendon::ChainBinding b;
  b.archetype = archetype.value();
  b.root_parent_world = &root;
  b.animated_local = animated;
  b.output_local = output;
  if (!world.BindChain(b).ok()) return 3;
  for (int f = 0; f < 60; ++f) world.Step(1.0f / 60.0f);
  const bool swung = !(output[0].rotation == animated[0].rotation);
  std::printf("consumer: %s kernel, swung=%d\n", tendon::ToString(world.ActiveIsa()), swung ? 1 : 0);
  return swung && tendon::IsFinite(output[3]) ? 0 : 4;
}
