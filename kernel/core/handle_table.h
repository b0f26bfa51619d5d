// kernel/core/handle_table.h: the one generation-checked slot table behind every handle.
//
// What it does: hands out Id<Tag> handles ({index, generation}, tendon/ids.h), frees them,
// and answers whether a handle is live. A freed slot's generation moves on (UINT32_MAX
// wraps to 1, never to 0, which is null), so every copy of a freed handle is stale from then
// on and is detected, never dereferenced. Freed slots are reused last-freed-first (their
// memory is the warmest), else a slot is appended. The owner keeps its payload in a vector
// of its own indexed by Id::index and grows it to SlotCount() after Allocate: the table
// knows nothing of what a slot holds.
// What it does NOT do: own or construct the payload, reference-count, or shrink.
// Threading: none; one thread at a time (the World's rule). Memory: Allocate may grow two
// vectors (bind time only); every other call allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "tendon/ids.h"

namespace tendon::detail {

template <class IdT>
class HandleTable {
 public:
  // A fresh live handle: the last freed slot, else a new one at index SlotCount() - 1.
  IdT Allocate() {
    uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.push_back(Slot{});
    }
    slots_[index].live = true;
    ++live_count_;
    return IdT{index, slots_[index].generation};
  }
  // Frees a live handle's slot; every copy of `id` is stale from then on. A stale or null
  // id is ignored (callers check IsLive first and report kStaleHandle themselves).
  void Free(IdT id) {
    if (!IsLive(id)) return;
    Slot& s = slots_[id.index];
    s.live = false;
    s.generation = s.generation == UINT32_MAX ? 1u : s.generation + 1;
    free_.push_back(id.index);
    --live_count_;
  }
  bool IsLive(IdT id) const {
    return id.generation != 0 && id.index < slots_.size() && slots_[id.index].live &&
           slots_[id.index].generation == id.generation;
  }
  bool IsLiveAt(uint32_t index) const { return index < slots_.size() && slots_[index].live; }
  // The handle that slot `index` answers to now (stale when the slot is free).
  IdT HandleAt(uint32_t index) const { return IdT{index, slots_[index].generation}; }
  // Slots ever made (live or free): the bound of every index.
  uint32_t SlotCount() const { return static_cast<uint32_t>(slots_.size()); }
  uint32_t LiveCount() const { return live_count_; }
  void Reserve(uint32_t slots) {
    slots_.reserve(slots);
    free_.reserve(slots);
  }

 private:
  struct Slot {
    uint32_t generation = 1;
    bool live = false;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  uint32_t live_count_ = 0;
};

}  // namespace tendon::detail
