// kernel/contacts/broad_phase.h: the pairs of parts of different ragdolls that may touch
// this frame (and the listed self-collision pairs of one ragdoll).
//
// What it does: once per frame, every awake or sleeping part's bounds, grown by its motion
// over the frame, its shape's core in the world (for PairContacts' first test), and each
// ragdoll's bounds (their union); ragdolls swept along x for
// overlapping pairs, filtered by collision groups and masks and by collide mode (a
// 'static' instance meets only 'static' ones); within an overlapping pair of ragdolls only
// the parts inside the other's bounds are tested against each other, and kept when their
// bounding spheres can meet within the frame. A sleeping ragdoll that a fast enough part
// may touch is woken (Sleep::WakesOnTouch). Pairs past the capacity (kPairsPerPart per
// bound part) are dropped and counted.
// What it does NOT do: find contacts (PairContacts does, on these pairs), order or colour
// pairs (Islands does), or test jointed pairs or parts against the static world.
// Threading: the bounds are a parallel-for over ragdolls (each writes its own bodies'
// entries). The sweep's tests, which only read, are a parallel-for over ragdolls in sweep
// order, each worker listing its candidates in its own buffer; then, serially and in
// sweep order, the candidates are filtered by sleep, sleepers woken and pairs kept: the
// pairs, their order and the wakes never depend on the worker count. With one worker
// (or a worker whose buffer is full) the sweep runs serially in one pass, to the same result.
// Memory: sized by Reserve at bind time (each worker's room for candidates is the pair
// capacity, 8 bytes a pair); Run allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernel/collide/part_distance.h"
#include "kernel/rigid/ragdoll_archetype.h"
#include "kernel/rigid/ragdoll_store.h"
#include "kernel/rigid/sleep.h"
#include "tendon/stats.h"
#include "tendon/profiler_hooks.h"
#include "tendon/task_hooks.h"

namespace tendon::detail {

inline constexpr int32_t kPairsPerPart = 16;  // capacity of part pairs per bound part

// A part of an enabled ragdoll, numbered in ragdoll slot order, then part order.
struct PairBody {
  int32_t group, lane, part, slot;
};
// Two bodies that may touch (a < b); `colour` is the islands' scratch; `found` is the
// pair's index in the broad phase's list, where PairContacts keeps its contacts.
struct PartPair {
  int32_t a, b, colour, found;
};
// A body's motion at the frame's start: centre of mass and velocity, its bounding radius
// about the centre, and |w| x that radius.
struct PairMotion {
  Vec3 x, v;
  float extent, spin;
};

class BroadPhase {
 public:
  explicit BroadPhase(const TaskHooks& tasks) : tasks_(tasks) {}
  void SetProfiler(const ProfilerHooks* profiler) { profiler_ = profiler; }

  // Room for `total_parts` bound parts and `slot_count` ragdoll slots (bind time).
  void Reserve(int32_t total_parts, int32_t slot_count);
  // This frame's pairs. Writes ragdoll_pairs and dropped_ragdoll_pairs.
  void Run(RagdollStore& store, const Sleep& sleep, float frame_seconds, FrameStats& stats);
  // No pairs this frame (the broad phase did not run).
  void Clear() { pair_count_ = 0; }

  int32_t pair_count() const { return pair_count_; }
  std::span<PartPair> pairs() { return {part_pairs_.data(), static_cast<std::size_t>(pair_count_)}; }
  std::span<const PartPair> pairs() const { return {part_pairs_.data(), static_cast<std::size_t>(pair_count_)}; }
  int32_t body_count() const { return body_count_; }
  const PairBody& body(int32_t i) const { return bodies_[i]; }
  std::span<const PairBody> bodies() const { return bodies_; }
  const PairMotion& motion(int32_t i) const { return motion_[i]; }
  // A body's shape in the world at the frame's start, as a segment and a radius (CoreOf):
  // PairContacts rejects most pairs in reach by their cores' distance alone, without
  // gathering the two poses from the blocks again.
  const PartCore& core(int32_t i) const { return cores_[i]; }
  // The same body's shape frame in the world at the frame's start (its pose composed with
  // the part's shape_in_body; the scale is 1): the core above was made from it, and
  // PairContacts::Find measures the samples in it, so it is composed once per frame, here.
  const Transform& shape_frame(int32_t i) const { return shape_frames_[i]; }
  // Pair slots there are room for (PairContacts and Islands size themselves by it).
  std::size_t pair_capacity() const { return part_pairs_.size(); }

 private:
  struct BroadEntry {
    Vec3 lo, hi;
    int32_t body;
  };
  struct RagdollBox {
    Vec3 lo, hi;
    int32_t first, count;  // its parts' bodies
    int32_t slot;
  };
  // A part pair that passed every test that only reads (bounds and reach), or, with
  // a < 0, a test put off because both ragdolls slept when the sweep began (a == -1: the
  // ragdoll's self pairs; a == -2: its pairs with the ragdoll at place b in the sweep order).
  struct Candidate {
    int32_t a, b;
  };
  // Where the candidates of the ragdoll at one place in the sweep order are.
  struct SweepRun {
    int32_t worker, begin, end;
  };
  // One worker's room: its candidates, and near lists (kMaxRagdollParts each).
  struct SweepScratch {
    std::vector<Candidate> candidates;
    std::vector<int32_t> near_a, near_b;
    int32_t used = 0;
    bool full = false;
  };
  bool Reaches(int32_t body_a, int32_t body_b, float frame_seconds) const;
  // The part pairs of the ragdoll at place `oa` in the sweep order that pass the bounds
  // and reach tests: its listed self pairs, then those with each later ragdoll, in order,
  // each to emit(a, b) (which returns false to stop). With `defer_sleepers`, a ragdoll pair
  // both of whose ragdolls sleep now gives emit(-1, 0) or emit(-2, ob) instead.
  template <class Emit>
  bool SweepOne(int32_t oa, const RagdollStore& store, float frame_seconds, bool defer_sleepers, int32_t* near_a,
                int32_t* near_b, Emit&& emit) const;
  template <class Emit>
  bool SelfPairs(int32_t oa, const RagdollStore& store, float frame_seconds, Emit&& emit) const;
  template <class Emit>
  bool CrossPairs(int32_t oa, int32_t ob, float frame_seconds, int32_t* near_a, int32_t* near_b, Emit&& emit) const;

  TaskHooks tasks_;
  const ProfilerHooks* profiler_ = nullptr;
  std::vector<PairBody> bodies_;
  std::vector<BroadEntry> broad_;  // per body (broad_[i].body == i)
  std::vector<PairMotion> motion_;  // per body
  std::vector<PartCore> cores_;     // per body
  std::vector<Transform> shape_frames_;  // per body
  std::vector<RagdollBox> ragdoll_boxes_;  // per enabled ragdoll
  std::vector<int32_t> box_order_;
  std::vector<SweepScratch> sweep_scratch_;  // per worker
  std::vector<SweepRun> sweep_runs_;         // per place in the sweep order
  std::vector<PartPair> part_pairs_;
  int32_t pair_count_ = 0;
  int32_t body_count_ = 0;
  int32_t box_count_ = 0;  // enabled ragdolls this frame (ragdoll_boxes_ and sweep_runs_ in use)
};

}  // namespace tendon::detail
