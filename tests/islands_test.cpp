// Islands::KeepPairs: dropping the pairs without contacts keeps the solve order of the
// rest (every island's pairs in order, the big islands' colours in order and still free
// of shared bodies), so the kept pairs solve exactly as they did among the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "kernel/contacts/islands.h"

namespace tendon::test {
namespace {

using detail::Islands;
using detail::PairBody;
using detail::PartPair;

// `slots` awake ragdolls of `parts` bodies each; body b belongs to slot b / parts.
struct Bodies {
  std::vector<detail::RagdollSlot> slots;
  std::vector<PairBody> bodies;
  Bodies(int32_t slot_count, int32_t parts) : slots(slot_count) {
    for (int32_t b = 0; b < slot_count * parts; ++b) bodies.push_back(PairBody{0, 0, b % parts, b / parts});
  }
};

std::vector<PartPair> Ordered(const Islands& islands, int32_t count) {
  std::vector<PartPair> out;
  for (int32_t i = 0; i < count; ++i) out.push_back(islands.pair(i));
  return out;
}

std::vector<int32_t> Visited(const Islands& islands) {
  std::vector<int32_t> seen;
  islands.ForEach(TaskHooks{}, [&](int32_t i) { seen.push_back(i); });
  return seen;
}

TEST(Islands, KeepingPairsKeepsEachIslandsOrderAndNamesWhereTheirContactsAre) {
  // Two islands of two ragdolls (slots 0-1 and 2-3), three pairs each.
  Bodies scene(4, 3);
  std::vector<PartPair> pairs = {{0, 3, 0, 0}, {6, 9, 0, 0}, {1, 4, 0, 0}, {7, 10, 0, 0}, {2, 5, 0, 0}, {8, 11, 0, 0}};
  Islands islands;
  islands.Reserve(static_cast<int32_t>(scene.bodies.size()), pairs.size(), 4);
  FrameStats stats;
  islands.Order(pairs, scene.bodies, static_cast<int32_t>(scene.bodies.size()), scene.slots, stats);
  EXPECT_EQ(stats.ragdoll_islands, 2);
  const std::vector<PartPair> before = Ordered(islands, 6);
  // Order: island of slot 0 first, each island's pairs in broad-phase order.
  EXPECT_EQ(before[0].a, 0);
  EXPECT_EQ(before[1].a, 1);
  EXPECT_EQ(before[3].a, 6);
  const int32_t kept = islands.KeepPairs([](int32_t i) { return i != 1 && i != 3 && i != 4; });
  ASSERT_EQ(kept, 3);
  const std::vector<PartPair> after = Ordered(islands, kept);
  const int32_t expected_found[] = {0, 2, 5};
  for (int32_t k = 0; k < kept; ++k) {
    EXPECT_EQ(after[k].found, expected_found[k]);
    EXPECT_EQ(after[k].a, before[expected_found[k]].a);
    EXPECT_EQ(after[k].b, before[expected_found[k]].b);
  }
  EXPECT_EQ(Visited(islands), (std::vector<int32_t>{0, 1, 2}));
  // Dropping every pair leaves nothing to visit.
  EXPECT_EQ(islands.KeepPairs([](int32_t) { return false; }), 0);
  EXPECT_TRUE(Visited(islands).empty());
}

TEST(Islands, KeepingPairsOfABigIslandKeepsItsColoursInOrderWithoutSharedBodies) {
  // One heap: 40 ragdolls of 8 parts, each part paired with parts of the next ragdolls,
  // far more than kColouredIsland pairs: coloured.
  constexpr int32_t kSlots = 40, kParts = 8;
  Bodies scene(kSlots, kParts);
  std::vector<PartPair> pairs;
  for (int32_t s = 0; s + 1 < kSlots; ++s)
    for (int32_t p = 0; p < kParts; ++p)
      for (int32_t q = 0; q < kParts; q += 3)
        for (int32_t t = s + 1; t < std::min(kSlots, s + 3); ++t) pairs.push_back({s * kParts + p, t * kParts + q, 0, 0});
  ASSERT_GT(pairs.size(), static_cast<std::size_t>(detail::kColouredIsland));
  const auto count = static_cast<int32_t>(pairs.size());
  Islands islands;
  islands.Reserve(kSlots * kParts, pairs.size(), kSlots);
  FrameStats stats;
  islands.Order(pairs, scene.bodies, kSlots * kParts, scene.slots, stats);
  ASSERT_EQ(stats.coloured_ragdoll_pairs, count);
  const std::vector<PartPair> before = Ordered(islands, count);
  auto keep = [](int32_t i) { return (i * 7) % 3 != 0; };
  const int32_t kept = islands.KeepPairs(keep);
  std::vector<int32_t> expected;
  for (int32_t i = 0; i < count; ++i)
    if (keep(i)) expected.push_back(i);
  ASSERT_EQ(kept, static_cast<int32_t>(expected.size()));
  const std::vector<PartPair> after = Ordered(islands, kept);
  std::set<int32_t> bodies_in_colour;
  int32_t colour = -1;
  for (int32_t k = 0; k < kept; ++k) {
    EXPECT_EQ(after[k].found, expected[k]);
    EXPECT_EQ(after[k].a, before[expected[k]].a);
    EXPECT_EQ(after[k].colour, before[expected[k]].colour);
    ASSERT_GE(after[k].colour, colour) << "colours stay in order";
    if (after[k].colour != colour) {
      colour = after[k].colour;
      bodies_in_colour.clear();
    }
    if (colour == detail::kPairColours - 1) continue;  // the overflow colour runs serially
    EXPECT_TRUE(bodies_in_colour.insert(after[k].a).second) << "pair " << k << " shares a body in colour " << colour;
    EXPECT_TRUE(bodies_in_colour.insert(after[k].b).second) << "pair " << k << " shares a body in colour " << colour;
  }
  std::vector<int32_t> all(kept);
  for (int32_t k = 0; k < kept; ++k) all[k] = k;
  EXPECT_EQ(Visited(islands), all);
}

}  // namespace
}  // namespace tendon::test
