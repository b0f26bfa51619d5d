// kernel/contacts/islands.cpp: islands of touching ragdolls, and colours for the big ones.
//
// Union-find over ragdoll slots (the lower slot is the root, so the result does not depend
// on the pairs' order beyond the broad phase's), then a counting sort of the pairs by
// island: small islands first, in slot order of their roots, each one's pairs in
// broad-phase order. The big islands' pairs are coloured greedily, each taking the lowest
// colour neither of its bodies has used.
#include "kernel/contacts/islands.h"

#include <algorithm>

namespace tendon::detail {

void Islands::Reserve(int32_t total_parts, std::size_t pair_capacity, int32_t slot_count) {
  body_colours_.resize(total_parts);
  ordered_pairs_.resize(pair_capacity);
  island_parent_.resize(slot_count);
  island_size_.resize(slot_count);
  island_fill_.resize(slot_count);
  island_start_.resize(static_cast<std::size_t>(slot_count) + 1);
}

int32_t Islands::IslandOf(int32_t slot) {
  while (island_parent_[slot] != slot) {
    island_parent_[slot] = island_parent_[island_parent_[slot]];
    slot = island_parent_[slot];
  }
  return slot;
}
void Islands::Order(std::span<PartPair> pairs, std::span<const PairBody> bodies, int32_t body_count,
                    const std::vector<RagdollSlot>& slots, FrameStats& stats) {
  const auto pair_count = static_cast<int32_t>(pairs.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    island_parent_[i] = static_cast<int32_t>(i);
    island_size_[i] = 0;
  }
  auto awake_slot = [&](int32_t body) {
    const int32_t slot = bodies[body].slot;
    return slots[slot].asleep ? -1 : slot;
  };
  for (int32_t i = 0; i < pair_count; ++i) {
    const int32_t sa = awake_slot(pairs[i].a), sb = awake_slot(pairs[i].b);
    if (sa < 0 || sb < 0) continue;
    const int32_t ra = IslandOf(sa), rb = IslandOf(sb);
    if (ra != rb) island_parent_[std::max(ra, rb)] = std::min(ra, rb);  // the lower slot is the root
  }
  for (int32_t i = 0; i < pair_count; ++i) {
    const int32_t sa = awake_slot(pairs[i].a);
    pairs[i].colour = IslandOf(sa >= 0 ? sa : awake_slot(pairs[i].b));  // the island, for now
    ++island_size_[pairs[i].colour];
  }
  // Small islands first, in slot order of their roots, each one's pairs in broad-phase
  // order; each island's range is [island_start_[k], island_start_[k + 1]).
  island_count_ = 0;
  int32_t next = 0, big_islands = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const int32_t size = island_size_[i];
    big_islands += size > kColouredIsland ? 1 : 0;
    if (size == 0 || size > kColouredIsland) continue;
    island_fill_[i] = next;
    island_start_[island_count_++] = next;
    next += size;
  }
  island_start_[island_count_] = next;
  const int32_t coloured_begin = next;
  for (int32_t i = 0; i < pair_count; ++i) {
    const int32_t island = pairs[i].colour;
    if (island_size_[island] <= kColouredIsland) ordered_pairs_[island_fill_[island]++] = pairs[i];
  }
  // Big islands: coloured.
  for (int32_t i = 0; i < body_count; ++i) body_colours_[i] = 0;
  int32_t counts[kPairColours] = {};
  for (int32_t i = 0; i < pair_count; ++i) {
    PartPair& p = pairs[i];
    if (island_size_[p.colour] <= kColouredIsland) {
      p.colour = -1;
      continue;
    }
    const uint64_t used = body_colours_[p.a] | body_colours_[p.b];
    int32_t colour = kPairColours - 1;
    for (int32_t c = 0; c < kPairColours - 1; ++c) {
      if ((used & (uint64_t{1} << c)) == 0) {
        colour = c;
        break;
      }
    }
    p.colour = colour;
    if (colour < kPairColours - 1) {
      body_colours_[p.a] |= uint64_t{1} << colour;
      body_colours_[p.b] |= uint64_t{1} << colour;
    }
    ++counts[colour];
  }
  stats.ragdoll_islands = island_count_ + big_islands;
  stats.coloured_ragdoll_pairs = pair_count - coloured_begin;
  colour_start_[0] = coloured_begin;
  for (int32_t c = 0; c < kPairColours; ++c) colour_start_[c + 1] = colour_start_[c] + counts[c];
  int32_t fill[kPairColours];
  for (int32_t c = 0; c < kPairColours; ++c) fill[c] = colour_start_[c];
  for (int32_t i = 0; i < pair_count; ++i)
    if (pairs[i].colour >= 0) ordered_pairs_[fill[pairs[i].colour]++] = pairs[i];
}


}  // namespace tendon::detail
