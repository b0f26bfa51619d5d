// Islands::Order: every island's pairs come together and colour by colour (no body twice
// in a colour, colours in order), the islands with the most pairs first (ties in slot
// order of their roots); an island that
// holds most of the frame's pairs (and more than kColouredIsland) is split by colour and
// comes last; ForEach visits every pair once.
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

// `slot_count` awake ragdolls of `parts` bodies each; body b belongs to slot b / parts.
struct Bodies {
  std::vector<detail::RagdollSlot> slots;
  std::vector<PairBody> bodies;
  Bodies(int32_t slot_count, int32_t parts) : slots(slot_count) {
    for (int32_t b = 0; b < slot_count * parts; ++b) bodies.push_back(PairBody{0, 0, b % parts, b / parts});
  }
};

// Pairs between ragdolls s and s + 1 .. s + reach - 1 of slots [first, last), every part
// of one against every third part of the other: a heap.
void AddHeap(std::vector<PartPair>* pairs, int32_t first, int32_t last, int32_t parts, int32_t reach) {
  for (int32_t s = first; s + 1 < last; ++s)
    for (int32_t p = 0; p < parts; ++p)
      for (int32_t q = 0; q < parts; q += 3)
        for (int32_t t = s + 1; t < std::min(last, s + reach); ++t) {
          const auto found = static_cast<int32_t>(pairs->size());
          pairs->push_back({s * parts + p, t * parts + q, 0, found});
        }
}

struct Ordered {
  std::vector<PartPair> pairs;
  FrameStats stats;
};

Ordered Order(const Bodies& scene, std::vector<PartPair> pairs) {
  Islands islands;
  islands.Reserve(static_cast<int32_t>(scene.bodies.size()), pairs.size(), static_cast<int32_t>(scene.slots.size()));
  Ordered out;
  islands.Order(pairs, scene.bodies, static_cast<int32_t>(scene.bodies.size()), scene.slots, out.stats);
  for (std::size_t i = 0; i < pairs.size(); ++i) out.pairs.push_back(islands.pair(static_cast<int32_t>(i)));
  std::vector<int32_t> seen;
  islands.ForEach(TaskHooks{}, [&](int32_t i) { seen.push_back(i); });
  std::vector<int32_t> all(pairs.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int32_t>(i);
  EXPECT_EQ(seen, all) << "ForEach visits every pair once, in order, with one thread";
  return out;
}

// Checks runs of one island: colours ascending, no body twice in a colour (but the
// overflow), and returns the slots the run touches.
std::set<int32_t> CheckIslandRun(const Bodies& scene, const std::vector<PartPair>& pairs, std::size_t begin,
                                 std::size_t end) {
  std::set<int32_t> slots, in_colour;
  int32_t colour = -1;
  for (std::size_t i = begin; i < end; ++i) {
    const PartPair& p = pairs[i];
    slots.insert(scene.bodies[p.a].slot);
    slots.insert(scene.bodies[p.b].slot);
    EXPECT_GE(p.colour, colour) << "colours in order";
    if (p.colour != colour) {
      colour = p.colour;
      in_colour.clear();
    }
    if (colour == detail::kPairColours - 1) continue;
    EXPECT_TRUE(in_colour.insert(p.a).second) << "pair " << i << " shares body " << p.a << " in colour " << colour;
    EXPECT_TRUE(in_colour.insert(p.b).second) << "pair " << i << " shares body " << p.b << " in colour " << colour;
  }
  return slots;
}

TEST(Islands, EachIslandsPairsComeTogetherColourByColour) {
  // Two small islands, their pairs interleaved in broad-phase order: slots 2-3 and 0-1.
  Bodies scene(4, 3);
  std::vector<PartPair> pairs;
  for (int32_t p = 0; p < 3; ++p) {
    for (int32_t q = 0; q < 3; ++q) {
      pairs.push_back({6 + p, 9 + q, 0, static_cast<int32_t>(pairs.size())});
      pairs.push_back({p, 3 + q, 0, static_cast<int32_t>(pairs.size())});
    }
  }
  const Ordered o = Order(scene, pairs);
  EXPECT_EQ(o.stats.ragdoll_islands, 2);
  EXPECT_EQ(o.stats.coloured_ragdoll_pairs, 0);
  // Equal islands: the island of slot 0 first (slot order of roots), then slots 2-3.
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 0, 9), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 9, 18), (std::set<int32_t>{2, 3}));
  // Each pair's `found` still names where its contacts are.
  for (const PartPair& p : o.pairs) {
    EXPECT_EQ(pairs[p.found].a, p.a);
    EXPECT_EQ(pairs[p.found].b, p.b);
  }
}

TEST(Islands, TheIslandsWithTheMostPairsComeFirst) {
  // Islands of 1, 3, 2 and 3 pairs, in slot order: slots 0-1, 2-3, 4-5 and 6-7. The
  // workers take islands in this order, one at a time: the longest start first.
  Bodies scene(8, 3);
  std::vector<PartPair> pairs;
  auto add = [&](int32_t slot, int32_t count) {
    for (int32_t p = 0; p < count; ++p)
      pairs.push_back({slot * 3 + p, (slot + 1) * 3 + p, 0, static_cast<int32_t>(pairs.size())});
  };
  add(0, 1);
  add(2, 3);
  add(4, 2);
  add(6, 3);
  const Ordered o = Order(scene, pairs);
  EXPECT_EQ(o.stats.ragdoll_islands, 4);
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 0, 3), (std::set<int32_t>{2, 3}));  // 3 pairs, the lower root
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 3, 6), (std::set<int32_t>{6, 7}));  // 3 pairs
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 6, 8), (std::set<int32_t>{4, 5}));  // 2
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 8, 9), (std::set<int32_t>{0, 1}));  // 1
}

// Two heaps of 8-part ragdolls, slots [0, split) and [split, end) (reach 3 and
// `second_reach`), ordered; `first` is the first heap's pair count.
struct TwoHeaps {
  Bodies scene;
  int32_t first = 0;
  Ordered o;
  TwoHeaps(int32_t split, int32_t end, int32_t second_reach) : scene(end, 8) {
    std::vector<PartPair> pairs;
    AddHeap(&pairs, 0, split, 8, 3);
    first = static_cast<int32_t>(pairs.size());
    AddHeap(&pairs, split, end, 8, second_reach);
    o = Order(scene, pairs);
  }
};

TEST(Islands, AnIslandHoldingMostPairsIsSplitByColourAndRunsLast) {
  // A heap of 30 ragdolls (slots 0-29, far more than kColouredIsland pairs) and a pair of
  // ragdolls (slots 30-31) beside it.
  const TwoHeaps t(30, 32, 2);
  const Bodies& scene = t.scene;
  const Ordered& o = t.o;
  const int32_t heap = t.first;
  ASSERT_GT(heap, detail::kColouredIsland);
  const auto small = static_cast<int32_t>(o.pairs.size()) - heap;
  EXPECT_EQ(o.stats.ragdoll_islands, 2);
  EXPECT_EQ(o.stats.coloured_ragdoll_pairs, heap);
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 0, small), (std::set<int32_t>{30, 31}));
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, small, o.pairs.size()).size(), 30u);
}

TEST(Islands, BigIslandsNoneOfWhichHoldsMostPairsAreNotSplit) {
  // Two equal heaps, each over kColouredIsland pairs: one task each.
  const TwoHeaps t(20, 40, 3);
  const Bodies& scene = t.scene;
  const Ordered& o = t.o;
  const int32_t first = t.first;
  ASSERT_GT(first, detail::kColouredIsland);
  EXPECT_EQ(o.stats.ragdoll_islands, 2);
  EXPECT_EQ(o.stats.coloured_ragdoll_pairs, 0);
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, 0, first).size(), 20u);
  EXPECT_EQ(CheckIslandRun(scene, o.pairs, first, o.pairs.size()).size(), 20u);
}

TEST(Islands, ASleepingRagdollSharedByTwoIslandsTakesNoColour) {
  // Slot 0 sleeps; slots 1 and 2 each touch its body 0 with two parts: two islands (a
  // sleeping ragdoll joins none). Only read in its pairs, it takes no colour, so each
  // island colours its pairs as if the other were not there.
  Bodies scene(3, 2);
  scene.slots[0].asleep = true;
  std::vector<PartPair> pairs = {{0, 2, 0, 0}, {0, 4, 0, 1}, {0, 3, 0, 2}, {0, 5, 0, 3}};
  const Ordered o = Order(scene, pairs);
  EXPECT_EQ(o.stats.ragdoll_islands, 2);
  for (const PartPair& p : o.pairs) EXPECT_EQ(p.colour, 0) << "pair " << p.a << "-" << p.b;
}

}  // namespace
}  // namespace tendon::test
