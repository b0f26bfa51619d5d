// kernel/contacts/islands.cpp: islands of touching ragdolls, each one's pairs by colour.
//
// Union-find over ragdoll slots (the lower slot is the root, so the result does not depend
// on the pairs' order beyond the broad phase's), then a counting sort of the pairs by
// island (islands by size, the most pairs first, each one's pairs in broad-phase order,
// the split island last), then per island the greedy colouring and a counting sort by colour.
#include "kernel/contacts/islands.h"

#include <algorithm>

namespace tendon::detail {

void Islands::Reserve(int32_t total_parts, std::size_t pair_capacity, int32_t slot_count) {
  body_colours_.resize(total_parts);
  ordered_pairs_.resize(pair_capacity);
  island_parent_.resize(slot_count);
  island_size_.resize(slot_count);
  island_fill_.resize(slot_count);
  island_root_.resize(slot_count);
  island_start_.resize(static_cast<std::size_t>(slot_count) + 1);
  by_island_.resize(pair_capacity);
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
  // The island split by colour, if one holds more than half the pairs and more than
  // kColouredIsland (at most one can hold more than half).
  int32_t split = -1;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const int32_t size = island_size_[i];
    if (size > kColouredIsland && 2 * static_cast<int64_t>(size) > pair_count) split = static_cast<int32_t>(i);
  }
  // Islands by size, the most pairs first (ties in slot order of their roots), each one's
  // range [island_start_[k], island_start_[k + 1]); the split island's pairs after the
  // last. ForEachBatch hands them out in that order: the longest start first.
  island_count_ = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (island_size_[i] > 0 && static_cast<int32_t>(i) != split) island_root_[island_count_++] = static_cast<int32_t>(i);
  }
  std::sort(island_root_.begin(), island_root_.begin() + island_count_, [&](int32_t x, int32_t y) {
    return island_size_[x] > island_size_[y] || (island_size_[x] == island_size_[y] && x < y);
  });
  int32_t next = 0;
  for (int32_t k = 0; k < island_count_; ++k) {
    island_fill_[island_root_[k]] = next;
    island_start_[k] = next;
    next += island_size_[island_root_[k]];
  }
  island_start_[island_count_] = next;
  if (split >= 0) island_fill_[split] = next;
  for (int32_t i = 0; i < pair_count; ++i) by_island_[island_fill_[pairs[i].colour]++] = pairs[i];
  // Each island's pairs coloured in that order, then sorted by colour (stable). Only awake
  // bodies take colours: a sleeping one is only read (static in its pairs), so pairs that
  // share it may run together, and an island's colours never depend on another island's
  // pairs with the same sleeping ragdoll (nor, so, on whether or when it is split).
  for (int32_t i = 0; i < body_count; ++i) body_colours_[i] = 0;
  auto awake = [&](int32_t body) { return !slots[bodies[body].slot].asleep; };
  auto colour_range = [&](int32_t begin, int32_t end, int32_t* colour_start) {
    int32_t counts[kPairColours] = {};
    for (int32_t i = begin; i < end; ++i) {
      PartPair& p = by_island_[i];
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
        if (awake(p.a)) body_colours_[p.a] |= uint64_t{1} << colour;
        if (awake(p.b)) body_colours_[p.b] |= uint64_t{1} << colour;
      }
      ++counts[colour];
    }
    int32_t fill[kPairColours];
    int32_t at = begin;
    for (int32_t c = 0; c < kPairColours; ++c) {
      if (colour_start != nullptr) colour_start[c] = at;
      fill[c] = at;
      at += counts[c];
    }
    if (colour_start != nullptr) colour_start[kPairColours] = at;
    for (int32_t i = begin; i < end; ++i) ordered_pairs_[fill[by_island_[i].colour]++] = by_island_[i];
  };
  for (int32_t k = 0; k < island_count_; ++k) colour_range(island_start_[k], island_start_[k + 1], nullptr);
  if (split >= 0) {
    colour_range(next, pair_count, colour_start_.data());
  } else {
    colour_start_.fill(pair_count);
  }
  stats.ragdoll_islands = island_count_ + (split >= 0 ? 1 : 0);
  stats.coloured_ragdoll_pairs = split >= 0 ? pair_count - next : 0;
}


}  // namespace tendon::detail
