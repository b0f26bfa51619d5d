// Results stay what they were, bit for bit, on every instruction set: the state hashes of
// the determinism scenes and of a small pile of Jolt humans are compared with the values
// recorded before the World was split into systems (issue 10). A change that moves any bit
// of any result, on any kernel, fails here; one that is meant to change results must
// record the new hashes (the failure message prints them) and say why in its commit.
#include <cstdio>
#include <string>

#include "determinism_scenes.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/shared_data.h"

namespace tendon::test {
namespace {

// One hash of a run: the FNV-1a fold of its per-frame state hashes.
uint64_t Fold(const std::vector<uint64_t>& frames) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t f : frames) {
    for (int b = 0; b < 8; ++b) {
      h ^= (f >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

struct Golden {
  Isa isa;
  uint64_t scene, heap, pile;
};

// Every kernel gives its scalar reference's bits (kScalar for SSE2 and SSE4.2; kScalarFma
// for AVX2+FMA, AVX-512 and NEON): the kernels evaluate the same arithmetic per lane, a
// branch that skips work when no lane of a batch needs it is an exact no-op for the lanes
// that take it anyway, and a sleeping lane computed beside awake ones stores nothing. So
// only the references' hashes are recorded, and every instruction set the CPU runs must
// reproduce its reference's.
//
// Recorded on main at 9878d5b (g++ 12 and clang 14, -ffp-contract=off: the same bits).
// Changed since, each for a reason:
// - the scenes, issue 11: a rigid Turn past ~1 rad is normalised exactly instead of by one
//   Newton step (which went negative past 2 sqrt(2) rad).
// - every crate heap, issue 11: the crates are bound turned about y in a 20.5 cm grid, so
//   corners start up to a few cm inside their neighbours, and a penetration a body is
//   placed in is now pushed out at WorldSettings::ragdoll_max_push_speed instead of in
//   one substep. The scenes and piles, placed clear, are unchanged bit for bit.
// - every scene with pairs between ragdolls, issue 15: only the pairs with a contact are
//   ordered, and every island's pairs are solved colour by colour (before, an island of
//   up to 512 pairs in reach was solved in broad-phase order): another Gauss-Seidel order.
// - the SIMD kernels, issue 15 (AVX-512's 16-lane blocks): until then a kernel matched its
//   reference within 1e-5 m and had hashes of its own, because a lane with no normal
//   impulse took its batch's "touching" flag and a sleeping lane's contact state took its
//   batch's computation. Both now keep their own, so the SIMD rows became their
//   references' rows (the references' hashes did not move).
// - every scene with pairs between ragdolls, issue 15: the pairs' passes run a colour's
//   pairs side by side in the rigid kernels' lanes (pair_kernel_impl.h), with each
//   instruction set's arithmetic (FMA where it fuses) instead of one scalar routine for all.
// - every scene with pairs between ragdolls, issue 15: the frame's pair contacts take each
//   sample straight into the other part's shape frame (one matrix) and fix their points
//   in the bodies by matrices, where they turned it by quaternions: other last bits.
// - the scenes, issue 38: a kTendon chain's links are segments against its outside spheres
//   and capsules (chain_kernel_verlet.h's CollideLink), and the scenes' sphere collider sits
//   beside a link of its chain.
// - every scene with pairs between ragdolls, issue 38: a pair keeps the deepest of its
//   frame's contacts and those that span the contact (the four nearest left a box resting
//   on a box held along one edge, and it rocked off), and its position and velocity passes
//   sweep its contacts kPairSweeps times (one sweep spun a box that landed flat).
// - ARM64, at issue 41: the same bits as x86-64 for every hash. Until then ARM64 had a
//   table of its own, put down to glibc's sin and cos; it was g++ for aarch64 contracting
//   a*b+c into FMAs in the tests' and the loaders' own arithmetic (the scene's animation,
//   the pile's placement, the Jolt human's loaded frames). Tests and ports are compiled
//   -ffp-contract=off as the kernel is, and qemu-aarch64 (IEEE arithmetic emulated
//   exactly) reproduces the values below for the scalar, scalar+FMA and NEON kernels.
constexpr Golden kGolden[] = {
    {Isa::kScalar, 0x2613c29f2fd43139ull, 0x345bdd0e60de6681ull, 0xce5747c1a219b95cull},
    {Isa::kScalarFma, 0x639810ef497b7860ull, 0xb1ef6a12844490fdull, 0x719114dc1d6d29ceull},
};

// The recorded reference whose bits `isa` reproduces.
const Golden& ReferenceOf(Isa isa) {
  return kGolden[ScalarReferenceOf(isa) == Isa::kScalarFma ? 1 : 0];
}

std::string Hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llxull", static_cast<unsigned long long>(v));
  return text;
}

// Two piles of six Jolt humans (stabilised masses, dead_pose1, motors holding it) dropped
// onto a box, 8 XPBD substeps, 90 steps of 1/60 s: the pile scene of tendon_bench, small.
// Returns the per-frame hashes, or nothing when ../shared/data is not there.
std::vector<uint64_t> RunPile(Isa isa) {
  auto ragdoll = ports::LoadJoltHumanRagdoll(ports::SharedDataPath("jolt-human/ragdoll.json"), true);
  auto pose = ports::LoadJoltAnimation(ports::SharedDataPath("jolt-human/animations/dead_pose1.json"));
  if (!ragdoll.ok() || !pose.ok()) return {};
  const RagdollSettings& human = ragdoll.value();
  const auto n = static_cast<int32_t>(human.parts.size());
  std::vector<Transform> model(n);
  std::vector<Quat> targets(n);
  ports::SampleJoltPartPose(human, pose.value(), 0.0f, model, targets);
  WorldSettings ws;
  ws.isa = isa;
  ws.ragdoll_substeps = 8;
  auto world = MakeWorld(ws);
  EXPECT_TRUE(world->BuildStaticWorld(StaticWorldSettings{.boxes = {StaticBox{Transform{{0, -1, 0}, {}, {1, 1, 1}}, {20, 1, 20}}}}).ok());
  const RagdollArchetypeId a = world->BuildRagdollArchetype(human).value();
  constexpr int kPiles = 2, kPerPile = 6;
  std::vector<std::vector<Transform>> out(kPiles * kPerPile, std::vector<Transform>(n));
  std::vector<Transform> start(n);
  for (int pile = 0; pile < kPiles; ++pile) {
    for (int i = 0; i < kPerPile; ++i) {
      const Vec3 centre{4.0f * static_cast<float>(pile) - 2.0f, 0, 0};
      const Quat turn = AxisAngle(Vec3{0, 1, 0}, 0.62831853f * static_cast<float>(i));
      const Vec3 hips{model[0].translation.x, 0, model[0].translation.z};
      const float lift = 0.6f * static_cast<float>(i + 1) - model[0].translation.y;
      for (int32_t j = 0; j < n; ++j)
        start[j] = Transform{centre + Rotate(turn, model[j].translation - hips) + Vec3{0, lift, 0},
                             Normalize(turn * model[j].rotation), {1, 1, 1}};
      RagdollBinding b;
      b.archetype = a;
      b.start_parts = start;
      b.output_parts = out[pile * kPerPile + i];
      const RagdollId id = world->BindRagdoll(b).value();
      EXPECT_TRUE(world->SetRagdollMotorTargets(id, targets, 1.0f).ok());
    }
  }
  std::vector<uint64_t> hashes;
  bool saw_pairs = false;
  for (int step = 0; step < 90; ++step) {
    saw_pairs = world->Step(1.0f / 60.0f).contact_ragdoll_pairs > 0 || saw_pairs;
    hashes.push_back(world->StateHash());
  }
  EXPECT_TRUE(saw_pairs) << "the piles must touch";
  return hashes;
}

// The hashes are recorded on x86-64 and ARM64, which agree bit for bit; other platforms'
// C libraries may round sin and cos (the scenes' animation and placement) otherwise.
TEST(GoldenHash, EveryInstructionSetReproducesTheRecordedStateHashes) {
#if !defined(__x86_64__) && !defined(_M_X64) && !defined(__aarch64__)
  GTEST_SKIP() << "hashes are recorded for x86-64 and ARM64 only";
#endif
  const TaskHooks serial{nullptr, nullptr, nullptr, 1};
  int checked = 0;
  for (Isa isa : kConcreteIsas) {
    if (!IsIsaSupported(isa)) continue;
    ++checked;
    const Golden g{isa, ReferenceOf(isa).scene, ReferenceOf(isa).heap, ReferenceOf(isa).pile};
    bool coloured = false;
    const uint64_t scene = Fold(RunScene(serial, g.isa, /*render_interpolation=*/false));
    const uint64_t heap = Fold(RunHeap(serial, &coloured, g.isa));
    EXPECT_TRUE(coloured);
    EXPECT_EQ(scene, g.scene) << ToString(g.isa) << " determinism scene: now " << Hex(scene);
    EXPECT_EQ(heap, g.heap) << ToString(g.isa) << " crate heap: now " << Hex(heap);
    const std::vector<uint64_t> pile = RunPile(g.isa);
    if (pile.empty()) {
      std::printf("%s: ../shared/data/jolt-human is not here; the pile is not checked\n", ToString(g.isa));
      continue;
    }
    EXPECT_EQ(Fold(pile), g.pile) << ToString(g.isa) << " Jolt-human piles: now " << Hex(Fold(pile));
  }
  EXPECT_GE(checked, 1) << "the scalar kernel runs everywhere";
}

}  // namespace
}  // namespace tendon::test
